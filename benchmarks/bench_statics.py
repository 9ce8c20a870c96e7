"""Static equilibrium under gravity (issue 12): the figures of its "Must show" list.

For the icosahedron on a face, the 3-prism with its base fixed and two stacked prisms sharing
nodes (catalog.prism_tower(2)), prestressed at 20 N/m without gravity: the static solve under
gravity (residual relative to the weight, minimum string force density, Newton history) and
the largest node drift of a 2 s rigid-bar simulation started there; then
equilibrium(configuration="free") on the same structures; a load-stepping case; form-finding;
and the CPU time of the static solve on the 30-, 96- and 192-bar towers.

Usage: python benchmarks/bench_statics.py [--quick]   (--quick skips the simulations)
"""

import sys
import time

import numpy as np

import tenscontrol as tc

G = (0.0, 0.0, -9.806)


def structures():
    return {"icosahedron on a face": tc.catalog.icosahedron(on_face=True),
            "3-prism, base fixed": tc.catalog.prism(3, gravity=G),
            "2 stacked prisms (shared nodes)": tc.catalog.prism_tower(2, gravity=G)}


def drift(structure, quick):
    if quick:
        return float("nan")
    traj = tc.simulate(structure, 2.0)
    return float(np.linalg.norm(traj.nodes - structure.nodes, axis=2).max())


def static_table(quick):
    print("static_equilibrium under gravity at the rest lengths of a 20 N/m prestress (no gravity)")
    print(f"{'structure':<34}{'weight [N]':>11}{'residual [N]':>14}{'rel. weight':>12}"
          f"{'min gamma':>11}{'sag [m]':>9}{'its':>5}{'drift 2 s [m]':>15}")
    for name, s in structures().items():
        rest = tc.equilibrium(s.with_gravity((0, 0, 0)), gamma_min=20.0).structure
        r = tc.static_equilibrium(rest.with_gravity(G))
        weight = 9.806 * s.total_mass
        print(f"{name:<34}{weight:>11.4g}{r.residual:>14.3e}{r.residual / weight:>12.2e}"
              f"{r.gamma.min():>11.4g}{r.displacement:>9.4f}{r.history.iterations:>5d}"
              f"{drift(r.structure, quick):>15.3e}")
        print("   Newton:", ", ".join(f"{v:.2e}" for v in r.history.residual))


def free_table(quick):
    print("\nequilibrium(gamma_min=20, configuration='free'): prestress at the loaded configuration")
    print(f"{'structure':<34}{'max |qdd|':>11}{'min gamma':>11}{'sag [m]':>9}{'drift 2 s [m]':>15}")
    for name, s in structures().items():
        eq = tc.equilibrium(s, gamma_min=20.0, configuration="free")
        qdd, _ = tc.accelerations(eq.structure)
        print(f"{name:<34}{np.abs(qdd).max():>11.2e}{eq.gamma.min():>11.6g}"
              f"{eq.displacement:>9.4f}{drift(eq.structure, quick):>15.3e}")


def load_stepping():
    """prism_tower(5), 20 N along x on each top node: rigid bars (full load, and with a budget of
    12 Newton steps per run, which the full load exceeds) and compressible aluminium bars, whose
    |r| line search needs the load steps."""
    print("\nload stepping: prism_tower(5) prestressed at 20 N/m, 20 N along x on each top node")
    for label, bars, budget in (("rigid bars", "rigid", 50), ("rigid bars, 12 steps a run", "rigid", 12),
                                ("compressible bars", "compressible", 50)):
        s = tc.equilibrium(tc.catalog.prism_tower(5), gamma_min=20.0, bars=bars).structure
        f = np.zeros((s.n_nodes, 3))
        f[-3:, 0] = 20.0
        t0 = time.process_time()
        r = tc.static_equilibrium(s, loads=f, bars=bars, max_iterations=budget)
        cpu = time.process_time() - t0
        h = r.history
        print(f"  {label}: failed load factors {h.failed_load_steps}; reached {h.load_steps}; "
              f"Newton steps {h.iterations}; CPU {cpu:.2f} s; residual {r.residual:.2e} N "
              f"({r.relative_residual:.1e}); top moved {r.displacement:.3f} m; "
              f"{int(r.slack.sum())} slack strings")


def form_finding():
    print("\nform-finding: the span of a bar around a regular n-prism's axis")
    for n in (3, 4, 5):
        bars = [(k, n + k) for k in range(n)]
        strings = ([(k, (k + 1) % n) for k in range(n)]
                   + [(n + k, n + (k + 1) % n) for k in range(n)]
                   + [(k, n + (k - 1) % n) for k in range(n)])
        f = tc.form_find(2 * n, bars, strings, solve_for=[range(n), range(n, 3 * n)])
        N = f.nodes
        axis = N[n:].mean(0) - N[:n].mean(0)
        axis /= np.linalg.norm(axis)
        c = N[:n].mean(0)
        e1 = N[0] - c - axis * ((N[0] - c) @ axis)
        e1 /= np.linalg.norm(e1)
        v = N[n] - c
        span = abs(np.arctan2(v @ np.cross(axis, e1), v @ e1))
        print(f"  n={n}: {np.degrees(span):.12f} deg, closed form pi/2 + pi/n = "
              f"{np.degrees(tc.catalog.prestressable_twist(n)):.12f} deg, ring/side "
              f"{f.densities[n] / f.densities[-1]:.12f} (1/(2 sin(pi/n)) = "
              f"{1 / (2 * np.sin(np.pi / n)):.12f}), rank {f.rank}")
    f = tc.form_find(12, tc.catalog.ICOSAHEDRON_BARS, tc.catalog.ICOSAHEDRON_STRINGS)
    s = tc.catalog.icosahedron()
    print(f"  icosahedron: bar/string force density {f.densities[0] / f.densities[-1]:.15f} "
          f"(-3/2), string/bar length {s.string_lengths.mean() / s.bar_lengths.mean():.15f} "
          f"(sqrt(6)/4 = {np.sqrt(6) / 4:.15f}), rank {f.rank}, self-stress residual "
          f"{f.self_stress_residual:.1e}")


def timing():
    print("\nCPU time of static_equilibrium (towers prestressed at 20 N/m, no gravity, 0.01 N "
          "along x on each top node)")
    print(f"{'tower':<22}{'bars':>6}{'coords':>8}{'its':>5}{'CPU [s]':>9}{'residual rel.':>15}"
          f"{'top moved [m]':>15}{'failed load steps':>19}")
    for stages in (10, 32, 64):
        s = tc.equilibrium(tc.catalog.prism_tower(stages), gamma_min=20.0).structure
        f = np.zeros((s.n_nodes, 3))
        f[-3:, 0] = 0.01
        t0 = time.process_time()
        r = tc.static_equilibrium(s, loads=f)
        cpu = time.process_time() - t0
        print(f"{s.name:<22}{s.n_bars:>6}{3 * s.n_nodes:>8}{r.history.iterations:>5}"
              f"{cpu:>9.3f}{r.relative_residual:>15.2e}{r.displacement:>15.4f}"
              f"{len(r.history.failed_load_steps):>19}")


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    static_table(quick)
    free_table(quick)
    load_stepping()
    form_finding()
    timing()
