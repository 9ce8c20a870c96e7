"""The README's quickstart runs as written (keeps README.md true)."""

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def run_block(index: int, what: str, folder, monkeypatch) -> dict:
    """Run the README's python block `index` (its `what`) in `folder`; returns its names."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) > index, f"README has no {what} block"
    monkeypatch.chdir(folder)
    scope = {}
    exec(compile(blocks[index], f"README {what}", "exec"), scope)
    return scope


@pytest.mark.slow
def test_quickstart_runs(tmp_path, monkeypatch, capsys):
    run_block(0, "quickstart", tmp_path, monkeypatch)
    out = capsys.readouterr().out
    # the printed end state of node 2 is the one the README quotes
    assert "[4.17813921 0.         2.74648007]" in out
    for name in ("pendulum.json", "paths.png", "violations.png", "pendulum.gif"):
        assert (tmp_path / name).stat().st_size > 0


def test_linear_analysis_block_runs(tmp_path, monkeypatch, capsys):
    run_block(1, "linear analysis", tmp_path, monkeypatch)
    out = capsys.readouterr().out
    assert "radau5" in out
    assert "24 4 4" in out  # full, structural and minimal order the README quotes


@pytest.mark.slow
def test_control_block_runs(tmp_path, monkeypatch, capsys):
    scope = run_block(2, "control", tmp_path, monkeypatch)
    out = capsys.readouterr().out
    assert "peak reduction" in out and "linear prediction" in out
    assert (tmp_path / "closed_loop.png").stat().st_size > 0
    # what the comments claim: no string slack, gamma achieved and the loop within it
    assert not scope["run"].control.slack_time.any()
    assert scope["hinf"].closed_loop_norm <= scope["hinf"].gamma * (1 + 1e-6)
    # the README's "cuts the nonlinear peak deflection of a 10 N doublet by 77 %" (measured
    # 76.6 % with verify's default tolerances, 77 % in benchmarks/bench_control.py)
    assert scope["report"].peak_reduction == pytest.approx(0.77, abs=0.01)


def test_statics_block_runs(tmp_path, monkeypatch, capsys):
    scope = run_block(3, "statics", tmp_path, monkeypatch)
    assert "True True" in capsys.readouterr().out          # what the comment claims
    assert scope["eq"].gamma.min() >= 20.0 * (1 - 1e-9)
    assert scope["prism"].nodes.shape == (6, 3)
    assert scope["softer"].bars[0].material == "hdpe"


def test_studies_block_runs(tmp_path, monkeypatch):
    scope = run_block(4, "studies", tmp_path, monkeypatch)
    assert len(scope["table"]) == 4 and not scope["result"].failures
    assert len(list((tmp_path / "study" / "cases").glob("*.json"))) == 4


def test_where_things_live_names_every_package():
    # the README's table is the map of the folder tree: a package missing from it is a part
    # of the architecture a reader cannot find (tenscontrol/robust/ was, for one stop)
    text = README.read_text()
    table = text[text.index("## Where things live"):]
    root = README.parent / "tenscontrol"
    packages = sorted(p.parent.relative_to(README.parent).as_posix()
                      for p in root.rglob("__init__.py") if "__pycache__" not in p.parts)
    missing = [p for p in packages if p != "tenscontrol" and f"`{p}/`" not in table
               and f"{p.rsplit('/', 1)[-1]}/" not in table]
    assert not missing, f"README's 'Where things live' does not name {missing}"
