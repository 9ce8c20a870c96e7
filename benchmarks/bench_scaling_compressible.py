"""Compressible bars at scale (issue 11, build item 4): the dense path against the band path.

Usage::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_scaling_compressible.py [--max-bars N]
        [--dense-max-bars N] [--span S]

Prism towers of the catalog (``prism_tower(stages, n=3)``, 3 bars per stage, gravity, released
from rest), ``simulate(s, span, bars="compressible")`` at the default tolerances (Radau IIA,
rtol = atol = 1e-8), span 0.02 s by default. Each case runs once on a short span first (kernels
compiled, model built), then is timed in CPU time (``time.process_time``):

- ``dense``: the dense path (forced by ``BANDED_MIN_COORDINATES`` above the size): inverse-mass
  products in the derivative, dense (6n+1)^2 Jacobian and LAPACK LU;
- ``band``: the band path (forced for every size): envelope LDL^T of M in the derivative and
  the block-eliminated Newton solves with a band LU of K(c) = c^2 M - c B_qd - B_q.

Columns: CPU per simulated second of each path, their ratio, accepted steps, LU
decompositions, and the largest difference of the final node positions between the two paths
[m]. Then the growth exponent of CPU per simulated second (least squares on log-log) from 48
bars up, for each path. The default threshold of ``simulate`` is
``tenscontrol.mechanics.compressible.banded.BANDED_MIN_COORDINATES`` (printed). The script
measures only; it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import tenscontrol as tc
from tenscontrol.mechanics.compressible import banded as CB
from tenscontrol.model import catalog

GRAVITY = (0.0, 0.0, -9.81)
TOWER_BARS = (3, 6, 12, 24, 48, 96, 192, 384)


def run(structure, span: float, banded: bool):
    """(CPU seconds, Trajectory) of a warm compressible run on one path."""
    default = CB.BANDED_MIN_COORDINATES
    CB.BANDED_MIN_COORDINATES = 0 if banded else 10**12
    try:
        tc.simulate(structure, span / 10, bars="compressible")   # warm-up
        t0 = time.process_time()
        tr = tc.simulate(structure, span, bars="compressible")
        return time.process_time() - t0, tr
    finally:
        CB.BANDED_MIN_COORDINATES = default


def growth(rows, key: str, lo: int = 48) -> float:
    """Slope of log(CPU per simulated second) against log(bars) for bars >= lo."""
    pts = [(r["bars"], r[key]) for r in rows if r["bars"] >= lo and r[key] is not None]
    if len(pts) < 2:
        return float("nan")
    return float(np.polyfit(np.log([p[0] for p in pts]), np.log([p[1] for p in pts]), 1)[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-bars", type=int, default=384)
    parser.add_argument("--dense-max-bars", type=int, default=192,
                        help="largest tower run on the dense path too (its cost grows ~n^2-3)")
    parser.add_argument("--span", type=float, default=0.02, help="simulated time [s]")
    args = parser.parse_args()
    print(f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, "
          f"span {args.span:g} s, BANDED_MIN_COORDINATES = {CB.BANDED_MIN_COORDINATES}")
    print(f"{'bars':>5} {'coords':>6} {'dense CPU/s':>12} {'band CPU/s':>11} {'ratio':>6} "
          f"{'steps':>6} {'LUs':>5} {'node diff [m]':>14}")
    rows = []
    for bars in TOWER_BARS:
        if bars > args.max_bars:
            break
        tower = catalog.prism_tower(bars // 3, n=3, gravity=GRAVITY)
        cb, tb = run(tower, args.span, True)
        cd = td = None
        if bars <= args.dense_max_bars:
            cd, td = run(tower, args.span, False)
        diff = float(np.abs(td.nodes[-1] - tb.nodes[-1]).max()) if td is not None else np.nan
        r = {"bars": bars, "dense": None if cd is None else cd / args.span,
             "band": cb / args.span}
        rows.append(r)
        dense = f"{r['dense']:12.3f}" if cd is not None else f"{'-':>12}"
        ratio = f"{r['dense'] / r['band']:6.2f}" if cd is not None else f"{'-':>6}"
        print(f"{bars:>5} {3 * tower.n_nodes:>6} {dense} {r['band']:11.3f} {ratio} "
              f"{tb.stats.accepted_steps:>6} {tb.stats.lu_decompositions:>5} {diff:14.2e}",
              flush=True)
    print(f"growth exponent of CPU/sim s from 48 bars: dense {growth(rows, 'dense'):.2f}, "
          f"band {growth(rows, 'band'):.2f}")


if __name__ == "__main__":
    main()
