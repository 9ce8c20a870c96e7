"""Trajectory.save / load_trajectory (exact round trips) and Trajectory.to_dataframe."""

import builtins
import json

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.model import catalog
from tenscontrol.simulation.trajectory_io import ARRAY_KEYS, FORMAT


@pytest.fixture(scope="module")
def open_loop():
    return tc.simulate(catalog.tbar("stedy", damping=1.0), 0.3)


@pytest.fixture(scope="module")
def closed_loop():
    s = tc.equilibrium(catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
    design = tc.lqr(tc.linearize(s, kind="passive"), effort=1e-2)
    loads = tc.doublet(s, tc.Selection(2, "z"), 10.0)
    return tc.simulate(s, 0.2, loads=loads, controller=design.controller)


def assert_same(a, b):
    for key in ARRAY_KEYS:
        x, y = getattr(a, key), getattr(b, key)
        assert x.dtype == y.dtype and x.shape == y.shape, key
        np.testing.assert_array_equal(x, y, err_msg=key)
    assert a.stats == b.stats and a.E0 == b.E0
    assert (a.bars, a.correction, a.kinetic) == (b.bars, b.correction, b.kinetic)
    assert tc.structure_to_dict(a.structure) == tc.structure_to_dict(b.structure)
    np.testing.assert_array_equal(a.structure.nodes, b.structure.nodes)
    np.testing.assert_array_equal(a.structure.string_rest_lengths, b.structure.string_rest_lengths)


def test_round_trip_is_exact(open_loop, tmp_path):
    path = open_loop.save(tmp_path / "traj.npz")
    assert path == tmp_path / "traj.npz" and list(tmp_path.iterdir()) == [path]  # no .part left
    back = tc.load_trajectory(path)
    assert_same(open_loop, back)
    assert back.control is None
    assert repr(back) == repr(open_loop)


def test_round_trip_of_a_compressible_run(tmp_path):
    traj = tc.simulate(catalog.tbar("stedy", damping=1.0, bar_material="aluminium"), 0.05,
                       bars="compressible")
    back = tc.load_trajectory(traj.save(tmp_path / "c.npz"))
    assert_same(traj, back)
    assert back.bars == "compressible" and back.stats.integrator == "radau5"


@pytest.mark.slow
def test_round_trip_keeps_the_control_record(closed_loop, tmp_path):
    back = tc.load_trajectory(closed_loop.save(tmp_path / "closed.npz"))
    assert_same(closed_loop, back)
    for name in ("t", "strings", "u", "commanded", "applied", "slack", "saturated",
                 "controller_states"):
        a, b = getattr(closed_loop.control, name), getattr(back.control, name)
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b, err_msg=name)
    frame = closed_loop.to_dataframe()
    k = int(closed_loop.control.strings[0])
    np.testing.assert_array_equal(frame[f"u{k}"].to_numpy(), closed_loop.control.u[:, 0])


def test_file_holds_the_structure_and_settings_as_json(open_loop, tmp_path):
    path = open_loop.save(tmp_path / "traj.npz")
    with np.load(path) as data:
        assert set(ARRAY_KEYS) <= set(data.files)
        settings = json.loads(str(data["settings"]))
        assert settings["format"] == FORMAT and settings["correction"] == "energy"
        assert settings["stats"]["accepted_steps"] == open_loop.stats.accepted_steps
        assert json.loads(str(data["structure"]))["format"] == "tenscontrol.structure/1"


def test_dataframe_columns_and_values(open_loop):
    frame = open_loop.to_dataframe()
    assert frame.index.name == "t" and len(frame) == len(open_loop.t)
    assert list(frame.columns[:6]) == ["x0", "y0", "z0", "x1", "y1", "z1"]
    np.testing.assert_array_equal(frame["z2"].to_numpy(), open_loop.nodes[:, 2, 2])
    np.testing.assert_array_equal(frame["vx3"].to_numpy(), open_loop.velocities[:, 3, 0])
    np.testing.assert_array_equal(frame["bar_violation1"].to_numpy(),
                                  open_loop.bar_violation[:, 1])
    assert {"energy", "work", "energy_violation"} <= set(frame.columns)


def test_dataframe_without_pandas_says_how_to_install_it(open_loop, monkeypatch):
    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match=r"pip install 'pandas>=2.2.2' .*pip install '\.\[pandas\]'"):
        open_loop.to_dataframe()


def test_files_that_are_not_trajectories_are_refused(open_loop, tmp_path):
    old = tmp_path / "old.npz"
    np.savez(old, **{key: getattr(open_loop, key) for key in ARRAY_KEYS})
    with pytest.raises(ValueError, match=r"old.npz: not a tenscontrol.trajectory/1 file \(no "
                                         r"'settings' entry\)"):
        tc.load_trajectory(old)
    text = tmp_path / "text.npz"
    text.write_text("hello")
    with pytest.raises(ValueError, match="text.npz: not a tenscontrol.trajectory/1 .npz file"):
        tc.load_trajectory(text)
    with pytest.raises(TypeError, match="save_trajectory: expected a Trajectory, got dict"):
        from tenscontrol.simulation.trajectory_io import save_trajectory
        save_trajectory({}, tmp_path / "x.npz")


def test_a_failed_write_leaves_no_file(open_loop, tmp_path, monkeypatch):
    def savez(f, **arrays):
        f.write(b"PK partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez", savez)
    with pytest.raises(OSError, match="No space left on device") as info:
        open_loop.save(tmp_path / "traj.npz")
    assert info.value.filename == str(tmp_path / "traj.npz")
    assert list(tmp_path.iterdir()) == []
