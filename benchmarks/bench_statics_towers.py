"""Issue 33: static_equilibrium under gravity on prism towers of 30 .. 768 bars.

Two families, each prestressed by ``tc.equilibrium`` without gravity, then solved under
gravity at those rest lengths:

- steel: ``prism_tower(k, string_material="steel", string_radius=0.003, bar_radius=0.005)``
  prestressed at gamma_min = 200 N/m;
- nylon: the catalog's ``prism_tower(k)`` prestressed at gamma_min = 20 N/m.

k = 10, 32, 64, 128, 256 stages (3 bars a stage: 30 .. 768 bars). Each case runs in its own
process (a fresh heap, and the CPU cap cannot leave a half-finished solve behind) with a CPU
limit (--limit, default 120 s): the table always ends. The prestress is not timed; the CPU
column is static_equilibrium's alone (time.process_time in the child), the minimum over
--repeat runs (default 3), each in a process of its own: the machine's load only ever adds
CPU time (cache and memory-bus contention from other processes), so the minimum is the
figure least disturbed by it; the spread (max/min) is printed beside it.

The outcome: "solved" with the relative residual of the returned state recomputed here from
the member forces (:func:`independent_residual`, not the solver's own figure), or "buckles"
with the load fraction the StaticsError names, or what else happened. The growth exponent of the
CPU over 96 .. 768 bars (the cases that answered) is printed twice: the log-log slope between
the two endpoints, and the least-squares slope of log CPU on log bars over every size in
between (less sensitive to one noisy endpoint).

Usage: python benchmarks/bench_statics_towers.py [--limit S] [--stages 10,32,...]
       [--kinds steel,nylon] [--repeat N]
"""

import json
import re
import subprocess
import sys
import time

import numpy as np

G = (0.0, 0.0, -9.806)
STAGES = (10, 32, 64, 128, 256)


def tower(kind, stages):
    """The prestressed tower under gravity (see the module docstring)."""
    import tenscontrol as tc
    if kind == "steel":
        s = tc.catalog.prism_tower(stages, string_material="steel", string_radius=0.003,
                                   bar_radius=0.005)
        gamma_min = 200.0
    else:
        s = tc.catalog.prism_tower(stages)
        gamma_min = 20.0
    return tc.equilibrium(s, gamma_min=gamma_min).structure.with_gravity(G)


def independent_residual(structure, result):
    """Max |free-coordinate imbalance| [N] of the returned state relative to the weight: the
    member forces recomputed from the returned nodes, the string law k (1 - l0/l) (slack at
    l <= l0) and the returned bar force densities, with gravity as half of each bar's weight at
    each end plus point masses (strings are massless); no solver code is used."""
    N = result.q.reshape(-1, 3)
    F = np.zeros_like(N)
    s = structure
    p = s.string_nodes
    d = N[p[:, 1]] - N[p[:, 0]]
    l = np.linalg.norm(d, axis=1)
    gamma = np.where(l > s.string_rest_lengths, s.string_stiffness * (1 - s.string_rest_lengths / l),
                     0.0)
    np.add.at(F, p[:, 0], gamma[:, None] * d)
    np.add.at(F, p[:, 1], -gamma[:, None] * d)
    b = s.bar_nodes
    db = N[b[:, 1]] - N[b[:, 0]]
    psi = result.bar_force_densities
    np.add.at(F, b[:, 0], psi[:, None] * db)
    np.add.at(F, b[:, 1], -psi[:, None] * db)
    mass = np.zeros(s.n_nodes)
    np.add.at(mass, b[:, 0], 0.5 * s.bar_masses)
    np.add.at(mass, b[:, 1], 0.5 * s.bar_masses)
    for pm in s.point_masses:
        mass[pm.node] += pm.mass
    F += mass[:, None] * np.asarray(s.gravity)[None, :]
    free = np.asarray(s.free_coordinates)
    return float(np.abs(F.reshape(-1)[free]).max()) / (9.806 * s.total_mass)


def run_case(kind, stages):
    """One case in this process: a dict for the table (printed as JSON by --case)."""
    import warnings
    import tenscontrol as tc
    s = tower(kind, stages)
    row = {"kind": kind, "bars": s.n_bars}
    t0 = time.process_time()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = tc.static_equilibrium(s)
        row["cpu"] = time.process_time() - t0
        row["outcome"] = "solved" if r.stable else "unstable (warned)"
        row["residual"] = independent_residual(s, r)
        row["its"] = r.history.iterations
        row["route"] = getattr(r, "route", "-")
        row["fallbacks"] = _fallbacks(r)
    except tc.StaticsError as error:
        row["cpu"] = time.process_time() - t0
        m = re.search(r"near ([\d.e-]+)", str(error))
        row["outcome"] = (f"buckles at {float(m.group(1)):.4g}" if m and "loses stability"
                          in str(error) else f"{type(error).__name__}: {str(error)[:70]}")
        h = error.history
        row["its"] = 0 if h is None else h.iterations
        row["route"] = getattr(error, "route", "-")
        row["fallbacks"] = getattr(error, "fallbacks", "-")
        row["residual"] = None
    return row


def _fallbacks(r):
    counts = getattr(r, "fallback_counts", None)
    if counts is None:  # before issue 33's result fields
        counts = {"dense_kkt": r.dense_kkt_solves, "dense_eigen": r.dense_eigensolves,
                  "dense_bar": r.dense_bar_solves}
    return ",".join(f"{k}={v}" for k, v in dict(counts).items() if v) or "none"


def main(args):
    limit = float(args[args.index("--limit") + 1]) if "--limit" in args else 120.0
    stages = ([int(v) for v in args[args.index("--stages") + 1].split(",")]
              if "--stages" in args else STAGES)
    kinds = (args[args.index("--kinds") + 1].split(",") if "--kinds" in args
             else ["steel", "nylon"])
    repeat = int(args[args.index("--repeat") + 1]) if "--repeat" in args else 3
    if repeat < 1:
        raise SystemExit(f"--repeat must be at least 1, got {repeat}")
    print(f"static_equilibrium under gravity, prism towers (CPU limit {limit:g} s a case, "
          f"CPU the minimum of {repeat} runs)")
    print(f"{'tower':<7}{'bars':>5}  {'outcome':<22}{'residual/W':>11}{'its':>5}{'CPU [s]':>9}"
          f"{'spread':>7}  {'route':<26}fallbacks")
    for kind in kinds:
        cpu = {}
        for k in stages:
            rows = [_run_child(kind, k, limit) for _ in range(repeat)]
            if any(row is None for row in rows):
                print(f"{kind:<7}{3 * k:>5}  {'no answer':<22}{'':>11}{'':>5}"
                      f"{'>' + format(limit, 'g'):>9}  (killed at the CPU limit or crashed)")
                continue
            if len({(r["outcome"], r["its"]) for r in rows}) > 1:
                print(f"{kind:<7}{3 * k:>5}  runs disagree: "
                      f"{[(r['outcome'], r['its']) for r in rows]}")
                continue
            times = [r["cpu"] for r in rows]
            row = rows[0]
            res = "" if row["residual"] is None else f"{row['residual']:.1e}"
            print(f"{kind:<7}{row['bars']:>5}  {row['outcome'][:22]:<22}{res:>11}{row['its']:>5}"
                  f"{min(times):>9.2f}{max(times) / min(times):>7.2f}  "
                  f"{str(row['route'])[:26]:<26}{row['fallbacks']}")
            if row["outcome"] == "solved" or row["outcome"].startswith("buckles"):
                cpu[row["bars"]] = min(times)
        print(_exponents(kind, cpu))


def growth_exponents(cpu):
    """(endpoint slope, least-squares slope) of log CPU on log bars over the sizes from 96
    bars up in `cpu` ({bars: seconds}), or None with fewer than two such sizes."""
    bars = sorted(b for b in cpu if b >= 96)
    if len(bars) < 2 or bars[0] != 96:
        return None
    x, y = np.log(bars), np.log([cpu[b] for b in bars])
    endpoints = (y[-1] - y[0]) / (x[-1] - x[0])
    return float(endpoints), float(np.polyfit(x, y, 1)[0])


def _exponents(kind, cpu):
    slopes = growth_exponents(cpu)
    if slopes is None:
        return f"{kind}: no growth exponent (96 bars and a larger size did not both answer)"
    top = max(cpu)
    return (f"{kind}: CPU growth exponent 96 -> {top} bars: endpoints {slopes[0]:.2f}, "
            f"least squares over {len([b for b in cpu if b >= 96])} sizes {slopes[1]:.2f}")


def _run_child(kind, stages, limit):
    """One case in a fresh process: its row (a dict), or None if it was killed or crashed."""
    cmd = [sys.executable, __file__, "--case", kind, str(stages), str(limit)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    line = out.stdout.strip().splitlines()[-1:] if out.stdout.strip() else []
    if out.returncode != 0 or not line:
        return None
    return json.loads(line[0])


def _child(kind, stages, limit):
    import resource
    used = resource.getrusage(resource.RUSAGE_SELF)
    start = used.ru_utime + used.ru_stime
    # the cap counts the tower's prestress too; it is small next to the solve
    resource.setrlimit(resource.RLIMIT_CPU, (int(start + limit) + 1, int(start + limit) + 2))
    print(json.dumps(run_case(kind, stages)))


if __name__ == "__main__":
    if "--case" in sys.argv:
        i = sys.argv.index("--case")
        _child(sys.argv[i + 1], int(sys.argv[i + 2]), float(sys.argv[i + 3]))
    else:
        main(sys.argv[1:])
