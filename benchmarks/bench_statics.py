"""Static equilibrium under gravity (issue 12): the figures of its "Must show" list.

For the icosahedron on a face, the 3-prism with its base fixed and two stacked prisms sharing
nodes (catalog.prism_tower(2)), prestressed at 20 N/m without gravity: the static solve under
gravity (residual relative to the weight, minimum string force density, Newton history) and
the largest node drift of a 2 s rigid-bar simulation started there; then
equilibrium(configuration="free") on the same structures; a load-stepping case; form-finding;
and the CPU time of the static solve on the 30-, 96- and 192-bar towers.

Usage: python benchmarks/bench_statics.py [--quick]   (--quick skips the simulations)
       python benchmarks/bench_statics.py --towers [--limit SECONDS] [--stages 10,32,...]
       (issue 20: static_equilibrium under gravity on prism towers of 30 .. 768 bars, the
       catalog's nylon tower at rest fraction 0.95 and a steel-string tower prestressed at
       200 N/m; each case stops after --limit CPU seconds, default 120; the verdict: stands,
       buckles at the error's load fraction, or an unstable equilibrium returned with the
       warning, its buckling fraction then measured apart as by --buckling)
       python benchmarks/bench_statics.py --buckling [--stages 10,32,...]
       (issue 20: the physical verdict on the same towers, independent of the solver's path
       following: the load fraction where the straight path's smallest reduced stiffness
       crosses zero, bracketed by a stable and an unstable equilibrium, a dense check at 192
       bars, and the load-displacement slope there, finite for a bifurcation)
       python benchmarks/bench_statics.py --result [--stages 32,64,...]
       (issue 20: CPU of the result's stability test, dense null space against sparse
       Lanczos, and of the whole static_equilibrium on either path)
"""

import math
import signal
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


class _OutOfTime(Exception):
    pass


def _tower(kind, stages):
    """The catalog's nylon tower at rest fraction 0.95, or steel strings prestressed at
    200 N/m (tc.equilibrium without gravity), under gravity."""
    if kind == "nylon":
        return tc.catalog.prism_tower(stages, rest_fraction=0.95, gravity=G)
    s = tc.catalog.prism_tower(stages, string_material="steel")
    return tc.equilibrium(s, gamma_min=200.0).structure.with_gravity(G)


def _outcome(error):
    """The StaticsError's verdict in a few words: where the path lost stability and turned."""
    import re
    text = str(error)
    found = [f"{what} {m.group(1)}" for what, pattern in
             (("buckles near", r"loses stability between [\d.e-]+ and [\d.e-]+ of the load "
                                 r"\(near ([\d.e-]+)"),
              ("turns back at", r"turns back at ([\d.e-]+)"),
              ("failed at", r"Newton failed at load factor ([\d.e-]+)"))
             for m in [re.search(pattern, text)] if m]
    return f"{type(error).__name__}: " + (", ".join(found) if found else text[:60])


def _buckling_fraction(error):
    """The load fraction where the error says the path lost stability, or None."""
    import re
    m = re.search(r"loses stability between [\d.e-]+ and [\d.e-]+ of the load \(near "
                  r"([\d.e-]+)", str(error))
    return float(m.group(1)) if m else None


def _verdict(result, error):
    """The physical verdict: stands (a stable equilibrium under the full load), buckles
    (the StaticsError's measured load fraction), or what else happened."""
    if result is not None:
        return "stands" if result.stable else "unstable equilibrium returned (warned)"
    if isinstance(error, _OutOfTime):
        return "no answer"
    return "buckles" if _buckling_fraction(error) is not None else "fails"


def tower_table(stages_list, limit):
    """Newton iterations, line-search trial points, load steps and CPU of the towers under
    gravity, the verdict (stands: a stable equilibrium; buckles: the StaticsError's load
    fraction where the path of equilibria loses stability; an unstable equilibrium found by
    Newton at the full load is returned with a warning) and the growth exponent of the CPU
    time from 96 bars to the largest size that gave an answer (solved or buckling error)."""
    signal.signal(signal.SIGPROF, lambda *_: (_ for _ in ()).throw(_OutOfTime()))
    print(f"static_equilibrium under gravity, prism towers (CPU limit {limit:g} s a case)")
    print(f"{'tower':<7}{'bars':>5}{'its':>6}{'trials':>8}{'trials/it':>10}{'steps':>7}"
          f"{'failed':>7}{'CPU [s]':>9}{'rel. res.':>10}{'buckles at':>12}  verdict")
    for kind in ("nylon", "steel"):
        answered = {}
        for stages in stages_list:
            s = _tower(kind, stages)
            signal.setitimer(signal.ITIMER_PROF, limit)
            t0 = time.process_time()
            r, error = None, None
            try:
                r = tc.static_equilibrium(s)
                h, res = r.history, f"{r.relative_residual:>10.1e}"
            except (_OutOfTime, tc.StaticsError) as e:
                error = e
                h, res = getattr(e, "history", None), f"{'':>10}"
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
            cpu = time.process_time() - t0
            verdict = _verdict(r, error)
            if verdict in ("stands", "buckles"):
                answered[s.n_bars] = cpu
            star = None if error is None else _buckling_fraction(error)
            if r is not None and not r.stable:  # measured apart, after the timed solve
                star = _independent_fraction(kind, stages)
                verdict += ("" if star is None else
                            "; buckles at the fraction shown (secant, as --buckling)")
            its, trials = (h.iterations, int(h.trials.sum())) if h is not None else (0, 0)
            steps, failed = ((len(h.load_steps), len(h.failed_load_steps)) if h is not None
                             else (0, 0))
            detail = "" if verdict in ("stands", "buckles") or error is None else (
                f": {_outcome(error)}" if isinstance(error, tc.StaticsError) else
                f" in {limit:g} s")
            print(f"{kind:<7}{s.n_bars:>5}{its:>6}{trials:>8}{trials / max(its, 1):>10.2f}"
                  f"{steps:>7}{failed:>7}{cpu:>9.2f}{res}"
                  f"{'' if star is None else f'{star:.4g}':>12}  {verdict}{detail}")
        sizes = sorted(n for n in answered if n >= 96)
        if len(sizes) >= 2:
            a, b = sizes[0], sizes[-1]
            exponent = math.log(answered[b] / answered[a]) / math.log(b / a)
            print(f"{kind}: CPU growth exponent {a} -> {b} bars over the cases that gave an "
                  f"answer (a stable equilibrium or the buckling error): {exponent:.2f}")
        else:
            print(f"{kind}: fewer than two sizes from 96 bars gave an answer: no exponent")


def _straight_path(kind, stages, t, q=None):
    """static_equilibrium of the tower under t times gravity from q (the public API only)."""
    base = _tower(kind, stages).with_gravity((0.0, 0.0, 0.0))
    s = base.with_gravity(tuple(t * g for g in G))
    return tc.static_equilibrium(s, q=q)


def _top_height(r):
    return float(r.q.reshape(-1, 3)[-3:, 2].mean())


def _secant_fraction(kind, stages, h, r0, rh):
    """(t*, the equilibrium at the first estimate): two secant steps on the smallest reduced
    stiffness lambda(t) of the straight path from the equilibria r0 (t = 0) and rh (t = h)."""
    lam0 = r0.min_stiffness
    star = h * lam0 / (lam0 - rh.min_stiffness)
    rs = _straight_path(kind, stages, star, r0.q)
    pair = (h, rh.min_stiffness) if abs(h - star) < star else (0.0, lam0)
    return star - rs.min_stiffness * (star - pair[0]) / (rs.min_stiffness - pair[1]), rs


def _independent_fraction(kind, stages):
    """The buckling load fraction of the straight path by :func:`_secant_fraction` (the
    --buckling table's), for a tower whose full-load Newton returned an unstable equilibrium;
    None if it is unstable without gravity or does not soften."""
    h = 0.01 * min(1.0, (32 / stages) ** 3)
    r0 = _straight_path(kind, stages, 0.0)
    if r0.min_stiffness <= 0:
        return None
    rh = _straight_path(kind, stages, h, r0.q)
    return None if rh.min_stiffness >= r0.min_stiffness else _secant_fraction(
        kind, stages, h, r0, rh)[0]


def buckling_table(stages_list):
    """The physical verdict, independent of the path following: the straight path of
    equilibria under t times gravity, solved at fixed t from the unloaded equilibrium (t = 0),
    and its smallest reduced tangent stiffness lambda(t) (the result's min_stiffness). The
    load fraction t* where lambda crosses zero, by two secant steps on lambda(t) (linear in t
    on these towers) from t = 0 and h; the equilibria at 0.95 t* (stable) and 1.05 t*
    (unstable) bracket it. A limit point would make the load-displacement slope dz/dt of the
    top ring infinite at t*; its central difference there, against the secant from t = 0 to h,
    tells a bifurcation (finite slope, the straight path goes on) from a fold. At <= 200
    free coordinates the stability test is a dense eigensolve already; at 192 bars the
    sparse value at 1.05 t* is checked against a dense eigensolve of the same matrix. The
    first fraction h = 0.01 (32 / stages)^3 at most 0.01 (self-weight buckling loads of a
    column fall as its length cubed): only the secant's start, t* does not depend on it."""
    print("\nthe straight path under t x gravity: where the smallest reduced stiffness "
          "crosses zero")
    print(f"{'tower':<8}{'bars':>6}{'lam(0) [N/m]':>14}{'t*':>10}{'lam(.95t*)':>12}"
          f"{'lam(1.05t*)':>13}{'dense diff':>12}{'dz/dt 0..h':>12}{'dz/dt at t*':>13}"
          f"{'CPU [s]':>9}  verdict")
    for kind in ("nylon", "steel"):
        for stages in stages_list:
            t0, h = time.process_time(), 0.01 * min(1.0, (32 / stages) ** 3)
            r0 = _straight_path(kind, stages, 0.0)
            lam0 = r0.min_stiffness
            if lam0 <= 0:
                print(f"{kind:<8}{3 * stages:>6}{lam0:>14.4g}  unstable without gravity")
                continue
            rh = _straight_path(kind, stages, h, r0.q)
            if rh.min_stiffness >= lam0:
                r1 = _straight_path(kind, stages, 1.0, rh.q)
                print(f"{kind:<8}{3 * stages:>6}{lam0:>14.4g}  lam({h:g}) = "
                      f"{rh.min_stiffness:.4g}, lam(1) = {r1.min_stiffness:.4g} N/m: stiffens "
                      "under its weight, stands")
                continue
            star, rs = _secant_fraction(kind, stages, h, r0, rh)
            below = _straight_path(kind, stages, 0.95 * star, rs.q)
            above = _straight_path(kind, stages, 1.05 * star, rs.q)
            diff = float("nan")
            if 3 * stages == 192:
                _, rd = _result_cpu(above.structure, None,
                                    above.q, False)
                diff = abs(rd.min_stiffness - above.min_stiffness) / abs(rd.min_stiffness)
            slope0 = (_top_height(rh) - _top_height(r0)) / h
            slope = (_top_height(above) - _top_height(below)) / (0.1 * star)
            fold = not (below.stable and not above.stable) or abs(slope) > 10 * abs(slope0)
            verdict = ("no bifurcation bracketed" if fold else
                       f"stands: stable up to {star:.3g} of its weight" if star > 1.0 else
                       f"buckles at {star:.3g} of its weight (bifurcation; straight path "
                       "goes on, unstable)")
            print(f"{kind:<8}{3 * stages:>6}{lam0:>14.4g}{star:>10.4g}"
                  f"{below.min_stiffness:>12.3g}{above.min_stiffness:>13.3g}{diff:>12.1e}"
                  f"{slope0:>12.3g}{slope:>13.3g}{time.process_time() - t0:>9.1f}  {verdict}")


def _result_cpu(structure, loads, q, sparse):
    """CPU of the final certification (solve._result: residual, reactions, stability test) at
    q, on the sparse or the dense path, and its min stiffness."""
    from dataclasses import replace
    from tenscontrol.statics import solve, spectrum
    p = solve._problem(structure, loads, "rigid")
    gauge = solve.loaded_rigid_fields(structure, q, p.load)[p.free]
    p = replace(p, gauge=gauge, mats=solve.MemberMatrices(
        structure.string_nodes, structure.bar_nodes, p.index, gauge, True))
    saved = spectrum.SPARSE_MIN_FREE
    spectrum.SPARSE_MIN_FREE = saved if sparse else 10 ** 9
    try:
        t0 = time.process_time()
        r = solve._result(p, q, solve._Log([], [], []))
        return time.process_time() - t0, r
    finally:
        spectrum.SPARSE_MIN_FREE = saved


def result_table(stages_list):
    """Issue 20: the cost of static_equilibrium's result (the stability test) on the dense
    null-space path and the sparse one (inertia count and shift-invert Lanczos), and of the
    whole static_equilibrium on either path, for towers prestressed at 20 N/m
    (tc.equilibrium, no gravity), unloaded (the start is the equilibrium: no Newton step) and
    under 0.01 N along x on each top node."""
    from tenscontrol.statics import spectrum
    print("static_equilibrium's result: dense null space + eigvalsh vs sparse (inertia, "
          "Lanczos)\n(towers prestressed at 20 N/m, no gravity; load on each top node)")
    print(f"{'bars':>6}{'free':>7}{'load':>6}{'result dense':>14}{'result sparse':>15}"
          f"{'solve dense':>13}{'solve sparse':>14}{'min stiffness [N/m]':>21}"
          f"{'rel. diff':>11}{'fallbacks':>11}")
    for stages in stages_list:
        s = tc.equilibrium(tc.catalog.prism_tower(stages), gamma_min=20.0).structure
        for load in (0.0, 0.01):
            f = np.zeros((s.n_nodes, 3))
            f[-3:, 0] = load
            solves, r = [], None
            for threshold in (10 ** 9, spectrum.SPARSE_MIN_FREE):
                saved, spectrum.SPARSE_MIN_FREE = spectrum.SPARSE_MIN_FREE, threshold
                t0 = time.process_time()
                try:
                    r = tc.static_equilibrium(s, loads=f)
                    solves.append(f"{time.process_time() - t0:>.2f}")
                except tc.StaticsError as error:  # e.g. "Mech 11.7": MechanismError after 11.7 s
                    solves.append(f"{type(error).__name__[:4]} {time.process_time() - t0:.2f}")
                spectrum.SPARSE_MIN_FREE = saved
            if r is None:
                print(f"{s.n_bars:>6}{len(s.free_coordinates):>7}{load:>6g}{'':>29}"
                      f"{solves[0]:>13}{solves[1]:>14}")
                continue
            dense, rd = _result_cpu(s, f, r.q, False)
            sparse, rs = _result_cpu(s, f, r.q, True)
            diff = abs(rs.min_stiffness - rd.min_stiffness) / abs(rd.min_stiffness)
            print(f"{s.n_bars:>6}{len(s.free_coordinates):>7}{load:>6g}{dense:>14.3f}"
                  f"{sparse:>15.3f}{solves[0]:>13}{solves[1]:>14}{rs.min_stiffness:>21.12g}"
                  f"{diff:>11.1e}{rs.dense_eigensolves:>11d}")


if __name__ == "__main__":
    if "--result" in sys.argv:
        args = sys.argv[1:]
        stages = ([int(v) for v in args[args.index("--stages") + 1].split(",")]
                  if "--stages" in args else [32, 64, 128, 256])
        result_table(stages)
        sys.exit()
    if "--buckling" in sys.argv:
        import warnings
        warnings.simplefilter("ignore")
        args = sys.argv[1:]
        stages = ([int(v) for v in args[args.index("--stages") + 1].split(",")]
                  if "--stages" in args else [10, 32, 64, 128, 256])
        buckling_table(stages)
        sys.exit()
    if "--towers" in sys.argv:
        import warnings
        warnings.simplefilter("ignore")  # the "unstable equilibrium" warnings: see 'stable'
        args = sys.argv[1:]
        limit = float(args[args.index("--limit") + 1]) if "--limit" in args else 120.0
        stages = ([int(v) for v in args[args.index("--stages") + 1].split(",")]
                  if "--stages" in args else [10, 32, 64, 128, 256])
        tower_table(stages, limit)
        sys.exit()
    quick = "--quick" in sys.argv
    static_table(quick)
    free_table(quick)
    load_stepping()
    form_finding()
    timing()
