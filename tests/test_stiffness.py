"""Tangent stiffness and compliance (tenscontrol.statics.stiffness; docs/theory.md, "Norms and
compliance")."""

import dataclasses
import warnings

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.model import catalog
from tenscontrol.statics.prestress import equilibrium
from tenscontrol.statics.stiffness import Compliance, compliance, rigid_fields, tangent_stiffness

# Paper Fig. 19: eig(C) [m/N] and delta (x2, z2, x3, z3) [m] for +100 N in z at nodes 2 and 3,
# compressible T-bar, strings E = 2 GPa, r = 1 mm, at rest, at_rest="taut"; the values agree with
# the reference code STEDY's stiffness routine (material stiffness on the free coordinates).
TABLE_6_4 = {
    "hdpe": ([6.35541e-7, 6.36260e-7, 3.75203e-4, 1.12603e-3],
             [-0.0187283, 0.0188131, 0.0187283, 0.0188131]),
    "aluminium": ([9.36182e-9, 9.36198e-9, 3.75133e-4, 1.12540e-3],
                  [-0.0187562, 0.0187574, 0.0187562, 0.0187574]),
    "steel": ([3.18307e-9, 3.18309e-9, 3.75132e-4, 1.12540e-3],  # the table's 200 GPa bars
              [-0.0187565, 0.0187569, 0.0187565, 0.0187569]),
}


def study_tbar(bar_material):
    """Paper Table 2 T-bar: one-sided strings E = 2 GPa, r_s = 1 mm, rest fraction 1, no gravity."""
    tbar = catalog.tbar(bar_material=bar_material)
    strings = [dataclasses.replace(s, youngs_modulus=2e9, radius=1e-3, rest_fraction=1.0,
                                   damping=100.0) for s in tbar.strings]
    return dataclasses.replace(tbar, strings=strings)


def x_tensegrity():
    """Planar free-floating X: two 1 kg bars of length 2, springs k = 11, l0 = 10 sqrt2/11."""
    r = 0.01
    rho = 1.0 / (np.pi * r**2 * 2.0)  # m = rho pi r^2 l = 1 kg
    bars = [{"nodes": p, "radius": r, "density": rho} for p in ((0, 1), (2, 3))]
    springs = [{"nodes": p, "kind": "spring", "stiffness": 11.0,
                "rest_length": 10 * np.sqrt(2) / 11, "damping": 0.05}
               for p in ((0, 2), (2, 1), (1, 3), (3, 0))]
    return tc.Structure([[-1, 0, 0], [1, 0, 0], [0, -1, 0], [0, 1, 0]], bars, springs,
                        fixed={i: "z" for i in range(4)}, name="x")


def member_force(structure, q, pairs, density):
    """Nodal forces -sum_k density_k(q) Yhat_k q of members (loops over nodes; tests only)."""
    f = np.zeros_like(q)
    N = q.reshape(-1, 3)
    for (i, j), d in zip(pairs, density(q)):
        s = N[j] - N[i]
        f[3 * i:3 * i + 3] += d * s
        f[3 * j:3 * j + 3] -= d * s
    return f


def string_law(structure):
    def gamma(q):
        N = q.reshape(-1, 3)
        p = structure.string_nodes
        l = np.linalg.norm(N[p[:, 1]] - N[p[:, 0]], axis=1)
        l0, k = structure.string_rest_lengths, structure.string_stiffness
        return np.where(structure.string_is_spring | (l > l0), k * (1 - l0 / l), 0.0)
    return gamma


def bar_law(structure):
    def psi(q):
        N = q.reshape(-1, 3)
        p = structure.bar_nodes
        l = np.linalg.norm(N[p[:, 1]] - N[p[:, 0]], axis=1)
        return structure.bar_stiffness * (1 - structure.bar_rest_lengths / l)
    return psi


def central_jacobian(force, q, h=1e-6):
    """-d force / dq by central differences, column by column."""
    K = np.empty((q.size, q.size))
    for c in range(q.size):
        e = np.zeros_like(q)
        e[c] = h
        K[:, c] = -(force(q + e) - force(q - e)) / (2 * h)
    return K


def generic_prism_state(seed=1):
    prism = catalog.prism(3, rest_fraction=0.9, gravity=(0, 0, -9.806))
    rng = np.random.default_rng(seed)
    q = prism.nodes.reshape(-1) + 0.02 * rng.standard_normal(18) * ~prism.fixed.reshape(-1)
    return prism, q


@pytest.mark.parametrize("material", sorted(TABLE_6_4))
def test_compressible_tbar_compliance_table(material):
    """Paper Fig. 19: eig(C) and the static response, to the table's printed digits."""
    tbar = study_tbar(material)
    np.testing.assert_allclose(tbar.string_stiffness, 1777.153, rtol=1e-6)  # catalog.tbar("table2")
    C = compliance(tbar, bars="compressible", at_rest="taut")
    assert isinstance(C, Compliance) and C.matrix.shape == (4, 4)
    np.testing.assert_array_equal(np.flatnonzero(C.basis.any(axis=1)), [6, 8, 9, 11])
    eig, delta = TABLE_6_4[material]
    np.testing.assert_allclose(C.eigenvalues, eig, rtol=1e-5)
    f = np.zeros((4, 3))
    f[2, 2] = f[3, 2] = 100.0
    d = C.displacement(f)
    np.testing.assert_allclose([d[2, 0], d[2, 2], d[3, 0], d[3, 2]], delta, rtol=1e-5)
    np.testing.assert_allclose(C.matrix @ C.stiffness, np.eye(4), atol=1e-9)


def test_at_rest_slack_warns_and_is_singular():
    """With the default at_rest="slack" the resting strings carry nothing: 2 mechanisms."""
    tbar = study_tbar("hdpe")
    with pytest.warns(UserWarning, match=r"strings 0 \(nodes 0->1\).*at_rest='taut'"):
        with pytest.raises(ValueError, match="2 of 4 admissible directions have zero stiffness"):
            compliance(tbar, bars="compressible")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        K = tangent_stiffness(tbar, bars="compressible", at_rest="taut")
    assert np.abs(K[np.ix_([6, 8], [6, 8])]).max() > 1e3


def test_x_tensegrity_compliance():
    """Planar X (values as in tests/test_reduction.py): eig(Z^T K Z) = 20, 24, 24; eig(C) = 0.05,
    1/24, 1/24.

    Rigid bars, free-floating in the x-y plane (3 rigid fields), Euclidean gauge; the bars'
    force densities come out -1 N/m (lambda = 0.5) from the static balance.
    """
    x = x_tensegrity()
    np.testing.assert_allclose(x.bar_masses, 1.0)
    C = compliance(x)
    np.testing.assert_allclose(C.eigenvalues, [1 / 24, 1 / 24, 0.05], rtol=1e-12)
    np.testing.assert_allclose(np.linalg.eigvalsh(C.stiffness), [20, 24, 24], rtol=1e-12)
    R = rigid_fields(x)
    assert R.shape == (12, 3) and C.rigid_fields.shape == (12, 3)
    K = tangent_stiffness(x)
    assert np.abs(K @ R).max() <= 1e-12 * np.abs(K).max()
    np.testing.assert_allclose(K, tangent_stiffness(x, bar_force_densities=[-1.0, -1.0]),
                               atol=1e-12)
    assert np.abs(R.T @ C.basis).max() <= 1e-12
    assert np.abs(tc.constraint_jacobian(x) @ C.basis).max() <= 1e-12


def test_free_floating_loads_must_be_self_equilibrated():
    x = x_tensegrity()
    C = compliance(x)
    shear = np.array([[0, 1, 0], [0, -1, 0], [1, 0, 0], [-1, 0, 0]], dtype=float)
    d = C.displacement(shear)
    dq = d.reshape(-1)
    assert np.abs(C.rigid_fields.T @ dq).max() <= 1e-12
    # the response solves the reduced equations Z^T (K dq - f) = 0
    K = tangent_stiffness(x)
    assert np.abs(C.basis.T @ (K @ dq - shear.reshape(-1))).max() <= 1e-12
    push = np.zeros((4, 3))
    push[0, 0] = 1.0
    with pytest.raises(ValueError, match="not self-equilibrated"):
        C.displacement(push)


def test_rigid_tangent_matches_finite_differences():
    """K_t = -d(xi + J^T lambda)/dq with lambda held (docs/theory.md, "Norms and
    compliance"), at a generic q."""
    prism, q = generic_prism_state()
    G = tc.gravity_vector(prism)
    strings = string_law(prism)
    for psi in (np.array([-3.0, 1.5, -0.7]), None):
        K = tangent_stiffness(prism, q, bar_force_densities=psi)
        if psi is None:  # lambda from the static balance J^T lambda = Yhat gamma - G, lstsq
            J = tc.constraint_jacobian(prism, q)
            rhs = -member_force(prism, q, prism.string_nodes, strings) - G
            lam = np.linalg.lstsq(J.T, rhs, rcond=None)[0]
        else:
            lam = np.concatenate([np.zeros(9), -psi / 2])

        def force(p, lam=lam):
            return (member_force(prism, p, prism.string_nodes, strings) + G
                    + tc.constraint_jacobian(prism, p).T @ lam)

        Kfd = central_jacobian(force, q)
        assert np.abs(K - Kfd).max() <= 1e-6 * np.abs(K).max()
        assert np.abs(K - K.T).max() <= 1e-12 * np.abs(K).max()


def test_compressible_tangent_matches_finite_differences():
    """K_sys = -d(total nodal force)/dq with strings and bars on their laws, at a generic q."""
    prism, q = generic_prism_state(2)
    K = tangent_stiffness(prism, q, bars="compressible")
    strings, bars = string_law(prism), bar_law(prism)

    def force(p):
        return (member_force(prism, p, prism.string_nodes, strings)
                + member_force(prism, p, prism.bar_nodes, bars) + tc.gravity_vector(prism))

    Kfd = central_jacobian(force, q, h=1e-7)
    assert np.abs(K - Kfd).max() <= 1e-6 * np.abs(K).max()
    assert np.abs(K - K.T).max() <= 1e-12 * np.abs(K).max()


def test_given_gamma_replaces_the_geometric_term():
    """A given gamma enters as sum gamma_k Yhat_k; the material term keeps the laws."""
    prism, q = generic_prism_state(3)
    K0 = tangent_stiffness(prism, q, bars="compressible", gamma=np.zeros(9))
    K1 = tangent_stiffness(prism, q, bars="compressible", gamma=np.eye(9)[4])
    i, j = prism.string_nodes[4]
    c = np.zeros(prism.n_nodes)
    c[i], c[j] = -1.0, 1.0
    np.testing.assert_allclose(K1 - K0, np.kron(np.outer(c, c), np.eye(3)), atol=1e-9)


def test_prestressed_arm_compliance():
    """The prestressed arm (catalog.arm, paper Fig. 1b) is stiff in its plane: C is positive
    definite.

    The response to a tip load is tangent to the constraints and solves Z^T (K dq - f) = 0.
    Out of its plane only geometric stiffness acts, and the compressed bars make it negative
    (5 negative eigenvalues: out-of-plane buckling), so the planar arm has y fixed.
    """
    arm = equilibrium(catalog.arm(), gamma_min=1.0).structure
    with pytest.warns(UserWarning, match="5 negative eigenvalues"):
        compliance(arm)
    planar = dataclasses.replace(arm, fixed=arm.fixed | np.array([False, True, False]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        C = compliance(planar)
    assert np.all(C.eigenvalues > 0)
    f = np.zeros((16, 3))
    f[9, 2] = 100.0
    dq = C.displacement(f).reshape(-1)
    assert np.abs(tc.constraint_jacobian(planar) @ dq).max() <= 1e-12
    K = tangent_stiffness(planar)
    assert np.abs(C.basis.T @ (K @ dq - f.reshape(-1))).max() <= 1e-9 * 100


def test_invalid_inputs():
    prism = catalog.prism(3)
    with pytest.raises(TypeError, match="Structure"):
        tangent_stiffness(None)
    with pytest.raises(ValueError, match="bars must be"):
        tangent_stiffness(prism, bars="soft")
    with pytest.raises(ValueError, match="at_rest must be"):
        compliance(prism, at_rest="tight")
    with pytest.raises(ValueError, match=r"q must have shape \(6, 3\) or \(18,\)"):
        tangent_stiffness(prism, np.zeros(5))
    with pytest.raises(ValueError, match="gamma must be 9"):
        tangent_stiffness(prism, gamma=np.ones(3))
    with pytest.raises(ValueError, match="bar_force_densities must be 3"):
        tangent_stiffness(prism, bar_force_densities=np.ones(2))
    with pytest.raises(ValueError, match="loads must be"):
        compliance(prism).displacement(np.ones(4))
    assert "eigenvalues" in repr(compliance(prism))


# ---- issue 13: degenerate and non-finite structures ---------------------------------------


def test_bars_without_any_deformation_have_an_empty_compliance():
    """A bar pinned at one end, no strings: r = 0 (was an IndexError)."""
    s = tc.Structure([[0, 0, 0], [1, 0, 0]], bars=[dict(nodes=(0, 1), radius=0.01, density=100)],
                     fixed={0: "xyz"}, name="one")
    c = compliance(s)
    assert c.matrix.shape == (0, 0) and c.eigenvalues.size == 0
    along = np.zeros((2, 3))
    along[1, 0] = 5.0                                   # along the bar: taken by it
    np.testing.assert_array_equal(c.displacement(along), np.zeros((2, 3)))
    across = np.zeros((2, 3))
    across[1, 1] = 5.0                                  # across: a rigid rotation, no statics
    with pytest.raises(ValueError, match="not self-equilibrated"):
        c.displacement(across)
    assert "reduced_coordinates=0" in repr(c)


def test_two_free_bars_without_strings_are_a_mechanism():
    s = tc.Structure([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]],
                     bars=[dict(nodes=(0, 1), radius=0.01, density=100),
                           dict(nodes=(2, 3), radius=0.01, density=100)],
                     fixed={0: "xyz", 2: "xyz"}, name="two")
    with pytest.raises(ValueError, match=r"zero stiffness .*\(the structure has no strings\)"):
        compliance(s)


# 0.3 blamed "a mechanism"; such strings are now refused when the structure is built
# (tenscontrol.model), naming the string.
@pytest.mark.parametrize("fields, match", [
    (dict(youngs_modulus=1e308, radius=1.0), r"stiffness inf N/m .* is out of range"),
    (dict(rest_fraction=1e-320), r"rest length 3.54e-320 m .* is out of range"),
])
@pytest.mark.parametrize("who", ["compliance", "tangent_stiffness"])
def test_infinite_stiffness_is_named_not_blamed_on_a_mechanism(fields, match, who):
    tbar = catalog.tbar()
    with pytest.raises(ValueError, match=rf"string 0 \(nodes 0->1\): {match}"):
        s = dataclasses.replace(tbar, strings=tuple(dataclasses.replace(m, **fields)
                                                    for m in tbar.strings))
        getattr(tc, who)(s)


def test_overflowing_force_densities_are_named():
    tbar = catalog.tbar()
    with pytest.raises(ValueError, match=r"compliance: tbar-stedy: the tangent stiffness "
                                         r"K\[0, 0\] .* is nan"):
        compliance(tbar, gamma=np.full(4, 1e308))
    with pytest.raises(ValueError, match=r"compliance: string 0 .*length at the configuration"):
        compliance(tbar, q=tbar.nodes * 1e160)


@pytest.mark.parametrize("make", [catalog.icosahedron, lambda: catalog.prism(3).with_fixed([])],
                         ids=["icosahedron", "free prism"])
def test_free_floating_rigid_bars_have_six_rigid_fields(make):
    """3-D, nothing fixed, rigid bars: J R vanishes to rounding, and all 6 rigid motions are
    kept (a tolerance relative to J R's rounding-sized singular values kept none); the
    compliance on their complement is finite and solves the reduced equations."""
    s = equilibrium(make(), gamma_min=20.0).structure
    R = rigid_fields(s)
    assert R.shape == (3 * s.n_nodes, 6)
    np.testing.assert_allclose(R.T @ R, np.eye(6), atol=1e-12)
    assert np.abs(tc.constraint_jacobian(s) @ R).max() <= 1e-12
    C = compliance(s)
    assert C.rigid_fields.shape[1] == 6 and np.all(np.isfinite(C.matrix))
    assert C.eigenvalues[0] > 0
    # oracle: the constraint tangent space has 3n - n_bars directions, less the 6 rigid ones
    assert C.basis.shape[1] == 3 * s.n_nodes - s.n_bars - 6
    K = tangent_stiffness(s)
    assert np.abs(K @ R).max() <= 1e-9 * np.abs(K).max()
    i, j = s.string_nodes[0]  # pull the ends of string 0 apart: a self-equilibrated load
    e = (s.nodes[j] - s.nodes[i]) / np.linalg.norm(s.nodes[j] - s.nodes[i])
    pull = np.zeros((s.n_nodes, 3))
    pull[i], pull[j] = -e, e
    dq = C.displacement(pull).reshape(-1)
    assert np.abs(dq).max() > 0 and np.abs(R.T @ dq).max() <= 1e-12
    assert np.abs(C.basis.T @ (K @ dq - pull.reshape(-1))).max() <= 1e-9
