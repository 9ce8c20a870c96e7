"""static_equilibrium (issue 12 item 1): oracles for the Newton solve under loads.

Oracles: central finite differences of the unbalanced force against the analytic tangent; the
dynamics (accelerations ~ 0 and a 2 s simulation that stays put); a closed-form pendulum sag;
the compliance at a loaded equilibrium against finite differences of the static solve.
"""

import re

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.statics.solve import static_tangent, unbalanced_force

G = (0.0, 0.0, -9.806)


def prestressed(structure, gamma_min=20.0):
    return tc.equilibrium(structure, gamma_min=gamma_min).structure


def test_tangent_matches_finite_differences_of_the_residual():
    s = prestressed(tc.catalog.prism(3)).with_gravity(G)
    q = s.nodes.reshape(-1) + 1e-3 * np.sin(np.arange(18.0))
    psi = np.array([-30.0, -25.0, -40.0])
    K = static_tangent(s, q, psi)
    h = 1e-6
    fd = np.column_stack([
        -(unbalanced_force(s, q + h * e, bar_force_densities=psi)
          - unbalanced_force(s, q - h * e, bar_force_densities=psi)) / (2 * h)
        for e in np.eye(18)])
    assert np.abs(K - fd).max() <= 1e-6 * np.abs(K).max()


@pytest.mark.parametrize("bars", ["rigid", "compressible"])
def test_prism_under_gravity_is_an_equilibrium_of_the_dynamics(bars):
    s = tc.equilibrium(tc.catalog.prism(3), gamma_min=20.0, bars=bars).structure.with_gravity(G)
    with pytest.raises(tc.PrestressError, match="configuration='free'"):
        tc.equilibrium(s, gamma_min=20.0)  # the built geometry cannot hold gravity
    r = tc.static_equilibrium(s, bars=bars)
    # compressible bars (k_b = E A / l ~ 2e7 N/m) round their law's force to eps k_b l ~ 4e-9 N
    assert r.relative_residual <= (1e-10 if bars == "rigid" else 1e-8)
    assert r.constraint_violation <= 1e-14 and r.stable
    qdd, _ = tc.accelerations(r.structure, bars=bars)
    assert np.abs(qdd[r.structure.free_coordinates]).max() <= 1e-8
    # the reactions carry the whole weight (a compressible bar's mass follows its length)
    assert r.reactions[:, 2].sum() == pytest.approx(9.806 * r.structure.total_mass, rel=1e-9)


def test_quadratic_convergence():
    s = prestressed(tc.catalog.icosahedron(on_face=True).with_gravity((0, 0, 0)))
    r = tc.static_equilibrium(s.with_gravity(G))
    res = r.history.residual
    tail = res[res > 0][-4:-1]  # the last one is at the rounding floor
    # each step squares the error (up to a constant): the log ratios double
    assert np.log(tail[-1] / tail[-2]) / np.log(tail[-2] / tail[-3]) > 1.6


@pytest.mark.slow
def test_simulation_started_there_stays():
    s = tc.catalog.icosahedron(on_face=True)
    r = tc.static_equilibrium(s)
    traj = tc.simulate(r.structure, 2.0)
    drift = np.linalg.norm(traj.nodes - r.structure.nodes, axis=2).max()
    assert drift <= 1e-9


def test_pendulum_sag_closed_form():
    """A bar pinned at node 0, its tip node 1 held by a spring from node 2 above node 0.

    Minimal coordinate: the bar angle theta from the horizontal (down positive). The moment
    balance about node 0 of the tip weight W (half the bar's weight plus the point mass) and the
    spring force k (l - l0) along the spring gives the closed form solved here by bisection on
    one scalar equation, independent of the Newton solver.
    """
    L, H, k, l0, m = 1.0, 1.0, 200.0, 1.3, 2.0
    s = tc.Structure([[0, 0, 0], [L, 0, 0], [0, 0, H]],
                     bars=[{"nodes": (0, 1), "density": 500.0, "radius": 0.01}],
                     strings=[{"nodes": (1, 2), "kind": "spring", "stiffness": k,
                               "rest_length": l0}],
                     fixed={0: "xyz", 1: "y", 2: "xyz"}, point_masses=[{"node": 1, "mass": m}],
                     gravity=G)
    W = 9.806 * (m + s.bar_masses[0] / 2 + 0.0)  # the bar's other half sits on the pin

    def moment(theta):  # about node 0, positive = lifting the tip
        tip = np.array([L * np.cos(theta), -L * np.sin(theta)])
        d = np.array([0.0, H]) - tip
        l = np.linalg.norm(d)
        force = k * (l - l0) * d / l
        return tip[0] * force[1] - tip[1] * force[0] - W * tip[0]

    lo, hi = 0.0, 1.2  # moment < 0 at 0 (the tip sinks), > 0 at 1.2
    assert moment(lo) < 0 < moment(hi)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if np.sign(moment(mid)) == np.sign(moment(lo)) else (lo, mid)
    theta = 0.5 * (lo + hi)
    r = tc.static_equilibrium(s)
    assert r.q[3:6] == pytest.approx([L * np.cos(theta), 0.0, -L * np.sin(theta)], abs=1e-10)


def test_load_stepping_when_the_full_load_fails():
    s = prestressed(tc.catalog.prism_tower(5))
    f = np.zeros((s.n_nodes, 3))
    f[-3:, 0] = 20.0
    # the potential-merit line search takes the full load in ~20 steps: 12 are too few
    r = tc.static_equilibrium(s, loads=f, max_iterations=12)
    assert r.history.failed_load_steps[0] == 1.0 and len(r.history.load_steps) > 1
    assert r.history.load_steps[-1] == 1.0 and r.relative_residual <= 1e-10


def test_free_floating_structure_under_gravity_is_a_mechanism():
    ico = tc.catalog.icosahedron().with_gravity(G)
    with pytest.raises(tc.MechanismError, match=r"rigid-body mechanism.*node \d+ along \(0, 0, -1\)"):
        tc.static_equilibrium(ico)


def test_sliding_bar_is_a_mechanism_naming_nodes_and_direction():
    s = tc.Structure([[0, 0, 0], [1, 0, 0], [2, 0, 0]],
                     bars=[{"nodes": (1, 2), "material": "aluminium", "radius": 0.01}],
                     strings=[], fixed={0: "xyz", 1: "yz", 2: "yz"},
                     point_masses=[{"node": 0, "mass": 1.0}])
    f = np.zeros((3, 3))
    f[2, 0] = 1.0
    with pytest.raises(tc.MechanismError, match=r"node 2 along \(1, 0, 0\), node 1 along") as err:
        tc.static_equilibrium(s, loads=f)
    assert err.value.nodes == (2, 1)


def test_free_floating_self_equilibrated_loads_use_the_gauge():
    ico = prestressed(tc.catalog.icosahedron())
    f = np.zeros((12, 3))
    f[0], f[1] = ico.nodes[0] - ico.nodes[1], ico.nodes[1] - ico.nodes[0]  # stretch bar 0
    r = tc.static_equilibrium(ico, loads=f, bars="compressible")
    assert r.relative_residual <= 1e-8 and r.displacement > 0  # eps k_b l rounding floor


def test_compliance_at_a_loaded_equilibrium_matches_finite_differences():
    s = tc.catalog.icosahedron(on_face=True)
    r = tc.static_equilibrium(s)
    C = tc.compliance(r.structure)
    df = np.zeros((12, 3))
    df[5] = [0.3, -0.2, 0.5]
    h = 1e-4
    plus = tc.static_equilibrium(r.structure, loads=h * df).q
    minus = tc.static_equilibrium(r.structure, loads=-h * df).q
    fd = (plus - minus).reshape(-1, 3) / (2 * h)
    assert np.abs(C.displacement(df) - fd).max() <= 1e-6 * np.abs(fd).max()


def test_invalid_arguments():
    s = tc.catalog.prism(3)
    with pytest.raises(ValueError, match="bars must be"):
        tc.static_equilibrium(s, bars="soft")
    with pytest.raises(ValueError, match="rtol"):
        tc.static_equilibrium(s, rtol=2.0)
    with pytest.raises(ValueError, match=r"loads must have shape \(6, 3\)"):
        tc.static_equilibrium(s, loads=np.ones(5))
    with pytest.raises(TypeError, match="Structure"):
        tc.static_equilibrium("prism")


def test_repr_and_summary():
    r = tc.static_equilibrium(tc.catalog.icosahedron(on_face=True))
    assert "\n" not in repr(r) and len(repr(r)) < 220
    assert r.route == "newton" and "route='newton'" in repr(r) and r.fallbacks == 0
    assert r.history.routes == ("newton: answered",) and "routes: newton: answered" in str(r)
    assert "stable" in r.summary() and "load steps: 1" in str(r)


def test_soft_slender_tower_converges_without_load_steps():
    # 96 bars, 0.01 N across the top: the |r| line search cut 20 of 23 steps; judged by the
    # total potential after the first cut step, 5 Newton steps (measured), no load stepping
    s = prestressed(tc.catalog.prism_tower(32))
    f = np.zeros((s.n_nodes, 3))
    f[-3:, 0] = 0.01
    r = tc.static_equilibrium(s, loads=f)
    assert r.history.iterations < 10 and r.history.failed_load_steps == ()
    assert r.relative_residual <= 1e-8 and r.stable
    assert r.displacement == pytest.approx(0.1893, abs=1e-4)


def test_total_potential_is_minus_the_residual_by_finite_differences():
    from tenscontrol.mechanics.rigid.model import gravity_vector
    from tenscontrol.statics.merit import total_potential
    s = prestressed(tc.catalog.prism_tower(3)).with_gravity(G)
    rng = np.random.default_rng(0)
    q = s.nodes.reshape(-1) + 0.01 * rng.standard_normal(3 * s.n_nodes)
    f = 0.1 * rng.standard_normal(3 * s.n_nodes)
    free = np.asarray(s.free_coordinates)
    offset = 0.05 * rng.standard_normal(free.size)
    # bar forces held at zero: the potential's gradient is the strings', gravity's and loads'
    R = unbalanced_force(s, q, loads=f, bar_force_densities=np.zeros(s.n_bars))
    R[free] -= offset
    h, grad = 1e-6, np.zeros_like(q)
    for i in range(q.size):
        e = np.zeros_like(q)
        e[i] = h
        grad[i] = (total_potential(s, q + e, gravity_vector(s) + f, free, offset)[0]
                   - total_potential(s, q - e, gravity_vector(s) + f, free, offset)[0]) / (2 * h)
    assert np.abs(grad + R).max() <= 1e-8 * np.abs(R).max()


def test_upright_pendulum_between_springs_buckles_on_its_loading_path():
    # an upright pendulum between two soft horizontal springs (2 k < m g / L), started off
    # upright: unstable there under gravity, but the springs hold it upright without it (a
    # stable unloaded start), so the load is applied from there, as a loading history, and
    # it buckles where the swing stiffness 2 k - t W / L passes zero: t* = 2 k L / W, W the
    # weight on node 1 (its point mass and half the bar's). Newton at the full load reached
    # the upright, unstable equilibrium instead (returned with the warning); an upright
    # pendulum without a stable unloaded start still is (test_static_stability)
    s = tc.Structure([[0, 0, 0], [0, 0, 1.0], [2, 0, 1], [-2, 0, 1]],
                     bars=[{"nodes": (0, 1), "density": 500.0, "radius": 0.01}],
                     strings=[{"nodes": (1, j), "kind": "spring", "stiffness": 3.0,
                               "rest_length": 2.0} for j in (2, 3)],
                     fixed={0: "xyz", 1: "y", 2: "xyz", 3: "xyz"},
                     point_masses=[{"node": 1, "mass": 1.0}], gravity=G)
    q = s.nodes.reshape(-1).copy()
    q[3], q[5] = 0.1, np.sqrt(1 - 0.1 ** 2)
    with pytest.raises(tc.StaticsError, match=r"loses stability between") as info:
        tc.static_equilibrium(s, q=q)
    a, b, near = (float(v) for v in re.search(
        r"between ([\d.e-]+) and ([\d.e-]+) of the load \(near ([\d.e-]+)",
        str(info.value)).groups())
    star = 2 * 3.0 * 1.0 / ((1.0 + 0.5 * s.bar_masses[0]) * 9.806)  # 0.5673
    assert a <= star <= b and b - a <= 5e-3 * b
    # the error names the routes: Newton skipped (unstable start), the loading path buckled
    routes = info.value.history.routes
    assert info.value.route == "unloaded start + path" and routes[0].startswith("newton: skipped")
    assert routes[-1].startswith("unloaded start + path: loses stability near")
    assert near == pytest.approx(star, rel=1e-3)


def steel_tower(stages):
    s = tc.catalog.prism_tower(stages, string_material="steel")
    return tc.equilibrium(s, gamma_min=200.0).structure


def test_path_tangent_matches_finite_differences_of_the_path():
    # 10-stage steel tower under 30 g: its linear response to the full load turns a member by
    # 10 rad (Newton at the full load failed after 50 iterations), so from this stable start
    # the path is followed at once, no Newton row at the full load before it
    from tenscontrol.statics import solve
    s = steel_tower(10).with_gravity((0.0, 0.0, -30 * 9.806))
    r = tc.static_equilibrium(s, max_iterations=20)
    steps = r.history.load_steps
    assert r.history.routes[0].startswith("newton: skipped (its linear response turns")
    assert r.route == "path" and r.history.routes[-1] == "path: answered"
    assert r.history.failed_load_steps[:1] != (1.0,) and len(steps) > 2 and steps[-1] == 1.0
    assert np.all(np.diff(steps) > 0) and r.relative_residual <= 1e-10 and r.stable
    assert r.history.load_factor[0] < 1.0
    # dq/dt of the predictor against central differences of equilibria at t -+ h
    p = solve._problem(s, None, "rigid")
    q0 = s.nodes.reshape(-1)
    r0 = solve._forces(p, q0, np.zeros(p.free.size))[0]
    log = solve._Log([], [], [])
    at = {}
    for t in (0.2, 0.2 - 1e-4, 0.2 + 1e-4):
        ok, at[t] = solve._solve(p, q0 if not at else at[0.2], t, (1 - t) * r0, 1e-9, 50, log)
        assert ok
    slope = solve._path_tangent(p, at[0.2], 0.2, r0, 1.0)[1]
    fd = (at[0.2 + 1e-4] - at[0.2 - 1e-4]) / 2e-4
    # measured 9e-8 of the largest slope (h^2 truncation and the solves' 1e-9 N tolerance)
    assert np.abs(slope - fd).max() <= 5e-7 * np.abs(slope).max()


@pytest.mark.slow
def test_tower_that_buckles_under_its_weight_gives_the_buckling_load():
    # 128-stage (384-bar) steel tower: stable without gravity, it buckles at 0.0183 of its
    # weight (benchmarks/bench_statics.py --buckling: the smallest reduced stiffness of the
    # straight path, solved at fixed fractions of gravity, passes zero there, by secant on
    # lambda(t); the straight path goes on, unstable: a bifurcation); the path followed stops
    # where it loses stability, the bracket narrowed to 0.5 %
    s = steel_tower(128).with_gravity(G)
    with pytest.raises(tc.StaticsError, match=r"loses stability between") as info:
        tc.static_equilibrium(s)
    a, b, near = (float(v) for v in re.search(
        r"between ([\d.e-]+) and ([\d.e-]+) of the load \(near ([\d.e-]+)",
        str(info.value)).groups())
    assert a <= near <= b and b - a <= 5e-3 * b
    assert near == pytest.approx(0.0183, rel=1e-2)


def test_tower_from_a_start_out_of_equilibrium_gives_the_buckling_load():
    # the catalog's 64-stage (192-bar) nylon tower at rest fraction 0.95: its nodes are no
    # equilibrium, and the homotopy from them is unstable; the path from its unloaded
    # equilibrium loses stability at 0.001657 of its weight (benchmarks/bench_statics.py
    # --buckling: secant on the straight path's smallest reduced stiffness, 0.00166 to 3
    # digits; bench_statics --towers before this path: Newton failed in load steps)
    s = tc.catalog.prism_tower(64, rest_fraction=0.95, gravity=G)
    with pytest.raises(tc.StaticsError, match=r"loses stability between") as info:
        tc.static_equilibrium(s)
    near = float(re.search(r"\(near ([\d.e-]+)", str(info.value)).group(1))
    assert near == pytest.approx(0.001657, rel=5e-3)


def test_first_arc_is_the_largest_halving_within_the_turn_limit():
    # the 10-stage steel tower under 30 g (above): its linear response turns a member by 10
    # rad, so the first arc is halved; the turn of its linear prediction, recomputed here
    # from the node differences, is within the limit, and twice the arc's is not
    from tenscontrol.statics import continuation, solve
    s = steel_tower(10).with_gravity((0.0, 0.0, -30 * 9.806))
    p = solve._problem(s, None, "rigid")
    q0 = s.nodes.reshape(-1)
    r0 = solve._forces(p, q0, np.zeros(p.free.size))[0]
    slope = solve._path_tangent(p, q0, 0.0, r0, 1.0)[1]
    scale = float(np.abs(slope).max())
    tangent, slope = solve._path_tangent(p, q0, 0.0, r0, scale)
    ds = continuation._first_arc(p, q0, slope, tangent[1])

    def turn(arc):
        dq = (arc * tangent[1] * slope).reshape(-1, 3)
        nodes = np.vstack([s.string_nodes, s.bar_nodes])
        d = s.nodes[nodes[:, 1]] - s.nodes[nodes[:, 0]]
        return np.max(np.linalg.norm(dq[nodes[:, 1]] - dq[nodes[:, 0]], axis=1)
                      / np.linalg.norm(d, axis=1))

    assert ds < 0.5 and turn(ds) <= continuation._FIRST_TURN < turn(2 * ds)


def test_between_interpolates_between_the_nearest_points():
    from tenscontrol.statics.continuation import _between
    q = {t: np.full(3, 10.0 * t) + np.array([0.0, 1.0, t * t]) for t in (0.0, 1.0, 3.0)}
    points = sorted(q.items())
    # the chord of the two neighbours, not of the ends (which would pass 0.0 and 3.0)
    assert np.allclose(_between(points, 2.0), 0.5 * (q[1.0] + q[3.0]))
    assert np.allclose(_between(points, 0.25), 0.75 * q[0.0] + 0.25 * q[1.0])
    assert np.allclose(_between(points, 3.0), q[3.0])
