"""What every integrator shares: validation, counters, step records, dense output, step size.

:class:`Integrator` integrates ``y' = fun(t, y)`` from t0 to t_final. It validates its inputs,
drives the step loop, keeps the counters (read as the frozen :class:`IntegratorStats`) and
hands each accepted step to the caller as a :class:`Step` with its dense output. A subclass
(:class:`tenscontrol.integrate.dopri.Dopri54`, :class:`tenscontrol.integrate.radau.Radau5`)
writes one step: :meth:`Integrator._start` evaluates what the first step needs, and
:meth:`Integrator._step` advances ``self.t``, ``self.y`` by one accepted step (retrying
rejected attempts itself) and returns its :class:`Step`.

Both methods test the local error in the max norm
``max_i |err_i| / (atol_i + rtol max(|y0_i|, |y1_i|)) <= 1``, as MATLAB's ode45, and share the
initial step of Hairer, Norsett & Wanner (:func:`initial_step`) and the smallest resolvable step
(:func:`smallest_step`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, ClassVar

import numpy as np

from tenscontrol import validation

__all__ = ["DEFAULT_MAX_STEPS", "Integrator", "IntegratorStats", "Step", "StepLimitError",
           "StepSizeError", "initial_step", "positive", "smallest_step"]

# The default cap on step attempts (accepted, rejected and Newton failures), also the bound of
# the pace check below. Measured: the longest run of the catalog, examples, tests and benchmarks
# is bench_compressible's T-bar with 2000 GPa bars over 10 s at 1e-10 (~760k attempts, projected
# steadily from its first windows); the tests' longest ~75k, the aluminium T-bar 10 s ~38k.
# A collapsing run is stopped by the pace check long before the cap: a 1e-6 kg node on 1e8 N/m
# springs or a 1e12 N s/m damper after one window (< 1 s), a force growing as exp(50 t) or a
# destabilizing controller by the shrink test after 7 windows (14k attempts).
DEFAULT_MAX_STEPS = 1_000_000
# Attempts between two checks of the pace (Integrator._check_pace): short enough that a collapsed
# run stops within a second or so, long enough to span the brief bursts of small steps of a
# legitimate run (a string going slack, a load switched on).
PACE_WINDOW = 2000
# The shrink test of the pace check: when the time advanced per window has shrunk to at most
# SHRINK_RATIO of the window before in each of the last SHRINK_WINDOWS windows, the run is
# extrapolated with that shrink (a geometric series of advances, ratio the largest of those
# seen) instead of the last window's pace. Runs whose steps shrink gradually without end (a
# state running away, a controller destabilizing the structure) converge to a time short of
# t_final in a few windows, where the single-window extrapolation needed 40k-80k attempts to
# pass max_steps. A legitimate run slows down in a jump (a load switched on, a string going
# slack: one or two shrinking windows) or oscillates around a steady pace: over the tests,
# examples and benchmarks, no run had two consecutive windows shrinking by 10% or more.
SHRINK_WINDOWS = 6
SHRINK_RATIO = 0.9


class StepSizeError(RuntimeError):
    """The step size fell below what floating point can resolve at the current time."""


class StepLimitError(RuntimeError):
    """The integration used, or at its pace would use, more than `max_steps` step attempts
    before reaching t_final.

    Attributes
    ----------
    reach : float or None
        When the shrink test stopped the run: the time [s] its steadily shrinking steps would
        converge to, short of t_final (raising max_steps would not help); else None.
    """

    def __init__(self, message: str, reach: float | None = None):
        super().__init__(message)
        self.reach = reach


@dataclass(frozen=True)
class IntegratorStats:
    """The work of one integration, counted over the accepted and the rejected steps.

    Attributes
    ----------
    accepted, rejected : int
        Accepted steps, and steps rejected by the error test.
    rhs_evaluations : int
        Calls of ``fun``, including the one at t0, the initial-step estimate and (Dormand-Prince)
        the re-evaluation after each correction that moved the state.
    correction_iterations : int
        Iterations the correction hook reported, summed over steps (Dormand-Prince only).
    jacobian_evaluations : int
        Calls of ``jac`` (implicit methods only).
    lu_decompositions : int
        LU factorizations of the Newton matrix; Radau's real and complex factorization of one
        step count as one (implicit methods only).
    newton_iterations : int
        Simplified Newton iterations over all attempted steps (implicit methods only).
    newton_failures : int
        Steps retried with a smaller h because Newton converged too slowly or diverged
        (implicit methods only).
    """

    accepted: int = 0
    rejected: int = 0
    rhs_evaluations: int = 0
    correction_iterations: int = 0
    jacobian_evaluations: int = 0
    lu_decompositions: int = 0
    newton_iterations: int = 0
    newton_failures: int = 0


class Step:
    """One accepted step from t0 to t0 + h, handed to the `record` callback.

    Attributes
    ----------
    t0, h : float
        Start [s] and length [s] of the step.
    y0, y1 : ndarray, shape (n,)
        The states at t0 and at t0 + h (after the correction, if any). They are the
        integrator's own arrays: copy them to modify them.
    """

    __slots__ = ("t0", "h", "y0", "y1")

    def __init__(self, t0: float, h: float, y0: np.ndarray, y1: np.ndarray):
        self.t0, self.h, self.y0, self.y1 = t0, h, y0, y1

    @property
    def t1(self) -> float:
        """The end of the step, t0 + h [s]."""
        return self.t0 + self.h

    def dense(self, theta) -> np.ndarray:
        """States at t0 + theta h, theta in [0, 1]: array (len(theta), n); the method's
        continuous extension (a subclass of :class:`Step` per method)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(t0={self.t0:.9g}, h={self.h:.3g}, n={self.y0.size})"


def positive(name: str, value, finite: bool = True) -> float:
    """`value` as a float, checked to be > 0 (and finite unless `finite` is False)."""
    return validation.real(name, value, positive=True, finite=finite, typed=False)


def step_count(name: str, value) -> int:
    """`value` checked to be an integer >= 1 (a bool is not a count)."""
    return validation.integer(name, value, minimum=1, typed=False)


def _time(name: str, value) -> float:
    return validation.real(name, value, what="a number of seconds", typed=False)


def _state(y0) -> np.ndarray:
    """A float copy of y0, checked to be a finite, non-empty 1-D array."""
    try:
        y = np.array(y0, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"y0 must be an array of numbers, got {type(y0).__name__}") from None
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"y0 must be a non-empty 1-D array, got shape {y.shape}")
    bad = np.flatnonzero(~np.isfinite(y))
    if bad.size:
        raise ValueError(f"y0 must be finite; entries {bad.tolist()} are not")
    return y


def _absolute_tolerance(atol, shape) -> np.ndarray:
    """atol broadcast to the state's shape, checked to be positive and finite."""
    a = np.asarray(atol)
    if (a.shape not in ((), shape) or a.dtype.kind not in "iuf"
            or not np.all((a > 0) & np.isfinite(a))):
        raise ValueError(f"atol must be positive and finite, a scalar or shape {shape}, "
                         f"got {atol!r}")
    return np.broadcast_to(a.astype(float), shape).copy()


def initial_step(fun, t0, y0, f0, rtol, atol, span):
    """First step after Hairer, Norsett & Wanner (II.4) in the max norm, at most `span` [s].

    Evaluates `fun` once, at t0 + h0. Where the norms give no estimate (a state or derivative
    within the tolerance of zero), the guesses are 1e-6 of the span rather than Hairer's
    1e-6 s, so that a problem and its copy on another time scale start alike.
    """
    sc = atol + rtol * np.abs(y0)
    d0 = np.max(np.abs(y0) / sc)
    d1 = np.max(np.abs(f0) / sc)
    h0 = 1e-6 * span if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    h0 = min(h0, span)
    y1 = y0 + h0 * f0
    f1 = fun(t0 + h0, y1)
    d2 = np.max(np.abs(f1 - f0) / sc) / h0
    if max(d1, d2) <= 1e-15:
        h1 = max(1e-6 * span, h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** (1 / 5)
    return min(100 * h0, h1, span)


def smallest_step(t: float, t_final: float) -> float:
    """The smallest step [s] that floating point resolves near t (16 ulps of the larger time)."""
    return 16 * np.spacing(max(abs(t), abs(t_final)))


class Integrator:
    """Base class of the adaptive one-step integrators of ``y' = fun(t, y)``.

    Parameters
    ----------
    fun : callable ``fun(t, y) -> ndarray (n,)``
        Right-hand side; must return a new array and must not keep a reference to `y`.
    t0, t_final : float
        Start and end time [s], t0 < t_final.
    y0 : array_like, shape (n,)
        Initial state, finite (copied).
    rtol : float
        Relative tolerance of the error test, > 0.
    atol : float or array_like, shape (n,)
        Absolute tolerance(s) of the error test, > 0.
    max_step : float, optional
        Largest step [s], > 0 (default unbounded).
    max_steps : int, optional
        Largest number of step attempts (accepted, rejected by the error test, or retried
        after a Newton failure) before :class:`StepLimitError`; default
        :data:`DEFAULT_MAX_STEPS`. The guard that bounds a run whose steps collapse (a stiff
        member, a state running away) without a step falling below :func:`smallest_step`:
        every PACE_WINDOW attempts the pace is extrapolated to t_final (with its shrink, see
        SHRINK_WINDOWS), and the run stops as soon as it would need more.
    first_step : float, optional
        First step [s], > 0; by default estimated from `fun` (:func:`initial_step`).
    jac : callable ``jac(t, y) -> ndarray (n, n)``, optional
        The dense Jacobian d fun / d y: required by implicit methods (:attr:`needs_jacobian`),
        refused by the others.
    correct : callable ``correct(t, y) -> (iterations, changed)``, optional
        Called after each accepted step with the new state, which it may modify in place
        (e.g. a projection onto constraints); it returns its iteration count and whether it
        moved y. Only methods with :attr:`supports_correction` take it.

    Attributes
    ----------
    t : float
        The time reached [s].
    y : ndarray, shape (n,)
        The state at `t`.
    """

    name: ClassVar[str] = ""
    needs_jacobian: ClassVar[bool] = False
    supports_correction: ClassVar[bool] = False

    def __init__(self, fun, t0, y0, t_final, *, rtol, atol, max_step=np.inf, first_step=None,
                 jac=None, correct=None, max_steps=DEFAULT_MAX_STEPS):
        validation.callable_value("fun", fun, "fun(t, y)")
        self._check_hooks(jac, correct)
        t0, t_final = _time("t0", t0), _time("t_final", t_final)
        if not t_final > t0:
            raise ValueError(f"t_final must be greater than t0, got t0={t0}, t_final={t_final}")
        self.fun, self.jac, self.correct = fun, jac, correct
        self.t, self.t_final = t0, t_final
        self.y = _state(y0)
        self.n = self.y.size
        self.rtol = positive("rtol", rtol)
        self.atol = _absolute_tolerance(atol, self.y.shape)
        self.max_step = positive("max_step", max_step, finite=False)
        self.first_step = None if first_step is None else positive("first_step", first_step)
        self.max_steps = step_count("max_steps", max_steps)
        self._pace_start = (0, t0)
        self._paces: list[float] = []  # time advanced per attempt in the last windows [s]
        self._next_pace_check = min(PACE_WINDOW, self.max_steps)
        self._started = False
        self._accepted = self._rejected = self._rhs = self._correction_iterations = 0
        self._jacobians = self._lu = self._newton_iterations = self._newton_failures = 0

    def _check_hooks(self, jac, correct) -> None:
        """jac is given exactly when the method needs it; correct only where supported."""
        if self.needs_jacobian:
            validation.callable_value("jac", jac, "jac(t, y)")
        elif jac is not None:
            raise ValueError(f"{self.name} is explicit and uses no Jacobian; leave jac unset")
        if correct is not None:
            if not self.supports_correction:
                raise ValueError(f"{self.name} takes no correction hook; leave correct unset")
            validation.callable_value("correct", correct, "correct(t, y)")

    @classmethod
    def error_test_tolerances(cls, rtol: float, atol: float) -> tuple[float, float]:
        """The (rtol, atol) of this method's error test that give the accuracy `rtol`, `atol`
        give Dormand-Prince 5(4): unchanged here; a method whose error estimate is of lower
        order than its solution maps them (see ``Radau5.error_test_tolerances``)."""
        return rtol, atol

    @property
    def stats(self) -> IntegratorStats:
        """The counters so far (also after a failure), as a frozen record."""
        return IntegratorStats(self._accepted, self._rejected, self._rhs,
                               self._correction_iterations, self._jacobians, self._lu,
                               self._newton_iterations, self._newton_failures)

    def integrate(self, record: Callable[[Step], None] | None = None,
                  progress: Callable[[float], None] | None = None) -> tuple[float, np.ndarray]:
        """Step from the current time to t_final.

        Parameters
        ----------
        record : callable ``record(step)``, optional
            Called after each accepted (and corrected) step with its :class:`Step`; the step's
            ``dense(theta)`` gives the states inside it.
        progress : callable ``progress(t)``, optional
            Called with the time reached after each accepted step [s].

        Returns
        -------
        t, y : float, ndarray (n,)
            The final time (t_final) and state.

        Raises
        ------
        StepSizeError
            If the step size falls below what floating point resolves at the current time.
        StepLimitError
            If `max_steps` step attempts did not reach t_final.
        FloatingPointError
            If the state or a derivative becomes non-finite.
        """
        for name, f in (("record", record), ("progress", progress)):
            if f is not None:
                validation.callable_value(name, f, f"{name}(...)")
        if not self._started:
            self._start()
            self._started = True
        while self.t < self.t_final:
            step = self._step()
            if record is not None:
                record(step)
            self._accepted += 1
            if progress is not None:
                progress(self.t)
        return self.t, self.y

    def _check_step(self, h: float, last: bool = False) -> None:
        """Before each step attempt: raise StepLimitError once max_steps attempts are spent or
        the pace of the last steps says they would be, StepSizeError if h is below the
        resolvable step (a short last step is fine)."""
        attempts = self._accepted + self._rejected + self._newton_failures
        if attempts >= self._next_pace_check:
            self._check_pace(attempts, h)
        h_min = smallest_step(self.t, self.t_final)
        if not (h >= h_min or last):
            raise StepSizeError(f"step size {h:.3g} s fell below the resolvable {h_min:.3g} s "
                                f"at t = {self.t:.9g} s")

    def _check_pace(self, attempts: int, h: float) -> None:
        """Every PACE_WINDOW attempts: fail if the steps would exceed max_steps, at the pace of
        the last window (time advanced per attempt) over the rest of the span, or, when that
        pace has shrunk steadily over the last windows, at the shrinking pace (the shrink
        test: the geometric series of the windows' advances bounds the time the run can
        reach; if that bound falls short of t_final the run cannot end)."""
        window_attempts = attempts - self._pace_start[0]
        advanced = self.t - self._pace_start[1]
        rest = self.t_final - self.t
        pace = advanced / window_attempts if window_attempts > 0 else 0.0
        self._paces = self._paces[-SHRINK_WINDOWS:] + [pace]
        self._pace_start = (attempts, self.t)
        self._next_pace_check = min(attempts + PACE_WINDOW, self.max_steps)
        needed = rest / pace if pace > 0 else math.inf
        reason = (f"at the pace of the last {window_attempts} ({advanced:.3g} s simulated) "
                  f"would need about {needed:.3g} more to reach t_final, beyond")
        shrink = self._shrink()
        reach = None
        if shrink is not None and attempts < self.max_steps:
            # advances a q, a q^2, ... per window: they sum to at most a q / (1 - q)
            limit = advanced * shrink / (1 - shrink)
            trend = (f"the time advanced per {window_attempts} attempts shrank in each of the "
                     f"last {SHRINK_WINDOWS} windows, from {self._paces[0] * window_attempts:.3g} "
                     f"s to {advanced:.3g} s (by {1 - shrink:.0%} or more each)")
            if limit < rest:
                needed, reach = math.inf, self.t + limit
                reason = (f"took ever shorter steps: {trend}; shrinking so, they would reach "
                          f"only about t = {reach:.6g} s, never t_final, even beyond")
            else:  # n windows with a q (1 - q^n) / (1 - q) = rest
                n = math.log1p(-rest * (1 - shrink) / (advanced * shrink)) / math.log(shrink)
                needed = max(needed, n * window_attempts)
                reason = f"would need about {needed:.3g} more to reach t_final ({trend}), beyond"
        if attempts >= self.max_steps or attempts + needed > self.max_steps:
            if attempts >= self.max_steps:
                reason = "reached"
            raise StepLimitError(
                f"{attempts} step attempts ({self._accepted} accepted, {self._rejected} rejected, "
                f"{self._newton_failures} Newton failures) {reason} max_steps = {self.max_steps}, "
                f"at t = {self.t:.6g} s of t_final = {self.t_final:g} s; the last step was "
                f"{h:.3g} s", reach)

    def _shrink(self) -> float | None:
        """The largest ratio of a window's pace to the one before over the last SHRINK_WINDOWS
        windows, if every one of them is at most SHRINK_RATIO (a steady shrink), else None."""
        paces = self._paces
        if len(paces) <= SHRINK_WINDOWS:
            return None
        ratio = 0.0
        for before, after in zip(paces[:-1], paces[1:]):
            if not (before > 0 and after <= SHRINK_RATIO * before):
                return None
            ratio = max(ratio, after / before)
        return ratio

    def _initial_step(self, f0: np.ndarray) -> float:
        """The first step: `first_step` if given, else estimated (one evaluation of fun)."""
        span = min(self.t_final - self.t, self.max_step)
        if self.first_step is not None:
            return min(self.first_step, span)
        self._rhs += 1
        return initial_step(self.fun, self.t, self.y, f0, self.rtol, self.atol, span)

    def _start(self) -> None:
        """Evaluate what the first step needs (f at t0, the first step size)."""
        raise NotImplementedError

    def _step(self) -> Step:
        """Advance self.t, self.y by one accepted step and return it."""
        raise NotImplementedError
