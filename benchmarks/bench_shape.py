"""Shape change on the T-bar and on a 3-prism: tracking error against time, least tension, final
static residual (issue 23, item 5).

    python benchmarks/bench_shape.py

- T-bar ("stedy", damping 1): both tips (nodes 2 and 3) lowered from z = 3.536 m to 3.0 m
  (bars kept at 5 m) in T = 10 s, every string >= 10 N/m on the planned path.
- 3-prism (aluminium bars, nylon strings, damping 0.5, base fixed): the top ring drawn in from
  radius 0.5 m to 0.35 m at the prestressable twist of 150 deg (the prism rises from 1.0 m to
  1.121 m) in T = 5 s, every string >= 5 N/m. (A twist change has no taut path: away from
  150 deg the fixed-base prism holds no prestress without loads; tests/test_shape.py.)

Each: 21 planned equilibria (min-norm prestress), LQR (effort 1e-2, kind "control") at s = 0,
0.5, 1 interpolated in s, quintic time law, commands allocated along the path's self-stresses
(``--plain``: without); the run lasts 2 T on the corrected nonlinear simulator (rigid bars,
default tolerances), sampled at 401 points.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

import tenscontrol as tc

C = 5.0 * np.cos(np.pi / 4)


def tbar_case():
    tbar = tc.catalog.tbar("stedy", damping=1.0)

    def geometry(s):
        z = C + s * (3.0 - C)
        x = np.sqrt(25.0 - z * z)
        N = tbar.nodes.copy()
        N[2], N[3] = [x, 0.0, z], [C - x, 0.0, z]
        return N
    return "T-bar tips 3.536 -> 3.0 m", tbar, geometry, 10.0, 10.0


def prism_case():
    prism = tc.catalog.prism(3, damping=0.5)
    L, phi = prism.bar_lengths[0], tc.catalog.prestressable_twist(3)
    a = 2 * np.pi * np.arange(3) / 3

    def geometry(s):
        r = 0.5 + s * (0.35 - 0.5)
        h = np.sqrt(L ** 2 - (0.25 + r * r - r * np.cos(phi)))
        N = prism.nodes.copy()
        N[3:] = np.column_stack([r * np.cos(a + phi), r * np.sin(a + phi), np.full(3, h)])
        return N
    return "3-prism top ring 0.5 -> 0.35 m", prism, geometry, 5.0, 5.0


def run(case):
    label, structure, geometry, duration, gamma_min = case
    t0 = time.process_time()
    change = tc.shape_change(structure, geometry, duration, gamma_min=gamma_min,
                             allocation="--plain" not in sys.argv)
    t1 = time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = tc.verify_shape_change(change, 2 * duration,
                                        t_eval=np.linspace(0.0, 2 * duration, 401))
    t2 = time.process_time()
    return label, change, report, t1 - t0, t2 - t1, len(caught)


def main():
    results = [run(tbar_case()), run(prism_case())]
    print("Shape change: planned path, tracking in closed loop (nonlinear, rigid bars), "
          + ("without allocation" if "--plain" in sys.argv else "allocated") + "\n")
    head = f"{'':<34}" + "".join(f"{r[0]:>32}" for r in results)
    print(head)
    rows = [
        ("largest node move [m]", lambda c, r: f"{r.move:.4g}"),
        ("duration T [s]", lambda c, r: f"{c.controller.duration:g}"),
        ("gamma_min of the path [N/m]", lambda c, r: f"{c.path.gamma_min:g}"),
        ("planned path residual [N]", lambda c, r: f"{r.path_residual:.2e}"),
        ("slowest closed-loop pole [1/s]",
         lambda c, r: f"{max(float(np.max(p.real)) for p in c.E):.3g}"),
        ("max tracking error [m]", lambda c, r: f"{r.max_tracking_error:.3e}"),
        ("  relative to bar length",
         lambda c, r: f"{r.max_tracking_error / c.path.structures[0].bar_lengths.mean():.2e}"),
        ("final tracking error (2T) [m]", lambda c, r: f"{r.final_tracking_error:.3e}"),
        ("least force density [N/m]", lambda c, r: f"{r.least_force_density:.4g}"),
        ("least tension [N]", lambda c, r: f"{r.least_tension:.4g}"),
        ("slack strings", lambda c, r: str(len(r.slack_time))),
        ("final static residual [N]", lambda c, r: f"{r.final_static_residual:.3e}"),
    ]
    for label, cell in rows:
        print(f"{label:<34}" + "".join(f"{cell(c, r):>32}" for _, c, r, *_ in results))
    print(f"{'CPU: plan + designs, run [s]':<34}"
          + "".join(f"{f'{a:.2f}, {b:.2f}':>32}" for *_, a, b, _ in results))
    print(f"{'simulator warnings':<34}" + "".join(f"{w:>32}" for *_, w in results))
    print("\nTracking error against time [m] (t in units of T)")
    fractions = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.25, 1.5, 2.0)
    print(f"{'t / T':<34}" + "".join(f"{r[0]:>32}" for r in results))
    for f in fractions:
        cells = []
        for _, c, r, *_ in results:
            k = int(np.argmin(np.abs(r.t - f * c.controller.duration)))
            cells.append(f"{r.tracking_error[k]:.3e}")
        print(f"{f:<34g}" + "".join(f"{x:>32}" for x in cells))


if __name__ == "__main__":
    main()
