"""The integrals of sampled-data design (tenscontrol.linear.sampling) against adaptive quadrature
of matrix-exponential products, and dlqr's exact sampled-data cost against python-control."""

import control as ct
import numpy as np
import pytest
import scipy.integrate
import scipy.linalg

import tenscontrol as tc
from tenscontrol.design.discrete import dlqr_gain
from tenscontrol.linear.sampling import exact_hold, sampled_cost, van_loan


def _random_system(seed, n=5, m=2):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n)) - 0.5 * np.eye(n)
    B = rng.standard_normal((n, m))
    Q = rng.standard_normal((n, n))
    R = rng.standard_normal((m, m))
    return A, B, Q @ Q.T, R @ R.T + np.eye(m)


def _quad(f, t):
    return scipy.integrate.quad_vec(f, 0.0, t, epsabs=0.0, epsrel=1e-12)[0]


def test_exact_hold_and_van_loan_against_quadrature():
    # measured 3e-16 (hold) and 8e-16 (Van Loan) relative
    A, B, Q, _ = _random_system(1)
    t = 0.7
    Phi, Gamma = exact_hold(A, B, t)
    np.testing.assert_allclose(Phi, scipy.linalg.expm(A * t), rtol=1e-13)
    ref = _quad(lambda s: scipy.linalg.expm(A * s) @ B, t)
    assert np.abs(Gamma - ref).max() < 1e-12 * np.abs(ref).max()
    ref = _quad(lambda s: scipy.linalg.expm(A * s) @ Q @ scipy.linalg.expm(A.T * s), t)
    assert np.abs(van_loan(A, Q, t) - ref).max() < 1e-12 * np.abs(ref).max()


@pytest.mark.parametrize("delay", [0.0, 0.3])
def test_sampled_cost_against_quadrature(delay):
    # the continuous cost over one period from [x_k; u_k-1] (held until the delay) and u_k,
    # integrated independently: x(s) = Phi(s) x_k + Gamma(s) u_k-1 before the delay, then the
    # hold of u_k from x(delay)
    A, B, Q, R = _random_system(2)
    n, m = B.shape
    T = 0.8

    def flow(s):
        """[x(s); u(s)] as a linear map of [x_k; u_k-1; u_k], shape (n + m, n + 2m)."""
        M = np.zeros((n + m, n + 2 * m))
        if s < delay:
            P, G = exact_hold(A, B, s)
            M[:n, :n], M[:n, n:n + m], M[n:, n:n + m] = P, G, np.eye(m)
        else:
            P0, G0 = exact_hold(A, B, delay)
            P1, G1 = exact_hold(A, B, s - delay)
            M[:n, :n], M[:n, n:n + m] = P1 @ P0, P1 @ G0
            M[:n, n + m:], M[n:, n + m:] = G1, np.eye(m)
        return M

    W = scipy.linalg.block_diag(Q, R)
    pieces = [(0.0, delay), (delay, T)] if delay else [(0.0, T)]
    ref = sum(scipy.integrate.quad_vec(lambda s: flow(s).T @ W @ flow(s), a, b, epsabs=0.0,
                                       epsrel=1e-12)[0] for a, b in pieces)
    if not delay:   # no held command: the state is x_k alone
        keep = np.r_[np.arange(n), n + m + np.arange(m)]
        ref = ref[np.ix_(keep, keep)]
    nz = ref.shape[0] - m
    Qd, Rd, Nd = sampled_cost(A, B, Q, R, T, delay)
    scale = np.abs(ref).max()
    assert np.abs(Qd - ref[:nz, :nz]).max() < 1e-11 * scale
    assert np.abs(Rd - ref[nz:, nz:]).max() < 1e-11 * scale
    assert np.abs(Nd - ref[:nz, nz:]).max() < 1e-11 * scale


@pytest.fixture(scope="module")
def tbar_model():
    s = tc.equilibrium(tc.catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
    return tc.linearize(s, kind="passive", outputs=tc.Selection(nodes=[2, 3], axes="xz"))


@pytest.mark.parametrize("period, delay", [(0.5, 0.0), (0.2, 0.05)])
def test_dlqr_exact_cost_gain_is_python_controls_with_the_cross_term(tbar_model, period,
                                                                     delay):
    # the same Qd, Rd, Nd (sampled_cost, checked above) and python-control's dlqr with N
    # (slycot's sb02od); measured 5.3e-14 and 5.3e-13 relative
    d = tc.dlqr(tbar_model, period, delay=delay, effort=1e-2)
    mr, R = d.continuous.minimal, d.continuous.R
    A, B = np.asarray(mr.sys.A), np.asarray(mr.sys.B)[:, :R.shape[0]]
    Qr = mr.basis.T @ d.continuous.Q @ mr.basis
    Qd, Rd, Nd = sampled_cost(A, B, 0.5 * (Qr + Qr.T), R, period, delay)
    Ad, Bd = d.model.augmented()
    K, _, _ = ct.dlqr(Ad, Bd, Qd, Rd, Nd)
    assert np.abs(d.K_reduced - K).max() < 1e-9 * np.abs(K).max()


def test_dlqr_exact_cost_beats_the_rectangle_rule_at_long_periods(tbar_model):
    # benchmarks/bench_dlqr_cost.py: the rectangle rule's gain is 18 % off at 0.5 s (measured
    # 0.1817) and 5.8e-5 off at 5 ms; the exact gain's true sampled-data cost is the least
    gains = {c: tc.dlqr(tbar_model, 0.5, effort=1e-2, cost=c).K_reduced
             for c in ("exact", "rectangle")}
    rel = np.linalg.norm(gains["rectangle"] - gains["exact"]) / np.linalg.norm(gains["exact"])
    assert 0.15 < rel < 0.21
    fast = {c: tc.dlqr(tbar_model, 0.005, effort=1e-2, cost=c).K_reduced
            for c in ("exact", "rectangle")}
    assert np.linalg.norm(fast["rectangle"] - fast["exact"]) < 1e-3 * np.linalg.norm(
        fast["exact"])


def test_dlqr_gain_cross_term_and_scaling():
    # the scaled solve with a cross term against python-control's dlqr (unscaled): measured
    # 2.8e-15 (K) and 5.9e-15 (X) relative
    A, B, Q, R = _random_system(3)
    A = scipy.linalg.expm(0.1 * A)
    N = 0.1 * np.random.default_rng(4).standard_normal(B.shape)
    K, X = dlqr_gain(A, B, Q, R, N=N)
    K_ref, X_ref, _ = ct.dlqr(A, B, Q, R, N)
    np.testing.assert_allclose(K, K_ref, rtol=1e-9, atol=1e-12 * np.abs(K_ref).max())
    np.testing.assert_allclose(X, X_ref, rtol=1e-9, atol=1e-12 * np.abs(X_ref).max())


def test_dlqr_rejects_an_unknown_cost(tbar_model):
    with pytest.raises(ValueError, match="dlqr: cost must be 'exact'.*got 'trapezoid'"):
        tc.dlqr(tbar_model, 0.01, cost="trapezoid")
