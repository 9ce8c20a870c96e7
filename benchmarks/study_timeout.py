"""A study with one case that never returns, a per-case time limit, on every executor.

The pipeline runs the norms pipeline of the T-bar (prestress 5 + x N/m, a 0.2 s doublet run)
for each case x = 0 .. n-1, except x = 2, which blocks forever on a lock that is never
released (in C: no signal or exception reaches it). The study runs with ``case_timeout`` on the
serial engine, on a process pool of 2 and on a Dask LocalCluster of 2 workers, into an output
folder each. Printed per executor: cases finished / failed, the hung case's record (its error
type and message, and whether its case file holds it), whether every other case finished, the
longest wall time of a finished case in its worker (the margin under the limit on a loaded
machine) and the study's wall time (which includes starting the worker processes; the load
average is printed).

Usage: python benchmarks/study_timeout.py [--limit 5] [--cases 6]
       [--executors serial,processes,dask]
"""

import argparse
import json
import os
import pathlib
import sys
import tempfile
import threading
import time

import tenscontrol as tc

HUNG = 2


class HangingNorms:
    """The T-bar's norms pipeline, except that case x == HUNG never returns."""

    name = "norms-with-a-hung-case"

    def __init__(self):
        self.inner = tc.NormsPipeline(tc.catalog.tbar("stedy", damping=5.0), t_final=0.2)

    def warm(self):
        self.inner.warm()

    def __call__(self, params):
        if params["x"] == HUNG:
            lock = threading.Lock()
            lock.acquire()
            lock.acquire()                      # blocks forever: nobody releases it
        return self.inner({"prestress": 5.0 + params["x"]})


def run(kind: str, limit: float, n_cases: int, out: pathlib.Path):
    pipeline, cases = HangingNorms(), tc.grid({"x": list(range(n_cases))})
    start = time.perf_counter()
    if kind == "serial":
        result = tc.run_study(pipeline, cases, out=out, case_timeout=limit, progress=False)
    elif kind == "processes":
        with tc.process_pool(2) as pool:
            result = tc.run_study(pipeline, cases, out=out, executor=pool, case_timeout=limit,
                                  progress=False)
    else:
        import distributed

        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=":0") as cluster, \
                distributed.Client(cluster) as client:
            result = tc.run_study(pipeline, cases, out=out, executor=client, case_timeout=limit,
                                  progress=False)
    return result, time.perf_counter() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=float, default=5.0)
    ap.add_argument("--cases", type=int, default=6)
    ap.add_argument("--executors", default="serial,processes,dask")
    args = ap.parse_args(argv)
    print(f"case_timeout = {args.limit:g} s, {args.cases} cases, case x = {HUNG} never returns; "
          f"load average at start: {os.getloadavg()[0]:.2f} (2 cores)")
    print(f"{'executor':<10} {'finished':>8} {'failed':>6}  {'others all ok':>13}  "
          f"{'hung case on disk':>17}  {'slowest other case [s]':>22}  {'wall [s]':>8}  "
          "the failures' records")
    for kind in args.executors.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            result, wall = run(kind, args.limit, args.cases, pathlib.Path(tmp))
            on_disk = json.loads((pathlib.Path(tmp) / "cases" / f"case-{HUNG:06d}.json")
                                 .read_text())["error"]["type"]
        others = sorted(r.index for r in result.records) == [
            k for k in range(args.cases) if k != HUNG]
        failure = ", ".join(f"case {f.index}: {f.error_type}: {f.message}"
                            for f in result.failures)
        slowest = max((r.wall_time for r in result.records), default=float("nan"))
        print(f"{kind:<10} {len(result.records):>8} {len(result.failures):>6}  {str(others):>13}  "
              f"{on_disk:>17}  {slowest:22.2f}  {wall:8.1f}  {failure}", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
