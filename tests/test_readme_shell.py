"""The README's shell block runs as written, from a catalog structure to a verified controller
(keeps README.md's "From the shell" section true)."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

import tenscontrol as tc

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def shell_block() -> str:
    """The first sh block of the README's "From the shell" section."""
    section = README.read_text().split("## From the shell", 1)
    assert len(section) == 2, "README has no 'From the shell' section"
    block = re.search(r"```sh\n(.*?)```", section[1], flags=re.S)
    assert block, "README's 'From the shell' section has no sh block"
    return block.group(1)


def run_block(block: str, folder: pathlib.Path) -> subprocess.CompletedProcess:
    """Run `block` with bash (stop at the first failure) in `folder`, the `tenscontrol`
    command being this checkout's (python -m tenscontrol)."""
    bin_dir = folder / ".bin"
    bin_dir.mkdir()
    shim = bin_dir / "tenscontrol"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tenscontrol "$@"\n')
    shim.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT),
                                                        os.environ.get("PYTHONPATH")])),
               MPLBACKEND="Agg")
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=900)


def peak_reductions(out: str) -> list:
    return [float(x) / 100 for x in
            re.findall(r"^peak reduction \(closed vs open loop\)\s+([\d.]+) %", out, re.M)]


@pytest.mark.slow
def test_the_shell_block_designs_and_verifies_a_controller(tmp_path):
    block = shell_block()
    commands = [line.split()[1] for line in block.splitlines()
                if line.startswith("tenscontrol ")]
    # the chain the README promises: catalog -> equilibrium -> design -> verify, no Python
    assert commands[:5] == ["catalog", "catalog", "equilibrium", "design", "verify"]
    assert "python" not in block
    run = run_block(block, tmp_path)
    assert run.returncode == 0, run.stderr
    # no warning either; on an empty numba cache the compile notice's lines are expected
    assert [line for line in run.stderr.splitlines()
            if not line.startswith("tenscontrol: compil")] == []
    for name in ("tbar.json", "tbar-pre.json", "K.npz", "K-hinf.npz", "report.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    s = tc.load_structure(tmp_path / "tbar-pre.json")
    assert tc.force_densities(s, s.nodes.reshape(-1)).min() == pytest.approx(10.0)
    assert type(tc.load_controller(tmp_path / "K.npz")).__name__ == "StateFeedback"
    assert type(tc.load_controller(tmp_path / "K-hinf.npz")).__name__ == "OutputFeedback"
    # what the README says of the outcome: 80 % (LQR) and 77 % (H-infinity) less peak
    # deflection, no string slack in closed loop (measured 79.6 % and 76.5 %)
    assert peak_reductions(run.stdout) == pytest.approx([0.80, 0.77], abs=0.01)
    assert re.findall(r"^slack strings \[s\]\s+(\S+)", run.stdout, re.M) == ["none", "none"]
