"""The compiled Dormand-Prince pieces and the chunked driver, on plain ODEs: a compiled loop
written from them takes Dopri54's steps, in chunks of any size, and fails as Dopri54 does."""

import numpy as np
import pytest
from numba import njit

from tenscontrol.integrate import StepLimitError, StepSizeError, chunked
from tenscontrol.integrate.chunked import (ACCEPTED, CHUNK, DONE, REJECTED, REJECTED_LAST, RHS,
                                           STEP_SIZE, ChunkedDopri54)
from tenscontrol.integrate.dopri import B5, Dopri54, DopriStep
from tenscontrol.integrate.dopri_kernel import (attempt, dense_state, error_norm, grown_step,
                                                rejected_step, stage_state, step_too_small)


@njit
def _fun(y, k, dy):
    """y'' = -k y (k > 0), or y' = y^2 (k = 0: blows up at t = 1/y0), or y' = k y + 0 sqrt(y)
    (k < 0: NaN where y < 0)."""
    if k == 0.0:
        dy[0] = y[0] * y[0]
        dy[1] = 0.0
    elif k < 0.0:
        dy[0] = k * y[0] + 0.0 * np.sqrt(y[0])
        dy[1] = 0.0
    else:
        dy[0] = y[1]
        dy[1] = -k * y[0]


@njit
def _advance(k, y, f, K, ys, rtol, atol, t_final, max_step, limit, clock, counts, T):
    """The smallest compiled Dopri54 loop: no correction, the accepted times into T."""
    t, h = clock[0], clock[1]
    while t < t_final:
        if counts[ACCEPTED] + counts[REJECTED] >= limit:
            return CHUNK
        if step_too_small(h, t, t_final):
            return STEP_SIZE
        h, last = attempt(t, h, t_final)
        K[0] = f
        for s in range(1, 7):
            stage_state(y, K, s, h, ys)
            _fun(ys, k, K[s])
        counts[RHS] += 6
        err = error_norm(y, ys, K, h, rtol, atol)
        if err > 1.0:
            counts[REJECTED] += 1
            counts[REJECTED_LAST] = 1
            h = rejected_step(h, err)
            clock[1] = h
            continue
        h_next = grown_step(h, err, counts[REJECTED_LAST] == 1, max_step)
        counts[REJECTED_LAST] = 0
        t = t_final if last else t + h
        y[:] = ys
        f[:] = K[6]
        T[counts[ACCEPTED]] = t
        counts[ACCEPTED] += 1
        h = h_next
        clock[0], clock[1] = t, h
    return DONE


class _Compiled(ChunkedDopri54):
    def __init__(self, k, y0, t_final, **options):
        fun = lambda t, y: _python_fun(y, k)  # noqa: E731 (the first step, in Python)
        super().__init__(fun, 0.0, y0, t_final, **options)
        self.k, self.T = k, np.zeros(100_000)

    def _advance(self, limit):
        return _advance(self.k, self.y, self.f, self.K, self.ys, self.rtol, self.atol,
                        self.t_final, self.max_step, limit, self.clock, self.counts, self.T)


def _python_fun(y, k):
    dy = np.empty(2)
    _fun(y, k, dy)
    return dy


def _python_steps(k, y0, t_final, **options):
    solver = Dopri54(lambda t, y: _python_fun(y, k), 0.0, y0, t_final, **options)
    times = []
    solver.integrate(record=lambda step: times.append(step.t1))
    return solver, np.array(times)


@pytest.mark.parametrize("options", [dict(rtol=1e-9, atol=1e-9),
                                     dict(rtol=1e-4, atol=1e-6, max_step=0.3)])
def test_a_compiled_loop_takes_dopri54s_steps_in_chunks_of_any_size(options, monkeypatch):
    y0 = np.array([1.0, 0.0])
    ref, times = _python_steps(4.0, y0, 10.0, **options)
    for first, seconds in ((chunked.FIRST_CHUNK, chunked.CHUNK_SECONDS), (1, 1e-12)):
        monkeypatch.setattr(chunked, "FIRST_CHUNK", first)
        monkeypatch.setattr(chunked, "CHUNK_SECONDS", seconds)  # 1 attempt a chunk
        solver = _Compiled(4.0, y0, 10.0, **options)
        t, y = solver.integrate()
        assert t == 10.0 and solver.stats == ref.stats
        np.testing.assert_array_equal(solver.T[:solver.stats.accepted], times)
        np.testing.assert_array_equal(y, ref.y)


def test_a_blow_up_fails_as_in_dopri54():
    y0 = np.array([1.0, 0.0])  # y' = y^2: y = 1 / (1 - t)
    with pytest.raises(StepSizeError) as python:
        _python_steps(0.0, y0, 2.0, rtol=1e-8, atol=1e-8)
    solver = _Compiled(0.0, y0, 2.0, rtol=1e-8, atol=1e-8)
    with pytest.raises(StepSizeError) as compiled:
        solver.integrate()
    assert str(compiled.value) == str(python.value)


def test_a_nan_stage_is_rejected_as_in_dopri54():
    # first step 0.1 s overshoots zero: NaN stages, which the error test must reject
    y0, options = np.array([1.0, 0.0]), dict(rtol=1e-6, atol=1e-9, first_step=0.1)
    with np.errstate(invalid="ignore"):
        ref, times = _python_steps(-100.0, y0, 1.0, **options)
    solver = _Compiled(-100.0, y0, 1.0, **options)
    t, y = solver.integrate()
    assert t == 1.0 and np.all(np.isfinite(y)) and solver.stats.rejected >= 1
    assert solver.stats == ref.stats
    np.testing.assert_array_equal(solver.T[:solver.stats.accepted], times)
    np.testing.assert_array_equal(y, ref.y)


def test_max_steps_stops_the_compiled_loop_between_chunks():
    solver = _Compiled(4.0, np.array([1.0, 0.0]), 100.0, rtol=1e-9, atol=1e-9, max_steps=50)
    with pytest.raises(StepLimitError, match="50 step attempts.*reached max_steps = 50"):
        solver.integrate()
    assert solver.stats.accepted == 50 and solver.t < 100.0


def test_the_pieces_match_dopri54():
    rng = np.random.default_rng(1)
    y0, y1, y_unc = rng.normal(size=(3, 5))
    K = rng.normal(size=(7, 5))
    h = 0.37
    step = DopriStep(0.0, h, y0, y1, y_unc, K)
    out = np.empty(5)
    for theta in (0.0, 0.3, 1.0):
        dense_state(y0, y1, y_unc, K, h, theta, out)
        np.testing.assert_allclose(out, step.dense([theta])[0], rtol=1e-14, atol=1e-14)
    stage_state(y0, K, 6, h, out)
    expected = y0.copy()
    for j, a in enumerate(B5):
        if a:
            expected += (h * a) * K[j]
    np.testing.assert_array_equal(out, expected)  # same order of additions: same rounding
    huge = np.zeros((7, 5))
    huge[0] = 1e308
    assert error_norm(y0, out, huge, h, 1e-300, np.full(5, 1e-300)) == np.inf  # overflow
    for j in range(7):  # a NaN in any stage, or in the solution, fails the error test
        nan = K.copy()
        nan[j, 2] = np.nan
        assert error_norm(y0, y1, nan, h, 1e-3, np.full(5, 1e-3)) == np.inf
    assert error_norm(y0, np.where(np.arange(5) == 4, np.nan, y1), K, h, 1e-3,
                      np.full(5, 1e-3)) == np.inf
    assert rejected_step(1.0, np.inf) == 0.2 and grown_step(1.0, 0.0, False, 3.0) == 3.0
    assert grown_step(1.0, 1e-9, True, np.inf) == 1.0

