"""Dormand-Prince 5(4): tableau order conditions, measured convergence order, dense output;
the base interface (validation, frozen stats, step records) it shares with Radau."""

import dataclasses

import numpy as np
import pytest

from tenscontrol.integrate import (INTEGRATORS, IntegratorStats, Radau5, StepLimitError,
                                   StepSizeError)
from tenscontrol.integrate.base import PACE_WINDOW, SHRINK_WINDOWS
from tenscontrol.integrate.dopri import A, B4, B5, C, Dopri54, DopriStep


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
    _, y = Dopri54(oscillator, 0.0, exact(0.0), t_final, rtol=1e10, atol=1e10, first_step=h,
                   max_step=h).integrate(record=record)
    return y


def test_measured_convergence_order_is_five():
    hs = np.array([0.1, 0.05, 0.025, 0.0125])
    errors = [np.abs(fixed_step(h) - exact(1.0)).max() for h in hs]
    slope = np.polyfit(np.log(hs), np.log(errors), 1)[0]
    assert 4.7 < slope < 5.5


def test_dense_output_is_continuous_and_accurate():
    def errors(h):
        worst = [0.0]

        def record(step):
            mid = step.dense([0.0, 0.5, 1.0])
            np.testing.assert_array_equal(mid[0], step.y0)
            np.testing.assert_allclose(mid[2], step.y1, atol=1e-15)
            worst[0] = max(worst[0], np.abs(mid[1] - exact(step.t0 + step.h / 2)).max())

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
    out = DopriStep(0.0, 1.0, y0, y1, y1u, K).dense([0.0, 0.5, 1.0])
    np.testing.assert_allclose(out[:, 0], [0.0, 0.55, 1.1])


def test_adaptive_accuracy_and_counters():
    solver = Dopri54(oscillator, 0.0, exact(0.0), 10.0, rtol=1e-10, atol=1e-10)
    _, y = solver.integrate()
    stats = solver.stats
    assert np.abs(y - exact(10.0)).max() < 1e-8
    # one call at t0, one for the initial-step estimate, six per attempted step
    assert stats.rhs_evaluations == 2 + 6 * (stats.accepted + stats.rejected)


def test_correction_hook_and_reevaluation():
    def correct(t, y):  # project onto the unit circle, the oscillator's invariant
        y /= np.linalg.norm(y)
        return 1, True

    solver = Dopri54(oscillator, 0.0, exact(0.0), 10.0, rtol=1e-6, atol=1e-6, correct=correct)
    _, y = solver.integrate()
    stats = solver.stats
    assert np.linalg.norm(y) == pytest.approx(1.0, abs=1e-15)
    assert stats.correction_iterations == stats.accepted
    assert stats.rhs_evaluations == 2 + 6 * (stats.accepted + stats.rejected) + stats.accepted


def nan_below_zero(t, y):
    """y' = -100 y, NaN where y < 0: a step that overshoots zero has NaN stages."""
    with np.errstate(invalid="ignore"):
        return -100.0 * y + 0.0 * np.sqrt(y)


def test_a_step_with_a_nan_stage_is_rejected_and_retried_smaller():
    # the probe: the first step 0.1 s overshoots (stages at y < 0 give NaN); the max
    # of the error norm used to drop the NaN, accept the step and end with y = NaN. scipy's
    # RK45 (rtol 1e-6, atol 1e-9, first_step 0.1) rejects it and ends at 3.8e-44; exact e^-100
    # = 3.7e-44
    solver = Dopri54(nan_below_zero, 0.0, [1.0], 1.0, rtol=1e-6, atol=1e-9, first_step=0.1)
    t, y = solver.integrate()
    assert t == 1.0 and np.isfinite(y[0]) and abs(y[0] - np.exp(-100.0)) < 1e-9
    assert solver.stats.rejected >= 1


def test_a_non_finite_derivative_at_the_start_raises_floating_point_error():
    with pytest.raises(FloatingPointError, match="not finite"):
        Dopri54(lambda t, y: y * np.nan, 0.0, [1.0], 1.0, rtol=1e-6, atol=1e-6).integrate()


def test_step_size_underflow_on_blow_up():
    with pytest.raises(StepSizeError, match="step size"):
        Dopri54(lambda t, y: y**2, 0.0, np.array([1.0]), 2.0, rtol=1e-8, atol=1e-8).integrate()


# --- the base interface, shared by Dopri54 and Radau5 ---------------------------------------

def linear(t, y):
    return np.array([y[1], -y[0] - 0.1 * y[1]])


def linear_jac(t, y):
    return np.array([[0.0, 1.0], [-1.0, -0.1]])


def make(name, **kwargs):
    args = dict(fun=linear, t0=0.0, y0=[1.0, 0.0], t_final=2.0, rtol=1e-6, atol=1e-8)
    if INTEGRATORS[name].needs_jacobian:
        args["jac"] = linear_jac
    args.update(kwargs)
    return INTEGRATORS[name](args.pop("fun"), args.pop("t0"), args.pop("y0"),
                             args.pop("t_final"), **args)


def test_the_public_names_pick_the_classes():
    assert INTEGRATORS == {"dopri54": Dopri54, "radau5": Radau5}
    assert Dopri54.error_test_tolerances(1e-8, 1e-9) == (1e-8, 1e-9)


@pytest.mark.parametrize("name", ["dopri54", "radau5"])
def test_one_record_signature_with_contiguous_steps_and_dense_output(name):
    steps, times = [], []
    solver = make(name)
    t, y = solver.integrate(record=steps.append, progress=times.append)
    assert t == 2.0 and y is solver.y and solver.t == 2.0
    assert len(steps) == solver.stats.accepted == len(times)
    for a, b in zip(steps, steps[1:]):
        assert b.t0 == a.t1 and b.y0 is a.y1
    for s in steps:
        ends = s.dense([0.0, 1.0])
        assert ends.shape == (2, 2)
        np.testing.assert_allclose(ends, [s.y0, s.y1], rtol=1e-12, atol=1e-15)
    assert steps[-1].t1 == 2.0 and times == [s.t1 for s in steps]
    assert repr(steps[0]).startswith(("DopriStep(t0=0", "RadauStep(t0=0"))


@pytest.mark.parametrize("name", ["dopri54", "radau5"])
def test_stats_are_a_frozen_record(name):
    solver = make(name)
    assert solver.stats == IntegratorStats()
    solver.integrate()
    stats = solver.stats
    assert isinstance(stats, IntegratorStats) and stats.accepted > 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        stats.accepted = 0
    solver.integrate()  # already at t_final: nothing more to do
    assert solver.stats == stats


@pytest.mark.parametrize("name", ["dopri54", "radau5"])
def test_failure_leaves_the_partial_stats(name):
    blow_up = make(name, fun=lambda t, y: y ** 2, y0=[1.0], jac=None if name == "dopri54"
                   else (lambda t, y: np.array([[2 * y[0]]])))
    with pytest.raises(StepSizeError, match="fell below the resolvable"):
        blow_up.integrate()
    assert blow_up.stats.accepted > 10 and 0.9 < blow_up.t < 1.01  # y = 1 / (1 - t)


@pytest.mark.parametrize("name", ["dopri54", "radau5"])
@pytest.mark.parametrize("kwargs, error, match", [
    (dict(rtol=-1), ValueError, "rtol must be positive, got -1"),
    (dict(rtol=np.inf), ValueError, "rtol must be finite, got inf"),
    (dict(rtol="tight"), TypeError, "rtol must be a number, got 'tight'"),
    (dict(atol=0.0), ValueError, r"atol must be positive and finite, a scalar or shape \(2,\)"),
    (dict(atol=[1e-8, 1e-8, 1e-8]), ValueError, "atol must be positive"),
    (dict(max_step=0.0), ValueError, "max_step must be positive, got 0.0"),
    (dict(first_step=-1e-3), ValueError, "first_step must be positive, got -0.001"),
    (dict(t_final=0.0), ValueError, "t_final must be greater than t0, got t0=0.0, t_final=0.0"),
    (dict(t0=np.nan), ValueError, "t0 must be finite"),
    (dict(y0=[1.0, np.nan]), ValueError, r"y0 must be finite; entries \[1\] are not"),
    (dict(y0=np.ones((2, 2))), ValueError, "y0 must be a non-empty 1-D array"),
    (dict(fun=None), TypeError, r"fun must be callable as fun\(t, y\)"),
])
def test_invalid_arguments_are_named(name, kwargs, error, match):
    with pytest.raises(error, match=match):
        make(name, **kwargs)


def test_hooks_a_method_does_not_take_are_refused():
    with pytest.raises(ValueError, match="dopri54 is explicit and uses no Jacobian"):
        make("dopri54", jac=linear_jac)
    with pytest.raises(ValueError, match="radau5 takes no correction hook"):
        make("radau5", correct=lambda t, y: (0, False))
    with pytest.raises(TypeError, match=r"jac must be callable as jac\(t, y\)"):
        make("radau5", jac=None)
    with pytest.raises(TypeError, match="record must be callable"):
        make("dopri54").integrate(record=[])


# --- the step guard: a run whose steps collapse fails in bounded time ----------------------

def stiff_relaxation(t, y):
    """y' = -1e8 (y - cos t): an explicit method is held to steps of ~3e-8 s."""
    return -1e8 * (y - np.cos(t))


@pytest.mark.parametrize("name", ["dopri54", "radau5"])
@pytest.mark.parametrize("value, error, match", [
    (0, ValueError, "max_steps must be an integer >= 1, got 0"),
    (2.5, TypeError, "max_steps must be an integer >= 1, got 2.5"),
    (True, TypeError, "max_steps must be an integer >= 1, got True"),
    ("100", TypeError, "max_steps must be an integer >= 1, got '100'"),
])
def test_max_steps_is_validated(name, value, error, match):
    with pytest.raises(error, match=match):
        make(name, max_steps=value)


@pytest.mark.parametrize("name", ["dopri54", "radau5"])
def test_max_steps_caps_the_attempts_and_keeps_the_partial_stats(name):
    solver = make(name, t_final=1e4, rtol=1e-10, atol=1e-12, max_steps=50)
    with pytest.raises(StepLimitError, match=r"reached max_steps = 50, at t = .* of t_final"):
        solver.integrate()
    s = solver.stats
    assert s.accepted + s.rejected + s.newton_failures == 50 and 0 < solver.t < 1e4


def test_a_collapsed_pace_stops_the_run_early():
    # 3e7 steps would be needed; the pace check stops it after one or two windows
    solver = Dopri54(stiff_relaxation, 0.0, np.array([1.0]), 1.0, rtol=1e-6, atol=1e-9)
    with pytest.raises(StepLimitError, match=r"at the pace of the last \d+ .* would need about"):
        solver.integrate()
    assert solver.stats.accepted + solver.stats.rejected <= 2 * PACE_WINDOW
    # the implicit method is not held by the stiffness: no guard trips
    t, y = Radau5(stiff_relaxation, 0.0, np.array([1.0]), 1.0, rtol=1e-6, atol=1e-9,
                  jac=lambda t, y: np.array([[-1e8]])).integrate()
    assert y[0] == pytest.approx(np.cos(1.0), rel=1e-6)


def test_the_pace_check_lets_a_long_smooth_run_through():
    solver = make("dopri54", t_final=1000.0, rtol=1e-10, atol=1e-12, max_steps=40_000)
    solver.integrate()  # about 30k steps at a steady pace: under the cap, never projected over
    assert solver.stats.accepted > 2 * PACE_WINDOW


def chirp(lam):
    """y' = cos(exp(lam t)): the frequency grows as exp(lam t), so the steps shrink without end,
    gradually (by a few tens of percent per window at first, then less) as under a force
    growing exponentially; the single-window extrapolation passes 1e6 attempts only late."""
    return lambda t, y: np.array([np.cos(np.exp(lam * t))])


def test_steps_shrinking_steadily_stop_the_run_by_the_shrink_test():
    solver = Dopri54(chirp(20.0), 0.0, np.array([0.0]), 1.0, rtol=1e-8, atol=1e-10)
    with pytest.raises(StepLimitError, match=r"took ever shorter steps: the time advanced per "
                       r"2000 attempts shrank in each of the last \d+ windows.* would reach only "
                       r"about t = .* never t_final") as info:
        solver.integrate()
    s = solver.stats
    assert s.accepted + s.rejected <= (SHRINK_WINDOWS + 1) * PACE_WINDOW
    assert solver.t < info.value.reach < 1.0  # the time the shrinking steps converge to


def test_a_run_that_converges_short_of_t_final_stops_whatever_max_steps():
    # a collapse that the plain pace extrapolation would let run for 1e8 attempts
    solver = Dopri54(chirp(20.0), 0.0, np.array([0.0]), 1.0, rtol=1e-8, atol=1e-10,
                     max_steps=10**8)
    with pytest.raises(StepLimitError, match="never t_final"):
        solver.integrate()
    assert solver.stats.accepted + solver.stats.rejected <= (SHRINK_WINDOWS + 1) * PACE_WINDOW


def switched_relaxation(t, y):
    """y' = -k (y - cos t) with k = 1, and k = 1e4 for 10 <= t < 12 (a load switched on, then
    off): an explicit method is held to ~2e-4 s steps for 2 s (10k attempts), then recovers."""
    k = 1e4 if 10.0 <= t < 12.0 else 1.0
    return -k * (y - np.cos(t))


def test_a_transient_step_collapse_that_recovers_gets_through():
    solver = Dopri54(switched_relaxation, 0.0, np.array([1.0]), 100.0, rtol=1e-10, atol=1e-12)
    t, y = solver.integrate()
    s = solver.stats
    assert s.accepted + s.rejected > 4 * PACE_WINDOW  # the burst spans several windows
    # long relaxed onto the forced response (cos t + sin t) / 2
    assert t == 100.0 and y[0] == pytest.approx((np.cos(100.0) + np.sin(100.0)) / 2, abs=1e-8)
