"""Dormand-Prince 5(4): tableau order conditions, measured convergence order, dense output."""

import numpy as np
import pytest

from tenscontrol.integrate.dopri import A, B4, B5, C, StepSizeError, dense_output, dopri54


def oscillator(t, y):
    return np.array([y[1], -y[0]])


def exact(t):
    return np.array([np.cos(t), -np.sin(t)])


def test_tableau_row_sums_and_fsal():
    np.testing.assert_allclose(A.sum(axis=1), C, atol=1e-15)
    np.testing.assert_array_equal(B5, A[6])
    assert B5.sum() == pytest.approx(1, abs=1e-15)
    assert B4.sum() == pytest.approx(1, abs=1e-15)


def order_conditions(b):
    """Residuals of the Butcher order conditions up to order 5 for weights b."""
    c, Ac = C, A @ C
    return {
        1: [b.sum() - 1],
        2: [b @ c - 1 / 2],
        3: [b @ c**2 - 1 / 3, b @ Ac - 1 / 6],
        4: [b @ c**3 - 1 / 4, b @ (c * Ac) - 1 / 8, b @ (A @ c**2) - 1 / 12,
            b @ (A @ Ac) - 1 / 24],
        5: [b @ c**4 - 1 / 5, b @ (c**2 * Ac) - 1 / 10, b @ Ac**2 - 1 / 20,
            b @ (c * (A @ c**2)) - 1 / 15, b @ (A @ c**3) - 1 / 20, b @ (c * (A @ Ac)) - 1 / 30,
            b @ (A @ (c * Ac)) - 1 / 40, b @ (A @ (A @ c**2)) - 1 / 60,
            b @ (A @ (A @ Ac)) - 1 / 120],
    }


def test_fifth_order_weights_satisfy_order_conditions():
    for order, res in order_conditions(B5).items():
        np.testing.assert_allclose(res, 0, atol=1e-14, err_msg=f"order {order}")


def test_embedded_weights_are_fourth_order_not_fifth():
    cond = order_conditions(B4)
    for order in (1, 2, 3, 4):
        np.testing.assert_allclose(cond[order], 0, atol=1e-14, err_msg=f"order {order}")
    assert np.abs(cond[5]).max() > 1e-4


def fixed_step(h, t_final=1.0, record=None):
    # huge tolerances accept every step, so the step size stays h
    _, y = dopri54(oscillator, 0.0, exact(0.0), t_final, rtol=1e10, atol=1e10, first_step=h,
                   max_step=h, record=record)
    return y


def test_measured_convergence_order_is_five():
    hs = np.array([0.1, 0.05, 0.025, 0.0125])
    errors = [np.abs(fixed_step(h) - exact(1.0)).max() for h in hs]
    slope = np.polyfit(np.log(hs), np.log(errors), 1)[0]
    assert 4.7 < slope < 5.5


def test_dense_output_is_continuous_and_accurate():
    def errors(h):
        worst = [0.0]

        def record(t0, y0, hh, y_unc, y1, K):
            mid = dense_output(y0, y_unc, y1, K, hh, [0.0, 0.5, 1.0])
            np.testing.assert_array_equal(mid[0], y0)
            np.testing.assert_allclose(mid[2], y1, atol=1e-15)
            worst[0] = max(worst[0], np.abs(mid[1] - exact(t0 + hh / 2)).max())

        fixed_step(h, record=record)
        return worst[0]

    hs = np.array([0.1, 0.05, 0.025])
    e = [errors(h) for h in hs]
    slope = np.polyfit(np.log(hs), np.log(e), 1)[0]
    assert slope > 4.5  # 4th-order continuous extension: local error O(h^5)


def test_dense_output_blends_in_the_correction():
    y0, y1u = np.zeros(2), np.ones(2)
    K = np.zeros((7, 2))
    K[:] = 1.0  # every stage of the straight line y = t
    y1 = y1u + 0.1
    out = dense_output(y0, y1u, y1, K, 1.0, [0.0, 0.5, 1.0])
    np.testing.assert_allclose(out[:, 0], [0.0, 0.55, 1.1])


def test_adaptive_accuracy_and_counters():
    stats = {}
    _, y = dopri54(oscillator, 0.0, exact(0.0), 10.0, rtol=1e-10, atol=1e-10, stats=stats)
    assert np.abs(y - exact(10.0)).max() < 1e-8
    # one call at t0, one for the initial-step estimate, six per attempted step
    assert stats["rhs"] == 2 + 6 * (stats["accepted"] + stats["rejected"])


def test_correction_hook_and_reevaluation():
    stats = {}

    def correct(t, y):  # project onto the unit circle, the oscillator's invariant
        y /= np.linalg.norm(y)
        return 1, True

    _, y = dopri54(oscillator, 0.0, exact(0.0), 10.0, rtol=1e-6, atol=1e-6, correct=correct,
                   stats=stats)
    assert np.linalg.norm(y) == pytest.approx(1.0, abs=1e-15)
    assert stats["correction_iterations"] == stats["accepted"]
    assert stats["rhs"] == 2 + 6 * (stats["accepted"] + stats["rejected"]) + stats["accepted"]


def test_step_size_underflow_on_blow_up():
    with pytest.raises(StepSizeError, match="step size"):
        dopri54(lambda t, y: y**2, 0.0, np.array([1.0]), 2.0, rtol=1e-8, atol=1e-8)
