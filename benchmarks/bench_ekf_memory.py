"""Memory of a long ExtendedLQG run: the recorded controller states and the peak traced by
tracemalloc (issue 30, item 4: the covariance no longer in the recorded state).

Run: ``PYTHONPATH=. python benchmarks/bench_ekf_memory.py [samples]`` (10,000 by default; the
T-bar at 5 ms, so 50 s simulated, output every 0.1 s). Prints one table row per figure, then
the recorded state per sample of a 10-stage prism tower (30 free nodes; designed, not run).

Measured (2026-12, this 2-core machine): the T-bar records 92 floats per sample before issue 30
(its covariance, 8 x 8, row by row) and 36 after (its diagonal): 7.02 MiB of sample states
and a tracemalloc peak of 22.5 MiB before, 2.75 MiB and 13.8 MiB after, the same final state;
the tower 32,661 floats per sample before (2.61 GB for 10,000 samples) and 441 after
(0.035 GB).
"""

import sys
import time
import tracemalloc

import numpy as np

import tenscontrol as tc
from tenscontrol.mechanics.sensors import sensors

PERIOD = 0.005


def main(samples: int = 10_000) -> None:
    s = tc.equilibrium(tc.catalog.tbar(damping=1.0), gamma_min=10.0).structure
    ss = (sensors(s, string_lengths=range(s.n_strings), std=1e-3, rate=200.0)
          + sensors(s, bar_rates=range(s.n_bars), std=1e-2, rate=200.0))
    design = tc.extended_lqg(tc.linearize(s), ss, PERIOD, process_noise=4.0)
    ext = getattr(design, "controller", design)      # before issue 30: the bare controller
    t_final = samples * PERIOD
    loads = tc.doublet(s, tc.Selection(2, "x"), amplitude=5.0, half_period=0.05)
    t_eval = np.arange(0.0, t_final, 0.1)
    tc.simulate(s, 0.05, controller=ext, loads=loads)          # compile outside the trace
    tracemalloc.start()
    start = time.process_time()
    run = tc.simulate(s, t_final, controller=ext, loads=loads, t_eval=t_eval)
    cpu = time.process_time() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    X = run.control.sample_states
    nf2 = 2 * s.free_coordinates.size
    print(f"{'samples':<38} {X.shape[0]}")
    print(f"{'recorded controller states per sample':<38} {ext.n_states} "
          f"(free coordinates x2: {nf2})")
    print(f"{'sample_states nbytes':<38} {X.nbytes / 2**20:.3f} MiB")
    print(f"{'tracemalloc peak of the run':<38} {peak / 2**20:.3f} MiB")
    print(f"{'CPU of the run':<38} {cpu:.1f} s")
    print(f"{'final x error of node 2':<38} {run.nodes[-1, 2, 0] - s.nodes[2, 0]:.3e} m")
    tower = tc.equilibrium(tc.catalog.prism_tower(10), gamma_min=10.0).structure
    ts = (sensors(tower, string_lengths=range(tower.n_strings), std=1e-3, rate=200.0)
          + sensors(tower, bar_rates=range(tower.n_bars), std=1e-2, rate=200.0))
    design = tc.extended_lqg(tc.linearize(tower), ts, PERIOD, process_noise=4.0)
    n = getattr(design, "controller", design).n_states
    print(f"{'tower (30 free nodes): states/sample':<38} {n} ({n * 8 * 10_000 / 1e9:.3f} GB "
          "per 10,000 samples)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
