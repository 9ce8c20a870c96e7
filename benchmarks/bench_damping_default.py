"""Should ``damping=0.02`` be the default of the designs? (issue 32, item 3): the designs with
and without the damping target on five structures, in the nonlinear loop.

Rows per structure: the open loop, ``lqr(model)`` against ``lqr(model, damping=0.02)``, and
(``--hinf``) ``hinfsyn(model)`` against ``hinfsyn(model, damping=0.02)``. Columns: the
output's peak [mm] and its ratio to the open loop, the longest slack time of a commanded
string [s] (and how many), the design's CPU time [s] (the damping target sweeps the effort)
and its verdict's least closed-loop damping ratio (the dampable modes). The MPC is not here:
``bench_defaults.py --prism`` runs it on the 3-prism.

Structures and loads (each structure's benchmark): the T-bar (``equilibrium(gamma_min=10)``,
10 sin t N at its tip along x, outputs nodes 2, 3); the 3-prism of issue 32 (20 N doublet on
node 3 along x, half period 1 s, outputs nodes 3-5); the ball, the 2 x 4-prism tower and the
icosahedron on a face of ``bench_estimator_defaults.py`` (30, 0.5 and 3 sin t N on three
nodes). 10 s each.

Run: PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/bench_damping_default.py
[--cases tbar,prism,ball,tower,icosahedron] [--hinf]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import tenscontrol as tc

from bench_estimator_defaults import cases as sine_cases, sine_load

TARGET = 0.02      # the damping target tried as a default (tc.modes' DEFAULT_DAMPING)
T_FINAL = 10.0     # s


def cases(names):
    """(name, structure, loads, outputs) of the table."""
    out = []
    if "tbar" in names:
        s = tc.equilibrium(tc.catalog.tbar(damping=1.0), gamma_min=10.0).structure
        out.append(("T-bar, 10 sin t N at the tip", s, sine_load(s.n_nodes, 10.0, [(2, 0)]),
                    tc.Selection(nodes=[2, 3], axes="xz")))
    if "prism" in names:
        s = tc.equilibrium(tc.catalog.prism(3, damping=1.0), gamma_min=10.0).structure
        out.append(("3-prism, 20 N doublet", s, tc.doublet(s, tc.Selection(3, "x"), 20.0, 1.0),
                    tc.Selection(nodes=[3, 4, 5])))
    for name, s, entries, amp, payload in sine_cases(names):
        out.append((f"{name}, {amp:g} sin t N", s, sine_load(s.n_nodes, amp, entries),
                    tc.Selection(nodes=[payload])))
    return out


def least_damping(design) -> str:
    """The verdict's least closed-loop damping ratio over the dampable modes."""
    v = design.damping_verdict(TARGET)
    return "-" if np.isnan(v.least_damping) else (f"{v.least_damping:.2g} at "
                                                   f"{v.least_frequency:.4g} rad/s")


def row(label, report, open_peak, cpu, design) -> list:
    c = report.closed
    slack = (f"{max(c.slack_time.values()):.2f} ({len(c.slack_time)})" if c.slack_time
             else "0")
    return [label, f"{1e3 * c.peak:.3f}", f"{c.peak / open_peak:.3f}", slack, f"{cpu:.1f}",
            least_damping(design)]


def run_case(name, s, loads, outputs, hinf: bool) -> None:
    model = tc.linearize(s, outputs=outputs)
    makers = [("lqr(model)", lambda: tc.lqr(model)),
              (f"lqr(model, damping={TARGET:g})", lambda: tc.lqr(model, damping=TARGET))]
    if hinf:
        makers += [("hinfsyn(model)", lambda: tc.hinfsyn(model)),
                   (f"hinfsyn(model, damping={TARGET:g})",
                    lambda: tc.hinfsyn(model, damping=TARGET))]
    rows, open_peak = [], None
    print(f"\n{name}", flush=True)
    for label, make in makers:
        cpu = time.process_time()
        design = make()
        cpu = time.process_time() - cpu
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # slack strings are in the table
            try:
                r = tc.verify(s, design, loads, T_FINAL, outputs=outputs)
            except tc.SimulationError as error:
                rows.append([label, f"failed at t = {error.time:.2f} s", "", "", f"{cpu:.1f}",
                             least_damping(design)])
                continue
        if open_peak is None:
            open_peak = r.open.peak
            rows.append(["open loop", f"{1e3 * open_peak:.3f}", "1.000", "", "", ""])
        rows.append(row(label, r, open_peak, cpu, design))
    head = ["design", "peak [mm]", "/ open", "slack s (n)", "design CPU [s]", "least zeta"]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    for line in [head, ["-" * w for w in widths]] + rows:
        print("  ".join(str(x).rjust(w) for x, w in zip(line, widths)), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="tbar,prism,ball,tower,icosahedron")
    parser.add_argument("--hinf", action="store_true", help="the hinfsyn rows too")
    args = parser.parse_args()
    for case in cases(set(args.cases.split(","))):
        run_case(*case, hinf=args.hinf)


if __name__ == "__main__":
    main()
