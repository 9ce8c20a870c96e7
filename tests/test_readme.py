"""The README's quickstart runs as written (keeps README.md true)."""

import pathlib
import re

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def test_quickstart_runs(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "README has no python block"
    monkeypatch.chdir(tmp_path)
    exec(compile(blocks[0], "README quickstart", "exec"), {})
    out = capsys.readouterr().out
    # the printed end state of node 2 is the one the README quotes
    assert "[4.17813921 0.         2.74648007]" in out
    for name in ("pendulum.json", "paths.png", "violations.png", "pendulum.gif"):
        assert (tmp_path / name).stat().st_size > 0


def test_linear_analysis_block_runs(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 2, "README has no linear-analysis block"
    monkeypatch.chdir(tmp_path)
    exec(compile(blocks[1], "README linear analysis", "exec"), {})
    out = capsys.readouterr().out
    assert "radau5" in out
    assert "24 4 4" in out  # full, structural and minimal order the README quotes


def test_control_block_runs(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 3, "README has no control block"
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec(compile(blocks[2], "README control", "exec"), scope)
    out = capsys.readouterr().out
    assert "peak reduction" in out and "linear prediction" in out
    assert (tmp_path / "closed_loop.png").stat().st_size > 0
    # what the comments claim: no string slack, gamma achieved and the loop within it
    assert not scope["run"].control.slack_time.any()
    assert scope["hinf"].closed_loop_norm <= scope["hinf"].gamma * (1 + 1e-6)
    assert scope["report"].peak_reduction > 0.5


def test_statics_block_runs(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 4, "README has no statics block"
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec(compile(blocks[3], "README statics", "exec"), scope)
    assert "True True" in capsys.readouterr().out          # what the comment claims
    assert scope["eq"].gamma.min() >= 20.0 * (1 - 1e-9)
    assert scope["prism"].nodes.shape == (6, 3)
    assert scope["softer"].bars[0].material == "hdpe"


def test_studies_block_runs(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 5, "README has no studies block"
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec(compile(blocks[4], "README studies", "exec"), scope)
    assert len(scope["table"]) == 4 and not scope["result"].failures
    assert len(list((tmp_path / "study" / "cases").glob("*.json"))) == 4
