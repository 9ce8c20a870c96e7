"""Structural reduction and minimal realisation (docs/theory.md, "Minimal realization").

The planar free-floating X tensegrity (two 1 kg bars of length 2, four springs) is assembled here
by hand from docs/theory.md, "Linearization: force densities in, nodal forces as disturbances"
and "Norms and compliance" (no mechanics code), as a duck-typed LinearModel. Its reference
values were computed three independent ways (Galerkin projection, spectral split, Euclidean
projection, which coincide on the symmetric X); the closed forms are given where they exist.
"""

from dataclasses import dataclass

import numpy as np
import pytest
import scipy.linalg
import control as ct

from tenscontrol.linear.norms import h2_norm, hinf_norm
from tenscontrol.linear.reduction import (ElasticModel, MinimalRealization, elastic_basis, elastic_model,
                                   minimal_realization)
from tenscontrol.linear.norms import kalman_minimal


@dataclass(frozen=True)
class FakeLinearModel:
    """The fields of tenscontrol.linear.linearization.LinearModel that the reduction uses."""

    A: np.ndarray
    B: np.ndarray
    E: np.ndarray
    C: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    kind: str
    bars: str
    at_equilibrium: bool
    constraint_jacobian: np.ndarray
    mass_matrix: np.ndarray
    stiffness: np.ndarray
    damping: np.ndarray
    force_input: np.ndarray
    state_names: tuple
    input_names: tuple
    disturbance_names: tuple
    output_names: tuple
    sys: ct.StateSpace


def assemble(M, K, D, F_u, J, C, q, qd=None, at_equilibrium=True, kind="passive"):
    """LinearModel: A = [[0, I], [-W P K, -W P D]], B, E = [0; W P (.)].

    See docs/theory.md, "Linearization: force densities in, nodal forces as disturbances".
    """
    nq = M.shape[0]
    W = np.linalg.inv(M)
    P = np.eye(nq) - J.T @ np.linalg.solve(J @ W @ J.T, J @ W) if J.shape[0] else np.eye(nq)
    WP = W @ P
    A = np.block([[np.zeros((nq, nq)), np.eye(nq)], [-WP @ K, -WP @ D]])
    B = np.vstack([np.zeros_like(F_u), WP @ F_u])
    E = np.vstack([np.zeros((nq, nq)), WP])
    states = tuple(f"q{i}" for i in range(nq)) + tuple(f"qd{i}" for i in range(nq))
    inputs = tuple(f"u{i}" for i in range(F_u.shape[1]))
    dist = tuple(f"d{i}" for i in range(nq))
    outputs = tuple(f"y{i}" for i in range(C.shape[0]))
    sys = ct.ss(A, np.hstack([B, E]), C, 0, inputs=inputs + dist, outputs=outputs, states=states)
    return FakeLinearModel(A, B, E, C, q, np.zeros(nq) if qd is None else qd, kind, "rigid",
                           at_equilibrium, J, M, K, D, F_u, states, inputs, dist, outputs, sys)


def yhat(i, j, n):
    """Yhat_k = X_k^T X_k of a member i->j, shape (3n, 3n).

    See docs/theory.md, "The Lagrangian model in Cartesian nodal coordinates".
    """
    c = np.zeros(n)
    c[i], c[j] = -1.0, 1.0
    return np.kron(np.outer(c, c), np.eye(3))


def x_tensegrity(bar_masses=(1.0, 1.0), c=0.05):
    """Planar free-floating X tensegrity, passive model: 1 kg bars of length 2, springs k = 11."""
    q = np.array([-1, 0, 0, 1, 0, 0, 0, -1, 0, 0, 1, 0], float)
    n, nq = 4, 12
    bars, springs = [(0, 1), (2, 3)], [(0, 2), (2, 1), (1, 3), (3, 0)]
    k, l0, lam_b = 11.0, 10 * np.sqrt(2) / 11, 0.5
    M = np.zeros((nq, nq))
    for (i, j), m in zip(bars, bar_masses):
        blk = m * np.array([[1 / 3, 1 / 6], [1 / 6, 1 / 3]])
        idx = np.r_[3 * i:3 * i + 3, 3 * j:3 * j + 3]
        M[np.ix_(idx, idx)] += np.kron(blk, np.eye(3))
    K, D, F_u = np.zeros((nq, nq)), np.zeros((nq, nq)), np.zeros((nq, 4))
    for s, (i, j) in enumerate(springs):
        Y = yhat(i, j, n)
        l = np.sqrt(q @ Y @ q)
        gamma = k * (1 - l0 / l)
        yq = Y @ q
        K += gamma * Y + (k * l0 / l**3) * np.outer(yq, yq)
        D += c * np.outer(yq, yq) / l**2
        F_u[:, s] = -yq
    J = np.zeros((6, nq))
    for node in range(n):
        J[node, 3 * node + 2] = 1.0                    # z of every node fixed
    for b, (i, j) in enumerate(bars):
        H = yhat(i, j, n)
        K -= 2 * lam_b * H
        J[4 + b] = 2 * q @ H
    C = np.zeros((8, 2 * nq))
    C[np.arange(8), [3 * nd + a for nd in range(4) for a in (0, 1)]] = 1.0
    return assemble(M, K, D, F_u, J, C, q)


def random_mechanical(n_e, seed, n_u=4, n_y=6, zeta_scale=0.05):
    """Random pinned mechanical system with n_e elastic DOF: random SPD M, K, D and F_u.

    A 3-2-1 support (plus extra fixed coordinates) removes every rigid motion.
    """
    rng = np.random.default_rng(seed)
    n_nodes = -(-(n_e + 6) // 3)
    nq = 3 * n_nodes
    fixed = [0, 1, 2, 4, 5, 8] + list(range(9, 9 + nq - 6 - n_e))
    J = np.zeros((len(fixed), nq))
    J[np.arange(len(fixed)), fixed] = 1.0
    q = rng.standard_normal(nq)

    def spd(scale):
        X = rng.standard_normal((nq, nq))
        return scale * (X @ X.T / nq + 0.1 * np.eye(nq))
    M, K = spd(1.0), spd(100.0)
    D = zeta_scale * spd(1.0)
    F_u = rng.standard_normal((nq, n_u))
    C = np.hstack([rng.standard_normal((n_y, nq)), np.zeros((n_y, nq))])
    return assemble(M, K, D, F_u, J, C, q)


# --- elastic basis and model ----------------------------------------------------------------

def test_x_tensegrity_elastic_basis_dimensions_and_gauge():
    m = x_tensegrity()
    Z, R_t = elastic_basis(m.constraint_jacobian, m.mass_matrix, m.q)
    # 12 coordinates - 6 constraints - 3 planar rigid modes
    assert Z.shape == (12, 3) and R_t.shape == (12, 3)
    assert np.allclose(Z.T @ Z, np.eye(3), atol=1e-13)
    assert np.allclose(m.constraint_jacobian @ Z, 0, atol=1e-13)
    assert np.allclose(R_t.T @ m.mass_matrix @ Z, 0, atol=1e-13)
    assert np.allclose(m.constraint_jacobian @ R_t, 0, atol=1e-13)
    assert np.allclose(m.stiffness @ R_t, 0, atol=1e-12)          # K_t R_t = 0 (theory 15)


def test_x_tensegrity_elastic_model_reference_values():
    em = elastic_model(x_tensegrity())
    assert isinstance(em, ElasticModel) and em.n_e == 3 and em.A.shape == (6, 6)
    assert em.invariance_residual < 1e-12
    # reference values of the X; eig(Z^T M Z) in the mass-weighted gauge of the projection
    assert np.allclose(np.sort(np.linalg.eigvalsh(em.M_e)), [1 / 6, 1 / 2, 1 / 2], atol=1e-12)
    assert np.allclose(np.sort(np.linalg.eigvalsh(em.K_e)), [20, 24, 24], atol=1e-10)
    assert np.allclose(np.sort(scipy.linalg.eigvalsh(em.K_e, em.M_e)), [48, 48, 120], atol=1e-9)
    lam = np.linalg.eigvals(em.A)
    ref = [-0.1 + 6.9274815j, -0.1 + 6.9274815j, -0.3 + 10.9503425j]
    ref = ref + [np.conj(r) for r in ref]
    ref = np.array(ref)
    assert np.allclose(lam[np.argsort(lam.imag)], ref[np.argsort(ref.imag)], atol=1e-6)
    assert np.allclose(em.left_inverse @ em.T, np.eye(6), atol=1e-12)
    assert em.sys.state_labels[:2] == ["a0", "a1"] and em.sys.state_labels[3] == "a0_dot"
    assert em.sys.input_labels[:5] == ["u0", "u1", "u2", "u3", "d0"]
    assert "n_e=3" in repr(em)


@pytest.mark.parametrize("masses, ref", [
    # [u d] -> y, u -> y, d -> y (H2, H-inf); H2 = sqrt(10/3), sqrt(8/3), sqrt(2/3)
    ((1.0, 1.0), [(1.825742, 3.227822), (1.632993, 2.887052), (0.816497, 1.443526)]),
    # X-asym variant: checks the E map L_q = (Z^T M Z)^-1 Z^T M
    ((1.0, 3.0), [(2.091650, 4.528870), (1.825742, 3.953122), (1.020621, 2.209862)]),
])
def test_x_tensegrity_norms(masses, ref):
    mr = minimal_realization(x_tensegrity(bar_masses=masses))
    assert mr.structural_order == 6 and mr.full_order == 24 and mr.order == 6
    sys = mr.sys
    channels = [sys, sys[:, :4], sys[:, 4:]]
    for ch, (h2, hinf) in zip(channels, ref):
        assert h2_norm(ch) == pytest.approx(h2, abs=2e-6)
        assert hinf_norm(ch) == pytest.approx(hinf, abs=2e-6)
    # the elastic model itself gives the same numbers (reduction is exact here)
    assert h2_norm(mr.elastic) == pytest.approx(ref[0][0], abs=2e-6)


def test_euclidean_e_map_would_fail_the_asymmetric_reference():
    """With pinv(T) E instead of L E the d channel is off (H2 1.169 against 1.020621)."""
    m = x_tensegrity(bar_masses=(1.0, 3.0))
    em = elastic_model(m)
    wrong = ct.ss(em.A, np.linalg.pinv(em.T) @ m.E, em.C, 0)
    assert h2_norm(wrong) == pytest.approx(1.169, abs=1e-3)
    assert hinf_norm(wrong) == pytest.approx(2.531, abs=1e-3)
    assert np.allclose(em.E, em.left_inverse @ m.E, atol=1e-12)


def test_hsv_match_gramian_oracle():
    """HSVs against sqrt(eig(P Q)) from SciPy Lyapunov solves (well conditioned here)."""
    for m in (x_tensegrity(bar_masses=(1.0, 3.0)), random_mechanical(8, seed=4)):
        mr = minimal_realization(m)
        A, B, C = (np.asarray(X) for X in (mr.elastic.sys.A, mr.elastic.sys.B, mr.elastic.sys.C))
        P = scipy.linalg.solve_continuous_lyapunov(A, -B @ B.T)
        Q = scipy.linalg.solve_continuous_lyapunov(A.T, -C.T @ C)
        oracle = np.sort(np.sqrt(np.abs(np.linalg.eigvals(P @ Q))))[::-1]
        assert np.allclose(mr.hsv, oracle, rtol=1e-8, atol=1e-12 * oracle[0])


def test_minimal_realization_names_maps_and_repr():
    m = x_tensegrity()
    mr = minimal_realization(m)
    assert isinstance(mr, MinimalRealization)
    assert mr.sys.input_labels == list(m.input_names + m.disturbance_names)
    assert mr.sys.output_labels == list(m.output_names)
    assert mr.sys.state_labels == [f"z{i}" for i in range(mr.order)]
    assert mr.basis.shape == (24, mr.order) and mr.left_inverse.shape == (mr.order, 24)
    assert np.allclose(mr.left_inverse @ mr.basis, np.eye(mr.order), atol=1e-10)
    # reduced state reproduces the output: C x = C_r z for x in the range of the basis
    assert np.allclose(m.C @ mr.basis, mr.sys.C, atol=1e-12)
    # left_inverse annihilates rigid motion (translations in x)
    assert np.allclose(mr.left_inverse @ np.r_[np.tile([1.0, 0, 0], 4), np.zeros(12)], 0,
                       atol=1e-12)
    assert mr.hsv is not None and np.all(np.diff(mr.hsv) <= 0)
    assert "balanced truncation" in repr(mr) and "order=6" in repr(mr)


def test_frequency_response_matches_full_model_on_elastic_loads():
    """u -> y of the reduced model equals the full Cartesian model's (u moves no rigid body)."""
    m = x_tensegrity()
    mr = minimal_realization(m)
    for w in [0.3, 6.9274815, 11.0]:
        G = m.C @ np.linalg.solve(1j * w * np.eye(24) - m.A, m.B)
        Gr = mr.sys.C @ np.linalg.solve(1j * w * np.eye(mr.order) - mr.sys.A, mr.sys.B[:, :4])
        assert np.allclose(G, Gr, atol=1e-10)


def test_balanced_truncation_error_bound_holds():
    m = random_mechanical(20, seed=3)
    full = minimal_realization(m)
    assert full.order == 40
    red = minimal_realization(m, order=12)
    assert red.order == 12 and red.hsv.shape == (40,)
    assert red.error_bound == pytest.approx(2 * red.hsv[12:].sum())
    err = hinf_norm(full.elastic.sys - red.sys)
    assert 0 < err <= red.error_bound * (1 + 1e-8)
    # balanced truncation is also bounded below by the first discarded HSV
    assert err >= red.hsv[12] * (1 - 1e-6)


def test_moving_operating_point_raises():
    m = x_tensegrity()
    moving = FakeLinearModel(**{**m.__dict__, "at_equilibrium": False, "qd": np.ones(12)})
    with pytest.raises(ValueError, match="equilibrium operating point.*tenscontrol.equilibrium"):
        minimal_realization(moving)


def test_elastic_basis_validation():
    m = x_tensegrity()
    J = m.constraint_jacobian
    with pytest.raises(ValueError, match="linearly dependent"):
        elastic_basis(np.vstack([J, J[:1]]), m.mass_matrix, m.q)
    with pytest.raises(ValueError, match="mass_matrix"):
        elastic_basis(J, m.mass_matrix[:6, :6], m.q)
    with pytest.raises(ValueError, match="symmetric"):
        elastic_basis(J, m.mass_matrix + np.triu(np.ones((12, 12)), 1), m.q)
    # a free single bar (collinear nodes): 3 translations + 2 rotations, no elastic DOF
    Z, R_t = elastic_basis([[-2.0, 0, 0, 2.0, 0, 0]], np.kron([[2, 1], [1, 2]], np.eye(3)) / 6,
                           [0.0, 0, 0, 2.0, 0, 0])
    assert Z.shape == (6, 0) and R_t.shape == (6, 5)


def test_inconsistent_model_data_raise():
    m = x_tensegrity()
    bad = FakeLinearModel(**{**m.__dict__, "stiffness": 1.01 * m.stiffness})
    with pytest.raises(ValueError, match="inconsistent"):
        elastic_model(bad)
    push = np.tile([1.0, 0, 0], 4)[:, None]               # a net force: moves the rigid body
    rigid_u = assemble(m.mass_matrix, m.stiffness, m.damping, push, m.constraint_jacobian, m.C,
                       m.q)
    with pytest.raises(ValueError, match="rigid body"):
        elastic_model(rigid_u)
    with pytest.raises(TypeError, match="LinearModel"):
        elastic_model(m.sys)
    with pytest.raises(ValueError, match="order"):
        minimal_realization(m, order=7)
    with pytest.raises(ValueError, match="tol"):
        minimal_realization(m, tol=0)


def test_undamped_x_tensegrity_kalman_realization():
    m = x_tensegrity(c=0.0)
    mr = minimal_realization(m)
    assert mr.order == 6 and mr.hsv is None and mr.error_bound == 0
    assert "Kalman" in repr(mr)
    # undamped, controllable and observable: marginally stable and excited, so inf (not a raise)
    assert hinf_norm(mr) == np.inf and h2_norm(mr) == np.inf
    em = mr.elastic.sys
    for s in [0.3 + 1j, 0.5 + 7j]:                     # exact reduction: same response
        G = em.C @ np.linalg.solve(s * np.eye(6) - em.A, em.B)
        Gr = mr.sys.C @ np.linalg.solve(s * np.eye(6) - mr.sys.A, mr.sys.B)
        assert np.allclose(G, Gr, atol=1e-10)


def test_control_model_with_zero_stiffness_direction():
    """Control model (geometric stiffness only; docs/theory.md, "Linearization: force densities
    in, nodal forces as disturbances"): the breathing mode of the X has K_e = 0 and is damped, an
    eigenvalue at 0 -> Kalman path; u excites it, so norms are inf."""
    m = x_tensegrity()
    springs, bars = [(0, 2), (2, 1), (1, 3), (3, 0)], [(0, 1), (2, 3)]
    K_geo = sum(yhat(i, j, 4) for i, j in springs) - sum(yhat(i, j, 4) for i, j in bars)
    mc = assemble(m.mass_matrix, K_geo, m.damping, m.force_input, m.constraint_jacobian, m.C,
                  m.q, kind="control")
    mr = minimal_realization(mc)
    assert np.allclose(np.sort(np.linalg.eigvalsh(mr.elastic.K_e)), [0, 4, 4], atol=1e-12)
    assert mr.order == 6 and mr.hsv is None
    assert np.min(np.abs(np.linalg.eigvals(mr.sys.A))) < 1e-12
    assert hinf_norm(mr) == np.inf and h2_norm(mr) == np.inf


def test_full_model_hidden_modes_point_to_minimal_realization():
    m = x_tensegrity()
    u_only = m.sys[:, :4]       # u is internal: rigid and constraint modes are uncontrollable
    with pytest.raises(ValueError, match="minimal_realization"):
        h2_norm(u_only)
    with pytest.raises(ValueError, match="minimal_realization"):
        hinf_norm(u_only)
    assert h2_norm(m.sys) == np.inf         # d excites the rigid modes


def test_kalman_removes_only_hidden_modes():
    m = x_tensegrity(c=0.0)
    em = elastic_model(m)
    # one input: of the double pair at w^2 = 48 only one mode is reachable (rank C_l B_l = 1)
    A, B, C = em.A, em.B[:, :1], em.C
    Ar, Br, Cr, V, W = kalman_minimal(A, B, C, 1e-9)
    assert Ar.shape == (4, 4)
    assert np.allclose(W @ V, np.eye(4), atol=1e-10)
    for s in [0.5 + 1j, 2 + 7j, 1 + 11j]:
        G = C @ np.linalg.solve(s * np.eye(6) - A, B)
        Gr = Cr @ np.linalg.solve(s * np.eye(4) - Ar, Br)
        assert np.allclose(G, Gr, atol=1e-10)
    # defective double integrator: position output is minimal (2), velocity output is 1/s (1)
    A = np.array([[0.0, 1.0], [0.0, 0.0]])
    assert kalman_minimal(A, np.array([[0.0], [1.0]]), np.array([[1.0, 0.0]]),
                                     1e-9)[0].shape == (2, 2)
    assert kalman_minimal(A, np.array([[0.0], [1.0]]), np.array([[0.0, 1.0]]),
                                     1e-9)[0].shape == (1, 1)


def test_compressible_tbar_reduces_to_its_theoretical_order():
    """Regression: lightly damped axial bar modes (zeta ~ 5e-6) once failed the response check.

    Theory (issue 4): the compressible T-bar has 12 coordinates, 8 fixed and no bar
    constraints, so 2 x 4 = 8 states; the rigid T-bar has 2 bar constraints more, so 4.
    """
    import warnings

    import tenscontrol as tc
    from tenscontrol.model import catalog

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for bars, expected in (("compressible", 8), ("rigid", 4)):
            eq = tc.equilibrium(catalog.tbar("stedy", damping=1.0), gamma_min=1.0, bars=bars)
            minimal = tc.minimal_realization(tc.linearize(eq.structure, bars=bars,
                                                          kind="passive"))
            assert minimal.order == minimal.structural_order == expected
            assert minimal.full_order == 24
