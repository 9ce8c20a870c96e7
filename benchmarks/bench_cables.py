"""CPU cost of simulating clustered cables against the same structure with separate strings.

Runs ``simulate`` (rigid bars, energy correction, rtol = atol = 1e-10, compiled step loop) on
``catalog.prism(clustered=True)`` (each ring one cable) and on ``catalog.prism()`` (the same
strings on their own, the same prestress), both from the same initial velocities, and prints
the CPU time of a run and per derivative evaluation, the minimum over the repeats. The two
structures move differently (a cable lets tension flow round its ring), so their step counts
differ: the cost per derivative evaluation is the like-for-like figure, the run time the
whole story. Then the CPU time of ``linearize`` on the two prisms and of turning the
clustered model's segment inputs into cable-tension inputs. Measures only; asserts nothing.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_cables.py [--repeat 5] [--t-final 1.0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import tenscontrol as tc


def _velocities(structure):
    """Each top node moving perpendicular to its bar (tests/test_cables.py's start)."""
    qd = np.zeros((structure.n_nodes, 3))
    for b, (i, j) in enumerate(structure.bar_nodes):
        t = np.cross(structure.nodes[j] - structure.nodes[i], [0.0, 0.0, 1.0])
        qd[j] = 0.05 * (b + 1) * t / np.linalg.norm(t)
    return qd.reshape(-1)


def _run(structure, t_final, qd):
    start = time.process_time()
    traj = tc.simulate(structure, t_final, rtol=1e-10, atol=1e-10, qd=qd)
    return time.process_time() - start, traj.stats


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--t-final", type=float, default=1.0)
    args = parser.parse_args(argv)
    rows = {}
    for label, structure in (("prism-3, separate strings", tc.catalog.prism()),
                             ("prism-3, rings as cables", tc.catalog.prism(clustered=True))):
        qd = _velocities(structure)
        _run(structure, 0.01, qd)  # compile outside the timing
        times, stats = [], None
        for _ in range(args.repeat):
            cpu, stats = _run(structure, args.t_final, qd)
            times.append(cpu)
        rows[label] = (min(times), stats)
    print(f"simulate {args.t_final:g} s, rigid bars, energy correction, rtol = atol = 1e-10; "
          f"CPU, min of {args.repeat}")
    print(f"{'case':28s} {'run [s]':>9s} {'steps':>7s} {'rhs evals':>9s} {'us/rhs':>8s}")
    per = {}
    for label, (cpu, stats) in rows.items():
        per[label] = cpu / stats.rhs_evaluations
        print(f"{label:28s} {cpu:9.4f} {stats.accepted_steps:7d} {stats.rhs_evaluations:9d} "
              f"{1e6 * per[label]:8.3f}")
    (a, (ca, _)), (b, (cb, _)) = rows.items()
    print(f"ratio clustered / separate: {per[b] / per[a]:.3f} per derivative evaluation, "
          f"{cb / ca:.3f} per run")
    _linearize_table(args.repeat)


def _linearize_table(repeat: int) -> None:
    """CPU time of linearize (passive; the prisms are not equilibria: warning silenced) and of
    actuated(cables=...) on the clustered prism, min of `repeat` x 20 calls."""
    import warnings

    print(f"\nlinearize, rigid bars, kind='passive'; CPU per call, min of {repeat} x 20 calls")
    print(f"{'case':40s} {'ms/call':>8s}")
    separate, clustered = tc.catalog.prism(), tc.catalog.prism(clustered=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = tc.linearize(clustered)
        for label, call in (
                ("prism-3, separate strings", lambda: tc.linearize(separate)),
                ("prism-3, rings as cables", lambda: tc.linearize(clustered)),
                ("  then .actuated(cables=[0, 1])", lambda: model.actuated(cables=[0, 1]))):
            call()
            times = []
            for _ in range(repeat):
                start = time.process_time()
                for _ in range(20):
                    call()
                times.append((time.process_time() - start) / 20)
            print(f"{label:40s} {1e3 * min(times):8.3f}")


if __name__ == "__main__":
    main()
