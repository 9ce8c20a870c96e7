"""Wall time of tenscontrol.load_structure on large JSON files (prism towers).

Usage::

    python benchmarks/bench_load.py [--nodes 10000 30000 100000] [--repeat 3]

Writes, for each size, a twisted 4-prism tower with about that many nodes to a temporary
folder in the ``tenscontrol.structure/1`` format as :func:`tenscontrol.save_structure`
writes it (one member field per line, indent 1, resolved material values), then times
``load_structure`` on it: reading and parsing the JSON, building and validating the
:class:`~tenscontrol.Structure` (wall time, min and median of the repeats, and the process's
CPU time, which is less affected by other processes on a shared machine). The tower's dict is built
directly, not through ``catalog.prism_tower``, so that writing the file does not itself time
the validation. Level 0 is fixed; every other node is touched by a bar.

The issue's target: a 100k-node file (about 62 MB) loads and validates in under 2 s.
Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

import numpy as np

import tenscontrol as tc

N = 4  # nodes per level


def tower_dict(levels: int) -> dict:
    """A tenscontrol.structure/1 dict of a 4-prism tower with `levels` levels (4 levels nodes)."""
    L, k = np.divmod(np.arange(levels * N), N)
    angle = 2 * np.pi * k / N + L * (np.pi / 2 - np.pi / N)
    nodes = np.column_stack([0.5 * np.cos(angle), 0.5 * np.sin(angle), 1.0 * L])
    bar = {"radius": 0.01, "material": "aluminium", "density": 2700.0,
           "youngs_modulus": 68e9, "poisson": 0.33}
    string = {"kind": "string", "youngs_modulus": 2e9, "radius": 1e-3, "material": "nylon",
              "rest_fraction": 0.95, "damping": 0.0}
    bars = [{"nodes": [s * N + i, (s + 1) * N + i], **bar}
            for s in range(levels - 1) for i in range(N)]
    rings = [[s * N + i, s * N + (i + 1) % N] for s in range(levels) for i in range(N)]
    sides = [[s * N + i, (s + 1) * N + (i - 1) % N] for s in range(levels - 1) for i in range(N)]
    return {
        "format": tc.FORMAT if hasattr(tc, "FORMAT") else "tenscontrol.structure/1",
        "name": f"bench-tower-{levels}x{N}",
        "gravity": [0.0, 0.0, -9.806],
        "nodes": nodes.tolist(),
        "fixed": [{"node": i, "axes": "xyz"} for i in range(N)],
        "bars": bars,
        "strings": [{"nodes": p, **string} for p in rings + sides],
        "point_masses": [],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, nargs="+", default=[10_000, 30_000, 100_000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    print(f"{'nodes':>8} {'bars':>8} {'strings':>8} {'file [MB]':>10} {'min [s]':>8} "
          f"{'median [s]':>10} {'cpu min [s]':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        for n_nodes in args.nodes:
            d = tower_dict(max(2, n_nodes // N))
            path = os.path.join(tmp, f"tower-{n_nodes}.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(d, f, indent=1)
            times, cpu = [], []
            for _ in range(args.repeat):
                start, start_cpu = time.perf_counter(), time.process_time()
                s = tc.load_structure(path)
                times.append(time.perf_counter() - start)
                cpu.append(time.process_time() - start_cpu)
            print(f"{s.n_nodes:8d} {s.n_bars:8d} {s.n_strings:8d} "
                  f"{os.path.getsize(path) / 1e6:10.1f} {min(times):8.2f} "
                  f"{statistics.median(times):10.2f} {min(cpu):11.2f}", flush=True)
            os.remove(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
