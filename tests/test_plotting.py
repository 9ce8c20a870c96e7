"""Tests for tenscontrol.plotting: each function returns a Figure that saves to PNG."""

import matplotlib

matplotlib.use("Agg")  # no display; the figures do not need pyplot anyway

import numpy as np
import pytest
from matplotlib.figure import Figure

from tenscontrol import catalog, simulate
from tenscontrol.plotting import plot_node_paths, plot_structure, plot_violations

PNG = b"\x89PNG\r\n\x1a\n"


def tbar():
    """The T-bar of examples.md section 2.2 ("stedy" strings with dampers)."""
    return catalog.tbar("stedy", damping=1.0)


@pytest.fixture(scope="module")
def traj():
    return simulate(tbar(), 1.0, rtol=1e-8, atol=1e-8)


def saves_png(fig, path):
    fig.savefig(path)
    return path.read_bytes()[:8] == PNG


def test_node_paths_default_moving_nodes_in_xz(traj, tmp_path):
    fig = plot_node_paths(traj)
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    ax = fig.axes[0]
    assert ax.get_xlabel() == "x [m]" and ax.get_ylabel() == "z [m]"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "node 2" in labels and "node 3" in labels
    assert "node 0" not in labels and "node 1" not in labels  # fixed nodes do not move
    assert len(ax.collections) == 2  # bars and strings at t = 0
    assert saves_png(fig, tmp_path / "paths.png")


def test_node_paths_chosen_nodes_and_plane(traj, tmp_path):
    fig = plot_node_paths(traj, nodes=[2], plane="xy")
    ax = fig.axes[0]
    assert ax.get_ylabel() == "y [m]"
    assert [t.get_text() for t in ax.get_legend().get_texts()].count("node 2") == 1
    assert saves_png(fig, tmp_path / "paths-xy.png")


@pytest.mark.parametrize("kwargs, match", [({"nodes": [7]}, "node index 7 out of range"),
                                           ({"plane": "zz"}, "plane must be one of")])
def test_node_paths_rejects_bad_arguments(traj, kwargs, match):
    with pytest.raises(ValueError, match=match):
        plot_node_paths(traj, **kwargs)


def test_violations_two_log_axes(traj, tmp_path):
    fig = plot_violations(traj)
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    for ax in fig.axes:
        assert ax.get_yscale() == "log"
        ydata = ax.get_lines()[0].get_ydata()
        assert np.all(ydata > 0)  # zeros (e.g. at t = 0) clipped to the floor
    assert fig.axes[0].get_ylabel().endswith("[m]") and fig.axes[1].get_ylabel().endswith("[J]")
    assert fig.axes[1].get_xlabel() == "time [s]"
    title = fig.get_suptitle()
    assert "tbar" in title and "energy" in title
    assert saves_png(fig, tmp_path / "violations.png")


def test_structure_3d(tmp_path):
    fig = plot_structure(tbar())
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    assert fig.axes[0].name == "3d"
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels[:2] == ["bars", "strings"] and "fixed (x, y, z)" in labels
    assert saves_png(fig, tmp_path / "structure.png")


def test_structure_given_positions_and_axes(traj, tmp_path):
    fig = Figure()
    ax = fig.add_subplot(projection="3d")
    assert plot_structure(tbar(), q=traj.nodes[-1].reshape(-1), ax=ax) is fig
    assert saves_png(fig, tmp_path / "structure-end.png")
    with pytest.raises(ValueError, match="3-D axes"):
        plot_structure(tbar(), ax=Figure().add_subplot())
    with pytest.raises(ValueError, match=r"q must be a finite \(4, 3\) array"):
        plot_structure(tbar(), q=np.zeros(5))
