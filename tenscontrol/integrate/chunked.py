"""Dormand-Prince 5(4) and Radau IIA with their step loops compiled, run in bounded chunks.

:class:`ChunkedDopri54` is :class:`tenscontrol.integrate.dopri.Dopri54` for a caller that has
compiled the whole step loop (stages, error test, correction, recording) with numba, from the
pieces of :mod:`tenscontrol.integrate.dopri_kernel`; :class:`ChunkedRadau5` is
:class:`tenscontrol.integrate.radau.Radau5` for one compiled from the pieces of
:mod:`tenscontrol.integrate.radau_kernel`. Both take their driver from :class:`Chunked`. A
subclass writes :meth:`_advance`: run
the compiled loop from the state held in :attr:`clock`, :attr:`counts` and :attr:`y` until
t_final or a given number of step attempts, and return a status (:data:`DONE`, :data:`CHUNK`,
...). This class calls it in chunks and, between chunks, does in Python what the loop cannot:

- the pace check of the base (every PACE_WINDOW attempts, :class:`StepLimitError`);
- the errors the loop reports by status (:class:`StepSizeError`, non-finite states);
- Ctrl-C: a compiled loop does not see KeyboardInterrupt, which Python raises when the chunk
  returns; chunks are sized to about :data:`CHUNK_SECONDS` of wall time, so an interrupt waits
  at most that long, and the state arrays, written in place by the loop, are consistent
  whenever Python runs;
- the progress callback, once a chunk.

The counters live in the int64 array :attr:`counts` (accepted, rejected, rhs evaluations, then
the method's own) and the time and next step in the float array :attr:`clock`, both
written in place by the compiled loop, so that :attr:`stats` is right at any moment.
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from tenscontrol.integrate.base import (DEFAULT_MAX_STEPS, IntegratorStats, StepSizeError,
                                        smallest_step)
from tenscontrol.integrate.dopri import Dopri54
from tenscontrol.integrate.radau import Radau5
from tenscontrol.integrate.radau_kernel import PIVOT_DTYPE

__all__ = ["ACCEPTED", "AFTER_ACCEPT", "CHUNK", "CHUNK_SECONDS", "CORRECTIONS", "Chunked",
           "ChunkedDopri54", "ChunkedRadau5", "DONE", "FAC1", "FAC2I", "FAC2R", "FACCON",
           "FAIL_TIME", "FIRST", "F_PENDING", "FULL", "H", "H_LU", "H_OLD", "JACOBIANS", "JAC_CURRENT", "LAST",
           "LU", "NEED_JAC", "NEWTON_FAILURES", "NEWTON_ITERATIONS", "NEXT_EVAL", "NONFINITE",
           "NONFINITE_CORRECTED", "NONFINITE_JACOBIAN", "N_OUT", "QUOT", "REC_FAILURES",
           "REJECTED", "REJECTED_LAST", "RETRY", "RHS", "SINGULAR", "SLOW", "STEP_SIZE", "T",
           "T_REACHED"]

# Wall time a chunk aims at [s]: the longest an interrupt waits, and long enough that the
# Python work between chunks (tens of microseconds) is lost in it.
CHUNK_SECONDS = 0.05
# The first chunk's attempts; later chunks are sized from the measured time per attempt,
# growing at most 8-fold a chunk.
FIRST_CHUNK = 64


# What a compiled loop returns, why it stopped (module constants: numba reads them as such)
DONE = 0                 # t reached t_final
CHUNK = 1                # the attempts of the chunk are spent
FULL = 2                 # the output buffer is full (the subclass grows it and goes on)
STEP_SIZE = 3            # the next step is below the resolvable step (clock holds t, h)
NONFINITE = 4            # an accepted state is not finite
NONFINITE_CORRECTED = 5  # a corrected state is not finite


# indices into ChunkedDopri54.clock and .counts, shared with the compiled loops
T, H = 0, 1
ACCEPTED, REJECTED, RHS, CORRECTIONS, REJECTED_LAST = 0, 1, 2, 3, 4

_MESSAGES = {NONFINITE: "the state became non-finite",
             NONFINITE_CORRECTED: "the corrected state is not finite"}


class Chunked:
    """The chunk driver of a compiled step loop, mixed into an integrator class (before it).

    A subclass sets :attr:`COUNTERS` (the integrator's counter attributes, in the order of
    the int64 array :attr:`counts` its loop writes; the first two are the accepted and
    rejected steps), creates :attr:`clock` ([t, h, ...]) and :attr:`counts` in ``_start``
    after the integrator's own, and writes :meth:`_advance`.
    """

    COUNTERS: tuple[str, ...] = ()

    @property
    def stats(self) -> IntegratorStats:
        if self._started:
            self._sync_counts()
        return super().stats

    def _advance(self, limit: int) -> int:
        """Run the compiled loop until t_final or `limit` step attempts; return its status
        (never FULL: the subclass grows its buffers and goes on)."""
        raise NotImplementedError

    def _failure(self, status: int) -> Exception:
        """The exception of a status the loop stopped with (not DONE, CHUNK, STEP_SIZE)."""
        if status in _MESSAGES:
            return FloatingPointError(_MESSAGES[status])
        # a loop of ours returned what this driver does not know
        return RuntimeError(f"{type(self).__name__}._advance returned status {status}")

    def integrate(self, progress: Callable[[float], None] | None = None):
        """Step to t_final in compiled chunks; see :meth:`Integrator.integrate`.

        Parameters
        ----------
        progress : callable ``progress(t)``, optional
            Called with the time reached after each chunk [s].
        """
        if not self._started:
            self._start()
            self._budget = FIRST_CHUNK
            self._started = True
        while True:
            attempts = self._sync()
            if attempts >= self._next_pace_check:
                self._check_pace(attempts, self.h)
            limit = min(self._next_pace_check, attempts + self._budget)
            start = time.perf_counter()
            status = self._advance(limit)
            self._resize(self._sync() - attempts, time.perf_counter() - start)
            if progress is not None:
                progress(self.t)
            if status == DONE:
                return self.t, self.y
            if status == STEP_SIZE:
                h_min = smallest_step(self.t, self.t_final)
                raise StepSizeError(f"step size {self.h:.3g} s fell below the resolvable "
                                    f"{h_min:.3g} s at t = {self.t:.9g} s")
            if status != CHUNK:
                raise self._failure(status)

    def _sync_counts(self) -> None:
        for name, value in zip(self.COUNTERS, self.counts.tolist()):
            setattr(self, name, value)

    def _sync(self) -> int:
        """Copy the compiled loop's time, step and counters to the base's attributes (for the
        pace check and the error messages); returns the attempts so far."""
        self.t, self.h = float(self.clock[T]), float(self.clock[H])
        self._sync_counts()
        return self._accepted + self._rejected + self._newton_failures

    def _resize(self, attempts: int, seconds: float) -> None:
        """The next chunk's attempts, from this one's pace: about CHUNK_SECONDS."""
        if attempts <= 0 or seconds <= 0:
            return
        target = int(attempts * CHUNK_SECONDS / seconds)
        self._budget = max(1, min(target, 8 * self._budget))


class ChunkedDopri54(Chunked, Dopri54):
    """:class:`~tenscontrol.integrate.dopri.Dopri54` whose step loop a subclass compiled.

    Takes the arguments of :class:`~tenscontrol.integrate.dopri.Dopri54` (no correction
    hook: the compiled loop corrects itself). ``fun`` is called from Python only for the
    first step (its derivative and the initial step estimate), as Dopri54 does, so both
    take the same first step. The subclass writes :meth:`_advance` and records the steps
    itself (:meth:`integrate` takes no `record` callback).

    Attributes
    ----------
    clock : ndarray, shape (2,)
        [t, h]: the time reached [s] and the next step to try [s].
    counts : ndarray of int64, shape (5,)
        accepted and rejected steps, rhs evaluations, correction iterations, and 1 if the
        last attempt was rejected.
    """

    COUNTERS = ("_accepted", "_rejected", "_rhs", "_correction_iterations")

    def _start(self):
        super()._start()  # f at t0 and the first step, in Python as Dopri54
        self.clock = np.array([self.t, self.h])
        self.counts = np.array([self._accepted, self._rejected, self._rhs,
                                self._correction_iterations, 0], dtype=np.int64)


# indices into ChunkedRadau5.clock (T, H as above) and .counts (ACCEPTED, REJECTED, RHS as
# above), shared with the compiled loops: the last accepted step, its step-size quotient, the
# Newton convergence factor, the step of the LU factors and their shifts (fac1, fac2 = FAC2R +
# i FAC2I), the time a failure was met, the end of the last recorded step; the counters, the
# step's flags (first step, retrying after a rejection, ending at t_final, J due, J fresh, the
# last Newton slow, an accepted step awaiting its successor's f and h) and the recorder's three
# counts (kept as the Recorder's: failures, rows written, next t_eval entry), the
# derivatives that met a singular mass matrix, and f at the step's start due (counted, not
# yet evaluated)
H_OLD, QUOT, FACCON, H_LU, FAC1, FAC2R, FAC2I, FAIL_TIME, T_REACHED = range(2, 11)
(JACOBIANS, LU, NEWTON_ITERATIONS, NEWTON_FAILURES, FIRST, RETRY, LAST, NEED_JAC, JAC_CURRENT,
 SLOW, AFTER_ACCEPT, REC_FAILURES, N_OUT, NEXT_EVAL, SINGULAR, F_PENDING) = range(3, 19)
NONFINITE_JACOBIAN = 6   # a status of the Radau loops: J is not finite (clock[FAIL_TIME]: when)


class ChunkedRadau5(Chunked, Radau5):
    """:class:`~tenscontrol.integrate.radau.Radau5` whose step loop a subclass compiled from
    the pieces of :mod:`tenscontrol.integrate.radau_kernel` (dense Jacobians only).

    Takes the arguments of :class:`~tenscontrol.integrate.radau.Radau5`; ``fun`` is called
    from Python only for the first step (its derivative and the initial step estimate), and
    ``jac`` not at all: the subclass's loop evaluates both. The state of the Python loop
    lives in :attr:`clock` and :attr:`counts` (the index constants above), the step's
    polynomial in ``Q``, and the work space in the attributes :meth:`_start` allocates.
    """

    COUNTERS = ("_accepted", "_rejected", "_rhs", "_jacobians", "_lu", "_newton_iterations",
                "_newton_failures")

    def __init__(self, fun, t0, y0, t_final, *, rtol, atol, max_step=np.inf, first_step=None,
                 jac=None, max_steps=DEFAULT_MAX_STEPS, newton_tol=None,
                 max_newton_iterations=7, keep_step="auto"):
        super().__init__(fun, t0, y0, t_final, rtol=rtol, atol=atol, max_step=max_step,
                         first_step=first_step, jac=jac, max_steps=max_steps,
                         newton_tol=newton_tol, max_newton_iterations=max_newton_iterations,
                         keep_step=keep_step)
        # made here, filled by _start: a recorder may take views of them before the run
        self.clock = np.zeros(T_REACHED + 1)
        self.counts = np.zeros(F_PENDING + 1, dtype=np.int64)

    def _start(self):
        super()._start()  # f at t0 and the first step, in Python as Radau5
        n = self.n
        self.clock[[T, H, FACCON]] = self.t, self.h, self.faccon
        self.counts[[RHS, FIRST, LAST, NEED_JAC]] = self._rhs, 1, self.last, 1
        self.J = np.empty((n, n))
        self.E1 = np.empty((n, n), order="F")
        self.E2 = np.empty((n, n), dtype=complex, order="F")
        self.piv1, self.piv2 = np.empty(n, PIVOT_DTYPE), np.empty(n, PIVOT_DTYPE)
        self.rates, self.y_work, self.f_work = np.empty(4), np.empty(n), np.empty(n)

    def _failure(self, status: int) -> Exception:
        when = float(self.clock[FAIL_TIME])
        if status == NONFINITE:
            return FloatingPointError(f"the state became non-finite at t = {when:.9g} s")
        if status == NONFINITE_JACOBIAN:
            return FloatingPointError(f"jac(t, y) returned non-finite entries at t = {when:.6g}")
        return super()._failure(status)
