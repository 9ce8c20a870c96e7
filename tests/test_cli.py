"""Tests for the ``tenscontrol`` command (tenscontrol.cli), run in-process through main()."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from tenscontrol import save_structure
from tenscontrol.model import catalog
from tenscontrol.cli import NPZ_KEYS, main, output_times

# a trajectory file: the arrays, then the structure and the settings (Trajectory.save)
FILE_KEYS = NPZ_KEYS + ("structure", "settings")


def tbar():
    """The T-bar of catalog.tbar("stedy") (the reference code STEDY's strings, with dampers)."""
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
        assert sorted(data.files) == sorted(FILE_KEYS)
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


def test_output_times_end_at_t_final():
    np.testing.assert_array_equal(output_times(1.0, 0.25), [0, 0.25, 0.5, 0.75, 1.0])
    assert output_times(1.0, 1 / 3)[-1] == 1.0
    # issue 13: a --dt-out beyond t_final gave [0.0] and lost the final state
    np.testing.assert_array_equal(output_times(1.0, 5.0), [0.0, 1.0])


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


@pytest.mark.slow
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
    # issue 14: the compressible kernels are warmed before the timed runs, and the Hankel plot
    # shows the model whose values are listed
    assert "the wall times below are the runs alone" in text
    assert "Hankel singular values (rigid bars, plotted)" in text
    assert (out_dir / "tbar-hankel-singular-values-rigid.png").exists()


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


def test_interrupt_exits_130_and_saves_the_partial_trajectory(tbar_file, tmp_path, capsys,
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
    partial = tmp_path / "traj.partial.npz"
    match = re.fullmatch(r"tenscontrol: interrupted at t = (0\.\d+) s; the (\d+) samples up to "
                         r"there are in (.+)", err)
    assert match and match[3] == str(partial), err
    assert sorted(tmp_path.iterdir()) == sorted([tbar_file, partial])  # no traj.npz, no .part
    with np.load(partial) as data:
        assert sorted(data.files) == sorted(FILE_KEYS)
        assert len(data["t"]) == int(match[2]) == len(data["nodes"]) == len(data["energy"])
        assert data["t"][-1] == pytest.approx(float(match[1]), rel=1e-5)
        assert np.all(np.diff(data["t"]) > 0)


def test_interrupt_while_saving_leaves_no_file(tbar_file, tmp_path, capsys, monkeypatch):
    def savez(f, **arrays):
        f.write(b"PK partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez", savez)
    out = tmp_path / "traj.npz"
    assert main(["simulate", str(tbar_file), "--t-final", "0.1", "--out", str(out)]) == 130
    assert capsys.readouterr().err.strip() == "tenscontrol: interrupted"
    assert list(tmp_path.iterdir()) == [tbar_file]


# --- issue 13: nothing lost, nothing overwritten, every error one line ---------------------------

def must_not_simulate(monkeypatch):
    """Make cli.simulate fail the test if called: the error must come before simulating."""
    from tenscontrol import cli

    def simulate(*args, **kwargs):
        raise AssertionError("simulate() was called")

    monkeypatch.setattr(cli, "simulate", simulate)


def simulate_argv(structure, out, *options, t_final="1"):
    return ["simulate", str(structure), "--t-final", t_final, *options, "--out", str(out)]


@pytest.mark.parametrize("how", ["same path", "relative detour", "symlink", "hard link"])
def test_out_that_is_the_structure_file_is_refused(tbar_file, tmp_path, how, capsys,
                                                   monkeypatch):
    must_not_simulate(monkeypatch)
    before = tbar_file.read_bytes()
    out = {"same path": tbar_file,
           "relative detour": tmp_path / "sub" / ".." / "tbar.json",
           "symlink": tmp_path / "link.npz",
           "hard link": tmp_path / "hard.npz"}[how]
    (tmp_path / "sub").mkdir()
    if how == "symlink":
        out.symlink_to(tbar_file)
    elif how == "hard link":
        out.hardlink_to(tbar_file)
    assert main(simulate_argv(tbar_file, out)) == 2
    line = error_line(capsys)
    assert f"--out {out}" in line and "would replace the structure file" in line
    assert "choose another --out" in line
    assert tbar_file.read_bytes() == before


def test_out_whose_partial_file_is_the_structure_file_is_refused(tmp_path, capsys, monkeypatch):
    must_not_simulate(monkeypatch)
    source = tmp_path / "traj.partial.npz"  # a structure under an unlucky name
    save_structure(tbar(), source)
    assert main(simulate_argv(source, tmp_path / "traj.npz")) == 2
    assert "traj.partial.npz would replace the structure file" in error_line(capsys)


@pytest.mark.parametrize("t_final, dt_out, expected", [
    ("1", "2.5", [0.0, 1.0]),                  # issue 13: only t = 0 was saved
    ("1", "0.3", [0.0, 0.3, 0.6, 0.9, 1.0]),
    ("0.5", "0.5", [0.0, 0.5]),
])
def test_dt_out_always_saves_the_final_state(tbar_file, tmp_path, t_final, dt_out, expected):
    out = tmp_path / "o.npz"
    assert main(simulate_argv(tbar_file, out, "--dt-out", dt_out, t_final=t_final)) == 0
    every = tmp_path / "every.npz"  # every accepted step: its last sample is the final state
    assert main(simulate_argv(tbar_file, every, t_final=t_final)) == 0
    with np.load(out) as data, np.load(every) as ref:
        np.testing.assert_allclose(data["t"], expected, rtol=0, atol=1e-12)
        assert data["t"][-1] == float(t_final)
        np.testing.assert_allclose(data["nodes"][-1], ref["nodes"][-1], atol=1e-8)


def test_output_times_are_strictly_increasing_and_counted():
    from tenscontrol.cli import output_samples

    for t_final, dt in [(1.0, 0.1), (1.0, 1 / 3), (1.0, 0.3333333), (7.3, 0.7), (1.0, 1.0),
                        (1.0, 1e-5), (3.0, 0.1), (1e-3, 1e-4), (1.0, 1 - 1e-9)]:
        times = output_times(t_final, dt)
        assert times[0] == 0.0 and times[-1] == t_final
        assert np.all(np.diff(times) > 0)
        assert np.diff(times).max() <= dt * (1 + 1e-6)  # the last may take up round-off
        assert output_samples(t_final, dt) == len(times)
    assert output_samples(1e300, 1e-300) == float("inf")
    with pytest.raises(ValueError, match="2\\*\\*53"):
        output_times(1e300, 1e-300)


@pytest.mark.parametrize("dt_out", ["1e-12", "1e-7", "1e-300"])
def test_too_large_output_is_refused_before_simulating(tbar_file, tmp_path, dt_out, capsys,
                                                       monkeypatch):
    from tenscontrol.cli import OUTPUT_LIMIT, output_samples

    must_not_simulate(monkeypatch)
    out = tmp_path / "o.npz"
    assert main(simulate_argv(tbar_file, out, "--dt-out", dt_out)) == 2
    line = error_line(capsys)
    match = re.search(r"--dt-out \S+: the output would take (.+?) samples.*more than the "
                      r"largest allowed, ([\d,]+) samples \((\d+) MB\).*use --dt-out (\S+) or "
                      r"larger$", line)
    assert match, line
    largest = int(match[2].replace(",", ""))
    assert largest * 8 * (4 + 6 * 4 + 2) <= OUTPUT_LIMIT  # T-bar: 4 nodes, 2 bars
    assert int(match[3]) * 1_000_000 == OUTPUT_LIMIT
    assert output_samples(1.0, float(match[4])) <= largest  # the suggestion is allowed
    if dt_out == "1e-7":
        assert match[1] == "10,000,001"
    assert list(tmp_path.iterdir()) == [tbar_file]


def test_output_limit_counts_the_structure_and_bar_model(tmp_path, capsys, monkeypatch):
    from tenscontrol import cli

    # five rigid T-bar samples (240 bytes each), six compressible ones (224 bytes each)
    monkeypatch.setattr(cli, "OUTPUT_LIMIT", 1400)
    path = tmp_path / "tbar.json"
    save_structure(tbar(), path)
    out = tmp_path / "o.npz"
    assert main(simulate_argv(path, out, "--dt-out", "0.25")) == 0  # exactly 5 samples
    assert main(simulate_argv(path, out, "--dt-out", "0.2")) == 2
    assert "more than the largest allowed, 5 samples" in error_line(capsys)
    soft = tmp_path / "soft.json"  # compressible bars save no bar violation: 6 samples fit
    save_structure(catalog.tbar("stedy", damping=1.0, bar_material="hdpe"), soft)
    assert main(simulate_argv(soft, out, "--dt-out", "0.2", "--bars", "compressible",
                              "--rtol", "1e-6", "--atol", "1e-6")) == 0


@pytest.mark.parametrize("where", ["missing folder", "file as folder", "directory as out",
                                   "device as out"])
def test_bad_out_is_refused_before_simulating(tbar_file, tmp_path, where, capsys, monkeypatch):
    must_not_simulate(monkeypatch)
    out = {"missing folder": tmp_path / "no-such-dir" / "traj.npz",
           "file as folder": tbar_file / "traj.npz",
           "directory as out": tmp_path,
           "device as out": "/dev/null"}[where]
    assert main(simulate_argv(tbar_file, out)) == 2
    line = error_line(capsys)
    assert f"--out {out}" in line
    assert {"missing folder": "does not exist", "file as folder": "is not a directory",
            "directory as out": "is a directory", "device as out": "not a regular file"}[where] \
        in line
    assert list(tmp_path.iterdir()) == [tbar_file]  # created nothing


def test_unwritable_out_folder_is_refused_before_simulating(tbar_file, tmp_path, capsys,
                                                            monkeypatch):
    import os

    must_not_simulate(monkeypatch)
    locked = tmp_path / "locked"
    locked.mkdir()
    access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: (
        False if os.fspath(path) == str(locked) else access(path, mode, **kw)))
    assert main(simulate_argv(tbar_file, locked / "traj.npz")) == 2
    assert "the folder" in (line := error_line(capsys)) and "is not writable" in line
    assert list(locked.iterdir()) == []


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_out_in_proc_is_refused_before_simulating(tbar_file, tmp_path, capsys, monkeypatch):
    # os.access allows root everything, yet nobody can create a file in /proc
    must_not_simulate(monkeypatch)
    assert main(simulate_argv(tbar_file, "/proc/traj.npz")) == 2
    line = error_line(capsys)
    assert "--out /proc/traj.npz: the folder /proc is not writable (" in line


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0,
                    reason="needs POSIX permissions that apply (not root)")
def test_read_only_out_folder_is_refused(tbar_file, tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    try:
        assert main(simulate_argv(tbar_file, locked / "traj.npz")) == 2
        assert "is not writable" in error_line(capsys)
    finally:
        locked.chmod(0o755)


def test_failed_simulation_saves_the_partial_trajectory_and_exits_1(tbar_file, tmp_path, capsys,
                                                                    monkeypatch):
    from tenscontrol import cli
    from tenscontrol.simulation.simulator import SimulationError

    simulate = cli.simulate

    def failing(structure, t_final, **kwargs):  # a run that fails after 0.2 s
        traj = simulate(structure, 0.2, **kwargs)
        raise SimulationError(0.2, "the step size fell below 1e-14 s (try a larger rtol)", traj)

    monkeypatch.setattr(cli, "simulate", failing)
    out = tmp_path / "traj.npz"
    assert main(simulate_argv(tbar_file, out)) == 1
    line = error_line(capsys)
    partial = tmp_path / "traj.partial.npz"
    assert line == ("tenscontrol: error: simulation failed at t = 0.2 s: the step size fell "
                    "below 1e-14 s (try a larger rtol); the "
                    f"{len(np.load(partial)['t'])} samples up to there are in {partial}")
    assert ".trajectory" not in line
    assert sorted(tmp_path.iterdir()) == sorted([tbar_file, partial])
    with np.load(partial) as data:
        assert sorted(data.files) == sorted(FILE_KEYS)
        assert data["t"][-1] == pytest.approx(0.2)


def test_failed_simulation_whose_partial_cannot_be_saved_says_so(tbar_file, tmp_path, capsys,
                                                                monkeypatch):
    from tenscontrol import cli
    from tenscontrol.simulation.simulator import SimulationError

    simulate = cli.simulate

    def failing(structure, t_final, **kwargs):
        raise SimulationError(0.1, "it diverged", simulate(structure, 0.1, **kwargs))

    def savez(f, **arrays):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli, "simulate", failing)
    monkeypatch.setattr(np, "savez", savez)
    assert main(simulate_argv(tbar_file, tmp_path / "traj.npz")) == 1
    line = error_line(capsys)
    assert line.startswith("tenscontrol: error: simulation failed at t = 0.1 s: it diverged; "
                           "the partial trajectory could not be saved to ")
    assert "No space left on device" in line
    assert list(tmp_path.iterdir()) == [tbar_file]


@pytest.mark.parametrize("argv", [
    [], ["bogus"], ["simulate"], ["simulate", "s.json"], ["simulate", "s.json", "--t-final", "1"],
    ["simulate", "s.json", "--t-final", "1", "--out", "o.npz", "--extra"],
    ["simulate", "s.json", "--t-final", "1", "--out", "o.npz", "--bars", "soft"],
    ["simulate", "s.json", "--t-final", "--out", "o.npz"],
    ["demo", "--out-dir"], ["demo", "surprise"], ["--verbose"],
])
def test_every_usage_error_is_one_line(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    line = error_line(capsys)
    command = f" {argv[0]}" if argv and argv[0] in ("simulate", "demo") else ""
    assert line.endswith(f"(see 'tenscontrol{command} --help')"), line


def test_help_is_unchanged(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: tenscontrol simulate") and "--dt-out DT" in text


@pytest.mark.parametrize("option", ["--t-final", "--rtol", "--atol", "--dt-out"])
@pytest.mark.parametrize("value, says", [
    ("nan", "must be a finite number > 0, got 'nan'"),
    ("inf", "must be a finite number > 0, got 'inf'"),
    ("1e400", "must be a finite number > 0, got '1e400' (beyond the float range"),
    ("-1", "must be > 0, got '-1'"),
    ("0", "must be > 0, got '0'"),
    ("1e-400", "must be > 0, got '1e-400' (below the float range"),
    ("one", "expected a number > 0, got 'one'"),
    ("", "expected a number > 0, got ''"),
])
def test_bad_numbers_name_the_option(tbar_file, tmp_path, option, value, says, capsys):
    argv = simulate_argv(tbar_file, tmp_path / "o.npz")
    with pytest.raises(SystemExit) as exc:
        main(argv + [f"{option}={value}"])
    assert exc.value.code == 2
    line = error_line(capsys)
    assert f"argument {option}: {says}" in line, line


@pytest.mark.parametrize("content, says", [
    (None, "is a directory"),
    (b"", "not valid JSON"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "cannot read the file"),
    (b"PK\x03\x04 an npz, not JSON", "not valid JSON"),
    (b"[1, 2, 3]", "bad.json"),
])
def test_bad_structure_files_are_one_line_errors(tmp_path, content, says, capsys):
    bad = tmp_path / "bad.json"
    if content is None:
        bad.mkdir()
    else:
        bad.write_bytes(content)
    assert main(simulate_argv(bad, tmp_path / "o.npz")) == 2
    line = error_line(capsys)
    assert str(bad) in line and says in line


@pytest.mark.parametrize("exc, status, says", [
    (OverflowError("int too large to convert to float"), 1,
     "unexpected OverflowError: int too large to convert to float"),
    (RecursionError("maximum recursion depth exceeded"), 1, "unexpected RecursionError"),
    (MemoryError(), 1, "out of memory"),
    (TypeError("radius must be a number, got 'a'"), 2, "radius must be a number"),
    (PermissionError(13, "Permission denied", "/x.json"), 2, "/x.json: Permission denied"),
])
def test_any_exception_is_one_line(tbar_file, tmp_path, exc, status, says, capsys, monkeypatch):
    from tenscontrol import cli

    def load(path):
        raise exc

    monkeypatch.setattr(cli, "load_structure", load)
    assert main(simulate_argv(tbar_file, tmp_path / "o.npz")) == status
    assert says in error_line(capsys)


def test_python_m_tenscontrol_usage_error_is_one_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "tenscontrol", "simulate", "s.json", "--t-final", "nan",
         "--out", str(tmp_path / "o.npz")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr == ("tenscontrol: error: argument --t-final: must be a finite number "
                           "> 0, got 'nan' (see 'tenscontrol simulate --help')\n")


def test_stdout_closed_by_its_reader_is_not_an_error(tbar_file, tmp_path, capsys, monkeypatch):
    class ClosedPipe:  # `tenscontrol simulate ... | head -1` once head has exited
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            pass

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    out = tmp_path / "o.npz"
    assert main(simulate_argv(tbar_file, out, t_final="0.1")) == 141
    assert capsys.readouterr().err == ""
    with np.load(out) as data:
        assert data["t"][-1] == pytest.approx(0.1)
