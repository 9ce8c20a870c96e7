"""Wall-time benchmark of tenscontrol.simulate on the paper's structures.

Usage::

    python benchmarks/bench_simulate.py [--repeat N] [--quick] [--cold-compile]

--repeat N       timed warm repeats per case (default 5; 2 with --quick); each case is run
                 once untimed first, so the numba kernels are compiled or loaded from cache.
--quick          T-bar cases only, and a single cold-start subprocess.
--cold-compile   also time the first simulate() in a fresh process whose numba cache is a
                 fresh empty directory (NUMBA_CACHE_DIR), i.e. the one-time compile cost.

Prints machine info, then one row per case: wall time of the whole simulate() call (median
and min of the warm repeats), its CPU time (time.process_time, min of the warm repeats: the
figure to compare on a busy machine), the solver's work counters, the largest constraint and
energy violations over the trajectory, and the reference MATLAB code's figure under GNU Octave
7.3, measured on a 2-core Linux machine (benchmarks/README.md), where there is one. Rows "the same, Python step loop"
rerun the case above with simulate()'s Python step loop (rigid_loop.ENABLED = False), where
the compiled loop of tenscontrol.simulation.rigid_loop runs by default. Then the cold start of
the headline case in fresh subprocesses. Timings are informative only: nothing here asserts
on them.
See benchmarks/README.md for the meaning of each column.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import tenscontrol as tc
from tenscontrol.simulation import rigid_loop

try:
    from tenscontrol.model import catalog
except ImportError:  # pragma: no cover - the catalog is written separately
    catalog = None

HEADLINE_TARGET = 0.1  # s, the goal for the headline case (informative, not asserted)

# Reference code STEDY under GNU Octave 7.3, measured on a 2-core Linux machine (simulation call
# only, 10 s simulated): (low, median or None, high) [s], steps
PEER = {
    "tbar-c1-energy-1e-10": ((8.45, 8.9, 11.0), 979),
    "tbar-c1-geometric-1e-10": ((6.5, None, 7.2), 1061),
    "tbar-c1-none-1e-10": ((7.6, None, 10.8), 979),
    "tbar-c1-energy-1e-8": ((4.1, None, 5.6), 390),
    "tbar-c1-energy-1e-6": ((1.8, None, 2.3), 156),
    "tbar-stedy-c0": ((9.1, None, 12.6), 985),
    "tbar-paper-c0": ((8.2, None, 13.6), 1088),
}


def cases(quick):
    """(key, label, structure factory, t_final, simulate kwargs) of every case to run."""
    if catalog is None:
        sys.exit("tenscontrol.model.catalog is not available yet; nothing to benchmark")
    stedy1 = lambda: catalog.tbar("stedy", damping=1.0)  # noqa: E731
    out = [("tbar-c1-energy-1e-10", "T-bar stedy c=1 energy 1e-10", stedy1, 10.0, {}),
           ("tbar-c1-energy-1e-10-python", "  the same, Python step loop", stedy1, 10.0, {})]
    for corr in ("geometric", "none"):
        out.append((f"tbar-c1-{corr}-1e-10", f"T-bar stedy c=1 {corr} 1e-10", stedy1, 10.0,
                    {"correction": corr}))
    for tol in (1e-8, 1e-6):
        out.append((f"tbar-c1-energy-{tol:.0e}".replace("e-0", "e-"),
                     f"T-bar stedy c=1 energy {tol:.0e}".replace("e-0", "e-"), stedy1, 10.0,
                     {"rtol": tol, "atol": tol}))
    for variant in ("stedy", "paper"):
        out.append((f"tbar-{variant}-c0", f"T-bar {variant} c=0 energy 1e-10",
                    lambda v=variant: catalog.tbar(v, damping=0.0), 10.0, {}))
    if quick:
        return out
    out.append(("arm", "arm 0.8 + arm_load, 1 s", lambda: catalog.arm(rest_fraction=0.8), 1.0,
                {"loads": catalog.arm_load()}))
    out.append(("ball", "ball 0.9 + ball_load, 1 s", lambda: catalog.ball(rest_fraction=0.9),
                1.0, {"loads": catalog.ball_load()}))
    if hasattr(catalog, "prism_tower"):
        s = catalog.prism_tower(10)
        out.append(("tower", f"prism_tower(10) {s.n_bars} bars, 1 s",
                    lambda: catalog.prism_tower(10), 1.0, {}))
        out.append(("tower-python", "  the same, Python step loop",
                    lambda: catalog.prism_tower(10), 1.0, {}))
    return out


def machine_info():
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import numba
    import scipy
    nproc = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return [f"CPU: {cpu}  (nproc {nproc})",
            f"python {platform.python_version()}  numpy {np.__version__}  scipy "
            f"{scipy.__version__}  numba {numba.__version__}  tenscontrol {tc.__version__}",
            f"platform: {platform.platform()}"]


def run_case(factory, t_final, kwargs, repeat, python_loop=False):
    """Wall and CPU times of `repeat` warm runs, and the last trajectory; `python_loop` forces
    simulate()'s Python step loop where the compiled one would run."""
    rigid_loop.ENABLED = not python_loop
    try:
        return _timed_runs(factory, t_final, kwargs, repeat)
    finally:
        rigid_loop.ENABLED = True


def _timed_runs(factory, t_final, kwargs, repeat):
    structure = factory()
    tc.simulate(structure, t_final, **kwargs)  # warm-up: compile or load the numba cache
    times, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        traj = tc.simulate(structure, t_final, **kwargs)
        cpu.append(time.process_time() - c0)
        times.append(time.perf_counter() - t0)
    return times, cpu, traj


def fmt_peer(key, median):
    if key not in PEER:
        return "-", "-", "-"
    (lo, mid, hi), steps = PEER[key]
    s = f"{mid:.1f} ({lo:g}-{hi:g})" if mid is not None else f"{lo:g}-{hi:g}"
    ratio = f"{mid / median:.0f}x" if mid is not None else f"{lo / median:.0f}-{hi / median:.0f}x"
    return s, str(steps), ratio


def print_table(header, rows, right_from=1):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    def line(r):
        return "  ".join(str(c).ljust(w) if i < right_from else str(c).rjust(w)
                         for i, (c, w) in enumerate(zip(r, widths)))
    print(line(header))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))


COLD_CODE = r"""
import json, time
t0 = time.perf_counter()
import tenscontrol as tc
from tenscontrol.model import catalog
t1 = time.perf_counter()
s = catalog.tbar("stedy", damping=1.0)
t2 = time.perf_counter()
tc.simulate(s, 10.0)
t3 = time.perf_counter()
tc.simulate(s, 10.0)
t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first": t3 - t2, "second": t4 - t3}))
"""


def cold_run(env=None):
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", COLD_CODE], capture_output=True, text=True,
                       env=env, check=False)
    total = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"cold-start subprocess failed:\n{p.stderr}")
    out = json.loads(p.stdout.strip().splitlines()[-1])
    out["process"] = total
    return out


def cold_start(n, compile_too):
    print(f"\nCold start of the headline case in fresh subprocesses ({n} run(s), "
          "on-disk numba cache present):")
    runs = [cold_run() for _ in range(n)]
    rows = []
    for key, label in (("import", "import tenscontrol (+catalog)"),
                       ("first", "first simulate() (cache load)"),
                       ("second", "second simulate() (warm)"),
                       ("process", "whole subprocess incl. interpreter")):
        v = [r[key] for r in runs]
        rows.append([label, f"{statistics.median(v):.3f}", f"{min(v):.3f}"])
    if compile_too:
        with tempfile.TemporaryDirectory(prefix="numba-cold-") as d:
            r = cold_run(dict(os.environ, NUMBA_CACHE_DIR=d))
            written = list(Path(d).rglob("*.nbi"))
        if written:  # numba wrote its cache there, so it did not read the in-tree one
            rows.append(["import, empty NUMBA_CACHE_DIR", f"{r['import']:.3f}", "-"])
            rows.append(["first simulate(), empty NUMBA_CACHE_DIR (compile)",
                         f"{r['first']:.3f}", "-"])
        else:
            print("  NUMBA_CACHE_DIR was not honoured (no cache files written there); "
                  "compile cost skipped")
    print_table(["phase", "median [s]", "min [s]"], rows)
    if not compile_too:
        print("(run with --cold-compile for the one-time compile cost without any cache)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=None, help="warm repeats per case (default 5)")
    ap.add_argument("--quick", action="store_true", help="T-bar cases only, fewer repeats")
    ap.add_argument("--cold-compile", action="store_true",
                    help="also time the first call with an empty numba cache")
    args = ap.parse_args(argv)
    repeat = args.repeat if args.repeat is not None else (2 if args.quick else 5)
    if repeat < 1:
        ap.error("--repeat must be >= 1")

    print("tenscontrol simulate() benchmark")
    for line in machine_info():
        print("  " + line)
    print(f"  {repeat} warm repeat(s) per case; wall time of the whole simulate() call\n")

    header = ["case", "median [s]", "min [s]", "cpu min [s]", "accepted", "rejected", "rhs evals",
              "corr iters", "max|bar viol| [m]", "max|E viol| [J]", "peer [s]",
              "peer steps", "peer/ours"]
    rows, failures, headline = [], [], None
    for key, label, factory, t_final, kwargs in cases(args.quick):
        times, cpu, traj = run_case(factory, t_final, kwargs, repeat,
                                    python_loop=key.endswith("-python"))
        med, st = statistics.median(times), traj.stats
        headline = med if headline is None else headline
        if st.correction_failures:
            failures.append(f"{label}: {st.correction_failures} correction failure(s)")
        bar = np.abs(traj.bar_violation).max(initial=0.0)
        energy = np.abs(traj.energy_violation).max()
        rows.append([label, f"{med:.4f}", f"{min(times):.4f}", f"{min(cpu):.4f}",
                     st.accepted_steps, st.rejected_steps, st.rhs_evaluations,
                     st.correction_iterations,
                     f"{bar:.2e}", f"{energy:.2e}", *fmt_peer(key, med)])
        print(f"  done: {label} ({med:.3f} s)", file=sys.stderr, flush=True)
    print_table(header, rows)
    for f in failures:
        print("WARNING: " + f)
    print(f"\nHeadline (first row) median {headline:.4f} s against the target "
          f"<= {HEADLINE_TARGET} s: {'met' if headline <= HEADLINE_TARGET else 'NOT met'}.")
    print("peer = reference MATLAB code under GNU Octave 7.3 on a 2-core machine "
          "(simulation call only; +-20 % noise).\nThe paper itself (MATLAB, 10 s T-bar): 2.4 s for its method, "
          "1.1 s for Simscape Multibody.")
    cold_start(1 if args.quick else 3, args.cold_compile)


if __name__ == "__main__":
    main()
