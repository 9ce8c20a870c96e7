"""Rigid-bar dynamics: mass-matrix identities, gravity, forces, and an independent KKT solve."""

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.model.io import structure_to_dict
from tenscontrol.mechanics.rigid import kernels as rigid_kernels
from tenscontrol.mechanics.rigid.model import rigid_model
from tenscontrol.model import catalog


def selection(pairs, n, k):
    """Dense X_k = (e_k^T C) kron I_3 for member k (docs/theory.md, "The Lagrangian model in
    Cartesian nodal coordinates"); tests only."""
    C = np.zeros(n)
    C[pairs[k][0]], C[pairs[k][1]] = -1.0, 1.0
    return np.kron(C[None, :], np.eye(3))


def dense_model(structure, q, qd, f):
    """Independent dense implementation of docs/theory.md, "The Lagrangian model in Cartesian nodal
    coordinates" and "Rigid bars: constraints and multipliers": M, J_Phi, xi, h."""
    n = structure.n_nodes
    M = np.zeros((3 * n, 3 * n))
    for k, (m, l) in enumerate(zip(structure.bar_masses, structure.bar_lengths)):
        X = selection(structure.bar_nodes, n, k)
        Xbar = np.abs(X) / 2
        M += m * Xbar.T @ Xbar + (m / 12) * X.T @ X
    for pm in structure.point_masses:
        P = np.kron(np.eye(n)[pm.node][None, :], np.eye(3))
        M += pm.mass * P.T @ P
    G = np.zeros(3 * n)
    for k, m in enumerate(structure.bar_masses):
        G += m * (np.abs(selection(structure.bar_nodes, n, k)) / 2).T @ structure.gravity
    for pm in structure.point_masses:
        G[3 * pm.node:3 * pm.node + 3] += pm.mass * structure.gravity
    xi = G + f
    for k in range(structure.n_strings):
        Y = selection(structure.string_nodes, n, k)
        Yh = Y.T @ Y
        l = np.sqrt(q @ Yh @ q)
        l0, kk, c = (structure.string_rest_lengths[k], structure.string_stiffness[k],
                     structure.string_damping[k])
        if structure.string_is_spring[k] or l > l0:
            xi -= kk * (1 - l0 / l) * Yh @ q
            xi -= c * (q @ Yh @ qd) / (q @ Yh @ q) * Yh @ q
    A = np.eye(3 * n)[structure.fixed_coordinates]
    Hs = [selection(structure.bar_nodes, n, k).T @ selection(structure.bar_nodes, n, k)
          for k in range(structure.n_bars)]
    J = np.vstack([A] + [2 * q @ H for H in Hs])
    h = np.concatenate([np.zeros(len(A)), [2 * qd @ H @ qd for H in Hs]])
    return M, G, J, xi, h


def random_state(structure, seed):
    rng = np.random.default_rng(seed)
    free = ~structure.fixed.reshape(-1)
    q = structure.nodes.reshape(-1) + 0.05 * rng.standard_normal(3 * structure.n_nodes) * free
    qd = rng.standard_normal(3 * structure.n_nodes) * free
    f = 10 * rng.standard_normal(3 * structure.n_nodes)
    return q, qd, f


def damped_ball():
    d = structure_to_dict(catalog.ball())
    for s in d["strings"]:
        s["damping"] = 0.7
    return tc.structure_from_dict(d)


@pytest.mark.parametrize("make", [damped_ball, lambda: catalog.tbar("paper", damping=1.0),
                                  lambda: catalog.arm(), lambda: catalog.prism(4, base="free")])
def test_accelerations_match_dense_kkt_block_solve(make):
    structure = make()
    q, qd, f = random_state(structure, 1)
    M, G, J, xi, h = dense_model(structure, q, qd, f)
    c = J.shape[0]
    kkt = np.block([[M, -J.T], [-J, np.zeros((c, c))]])
    sol = np.linalg.lstsq(kkt, np.concatenate([xi, h]), rcond=1e-13)[0]
    qdd, psi = tc.accelerations(structure, q, qd, loads=f)
    np.testing.assert_allclose(qdd, sol[:3 * structure.n_nodes], rtol=1e-9,
                               atol=1e-9 * np.abs(qdd).max())
    lam_bars = sol[3 * structure.n_nodes + len(structure.fixed_coordinates):]
    np.testing.assert_allclose(psi, -2 * lam_bars, rtol=1e-8, atol=1e-8 * np.abs(psi).max())
    # the constraints hold at acceleration level: J qdd = -h
    np.testing.assert_allclose(J @ qdd, -h, atol=1e-8 * np.abs(h).max())


def test_block_solve_agrees_with_closed_form():
    # Hsu et al. (2021), eqs. (22)-(23) with W = M^-1 (every ball node touches a bar or carries
    # mass)
    structure = damped_ball()
    q, qd, f = random_state(structure, 2)
    M, G, J, xi, h = dense_model(structure, q, qd, f)
    W = np.linalg.inv(M)
    Mt = np.linalg.inv(J @ W @ J.T)
    lam = -Mt @ (J @ W @ xi + h)
    qdd_closed = W @ (xi + J.T @ lam)
    qdd, _ = tc.accelerations(structure, q, qd, loads=f)
    np.testing.assert_allclose(qdd, qdd_closed, rtol=1e-9, atol=1e-10 * np.abs(qdd).max())


def test_mass_matrix_identities():
    for structure in (catalog.ball(), catalog.arm(), catalog.tbar()):
        M = tc.mass_matrix(structure)
        np.testing.assert_array_equal(M, M.T)
        free = structure.free_coordinates
        assert np.linalg.eigvalsh(M[np.ix_(free, free)]).min() > 0
        # a rigid translation carries the total mass along each axis
        for axis in range(3):
            u = np.kron(np.ones(structure.n_nodes), np.eye(3)[axis])
            assert u @ M @ u == pytest.approx(structure.total_mass, rel=1e-14)


def test_pinned_bar_rotational_inertia():
    # a bar pinned at node 0 rotating at rate w has T = 1/2 (m L^2 / 3) w^2 (docs/theory.md, "The
    # Lagrangian model in Cartesian nodal coordinates")
    structure = catalog.tbar()
    m, L, w = structure.bar_masses[0], 5.0, 0.7
    qd = np.zeros(12)
    n2 = structure.nodes[2]
    qd[6:9] = w * np.array([-n2[2], 0, n2[0]])  # w x n2 about the y axis through node 0
    M = tc.mass_matrix(structure)
    assert 0.5 * qd @ M @ qd == pytest.approx(0.5 * m * L**2 / 3 * w**2, rel=1e-14)


def test_solid_cylinder_inertia():
    # docs/theory.md, "The Lagrangian model in Cartesian nodal coordinates": mu = m/12 + m r^2/(4 l^2);
    # translation is unchanged
    structure = catalog.tbar()
    m, L, r, w = structure.bar_masses[0], 5.0, 0.05, 0.7
    qd = np.zeros(12)
    n2 = structure.nodes[2]
    qd[6:9] = w * np.array([-n2[2], 0, n2[0]])
    M = tc.mass_matrix(structure, include_radius=True)
    assert 0.5 * qd @ M @ qd == pytest.approx(0.5 * (m * L**2 / 3 + m * r**2 / 4) * w**2,
                                              rel=1e-14)
    u = np.kron(np.ones(4), [1.0, 0, 0])
    assert u @ M @ u == pytest.approx(structure.total_mass, rel=1e-14)


def test_gravity_vector_carries_the_total_weight():
    for structure in (catalog.ball(), catalog.arm()):
        G = tc.gravity_vector(structure).reshape(-1, 3)
        np.testing.assert_allclose(G.sum(axis=0), structure.total_mass * structure.gravity)


def test_horizontal_pinned_rod_released_from_rest():
    # a uniform rod pinned at one end, released horizontally: tip acceleration 3g/2 downward,
    # axial force zero (no rotation yet), pin reaction m g / 4 upward.
    g = 9.806
    rod = tc.Structure(nodes=[[0, 0, 0], [2.0, 0, 0]], bars=[tc.Bar((0, 1), 0.02, density=800.0)],
                       fixed={0: "xyz"}, gravity=(0, 0, -g))
    qdd, psi = tc.accelerations(rod)
    np.testing.assert_allclose(qdd[3:], [0, 0, -1.5 * g], atol=1e-12)
    assert abs(psi[0]) < 1e-12


def test_force_densities_follow_the_slack_rule():
    tbar = catalog.tbar("stedy")
    gamma = tc.force_densities(tbar)
    k = tbar.string_stiffness
    # m0 and m2 sit exactly at their rest length: slack; the verticals are stretched to 1/0.7
    np.testing.assert_allclose(gamma, [0, k[1] * 0.3, 0, k[3] * 0.3], rtol=1e-14)
    q = tbar.nodes.reshape(-1).copy()
    q[9] += 0.1  # pull node 3 toward node 2: the top member m2 gets shorter than its rest length
    assert tc.force_densities(tbar, q)[2] == 0.0
    spring = catalog.tbar("paper")
    assert tc.force_densities(spring, q)[2] < 0  # a spring pushes


@pytest.mark.slow
def test_damper_power():
    structure = damped_ball()
    q, qd, _ = random_state(structure, 3)
    model = rigid_model(structure)
    y = np.concatenate([q, qd, [0.0]])
    dy = np.empty_like(y)
    rigid_kernels.rhs(y, np.zeros_like(q), model.kernel, dy)
    expected = 0.0
    for k, (i, j) in enumerate(structure.string_nodes):
        s, sd = q[3 * j:3 * j + 3] - q[3 * i:3 * i + 3], qd[3 * j:3 * j + 3] - qd[3 * i:3 * i + 3]
        if np.linalg.norm(s) > structure.string_rest_lengths[k]:
            expected -= structure.string_damping[k] * (s @ sd / np.linalg.norm(s)) ** 2
    assert expected < 0
    assert dy[-1] == pytest.approx(expected, rel=1e-12)


def test_total_energy_reference_values():
    # catalog.tbar("stedy"), catalog.tbar("paper"), catalog.dbar docstrings
    assert tc.total_energy(catalog.tbar("stedy")) == pytest.approx(99.964866, abs=1e-6)
    assert tc.total_energy(catalog.tbar("paper")) == pytest.approx(12.5, rel=1e-13)
    assert tc.total_energy(catalog.dbar()) == pytest.approx(19.99297322, abs=1e-8)
    tbar = catalog.tbar("paper")
    qd = np.zeros(12)
    qd[6] = 1.0
    M = tc.mass_matrix(tbar)
    assert tc.total_energy(tbar, qd=qd) == pytest.approx(12.5 + 0.5 * M[6, 6], rel=1e-13)


def test_fixed_coordinates_do_not_accelerate():
    structure = catalog.tbar("stedy")
    q, qd, f = random_state(structure, 4)
    qdd, _ = tc.accelerations(structure, q, qd, loads=f)
    assert np.all(qdd[structure.fixed_coordinates] == 0.0)


def test_duplicate_bar_constraint_is_dropped():
    d = structure_to_dict(catalog.tbar())
    d["bars"].append(dict(d["bars"][0]))
    s = tc.structure_from_dict(d)
    with pytest.warns(UserWarning, match=r"bar 2 \(nodes 0->2\)"):
        model = rigid_model(s)
    assert model.dropped_bars == (2,)
    assert list(model.constrained_bars) == [0, 1]


def test_constraint_jacobian_rows():
    tbar = catalog.tbar()
    J = tc.constraint_jacobian(tbar)
    assert J.shape == (8 + 2, 12)
    q = tbar.nodes.reshape(-1)
    # bar rows are 2 q^T H_k: the gradient of |b_k|^2
    b0 = tbar.nodes[2] - tbar.nodes[0]
    np.testing.assert_allclose(J[8, 6:9], 2 * b0)
    np.testing.assert_allclose(J[8, 0:3], -2 * b0)
    assert J[8] @ q == pytest.approx(2 * 25.0)


def test_state_validation():
    with pytest.raises(ValueError, match=r"q must have shape \(4, 3\) or \(12,\)"):
        tc.accelerations(catalog.tbar(), q=np.zeros(5))
    with pytest.raises(ValueError, match=r"loads must have shape \(4, 3\)"):
        tc.accelerations(catalog.tbar(), loads=np.zeros(3))
    with pytest.raises(TypeError, match="expected a tenscontrol.Structure"):
        rigid_model("tbar")
    with pytest.raises(TypeError, match="structure: expected a tenscontrol.Structure"):
        tc.accelerations("tbar")


def test_bar_model_options_are_validated():
    tbar = catalog.tbar()
    with pytest.raises(ValueError, match=r"bars must be one of 'rigid', 'compressible', got "
                                         r"'rigd' \(did you mean 'rigid'\?\)"):
        tc.mass_matrix(tbar, bars="rigd")
    with pytest.raises(ValueError, match=r"kinetic must be one of 'consistent', 'paper'"):
        tc.total_energy(tbar, kinetic="papr")
    with pytest.raises(ValueError, match="kinetic='paper' applies to compressible bars only"):
        tc.accelerations(tbar, kinetic="paper")
    with pytest.raises(TypeError, match="include_radius must be True or False"):
        tc.mass_matrix(tbar, include_radius="yes")
    with pytest.raises(ValueError, match=r"rigid bars.*tenscontrol\.linearize"):
        tc.jacobians(tbar)


def test_model_records_are_built_once_from_the_structure():
    """The kernels' records hold the model's own arrays; the model (and its record) is cached."""
    from numba import njit

    s = damped_ball()
    model = rigid_model(s)
    assert rigid_model(s) is model and rigid_model(s).kernel is model.kernel
    np.testing.assert_array_equal(model.members.i, s.string_nodes[:, 0])
    np.testing.assert_array_equal(model.members.stiffness, s.string_stiffness)
    np.testing.assert_array_equal(model.members.damping, s.string_damping)
    np.testing.assert_array_equal(model.members.spring, s.string_is_spring)
    np.testing.assert_array_equal(model.bars.length, s.bar_lengths[model.constrained_bars])
    # the structref holds the same arrays, not copies
    fields = njit(lambda m: (m.free_column, m.gravity, m.members.stiffness, m.bars.length))
    for inside, outside in zip(fields(model.kernel), (model.col, model.G, model.members.stiffness,
                                                      model.bars.length)):
        assert np.shares_memory(inside, outside)


@pytest.mark.parametrize("scale", [1e-4, 1.0, 1e4])
def test_rank_test_of_the_bar_constraints_is_scale_invariant(scale, recwarn):
    d = structure_to_dict(catalog.tbar())
    d["nodes"] = (np.array(d["nodes"]) * scale).tolist()
    d["bars"] = [dict(b, radius=0.05 * scale) for b in d["bars"]]
    model = rigid_model(tc.structure_from_dict(d))
    assert model.dropped_bars == () and list(model.constrained_bars) == [0, 1]
    assert not [w for w in recwarn if "redundant" in str(w.message)]


def test_a_very_short_bar_is_not_taken_for_a_redundant_one(monkeypatch):
    """Issue 13: a 10 pm bar was dropped as redundant, its row being 1e-12 of the others.

    Structure now refuses such a bar (too short for its size); with that check switched off
    the rank test, on rows of unit norm, still keeps it.
    """
    monkeypatch.setattr("tenscontrol.model.structure.SHORTEST_RELATIVE", 0.0)
    d = structure_to_dict(catalog.tbar())
    d["nodes"][2] = [1e-11, 0.0, 1e-11]
    model = rigid_model(tc.structure_from_dict(d))
    assert model.dropped_bars == ()


@pytest.mark.parametrize("value", ["no", 1, None, [True]])
def test_include_radius_must_be_a_bool(value):
    with pytest.raises(TypeError, match=r"include_radius must be True or False, got "):
        rigid_model(catalog.tbar(), value)
