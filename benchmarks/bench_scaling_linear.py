"""How the linear tools grow with the structure: prism towers of 3 to 192 bars and the ball.

Usage: ``python benchmarks/bench_scaling_linear.py [--max-bars N] [--threads] [--skip-full]``.

Table 1 prints, per structure, the CPU seconds (time.process_time, one run after a warm-up
on the smallest tower) of ``linearize``, ``minimal_realization`` (numerically minimal, and at
the design order), ``lqr`` (both orders), ``hinfsyn`` (top-node disturbance, performance
output and measurement; full order up to 48 bars, design order above) with its gamma and the
independently computed closed-loop norms, and ``hinf_norm`` of the LQR closed loop; then the
growth exponents d log(CPU) / d log(bars) between neighbouring towers. Towers:
``prism_tower(stages, damping=1)`` at ``equilibrium(gamma_min=10)``; the ball:
``catalog.ball(damping=1)`` at ``gamma_min=40`` with the README's H-inf problem.

``--max-bars 0`` skips table 1. ``--threads`` prints table 2: the ball's ``hinfsyn`` (48 states) and ``lqr``, run as two
copies at once (a loaded machine), with OpenBLAS's default threads (thread policy off) and
with tenscontrol's policy (single-threaded below ``SMALL_ORDER`` states); wall and CPU
seconds per copy and their ratio. The ball stands for the icosahedron: it is the 6-bar
expanded octahedron (icosahedral nodes) with a payload node. Table 3 (also with ``--threads``):
eigvals, schur and a CARE of order 96..800, one thread against the default, one process: where
the policy's threshold comes from. Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import tenscontrol as tc
from tenscontrol.linear import threads
from tenscontrol.model import catalog

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_simulate import machine_info, print_table  # noqa: E402

STAGES = (1, 4, 16, 32, 64)                  # 3, 12, 48, 96, 192 bars
#: Design order of the truncated model per tower (marginal stage modes + a stable part):
#: 48 bars keep 32 marginal states, 96 bars 68, 192 bars 132.
DESIGN_ORDER = {16: 80, 32: 160, 64: 200}
FULL_HINF_MAX_STAGES = 16                    # full-order hinfsyn above this is minutes
BALL_HINF = dict(disturbances=tc.Selection(3, "x") + tc.Selection(6, "y") + tc.Selection(7, "z"),
                 d_scale=30.0, outputs=tc.Selection(nodes=[12]), y_scale=5e-3, rho=1.0,
                 eps=1e-3, backoff=1.2)


def cpu(fun):
    t0 = time.process_time()
    out = fun()
    return out, time.process_time() - t0


def tower(stages):
    s = tc.equilibrium(catalog.prism_tower(stages, damping=1.0), gamma_min=10.0).structure
    return s


def ball():
    return tc.equilibrium(catalog.ball(damping=1.0), gamma_min=40.0).structure


def hinf_kwargs(s, name):
    if name == "ball":
        free = [i for i in range(s.n_nodes) if not s.fixed[i].all()]
        return dict(measurements=tc.Selection(nodes=free), **BALL_HINF)
    top = tc.Selection(nodes=[s.n_nodes - 1])
    return dict(disturbances=top, outputs=top, measurements=top)


def measure(s, name, stages, skip_full):
    """One row of table 1 (CPU seconds and figures)."""
    row = {"case": name, "bars": s.n_bars}
    m, row["linearize"] = cpu(lambda: tc.linearize(s, kind="passive"))
    order = DESIGN_ORDER.get(stages)
    if not (skip_full and order):
        mr, row["minreal"] = cpu(lambda: tc.minimal_realization(m))
        row["states"] = mr.order
        d, row["lqr"] = cpu(lambda: tc.lqr(m))
        row["lqr_cl_norm"], row["hinf_norm"] = cpu(lambda: tc.hinf_norm(d.closed_loop))
    if order:
        mr, row["minreal_r"] = cpu(lambda: tc.minimal_realization(m, order=order))
        row["order"], row["marginal"] = order, mr.n_marginal
        d, row["lqr_r"] = cpu(lambda: tc.lqr(m, order=order))
    kw = hinf_kwargs(s, name)
    if order is None or stages <= 2 * FULL_HINF_MAX_STAGES:
        if order is not None:
            kw["order"] = order
        h, row["hinfsyn"] = cpu(lambda: tc.hinfsyn(m, **kw))
        row["gamma"], row["cl_norm"] = h.gamma, h.closed_loop_norm
        row["full_norm"] = h.full_closed_loop_norm
    return row


def fmt(x, spec=".3g"):
    return "-" if x is None else format(x, spec) if isinstance(x, float) else str(x)


def table_scaling(max_bars, skip_full) -> None:
    tc.lqr(tc.linearize(tower(1), kind="passive"))          # imports and first-call work
    rows = []
    for stages in STAGES:
        if 3 * stages > max_bars:
            break
        rows.append(measure(tower(stages), f"prism_tower({stages})", stages, skip_full))
        print(f"  ... {rows[-1]['bars']} bars done", file=sys.stderr, flush=True)
    rows.append(measure(ball(), "ball", None, skip_full))
    keys = ["linearize", "minreal", "lqr", "hinf_norm", "minreal_r", "lqr_r", "hinfsyn"]
    print("\n1. CPU seconds (time.process_time, one run). minreal/lqr: numerically minimal "
          "order (states), hinf_norm: of that LQR's closed loop (d -> [y; u]) and its "
          "value; _r: at the design order r (marginal states kept exactly); hinfsyn: "
          "top-node disturbance, output and measurement (ball: README problem), at order r "
          "where given; gamma, its loop's norm, and the norm on the full elastic model")
    head = ["case", "bars", "states", "r (marg.)", "linearize", "minreal", "lqr", "hinf_norm",
            "lqr ||CL||",
            "minreal_r", "lqr_r", "lin+mr_r+lqr_r", "hinfsyn", "gamma", "||CL||", "||CL|| full"]
    table = []
    for r in rows:
        total = (r["linearize"] + r["minreal_r"] + r["lqr_r"]) if "lqr_r" in r else None
        table.append([r["case"], r["bars"], fmt(r.get("states")),
                      f"{r['order']} ({r['marginal']})" if "order" in r else "-"]
                     + [fmt(r.get(k)) for k in keys[:4]] + [fmt(r.get("lqr_cl_norm"), ".4g")]
                     + [fmt(r.get(k)) for k in keys[4:6]] + [fmt(total), fmt(r.get("hinfsyn")),
                     fmt(r.get("gamma"), ".5g"), fmt(r.get("cl_norm"), ".5g"),
                     fmt(r.get("full_norm"), ".5g")])
    print_table(head, table)
    towers = [r for r in rows if r["case"] != "ball"]
    print("\n   growth exponent d log CPU / d log bars between neighbouring towers")
    grow = []
    for a, b in zip(towers, towers[1:]):
        ratio = np.log(b["bars"] / a["bars"])
        grow.append([f"{a['bars']} -> {b['bars']}"] + [
            fmt(np.log(b[k] / a[k]) / ratio, ".2f") if a.get(k) and b.get(k) else "-"
            for k in keys])
    print_table(["bars"] + keys, grow)


CHILD = {
    "hinfsyn": lambda s: tc.hinfsyn(tc.linearize(s, kind="passive"), **hinf_kwargs(s, "ball")),
    "lqr": lambda s: tc.lqr(tc.linearize(s, kind="passive")),
}


def child(what: str, policy: str, repeat: int) -> None:
    """Run one case `repeat` times in this process; print JSON {wall, cpu} per run (min)."""
    if policy == "off":
        threads.SMALL_ORDER = 0              # OpenBLAS's default threads everywhere
    s = ball()
    CHILD[what](s)                           # warm-up: imports, kernels
    walls, cpus = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        CHILD[what](s)
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    print(json.dumps({"wall": min(walls), "cpu": min(cpus)}))


def two_copies(what: str, policy: str, repeat: int) -> list:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    cmd = [sys.executable, __file__, "--child", what, "--policy", policy, "--repeat",
           str(repeat)]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    return [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]


def table_threads(repeat: int) -> None:
    print(f"\n2. BLAS threads on a loaded machine: two copies at once, OPENBLAS_NUM_THREADS "
          f"unset; 'default' = policy off (OpenBLAS threads), 'policy' = tenscontrol's "
          f"(one thread below {threads.SMALL_ORDER} states). Seconds per call, min of "
          f"{repeat}, both copies")
    rows = []
    for what in CHILD:
        res = {pol: two_copies(what, pol, repeat) for pol in ("off", "on")}
        off = [r["wall"] for r in res["off"]]
        on = [r["wall"] for r in res["on"]]
        rows.append([f"ball {what}",
                     " / ".join(f"{r['wall']:.3g} ({r['cpu']:.3g})" for r in res["off"]),
                     " / ".join(f"{r['wall']:.3g} ({r['cpu']:.3g})" for r in res["on"]),
                     f"{np.mean(off) / np.mean(on):.1f}"])
    print_table(["case", "default: wall (cpu) [s]", "policy: wall (cpu) [s]",
                 "wall ratio"], rows)


def table_sizes(repeat: int) -> None:
    """Where two threads start to pay: dense calls of growing order, one copy, wall seconds."""
    import scipy.linalg
    import threadpoolctl
    print(f"\n3. One process, wall seconds (min of {repeat}) of dense calls on a random stable "
          "matrix of order n, one BLAS thread against the default; the policy's threshold "
          f"SMALL_ORDER = {threads.SMALL_ORDER}")
    rng = np.random.default_rng(0)
    rows = []
    for n in (96, 200, 400, 800):
        A = rng.standard_normal((n, n)) - 2 * np.sqrt(n) * np.eye(n)
        B = rng.standard_normal((n, 4))
        calls = {"eigvals": lambda: np.linalg.eigvals(A),
                 "schur": lambda: scipy.linalg.schur(A),
                 "care": lambda: scipy.linalg.solve_continuous_are(A, B, np.eye(n), np.eye(4))}
        for name, f in calls.items():
            t = {}
            for label, limit in (("1", 1), ("default", None)):
                with threadpoolctl.threadpool_limits(limits=limit, user_api="blas"):
                    best = np.inf
                    for _ in range(repeat):
                        w0 = time.perf_counter()
                        f()
                        best = min(best, time.perf_counter() - w0)
                t[label] = best
            rows.append([name, n, f"{t['1']:.4g}", f"{t['default']:.4g}",
                         f"{t['default'] / t['1']:.2f}"])
    print_table(["call", "n", "1 thread [s]", "default [s]", "default / 1"], rows)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-bars", type=int, default=192)
    ap.add_argument("--threads", action="store_true", help="also print table 2")
    ap.add_argument("--skip-full", action="store_true",
                    help="skip the full-order minimal_realization/lqr where a design order is set")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", choices=sorted(CHILD), help=argparse.SUPPRESS)
    ap.add_argument("--policy", choices=("on", "off"), default="on", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, args.policy, args.repeat)
        return
    for line in machine_info():
        print(line)
    print("OPENBLAS_NUM_THREADS =", os.environ.get("OPENBLAS_NUM_THREADS", "(unset)"),
          " thread policy SMALL_ORDER =", threads.SMALL_ORDER)
    if args.max_bars > 0:
        table_scaling(args.max_bars, args.skip_full)
    if args.threads:
        table_threads(args.repeat)
        table_sizes(args.repeat)


if __name__ == "__main__":
    main()
