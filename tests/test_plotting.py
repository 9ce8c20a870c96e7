"""Tests for tenscontrol.plotting: each function returns a Figure that saves to PNG."""

import matplotlib

matplotlib.use("Agg")  # no display: the figures are made through pyplot and save headless

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure

from tenscontrol import simulate
from tenscontrol.model import catalog
from tenscontrol.plotting import plot_node_paths, plot_structure, plot_violations

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def close_figures():
    """pyplot keeps every figure it made: close them after each test, as users are told to."""
    yield
    plt.close("all")


def tbar():
    """The T-bar of catalog.tbar("stedy") (the reference code STEDY's strings, with dampers)."""
    return catalog.tbar("stedy", damping=1.0)


@pytest.fixture(scope="module")
def traj():
    return simulate(tbar(), 1.0, rtol=1e-8, atol=1e-8)


def saves_png(fig, path):
    fig.savefig(path)
    return path.read_bytes()[:8] == PNG


def test_node_paths_default_moving_nodes_in_xz(traj, tmp_path):
    fig = plot_node_paths(traj)
    assert isinstance(fig, Figure) and len(fig.axes) == 2  # paths on the structure, displacement
    ax, ax_d = fig.axes
    assert ax.get_xlabel() == "x [m]" and ax.get_ylabel() == "z [m]"
    assert ax_d.get_xlabel() == "x - x(0) [mm]" and ax_d.get_ylabel() == "z - z(0) [mm]"
    labels = [t.get_text() for t in ax_d.get_legend().get_texts()]
    assert "node 2" in labels and "node 3" in labels
    assert "node 0" not in labels and "node 1" not in labels  # fixed nodes do not move
    assert len(ax.collections) == 2  # bars and strings at t = 0
    assert saves_png(fig, tmp_path / "paths.png")


def test_node_paths_chosen_nodes_and_plane(traj, tmp_path):
    fig = plot_node_paths(traj, nodes=[2], plane="xy")
    ax, ax_d = fig.axes
    assert ax.get_ylabel() == "y [m]"
    assert [t.get_text() for t in ax_d.get_legend().get_texts()] == ["node 2"]
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
    assert isinstance(fig, Figure) and len(fig.axes) == 2  # the 3-D axes and the legend's slot
    assert fig.axes[0].name == "3d" and not fig.axes[1].axison
    assert fig.get_suptitle() == tbar().name
    labels = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
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


# ---- bar models, Hankel singular values, material comparison ----------------------------------

import tenscontrol as tc  # noqa: E402
from tenscontrol.studies.comparison import MaterialComparison, MaterialFigures  # noqa: E402
from tenscontrol.plotting import (plot_bar_models, plot_hankel_singular_values,  # noqa: E402
                                  plot_material_comparison)


@pytest.fixture(scope="module")
def bar_runs():
    """Short compressible runs of the damped T-bar with soft and metallic bars (paper Table 2)."""
    return [simulate(catalog.tbar("stedy", damping=1.0, bar_material=m), 0.2, bars="compressible",
                     rtol=1e-10, atol=1e-10)
            for m in ("hdpe", "aluminium")]


def test_bar_models_paths_and_strains(bar_runs, tmp_path):
    fig = plot_bar_models(bar_runs, ["hdpe", "aluminium"])
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    ax_path, ax_strain = fig.axes
    assert (ax_path.get_xlabel(), ax_path.get_ylabel()) == ("x [m]", "z [m]")
    assert ax_strain.get_xlabel() == "time [s]"
    # colour = node (bar), line style = run: one legend entry per node and one per run
    # Default nodes: the moving ones of the first run, i.e. the free nodes 2 and 3.
    legend_texts = [t.get_text() for t in ax_path.get_legend().get_texts()]
    assert legend_texts == ["bars (t = 0)", "strings (t = 0)", "node 2", "node 3", "run: hdpe",
                            "run: aluminium"]
    paths = ax_path.get_lines()[1:-2]  # after the nodes at t = 0, before the runs' entries
    assert [ln.get_linestyle() for ln in paths] == ["-", "-", "--", "--"]
    np.testing.assert_array_equal(paths[3].get_xdata(), bar_runs[1].nodes[:, 3, 0])
    strains = ax_strain.get_lines()[:-2]
    assert len(strains) == 4
    for r, traj in enumerate(bar_runs):
        for k in range(2):
            np.testing.assert_array_equal(strains[2 * r + k].get_ydata(), traj.bar_strains[:, k])
    # the title names both runs, not the first structure's material
    assert fig.get_suptitle().endswith("hdpe against aluminium")
    assert np.abs(bar_runs[0].bar_strains).max() > 0      # soft bars do stretch
    assert saves_png(fig, tmp_path / "bar-models.png")


def test_bar_models_chosen_nodes_and_plane(bar_runs, tmp_path):
    fig = plot_bar_models(bar_runs[:1], ["hdpe"], nodes=[3], plane="xy")
    ax_path = fig.axes[0]
    assert ax_path.get_ylabel() == "y [m]"
    assert [t.get_text() for t in ax_path.get_legend().get_texts()] == [
        "bars (t = 0)", "strings (t = 0)", "node 3"]
    assert saves_png(fig, tmp_path / "bar-models-xy.png")


@pytest.mark.parametrize("labels, kwargs, match", [
    (["hdpe"], {}, "one label per trajectory"),
    (["a", "b", "c"], {}, "one label per trajectory"),
    (["a", "b"], {"plane": "xx"}, "plane must be one of"),
    (["a", "b"], {"nodes": [4]}, "node index 4 out of range"),
])
def test_bar_models_rejects_bad_arguments(bar_runs, labels, kwargs, match):
    with pytest.raises(ValueError, match=match):
        plot_bar_models(bar_runs, labels, **kwargs)


def test_bar_models_rejects_no_runs_and_non_trajectories(bar_runs):
    with pytest.raises(ValueError, match="at least one trajectory"):
        plot_bar_models([], [])
    with pytest.raises(TypeError, match="expected a tenscontrol.Trajectory"):
        plot_bar_models([bar_runs[0], "run"], ["a", "b"])


@pytest.fixture(scope="module")
def table2_model():
    """Passive compressible model of the damped Table-2 T-bar (paper Table 2, Fig. 19)."""
    s = catalog.tbar("table2", damping=100.0, bar_material="hdpe")
    return tc.linearize(s, bars="compressible", kind="passive", at_rest="taut")


@pytest.mark.parametrize("order", [None, 3])
def test_hankel_singular_values(table2_model, order, tmp_path):
    mr = tc.minimal_realization(table2_model, order=order)
    assert mr.hsv is not None and len(mr.hsv) == 8
    fig = plot_hankel_singular_values(mr)
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    all_line, kept_line = ax.get_lines()
    np.testing.assert_array_equal(all_line.get_ydata(), mr.hsv)
    np.testing.assert_array_equal(kept_line.get_xdata(), np.arange(1, mr.order + 1))
    np.testing.assert_array_equal(kept_line.get_ydata(), mr.hsv[:mr.order])
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[1] == f"kept ({mr.order} of 8 elastic states)"
    assert f"minimal {mr.order}" in ax.get_title()
    assert saves_png(fig, tmp_path / "hsv.png")


def test_hankel_singular_value_index_has_integer_ticks():
    # the damped T-bar keeps 4 of 4 HSVs: matplotlib's default ticks were 1.0, 1.5, ..., 4.0
    # (issue 22); the x axis counts states, so its ticks are integers only
    s = tc.equilibrium(tbar(), gamma_min=10.0).structure
    mr = tc.minimal_realization(tc.linearize(s, kind="passive"))
    assert mr.hsv is not None and len(mr.hsv) == 4
    ax = plot_hankel_singular_values(mr).axes[0]
    lo, hi = ax.get_xlim()
    ticks = [v for v in ax.get_xticks() if lo <= v <= hi]
    assert ticks == [1.0, 2.0, 3.0, 4.0]
    assert not ax.xaxis.get_minorticklocs().size


def test_hankel_singular_values_need_a_balanced_realization():
    # An undamped prestressed prism: the elastic model is not asymptotically stable, so
    # minimal_realization falls back to the Kalman reduction and has no HSVs.
    s = tc.equilibrium(catalog.prism(3), gamma_min=1).structure
    mr = tc.minimal_realization(tc.linearize(s, kind="passive"))
    assert mr.hsv is None
    with pytest.raises(ValueError, match="no Hankel singular values .* add damping"):
        plot_hankel_singular_values(mr)


def synthetic_comparison():
    """A MaterialComparison with made-up, distinct numbers (no simulation needed)."""
    t = np.linspace(0.0, 2.0, 21)
    rows, responses = [], []
    for r, name in enumerate(("soft", "metal", "third")):
        f = 1.0 + r
        rows.append(MaterialFigures(name, 10.0 * f, 0.1 * f, 0.2 * f, np.array([1e-6, 1e-3]),
                                    np.array([1.0, 2.0]), 0.3 * f, 0.4 * f, 0.5 * f, 8))
        responses.append(np.column_stack([np.sin(f * t), np.cos(f * t)]) * 1e-2)
    return MaterialComparison(tuple(rows), "fz2", ("x2", "z2"), 10.0, 1.0, 2.0, t,
                              tuple(responses))


def test_material_comparison_plot(tmp_path):
    result = synthetic_comparison()
    fig = plot_material_comparison(result)
    assert isinstance(fig, Figure) and len(fig.axes) == 3
    ax_t, ax_2, ax_inf = fig.axes
    assert [ln.get_label() for ln in ax_t.get_lines()] == ["soft", "metal", "third"]
    for ln, y in zip(ax_t.get_lines(), result.responses):
        np.testing.assert_allclose(ln.get_ydata(), 1e3 * np.linalg.norm(y, axis=1))
    assert "fz2" in ax_t.get_title() and ax_t.get_xlabel() == "time [s]"
    # one unit per axis, linear from 0: H2-type gains [m/(N s^0.5)] apart from H-inf-type [m/N]
    for ax, unit, names, attrs in (
            (ax_2, "[m/(N s^0.5)]", ["H2 (linear)", "peak/|u|2"], ("h2", "peak_ratio")),
            (ax_inf, "[m/N]", ["H-inf (linear)", "|y|2/|u|2"], ("hinf", "energy_ratio"))):
        assert ax.get_yscale() == "linear" and ax.get_ylim()[0] == 0.0
        assert ax.get_ylabel().endswith(unit)
        assert [t.get_text() for t in ax.get_xticklabels()] == names
        assert len(ax.containers) == 3
        for container, row in zip(ax.containers, result.rows):
            heights = [p.get_height() for p in container]
            np.testing.assert_allclose(heights, [getattr(row, a) for a in attrs])
    assert saves_png(fig, tmp_path / "materials.png")
