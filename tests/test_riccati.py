"""The checked CARE solver (tenscontrol.design.riccati): doubling, slycot, SciPy, fallbacks.

Oracles: scipy.linalg.solve_continuous_are and python-control's lqr (slycot sb02md) on random
systems; every answer's relative residual and closed-loop stability; full-order lqr on catalog
prism towers.
"""

import re
import numpy as np
import pytest
import scipy.linalg
import control as ct

import tenscontrol as tc
from tenscontrol.design import hinf, riccati
from tenscontrol.design.riccati import care, care_doubling, care_residual
from tenscontrol.model import catalog
from test_reduction import x_tensegrity
from test_synthesis import x_measurement


def random_problem(n, m, seed, shift=0.0):
    """A random (A, B, Q, R): A with spectral abscissa about `shift`, Q = C^T C of rank n/2."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n)) / np.sqrt(n)
    A += (shift - np.linalg.eigvals(A).real.max()) * np.eye(n)
    B = rng.standard_normal((n, m))
    C = rng.standard_normal((max(n // 2, 1), n))
    W = rng.standard_normal((m, m))
    return A, B, C.T @ C, W @ W.T + m * np.eye(m)


def chain(n_mass, damping):
    """A mass-spring chain (unit masses and springs, fixed at one end) with light damping,
    forced at the free end: eigenvalues from 1e-3 to 2 rad/s, damped at `damping` x omega."""
    K = 2 * np.eye(n_mass) - np.eye(n_mass, k=1) - np.eye(n_mass, k=-1)
    K[-1, -1] = 1.0
    A = np.block([[np.zeros((n_mass, n_mass)), np.eye(n_mass)], [-K, -damping * K]])
    B = np.zeros((2 * n_mass, 1))
    B[-1, 0] = 1.0
    Q = np.diag(np.r_[np.ones(n_mass), np.zeros(n_mass)])
    return A, B, Q, np.eye(1)


@pytest.mark.parametrize("method", ["doubling", "slycot", "scipy"])
@pytest.mark.parametrize("n, m, seed, shift", [(6, 2, 0, -0.5), (30, 3, 1, 0.3),
                                                (60, 10, 2, 0.5)])
def test_care_matches_scipy_on_random_systems(method, n, m, seed, shift):
    A, B, Q, R = random_problem(n, m, seed, shift)
    ref = scipy.linalg.solve_continuous_are(A, B, Q, R)
    sol = care(A, B, Q, R, method=method)
    assert sol.method.startswith(method) and sol.fallbacks == ()
    scale = np.linalg.norm(ref)
    assert np.linalg.norm(sol.X - ref) <= 1e-10 * scale     # observed up to 1.4e-12
    assert np.linalg.norm(sol.K - np.linalg.solve(R, B.T @ ref)) <= 1e-9 * np.linalg.norm(sol.K)
    assert np.allclose(sol.X, sol.X.T, rtol=0, atol=1e-14 * scale)
    # observed up to 2.4e-12 (slycot, n = 60)
    assert sol.residual == pytest.approx(care_residual(A, B, Q, R, sol.X)) and sol.residual < 2e-11
    assert sol.poles.real.max() < 0
    assert np.allclose(np.sort_complex(sol.poles), np.sort_complex(np.linalg.eigvals(A - B @ sol.K)))


def test_doubling_matches_python_control_lqr():
    A, B, Q, R = random_problem(40, 4, 3, 0.3)
    K, S, E = ct.lqr(A, B, Q, R)
    sol = care(A, B, Q, R, method="doubling")
    assert np.linalg.norm(sol.X - S) <= 1e-9 * np.linalg.norm(S)
    assert np.linalg.norm(sol.K - K) <= 1e-9 * np.linalg.norm(K)
    # python-control returns E as complex64: single precision
    assert np.allclose(np.sort_complex(sol.poles), np.sort_complex(E), rtol=1e-6)


def test_doubling_on_a_lightly_damped_chain():
    # damping 1e-4 x omega: the slowest pole's damping ratio ~1e-4 needs many doubling steps
    A, B, Q, R = chain(40, 1e-4)
    ref = scipy.linalg.solve_continuous_are(A, B, Q, R)
    X, steps = care_doubling(A, B @ B.T, Q)
    assert np.linalg.norm(X - ref) <= 1e-8 * np.linalg.norm(ref)
    assert 10 <= steps <= 40
    assert care_residual(A, B, Q, R, X) < 1e-12


def test_care_auto_order_and_fallbacks(monkeypatch):
    A, B, Q, R = random_problem(12, 2, 4, 0.3)
    assert care(A, B, Q, R).method == "slycot"          # small: slycot first, as before
    monkeypatch.setattr(riccati, "LARGE_ORDER", 10)
    assert care(A, B, Q, R).method == "doubling"        # large: doubling first

    def broken(*args, **kwargs):
        raise ValueError("forced failure")
    monkeypatch.setattr(riccati, "care_doubling", broken)
    sol = care(A, B, Q, R)
    assert sol.method == "slycot"
    assert sol.fallbacks == ("doubling: forced failure",)


def test_care_refuses_a_non_stabilizing_answer(monkeypatch):
    A, B, Q, R = random_problem(10, 2, 5, 0.5)
    anti = -scipy.linalg.solve_continuous_are(-A, B, Q, R)   # the anti-stabilizing solution
    monkeypatch.setattr(ct, "lqr", lambda *a: (None, anti, None))
    sol = care(A, B, Q, R)
    assert sol.method == "scipy"
    assert sol.fallbacks[0].startswith("slycot: loop not Hurwitz")


def test_care_refines_an_inaccurate_answer_by_newton(monkeypatch):
    A, B, Q, R = random_problem(20, 3, 6, 0.5)
    X = scipy.linalg.solve_continuous_are(A, B, Q, R)
    monkeypatch.setattr(ct, "lqr", lambda *a: (None, X * (1 + 1e-6), None))
    sol = care(A, B, Q, R, method="slycot")
    assert sol.method == "slycot+newton" and sol.residual < 1e-12
    assert np.linalg.norm(sol.X - X) <= 1e-10 * np.linalg.norm(X)


def test_care_without_stabilizing_solution_names_every_solver(monkeypatch):
    A = np.diag([1.0, -1.0])                 # the unstable mode is not controllable
    B = np.array([[0.0], [1.0]])
    monkeypatch.setattr(riccati, "LARGE_ORDER", 1)
    with pytest.raises(np.linalg.LinAlgError, match="doubling: .*; slycot: .*; scipy: "):
        care(A, B, np.eye(2), np.eye(1))


def test_care_rejects_unknown_method():
    A, B, Q, R = random_problem(4, 1, 7)
    with pytest.raises(ValueError, match="method must be 'auto' or one of"):
        care(A, B, Q, R, method="schur")


def tower_model(stages):
    s = tc.equilibrium(catalog.prism_tower(stages, damping=1.0), gamma_min=10.0).structure
    return tc.linearize(s, kind="passive")


def test_lqr_full_order_tower_reports_its_riccati_solution(monkeypatch):
    m = tower_model(4)                       # 12 bars, 48 states
    small = tc.lqr(m)
    assert small.riccati.method == "slycot" and small.riccati.fallbacks == ()
    assert small.riccati.residual < 1e-10   # sb02md: 3.3e-11
    monkeypatch.setattr(riccati, "_METHODS", ("scipy",))
    monkeypatch.setattr(riccati, "LARGE_ORDER", 1)
    ref = tc.lqr(m)
    assert ref.riccati.method == "scipy"
    monkeypatch.setattr(riccati, "_METHODS", ("doubling", "slycot", "scipy"))
    d = tc.lqr(m)
    assert d.riccati.method == "doubling" and d.riccati.residual < 1e-12
    # observed: gain 3.9e-11 relative, poles 1.2e-12 1/s apart
    assert np.linalg.norm(d.K - ref.K) <= 4e-10 * np.linalg.norm(ref.K)
    assert np.abs(d.E - ref.E).max() <= 1e-11
    assert d.E.real.max() < 0
    # the row's label column is as wide as the summary's longest label (the damping verdict's)
    assert re.search(r"\n  Riccati +doubling, relative residual", d.summary())


@pytest.mark.slow
@pytest.mark.parametrize("stages", [32, 64])
def test_lqr_full_order_on_large_towers(stages):
    # 96 and 192 bars: 384 and 768 reduced states, doubling (slycot's gain at 192 bars is not
    # stabilizing, SciPy's QZ took 72 s)
    d = tc.lqr(tower_model(stages))
    assert d.riccati.method == "doubling"
    assert d.minimal.order == 12 * stages
    assert d.riccati.residual < 1e-12
    assert d.E.real.max() < 0


# ---- H-infinity: the Riccati conditions by doubling ------------------------------------------


def hinf_problem(n, seed):
    """A random stable plant with D12 = [0; I], D21 = [0, I] (x' = A x + B1 w + B2 u)."""
    rng = np.random.default_rng(seed)
    A, B2, _, _ = random_problem(n, 2, seed, -0.3)
    B1 = rng.standard_normal((n, 3))
    C1 = np.vstack([rng.standard_normal((2, n)), np.zeros((2, n))])
    D12 = np.vstack([np.zeros((2, 2)), np.eye(2)])
    return A, B1, B2, C1, D12


def test_hinf_riccati_matches_scipy_indefinite_care():
    A, B1, B2, C1, D12 = hinf_problem(20, 8)
    gamma = 50.0
    R = scipy.linalg.block_diag(-gamma**2 * np.eye(3), D12.T @ D12)
    S = np.hstack([np.zeros((20, 3)), C1.T @ D12])
    ref = scipy.linalg.solve_continuous_are(A, np.hstack([B1, B2]), C1.T @ C1, R, s=S)
    X = hinf.hinf_riccati(A, B1, B2, C1, D12, gamma)
    assert np.linalg.norm(X - ref) <= 1e-10 * np.linalg.norm(ref)
    assert hinf.hinf_riccati(A, B1, B2, C1, D12, 1e-3) is None       # gamma far too small


@pytest.fixture(scope="module")
def xmodel():
    return x_tensegrity()


@pytest.mark.parametrize("feedback", ["output", "state"])
def test_hinf_bisection_by_riccati_conditions_matches_sb10fd(monkeypatch, xmodel, feedback):
    kw = dict(measurements=x_measurement(xmodel)) if feedback == "output" else {}
    ref = tc.hinfsyn(xmodel, **kw)
    assert ref.bisection == ("sb10fd" if feedback == "output" else "care")
    monkeypatch.setattr(hinf, "RICCATI_ORDER", 1)
    h = tc.hinfsyn(xmodel, **kw)
    assert h.bisection == ("riccati" if feedback == "output" else "doubling")
    # the same bisection path: gamma_opt 0.05705 (output), 0.0500 (state), docs/control-notes 8
    assert h.gamma == pytest.approx(ref.gamma, rel=1e-12)
    assert h.closed_loop_norm <= h.gamma * (1 + 1e-6)


def test_hinf_riccati_bisection_falls_back_to_sb10fd(monkeypatch, xmodel):
    # Riccati conditions that accept every gamma: the synthesis at their bound fails its
    # checks, and the sb10fd bisection continues above it
    ref = tc.hinfsyn(xmodel, measurements=x_measurement(xmodel))
    monkeypatch.setattr(hinf, "RICCATI_ORDER", 1)
    monkeypatch.setattr(hinf, "_riccati_feasible", lambda plant, gamma: True)
    h = tc.hinfsyn(xmodel, measurements=x_measurement(xmodel))
    assert h.bisection == "riccati, then sb10fd"
    assert h.gamma == pytest.approx(ref.gamma, rel=2e-3)
    assert h.gamma_lower <= ref.gamma and h.closed_loop_norm <= h.gamma * (1 + 1e-6)
    assert "(riccati, then sb10fd)" in h.summary()


def test_state_feedback_hinfsyn_on_a_tower_by_doubling(monkeypatch):
    # the tower whose SciPy CARE returned a non-solution below the optimum (test_linear_scale)
    s = tc.equilibrium(catalog.prism_tower(4, damping=1.0), gamma_min=10.0).structure
    m, top = tc.linearize(s, kind="passive"), tc.Selection(nodes=[s.n_nodes - 1])
    ref = tc.hinfsyn(m, disturbances=top, outputs=top)
    monkeypatch.setattr(hinf, "RICCATI_ORDER", 1)
    d = tc.hinfsyn(m, disturbances=top, outputs=top)
    assert (ref.bisection, d.bisection) == ("care", "doubling")
    assert d.gamma == pytest.approx(ref.gamma, rel=2e-3)     # the bisection's tolerance
    assert d.closed_loop_norm <= d.gamma * (1 + 1e-6)
