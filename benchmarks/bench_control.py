"""Measurements of the control layer: LQR and H-infinity designs checked in closed loop.

Usage: ``python benchmarks/bench_control.py [--repeat N] [--skip-python-control] [--quick]``.

Prints machine info, then five tables: (1) the T-bar LQR under the 10 N doublet on node 2 along
z, open against closed loop on the corrected nonlinear model and the linear prediction at
small and large amplitude; (2) the doublet amplitude at which a string first goes slack in
closed loop (bisection); (3) the ball's H-inf output feedback from node positions under the
30 sin t loads; (4) H-inf synthesis time on the ball and on the 30-bar prism tower, beside
python-control's ``hinfsyn`` on the same generalized plant (skipped with
``--skip-python-control``; it takes minutes on the tower); (5) soft against metallic T-bars in
closed loop, the same LQR procedure on compressible bars. ``--quick`` skips (4)'s
python-control column and (5). Nothing asserts on time; benchmarks/README.md explains columns.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import control as ct

import tenscontrol as tc
from tenscontrol.model import catalog

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_simulate import machine_info, print_table  # noqa: E402

TBAR_OUTPUTS = tc.Selection(nodes=[2, 3], axes="xz")
TBAR_EFFORT = 1e-2          # the demo's and examples/tbar_lqr.py's LQR weight
SYNTHESIS_TARGET = 30.0     # s, hinfsyn on the ball and the tower (issue 5)
BALL_HINF = dict(disturbances=tc.Selection(3, "x") + tc.Selection(6, "y") + tc.Selection(7, "z"),
                 d_scale=30.0, outputs=tc.Selection(nodes=[12]), y_scale=5e-3, rho=1.0,
                 eps=1e-3)                                  # examples/ball_hinf.py
VERIFY_TOL = dict(rtol=1e-9, atol=1e-9)     # verify's 0.3 default, which these figures used


def tbar():
    return tc.equilibrium(catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure


def tbar_design(s):
    model = tc.linearize(s, kind="passive", outputs=TBAR_OUTPUTS)
    return tc.lqr(model, effort=TBAR_EFFORT)


def tbar_report(s, design, amplitude, n_samples=1001):
    return tc.verify(s, design.controller, tc.doublet(s, tc.Selection(2, "z"), amplitude), 10.0,
                     outputs=TBAR_OUTPUTS, t_eval=np.linspace(0.0, 10.0, n_samples),
                     **VERIFY_TOL)


def table_tbar(s, design) -> None:
    print("\n1. T-bar (stedy, c = 1, prestress gamma >= 10 N/m), LQR effort "
          f"{TBAR_EFFORT:g} on the passive model, outputs x, z of nodes 2, 3; doublet on z2, "
          "half period 1 s, 10 s, rtol = atol = 1e-9, energy correction")
    print(f"   closed-loop poles [1/s]: {np.array2string(design.E, precision=4)}")
    rows = []
    for amplitude in (0.1, 1.0, 10.0):
        r = tbar_report(s, design, amplitude)
        rows.append([f"{amplitude:g}", f"{r.open.peak:.4e}", f"{r.closed.peak:.4e}",
                     f"{100 * r.peak_reduction:.1f}", f"{r.linear.peak:.4e}",
                     f"{100 * r.linear_error:.3f}", f"{r.closed.effort_peak:.4g}",
                     ", ".join(map(str, r.closed.slack_time)) or "none",
                     f"{r.closed.bar_violation:.1e}", f"{r.closed.energy_violation:.1e}"])
    print_table(["A [N]", "open peak [m]", "closed peak [m]", "reduction [%]",
                 "linear peak [m]", "lin err [%]", "max|u| [N/m]", "slack", "bar viol [m]",
                 "E viol [J]"], rows)


def slack_amplitude(s, design, lo=10.0, hi=None, rel=0.01):
    """Smallest doublet amplitude [N] at which a commanded string goes slack (bisection)."""
    def slack(a):
        return bool(tbar_report(s, design, a, n_samples=2001).closed.slack_time)
    hi = hi or 2 * lo
    while not slack(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > rel * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if slack(mid) else (mid, hi)
    return lo, hi


def table_slack(s, design) -> None:
    lo, hi = slack_amplitude(s, design)
    r = tbar_report(s, design, hi, n_samples=2001)
    first = r.closed_loop.control.first_slack()
    print("\n2. Doublet amplitude at which strings start to go slack in closed loop "
          "(bisection to 1 %, output grid 5 ms)")
    print_table(["no slack at [N]", "slack at [N]", "strings (first slack [s])", "slack time [s]",
                 "closed peak [m]", "lin err [%]"],
                [[f"{lo:.4g}", f"{hi:.4g}",
                  ", ".join(f"{int(k)} ({t:.3g})" for k, t in zip(r.closed_loop.control.strings,
                                                                 first) if np.isfinite(t)),
                  ", ".join(f"{v:.3g}" for v in r.closed.slack_time.values()),
                  f"{r.closed.peak:.4e}", f"{100 * r.linear_error:.2f}"]])


def ball_model(gamma_min=40.0):
    s = tc.equilibrium(catalog.ball(damping=1.0), gamma_min=gamma_min).structure
    return s, tc.linearize(s, kind="passive")


def free_nodes(s):
    return [i for i in range(s.n_nodes) if not s.fixed[i].all()]


def timed(fun, repeat):
    best, out = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fun()
        best = min(best, time.perf_counter() - start)
    return out, best


def table_ball(repeat) -> None:
    s, model = ball_model()
    meas = tc.Selection(nodes=free_nodes(s))
    print("\n3. Ball (c = 1, prestress gamma >= 40 N/m under gravity), H-inf output feedback "
          "from all free node positions to the 32 string force densities; z = [payload / 5 mm;"
          " u / gamma*], w = [loads / 30 N; 1 mm noise]; loads 30 sin t on x3, y6, z7, 10 s")
    rows = []
    for backoff in (1.0, 1.2):
        design, t = timed(lambda: tc.hinfsyn(model, measurements=meas, backoff=backoff,
                                             **BALL_HINF), repeat)
        fast = np.abs(np.linalg.eigvals(design.controller.AK)).max()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = tc.verify(s, design.controller, catalog.ball_load(30.0), 10.0,
                          outputs=tc.Selection(nodes=[12]), **VERIFY_TOL)
        rows.append([f"{backoff:g}", f"{design.gamma:.6g}", f"{design.gamma_lower:.6g}",
                     f"{design.closed_loop_norm:.6g}",
                     f"{100 * (design.closed_loop_norm / design.gamma - 1):+.2f}",
                     f"{t:.2f}", f"{fast:.3g}", f"{r.open.peak:.4e}", f"{r.closed.peak:.4e}",
                     f"{100 * r.peak_reduction:.1f}", f"{100 * r.linear_error:.2f}",
                     f"{r.closed.effort_peak:.4g}",
                     ", ".join(map(str, r.closed.slack_time)) or "none",
                     f"{r.closed_loop.stats.wall_time:.1f}"])
    print_table(["backoff", "gamma", "infeasible below", "||CL||inf", "vs gamma [%]",
                 "hinfsyn [s]", "max|eig AK|", "open peak [m]", "closed peak [m]",
                 "reduction [%]", "lin err [%]", "max|u| [N/m]", "slack", "CL sim [s]"], rows)


def tower_model():
    s = tc.equilibrium(catalog.prism_tower(10, damping=1.0), gamma_min=10.0).structure
    return s, tc.linearize(s, kind="passive")


def table_synthesis(repeat, with_python_control) -> None:
    print(f"\n4. H-inf output-feedback synthesis time (whole hinfsyn call, min of {repeat}); "
          f"target < {SYNTHESIS_TARGET:g} s; python-control's hinfsyn on the same generalized "
          "plant. Ball as table 3 (backoff 1); tower: prestress gamma >= 10 N/m, c = 1, 1 N "
          "forces on the top node to its deflection, all free node positions measured, "
          "rho 0.1, eps 0.01")
    rows = []
    s, model = ball_model()
    tower, tmodel = tower_model()
    top = tc.Selection(nodes=[tower.n_nodes - 1])
    cases = [("ball, payload", model,
              dict(measurements=tc.Selection(nodes=free_nodes(s)), **BALL_HINF)),
             ("prism_tower(10), top node", tmodel,
              dict(disturbances=top, d_scale=1.0, outputs=top,
                   measurements=tc.Selection(nodes=free_nodes(tower))))]
    for name, m, kw in cases:
        design, t = timed(lambda: tc.hinfsyn(m, **kw), repeat)
        _, t_lqr = timed(lambda: tc.lqr(m), repeat)
        P = design.plant
        nmeas, ncon = design.controller.measurement.n_signals, design.controller.strings.size
        row = [name, P.nstates, f"{ncon} / {nmeas}", f"{design.gamma:.5g}",
               f"{design.closed_loop_norm:.5g}", f"{t:.2f}", f"{t_lqr:.3f}"]
        if with_python_control:
            start = time.perf_counter()
            try:
                K, CL, gam, _ = ct.hinfsyn(P, nmeas, ncon)
                elapsed = time.perf_counter() - start
                stable = np.linalg.eigvals(CL.A).real.max() < 0
                norm = tc.hinf_norm(CL) if stable else np.inf
                row += [f"{elapsed:.1f}", f"{float(gam):.5g}", f"{norm:.5g}"]
            except Exception as exc:        # report, do not abort the benchmark
                row += [f"failed ({type(exc).__name__})", "-", "-"]
        else:
            row += ["skipped", "-", "-"]
        rows.append(row)
    print_table(["case", "states", "u / y_m", "gamma", "||CL||inf", "ours [s]", "lqr [s]",
                 "ct.hinfsyn [s]", "its gamma", "its ||CL||inf"], rows)


def table_materials() -> None:
    s = tc.equilibrium(catalog.tbar("stedy", damping=1.0), gamma_min=10.0,
                       bars="compressible").structure
    start = time.perf_counter()
    table = tc.compare_closed_loop(s, ("hdpe", "aluminium"), outputs=TBAR_OUTPUTS,
                                   effort=TBAR_EFFORT)
    print(f"\n5. Soft against metallic bars in closed loop ({time.perf_counter() - start:.1f} s;"
          " compressible bars, rtol = atol = 1e-8)")
    print(table)
    rows = [[r.material, f"{r.peak_ratio:.4g}", f"{r.h2:.4g}", f"{r.energy_ratio:.4g}",
             f"{r.hinf:.4g}", f"{r.open_peak:.4g}", f"{r.closed_peak:.4g}"] for r in table.rows]
    print()
    print_table(["material", "peak/|u|2", "H2", "|y|2/|u|2", "H-inf", "open peak [m]",
                 "closed peak [m]"], rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-python-control", action="store_true")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    print("tenscontrol control benchmark")
    for line in machine_info():
        print("  " + line)
    s = tbar()
    design = tbar_design(s)
    table_tbar(s, design)
    table_slack(s, design)
    table_ball(1 if args.quick else args.repeat)
    table_synthesis(1 if args.quick else args.repeat,
                    not (args.quick or args.skip_python_control))
    if not args.quick:
        table_materials()


if __name__ == "__main__":
    main()
