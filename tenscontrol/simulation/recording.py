"""The output recorder of simulate()'s step loops: output times and states in preallocated rows.

One :class:`Recorder` serves both step loops. The Python loop (any integrator, either bar model)
calls it once per accepted step; the compiled loop of :mod:`tenscontrol.simulation.rigid_loop`
writes into the same arrays and counters from numba (its ``_record``), with the same rule for
which output times a step fills (:func:`covered`). simulate() reads either through
:meth:`Recorder.arrays` and :attr:`Recorder.t_reached`.

Every accepted step is kept, or, with ``t_eval``, the step's dense output at the entries of
t_eval it covers, put back on the constraints by the run's correction (``project``) so that bar
lengths and energy hold at requested output times as at step points; the integrator's own state
is not touched. A step's rows are written first and counted last, all at once, so an interrupt
at any moment leaves as many times as states.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tenscontrol.mechanics.kernels.cache import CACHE

__all__ = ["FIRST_ROWS", "Recorder", "covered"]

#: Rows of the step output at the start; doubled whenever they are full.
FIRST_ROWS = 256
# indices into Recorder.counts: correction failures counted by a compiled loop, rows written,
# next t_eval entry to fill
FAILURES, WRITTEN, NEXT = 0, 1, 2


@njit(cache=CACHE)
def covered(t_eval, k0, t1):
    """The end k1 of the t_eval entries k0 .. k1-1 a step ending at t1 [s] fills (up to a
    relative 1e-15, so that an output at t_final is not lost to the rounding of t)."""
    k1 = k0
    while k1 < t_eval.shape[0] and t_eval[k1] <= t1 * (1 + 1e-15):
        k1 += 1
    return k1


class Recorder:
    """The output times (rows,) and states (rows, n) of a run, and how many rows are written.

    Parameters
    ----------
    y0 : ndarray, shape (n,)
        The initial state, kept as the first row unless t_eval starts after 0.
    t_eval : ndarray or None
        Output times [s] (increasing, within the run); None keeps every accepted step.
    project : callable ``project(t, y)``, optional
        Puts a dense-output state back on the constraints, in place (the run's correction).
    counts : ndarray of int64, shape (3,), optional
        [correction failures, rows written, next t_eval entry], written in place; a compiled
        loop passes a view of its own counters, the Python loop leaves the default (new).
    reached : ndarray, shape (1,), optional
        The end of the last recorded step [s], written in place (a view, as `counts`).
    """

    def __init__(self, y0: np.ndarray, t_eval, project=None, counts=None, reached=None):
        self.t_eval = np.zeros(0) if t_eval is None else np.ascontiguousarray(t_eval, float)
        self.project = project
        self.counts = np.zeros(3, dtype=np.int64) if counts is None else counts
        self.reached = np.zeros(1) if reached is None else reached
        keep_initial = t_eval is None or t_eval[0] == 0.0
        rows = FIRST_ROWS if t_eval is None else len(t_eval)
        self.T, self.Y = np.empty(rows), np.empty((rows, y0.size))
        if keep_initial:
            self.T[0], self.Y[0] = 0.0, y0
        self.counts[:] = 0, int(keep_initial), int(keep_initial)
        self.reached[0] = 0.0

    @property
    def t_reached(self) -> float:
        """The end of the last recorded step [s]."""
        return float(self.reached[0])

    @property
    def correction_failures(self) -> int:
        """Corrections that did not converge, as counted by a compiled loop (the Python
        loop's run counts its own)."""
        return int(self.counts[FAILURES])

    @property
    def fallbacks(self) -> dict:
        """Fallback counts kept by a compiled loop, named as the SimulationStats fields (none
        here: the Python loop's run counts its own)."""
        return {}

    def __call__(self, step) -> None:
        """The integrator's record callback: keep the step's end point or its t_eval states."""
        y1 = step.y1
        if not np.all(np.isfinite(y1)):
            raise FloatingPointError("the state became non-finite")
        t0, h = step.t0, step.h
        t1 = t0 + h
        n = int(self.counts[WRITTEN])
        if self.t_eval.size == 0:
            if n == len(self.T):
                self.grow()
            self.T[n], self.Y[n] = t1, y1
            self.counts[WRITTEN] = n + 1
        else:
            k0 = int(self.counts[NEXT])
            k1 = covered(self.t_eval, k0, t1)
            if k1 > k0:
                times = self.t_eval[k0:k1]
                rows = self.Y[n:n + k1 - k0]
                rows[:] = step.dense(np.clip((times - t0) / h, 0.0, 1.0))
                if self.project is not None:
                    for t, y in zip(times, rows):
                        self.project(t, y)
                self.T[n:n + k1 - k0] = times
                self.counts[WRITTEN:NEXT + 1] = n + k1 - k0, k1  # the step's rows at once
        self.reached[0] = t1

    def grow(self) -> None:
        """Double the rows (step output found them full)."""
        n = len(self.T)
        T, Y = np.empty(2 * n), np.empty((2 * n, self.Y.shape[1]))
        T[:n], Y[:n] = self.T, self.Y
        self.T, self.Y = T, Y  # one assignment: an interrupt leaves the old or the new pair

    def arrays(self, n_state: int) -> tuple[np.ndarray, np.ndarray]:
        """Output times (nt,) and states (nt, n_state)."""
        T, Y = self.T, self.Y  # one snapshot: times and states of the same rows
        n = int(self.counts[WRITTEN])
        return T[:n].copy(), np.ascontiguousarray(Y[:n].reshape(n, n_state))
