"""The subcommands beyond simulate: each one's success and a bad input (one line, exit 2)."""

import json

import numpy as np
import pytest
import scipy.io

import tenscontrol as tc
from tenscontrol import plotting
from tenscontrol.cli import main
from tenscontrol.model import catalog


def error_line(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tenscontrol: error: "), err
    return err[0]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A prestressed T-bar, its LQR controller, loads, velocities and a short closed-loop run."""
    folder = tmp_path_factory.mktemp("cli")
    s = tc.equilibrium(catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
    tc.save_structure(s, folder / "tbar.json")
    tc.save_controller(tc.lqr(tc.linearize(s, kind="passive"), effort=1e-2).controller,
                       folder / "K.npz")
    loads = np.zeros((4, 3))
    loads[2, 2] = -5.0
    np.save(folder / "loads.npy", loads)
    (folder / "loads.json").write_text(json.dumps(loads.tolist()))
    b = s.nodes[2] - s.nodes[0]
    qd = np.zeros((4, 3))
    qd[2] = 0.01 * np.array([-b[2], 0.0, b[0]]) / np.linalg.norm(b)  # across bar 0, in x-z
    np.save(folder / "qd.npy", qd)
    tc.simulate(s, 0.2).save(folder / "traj.npz")
    return folder


def test_info(files, capsys):
    assert main(["info", str(files / "tbar.json")]) == 0
    out = capsys.readouterr().out
    # the structure's own table first (the one presentation rule), then the details
    s = tc.load_structure(files / "tbar.json")
    assert out.startswith(s.summary() + "\ndetails\n")
    for text in ("4, 2, 4", "total mass", "bar lengths", "fixed", "gravity", "bar materials",
                 "stiffness", "damping"):
        assert text in out


def test_info_without_a_file_reports_the_installation(capsys):
    # the compiled kernels' status is reported here (and by the demo), never warned at import
    import numba

    from tenscontrol.mechanics.kernels import aot
    assert main(["info"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"tenscontrol {tc.__version__}"
    assert f"numba {numba.__version__}" in out
    assert out[-1] == f"compiled kernels: {aot.STATUS}"


def test_info_of_a_bad_file(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["info", str(bad)]) == 2
    assert "bad.json" in error_line(capsys)


def test_catalog_list_and_write(tmp_path, capsys):
    assert main(["catalog", "--list"]) == 0
    assert "ball" in capsys.readouterr().out
    out = tmp_path / "ball.json"
    assert main(["catalog", "ball", "--out", str(out)]) == 0
    assert tc.structure_to_dict(tc.load_structure(out)) == tc.structure_to_dict(catalog.ball())


def test_catalog_unknown_name(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:  # a usage error: argparse exits
        main(["catalog", "pyramid", "--out", str(tmp_path / "p.json")])
    assert info.value.code == 2
    assert "invalid choice: 'pyramid'" in error_line(capsys)


def test_equilibrium(files, tmp_path, capsys):
    out = tmp_path / "pre.json"
    source = tmp_path / "t.json"
    tc.save_structure(catalog.tbar("stedy"), source)
    assert main(["equilibrium", str(source), "--gamma-min", "10", "--out", str(out)]) == 0
    s = tc.load_structure(out)
    assert tc.force_densities(s, s.nodes.reshape(-1)).min() == pytest.approx(10.0)


def test_equilibrium_negative_gamma_min(files, tmp_path, capsys):
    argv = ["equilibrium", str(files / "tbar.json"), "--gamma-min", "-1", "--out",
            str(tmp_path / "x.json")]
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "--gamma-min: must be a finite number >= 0" in error_line(capsys)


@pytest.mark.parametrize("suffix", [".npz", ".mat"])
def test_linearize(files, tmp_path, suffix, capsys):
    out = tmp_path / f"model{suffix}"
    assert main(["linearize", str(files / "tbar.json"), "--out", str(out)]) == 0
    model = tc.linearize(tc.load_structure(files / "tbar.json"), kind="passive")
    data = scipy.io.loadmat(out) if suffix == ".mat" else dict(np.load(out))
    np.testing.assert_array_equal(data["A"], model.A)
    names = [str(np.ravel(c)[0]) for c in data["InputName"].reshape(-1)]
    assert names == list(model.input_names + model.disturbance_names)


def test_linearize_wrong_suffix(files, tmp_path, capsys):
    assert main(["linearize", str(files / "tbar.json"), "--out", str(tmp_path / "m.txt")]) == 2
    assert "must end in .npz or .mat" in error_line(capsys)


def test_simulate_with_loads_velocities_and_controller(files, tmp_path, capsys):
    out = tmp_path / "closed.npz"
    argv = ["simulate", str(files / "tbar.json"), "--t-final", "0.3", "--loads",
            str(files / "loads.json"), "--qd", str(files / "qd.npy"), "--controller",
            str(files / "K.npz"), "--out", str(out)]
    assert main(argv) == 0
    traj = tc.load_trajectory(out)
    assert traj.control is not None and traj.control.strings.size == 4
    np.testing.assert_array_equal(traj.velocities[0], np.load(files / "qd.npy"))
    s = tc.load_structure(files / "tbar.json")
    expected = tc.simulate(s, 0.3, loads=np.load(files / "loads.npy"),
                           qd=np.load(files / "qd.npy"),
                           controller=tc.load_controller(files / "K.npz"))
    np.testing.assert_array_equal(traj.nodes, expected.nodes)


@pytest.mark.parametrize("option, content, says", [
    ("--loads", np.zeros((3, 3)), "--loads .*: expected an \\(4, 3\\) array of nodal forces"),
    ("--qd", np.full((4, 3), np.nan), "--qd .*: every entry must be finite"),
    ("--controller", np.zeros(3), "--controller .*: a single .npy array"),
])
def test_simulate_bad_input_files(files, tmp_path, option, content, says, capsys):
    bad = tmp_path / "bad.npy"
    np.save(bad, content)
    if option == "--controller":
        bad = bad.rename(tmp_path / "bad.npz")
    argv = ["simulate", str(files / "tbar.json"), "--t-final", "0.1", option, str(bad),
            "--out", str(tmp_path / "t.npz")]
    assert main(argv) == 2
    assert __import__("re").search(says, error_line(capsys))


@pytest.mark.slow
def test_verify(files, tmp_path, capsys):
    plot = tmp_path / "report.png"
    argv = ["verify", str(files / "tbar.json"), "--controller", str(files / "K.npz"),
            "--doublet", "2", "z", "--t-final", "2", "--plot", str(plot)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "peak reduction" in out and plot.stat().st_size > 0


def test_verify_bad_doublet(files, capsys):
    argv = ["verify", str(files / "tbar.json"), "--controller", str(files / "K.npz"),
            "--doublet", "9", "z"]
    assert main(argv) == 2
    assert "--doublet 9 z: node 9 does not exist" in error_line(capsys)


def test_plot(files, tmp_path, capsys):
    out = tmp_path / "paths.png"
    assert main(["plot", str(files / "traj.npz"), "--out", str(out)]) == 0
    assert out.stat().st_size > 0 and (tmp_path / "paths-violations.png").stat().st_size > 0


def test_plot_of_a_file_that_is_not_a_trajectory(files, tmp_path, capsys):
    assert main(["plot", str(files / "K.npz"), "--out", str(tmp_path / "p.png")]) == 2
    assert "not a tenscontrol.trajectory/1 file" in error_line(capsys)


@pytest.mark.skipif(not hasattr(plotting, "animate"),
                    reason="plotting.animate is being written on branch 'plots'")
def test_animate(files, tmp_path, capsys):
    out = tmp_path / "tbar.gif"
    assert main(["animate", str(files / "traj.npz"), "--out", str(out), "--max-frames",
                 "10"]) == 0
    assert out.read_bytes()[:3] == b"GIF"


def test_animate_wrong_suffix(files, tmp_path, capsys):
    assert main(["animate", str(files / "traj.npz"), "--out", str(tmp_path / "a.png")]) == 2
    assert "must end in .gif or .mp4" in error_line(capsys)


@pytest.mark.parametrize("command", ["info", "catalog", "equilibrium", "linearize", "design",
                                     "simulate", "verify", "plot", "animate", "demo"])
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    assert f"usage: tenscontrol {command}" in capsys.readouterr().out
