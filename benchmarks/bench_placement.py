"""Actuator placement (issue 32, item 2): half the strings chosen by tc.place_actuators against
20 random halves and the full set, by the figure of the loop.

    python benchmarks/bench_placement.py            # about a minute on one core

Structures (damping 1 N s/m on every string, passive linearization at the equilibrium):
the ball at gamma_min = 40 N/m (32 strings), the 3-prism at gamma_min = 10 N/m (9 strings),
a tower of two 4-prisms at gamma_min = 10 N/m (20 strings). Every string is a candidate.

The figure of the loop: the LQR (tc.lqr's default weights) is designed with the set's strings
commanded (String.actuated) and the loop's H2 norm J from every free nodal force d [N] to
``z = [Q^1/2 (x - x*); R^1/2 u]`` is taken, ``sqrt(trace(E_r^T S_r E_r))``: the cost the LQR
minimizes (smaller is better). "kept" is ``J(full set) / J(set)``: the method keeps at least
90 % of the full set's figure when ``J(chosen) <= J(full) / 0.9``. The table also gives the
output-only norm ``||d -> y||_2`` (y = every node position [m]) of the same loop and its ratio
to the full set's, and, per structure, that norm without control (inf for the tower: its
least damped mode, damping ratio 5e-9, counts as marginal for tc.h2_norm). The random rows
give each column's own median, best and worst over the 20 sets (seeded).

This script computes every figure itself (tc.lqr on the model with the set marked actuated,
the closed loop's norms by tc.h2_norm), not from the placement's own numbers; it asserts
nothing.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import control as ct

import tenscontrol as tc

RANDOM_SETS = 20
SEED = 32


def structures():
    return [("ball", tc.catalog.ball(damping=1.0), 40.0),
            ("3-prism", tc.catalog.prism(3, damping=1.0), 10.0),
            ("2 x 4-prism tower", tc.catalog.prism_tower(2, 4, damping=1.0), 10.0)]


def figures(model, strings) -> tuple:
    """(J, ||d -> y||_2) of the LQR loop with `strings` commanded; inf without a stabilizing
    LQR."""
    st = model.structure.with_strings(actuated=False).with_strings(
        sorted(int(k) for k in strings), actuated=True)
    try:
        d = tc.lqr(dataclasses.replace(model, structure=st))
    except ValueError:
        return np.inf, np.inf
    ny = model.C.shape[0]
    sys, nu = d.minimal.sys, d.K.shape[0]
    A, B = np.asarray(sys.A), np.asarray(sys.B)
    T = d.minimal.basis
    Qr = T.T @ d.Q @ T
    # z = [Qr^1/2 x_r; R^1/2 u] through factors with F^T F = Qr and G^T G = R
    w, V = np.linalg.eigh(0.5 * (Qr + Qr.T))
    F = (V * np.sqrt(np.clip(w, 0.0, None))).T
    G = np.linalg.cholesky(d.R).T
    z = ct.ss(A - B[:, :nu] @ d.K_reduced, B[:, nu:], np.vstack([F, -G @ d.K_reduced]), 0)
    return tc.h2_norm(z), tc.h2_norm(d.closed_loop[:ny, :])


def row(label, strings, J, y, full) -> str:
    names = ", ".join(map(str, strings)) if strings is not None else ""
    return (f"  {label:<16} {names:<46} {J:10.5g} {full[0] / J:6.3f} {y:11.5g} "
            f"{full[1] / y:6.3f}")


def main():
    print(f"{'':2}{'set':<16} {'strings':<46} {'J':>10} {'kept':>6} {'||d->y||2':>11} "
          f"{'kept':>6}")
    for name, structure, gamma_min in structures():
        model = tc.linearize(tc.equilibrium(structure, gamma_min=gamma_min).structure)
        n = structure.n_strings
        k = n // 2
        open_loop = tc.h2_norm(tc.minimal_realization(model.actuated([])).sys)
        print(f"{name}: {n} strings, k = {k}; ||d -> y||_2 without control {open_loop:.5g}")
        full = figures(model, range(n))
        print(row("every string", [f"all {n}"], *full, full))
        for criterion in ("h2", "modal"):
            t0 = time.process_time()
            p = tc.place_actuators(model, k, criterion=criterion)
            cpu = time.process_time() - t0
            print(row(f"{criterion} ({cpu:.1f} s)", sorted(p.strings),
                      *figures(model, p.strings), full))
        rng = np.random.default_rng(SEED)
        rand = np.array([figures(model, rng.choice(n, k, replace=False))
                         for _ in range(RANDOM_SETS)])
        for label, pick in (("random median", np.median), ("random best", np.min),
                            ("random worst", np.max)):
            print(row(label, None, pick(rand[:, 0]), pick(rand[:, 1]), full))


if __name__ == "__main__":
    main()
