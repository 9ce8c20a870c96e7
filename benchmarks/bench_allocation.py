"""Self-stress allocation on the README's T-bar LQR under a doublet (issue 23, item 4).

    python benchmarks/bench_allocation.py

The T-bar ("stedy", damping 1) prestressed at 10 N/m, the README's LQR (kind "passive",
effort 1e-2, outputs x, z of nodes 2 and 3), a doublet on z2 for 10 s (verify's defaults:
1001 output times). The smallest amplitude at which the plain LQR lets a string go slack is
found by bisection on the slack time (to 0.1 N); at it and at twice it the table compares the
plain LQR with the same LQR allocated along the commanded strings' self-stresses
(``tc.allocated(..., gamma_min=1)``): peak deflection, least applied force density, slack
time, the linear prediction's error, and the CPU time of the closed-loop run.
"""

from __future__ import annotations

import time

import numpy as np

import tenscontrol as tc

OUTPUTS = tc.Selection(nodes=[2, 3], axes="xz")


def slack_time(report) -> float:
    return float(sum(report.closed.slack_time.values()))


def smallest_slack_amplitude(tbar, controller, low=10.0, high=80.0, tol=0.1) -> float:
    """Bisection on the amplitude [N] between no slack (low) and slack (high)."""
    while high - low > tol:
        mid = 0.5 * (low + high)
        report = tc.verify(tbar, controller, tc.doublet(tbar, tc.Selection(2, "z"), mid), 10.0,
                           outputs=OUTPUTS)
        low, high = (low, mid) if slack_time(report) > 0 else (mid, high)
    return high


def main():
    tbar = tc.equilibrium(tc.catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
    lqr = tc.lqr(tc.linearize(tbar, kind="passive", outputs=OUTPUTS), effort=1e-2).controller
    alloc = tc.allocated(lqr, tbar, gamma_min=1.0)
    amplitude = smallest_slack_amplitude(tbar, lqr)
    print(f"T-bar doublet on z2: smallest amplitude at which the plain LQR goes slack "
          f"{amplitude:.1f} N (bisection to 0.1 N); self-stress dimension "
          f"{alloc.self_stress.dimension}\n")
    head = ["amplitude [N]", "controller", "peak [m]", "least gamma [N/m]", "slack [s]",
            "linear error", "CPU [s]"]
    print("".join(f"{h:>19}" for h in head))
    for amp in (amplitude, 2 * amplitude):
        load = tc.doublet(tbar, tc.Selection(2, "z"), amp)
        for name, ctl in (("LQR", lqr), ("LQR allocated", alloc)):
            t0 = time.process_time()
            r = tc.verify(tbar, ctl, load, 10.0, outputs=OUTPUTS)
            cpu = time.process_time() - t0
            cells = [f"{amp:.1f}", name, f"{r.closed.peak:.4e}",
                     f"{r.closed_loop.control.applied.min():.4g}", f"{slack_time(r):.3g}",
                     f"{100 * r.linear_error:.2f} %", f"{cpu:.2f}"]
            print("".join(f"{c:>19}" for c in cells))


if __name__ == "__main__":
    main()
