"""tenscontrol sweep: a study file run from the shell, its exit codes and its resume."""

import json

import pytest

from tenscontrol.cli import main


def study_file(folder, materials):
    """A norms study of the T-bar over `materials`, written to folder/study.json."""
    path = folder / "study.json"
    path.write_text(json.dumps({
        "pipeline": "norms", "out": "results",
        "structure": {"catalog": "tbar", "arguments": {"variant": "stedy", "damping": 5.0}},
        "settings": {"prestress": 10.0, "t_final": 0.2},
        "parameters": {"grid": {"material": materials}},
        "executor": {"kind": "serial"},
    }))
    return path


def test_sweep_runs_every_case_and_resumes_from_its_folder(tmp_path, capsys):
    path = study_file(tmp_path, ["hdpe", "aluminium"])
    assert main(["sweep", str(path), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "2 cases, 2 finished, 0 failed, 0 read back" in out
    assert len(list((tmp_path / "results" / "cases").glob("*.json"))) == 2
    # the same command again: nothing left to run, both cases are read back from the folder
    assert main(["sweep", str(path), "--quiet"]) == 0
    assert "2 read back" in capsys.readouterr().out


def test_sweep_lists_the_failed_cases_and_exits_1(tmp_path, capsys):
    path = study_file(tmp_path, ["hdpe", "unobtainium"])
    assert main(["sweep", str(path), "--quiet", "--out", str(tmp_path / "elsewhere")]) == 1
    captured = capsys.readouterr()
    assert "unknown material 'unobtainium'" in captured.out
    assert "1 of 2 cases failed" in captured.err
    assert (tmp_path / "elsewhere").is_dir() and not (tmp_path / "results").exists()


@pytest.mark.parametrize("argv, match", [
    (["sweep", "missing.json"], "missing.json: no such file"),
    (["sweep", "{file}", "--workers", "2"], "--workers and --address need --executor"),
    (["sweep", "{file}", "--executor", "processes", "--address", "tcp://x:1"],
     "--address needs --executor dask"),
])
def test_sweep_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, match):
    path = study_file(tmp_path, ["hdpe"])
    argv = [a.replace("{file}", str(path)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tenscontrol: error: ") and match in err[0], err


@pytest.mark.slow
def test_sweep_takes_a_case_timeout(tmp_path, capsys):
    path = study_file(tmp_path, ["hdpe"])
    with pytest.raises(SystemExit) as info:
        main(["sweep", str(path), "--case-timeout", "0"])
    assert info.value.code == 2
    assert "argument --case-timeout: must be > 0, got '0'" in capsys.readouterr().err
    assert main(["sweep", str(path), "--quiet", "--case-timeout", "120"]) == 0
    assert "1 cases, 1 finished, 0 failed" in capsys.readouterr().out
