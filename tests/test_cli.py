"""Tests for the ``tenscontrol`` command (tenscontrol.cli), run in-process through main()."""

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from tenscontrol import save_structure
from tenscontrol.model import catalog
from tenscontrol.cli import NPZ_KEYS, main, output_times



def tbar():
    """The T-bar of examples.md section 2.2 ("stedy" strings with dampers)."""
    return catalog.tbar("stedy", damping=1.0)


@pytest.fixture
def tbar_file(tmp_path):
    path = tmp_path / "tbar.json"
    save_structure(tbar(), path)
    return path


def error_line(capsys):
    """The single stderr line of a failed command, without its prefix."""
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("tenscontrol: error: ")
    assert "Traceback" not in err
    return lines[0]


def test_simulate_writes_exactly_the_trajectory_arrays(tbar_file, tmp_path, capsys):
    out = tmp_path / "traj.npz"
    assert main(["simulate", str(tbar_file), "--t-final", "1", "--out", str(out)]) == 0
    with np.load(out) as data:
        assert sorted(data.files) == sorted(NPZ_KEYS)
        nt = len(data["t"])
        assert nt > 2 and data["t"][0] == 0.0 and data["t"][-1] == pytest.approx(1.0)
        assert np.all(np.diff(data["t"]) > 0)
        assert data["nodes"].shape == data["velocities"].shape == (nt, 4, 3)
        assert data["energy"].shape == data["work"].shape == data["energy_violation"].shape == (nt,)
        assert data["bar_violation"].shape == (nt, 2)
        assert np.abs(data["bar_violation"]).max() <= 1e-10
        np.testing.assert_array_equal(data["nodes"][0], tbar().nodes)
    text = capsys.readouterr().out
    for figure in ("samples", "steps", "wall time", "max |bar violation|",
                   "max |energy violation|", str(out)):
        assert figure in text


def test_simulate_dt_out_gives_a_regular_grid(tbar_file, tmp_path, capsys):
    out = tmp_path / "grid.npz"
    assert main(["simulate", str(tbar_file), "--t-final", "1", "--dt-out", "0.1",
                 "--correction", "geometric", "--rtol", "1e-8", "--atol", "1e-8",
                 "--out", str(out)]) == 0
    with np.load(out) as data:
        np.testing.assert_allclose(data["t"], np.linspace(0, 1, 11), rtol=0, atol=1e-12)
        assert data["nodes"].shape == (11, 4, 3)
    assert "samples                 11" in capsys.readouterr().out


def test_output_times_clip_to_t_final():
    np.testing.assert_array_equal(output_times(1.0, 0.25), [0, 0.25, 0.5, 0.75, 1.0])
    assert output_times(1.0, 1 / 3)[-1] == 1.0
    np.testing.assert_array_equal(output_times(1.0, 5.0), [0.0])


def test_missing_file_is_a_one_line_error(tmp_path, capsys):
    missing = tmp_path / "nope.json"
    code = main(["simulate", str(missing), "--t-final", "1", "--out", str(tmp_path / "o.npz")])
    assert code == 2
    line = error_line(capsys)
    assert str(missing) in line and "no such file" in line
    assert not (tmp_path / "o.npz").exists()


def test_malformed_json_is_a_one_line_error(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"nodes": [[0, 0, 0],\n  oops]}')
    assert main(["simulate", str(bad), "--t-final", "1", "--out", str(tmp_path / "o.npz")]) == 2
    line = error_line(capsys)
    assert "bad.json" in line and "not valid JSON at line 2" in line


def test_invalid_structure_names_the_bar(tmp_path, capsys):
    data = {"nodes": [[0, 0, 0], [1, 0, 0]], "fixed": [{"node": 0}],
            "bars": [{"nodes": [0, 1], "density": 500, "radius": 0.01},
                     {"nodes": [1, 1], "density": 500, "radius": 0.01}]}
    path = tmp_path / "selfbar.json"
    path.write_text(json.dumps(data))
    assert main(["simulate", str(path), "--t-final", "1", "--out", str(tmp_path / "o.npz")]) == 2
    line = error_line(capsys)
    assert "bar 1" in line and "itself" in line


def test_unwritable_output_is_a_one_line_error(tbar_file, tmp_path, capsys):
    out = tmp_path / "no-such-dir" / "traj.npz"
    assert main(["simulate", str(tbar_file), "--t-final", "0.1", "--out", str(out)]) == 2
    assert "no-such-dir" in error_line(capsys)


@pytest.mark.parametrize("option", [["--correction", "sideways"], ["--rtol", "-1"],
                                    ["--t-final", "nan"], ["--dt-out", "0"]])
def test_bad_options_are_usage_errors(tbar_file, tmp_path, option, capsys):
    argv = ["simulate", str(tbar_file), "--t-final", "1", "--out", str(tmp_path / "o.npz")]
    with pytest.raises(SystemExit) as exc:
        main(argv + option)
    assert exc.value.code == 2
    assert option[0] in capsys.readouterr().err


def test_missing_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2


def test_demo_writes_plots_and_prints_the_figures(tmp_path, capsys):
    out_dir = tmp_path / "demo"
    assert main(["demo", "--out-dir", str(out_dir)]) == 0
    text = capsys.readouterr().out
    pngs = sorted(out_dir.glob("*.png"))
    assert len(pngs) == 7
    for png in pngs:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert str(png) in text
    bar = [float(v) for v in re.findall(r"max \|bar violation\|\s+(\S+) m", text)]
    energy = [float(v) for v in re.findall(r"max \|energy violation\|\s+(\S+) J", text)][:2]
    assert len(bar) == len(energy) == 2  # corrected run, then the uncorrected one
    assert bar[0] <= 1e-10 and energy[0] <= 1e-9
    assert bar[1] > bar[0] and energy[1] > energy[0]  # the drift without correction
    for figure in ("accepted", "rejected", "derivative evaluations", "correction iterations",
                   "wall time", "compressible hdpe bars", "compressible aluminium bars",
                   "Jacobians, LU", "prestress, rigid bars", "minimal", "Hankel singular values",
                   "soft against metallic bars", "compliance eigenvalue 4"):
        assert figure in text
    # the minimal orders printed beside the theory's count (rigid T-bar 4, compressible 8)
    orders = re.findall(r"^(rigid|compressible)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", text, re.M)
    assert [(b, int(m), int(t)) for b, _, _, m, t in orders] == [("rigid", 4, 4),
                                                                 ("compressible", 8, 8)]
    # the last stage: LQR on the T-bar checked in closed loop on the nonlinear model
    assert "LQR on the string force densities" in text and "tbar-lqr-closed-loop.png" in text
    reduction = float(re.search(r"peak reduction \(closed vs open loop\)\s+(\S+) %", text)[1])
    error = float(re.search(r"linear prediction error \(vs nonlinear\)\s+(\S+) %", text)[1])
    assert reduction >= 50.0 and error < 5.0
    assert re.search(r"slack strings \[s\]\s+none", text)


def test_python_m_tenscontrol_bad_file_exits_2_without_traceback(tmp_path):
    missing = tmp_path / "missing.json"
    proc = subprocess.run(
        [sys.executable, "-m", "tenscontrol", "simulate", str(missing), "--t-final", "1",
         "--out", str(tmp_path / "o.npz")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip() == f"tenscontrol: error: {missing}: no such file"


def test_simulate_compressible_bars(tmp_path, capsys):
    from tenscontrol.model import catalog

    path = tmp_path / "soft.json"
    save_structure(catalog.tbar("stedy", damping=1.0, bar_material="hdpe"), path)
    out = tmp_path / "soft.npz"
    assert main(["simulate", str(path), "--t-final", "0.5", "--bars", "compressible",
                 "--rtol", "1e-8", "--atol", "1e-8", "--dt-out", "0.1", "--out", str(out)]) == 0
    with np.load(out) as data:
        assert data["bar_violation"].shape == (6, 0)  # compressible bars have no constraint
        assert np.abs(data["energy_violation"]).max() <= 1e-6 * abs(data["energy"][0])
    text = capsys.readouterr().out
    for figure in ("compressible bars", "radau5", "Jacobians, LU", "bar strain"):
        assert figure in text


def test_compressible_correction_is_a_one_line_error(tmp_path, capsys):
    from tenscontrol.model import catalog

    path = tmp_path / "soft.json"
    save_structure(catalog.tbar("stedy", bar_material="hdpe"), path)
    code = main(["simulate", str(path), "--t-final", "0.1", "--bars", "compressible",
                 "--correction", "energy", "--out", str(tmp_path / "o.npz")])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tenscontrol: error: correction='energy' is not available for "
                          "compressible bars")
    assert "\n" not in err


def test_interrupt_exits_130_with_one_line_and_saves_nothing(tbar_file, tmp_path, capsys,
                                                             monkeypatch):
    from tenscontrol import cli

    def force(t, q, qd):  # Ctrl-C 0.3 s into the run
        if t > 0.3:
            raise KeyboardInterrupt
        return np.zeros((4, 3))

    simulate = cli.simulate
    monkeypatch.setattr(cli, "simulate", lambda *a, **k: simulate(*a, loads=force, **k))
    out = tmp_path / "traj.npz"
    assert main(["simulate", str(tbar_file), "--t-final", "1", "--out", str(out)]) == 130
    err = capsys.readouterr().err.strip()
    assert re.fullmatch(r"tenscontrol: interrupted at t = 0\.\d+ s, nothing saved", err), err
    assert list(tmp_path.iterdir()) == [tbar_file]


def test_interrupt_while_saving_leaves_no_file(tbar_file, tmp_path, capsys, monkeypatch):
    def savez(f, **arrays):
        f.write(b"PK partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez", savez)
    out = tmp_path / "traj.npz"
    assert main(["simulate", str(tbar_file), "--t-final", "0.1", "--out", str(out)]) == 130
    assert capsys.readouterr().err.strip() == "tenscontrol: interrupted"
    assert list(tmp_path.iterdir()) == [tbar_file]
