"""Dormand-Prince 5(4) with its step loop compiled, run in bounded chunks.

:class:`ChunkedDopri54` is :class:`tenscontrol.integrate.dopri.Dopri54` for a caller that has
compiled the whole step loop (stages, error test, correction, recording) with numba, from the
pieces of :mod:`tenscontrol.integrate.dopri_kernel`. A subclass writes :meth:`_advance`: run
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

The counters live in the int64 array :attr:`counts` (accepted, rejected, rhs evaluations,
correction iterations) and the time and next step in the float array :attr:`clock`, both
written in place by the compiled loop, so that :attr:`stats` is right at any moment.
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from tenscontrol.integrate.base import IntegratorStats, StepSizeError, smallest_step
from tenscontrol.integrate.dopri import Dopri54

__all__ = ["ACCEPTED", "CHUNK", "CHUNK_SECONDS", "CORRECTIONS", "ChunkedDopri54", "DONE", "FULL",
           "H", "NONFINITE", "NONFINITE_CORRECTED", "REJECTED", "REJECTED_LAST", "RHS",
           "STEP_SIZE", "T"]

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


class ChunkedDopri54(Dopri54):
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

    def _start(self):
        super()._start()  # f at t0 and the first step, in Python as Dopri54
        self.clock = np.array([self.t, self.h])
        self.counts = np.array([self._accepted, self._rejected, self._rhs,
                                self._correction_iterations, 0], dtype=np.int64)
        self._budget = FIRST_CHUNK

    @property
    def stats(self) -> IntegratorStats:
        if not self._started:
            return super().stats
        c = self.counts
        return IntegratorStats(int(c[ACCEPTED]), int(c[REJECTED]), int(c[RHS]),
                               int(c[CORRECTIONS]))

    def _advance(self, limit: int) -> int:
        """Run the compiled loop until t_final or `limit` step attempts; return its status
        (never FULL: the subclass grows its buffers and goes on)."""
        raise NotImplementedError

    def integrate(self, progress: Callable[[float], None] | None = None):
        """Step to t_final in compiled chunks; see :meth:`Integrator.integrate`.

        Parameters
        ----------
        progress : callable ``progress(t)``, optional
            Called with the time reached after each chunk [s].
        """
        if not self._started:
            self._start()
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
            if status in _MESSAGES:
                raise FloatingPointError(_MESSAGES[status])
            if status != CHUNK:  # a loop of ours returned what this driver does not know
                raise RuntimeError(f"{type(self).__name__}._advance returned status {status}")

    def _sync(self) -> int:
        """Copy the compiled loop's time and counters to the base's attributes (for the pace
        check and the error messages); returns the attempts so far."""
        c = self.counts
        self.t, self.h = float(self.clock[T]), float(self.clock[H])
        self._accepted, self._rejected = int(c[ACCEPTED]), int(c[REJECTED])
        self._rhs, self._correction_iterations = int(c[RHS]), int(c[CORRECTIONS])
        return self._accepted + self._rejected

    def _resize(self, attempts: int, seconds: float) -> None:
        """The next chunk's attempts, from this one's pace: about CHUNK_SECONDS."""
        if attempts <= 0 or seconds <= 0:
            return
        target = int(attempts * CHUNK_SECONDS / seconds)
        self._budget = max(1, min(target, 8 * self._budget))
