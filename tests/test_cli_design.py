"""The shell's design chain: catalog --list, equilibrium's options, linearize --outputs, design
(LQR and H-infinity), the Selection syntax and the messages in the command's own options."""

import argparse
import re

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.cli import main
from tenscontrol.cli.common import selection, selection_text, shell_words
from tenscontrol.cli.model_commands import CATALOG, fixed_text
from tenscontrol.model import catalog

# Python spellings a shell user cannot type: keyword arguments, module paths, snake_case options
PYTHON_ONLY = re.compile(r"\w=[\w'\"]|tenscontrol\.\w|catalog\.\w|\b(gamma_min|"
                         r"bars_in_compression|d_scale|y_scale|u_scale|at_rest)\b")


def error_line(capsys):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tenscontrol: error: "), err
    return err[0]


@pytest.fixture(scope="module")
def prestressed(tmp_path_factory):
    """The catalog T-bar (undamped) prestressed at 10 N/m, as the README's shell block has it."""
    folder = tmp_path_factory.mktemp("design")
    s = tc.equilibrium(catalog.tbar(), gamma_min=10.0).structure
    tc.save_structure(s, folder / "tbar.json")
    return folder / "tbar.json"


# ---- the Selection syntax -------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("2,3:xz", tc.Selection(nodes=[2, 3], axes="xz")),
    ("2:z+3:x", tc.Selection(2, "z") + tc.Selection(3, "x")),
    ("all:z", tc.Selection("all", "z")),
    ("1-3", tc.Selection(nodes=[1, 2, 3])),
    ("0,4-5:y", tc.Selection(nodes=[0, 4, 5], axes="y")),
    ("2:x+strings:0,1", tc.Selection(2, "x") + tc.Selection(nodes=[], strings=[0, 1])),
])
def test_selection_syntax(text, expected):
    value = selection(text)
    assert repr(value) == repr(expected)
    assert repr(selection(selection_text(value))) == repr(expected)     # a round trip


@pytest.mark.parametrize("text, says", [
    ("", "expected a selection such as '2,3:xz'"),
    ("2:q", "AXES must be distinct letters of xyz, got 'q'"),
    ("2:xx", "AXES must be distinct letters of xyz"),
    ("a,b:x", "expected indices such as 2 or 2,3 or 0-3, got 'a'"),
    ("2-:x", "got '2-'"),
    ("strings:", "strings '': expected indices"),
])
def test_selection_syntax_errors(text, says):
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(says)):
        selection(text)


# ---- catalog --list -------------------------------------------------------------------------


def test_catalog_list_derives_every_entry(capsys):
    assert main(["catalog", "--list"]) == 0
    out = capsys.readouterr().out
    for name in CATALOG:
        assert re.search(rf"^{name} ", out, re.M), name
    assert "icosahedron " in out and "icosahedron_on_face " in out
    # the T-bar's fixed coordinates as info shows them, not "node 0 fixed"
    assert "fixed: 0 xyz, 1 xyz, 2 y, 3 y (8 coordinates)" in out
    assert fixed_text(catalog.icosahedron()) in out                   # "nothing (free-floating)"
    assert fixed_text(catalog.icosahedron(on_face=True)) in out
    assert "dbar: 4 nodes, 4 bars, 2 strings" in out                  # was "a planar 2-bar"


def test_catalog_list_matches_info(tmp_path, capsys):
    assert main(["catalog", "tbar", "--out", str(tmp_path / "t.json")]) == 0
    capsys.readouterr()
    assert main(["info", str(tmp_path / "t.json")]) == 0
    info = re.search(r"^ *fixed {2,}(.*)$", capsys.readouterr().out, re.M).group(1)
    assert main(["catalog", "--list"]) == 0
    assert f"fixed: {info};" in capsys.readouterr().out


def test_catalog_writes_the_icosahedron(tmp_path, capsys):
    out = tmp_path / "ico.json"
    assert main(["catalog", "icosahedron_on_face", "--out", str(out)]) == 0
    assert (tc.structure_to_dict(tc.load_structure(out))
            == tc.structure_to_dict(catalog.icosahedron(on_face=True)))


# ---- equilibrium ----------------------------------------------------------------------------


def test_equilibrium_configuration_free(tmp_path, capsys):
    """The icosahedron on a face cannot hold gravity as built (a mechanism): fixed fails with
    a message in the command's options, free sags and prestresses it."""
    source, out = tmp_path / "ico.json", tmp_path / "pre.json"
    tc.save_structure(catalog.icosahedron(on_face=True), source)
    argv = ["equilibrium", str(source), "--gamma-min", "5", "--out", str(out)]
    assert main(argv) == 2
    line = error_line(capsys)
    assert "--configuration free" in line and "--gamma-min" in line
    assert not PYTHON_ONLY.search(line), line
    assert not out.exists()
    assert main(argv + ["--configuration", "free"]) == 0
    assert "sagged" in capsys.readouterr().out
    s = tc.load_structure(out)
    expected = tc.equilibrium(catalog.icosahedron(on_face=True), gamma_min=5.0,
                              configuration="free")
    np.testing.assert_allclose(s.nodes, expected.structure.nodes, rtol=0, atol=1e-12)
    assert tc.force_densities(s, s.nodes.reshape(-1)).min() >= 5.0 * (1 - 1e-6)


def test_equilibrium_free_failure_in_shell_words(tmp_path, capsys):
    # 1e12 N/m needs rest lengths beyond REST_FRACTION_RANGE on either path of "free"
    source = tmp_path / "ico.json"
    tc.save_structure(catalog.icosahedron(on_face=True), source)
    assert main(["equilibrium", str(source), "--gamma-min", "1e12", "--configuration", "free",
                 "--out", str(tmp_path / "p.json")]) == 2
    line = error_line(capsys)
    assert "--configuration free found no prestress meeting --gamma-min" in line
    assert "a lower --gamma-min" in line and not PYTHON_ONLY.search(line), line


def test_equilibrium_objective_loads_and_compression(tmp_path, capsys):
    source, out, loads = tmp_path / "t.json", tmp_path / "pre.json", tmp_path / "f.json"
    tc.save_structure(catalog.tbar(), source)
    loads.write_text("[[0, 0, 0], [0, 0, 0], [0, 0, -2], [0, 0, 0]]")
    assert main(["equilibrium", str(source), "--gamma-min", "10", "--objective", "min_norm",
                 "--loads", str(loads), "--bars-in-compression", "--out", str(out)]) == 0
    f = np.zeros((4, 3))
    f[2, 2] = -2.0
    eq = tc.equilibrium(catalog.tbar(), gamma_min=10.0, objective="min_norm", loads=f,
                        bars_in_compression=True)
    s = tc.load_structure(out)
    np.testing.assert_allclose(s.string_rest_lengths, eq.structure.string_rest_lengths,
                               rtol=1e-12)


def test_equilibrium_bad_loads(tmp_path, capsys):
    source = tmp_path / "t.json"
    tc.save_structure(catalog.tbar(), source)
    (tmp_path / "f.json").write_text("[[0, 0, 0]]")
    assert main(["equilibrium", str(source), "--gamma-min", "10", "--loads",
                 str(tmp_path / "f.json"), "--out", str(tmp_path / "p.json")]) == 2
    assert "--loads" in error_line(capsys)


# ---- linearize --outputs --------------------------------------------------------------------


def test_linearize_outputs(prestressed, tmp_path, capsys):
    out = tmp_path / "m.npz"
    assert main(["linearize", str(prestressed), "--outputs", "2,3:xz", "--out", str(out)]) == 0
    data = np.load(out)
    model = tc.linearize(tc.load_structure(prestressed),
                         outputs=tc.Selection(nodes=[2, 3], axes="xz"))
    np.testing.assert_array_equal(data["C"], model.C)
    assert data["C"].shape == (4, 24)
    assert [str(n) for n in data["OutputName"].reshape(-1)] == ["x2", "z2", "x3", "z3"]


@pytest.mark.parametrize("outputs, says", [
    ("9:z", "--outputs 9:z: node 9 is not a node index; the structure has 4 nodes"),
    ("0:xyz", "--outputs 0:xyz: every selected coordinate"),
    ("2:z+2:z", "coordinate z2 is selected twice in '2:z+2:z'"),
    ("strings:0", "--outputs strings:0: selects node coordinates only"),
])
def test_linearize_bad_outputs(prestressed, tmp_path, outputs, says, capsys):
    argv = ["linearize", str(prestressed), "--outputs", outputs, "--out", str(tmp_path / "m.npz")]
    assert main(argv) == 2
    assert says in error_line(capsys)
    assert not (tmp_path / "m.npz").exists()


# ---- design ---------------------------------------------------------------------------------


def test_design_lqr(prestressed, tmp_path, capsys):
    out = tmp_path / "K.npz"
    assert main(["design", str(prestressed), "--outputs", "2,3:xz", "--effort", "1e-2",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    s = tc.load_structure(prestressed)
    design = tc.lqr(tc.linearize(s, outputs=tc.Selection(nodes=[2, 3], axes="xz")),
                    effort=1e-2)
    np.testing.assert_array_equal(tc.load_controller(out).K, design.K)
    assert str(design) in printed and "closed-loop poles [1/s]" in printed


def test_design_lqr_weights_from_files(prestressed, tmp_path, capsys):
    Q, R = np.eye(24), 0.5 * np.eye(4)
    np.save(tmp_path / "Q.npy", Q)
    (tmp_path / "R.json").write_text(str(R.tolist()))
    out = tmp_path / "K.npz"
    assert main(["design", str(prestressed), "--Q", str(tmp_path / "Q.npy"), "--R",
                 str(tmp_path / "R.json"), "--order", "4", "--out", str(out)]) == 0
    design = tc.lqr(tc.linearize(tc.load_structure(prestressed)), Q=Q, R=R, order=4)
    np.testing.assert_array_equal(tc.load_controller(out).K, design.K)


def test_design_hinf_output_feedback(prestressed, tmp_path, capsys):
    out = tmp_path / "K.npz"
    argv = ["design", str(prestressed), "--method", "hinf", "--outputs", "2,3:xz",
            "--disturbances", "2:z+3:x", "--measurements", "2,3:xz", "--d-scale", "10,5",
            "--rho", "0.2", "--backoff", "1.2", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    model = tc.linearize(tc.load_structure(prestressed),
                         outputs=tc.Selection(nodes=[2, 3], axes="xz"))
    design = tc.hinfsyn(model, disturbances=tc.Selection(2, "z") + tc.Selection(3, "x"),
                        measurements=tc.Selection(nodes=[2, 3], axes="xz"),
                        d_scale=np.array([10.0, 5.0]), rho=0.2, backoff=1.2)
    K = tc.load_controller(out)
    assert type(K).__name__ == "OutputFeedback"
    np.testing.assert_allclose(K.DK, design.controller.DK, rtol=1e-9, atol=1e-12)
    assert f"{design.closed_loop_norm:.6g}" in printed and "HinfDesign" in printed


def test_design_hinf_state_feedback_measures_strings(prestressed, tmp_path, capsys):
    out = tmp_path / "K.npz"
    assert main(["design", str(prestressed), "--method", "hinf", "--measurements",
                 "2:xz+strings:1,3", "--out", str(out)]) == 0
    K = tc.load_controller(out)
    assert list(K.measurement.names)[-2:] == ["l1", "l3"]


def test_design_help_gives_the_functions_defaults(capsys):
    """The defaults the help quotes are lqr's and hinfsyn's own (the options pass None on)."""
    import inspect

    with pytest.raises(SystemExit):
        main(["design", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for function, names in ((tc.lqr, ("effort",)),
                            (tc.hinfsyn, ("d_scale", "y_scale", "rho", "eps", "tol",
                                          "backoff"))):
        for name in names:
            default = inspect.signature(function).parameters[name].default
            option = "--" + name.replace("_", "-")
            # the option's own help: up to its "(default: ...)", crossing no other option
            quoted = re.search(rf"{option} [A-Z]\S* (?:(?!--).)*?\(default: ([\d.e-]+)\)",
                               text).group(1)
            assert float(quoted) == default, option


@pytest.mark.parametrize("options, says", [
    (["--method", "hinf", "--effort", "1"], "--effort is an option of --method lqr; drop it, "
                                            "or use --method lqr"),
    (["--rho", "1"], "--rho is an option of --method hinf; drop it, or use --method hinf"),
    (["--order", "9"], "--order must be an integer >= 0 and <= 4, got 9"),
    (["--outputs", "9:z"], "--outputs 9:z: node 9 is not a node index"),
    (["--method", "hinf", "--measurements", "strings:9"],
     "--measurements strings:9: string 9 does not exist; the structure has strings 0 to 3"),
    (["--method", "hinf", "--disturbances", "strings:1"], "--disturbances strings:1: selects "
                                                          "node coordinates only"),
    (["--method", "hinf", "--disturbances", "2:z", "--d-scale", "1,2"], "--d-scale must be"),
    (["--Q", "R.json"], "--Q R.json: expected a finite (24, 24) matrix"),
    (["--R", "R.json", "--method", "lqr"], None),   # the file fits: no error (a control case)
    (["--out", "K.txt"], "--out K.txt: the file name must end in .npz"),
])
def test_design_bad_input(prestressed, tmp_path, monkeypatch, options, says, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "R.json").write_text(str(np.eye(4).tolist()))
    argv = ["design", str(prestressed), *options]
    status = main(argv if "--out" in options else argv + ["--out", "K.npz"])
    if says is None:
        assert status == 0
        return
    assert status == 2
    line = error_line(capsys)
    assert says in line and not PYTHON_ONLY.search(line), line
    assert not (tmp_path / "K.npz").exists()


def test_design_off_equilibrium(tmp_path, capsys):
    source = tmp_path / "t.json"
    tc.save_structure(catalog.tbar(), source)               # not prestressed: not at rest
    assert main(["design", str(source), "--out", str(tmp_path / "K.npz")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("tenscontrol: error: ")
    assert "prestress the structure file with tenscontrol equilibrium first" in err[-1]
    for line in err:                                     # the warnings too, in shell words
        assert not PYTHON_ONLY.search(line), line


def test_design_compressible_needs_its_own_prestress(prestressed, tmp_path, capsys):
    """A prestress for rigid bars is no equilibrium of compressible ones: the message says
    which equilibrium to run; with it the design goes through."""
    argv = ["design", str(prestressed), "--bars", "compressible", "--out", str(tmp_path / "K.npz")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].endswith("tenscontrol equilibrium --bars compressible first"), err
    source = tmp_path / "t.json"
    tc.save_structure(catalog.tbar(), source)
    assert main(["equilibrium", str(source), "--gamma-min", "10", "--bars", "compressible",
                 "--out", str(tmp_path / "c.json")]) == 0
    argv[1] = str(tmp_path / "c.json")
    assert main(argv) == 0
    assert tc.load_controller(tmp_path / "K.npz").K.shape == (4, 24)


def test_verify_bad_outputs(prestressed, tmp_path, capsys):
    assert main(["design", str(prestressed), "--out", str(tmp_path / "K.npz")]) == 0
    capsys.readouterr()
    assert main(["verify", str(prestressed), "--controller", str(tmp_path / "K.npz"),
                 "--doublet", "2", "z", "--outputs", "2:xz+strings:7"]) == 2
    assert ("--outputs 2:xz+strings:7: string 7 does not exist; the structure has strings "
            "0 to 3") in error_line(capsys)


@pytest.mark.slow
def test_verify_outputs(prestressed, tmp_path, capsys):
    assert main(["design", str(prestressed), "--out", str(tmp_path / "K.npz")]) == 0
    capsys.readouterr()
    assert main(["verify", str(prestressed), "--controller", str(tmp_path / "K.npz"),
                 "--doublet", "2", "z", "--t-final", "1", "--outputs", "strings:1,2"]) == 0
    s = tc.load_structure(prestressed)
    report = tc.verify(s, tc.load_controller(tmp_path / "K.npz"),
                       tc.doublet(s, tc.Selection(2, "z"), 10.0), 1.0,
                       outputs=tc.Selection(nodes=[], strings=[1, 2]))
    assert str(report) in capsys.readouterr().out


def test_shell_words_leave_no_python_spelling():
    message = ("x: configuration='free' found no prestress meeting gamma_min; try "
               "bars_in_compression=False (e.g. catalog.prestressable_twist); hinfsyn: rho "
               "must be positive; rescale d_scale/y_scale, or raise rho/eps; pass order >= 4")
    text = shell_words(message)
    assert not PYTHON_ONLY.search(text), text
    for option in ("--configuration free", "--gamma-min", "--rho", "--d-scale", "--order"):
        assert option in text
    assert "----" not in text


# ---- sampled-data controllers ---------------------------------------------------------------


def test_design_writes_a_sampled_controller_that_verify_runs(prestressed, tmp_path, capsys):
    out = tmp_path / "K50.npz"
    assert main(["design", str(prestressed), "--outputs", "2,3:xz", "--effort", "1e-2",
                 "--period", "0.02", "--delay", "0.005", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    s = tc.load_structure(prestressed)
    design = tc.lqr(tc.linearize(s, outputs=tc.Selection(nodes=[2, 3], axes="xz")),
                    effort=1e-2)
    expected = tc.discretize(design.controller, 0.02, 0.005)
    K = tc.load_controller(out)
    assert type(K) is tc.control.DiscreteFeedback and (K.period, K.delay) == (0.02, 0.005)
    np.testing.assert_array_equal(K.DK, expected.DK)
    np.testing.assert_array_equal(K.CK, expected.CK)
    margin = tc.gain_margin(design.minimal, expected)
    assert f"gain margin {margin:.4g} (up to 100)" in printed
    assert "sampled every 0.02 s (delay 0.005 s)" in printed and "(stable)" in printed
    assert main(["verify", str(prestressed), "--controller", str(out), "--doublet", "2", "z",
                 "--t-final", "0.4", "--outputs", "2,3:xz"]) == 0
    report = tc.verify(s, K, tc.doublet(s, tc.Selection(2, "z"), 10.0), 0.4,
                       outputs=tc.Selection(nodes=[2, 3], axes="xz"))
    assert str(report) in capsys.readouterr().out


def test_design_hinf_sampled(prestressed, tmp_path, capsys):
    out = tmp_path / "H.npz"
    assert main(["design", str(prestressed), "--method", "hinf", "--outputs", "2,3:xz",
                 "--disturbances", "2:z", "--measurements", "2,3:xz", "--period", "0.005",
                 "--out", str(out)]) == 0
    K = tc.load_controller(out)
    assert type(K) is tc.control.DiscreteFeedback and K.n_states > 0 and K.period == 0.005
    assert "spectral radius of the discrete loop" in capsys.readouterr().out


@pytest.mark.parametrize("options, message", [
    (["--delay", "0.001"], "--delay is the computation delay of a sampled controller: give "
                           "--period too"),
    (["--period", "0.01", "--delay", "0.01"], "--delay must be less than --period (0.01 s), "
                                              "got 0.01"),
])
def test_design_bad_sampling(prestressed, tmp_path, capsys, options, message):
    out = tmp_path / "K.npz"
    assert main(["design", str(prestressed), *options, "--out", str(out)]) == 2
    assert message in error_line(capsys) and not out.exists()


@pytest.mark.parametrize("options", [["--period", "0"], ["--period", "-1"],
                                     ["--period", "1e-3", "--delay", "-1e-3"],
                                     ["--period", "1e-3", "--delay", "soon"]])
def test_design_bad_sampling_numbers(prestressed, tmp_path, capsys, options):
    with pytest.raises(SystemExit):
        main(["design", str(prestressed), *options, "--out", str(tmp_path / "K.npz")])
    assert f"argument {options[-2]}" in capsys.readouterr().err
