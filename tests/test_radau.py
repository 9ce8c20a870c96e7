"""Radau IIA order 5: coefficients, accuracy on stiff problems, convergence order, dense output.

Oracles: closed-form solutions (a linear system via scipy.linalg.expm, y = 1/(1 + t^2), cos/sin),
scipy's own Radau at rtol 1e-12 (van der Pol), and scipy.linalg.lu_solve.
"""

import numpy as np
import pytest
import scipy.linalg as sl
from scipy.integrate import solve_ivp

from tenscontrol.integrate import IntegratorStats, StepSizeError
from tenscontrol.integrate.radau import (ALPHA, BETA, DENSE, GAMMA, LARGE_N, TI, A, B, C, E,
                                         Radau5, T)
from tenscontrol.integrate.radau_kernel import lu_solve as _lu_solve


def radau5(fun, jac, t0, y0, t_final, *, record=None, progress=None, **options):
    """Run Radau5 from t0 to t_final; (t, y, stats)."""
    solver = Radau5(fun, t0, y0, t_final, jac=jac, **options)
    t, y = solver.integrate(record=record, progress=progress)
    return t, y, solver.stats


# --- coefficients ---------------------------------------------------------------------------

def test_nodes_rows_and_weights():
    s6 = np.sqrt(6)
    np.testing.assert_allclose(C, [(4 - s6) / 10, (4 + s6) / 10, 1], atol=1e-16)
    np.testing.assert_allclose(A.sum(axis=1), C, atol=1e-15)
    np.testing.assert_array_equal(B, A[2])  # stiffly accurate
    for k in range(1, 6):  # quadrature order 2s - 1 = 5
        assert B @ C ** (k - 1) == pytest.approx(1 / k, abs=1e-15), k
    assert abs(B @ C ** 5 - 1 / 6) > 1e-4  # and not 6
    for k in range(1, 4):  # stage order 3: C(3), sum_j a_ij c_j^(k-1) = c_i^k / k
        np.testing.assert_allclose(A @ C ** (k - 1), C ** k / k, atol=1e-15)


def test_transformation_diagonalises_inverse_of_A():
    Ainv = np.linalg.inv(A)
    lam = np.linalg.eigvals(Ainv)
    np.testing.assert_allclose(np.sort_complex(lam),
                               np.sort_complex([GAMMA, ALPHA + 1j * BETA, ALPHA - 1j * BETA]),
                               rtol=1e-13)
    block = np.array([[GAMMA, 0, 0], [0, ALPHA, -BETA], [0, BETA, ALPHA]])
    np.testing.assert_allclose(TI @ Ainv @ T, block, atol=1e-13)
    np.testing.assert_allclose(TI @ T, np.eye(3), atol=1e-14)


def test_error_vector_is_the_embedded_third_order_formula():
    # Embedded y^ = y0 + h (g0 f(t0, y0) + sum b^_i f(Y_i)), g0 = 1/GAMMA, of order 3
    # (sum b^_i c_i^(k-1) = 1/k - g0 [k = 1], k = 1..3); since h F = inv(A) Z,
    # GAMMA (y^ - y1) / h = f(t0, y0) + GAMMA (b^ - b) inv(A) Z / h, so E = GAMMA (b^ - b) inv(A).
    g0 = 1 / GAMMA
    V = np.vstack([C ** k for k in range(3)])
    bhat = np.linalg.solve(V, [1 - g0, 1 / 2, 1 / 3])
    np.testing.assert_allclose(E, GAMMA * (bhat - B) @ np.linalg.inv(A), rtol=1e-12)


def test_dense_coefficients_interpolate_the_stages():
    Z = np.random.default_rng(0).standard_normal((3, 4))
    Q = DENSE @ Z
    for i, c in enumerate(C):
        np.testing.assert_allclose(c * Q[0] + c ** 2 * Q[1] + c ** 3 * Q[2], Z[i], atol=1e-13)


@pytest.mark.parametrize("dtype", [float, complex])
def test_triangular_solves_match_scipy_lu_solve(dtype):
    rng = np.random.default_rng(1)
    M = rng.standard_normal((7, 7)) + (1j * rng.standard_normal((7, 7)) if dtype is complex else 0)
    b = rng.standard_normal(7).astype(dtype)
    lu, piv = sl.lu_factor(np.asfortranarray(M))
    x = b.copy()
    _lu_solve(lu, piv, x)
    np.testing.assert_allclose(x, sl.lu_solve((lu, piv), b), rtol=1e-12)


# --- a linear stiff system with a closed-form solution --------------------------------------

def linear_system():
    """y' = L y with eigenvalues -1, -1e4 and -0.01 +- 50i, coupled by a fixed similarity S.

    Returns fun, jac and the exact solution exact(t) -> (len(t), 4) = S exp(D t) S^-1 y0,
    with exp(D t) in closed form (cheaper than scipy.linalg.expm at every output time).
    """
    D = np.zeros((4, 4))
    D[0, 0], D[1, 1] = -1.0, -1e4
    D[2:, 2:] = [[-0.01, 50.0], [-50.0, -0.01]]
    S = np.array([[1.0, 0.3, 0.0, 0.2], [0.2, 1.0, 0.1, 0.0], [0.0, 0.4, 1.0, 0.3],
                  [0.1, 0.0, 0.2, 1.0]])
    L = S @ D @ np.linalg.inv(S)
    y0 = np.array([1.0, -0.5, 0.7, 0.2])
    w0 = np.linalg.solve(S, y0)

    def exact(t):
        t = np.atleast_1d(t)[:, None]
        rot = np.exp(-0.01 * t)
        w = np.hstack([w0[0] * np.exp(-t), w0[1] * np.exp(-1e4 * t),
                       rot * (np.cos(50 * t) * w0[2] + np.sin(50 * t) * w0[3]),
                       rot * (-np.sin(50 * t) * w0[2] + np.cos(50 * t) * w0[3])])
        return w @ S.T

    return (lambda t, y: L @ y), (lambda t, y: L), exact, y0


def test_closed_form_solution_matches_expm():
    fun, jac, exact, y0 = linear_system()
    L = jac(0.0, y0)
    np.testing.assert_allclose(exact(0.37)[0], sl.expm(0.37 * L) @ y0, rtol=1e-12, atol=1e-14)


def test_linear_stiff_system_error_within_tolerance():
    fun, jac, exact, y0 = linear_system()
    rtol, atol = 1e-6, 1e-8
    ends, states = [], []

    def record(step):
        ends.append(step.t0 + step.h)
        states.append(step.y1)

    t, y, stats = radau5(fun, jac, 0.0, y0, 1.0, rtol=rtol, atol=atol, record=record)
    assert t == 1.0
    ref = exact(np.array(ends))
    worst = np.max(np.abs(np.array(states) - ref) / (atol + rtol * np.abs(ref)))
    # global error over ~8 oscillator periods: a small multiple of the local tolerance
    assert worst < 5, worst
    assert stats.accepted == len(ends)
    # linear problem with its exact Jacobian: Newton contracts at once, J is never recomputed
    assert stats.jacobian_evaluations == 1
    assert stats.lu_decompositions < stats.accepted


def test_dense_output_at_random_theta():
    fun, jac, exact, y0 = linear_system()
    rtol, atol = 1e-7, 1e-9
    rng = np.random.default_rng(2)
    worst = [0.0]

    def record(step):
        theta = rng.uniform(0, 1, 5)
        Y = step.dense(theta)
        assert Y.shape == (5, 4)
        ends = step.dense(np.array([0.0, 1.0]))
        np.testing.assert_allclose(ends, [step.y0, step.y1], rtol=1e-12, atol=1e-14)
        ref = exact(step.t0 + theta * step.h)
        worst[0] = max(worst[0], np.max(np.abs(Y - ref) / (atol + rtol * np.abs(ref))))

    radau5(fun, jac, 0.0, y0, 0.3, rtol=rtol, atol=atol, record=record)
    assert worst[0] < 5, worst[0]


# --- convergence order with constant steps --------------------------------------------------

def smooth(t, y):
    return np.array([-2 * t * y[0] ** 2, y[2], -y[1]])


def smooth_jac(t, y):
    return np.array([[-4 * t * y[0], 0, 0], [0, 0, 1.0], [0, -1.0, 0]])


def fixed_step(h, t_final=2.0):
    # loose tolerances accept every step and max_step = first_step holds h; a tight Newton
    # tolerance keeps the iteration error out of the measured discretisation error
    _, y, stats = radau5(smooth, smooth_jac, 0.0, [1.0, 1.0, 0.0], t_final, rtol=1.0, atol=1.0,
                         first_step=h, max_step=h, newton_tol=1e-14, max_newton_iterations=30)
    assert stats.accepted == round(t_final / h) and stats.rejected == 0
    exact = np.array([1 / (1 + t_final ** 2), np.cos(t_final), -np.sin(t_final)])
    return np.abs(y - exact).max()


def test_measured_convergence_order_is_five():
    hs = np.array([0.2, 0.1, 0.05, 0.025])
    errors = [fixed_step(h) for h in hs]
    slope = np.polyfit(np.log(hs), np.log(errors), 1)[0]
    assert 4.5 < slope < 5.5, (slope, errors)


def test_newton_starts_from_the_extrapolated_collocation_polynomial():
    *_, stats = radau5(smooth, smooth_jac, 0.0, [1.0, 1.0, 0.0], 10.0, rtol=1e-8, atol=1e-8)
    # measured 2.0 iterations per step; a zero starting guess needs 3.1
    assert stats.newton_iterations / (stats.accepted + stats.rejected) < 2.5


# --- van der Pol, mu = 1000, against scipy's Radau -------------------------------------------

MU = 1000.0


def vdp(t, y):
    return np.array([y[1], MU * (1 - y[0] ** 2) * y[1] - y[0]])


def vdp_jac(t, y):
    return np.array([[0.0, 1.0], [-2 * MU * y[0] * y[1] - 1, MU * (1 - y[0] ** 2)]])


@pytest.mark.slow
def test_van_der_pol_matches_scipy_radau():
    t_out = np.linspace(0, 2000, 21)[1:]
    ref = solve_ivp(vdp, (0, 2000), [2.0, 0.0], method="Radau", rtol=1e-12, atol=1e-12,
                    jac=vdp_jac, dense_output=True)
    ours = []

    def record(step):
        k = (t_out > step.t0) & (t_out <= step.t1)
        if k.any():
            ours.extend(step.dense((t_out[k] - step.t0) / step.h)[:, 0])

    t, y, stats = radau5(vdp, vdp_jac, 0.0, [2.0, 0.0], 2000.0, rtol=1e-8, atol=1e-8,
                         record=record)
    np.testing.assert_allclose(y, ref.y[:, -1], rtol=1e-5)
    # dense output at 20 times, 1e-5 relative to the amplitude |y1| <= 2
    np.testing.assert_allclose(ours, ref.sol(t_out)[0], rtol=0, atol=2e-5)
    same = solve_ivp(vdp, (0, 2000), [2.0, 0.0], method="Radau", rtol=1e-8, atol=1e-8,
                     jac=vdp_jac)
    # measured: 2033 accepted + 4 rejected steps against scipy's 1853
    assert 0.5 < stats.accepted / (len(same.t) - 1) < 2


# --- stats, failures and argument checks ----------------------------------------------------

def test_stats_are_consistent():
    *_, stats = radau5(vdp, vdp_jac, 0.0, [2.0, 0.0], 1.0, rtol=1e-6, atol=1e-6, first_step=1e-4)
    assert isinstance(stats, IntegratorStats)
    assert all(isinstance(v, int) for v in vars(stats).values())
    attempts = stats.accepted + stats.rejected + stats.newton_failures
    assert stats.accepted >= 1
    assert 1 <= stats.jacobian_evaluations <= stats.lu_decompositions <= attempts
    assert stats.newton_iterations >= attempts
    assert stats.correction_iterations == 0
    # fun: f(t0), 3 per Newton iteration, one at each new step point but the last, plus at
    # most one extra filtering per first/retried step
    base = 1 + 3 * stats.newton_iterations + stats.accepted - 1
    assert 0 <= stats.rhs_evaluations - base <= 1 + stats.rejected + stats.newton_failures


def test_bad_jacobian_is_survived_by_smaller_steps():
    fun, _, exact, y0 = linear_system()
    # a zero Jacobian turns Newton into a fixed-point iteration that diverges for h |lambda| > 1
    _, y, stats = radau5(fun, lambda t, y: np.zeros((4, 4)), 0.0, y0, 0.01, rtol=1e-6,
                         atol=1e-8, first_step=1e-2)
    assert stats.newton_failures >= 1
    ref = exact(0.01)[0]
    assert np.max(np.abs(y - ref) / (1e-8 + 1e-6 * np.abs(ref))) < 20


def test_max_step_and_progress():
    fun, jac, _, y0 = linear_system()
    steps, times = [], []
    radau5(fun, jac, 0.0, y0, 0.2, rtol=1e-4, atol=1e-6, max_step=0.01,
           record=lambda step: steps.append(step.h), progress=times.append)
    assert max(steps) <= 0.01 * (1 + 1e-12)
    assert times[-1] == 0.2 and np.all(np.diff(times) > 0) and len(times) == len(steps)


def test_blow_up_raises_step_size_error():
    # y' = y^2, y(0) = 1 has y = 1/(1 - t), infinite at t = 1
    with pytest.raises(StepSizeError, match="fell below"):
        radau5(lambda t, y: y ** 2, lambda t, y: np.array([[2 * y[0]]]), 0.0, [1.0], 2.0,
               rtol=1e-6, atol=1e-6)


def test_non_finite_derivative_raises_floating_point_error():
    with pytest.raises(FloatingPointError, match="not finite"):
        radau5(lambda t, y: y * np.nan, lambda t, y: np.eye(1), 0.0, [1.0], 1.0,
               rtol=1e-6, atol=1e-6)


def test_keep_step_rule_is_an_option_with_the_old_default():
    fun, jac, exact, y0 = linear_system()
    auto = Radau5(fun, 0.0, y0, 1.0, jac=jac, rtol=1e-6, atol=1e-8)
    assert auto.keep_step == "narrow" and auto.keep == (1.0, 1.2)     # 4 unknowns < LARGE_N
    big = Radau5(lambda t, y: -y, 0.0, np.ones(LARGE_N), 1.0, jac=lambda t, y: -np.eye(LARGE_N),
                 rtol=1e-6, atol=1e-8)
    assert big.keep_step == "wide" and big.keep == (0.99, 2.0)
    runs = {}
    for rule in ("auto", "narrow", "wide"):
        t, y, stats = radau5(fun, jac, 0.0, y0, 1.0, rtol=1e-6, atol=1e-8, keep_step=rule)
        runs[rule] = stats
        np.testing.assert_allclose(y, exact(1.0)[0], rtol=0, atol=1e-5)
    assert runs["auto"] == runs["narrow"]
    # the wide window keeps h (and its LU) through more steps: fewer factorizations
    assert runs["wide"].lu_decompositions < runs["narrow"].lu_decompositions


@pytest.mark.parametrize("kwargs, match", [
    (dict(rtol=-1), "rtol must be positive, got -1"),
    (dict(atol=0.0), "atol must be positive"),
    (dict(t_final=0.0), "t_final must be greater than t0"),
    (dict(y0=np.ones((2, 2))), "y0 must be a non-empty 1-D array"),
    (dict(max_step=0.0), "max_step must be positive, got 0"),
    (dict(first_step=-1e-3), "first_step must be positive, got -0.001"),
    (dict(newton_tol=0.0), "newton_tol must be positive"),
    (dict(max_newton_iterations=0), "max_newton_iterations must be an integer >= 1"),
    (dict(keep_step="large"), "keep_step must be one of 'auto', 'narrow', 'wide', got 'large'"),
    (dict(jac=lambda t, y: np.eye(3)), r"jac\(t, y\) must return a dense array of shape \(2, 2\)"),
    (dict(fun=lambda t, y: np.zeros(3)), r"fun\(t, y\) must return an array of shape \(2,\)"),
])
def test_invalid_arguments_raise_value_error(kwargs, match):
    args = dict(fun=vdp, jac=vdp_jac, t0=0.0, y0=[2.0, 0.0], t_final=1.0, rtol=1e-6, atol=1e-6)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        radau5(args.pop("fun"), args.pop("jac"), args.pop("t0"), args.pop("y0"),
               args.pop("t_final"), **args)


def test_non_callable_raises_type_error():
    with pytest.raises(TypeError, match="jac must be callable"):
        radau5(vdp, None, 0.0, [2.0, 0.0], 1.0, rtol=1e-6, atol=1e-6)


def test_factor_gives_scipys_lu_factors():
    # radau_kernel.factor calls LAPACK's getrf as scipy.linalg.lu_factor does: the same factors
    # and 0-based pivots, bit for bit, for fac1 I - J (real) and fac2 I - J (complex)
    from tenscontrol.integrate.radau_kernel import PIVOT_DTYPE, factor
    n = 9
    J = np.random.default_rng(2).standard_normal((n, n))
    fac1, fac2 = 3.6, complex(2.7, 3.1)
    E1, E2 = np.empty((n, n), order="F"), np.empty((n, n), dtype=complex, order="F")
    piv1, piv2 = np.empty(n, PIVOT_DTYPE), np.empty(n, PIVOT_DTYPE)
    factor(J, fac1, fac2, E1, E2, piv1, piv2)
    for lu, piv, fac in ((E1, piv1, fac1), (E2, piv2, fac2)):
        lu_ref, piv_ref = sl.lu_factor(fac * np.eye(n) - J)
        np.testing.assert_array_equal(lu, lu_ref)
        np.testing.assert_array_equal(piv, piv_ref)
