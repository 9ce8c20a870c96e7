"""Relative accuracy and work of simulate() on similar copies of catalog structures.

Usage::

    python benchmarks/bench_scale.py [--quick]

Each structure is scaled by the length factors 1e-6, 1e-3, 1, 1e3 under the elastic similarity
of :func:`tenscontrol.model.scaling.similar` (densities and Young's moduli kept: masses ~ s^3,
stiffnesses ~ s, damping ~ s^2, gravity ~ 1/s, time ~ s, loads ~ s^2 f(t / s)) and simulated
with simulate()'s defaults over the same span in the structure's own time (t_final = s t_1).
A scale-free method gives the same row at every factor. Columns: the largest relative bar
violation max_k |l_k - l0_k| / l0_k, the largest energy violation over the energy scale E of
:func:`tenscontrol.mechanics.scales.structure_scales` (sum k l^2 + M |g| L), accepted and rejected
steps, correction iterations and corrections that did not converge. Counts are deterministic;
no timing is printed.

Cases: the STEDY T-bar with damping 1 (10 s at s = 1, compiled loop), the ball under its
sine load (1 s, Python loop: the load is a function), the 48-bar tower prism_tower(16)
released from its 0.95 rest fractions (0.05 s).
--quick runs the T-bar only.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import tenscontrol as tc
from tenscontrol.model import catalog
from tenscontrol.mechanics.scales import structure_scales
from tenscontrol.model.scaling import similar

FACTORS = (1e-6, 1e-3, 1.0, 1e3)


def _ball_load(s):
    base = catalog.ball_load()
    return lambda t, q, qd: s * s * base(t / s)


CASES = [  # (label, structure factory, span at s = 1 [s], load factory or None)
    ("T-bar stedy c=1", lambda: catalog.tbar("stedy", damping=1.0), 10.0, None),
    ("ball + load", catalog.ball, 1.0, _ball_load),
    ("tower 16x3", lambda: catalog.prism_tower(16), 0.05, None),
]


def run(label, make, span, load, s):
    """One row: (label, s, rel bar, rel energy, accepted, rejected, iterations, failures)."""
    structure = similar(make(), s)
    scales = structure_scales(structure)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # counted in stats.correction_failures
        tr = tc.simulate(structure, span * s, loads=None if load is None else load(s))
    bar = np.abs(tr.bar_violation).max(initial=0.0) / structure.bar_lengths.min()
    energy = np.abs(tr.energy_violation).max() / scales.energy
    st = tr.stats
    return (label, s, bar, energy, st.accepted_steps, st.rejected_steps,
            st.correction_iterations, st.correction_failures)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the T-bar only")
    args = parser.parse_args()
    print(f"{'case':18s} {'scale':>6s} {'rel bar viol':>12s} {'rel E viol':>10s} "
          f"{'accepted':>8s} {'rejected':>8s} {'corr it':>7s} {'corr fail':>9s}")
    for label, make, span, load in CASES[:1] if args.quick else CASES:
        for s in FACTORS:
            row = run(label, make, span, load, s)
            print(f"{row[0]:18s} {row[1]:6.0e} {row[2]:12.2e} {row[3]:10.2e} {row[4]:8d} "
                  f"{row[5]:8d} {row[6]:7d} {row[7]:9d}", flush=True)


if __name__ == "__main__":
    main()
