"""Accuracy figures of the rigid-bar simulator on the benchmark structures.

Usage::

    python benchmarks/accuracy.py

Prints, for the T-bar (both variants, with and without dampers, 10 s, rtol = atol = 1e-10):
the largest node distance to the independent two-angle model (tests/oracles.py) over the
output grid 0:0.01:10, the largest |Etot - w - E0| and |bar length - l|, for each correction
mode; then the arm and the ball (1 s, gravity and their loads). Violations are taken at the
accepted steps (the corrected states); the node distance on the 0.01 s grid (dense output).
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))

import tenscontrol as tc  # noqa: E402
from oracles import tbar_minimal  # noqa: E402
from tenscontrol.model import catalog  # noqa: E402


def row(name, traj, node_err=None):
    err = "-" if node_err is None else f"{node_err:.2e}"
    s = traj.stats
    return (f"{name:<34} {err:>12} {np.abs(traj.energy_violation).max():>12.2e} "
            f"{np.abs(traj.bar_violation).max():>12.2e} {s.accepted_steps:>8} "
            f"{s.correction_iterations:>6}")


def main() -> None:
    print(f"{'case':<34} {'node err [m]':>12} {'max|dE| [J]':>12} {'max|dl| [m]':>12} "
          f"{'steps':>8} {'corr':>6}")
    t_eval = np.arange(0, 1001) * 0.01
    for variant in ("stedy", "paper"):
        for damping in (0.0, 1.0):
            n2, n3 = tbar_minimal(variant, damping, t_eval)
            for correction in ("energy", "geometric", "none"):
                structure = catalog.tbar(variant, damping=damping)
                dense = tc.simulate(structure, 10.0, t_eval=t_eval, correction=correction)
                err = max(np.abs(dense.nodes[:, 2, [0, 2]] - n2).max(),
                          np.abs(dense.nodes[:, 3, [0, 2]] - n3).max())
                steps = tc.simulate(structure, 10.0, correction=correction)
                print(row(f"T-bar {variant} c={damping:g} {correction}", steps, err))
    for name, structure, load in (("arm 0.8 + arm_load, 1 s", catalog.arm(0.8), catalog.arm_load()),
                                  ("ball 0.9 + ball_load, 1 s", catalog.ball(0.9),
                                   catalog.ball_load())):
        print(row(name, tc.simulate(structure, 1.0, loads=load)))


if __name__ == "__main__":
    main()
