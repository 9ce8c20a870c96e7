"""Compressible-bar model (docs/theory.md, "Compressible bars"): Euler-Lagrange terms against
finite differences of an independent kinetic energy, analytic Jacobians against finite differences,
energy
conservation, the rigid limit, the singular-mass check and input validation."""

import dataclasses

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import tenscontrol as tc
from tenscontrol.mechanics.compressible import kernels as CK
from tenscontrol.model import catalog
from tenscontrol.mechanics.compressible.model import bar_force_densities, compressible_model

MODES = [(kin, rad) for kin in ("consistent", "paper") for rad in (False, True)]


def rebuild(structure, bars=None, strings=None, point_masses=None):
    """A copy of `structure` with some member lists replaced."""
    pick = lambda new, old: old if new is None else new  # noqa: E731
    return tc.Structure(structure.nodes, pick(bars, structure.bars),
                        pick(strings, structure.strings), fixed=structure.fixed,
                        point_masses=pick(point_masses, structure.point_masses),
                        gravity=structure.gravity, name=structure.name)


def tbar_hdpe(damping=0.0):
    return catalog.tbar(bar_material="hdpe", damping=damping)


def loaded_prism():
    """3-prism with damped strings, bars 0.1 % longer at rest than built, a point mass, gravity."""
    s = catalog.prism(3, gravity=(0.0, 0.0, -9.806))
    bars = [dataclasses.replace(b, rest_length=1.001 * l) for b, l in zip(s.bars, s.bar_lengths)]
    strings = [dataclasses.replace(m, damping=0.5 + 0.1 * k) for k, m in enumerate(s.strings)]
    return rebuild(s, bars, strings, [tc.PointMass(4, 0.3)])


def fat_bare_prism():
    """3-prism of thick bars (r/l ~ 0.1) and no strings: only inertia and bar elasticity act,
    so the velocity terms N_T and their radius parts are not hidden behind other forces."""
    return rebuild(catalog.prism(3, bar_radius=0.15), strings=[])


def random_state(structure, seed, dq=0.01):
    """A moving state: free coordinates perturbed by ~dq [m], random velocities and forces."""
    rng = np.random.default_rng(seed)
    free = ~structure.fixed.reshape(-1)
    nq = 3 * structure.n_nodes
    q = structure.nodes.reshape(-1) + dq * rng.standard_normal(nq) * free
    return q, rng.standard_normal(nq) * free, 10 * rng.standard_normal(nq)


# ---- independent oracle: T(q, qd) from its physical description ---------------------------------
# (docs/theory.md, "Compressible bars")

def kinetic_energy(structure, q, qd, kinetic, include_radius):
    """Plain-numpy kinetic energy [J] of bars (free length) and point masses."""
    N, V = q.reshape(-1, 3), qd.reshape(-1, 3)
    T = 0.0
    for k, (i, j) in enumerate(structure.bar_nodes):
        m, l0 = structure.bar_masses[k], structure.bar_rest_lengths[k]
        bar = structure.bars[k]
        b, bd, vc = N[j] - N[i], V[j] - V[i], (V[i] + V[j]) / 2
        l = np.linalg.norm(b)
        r = bar.radius * (l / l0) ** (-bar.poisson)           # Poisson radius r(l)
        omega2 = np.sum(np.cross(b, bd) ** 2) / l**4          # |b x bd / l^2|^2, no spin
        section = m * r**2 / 4 if include_radius else 0.0     # cross-section's own inertia
        if kinetic == "paper":   # rigid cylinder of the current length: J_t = m (3 r^2 + l^2)/12
            T += 0.5 * m * vc @ vc + 0.5 * (m * l**2 / 12 + section) * omega2
        else:                    # uniform rod, axial velocity linear along it
            T += 0.5 * m * vc @ vc + 0.5 * (m / 12) * bd @ bd + 0.5 * section * omega2
    for pm in structure.point_masses:
        T += 0.5 * pm.mass * V[pm.node] @ V[pm.node]
    return T


def potential(structure, q):
    """Plain-numpy V = -G^T q + V_s + V_b [J]."""
    N = q.reshape(-1, 3)
    V = -tc.gravity_vector(structure) @ q
    for (i, j), k, l0 in zip(structure.bar_nodes, structure.bar_stiffness,
                             structure.bar_rest_lengths):
        V += 0.5 * k * (np.linalg.norm(N[j] - N[i]) - l0) ** 2
    for (i, j), k, l0, spring in zip(structure.string_nodes, structure.string_stiffness,
                                     structure.string_rest_lengths, structure.string_is_spring):
        l = np.linalg.norm(N[j] - N[i])
        if spring or l > l0:
            V += 0.5 * k * (l - l0) ** 2
    return V


def euler_lagrange_fd(T, q, qd, qdd, h=1e-5):
    """d/dt(dT/dqd) - dT/dq by finite differences of T(q, qd).

    T is quadratic in qd, so central differences in qd with unit steps are exact: p(q, v) =
    dT/dqd . v. Then d/dt dT/dqd = (d p/dq) qd + M qdd, the first by one directional central
    difference along qd, and dT/dq by central differences.
    """
    nq = q.size
    eye = np.eye(nq)

    def p(qq, v):
        return np.array([(T(qq, v + e) - T(qq, v - e)) / 2 for e in eye])

    s = h / np.linalg.norm(qd)
    ddt = (p(q + s * qd, qd) - p(q - s * qd, qd)) / (2 * s) + p(q, qdd)
    dTdq = np.array([(T(q + h * e, qd) - T(q - h * e, qd)) / (2 * h) for e in eye])
    return ddt - dTdq


def velocity_terms(structure, q, qd, kinetic, include_radius):
    model = compressible_model(structure, kinetic, include_radius)
    out = np.empty_like(q)
    CK.velocity_terms(q, qd, model.bars, out)
    return out


@pytest.mark.parametrize("kinetic,include_radius", MODES)
@pytest.mark.parametrize("make", [tbar_hdpe, loaded_prism, fat_bare_prism])
def test_euler_lagrange_terms_match_finite_differences_of_T(make, kinetic, include_radius):
    structure = make()
    q, qd, _ = random_state(structure, 3, dq=0.05)
    qdd = np.random.default_rng(4).standard_normal(q.size)
    T = lambda qq, vv: kinetic_energy(structure, qq, vv, kinetic, include_radius)  # noqa: E731
    oracle = euler_lagrange_fd(T, q, qd, qdd)
    M = tc.mass_matrix(structure, q, bars="compressible", kinetic=kinetic,
                       include_radius=include_radius)
    NT = velocity_terms(structure, q, qd, kinetic, include_radius)
    scale = np.abs(oracle).max()
    np.testing.assert_allclose(M @ qdd + NT, oracle, rtol=0, atol=1e-7 * scale)
    # the velocity terms alone (qdd = 0), to their own size: they are small beside M qdd, and
    # their radius parts smaller still (zero in "consistent" mode without the radius)
    NT_fd = euler_lagrange_fd(T, q, qd, np.zeros_like(q))
    np.testing.assert_allclose(NT, NT_fd, rtol=0,
                               atol=1e-6 * np.abs(NT_fd).max() + 1e-11 * scale)
    assert (np.abs(NT).max() > 1e-6 * scale) == (kinetic == "paper" or include_radius)
    # T = 1/2 qd^T M qd, and the energy adds the independent potential
    assert np.isclose(0.5 * qd @ M @ qd, T(q, qd), rtol=1e-13)
    E = tc.total_energy(structure, q, qd, bars="compressible", kinetic=kinetic,
                        include_radius=include_radius)
    assert np.isclose(E, T(q, qd) + potential(structure, q), rtol=1e-12)


@pytest.mark.parametrize("kinetic,include_radius", MODES)
def test_accelerations_satisfy_lagranges_equations(kinetic, include_radius):
    """On the free coordinates, d/dt dT/dqd - dT/dq = -dV/dq + f + f_d (undamped: f_d = 0)."""
    structure = rebuild(loaded_prism(), strings=catalog.prism(3).strings)
    q, qd, f = random_state(structure, 5, dq=1e-3)
    qdd, psi = tc.accelerations(structure, q, qd, loads=f, bars="compressible", kinetic=kinetic,
                                include_radius=include_radius)
    T = lambda qq, vv: kinetic_energy(structure, qq, vv, kinetic, include_radius)  # noqa: E731
    lhs = euler_lagrange_fd(T, q, qd, qdd)
    h, eye = 1e-6, np.eye(q.size)
    dV = np.array([(potential(structure, q + h * e) - potential(structure, q - h * e)) / (2 * h)
                   for e in eye])
    free = structure.free_coordinates
    rhs = (f - dV)[free]
    np.testing.assert_allclose(lhs[free], rhs, rtol=0, atol=1e-6 * np.abs(rhs).max())
    assert np.all(qdd[structure.fixed_coordinates] == 0.0)
    np.testing.assert_allclose(psi, bar_force_densities(structure, q), rtol=1e-14)


# ---- analytic Jacobians against central finite differences ------------------------------

def fd_columns(fun, x, h):
    """Central differences of fun at x, column by column, with step(s) h."""
    h = np.broadcast_to(h, x.shape)
    return np.column_stack([(fun(x + hk * e) - fun(x - hk * e)) / (2 * hk)
                            for e, hk in zip(np.eye(x.size), h)])


def assert_close(analytic, fd, tol=1e-6):
    scale = np.abs(fd).max()
    assert np.abs(analytic - fd).max() <= tol * max(scale, 1e-300), (
        np.abs(analytic - fd).max() / scale)


def damped_tbar():
    return tbar_hdpe(damping=1.0)


@pytest.mark.parametrize("kinetic,include_radius", MODES)
@pytest.mark.parametrize("make", [damped_tbar, loaded_prism, fat_bare_prism])
def test_jacobians_match_finite_differences(make, kinetic, include_radius):
    structure = make()
    opts = dict(kinetic=kinetic, include_radius=include_radius)
    q, qd, f = random_state(structure, 7, dq=0.01 if make is damped_tbar else 1e-3)
    opts["bars"] = "compressible"
    jac = tc.jacobians(structure, q, qd, loads=f, **opts)
    acc = lambda qq, vv, ff: tc.accelerations(structure, qq, vv, loads=ff, **opts)[0]  # noqa
    # qdd is quadratic in qd (N_T) plus linear (dampers): central differences in qd are exact
    # for any step, and a large one keeps rounding small
    assert_close(jac["dq"], fd_columns(lambda x: acc(x, qd, f), q, 1e-6))
    assert_close(jac["dqd"], fd_columns(lambda x: acc(q, x, f), qd, 0.1))
    np.testing.assert_allclose(jac["qdd"], acc(q, qd, f), rtol=1e-13, atol=1e-12)
    # control model: gamma and psi held at the passive values give the same qdd
    g, p = jac["gamma"], jac["bar_force_densities"]
    held = lambda qq=q, vv=qd, ff=f, gg=g, pp=p: tc.jacobians(  # noqa: E731
        structure, qq, vv, loads=ff, gamma=gg, bar_force_densities=pp, **opts)
    jh = held()
    np.testing.assert_allclose(jh["qdd"], jac["qdd"], rtol=1e-12, atol=1e-10)
    assert_close(jh["dq"], fd_columns(lambda x: held(qq=x)["qdd"], q, 1e-6))
    assert_close(jh["dqd"], fd_columns(lambda x: held(vv=x)["qdd"], qd, 0.1))
    if g.size:
        assert_close(jh["dgamma"], fd_columns(lambda x: held(gg=x)["qdd"], g, 1.0))
    assert_close(jh["dbar_force_densities"], fd_columns(lambda x: held(pp=x)["qdd"], p, 1.0))
    assert_close(jh["dloads"], fd_columns(lambda x: held(ff=x)["qdd"], f, 1.0))
    # the material stiffness is what separates the passive from the control model
    assert np.abs(jac["dq"] - jh["dq"]).max() > 1e-3 * np.abs(jac["dq"]).max()


def test_passive_dgamma_has_zero_columns_for_slack_strings():
    structure = tbar_hdpe()
    q = structure.nodes.reshape(-1).copy()
    q[[6, 9]] += [-0.01, 0.01]         # nodes 2, 3 closer: the top string m2 goes slack
    jac = tc.jacobians(structure, q, bars="compressible")
    assert jac["gamma"][2] == 0.0 and np.all(jac["dgamma"][:, 2] == 0.0)
    held = tc.jacobians(structure, q, bars="compressible", gamma=jac["gamma"],
                        bar_force_densities=jac["bar_force_densities"])
    np.testing.assert_allclose(jac["dgamma"][:, [1, 3]], held["dgamma"][:, [1, 3]], rtol=1e-14)
    assert np.abs(held["dgamma"][:, 2]).max() > 0


@pytest.mark.parametrize("kinetic,include_radius", MODES)
def test_kernel_jacobian_matches_finite_differences_of_kernel_rhs(kinetic, include_radius):
    structure = loaded_prism()
    kernel = compressible_model(structure, kinetic, include_radius).kernel
    q, qd, f = random_state(structure, 11, dq=1e-3)
    y = np.concatenate([q, qd, [0.3]])

    def rhs(x):
        dy = np.empty_like(x)
        CK.rhs(x, f, kernel, dy)
        return dy

    J = np.full((y.size, y.size), np.nan)     # the kernel must fill every entry
    CK.jacobian(y, f, kernel, J)
    nq = q.size
    # qdd is quadratic in qd: a larger step there only limits rounding
    fd = fd_columns(rhs, y, np.r_[np.full(nq, 1e-6), np.full(nq + 1, 0.1)])
    for rows in (slice(nq, 2 * nq), slice(2 * nq, None)):
        for cols in (slice(0, nq), slice(nq, 2 * nq)):
            assert_close(J[rows, cols], fd[rows, cols])
    np.testing.assert_array_equal(J[:nq, nq:2 * nq], np.eye(nq))
    assert np.all(J[:nq, :nq] == 0) and np.all(J[:, -1] == 0)
    qdd, _ = tc.accelerations(structure, q, qd, loads=f, bars="compressible", kinetic=kinetic,
                              include_radius=include_radius)
    np.testing.assert_array_equal(rhs(y)[nq:2 * nq], qdd)


# ---- energy ----------------------------------------------------------------------------

@pytest.mark.parametrize("kinetic,include_radius", MODES)
@pytest.mark.parametrize("damping", [0.0, 1.0])
def test_energy_balance_along_a_trajectory(kinetic, include_radius, damping):
    """Etot - w is constant (Hsu et al. (2021), eq. (35)); the undamped run conserves Etot."""
    structure = tbar_hdpe(damping)
    kernel = compressible_model(structure, kinetic, include_radius).kernel
    nq = 3 * structure.n_nodes
    f0 = np.zeros(nq)

    def rhs(t, y):
        dy = np.empty_like(y)
        CK.rhs(y, f0, kernel, dy)
        return dy

    y0 = np.concatenate([structure.nodes.reshape(-1), np.zeros(nq + 1)])
    sol = solve_ivp(rhs, (0, 0.5), y0, method="DOP853", rtol=1e-11, atol=1e-11)
    assert sol.success
    Y = sol.y.T
    E = CK.energies(Y, kernel)
    E0 = tc.total_energy(structure, bars="compressible", kinetic=kinetic,
                         include_radius=include_radius)
    assert E[0] == E0                                # E0 ~ 100 J (catalog.tbar docstring)
    drift = np.abs(E - Y[:, -1] - E0).max()
    assert drift <= 1e-9 * abs(E0), drift            # measured ~1e-8 J of E0 ~ 100 J
    if damping == 0:
        assert np.all(Y[:, -1] == 0.0)
    else:
        assert Y[-1, -1] < -1e-3                     # the dampers did dissipate
    # the bars really deform: strains of order 1e-5 (soft HDPE)
    q = Y[:, :Y.shape[1] // 2].reshape(len(Y), -1, 3)
    p = structure.bar_nodes
    strain = np.linalg.norm(q[:, p[:, 1]] - q[:, p[:, 0]], axis=2) / structure.bar_rest_lengths - 1
    assert 1e-7 < np.abs(strain).max() < 1e-2
    assert np.all(np.abs(Y[:, [1, 4, 7, 10]]) == 0.0)  # fixed y coordinates never move


# ---- identities and limits -------------------------------------------------------------

def test_consistent_mass_matrix_is_the_rigid_one_and_constant():
    structure = loaded_prism()
    M = tc.mass_matrix(structure, bars="compressible")
    np.testing.assert_array_equal(M, tc.mass_matrix(structure))
    q, _, _ = random_state(structure, 1, dq=0.1)
    np.testing.assert_array_equal(tc.mass_matrix(structure, q, bars="compressible"), M)
    model = compressible_model(structure)
    assert model.const_mass and model.n_coordinates == 3 * structure.n_nodes
    assert compressible_model(structure) is model                      # cached


def test_model_record_holds_the_models_arrays():
    """The kernels' record is built once per model and holds its arrays, not copies."""
    from numba import njit

    model = compressible_model(tbar_hdpe(), "paper", True)
    np.testing.assert_array_equal(model.bars.stiffness, model.structure.bar_stiffness)
    np.testing.assert_array_equal(model.bars.i, model.structure.bar_nodes[:, 0])
    fields = njit(lambda m: (m.constant_mass, m.free, m.bars.a0, m.members.rest_length))
    for inside, outside in zip(fields(model.kernel), (model.M0, model.free, model.bars.a0,
                                                      model.members.rest_length)):
        assert np.shares_memory(inside, outside)
    assert not model.const_mass


def stiff_prestressed(structure, E, include_radius):
    """Bars of modulus E whose rest lengths give them the rigid model's force densities at q0."""
    _, psi = tc.accelerations(structure, include_radius=include_radius)
    bars = []
    for b, l, p in zip(structure.bars, structure.bar_lengths, psi):
        # k_b (1 - l0/l) = E pi r^2 (1/l0 - 1/l) = psi
        l0 = 1.0 / (1.0 / l + p / (E * np.pi * b.radius**2))
        bars.append(dataclasses.replace(b, youngs_modulus=E, rest_length=l0))
    return rebuild(structure, bars), psi


@pytest.mark.parametrize("kinetic,include_radius", MODES)
def test_rigid_limit_at_rest(kinetic, include_radius):
    """Very stiff bars carrying the rigid bar forces accelerate as rigid bars.

    At rest the axial acceleration of a rigid bar is zero, so the a(l) H q q^T H / l^2 terms
    of M_qdd do not act and both modes agree with the rigid model; with the radius on, r(l)
    tends to r0 as E grows.
    """
    structure = tbar_hdpe()
    stiff, psi_rigid = stiff_prestressed(structure, 1e12, include_radius)
    rigid, _ = tc.accelerations(structure, include_radius=include_radius)
    qdd, psi = tc.accelerations(stiff, bars="compressible", kinetic=kinetic,
                                include_radius=include_radius)
    np.testing.assert_allclose(psi, psi_rigid, rtol=1e-6)
    np.testing.assert_allclose(qdd, rigid, rtol=0, atol=1e-6 * np.abs(rigid).max())


def test_rigid_limit_along_a_trajectory():
    """Stiff bars (E = 2e11 Pa) follow the rigid T-bar to ~F/k_b over 0.3 s (implicit Radau
    with the analytic kernel Jacobian)."""
    structure = catalog.tbar(damping=1.0)
    kernel = compressible_model(structure).kernel
    nq = 3 * structure.n_nodes
    f0 = np.zeros(nq)

    def rhs(t, y):
        dy = np.empty_like(y)
        CK.rhs(y, f0, kernel, dy)
        return dy

    def jac(t, y):
        J = np.empty((y.size, y.size))
        CK.jacobian(y, f0, kernel, J)
        return J

    y0 = np.concatenate([structure.nodes.reshape(-1), np.zeros(nq + 1)])
    comp = solve_ivp(rhs, (0, 0.3), y0, method="Radau", jac=jac, rtol=1e-6, atol=1e-8)
    rig = solve_ivp(lambda t, y: np.concatenate([y[nq:], tc.accelerations(
        structure, y[:nq], y[nq:])[0]]), (0, 0.3), y0[:2 * nq], method="DOP853", rtol=1e-10,
        atol=1e-12)
    assert comp.success and rig.success
    moved = np.abs(rig.y[:nq, -1] - y0[:nq]).max()
    assert moved > 0.05                               # the T-bar really swings
    assert np.abs(comp.y[:nq, -1] - rig.y[:nq, -1]).max() < 1e-5


# ---- singular mass and validation -------------------------------------------------------

def test_paper_mode_rejects_free_floating_bars():
    prism = catalog.prism(3, base="free")
    for include_radius in (False, True):
        with pytest.raises(ValueError, match=r"bar 0 \(nodes 0->3\).*bar 2 \(nodes 2->5\).*"
                                             r'kinetic="consistent"'):
            compressible_model(prism, "paper", include_radius)
    q, qd, f = random_state(prism, 2, dq=1e-3)
    qdd, _ = tc.accelerations(prism, q, qd, loads=f, bars="compressible")
    assert np.all(np.isfinite(qdd)) and np.abs(qdd).max() > 0
    # one end fixed (the T-bar) is fine in paper mode: effective axial mass m/4 > 0
    compressible_model(tbar_hdpe(), "paper")


def test_invalid_inputs_are_named():
    s = tbar_hdpe()
    with pytest.raises(ValueError, match=r"kinetic must be one of 'consistent', 'paper'.*"
                                         r"did you mean 'consistent'"):
        compressible_model(s, "consistent_rod")
    no_e = rebuild(s, [tc.Bar(b.nodes, b.radius, density=960.0, poisson=0.4) for b in s.bars])
    with pytest.raises(ValueError, match=r"bar 0 \(nodes 0->2\): youngs_modulus is missing"):
        tc.accelerations(no_e, bars="compressible")
    with pytest.raises(ValueError, match=r"q must have shape \(4, 3\) or \(12,\).*got \(11,\)"):
        tc.accelerations(s, np.zeros(11), bars="compressible")
    with pytest.raises(ValueError, match="qd must be finite"):
        tc.total_energy(s, None, np.full(12, np.nan), bars="compressible")
    with pytest.raises(ValueError, match=r"bar_force_densities must be 2 finite force densities"):
        tc.jacobians(s, bars="compressible", bar_force_densities=[1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="expected a tenscontrol.Structure"):
        compressible_model("tbar")


# ---- equilibrium -------------------------------------------------------------------------

@pytest.mark.parametrize("kinetic,include_radius", MODES)
def test_unloaded_structure_at_rest_length_does_not_move(kinetic, include_radius):
    """Strings exactly at rest length are slack, bars at rest length carry nothing, g = 0."""
    structure = catalog.prism(4, rest_fraction=1.0)
    qdd, psi = tc.accelerations(structure, bars="compressible", kinetic=kinetic,
                                include_radius=include_radius)
    assert np.all(qdd == 0.0) and np.all(psi == 0.0)
    jac = tc.jacobians(structure, bars="compressible", kinetic=kinetic,
                       include_radius=include_radius)
    assert np.all(jac["gamma"] == 0.0) and np.all(jac["qdd"] == 0.0)


def test_bar_force_densities_are_negative_in_compression():
    structure = tbar_hdpe()
    q = structure.nodes.reshape(-1).copy()
    q[6:9] *= 0.999                    # node 2 towards node 0: bar 0 shorter by 0.1 %
    psi = bar_force_densities(structure, q)
    assert psi[0] < 0 and psi[1] == 0.0
    # psi = k_b (1 - l0/l) with k_b = E pi r^2 / l0 (docs/theory.md, "Compressible bars"), HDPE E =
    # 1 GPa
    l0 = 5.0
    assert np.isclose(psi[0], 1e9 * np.pi * 0.05**2 / l0 * (1 - l0 / (0.999 * l0)), rtol=1e-12)
    # docs/theory.md, "Compressible bars"
    assert np.isclose(structure.bar_stiffness[0], 1.571e6, rtol=1e-3)
