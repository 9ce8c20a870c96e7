"""Equilibrium and prestress design (tenscontrol.statics.prestress; docs/theory.md, "Prestress")."""

import dataclasses

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize

import tenscontrol as tc
from tenscontrol.model import catalog
from tenscontrol.statics.prestress import Equilibrium, PrestressError, equilibrium

# The arm's QP prestress (gamma_min = 1 N/m) and bar force densities: a KKT-certified QP solution
# that SLSQP from another start and HiGHS's min-sum LP reproduce (catalog.arm docstring).
ARM_GAMMA = [1, 1, 1, 1, 1, 1, 23.654793, 23.654793, 107.638531, 107.638531, 252.951213,
             1, 1, 1, 1, 7.163698, 34.323331, 91.647436]
ARM_PSI = [-88.815587, -88.815587, 2.002420, -31.491482, -31.491482, 2.002420, -4.831849,
           -3.831849, 1.831849, -21.822944, -2.002420, 4.836689, -79.147049, -2.002420,
           -21.822944, -167.135626]
# The ball's QP prestress (gamma_min = 10 N/m): a KKT-certified QP solution that SLSQP from
# another start and HiGHS's min-sum LP reproduce (catalog.ball docstring).
BALL_GAMMA = [344.017999, 10, 10, 10, 344.017999, 10, 10, 10, 203.738656, 203.738656, 29.167818,
              75.003989, 75.003989, 29.167818, 121.631922, 120.202906, 197.685250, 25.426607,
              74.458154, 74.458154, 121.631922, 120.202906, 197.685250, 25.426607,
              23.805726, 28.320988, 10, 10, 10, 35.128720, 10, 10]
BALL_PSI = [-151.332748, -151.332748, -434.456611, -101.020106, -146.592697, -141.422471]


def dense_equilibrium_matrix(structure, pairs):
    """Columns Yhat_k q0 built from dense selection matrices (docs/theory.md, "The Lagrangian model
    in Cartesian nodal coordinates"); tests only."""
    n = structure.n_nodes
    q = structure.nodes.reshape(-1)
    cols = []
    for i, j in pairs:
        c = np.zeros(n)
        c[i], c[j] = -1.0, 1.0
        Y = np.kron(c[None, :], np.eye(3))
        cols.append(Y.T @ Y @ q)
    return np.array(cols).T.reshape(3 * n, len(pairs))


def static_force(structure, loads=None):
    """Net static nodal force -Yhat gamma(q0) + G + f from the structure's own laws (slack rule)."""
    gamma = tc.force_densities(structure)
    f = np.zeros(3 * structure.n_nodes) if loads is None else np.asarray(loads).reshape(-1)
    return -dense_equilibrium_matrix(structure, structure.string_nodes) @ gamma \
        + tc.gravity_vector(structure) + f


def x_tensegrity():
    """The planar free-floating X tensegrity: two 1 kg bars (length 2) and four springs."""
    r = 0.01
    rho = 1.0 / (np.pi * r**2 * 2.0)
    bars = [{"nodes": p, "radius": r, "density": rho} for p in ((0, 1), (2, 3))]
    springs = [{"nodes": p, "kind": "spring", "stiffness": 11.0,
                "rest_length": 10 * np.sqrt(2) / 11} for p in ((0, 2), (2, 1), (1, 3), (3, 0))]
    return tc.Structure([[-1, 0, 0], [1, 0, 0], [0, -1, 0], [0, 1, 0]], bars, springs,
                        fixed={i: "z" for i in range(4)}, name="x")


def check_prestressed(eq, loads=None):
    """The returned structure holds its configuration: zero accelerations, strings as designed."""
    s = eq.structure
    qdd, psi = tc.accelerations(s, loads=loads)
    g = np.abs(s.gravity).max() or 1.0
    assert np.abs(qdd).max() <= 1e-9 * g
    np.testing.assert_allclose(tc.force_densities(s), eq.gamma, rtol=0, atol=1e-9)
    np.testing.assert_allclose(psi, eq.bar_force_densities, rtol=0, atol=1e-8)


@pytest.mark.parametrize("objective", ["min_sum", "min_norm"])
def test_arm_prestress(objective):
    """Arm under gravity, gamma_min = 1 (catalog.arm, paper Fig. 1b).

    catalog.arm docstring: the self-stress space has dimension 8 and the min-sum LP returns the QP vector
    to 1e-6; we find dimension 8 (18 strings minus the rank 10 of the in-plane equations).
    """
    eq = equilibrium(catalog.arm(), gamma_min=1.0, objective=objective)
    assert isinstance(eq, Equilibrium) and eq.objective == objective and eq.bars == "rigid"
    assert eq.residual <= 1e-9
    assert eq.self_stress_dimension == 8
    np.testing.assert_allclose(eq.gamma, ARM_GAMMA, rtol=0, atol=1e-6)  # printed to 6 decimals
    np.testing.assert_allclose(eq.bar_force_densities, ARM_PSI, rtol=0, atol=1e-6)
    assert np.all(eq.gamma >= 1.0)
    assert np.all(eq.structure.string_lengths > eq.structure.string_rest_lengths)  # taut
    check_prestressed(eq)


@pytest.mark.parametrize("objective", ["min_sum", "min_norm"])
def test_ball_prestress(objective):
    """Ball under gravity, gamma_min = 10 (catalog.ball docstring: self-stress dimension 8)."""
    eq = equilibrium(catalog.ball(), gamma_min=10.0, objective=objective)
    assert eq.residual <= 1e-9
    assert eq.self_stress_dimension == 8
    np.testing.assert_allclose(eq.gamma, BALL_GAMMA, rtol=0, atol=1e-6)
    np.testing.assert_allclose(eq.bar_force_densities, BALL_PSI, rtol=0, atol=1e-6)
    assert np.all(eq.structure.string_lengths > eq.structure.string_rest_lengths)
    check_prestressed(eq)


@pytest.mark.parametrize("build", [catalog.arm, catalog.ball])
def test_prestressed_structure_stays_put(build):
    """simulate() of the prestressed arm/ball for 1 s stays within 1e-8 m of q0 (~0.05 s each)."""
    eq = equilibrium(build(), gamma_min=1e-3)
    assert np.all(eq.gamma >= 1e-3)
    traj = tc.simulate(eq.structure, 1.0)
    assert np.abs(traj.nodes - traj.nodes[0]).max() <= 1e-8


def test_reactions_carry_the_weight():
    """Internal forces cancel, so the reactions balance gravity plus the loads (docs/theory.md,
    "Rigid bars: constraints and multipliers")."""
    arm = catalog.arm()
    loads = np.zeros((16, 3))
    loads[9, 2] = 100.0  # the arm's tip load direction (catalog.arm_load)
    eq = equilibrium(arm, gamma_min=1.0, loads=loads)
    weight = arm.total_mass * np.array(arm.gravity)
    np.testing.assert_allclose(eq.reactions.sum(axis=0), -(weight + loads.sum(axis=0)),
                               atol=1e-9)
    assert np.all(eq.reactions[~arm.fixed] == 0.0)
    assert eq.multipliers.shape == (9 + 16,)
    np.testing.assert_allclose(eq.multipliers[9:], -eq.bar_force_densities / 2, atol=1e-12)
    check_prestressed(eq, loads)


def test_tbar_without_load_has_no_prestress():
    """No load, no gravity, gamma_min = 0 gives gamma = psi = 0 (docs/theory.md, "Prestress";
    the paper's Table-2 T-bar)."""
    tbar = catalog.tbar(bar_material="hdpe")
    for objective in ("min_sum", "min_norm"):
        for bars in ("rigid", "compressible"):
            eq = equilibrium(tbar, objective=objective, bars=bars)
            assert np.all(eq.gamma == 0.0) and np.all(eq.bar_force_densities == 0.0)
            # gamma* = 0 means exactly at rest (slack under the strict l > l0 rule)
            np.testing.assert_array_equal(eq.structure.string_rest_lengths,
                                          tbar.string_lengths)


@pytest.mark.parametrize("bars", ["rigid", "compressible"])
def test_prism_self_stress_scaled(bars):
    """prism(3) at its prestressable twist: the self-stress scaled so that min gamma = g."""
    g = 2.5
    eq = equilibrium(catalog.prism(3), gamma_min=g, bars=bars)
    assert np.all(eq.gamma > 0) and np.all(eq.bar_force_densities < 0)
    assert eq.gamma.min() == pytest.approx(g, abs=1e-12)
    # the prism's single self-stress, plus the three base-ring strings whose ends are fixed
    assert eq.self_stress_dimension == 4


def test_min_norm_against_independent_slsqp():
    """The QP optimum (arm) agrees with SLSQP on an independent dense formulation.

    Independent: Yhat from dense selection matrices, lambda eliminated with Z = null(J_Phi)
    built from scipy, dependent rows removed by SVD, started far from the optimum.
    """
    arm = catalog.arm()
    eq = equilibrium(arm, gamma_min=1.0, objective="min_norm")
    Y = dense_equilibrium_matrix(arm, arm.string_nodes)
    Z = scipy.linalg.null_space(tc.constraint_jacobian(arm))
    A, b = Z.T @ Y, Z.T @ tc.gravity_vector(arm)
    U, s, _ = np.linalg.svd(A, full_matrices=False)
    r = int(np.sum(s > 1e-10 * s[0]))
    A, b = U[:, :r].T @ A, U[:, :r].T @ b
    res = scipy.optimize.minimize(  # objective scaled by 1e-4 for SLSQP's line search
        lambda x: 0.5e-4 * x @ x, np.full(arm.n_strings, 300.0), jac=lambda x: 1e-4 * x,
        method="SLSQP", bounds=[(1.0, None)] * arm.n_strings,
        constraints=[{"type": "eq", "fun": lambda x: A @ x - b, "jac": lambda x: A}],
        options={"ftol": 1e-12, "maxiter": 500})
    assert res.success
    np.testing.assert_allclose(eq.gamma, res.x, rtol=0, atol=1e-7)
    assert has_kkt_multipliers(A, eq.gamma, 1.0)
    # the certificate is not vacuous: another feasible point (the gamma_min = 2 design) has none
    other = equilibrium(arm, gamma_min=2.0, objective="min_norm").gamma
    assert np.abs(A @ other - b).max() <= 1e-9 and np.abs(other - eq.gamma).max() > 1.0
    assert not has_kkt_multipliers(A, other, 1.0)


def has_kkt_multipliers(A, gamma, lower):
    """Feasibility LP (docs/theory.md, "Prestress"): gamma = A^T nu + mu with mu = 0 off the bound,
    >= 0 on it."""
    off = gamma > lower + 1e-9
    A_ub = np.vstack([A.T[off], -A.T[off], A.T[~off]])
    b_ub = np.concatenate([gamma[off] + 1e-8, 1e-8 - gamma[off], gamma[~off] + 1e-8])
    res = scipy.optimize.linprog(np.zeros(A.shape[0]), A_ub=A_ub, b_ub=b_ub,
                                 bounds=[(None, None)] * A.shape[0], method="highs")
    return res.status == 0


def star(bar=None):
    """A node (4) held in the x-y plane by four members to fixed anchors at 0, 80, 180, 250 deg.

    Two self-stresses, so the objectives can trade members against each other.
    """
    angles = np.deg2rad([0.0, 80.0, 180.0, 250.0])
    nodes = [[np.cos(a), np.sin(a), 0.0] for a in angles] + [[0.0, 0.0, 0.0]]
    strings = [{"nodes": (4, k), "youngs_modulus": 2e9, "radius": 1e-3}
               for k in range(4) if k != bar]
    bars = [] if bar is None else [{"nodes": (bar, 4), "radius": 0.01, "material": "aluminium"}]
    fixed = {0: "xyz", 1: "xyz", 2: "xyz", 3: "xyz", 4: "z"}
    return tc.Structure(nodes, bars, strings, fixed=fixed, point_masses=[{"node": 4, "mass": 1.0}])


def test_lp_and_qp_objectives():
    """Both feasible; the LP has the least sum and the QP the least norm, and they differ.

    A 30 N pull in +x on the star: the LP loads the 180 deg string alone (gamma = 30 N/m, its
    length being 1 m); the QP spreads the load over three strings.
    """
    loads = np.zeros((5, 3))
    loads[4, 0] = 30.0
    lp = equilibrium(star(), loads=loads, objective="min_sum")
    qp = equilibrium(star(), loads=loads, objective="min_norm")
    np.testing.assert_allclose(lp.gamma, [0, 0, 30, 0], atol=1e-12)
    for eq in (lp, qp):
        assert eq.residual <= 1e-9 and np.all(eq.gamma >= 0.0)
        check_prestressed(eq, loads)
    assert lp.gamma.sum() < qp.gamma.sum() - 1.0
    assert qp.gamma @ qp.gamma < lp.gamma @ lp.gamma - 1.0
    assert np.count_nonzero(qp.gamma) == 3


def test_compressible_bars_enter_the_norm():
    """min_norm: rigid bars' psi is a reaction (not minimised), compressible bars' psi is."""
    loads = np.zeros((5, 3))
    loads[4, 1] = 30.0
    rigid = equilibrium(star(bar=2), loads=loads, objective="min_norm")
    soft = equilibrium(star(bar=2), loads=loads, objective="min_norm", bars="compressible")

    def norm(eq):
        return eq.gamma @ eq.gamma + eq.bar_force_densities @ eq.bar_force_densities

    assert rigid.gamma @ rigid.gamma < soft.gamma @ soft.gamma - 1.0
    assert norm(soft) < norm(rigid) - 1.0
    check_prestressed(rigid, loads)


def test_compressible_prism():
    """Compressible aluminium bars: psi < 0 via rest lengths longer than the bars (docs/theory.md,
    "Compressible bars").

    The forces balance with the bar law psi = k_b (1 - l0/l) evaluated from the returned
    structure's bar_stiffness and bar_rest_lengths, and the strings' law from theirs.
    """
    eq = equilibrium(catalog.prism(3), gamma_min=1.0, bars="compressible")
    s = eq.structure
    assert np.all(eq.bar_force_densities < 0)
    assert np.all(s.bar_rest_lengths > s.bar_lengths)
    psi = s.bar_stiffness * (1 - s.bar_rest_lengths / s.bar_lengths)
    np.testing.assert_allclose(psi, eq.bar_force_densities, rtol=1e-9, atol=1e-12)
    gamma = s.string_stiffness * (1 - s.string_rest_lengths / s.string_lengths)
    np.testing.assert_allclose(gamma, eq.gamma, rtol=1e-9, atol=1e-12)
    net = -(dense_equilibrium_matrix(s, s.string_nodes) @ gamma
            + dense_equilibrium_matrix(s, s.bar_nodes) @ psi)
    assert np.abs(net[s.free_coordinates]).max() <= 1e-9


def test_twist_without_self_stress_is_infeasible():
    """prism(3, twist=1.0) has no self-stress: gamma_min = 1 is infeasible; the default is not."""
    with pytest.raises(PrestressError, match="infeasible.*least-squares residual"):
        equilibrium(catalog.prism(3, twist=1.0), gamma_min=1.0)
    assert issubclass(PrestressError, ValueError)
    equilibrium(catalog.prism(3), gamma_min=1.0)


def test_bars_in_compression():
    """The arm needs some bars in tension (catalog.arm docstring), so strict tensegrity fails."""
    with pytest.raises(PrestressError, match="infeasible"):
        equilibrium(catalog.arm(), gamma_min=1.0, bars_in_compression=True)
    eq = equilibrium(catalog.ball(), gamma_min=10.0, bars_in_compression=True,
                     objective="min_norm")
    np.testing.assert_allclose(eq.gamma, BALL_GAMMA, atol=1e-6)


def test_springs_take_either_sign():
    """Springs are two-sided: a self-equilibrated shear load on the X gives some gamma < 0."""
    x = x_tensegrity()
    loads = np.array([[0, 1, 0], [0, -1, 0], [1, 0, 0], [-1, 0, 0]], dtype=float)
    eq = equilibrium(x, loads=loads, objective="min_norm")
    assert eq.gamma.min() < -1e-3
    neg = eq.gamma < 0
    assert np.all(eq.structure.string_rest_lengths[neg] > eq.structure.string_lengths[neg])
    assert np.abs(static_force(eq.structure, loads)[x.free_coordinates]
                  + (dense_equilibrium_matrix(x, x.bar_nodes) @ eq.bar_force_densities)
                  [x.free_coordinates]).max() <= 1e-9
    with pytest.raises(PrestressError, match="unbounded"):
        equilibrium(x, objective="min_sum")  # the self-stress lowers sum(gamma) without limit


def test_stiffness_too_low_for_the_force_density():
    """A member given by stiffness k cannot reach gamma >= k: the error names the string."""
    prism = catalog.prism(3)
    soft = [dataclasses.replace(s, stiffness=1.0, youngs_modulus=None, radius=None,
                                material=None) for s in prism.strings]
    with pytest.raises(PrestressError, match=r"string 0 \(nodes 0->1\).*gamma < k"):
        equilibrium(dataclasses.replace(prism, strings=soft), gamma_min=2.0)


def test_invalid_inputs():
    prism = catalog.prism(3)
    with pytest.raises(TypeError, match="Structure"):
        equilibrium("prism")
    with pytest.raises(ValueError, match="objective"):
        equilibrium(prism, objective="qp")
    with pytest.raises(ValueError, match="bars must be"):
        equilibrium(prism, bars="elastic")
    with pytest.raises(ValueError, match="gamma_min must be >= 0 for strings"):
        equilibrium(prism, gamma_min=-1.0)
    with pytest.raises(ValueError, match="gamma_min must be"):
        equilibrium(prism, gamma_min=[1.0, 2.0])
    with pytest.raises(ValueError, match="weights"):
        equilibrium(prism, weights=np.ones(3))
    with pytest.raises(ValueError, match=r"loads must have shape \(6, 3\)"):
        equilibrium(prism, loads=np.ones(5))
    with pytest.raises(ValueError, match="bar 0.*youngs_modulus is missing"):
        equilibrium(catalog.arm(), bars="compressible")


def test_repr_and_summary():
    eq = equilibrium(catalog.prism(3), gamma_min=1.0)
    text = repr(eq)
    assert "prism-3" in text and "min_sum" in text and "self_stress_dimension=4" in text
    table = eq.summary()
    assert table.count("\n") == 1 + 9 + 3 and "bar 2" in table


# ---- issue 13: implausible rest lengths, non-finite inputs to the LP ----------------------


def test_implausible_rest_lengths_are_refused():
    """gamma_min = 1e12 gave rest lengths of 2.2e-10 m on 3.5 m strings (strain 1.6e10)."""
    tbar = catalog.tbar()
    with pytest.raises(PrestressError, match=r"string 0 \(nodes 0->1\): force density 1e\+12 "
                                             r"N/m needs a rest length of 2.2e-10 m.*Use at most "
                                             r"62138.2 N/m"):
        equilibrium(tbar, gamma_min=1e12)
    # the limit it names is usable; a gamma_min of 50 N/m (strain 0.8) is fine
    eq = equilibrium(tbar, gamma_min=62138.0)
    assert np.all(eq.structure.string_rest_lengths >= 1e-3 * tbar.string_lengths)
    equilibrium(tbar, gamma_min=50.0)


def test_strings_near_their_stiffness_are_refused():
    paper = catalog.tbar("paper")                          # k = 100 N/m, made one-sided
    paper = dataclasses.replace(paper, strings=tuple(dataclasses.replace(s, kind="string")
                                                     for s in paper.strings))
    with pytest.raises(PrestressError, match=r"needs a rest length of .* Use at most 99.9 N/m"):
        equilibrium(paper, gamma_min=99.95)
    assert equilibrium(paper, gamma_min=98.0).gamma.min() >= 98.0


# "Invalid input for linprog" in 0.3: such members are now refused when the structure is built
# (tenscontrol.model), naming the member; equilibrium's own check covers the loads below.
@pytest.mark.parametrize("make, match", [
    (lambda t: dataclasses.replace(t, bars=tuple(dataclasses.replace(b, density=1e308)
                                                 for b in t.bars)),
     r"bar 0 \(nodes 0->2\): mass rho pi r\^2 l inf kg"),
    (lambda t: dataclasses.replace(t, nodes=t.nodes * 1e160),
     r"node 1: coordinates must lie within \+-1e\+30 m"),
    (lambda t: dataclasses.replace(t, strings=tuple(
        dataclasses.replace(s, youngs_modulus=1e308, radius=1.0) for s in t.strings)),
     r"string 0 \(nodes 0->1\): stiffness inf N/m"),
])
def test_non_finite_derived_quantities_never_reach_linprog(make, match):
    with pytest.raises(ValueError, match=match):
        equilibrium(make(catalog.tbar()), gamma_min=1.0)


def test_loads_beyond_what_highs_takes_are_refused():
    """HiGHS reports 'Model error' for 1e20, which read as 'infeasible'."""
    arm = catalog.arm()
    loads = np.zeros((arm.n_nodes, 3))
    loads[3, 2] = -1e30
    with pytest.raises(ValueError, match=r"equilibrium: the largest of loads plus gravity is 1e\+30 N"):
        equilibrium(arm, gamma_min=1.0, loads=loads)
    with pytest.raises(ValueError, match=r"equilibrium: the largest of gamma_min is 1e\+25 N/m"):
        equilibrium(arm, gamma_min=1e25)
    loads[:, 2] = -1e308
    with pytest.raises(ValueError, match=r"equilibrium: the largest of loads plus gravity is "
                                         r"1e\+308 N, beyond the 1e\+15"):
        equilibrium(arm, gamma_min=1.0, loads=loads)
    # a gravity of that size is refused when the structure is built (tenscontrol.model)
    with pytest.raises(ValueError, match=r"gravity must be three finite numbers .* within \+-1e\+30"):
        dataclasses.replace(arm, gravity=(0.0, 0.0, -1e308))
