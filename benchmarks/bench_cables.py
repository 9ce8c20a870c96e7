"""CPU cost of simulating clustered cables against the same structure with separate strings.

Runs ``simulate`` (rigid bars, energy correction, rtol = atol = 1e-10, compiled step loop) on
``catalog.prism(clustered=True)`` (each ring one cable) and on ``catalog.prism()`` (the same
strings on their own, the same prestress), both from the same initial velocities, and prints
the CPU time of a run and per derivative evaluation, the minimum over the repeats. The two
structures move differently (a cable lets tension flow round its ring), so their step counts
differ: the cost per derivative evaluation is the like-for-like figure, the run time the
whole story. Then the CPU time of ``linearize`` on the two prisms and of turning the
clustered model's segment inputs into cable-tension inputs; last, a closed loop commanding
the cable (the Python step loop) against one commanding strings (the compiled loop).
Measures only; asserts nothing.

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
    _closed_loop_table(args.repeat)


def _prestressed_ring_cable():
    """The 3-prism at its self-stress (null vector of its equilibrium matrix), bottom fixed,
    the top ring one cable carrying the ring strings' common tension: an equilibrium."""
    base = tc.catalog.prism(3)
    N = base.nodes
    cols = []
    for pairs in (base.string_nodes, base.bar_nodes):
        for i, j in pairs:
            c = np.zeros_like(N)
            c[i], c[j] = N[i] - N[j], N[j] - N[i]
            cols.append(c.reshape(-1))
    w = np.linalg.svd(np.column_stack(cols))[2][-1]
    gamma = w[:base.n_strings] * 10 / np.abs(w).max() * np.sign(w[0])
    k, l = base.string_stiffness, base.string_lengths
    strings = [{"nodes": tuple(p), "kind": "string", "stiffness": kk,
                "rest_length": ll * (1 - g / kk), "damping": 0.3}
               for p, kk, ll, g in zip(base.string_nodes, k, l, gamma)]
    kc, T = k[3] / 3, gamma[3] * l[3]
    cable = {"strings": (3, 4, 5), "stiffness": kc, "rest_length": l[3:6].sum() - T / kc,
             "damping": 0.3}
    bars = [{"nodes": tuple(p), "radius": 0.01, "material": "aluminium"} for p in base.bar_nodes]
    return tc.Structure(N, bars, strings, fixed={0: "xyz", 1: "xyz", 2: "xyz"}, cables=[cable],
                        name="prism-3-cable-prestressed")


def _closed_loop_table(repeat: int) -> None:
    """simulate 2 s of LQR on that prism: commanding its six separate strings (compiled step
    loop) against commanding the ring cable alone (its tension applied in numpy: the Python
    loop)."""
    s = _prestressed_ring_cable()
    out = tc.Selection(nodes=[3, 4, 5], axes="xy")
    f = np.zeros((s.n_nodes, 3))
    f[3, 0] = 0.05
    print(f"\nsimulate 2 s under LQR (effort 1e-2, passive), a 0.05 N step on node 3 x, "
          f"rtol = atol = 1e-9; CPU, min of {repeat}")
    print(f"{'commanded':34s} {'run [s]':>9s} {'rhs evals':>9s} {'us/rhs':>8s}")
    linear = tc.linearize(s, kind="passive", outputs=out)
    # the strings lqr commands are the String.actuated ones that are not cable segments
    for label, model in (("the 6 separate strings (compiled)", linear),
                         ("ring cable 0 (Python loop)", linear.actuated(strings=[], cables=[0]))):
        ctrl = tc.lqr(model, effort=1e-2).controller
        tc.simulate(s, 0.01, controller=ctrl, loads=f)  # compile outside the timing
        times, stats = [], None
        for _ in range(repeat):
            start = time.process_time()
            stats = tc.simulate(s, 2.0, controller=ctrl, loads=f, rtol=1e-9, atol=1e-9).stats
            times.append(time.process_time() - start)
        print(f"{label:34s} {min(times):9.4f} {stats.rhs_evaluations:9d} "
              f"{1e6 * min(times) / stats.rhs_evaluations:8.2f}")


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
