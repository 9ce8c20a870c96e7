"""Every script in examples/ runs end to end and writes its files into the given directory only."""

import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
SCRIPTS = sorted(EXAMPLES.glob("*.py"))

# the files each example writes into its output directory
EXPECTED = {
    "ball_animation.py": ["ball.gif"],
    "ball_hinf.py": ["ball_hinf_closed_loop.png"],
    "soft_vs_metallic_closed_loop.py": ["tbar_closed_loop_aluminium.png",
                                        "tbar_closed_loop_hdpe.png"],
    "tbar_lqr.py": ["tbar_lqr_closed_loop.png"],
    "icosahedron_on_a_face.py": ["icosahedron_lqr_closed_loop.png"],
    "ball_prestress_and_norms.py": ["ball_hankel.png"],
    "soft_vs_metallic.py": ["tbar_soft_vs_metallic.png"],
    "custom_structure.py": ["slewing_boom.json", "slewing_boom_structure.png",
                            "slewing_boom_tip_path.png"],
    "slack_string.py": ["slack_string_members.png", "slack_string_violations.png"],
    "tbar_energy_correction.py": [f"tbar_violations_{mode}.png"
                                  for mode in ("none", "geometric", "energy")],
    "soft_vs_metallic_robustness.py": ["robustness_hinf.png",
                                       "robustness_peak_vs_stiffness_error.png",
                                       "robustness_slack.png", "study"],
}

# the small size an example runs at here (its full size is in its docstring)
ARGUMENTS = {"soft_vs_metallic_robustness.py": ["--samples", "2", "--executor", "serial"]}


def test_examples_are_found():
    assert SCRIPTS, f"no example scripts in {EXAMPLES}"


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_example_runs(script, tmp_path):
    assert script.name in EXPECTED, f"add the output files of {script.name} to EXPECTED"
    out, cwd = tmp_path / "out", tmp_path / "cwd"
    cwd.mkdir()
    proc = subprocess.run([sys.executable, str(script), str(out),
                           *ARGUMENTS.get(script.name, [])], cwd=cwd, capture_output=True,
                          text=True, timeout=600)  # a cold numba cache compiles first
    assert proc.returncode == 0, f"{script.name} failed:\n{proc.stdout}\n{proc.stderr}"
    assert proc.stdout.strip(), f"{script.name} printed nothing"
    written = sorted(p.name for p in out.iterdir())
    assert written == sorted(EXPECTED[script.name])
    for name in written:
        assert (out / name).stat().st_size > 0, f"{script.name}: {name} is empty"
    assert not any(cwd.iterdir()), f"{script.name} wrote into its working directory"
