"""Full-order Riccati designs on the 96- and 192-bar prism towers: lqr and hinfsyn.

Usage: ``OPENBLAS_NUM_THREADS=1 python benchmarks/bench_riccati.py [--stages 32 64]
[--hinf-stages 32]``

Towers: ``prism_tower(stages, damping=1)`` at ``equilibrium(gamma_min=10)``, passive
linearization, every string actuated (as benchmarks/bench_scaling_linear.py). For each tower,
full-order ``lqr`` (default weights): CPU seconds (time.process_time, one run after a warm-up
on a 3-bar tower) of the whole call and of its ``minimal_realization`` alone, the Riccati
solver that answered and the ones refused, and figures computed here from the returned design
(not from the solver's own report): the relative Riccati residual ``||A^T S + S A - S B R^-1
B^T S + Q||_F / (2 ||A^T S|| + ||Q|| + ||S G S||)`` of the reduced ``S_r = T^T S T`` (T the
reduction basis) and the closed loop's largest real part ``max Re eig(A_r - B_r K_r)``. Then
full-order ``hinfsyn`` (top-node disturbance, performance output and measurement: output
feedback): CPU, gamma, the infeasible bound, the loop's norm, bisection method and trials.

The script runs unchanged on a checkout without tenscontrol.design.riccati (the figures it
prints are computed here): ``PYTHONPATH=/path/to/old/checkout python bench_riccati.py`` gives
the "before" column. Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import tenscontrol as tc
from tenscontrol.model import catalog

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_simulate import machine_info, print_table  # noqa: E402


def cpu(fun):
    t0 = time.process_time()
    out = fun()
    return out, time.process_time() - t0


def tower_model(stages):
    s = tc.equilibrium(catalog.prism_tower(stages, damping=1.0), gamma_min=10.0).structure
    return s, tc.linearize(s, kind="passive")


def lqr_figures(d) -> tuple[float, float]:
    """(relative Riccati residual, max Re of the closed-loop poles) of an LQRDesign."""
    mr = d.minimal
    T, nu = mr.basis, d.K.shape[0]
    A = np.asarray(mr.sys.A, dtype=float)
    B = np.asarray(mr.sys.B, dtype=float)[:, :nu]
    Q, S = T.T @ d.Q @ T, T.T @ d.S @ T
    SB = S @ B
    SGS = SB @ np.linalg.solve(d.R, SB.T)
    AS = A.T @ S
    res = np.linalg.norm(AS + AS.T - SGS + Q) / (
        2 * np.linalg.norm(AS) + np.linalg.norm(Q) + np.linalg.norm(SGS))
    return float(res), float(np.linalg.eigvals(A - B @ d.K_reduced).real.max())


def lqr_row(stages):
    s, m = tower_model(stages)
    mr, t_mr = cpu(lambda: tc.minimal_realization(m))
    d, t_lqr = cpu(lambda: tc.lqr(m))
    res, growth = lqr_figures(d)
    sol = getattr(d, "riccati", None)
    how = "-" if sol is None else sol.method + (f" ({sol.steps} steps)" if sol.steps else "")
    refused = "-" if sol is None or not sol.fallbacks else "; ".join(sol.fallbacks)
    return [s.n_bars, mr.order, f"{t_lqr:.3g}", f"{t_mr:.3g}", f"{res:.2g}", f"{growth:.3g}",
            how, refused]


def hinf_row(stages):
    s, m = tower_model(stages)
    top = tc.Selection(nodes=[s.n_nodes - 1])
    h, t = cpu(lambda: tc.hinfsyn(m, disturbances=top, outputs=top, measurements=top))
    return [s.n_bars, h.plant.nstates, f"{t:.3g}", f"{h.gamma:.6g}", f"{h.gamma_lower:.6g}",
            f"{h.closed_loop_norm:.6g}", getattr(h, "bisection", None) or "-", h.iterations]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stages", type=int, nargs="*", default=[32, 64],
                    help="tower stages for lqr (3 bars each)")
    ap.add_argument("--hinf-stages", type=int, nargs="*", default=[32],
                    help="tower stages for hinfsyn")
    args = ap.parse_args()
    print(machine_info())
    print(f"tenscontrol from {Path(tc.__file__).parent}")
    tc.lqr(tower_model(1)[1])                # imports and first-call work
    rows = [lqr_row(k) for k in args.stages]
    print("\n1. Full-order lqr (default weights), CPU seconds: the call, and its "
          "minimal_realization alone; residual and max Re computed from the design")
    print_table(["bars", "states", "lqr CPU", "minreal CPU", "residual", "max Re [1/s]",
                 "solver", "refused"], rows)
    rows = [hinf_row(k) for k in args.hinf_stages]
    print("\n2. Full-order hinfsyn (top node: disturbance, output, measurement; output "
          "feedback, tol 1e-3), CPU seconds")
    print_table(["bars", "plant states", "CPU", "gamma", "infeasible below", "||CL||_inf",
                 "bisection", "trials"], rows)


if __name__ == "__main__":
    main()
