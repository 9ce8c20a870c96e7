"""Studies on three engines: the soft-against-metallic T-bar study serially, on a process pool and
on a Dask LocalCluster; the per-case overhead of each path against a bare loop.

Prints (1) wall time, speed-up over serial, the cases' CPU time, the warm-ups per worker and
the machine's load for each engine, and whether the result tables are identical (the figures
compared exactly); (2) the per-case overhead with a pipeline that does nothing (kernels warm).
On a shared machine the wall times carry the other users' load: the CPU time per case and the
load average are printed so that runs can be compared; rerun on a quiet machine for the
speed-up.

Usage: python benchmarks/bench_studies.py [--cases 200] [--executors serial,processes,dask]
       [--workers 2] [--overhead-cases 400]
"""

import argparse
import json
import os
import pathlib
import tempfile
import time

import tenscontrol as tc

OUTPUTS = tc.Selection(nodes=[2, 3], axes="xz")


def study(n_cases: int, seed: int = 1):
    """The soft-against-metallic robustness study: n_cases / 2 samples, each on both materials."""
    tbar = tc.catalog.tbar("stedy", damping=5.0)
    pipeline = tc.NormsPipeline(tbar, prestress=5.0, outputs=OUTPUTS, amplitude=60.0,
                                t_final=3.0, bars="compressible")
    uncertain = {f"rest_length_error_{k}": tc.Uniform(-0.03, 0.03) for k in range(4)}
    uncertain["string_stiffness_error"] = tc.Uniform(-0.2, 0.2)
    cases = tc.samples(uncertain, max(1, n_cases // 2), seed=seed,
                       designs={"material": ["hdpe", "aluminium"]})
    return pipeline, cases


def nothing(params):
    """A pipeline that does nothing: what is left is the executor path's own cost."""
    return {"y": 1.0}


def _engine(kind: str, workers: int, stack):
    if kind == "serial":
        return None
    if kind == "processes":
        pool = tc.process_pool(workers)
        stack.append(pool.shutdown)
        return pool
    import distributed

    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       dashboard_address=":0")
    client = distributed.Client(cluster)
    stack.extend([cluster.close, client.close])
    return client


def _warmups(folder: pathlib.Path) -> tuple:
    """(workers, cases that paid a warm-up, mean warm-up [s]) from the case files."""
    data = [json.loads(p.read_text()) for p in (folder / "cases").glob("*.json")]
    warm = [d["warm_time"] for d in data if d["warm_time"] > 1e-3]
    return len({d["worker"] for d in data}), len(warm), (sum(warm) / len(warm) if warm else 0.0)


def run_engines(n_cases: int, kinds, workers: int, root: pathlib.Path) -> None:
    pipeline, cases = study(n_cases)
    print(f"soft against metallic T-bar: {len(cases)} cases ({len(cases) // 2} samples x 2 "
          f"materials), {os.cpu_count()} cores, {workers} workers")
    header = (f"{'engine':<10}{'wall [s]':>10}{'speed-up':>10}{'CPU/case [s]':>14}"
              f"{'workers':>9}{'warm-ups':>10}{'warm [s]':>10}{'load before/after':>20}")
    print(header)
    tables, serial_wall = {}, None
    for kind in kinds:
        stack = []
        try:
            engine = _engine(kind, workers, stack)
            load0 = os.getloadavg()[0]
            start = time.perf_counter()
            result = tc.run_study(pipeline, cases, executor=engine, out=root / kind,
                                  progress=False)
            wall = time.perf_counter() - start
            load1 = os.getloadavg()[0]
        finally:
            for close in reversed(stack):
                close()
        serial_wall = wall if kind == "serial" else serial_wall
        n_workers, n_warm, warm = _warmups(root / kind)
        tables[kind] = [(r.index, r.parameters, r.figures) for r in result.records]
        speed = f"{serial_wall / wall:.2f}x" if serial_wall else "-"
        print(f"{kind:<10}{wall:>10.1f}{speed:>10}{result.cpu_time / len(cases):>14.3f}"
              f"{n_workers:>9}{n_warm:>10}{warm:>10.2f}{f'{load0:.1f} / {load1:.1f}':>20}")
        if result.failures:
            print(f"  {len(result.failures)} failed: {result.failures[0]}")
    first = next(iter(tables))
    for kind, table in tables.items():
        print(f"result table of {kind} identical to {first} (figures compared exactly): "
              f"{table == tables[first]} ({len(table)} cases)")


def run_overhead(n_cases: int, kinds, workers: int, root: pathlib.Path) -> None:
    cases = tc.grid({"x": list(range(n_cases))})
    start = time.perf_counter()
    for case in cases:
        nothing(case.parameters)
    bare = (time.perf_counter() - start) / n_cases
    print(f"\nper-case overhead, a pipeline that does nothing, {n_cases} cases (kernels warm)")
    print(f"{'path':<28}{'per case [ms]':>15}{'over the bare loop [ms]':>26}")
    print(f"{'bare loop':<28}{1e3 * bare:>15.4f}{0.0:>26.4f}")
    for kind in kinds:
        for out in (None, root / f"overhead-{kind}"):
            stack = []
            try:
                engine = _engine(kind, workers, stack)
                tc.run_study(nothing, cases[:workers * 4], executor=engine, progress=False)
                start = time.perf_counter()
                tc.run_study(nothing, cases, executor=engine, out=out, progress=False)
                per = (time.perf_counter() - start) / n_cases
            finally:
                for close in reversed(stack):
                    close()
            label = f"{kind}, {'files' if out else 'no files'}"
            print(f"{label:<28}{1e3 * per:>15.4f}{1e3 * (per - bare):>26.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--executors", default="serial,processes,dask")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--overhead-cases", type=int, default=400)
    args = parser.parse_args()
    kinds = [k for k in args.executors.split(",") if k]
    with tempfile.TemporaryDirectory(prefix="bench-studies-") as tmp:
        if args.cases > 0:
            run_engines(args.cases, kinds, args.workers, pathlib.Path(tmp))
        if args.overhead_cases > 0:
            run_overhead(args.overhead_cases, kinds, args.workers, pathlib.Path(tmp))


if __name__ == "__main__":
    main()
