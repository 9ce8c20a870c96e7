"""Analytic linearization against central differences of independent models.

See docs/theory.md, "Linearization: force densities in, nodal forces as disturbances".
The oracle is a plain dense KKT solve of Hsu et al. (2021), eq. (21), written here (selection
matrices of docs/theory.md, "The Lagrangian model in Cartesian nodal coordinates", no library
kernels), with the force densities held (control model) or following the elastic law plus an
additive increment (passive model). ``fd_errors`` returns the maximum relative errors of A, B and E
so that a script can print them too.
"""

import dataclasses
import warnings

import numpy as np
import pytest
import scipy.linalg

import tenscontrol as tc
from tenscontrol.model import catalog
from tenscontrol import Selection
from tenscontrol.linear.linearization import LinearModel, linearize

FD_TOL = 1e-7   # analytic vs central differences measured <= 3e-9; here they reach ~1e-9


# ---- an independent dense model (docs/theory.md, "The Lagrangian model in Cartesian nodal
# coordinates", "Rigid bars: constraints and multipliers" and "Compressible bars" with constant
# mass) ------------------------------------------------------------------------------------


def selection(pairs, k, n):
    """X_k = (e_k^T C) kron I_3, shape (3, 3n)."""
    C = np.zeros(n)
    C[pairs[k][0]], C[pairs[k][1]] = -1.0, 1.0
    return np.kron(C[None, :], np.eye(3))


def dense_mass(structure):
    n = structure.n_nodes
    M = np.zeros((3 * n, 3 * n))
    for k, m in enumerate(structure.bar_masses):
        X = selection(structure.bar_nodes, k, n)
        M += m * (np.abs(X) / 2).T @ (np.abs(X) / 2) + m / 12 * X.T @ X
    for pm in structure.point_masses:
        P = np.kron(np.eye(n)[pm.node][None, :], np.eye(3))
        M += pm.mass * P.T @ P
    return M


def active_set(structure, q, at_rest="slack"):
    """Springs, stretched strings, and strings at rest length under at_rest='taut'."""
    p = structure.string_nodes
    N = q.reshape(-1, 3)
    l = np.linalg.norm(N[p[:, 1]] - N[p[:, 0]], axis=1)
    l0 = structure.string_rest_lengths
    rest = np.abs(l - l0) <= 1e-12 * l0
    return structure.string_is_spring | ((l > l0) & ~rest) | (rest & (at_rest == "taut"))


def oracle_qdd(structure, q, qd, f, u, active, law, bars):
    """qdd of the dense KKT system (Hsu et al. (2021), eq. (21)); the active set is frozen.

    u: force densities (strings, then bars if compressible); held if not `law`, else added to
    the elastic laws k (1 - l0/l) (tension-side formula on frozen active strings).
    """
    n, ns = structure.n_nodes, structure.n_strings
    M = dense_mass(structure)
    xi = np.kron(structure.node_masses, structure.gravity) + f
    for k in np.flatnonzero(active):
        Y = selection(structure.string_nodes, k, n)
        Yh = Y.T @ Y
        l2 = q @ Yh @ q
        g = u[k] + (structure.string_stiffness[k] * (1 - structure.string_rest_lengths[k]
                                                     / np.sqrt(l2)) if law else 0.0)
        xi -= (g + structure.string_damping[k] * (q @ Yh @ qd) / l2) * Yh @ q
    rows = [np.eye(3 * n)[structure.fixed_coordinates]]
    h = [np.zeros(len(structure.fixed_coordinates))]
    for k in range(structure.n_bars):
        X = selection(structure.bar_nodes, k, n)
        H = X.T @ X
        if bars == "rigid":
            rows.append((2 * q @ H)[None, :])
            h.append([2 * qd @ H @ qd])
        else:
            l = np.sqrt(q @ H @ q)
            l0 = structure.bar_rest_lengths[k]
            psi = u[ns + k] + (structure.bar_stiffness[k] * (1 - l0 / l) if law else 0.0)
            xi -= psi * H @ q
    J, h = np.vstack(rows), np.concatenate(h)
    c = J.shape[0]
    kkt = np.block([[M, -J.T], [-J, np.zeros((c, c))]])
    return np.linalg.solve(kkt, np.concatenate([xi, h]))[:3 * n]


def fd_errors(structure, *, qd=None, bars="rigid", kind="control", at_rest="slack", **kw):
    """Max relative errors of A, B, E against central differences of `oracle_qdd`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = linearize(structure, qd=qd, bars=bars, kind=kind, at_rest=at_rest, **kw)
    q, qd, f = model.q, model.qd, model.loads
    nq = q.size
    active = active_set(structure, q, at_rest)
    law = kind == "passive"
    u0 = np.concatenate([model.gamma, model.bar_force_densities if bars == "compressible"
                         else np.zeros(0)])
    if law:  # passive: u is the increment over the elastic law
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            u0 = u0 - np.concatenate([linearize(structure, q=q, bars=bars, kind="control",
                                                at_rest=at_rest).gamma,
                                      u0[structure.n_strings:]])

    def F(x, u, d):
        return oracle_qdd(structure, x[:nq], x[nq:], d, u, active, law, bars)

    x0 = np.concatenate([q, qd])
    cases = (("A", x0, 1e-6, lambda v: F(v, u0, f), model.A[nq:]),
             ("B", u0, 1e-3, lambda v: F(x0, v, f), model.B[nq:]),
             ("E", f, 1e-3, lambda v: F(x0, u0, v), model.E[nq:]))
    errors = {}
    for name, v0, rel, fun, analytic in cases:
        fd = np.zeros_like(analytic)
        for i in range(v0.size):
            h = rel * max(1.0, abs(v0[i]))
            e = np.zeros_like(v0)
            e[i] = h
            fd[:, i] = (fun(v0 + e) - fun(v0 - e)) / (2 * h)
        errors[name] = np.abs(fd - analytic).max() / max(np.abs(analytic).max(), 1e-300)
    return errors


# ---- test structures ------------------------------------------------------------------------


def moving_qd(structure, bars, seed=0):
    """Random velocities on the free coordinates, projected onto null(J_Phi) for rigid bars."""
    rng = np.random.default_rng(seed)
    nq = 3 * structure.n_nodes
    J = tc.constraint_jacobian(structure) if bars == "rigid" else \
        np.eye(nq)[structure.fixed_coordinates]
    Z = scipy.linalg.null_space(J)
    qd = Z @ (Z.T @ rng.standard_normal(nq))
    qd[structure.fixed_coordinates] = 0.0  # exactly, not to rounding
    return qd


def prestressed_prism(bars):
    """prism(3) with rest lengths that give its self-stress (bar forces -> 10 N/m scale).

    The self-stress is the null vector of the free-standing prism's equilibrium matrix
    [Yhat(q) Xhat(q)] (docs/theory.md, "Prestress"); with the base fixed, q0 is then an equilibrium.
    """
    base = catalog.prism(3)
    q = base.nodes.reshape(-1)
    n = base.n_nodes
    cols = [selection(base.string_nodes, k, n).T @ selection(base.string_nodes, k, n) @ q
            for k in range(base.n_strings)]
    cols += [selection(base.bar_nodes, k, n).T @ selection(base.bar_nodes, k, n) @ q
             for k in range(base.n_bars)]
    w = scipy.linalg.null_space(np.column_stack(cols))
    assert w.shape[1] == 1
    w = w[:, 0] * 10 / np.abs(w[:, 0]).max() * np.sign(w[0, 0])
    gamma, psi = w[:9], w[9:]
    assert gamma.min() > 0 and psi.max() < 0
    k, l = base.string_stiffness, base.string_lengths
    strings = [{"nodes": tuple(p), "kind": "string", "stiffness": kk,
                "rest_length": ll * (1 - g / kk), "damping": 0.3}
               for p, kk, ll, g in zip(base.string_nodes, k, l, gamma)]
    EA = 68e9 * np.pi * 0.01**2  # aluminium, radius 0.01: psi = EA (1/l0 - 1/l)
    bars_ = [{"nodes": tuple(p), "radius": 0.01, "material": "aluminium",
              "rest_length": 1 / (ps / EA + 1 / lb)}
             for p, lb, ps in zip(base.bar_nodes, base.bar_lengths, psi)]
    if bars == "rigid":
        bars_ = [dict(b, rest_length=None) for b in bars_]
    s = tc.Structure(base.nodes, bars_, strings, fixed={0: "xyz", 1: "xyz", 2: "xyz"},
                     name="prism-3-prestressed")
    return s, gamma, psi


def x_tensegrity():
    """The planar free-floating X tensegrity: two 1 kg bars of length 2, four springs k = 11."""
    nodes = [(-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0)]
    r = 0.01
    bar = {"radius": r, "density": 1 / (np.pi * r**2 * 2)}  # 1 kg at length 2
    bars = [dict(bar, nodes=(0, 1)), dict(bar, nodes=(2, 3))]
    springs = [{"nodes": p, "kind": "spring", "stiffness": 11.0,
                "rest_length": 10 * np.sqrt(2) / 11, "damping": 0.05}
               for p in ((0, 2), (2, 1), (1, 3), (3, 0))]
    return tc.Structure(nodes, bars, springs, fixed={i: "z" for i in range(4)}, name="x")


RIGID_CASES = {
    "tbar": lambda: catalog.tbar("stedy", damping=1.0),
    "ball": catalog.ball,
    "prism": lambda: prestressed_prism("rigid")[0],
}
COMPRESSIBLE_CASES = {
    "tbar-hdpe": lambda: catalog.tbar(bar_material="hdpe", damping=1.0),
    "prism-al": lambda: catalog.prism(3),
    "prism-al-prestressed": lambda: prestressed_prism("compressible")[0],
}


# ---- finite-difference checks ---------------------------------------------------------------


@pytest.mark.parametrize("kind", ["control", "passive"])
@pytest.mark.parametrize("moving", [False, True])
@pytest.mark.parametrize("name", list(RIGID_CASES))
def test_rigid_matches_finite_differences(name, moving, kind):
    s = RIGID_CASES[name]()
    err = fd_errors(s, qd=moving_qd(s, "rigid") if moving else None, kind=kind)
    assert max(err.values()) < FD_TOL, err


@pytest.mark.parametrize("kind", ["control", "passive"])
@pytest.mark.parametrize("moving", [False, True])
def test_rigid_tbar_at_rest_strings_taut(moving, kind):
    # the top string m2 sits at its rest length: tension-side derivative with damper on
    s = catalog.tbar("stedy", damping=1.0)
    err = fd_errors(s, qd=moving_qd(s, "rigid", 1) if moving else None, kind=kind,
                    at_rest="taut")
    assert max(err.values()) < FD_TOL, err


@pytest.mark.parametrize("kind", ["control", "passive"])
@pytest.mark.parametrize("moving", [False, True])
@pytest.mark.parametrize("name", list(COMPRESSIBLE_CASES))
def test_compressible_matches_finite_differences(name, moving, kind):
    s = COMPRESSIBLE_CASES[name]()
    err = fd_errors(s, qd=moving_qd(s, "compressible") if moving else None, kind=kind,
                    bars="compressible")
    assert max(err.values()) < FD_TOL, err


@pytest.mark.parametrize("kind", ["control", "passive"])
@pytest.mark.parametrize("moving", [False, True])
def test_compressible_tbar_at_rest_strings_taut(moving, kind):
    # m2 at rest with a damper: linearize swaps the damper in (tc.jacobians has it off)
    s = catalog.tbar(bar_material="hdpe", damping=1.0)
    err = fd_errors(s, qd=moving_qd(s, "compressible", 4) if moving else None, kind=kind,
                    bars="compressible", at_rest="taut")
    assert max(err.values()) < FD_TOL, err


def test_compressible_paper_mode_with_radius_matches_library_accelerations():
    # kinetic and include_radius reach tc.jacobians: configuration-dependent mass
    s = catalog.prism(3, bar_material="hdpe")
    qd = moving_qd(s, "compressible", 5)
    opts = {"kinetic": "paper", "include_radius": True}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = linearize(s, qd=qd, bars="compressible", kind="passive", **opts)
    opts["bars"] = "compressible"
    nq = model.q.size
    x0 = np.concatenate([model.q, qd])
    fd = np.zeros((nq, 2 * nq))
    for i in range(2 * nq):
        e = np.zeros(2 * nq)
        e[i] = 1e-7
        fd[:, i] = (tc.accelerations(s, (x0 + e)[:nq], (x0 + e)[nq:], **opts)[0]
                    - tc.accelerations(s, (x0 - e)[:nq], (x0 - e)[nq:], **opts)[0]) / 2e-7
    assert np.abs(fd - model.A[nq:]).max() < FD_TOL * np.abs(model.A[nq:]).max()
    np.testing.assert_allclose(model.mass_matrix, tc.mass_matrix(s, model.q, **opts), rtol=1e-14)


def test_passive_rigid_matches_library_accelerations():
    # the passive model is the derivative of tenscontrol.accelerations (elastic law, slack rule)
    s = catalog.ball()
    qd = moving_qd(s, "rigid", 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = linearize(s, qd=qd, kind="passive")
    nq = model.q.size
    x0 = np.concatenate([model.q, qd])
    fd = np.zeros((nq, 2 * nq))
    for i in range(2 * nq):
        e = np.zeros(2 * nq)
        e[i] = 1e-6
        fd[:, i] = (tc.accelerations(s, (x0 + e)[:nq], (x0 + e)[nq:])[0]
                    - tc.accelerations(s, (x0 - e)[:nq], (x0 - e)[nq:])[0]) / 2e-6
    assert np.abs(fd - model.A[nq:]).max() < FD_TOL * np.abs(model.A[nq:]).max()


@pytest.mark.parametrize("name", list(COMPRESSIBLE_CASES))
def test_compressible_passive_equals_elastic_law_jacobian(name):
    # A + B [dgamma/dq dpsi/dq; 0] equals tc.jacobians with the laws followed
    s = COMPRESSIBLE_CASES[name]()
    qd = moving_qd(s, "compressible", 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = linearize(s, qd=qd, bars="compressible", kind="passive")
    nq = model.q.size
    jac = tc.jacobians(s, model.q, qd, bars="compressible")
    scale = np.abs(jac["dq"]).max()
    assert np.abs(model.A[nq:, :nq] - jac["dq"]).max() <= 1e-12 * scale
    assert np.abs(model.A[nq:, nq:] - jac["dqd"]).max() <= 1e-12 * np.abs(jac["dqd"]).max()
    np.testing.assert_allclose(model.B[nq:, s.n_strings:], jac["dbar_force_densities"], atol=1e-12 * scale)


# ---- equilibria, stiffness, reference model ---------------------------------------------------


@pytest.mark.parametrize("bars", ["rigid", "compressible"])
def test_prestressed_prism_is_an_equilibrium_with_its_self_stress(bars):
    s, gamma, psi = prestressed_prism(bars)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "not in equilibrium" warning
        model = linearize(s, bars=bars, kind="control")
    assert model.at_equilibrium and model.kind == "control"
    np.testing.assert_allclose(model.gamma, gamma, rtol=1e-9)
    np.testing.assert_allclose(model.bar_force_densities, psi, rtol=1e-7)


@pytest.mark.parametrize("kind", ["control", "passive"])
@pytest.mark.parametrize("bars", ["rigid", "compressible"])
def test_stiffness_damping_mass_reproduce_A_on_the_tangent_space(bars, kind):
    # at an equilibrium, Z^T M A21 Z = -Z^T K Z and Z^T M A22 Z = -Z^T D Z (Z = null(J_Phi))
    s, _, _ = prestressed_prism(bars)
    model = linearize(s, bars=bars, kind=kind)
    nq = model.q.size
    Z = scipy.linalg.null_space(model.constraint_jacobian)
    M, A = model.mass_matrix, model.A
    K = model.stiffness
    np.testing.assert_allclose(Z.T @ M @ A[nq:, :nq] @ Z, -Z.T @ K @ Z,
                               atol=1e-10 * np.abs(Z.T @ K @ Z).max())
    np.testing.assert_allclose(Z.T @ M @ A[nq:, nq:] @ Z, -Z.T @ model.damping @ Z,
                               atol=1e-12 * np.abs(model.damping).max())
    np.testing.assert_allclose(Z.T @ M @ model.B[nq:], Z.T @ model.force_input,
                               atol=1e-12 * np.abs(model.force_input).max())
    # the passive stiffness is the control one plus the (PSD) material stiffness
    mat = (linearize(s, bars=bars, kind="passive").stiffness
           - linearize(s, bars=bars, kind="control").stiffness)
    assert np.linalg.eigvalsh(0.5 * (mat + mat.T)).min() > -1e-9 * np.abs(mat).max()


def test_x_tensegrity_passive_elastic_eigenvalues():
    # eig(A_e) = -0.1 +- 6.9274815j (double), -0.3 +- 10.9503425j (omega^2 = 48, 48, 120)
    model = linearize(x_tensegrity(), kind="passive")
    assert model.at_equilibrium and model.kind == "passive"
    np.testing.assert_allclose(model.bar_force_densities, [-1.0, -1.0], rtol=1e-12)
    np.testing.assert_allclose(model.gamma, np.ones(4), rtol=1e-12)
    eig = np.linalg.eigvals(model.A)
    for target, multiplicity in ((-0.1 + 6.9274815j, 2), (-0.3 + 10.9503425j, 1)):
        for t in (target, np.conj(target)):
            close = np.abs(eig - t) < 1e-6
            assert close.sum() == multiplicity, (t, np.sort_complex(eig))
    # everything else is a constraint or rigid zero mode
    others = eig[np.abs(eig.imag) < 1.0]
    assert np.abs(others).max() < 1e-5
    # elastic subspace Z = null([J; R_t^T M]) (docs/theory.md, "Minimal realization"):
    # eig(Z^T M Z) = 1/6, 1/2, 1/2 and eig(Z^T K_t Z) = 20, 24, 24; K_t R_t = 0 ("Norms and
    # compliance")
    N = model.q.reshape(-1, 3)
    R = np.column_stack([np.tile([1.0, 0, 0], 4), np.tile([0, 1.0, 0], 4),
                         np.cross([0, 0, 1.0], N).reshape(-1)])
    Z = scipy.linalg.null_space(np.vstack([model.constraint_jacobian, R.T @ model.mass_matrix]))
    np.testing.assert_allclose(np.linalg.eigvalsh(Z.T @ model.mass_matrix @ Z),
                               [1 / 6, 1 / 2, 1 / 2], rtol=1e-12)
    np.testing.assert_allclose(np.linalg.eigvalsh(Z.T @ model.stiffness @ Z), [20, 24, 24],
                               rtol=1e-12)
    assert np.abs(model.stiffness @ R).max() < 1e-12


# ---- API: names, outputs, kinds, warnings, validation ------------------------------------------


def test_signal_names_survive_in_sys():
    s = catalog.tbar("stedy", damping=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = linearize(s, kind="control", outputs=Selection(nodes=[2, 3], axes="xz"))
        comp = linearize(catalog.tbar(bar_material="hdpe"), bars="compressible", kind="control")
    sys = model.sys
    assert sys.state_labels[:4] == ["x0", "y0", "z0", "x1"] and sys.state_labels[12] == "vx0"
    assert sys.input_labels[:5] == ["gamma0", "gamma1", "gamma2", "gamma3", "fx0"]
    assert sys.input_labels[-1] == "fz3" and len(sys.input_labels) == 4 + 12
    assert sys.output_labels == ["x2", "z2", "x3", "z3"]
    assert sys.name == "tbar-stedy"
    np.testing.assert_array_equal(sys.A, model.A)
    assert comp.input_names[-2:] == ("psi0", "psi1") and comp.sys.ninputs == 6 + 12


def test_with_outputs_and_free_states():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = linearize(catalog.tbar("stedy"), kind="control")
    s_fixed = catalog.tbar("stedy").fixed_coordinates
    assert model.C.shape == (12, 24) and model.output_names == model.state_names[:12]
    out = model.with_outputs(Selection(nodes=[3, 2], axes="zx"), velocities=True)
    assert out.output_names == ("z3", "x3", "z2", "x2", "vz3", "vx3", "vz2", "vx2")
    np.testing.assert_array_equal(out.C @ np.arange(24.0), [11, 9, 8, 6, 23, 21, 20, 18])
    # fixed coordinates (y of nodes 2, 3, all of nodes 0, 1) are left out
    assert model.with_outputs(Selection()).output_names == ("x2", "z2", "x3", "z3")
    np.testing.assert_array_equal(model.free_states, [6, 8, 9, 11, 18, 20, 21, 23])
    # nodal forces on fixed coordinates are absorbed by the constraints
    assert np.all(model.E[:, s_fixed] == 0) and np.all(model.A[12 + s_fixed] == 0)
    with pytest.raises(ValueError, match="node 7 is not a node index"):
        model.with_outputs(Selection(nodes=[7]))
    with pytest.raises(ValueError, match="axes must be distinct letters"):
        model.with_outputs(Selection(axes="xw"))
    with pytest.raises(ValueError, match="every selected coordinate"):
        model.with_outputs(Selection(nodes=[0]))
    with pytest.raises(TypeError, match=r"with_outputs: outputs must be a tenscontrol\.Selection: "
                                        r"write Selection\(nodes=\[2, 3\], axes='xz'\)"):
        model.with_outputs({"nodes": [2, 3], "axes": "xz"})


def test_kinds_and_passive():
    s = prestressed_prism("rigid")[0]
    control = linearize(s, kind="control")
    passive = control.passive()
    assert passive.kind == "passive" and passive.passive() is passive
    direct = linearize(s, kind="passive")
    np.testing.assert_array_equal(direct.A, passive.A)
    np.testing.assert_array_equal(control.B, passive.B)
    np.testing.assert_array_equal(control.E, passive.E)
    assert not np.allclose(control.A, passive.A)
    assert isinstance(control, LinearModel) and control.A.flags.writeable is False


@pytest.mark.filterwarnings("ignore:.*not in equilibrium")
def test_at_rest_rule_warns_and_zeroes_the_slack_string():
    s = catalog.tbar("stedy", damping=1.0)
    with pytest.warns(UserWarning, match=r"string 2 \(nodes 2->3\)"):
        slack = linearize(s, kind="control")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        taut = linearize(s, at_rest="taut", kind="control").passive()
    nq = 12
    assert np.all(slack.B[:, 2] == 0) and np.abs(taut.B[nq:, 2]).max() > 0
    assert np.all(slack.force_density_gradient[2] == 0)
    # taut: material stiffness k s s^T / l^2 of m2 on nodes 2, 3 (x direction)
    k, c = s.string_stiffness[2], 5 * np.cos(np.pi / 4)
    # s = n3 - n2 = (-c, 0, 0): the gradient's x entry on node 3 (q index 9) is k s_x / l^2
    assert taut.force_density_gradient[2, 9] == pytest.approx(-k / c, rel=1e-12)
    assert taut.damping[9, 9] == pytest.approx(1.0, rel=1e-12) and slack.damping[9, 9] == 0


def test_non_equilibrium_warns_and_moving_state_does_not():
    s = catalog.tbar("stedy")
    with pytest.warns(UserWarning, match=r"tenscontrol\.equilibrium"):
        model = linearize(s, at_rest="taut", kind="control")
    assert not model.at_equilibrium
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        moving = linearize(s, qd=moving_qd(s, "rigid"), at_rest="taut", kind="control")
    assert not moving.at_equilibrium


def test_bar_force_densities_match_accelerations():
    s = catalog.ball()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = linearize(s, kind="control")
    qdd, psi = tc.accelerations(s)
    np.testing.assert_allclose(model.bar_force_densities, psi, rtol=1e-10)
    np.testing.assert_allclose(model.gamma, tc.force_densities(s), rtol=1e-14)


def test_input_validation():
    s = catalog.tbar("stedy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TypeError, match="expected a tenscontrol.Structure"):
            linearize("tbar")
        with pytest.raises(ValueError, match="bars must be one of"):
            linearize(s, bars="elastic")
        with pytest.raises(ValueError, match="kind must be one of"):
            linearize(s, kind="open-loop")
        with pytest.raises(ValueError, match="at_rest must be one of"):
            linearize(s, at_rest="tight")
        with pytest.raises(ValueError, match="kinetic must be one of"):
            linearize(s, kinetic="rod")
        with pytest.raises(ValueError, match=r"q must have shape \(4, 3\) or \(12,\)"):
            linearize(s, q=np.zeros(5))
        qd = np.zeros(12)
        qd[1] = 1.0
        with pytest.raises(ValueError, match="fixed coordinate y0"):
            linearize(s, qd=qd)
        with pytest.raises(ValueError, match=r"string 2 \(nodes 2->3\) is slack"):
            linearize(s, gamma=[0, 1, 1, 1])
        with pytest.raises(ValueError, match="cannot push"):
            linearize(s, gamma=[0, -1, 0, 1], at_rest="taut")
        with pytest.raises(ValueError, match="gamma must be 4 finite"):
            linearize(s, gamma=[1, 2])
        with pytest.raises(TypeError, match=r"linearize: outputs must be a tenscontrol\.Selection, "
                                            r"e\.g\. Selection\(nodes=\[2, 3\]"):
            linearize(s, outputs=[2, 3])
        with pytest.raises(TypeError, match=r"linearize: outputs must be a tenscontrol\.Selection: "
                                            r"write Selection\(nodes=2, axes='z'\) for str 'z2'"):
            linearize(s, outputs="z2")
        with pytest.raises(ValueError, match="linearize: outputs selects node coordinates only"):
            linearize(s, outputs=Selection(nodes=[], strings=[1]))
        with pytest.warns(UserWarning, match="violates the rigid bar constraints"):
            q = s.nodes.reshape(-1).copy()
            q[6] += 0.1
            linearize(s, q=q)


# ---- issue 13: derived quantities that overflow, fixed coordinates moving by round-off ------


def _with_strings(structure, **fields):
    return dataclasses.replace(structure, strings=tuple(
        dataclasses.replace(s, **fields) for s in structure.strings))


# Such members are refused when the structure is built (tenscontrol.model, issue 13), naming
# the member; linearize's own checks (mechanics.checks) guard what is given at call time: the
# configuration q, the loads (test_overflowing_operating_point_is_never_returned).
@pytest.mark.parametrize("make, match", [
    (lambda t: _with_strings(t, youngs_modulus=1e308, radius=1.0),     # A had 288 non-finite
     r"string 0 \(nodes 0->1\): stiffness inf N/m \(E pi r\^2 / l0 with youngs_modulus 1e\+308"),
    (lambda t: _with_strings(t, rest_fraction=1e-320),
     r"string 0 \(nodes 0->1\): rest length 3.54e-320 m \(rest_fraction .* is out of range"),
    (lambda t: dataclasses.replace(t, bars=tuple(dataclasses.replace(b, density=1e308)
                                                 for b in t.bars)),
     r"bar 0 \(nodes 0->2\): mass rho pi r\^2 l inf kg"),
    (lambda t: dataclasses.replace(t, bars=tuple(dataclasses.replace(b, radius=1e-160)
                                                 for b in t.bars)),
     r"bar 0 \(nodes 0->2\): radius 1e-160 m \(as given\) is out of range"),
    (lambda t: dataclasses.replace(t, nodes=t.nodes * 1e160),
     r"node 1: coordinates must lie within \+-1e\+30 m"),
])
@pytest.mark.parametrize("bars", ["rigid", "compressible"])
def test_overflowing_derived_quantities_are_named(make, match, bars):
    with pytest.raises(ValueError, match=match):
        linearize(make(catalog.tbar()), bars=bars)


def test_overflowing_operating_point_is_never_returned():
    """Finite members whose products overflow: the result is checked, never returned."""
    tbar = catalog.tbar()
    with pytest.raises(ValueError, match=r"linearize: tbar-stedy: qdd has 12 non-finite entries, "
                                         r"the first qdd\[0\] = nan \(the acceleration of x0\)"
                                         r".*loads up to 1e\+308 N"):
        linearize(tbar, loads=np.full(12, 1e308))
    with pytest.raises(ValueError, match=r"the length at the configuration \(inf m\)"):
        linearize(tbar, q=tbar.nodes * 1e200)


def test_fixed_coordinate_round_off_is_accepted_and_zeroed():
    """qd = 9.8e-15 on z0 (another integrator's output at rest) is round-off, not motion."""
    tbar = tc.equilibrium(catalog.tbar(), gamma_min=10.0).structure
    qd = np.zeros(12)
    qd[2] = 9.8e-15
    model = linearize(tbar, qd=qd)
    assert model.qd[2] == 0.0 and not model.qd.any()
    exact = linearize(tbar)
    np.testing.assert_array_equal(model.A, exact.A)
    # relative to the state's scale: 1e-9 of the fastest velocity
    qd[6], qd[2] = 10.0, 5e-9
    with pytest.warns(UserWarning, match="violates the rigid bar constraints"):
        assert linearize(tbar, qd=qd).qd[2] == 0.0
    qd[2] = 1e-3                                          # a real motion stays an error
    with pytest.raises(ValueError, match=r"qd: the fixed coordinate z0 \(q index 2\) must have "
                                         r"zero velocity, got 0.001 \(round-off up to 1e-08"):
        linearize(tbar, qd=qd)


# ---- the equilibrium test against the static solve's convergence test ----------------------


def _as_built_tbars(bars):
    """The steel T-bar (compressible: k_b = 3.1e8 N/m) with string errors, as a study builds it."""
    design = tc.equilibrium(catalog.tbar("stedy", damping=5.0), gamma_min=5.0,
                            bars=bars).structure
    rng = np.random.default_rng(3)
    for k_error in (-0.3, -0.1, 0.0, 0.2):
        s = design.with_strings(rest_length=design.string_rest_lengths
                                * (1.0 + rng.uniform(-0.05, 0.05, 4)))
        yield s.with_strings(stiffness=s.string_stiffness * (1.0 + k_error))


@pytest.mark.parametrize("bars", ["rigid", "compressible"])
def test_what_static_equilibrium_converged_to_is_an_equilibrium(bars):
    for built in _as_built_tbars(bars):
        settled = tc.static_equilibrium(built, bars=bars).structure
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)     # "not in equilibrium" would raise
            model = linearize(settled, bars=bars, at_rest="taut")
        assert model.at_equilibrium


def test_the_equilibrium_test_allows_the_forces_rounding_and_no_more(monkeypatch):
    import tenscontrol.linear.linearization as lin
    from tenscontrol.mechanics.scales import force_rounding

    settled = tc.static_equilibrium(next(_as_built_tbars("compressible")),
                                    bars="compressible").structure
    floor = force_rounding(settled, "compressible")       # 16 eps k_b l_b = 5.6e-6 N
    assert floor == pytest.approx(16 * np.finfo(float).eps * settled.bar_stiffness[0]
                                  * settled.bar_lengths[0], rel=1e-12)
    along = settled.nodes[2] - settled.nodes[0]            # bar 0, node 2 free in x and z
    along /= np.linalg.norm(along)

    def at_equilibrium(force):
        """linearize's verdict with node 2 moved along bar 0 by force / k_b [N]."""
        N = settled.nodes.copy()
        N[2] += along * force / settled.bar_stiffness[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return linearize(settled, q=N, bars="compressible", at_rest="taut").at_equilibrium

    # half the rounding floor: accepted, though above 1e-8 of the forces' acceleration scale
    assert at_equilibrium(0.5 * floor)
    monkeypatch.setattr(lin, "_ROUNDING_FACTOR", 0.0)
    assert not at_equilibrium(0.5 * floor)
    monkeypatch.undo()
    assert not at_equilibrium(100 * floor)


def test_the_force_rounding_floor_counts_the_coordinates_spacing():
    # the floor static_equilibrium stops at and linearize accepts: 16 eps k l, or eps k |q|
    # where the structure sits far from the origin (a tall tower's top: 64 m for the 192-bar
    # steel tower), since a coordinate is known to eps |q| only
    from tenscontrol.mechanics.scales import force_rounding
    from tenscontrol.statics import solve

    tbar = tc.catalog.tbar()
    near = force_rounding(tbar)
    k, l = tbar.string_stiffness.max(), tbar.string_lengths.max()
    assert near == pytest.approx(16 * np.finfo(float).eps * np.max(tbar.string_stiffness
                                                                     * tbar.string_lengths))
    far = tbar.with_nodes(tbar.nodes + [0.0, 0.0, 1e4])
    assert force_rounding(far) == pytest.approx(np.finfo(float).eps * k * (1e4 + l), rel=1e-3)
    assert force_rounding(far) > 100 * near
    # one floor for both: the static solve's is this function
    p = solve._problem(far, None, "rigid")
    assert solve._rounding_floor(p) == force_rounding(far)
