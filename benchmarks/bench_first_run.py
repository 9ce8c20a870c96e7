"""The first run on a new machine: CPU and wall time of fresh processes with an empty numba cache.

Usage::

    python benchmarks/bench_first_run.py [--code PATH] [--cases a,b,...] [--results DIR]

--code PATH     the checkout whose ``tenscontrol`` is measured (PYTHONPATH=PATH in the child
                processes; default: this script's checkout), so that the same script measures
                two branches on the same machine.
--cases         a comma-separated subset of: import, rigid, compressible, closed-loop, demo
                (default: all).
--results DIR   also write each case's final nodes and SimulationStats (JSON) to DIR, to
                compare two checkouts' results (``--compare DIR1 DIR2`` prints the differences).

Each case runs twice in fresh processes (``python -c``), both with ``NUMBA_CACHE_DIR`` set to
the case's own new empty folder: "cold" compiles every kernel the case needs, "warm" loads them
from that folder as a later process on the same machine would. For each it prints the CPU
time (user + system of the whole child process, from the parent's rusage) and wall time of the
process, and inside the child the CPU (``time.process_time``) and wall of ``import
tenscontrol`` and of the case alone, and numba's count of functions compiled (cache misses) and
loaded from the cache (hits) in the child. The cases:

- import: ``import tenscontrol`` only.
- rigid, compressible: the first ``simulate`` of ``catalog.tbar("stedy", damping=1.0)`` for
  10 s with ``bars="rigid"`` or ``"compressible"`` (the defaults otherwise).
- closed-loop: the T-bar prestressed (``equilibrium(gamma_min=10)``), the LQR of the demo
  (passive model, outputs x, z of nodes 2 and 3, effort 1e-2) and ``simulate`` with that
  controller under a constant 10 N load on node 2 along z for 10 s; only the simulate is in
  the "case" columns.
- demo: ``python -m tenscontrol demo --out-dir TMP`` (README's "Install and run the demo"),
  whole process only.

The kernels compiled ahead of time at install (``tenscontrol.precompile``, loaded unless
``TENSCONTROL_AOT=0``) are what a first run on a fresh install uses: the header prints whether
the measured checkout loads them (``aot.STATUS``). Run the script with ``TENSCONTROL_AOT=0`` in
the environment for the figures without them (numba's JIT alone), side by side.

Timings are informative: the machine may be loaded (the header prints ``os.getloadavg``).
Nothing asserts on them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = ("import", "rigid", "compressible", "closed-loop", "demo")

# The child's code: {case} and {results} are filled in; it prints one JSON line.
CHILD = r'''
import json, sys, time
c0, w0 = time.process_time(), time.perf_counter()
import numpy as np
import tenscontrol as tc
c1, w1 = time.process_time(), time.perf_counter()
import_cpu, import_wall = c1 - c0, w1 - w0
case, results = {case!r}, {results!r}
traj = None
if case != "import":
    s = tc.catalog.tbar("stedy", damping=1.0)
    kwargs = dict(bars=case) if case in ("rigid", "compressible") else {{}}
    if case == "closed-loop":
        s = tc.equilibrium(s, gamma_min=10.0).structure
        outputs = tc.Selection(nodes=[2, 3], axes="xz")
        design = tc.lqr(tc.linearize(s, kind="passive", outputs=outputs), effort=1e-2)
        loads = np.zeros((s.n_nodes, 3))
        loads[2, 2] = 10.0
        kwargs = dict(controller=design.controller, loads=loads)
    c1, w1 = time.process_time(), time.perf_counter()
    traj = tc.simulate(s, 10.0, **kwargs)
c2, w2 = time.process_time(), time.perf_counter()
from numba.core.dispatcher import Dispatcher
hits = misses = 0
for module in list(sys.modules.values()):
    if getattr(module, "__name__", "").startswith("tenscontrol"):
        for f in list(vars(module).values()):
            if isinstance(f, Dispatcher) and f.py_func.__module__ == module.__name__:
                hits += sum(f._cache_hits.values())
                misses += sum(f._cache_misses.values())
if results and traj is not None:
    import dataclasses
    stats = {{k: v for k, v in dataclasses.asdict(traj.stats).items() if k != "wall_time"}}
    with open(results, "w") as out:
        json.dump(dict(nodes=traj.nodes[-1].tolist(), stats=stats, n=len(traj.t)), out)
print(json.dumps(dict(import_cpu=import_cpu, import_wall=import_wall, case_cpu=c2 - c1,
                      case_wall=w2 - w1, misses=misses, hits=hits,
                      import_only=(case == "import"))))
'''


def run_child(code: str, case: str, cache: str, results: str | None, out_dir: str) -> dict:
    """One fresh process of `case` with numba's cache in `cache`: its figures (a dict)."""
    env = dict(os.environ, PYTHONPATH=code, NUMBA_CACHE_DIR=cache, OPENBLAS_NUM_THREADS="1",
               MPLBACKEND="Agg")
    if case == "demo":
        argv = [sys.executable, "-m", "tenscontrol", "demo", "--out-dir", out_dir]
    else:
        argv = [sys.executable, "-c", CHILD.format(case=case, results=results)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=out_dir)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{case} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    row = dict(process_cpu=cpu, process_wall=wall, stderr=proc.stderr.strip())
    if case == "demo":
        row["compile_lines"] = [line for line in proc.stdout.splitlines() + proc.stderr.splitlines()
                                if "compil" in line.lower()]
    else:
        row.update(json.loads(proc.stdout.strip().splitlines()[-1]))
    return row


def fmt(x, spec=".2f"):
    return "-" if x is None else format(x, spec)


def measure(code: str, cases, results_dir: str | None) -> None:
    print(f"code: {code}   python {platform.python_version()}   load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}   cpus {os.cpu_count()}")
    status = subprocess.run(
        [sys.executable, "-c", "from tenscontrol.mechanics.kernels import aot; print(aot.STATUS)"],
        env=dict(os.environ, PYTHONPATH=code), capture_output=True, text=True,
        cwd=tempfile.gettempdir()).stdout.strip() or "none (this code has no such loader)"
    print(f"kernels compiled at install: {status}")
    print(f"{'case':<13}{'run':<6}{'process CPU':>12}{'wall':>8}{'import CPU':>11}"
          f"{'import wall':>12}{'case CPU':>10}{'case wall':>10}{'compiled':>9}{'loaded':>8}")
    for case in cases:
        with tempfile.TemporaryDirectory(prefix="bench-first-run-") as tmp:
            cache = os.path.join(tmp, "numba-cache")
            os.mkdir(cache)
            for run in ("cold", "warm"):
                results = (os.path.join(results_dir, f"{case}-{run}.json")
                           if results_dir and case not in ("import", "demo") else None)
                r = run_child(code, case, cache, results, tmp)
                print(f"{case:<13}{run:<6}{r['process_cpu']:>12.2f}{r['process_wall']:>8.2f}"
                      f"{fmt(r.get('import_cpu')):>11}{fmt(r.get('import_wall')):>12}"
                      f"{fmt(None if r.get('import_only', True) else r.get('case_cpu')):>10}"
                      f"{fmt(None if r.get('import_only', True) else r.get('case_wall')):>10}"
                      f"{fmt(r.get('misses'), 'd'):>9}{fmt(r.get('hits'), 'd'):>8}", flush=True)
                for line in r.get("compile_lines", []) or r["stderr"].splitlines()[-3:]:
                    print(f"{'':<19}| {line}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def compare(a: str, b: str) -> None:
    """Print, for each results file in both folders, the largest final-node difference and
    any SimulationStats field that differs."""
    import numpy as np
    for name in sorted(set(os.listdir(a)) & set(os.listdir(b))):
        ra, rb = (json.loads(Path(d, name).read_text()) for d in (a, b))
        diff = np.abs(np.array(ra["nodes"]) - np.array(rb["nodes"])).max()
        stats = {k: (ra["stats"][k], rb["stats"].get(k)) for k in ra["stats"]
                 if ra["stats"][k] != rb["stats"].get(k)}
        print(f"{name:<28} outputs {ra['n']}/{rb['n']}  max |nodes[-1] difference| {diff:.3g} m"
              f"  stats differing: {stats or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", default=str(HERE.parent))
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--results", default=None)
    parser.add_argument("--compare", nargs=2, default=None)
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare)
        return
    cases = args.cases.split(",")
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        parser.error(f"--cases: unknown {unknown}; expected some of {', '.join(CASES)}")
    if args.results:
        os.makedirs(args.results, exist_ok=True)
    measure(os.path.abspath(args.code), cases, args.results)


if __name__ == "__main__":
    main()
