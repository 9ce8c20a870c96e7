"""Warm speed of the kernels compiled ahead of time for a baseline CPU against numba's JIT.

Usage::

    python benchmarks/bench_aot_target.py [BUILD_FOLDER ...]

Each BUILD_FOLDER holds a build (``python -m tenscontrol.precompile FOLDER --cpu x86-64-v2``;
the package's own build is measured too when there is one). For each build, and for numba's
JIT for this machine's CPU (a warm numba cache), a fresh process runs the rigid T-bar
``simulate`` (``catalog.tbar("stedy", damping=1.0)``, 100 s) once to warm up, then REPEATS
times, and prints the best and median wall time of one run. Informative only: the machine may
be loaded (the header prints ``os.getloadavg``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

REPEATS = 9
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r'''
import json, os, statistics, sys, time
import tenscontrol as tc
from tenscontrol.mechanics.kernels import aot
from tenscontrol.simulation import cache_guard
if sys.argv[1] != "jit":
    os.environ["TENSCONTROL_AOT"] = "1"
    aot.install(aot.source_stamp(cache_guard.kernel_sources()),
                os.path.join(sys.argv[1], aot.MANIFEST))
s = tc.catalog.tbar("stedy", damping=1.0)
tc.simulate(s, 100.0, bars="rigid")
times = []
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    tc.simulate(s, 100.0, bars="rigid")
    times.append(time.perf_counter() - start)
print(json.dumps({"status": aot.STATUS, "best": min(times), "median": statistics.median(times)}))
'''


def measure(build: str) -> dict:
    env = dict(os.environ, TENSCONTROL_AOT="0", OPENBLAS_NUM_THREADS="1",
               TENSCONTROL_COMPILE_NOTICE="0",
               PYTHONPATH=os.pathsep.join([ROOT] + [p for p in os.environ.get(
                   "PYTHONPATH", "").split(os.pathsep) if p]))
    out = subprocess.run([sys.executable, "-c", CHILD, build, str(REPEATS)], env=env,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


def main(argv) -> int:
    builds = list(argv)
    own = os.path.join(ROOT, "tenscontrol")
    if os.path.exists(os.path.join(own, "_aot.json")):
        builds.insert(0, own)
    print(f"load average {os.getloadavg()[0]:.1f}; rigid T-bar simulate, 100 s, "
          f"best and median of {REPEATS} warm runs")
    print(f"{'kernels':<44} {'best [ms]':>10} {'median [ms]':>12}")
    for build in ["jit"] + builds:
        result = measure(build)
        if build == "jit":
            label = "numba JIT (this CPU)"
        else:
            with open(os.path.join(build, "_aot.json")) as f:
                label = f"ahead of time for {json.load(f)['target']['cpu']}"
            if not result["status"].endswith("loaded"):
                label += f" (NOT LOADED: {result['status']})"
        print(f"{label:<44} {1e3 * result['best']:>10.1f} {1e3 * result['median']:>12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
