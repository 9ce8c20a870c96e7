"""How the cost of tenscontrol grows with the size of the structure (issue 11).

Usage::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_scaling.py            # the whole table
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_scaling.py --quick    # up to 192 bars

Section "rigid simulation": prism towers of the catalog (``prism_tower(stages, n=3)``, 3 bars
per stage, gravity, released from rest, default tolerances and energy correction) from 3 to
768 bars, and the catalog's ball and arm (gravity only). Columns, all in CPU time
(``time.process_time``) of a warm run (the kernels compiled and the model built beforehand):

- ``span``: simulated time [s] (shorter for the big towers so the script ends in minutes);
- ``CPU/sim s``: CPU seconds per simulated second;
- ``evals``: derivative evaluations of the run, ``us/eval``: CPU of the whole run over them;
- ``corr it``: correction iterations, ``ms/corr``: CPU of one correction iteration (the
  kernel alone, on a state perturbed off the constraints, 1 iteration, averaged);
- then the growth exponent of CPU per simulated second from 48 to 768 bars (least squares
  on the log-log points) and the 48-bar tower for 0.2 s at rtol = atol 1e-8 against 1e-10.

The script measures only; it asserts nothing. Further sections (the linear tools) add a
function and a line in ``main``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import tenscontrol as tc
from tenscontrol.mechanics.rigid import kernels as K
from tenscontrol.mechanics.kernels.records import Correction
from tenscontrol.mechanics.rigid.model import rigid_model
from tenscontrol.model import catalog

GRAVITY = (0.0, 0.0, -9.81)
TOWER_BARS = (3, 12, 48, 96, 192, 384, 768)


def _span(bars: int) -> float:
    """Simulated time for a tower of `bars` bars [s]: about 2-20 s of CPU each."""
    return 1.0 if bars <= 48 else 0.5 if bars <= 192 else 0.2


def _cpu(fn):
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def correction_ms(structure, repeat: int = 20) -> float:
    """CPU [ms] of one energy-correction iteration from a state 1e-6 off the constraints."""
    model = rigid_model(structure)
    nq = 3 * structure.n_nodes
    rng = np.random.default_rng(0)
    y0 = np.concatenate([structure.nodes.reshape(-1), np.zeros(nq), [0.0]])
    E0 = float(K.total_energy(y0[:nq], y0[nq:2 * nq], model.kernel))
    y0[:2 * nq] += 1e-6 * rng.normal(size=2 * nq) * np.tile(model.col >= 0, 2)
    settings = Correction(True, 0.0, 0.0, 0.0, 1)
    K.correct(y0.copy(), E0, settings, model.kernel)        # compiled before timing
    t, _ = _cpu(lambda: [K.correct(y0.copy(), E0, settings, model.kernel)
                         for _ in range(repeat)])
    return 1e3 * t / repeat


def rigid_row(name: str, structure, span: float, **options) -> dict:
    """One row of the rigid-simulation table (a warm run)."""
    tc.simulate(structure, min(span, 1e-3), **options)     # model built, kernels loaded
    cpu, traj = _cpu(lambda: tc.simulate(structure, span, **options))
    s = traj.stats
    return dict(name=name, bars=structure.n_bars, span=span, cpu=cpu, per_s=cpu / span,
                evals=s.rhs_evaluations, us_eval=1e6 * cpu / s.rhs_evaluations,
                corr=s.correction_iterations, ms_corr=correction_ms(structure))


def growth_exponent(rows, lo: int = 48, hi: int = 768) -> float:
    """Slope of log(CPU per simulated second) against log(bars) over the towers lo..hi."""
    pts = [(r["bars"], r["per_s"]) for r in rows if lo <= r["bars"] <= hi]
    if len(pts) < 2:
        return float("nan")
    x, y = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
    return float(np.polyfit(x, y, 1)[0])


def rigid_section(quick: bool) -> None:
    """Rigid towers, ball and arm: the cost per simulated second and its growth."""
    print("## rigid simulation (prism towers n=3 with gravity, ball, arm; default tolerances)")
    print(f"{'case':<22} {'bars':>5} {'span':>5} {'CPU/sim s':>10} {'evals':>8} "
          f"{'us/eval':>9} {'corr it':>8} {'ms/corr':>8}")
    rows = []
    for bars in TOWER_BARS:
        if quick and bars > 192:
            break
        tower = catalog.prism_tower(bars // 3, n=3, gravity=GRAVITY)
        rows.append(rigid_row(f"tower {bars // 3}x3", tower, _span(bars)))
        _print(rows[-1])
    for name, structure in (("ball", catalog.ball()), ("arm", catalog.arm())):
        _print(rigid_row(name, structure, 1.0))
    print(f"growth exponent of CPU/sim s, towers 48..{rows[-1]['bars']} bars: "
          f"{growth_exponent(rows):.2f}")
    tower = catalog.prism_tower(16, n=3, gravity=GRAVITY)
    for tol in (1e-8, 1e-10):
        r = rigid_row(f"tower 16x3 rtol {tol:g}", tower, 0.2, rtol=tol, atol=tol)
        print(f"48-bar tower 0.2 s at rtol = atol = {tol:g}: {r['cpu']:.3f} s CPU, "
              f"{r['evals']} evaluations, {r['corr']} correction iterations")


def _print(r: dict) -> None:
    print(f"{r['name']:<22} {r['bars']:>5} {r['span']:>5g} {r['per_s']:>10.3f} {r['evals']:>8} "
          f"{r['us_eval']:>9.1f} {r['corr']:>8} {r['ms_corr']:>8.3f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="towers up to 192 bars only")
    args = parser.parse_args()
    print(f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
    rigid_section(args.quick)


if __name__ == "__main__":
    main()
