"""The compiled step loop of rigid-bar runs: Dormand-Prince step, correction and recording.

simulate()'s Python loop (:class:`tenscontrol.integrate.dopri.Dopri54` calling
:class:`~tenscontrol.simulation.models.RigidRun` and
:class:`~tenscontrol.simulation.recording.Recorder`) spends most of a small structure's run in
Python: on the T-bar the kernels need about a quarter of it. :func:`advance` runs the same
loop compiled: the stages and error test of :mod:`tenscontrol.integrate.dopri_kernel`, the
derivative and correction of
:mod:`tenscontrol.mechanics.rigid.kernels`, and the recording of every accepted step (or of the
dense output at t_eval, corrected as the steps are) into preallocated arrays. It takes the same
steps as the Python loop (the same arithmetic; the dense output sums in another order, to
rounding). :class:`RigidLoop` drives it in chunks
(:class:`tenscontrol.integrate.chunked.ChunkedDopri54`: pace check, errors, Ctrl-C between
chunks) and grows the step buffers by doubling.

When it applies (:func:`applies`): rigid bars with the Dormand-Prince integrator, loads None or
a constant array, and no controller or a plain :class:`tenscontrol.StateFeedback` (compiled in
:mod:`tenscontrol.simulation.rigid_feedback`); anything with Python per derivative evaluation
(a loads function, another controller) keeps the Python loop. :data:`ENABLED` = False forces the Python loop
everywhere (tests compare the two).
"""

from __future__ import annotations

import warnings

import numpy as np
from numba import njit

from tenscontrol.integrate.chunked import (ACCEPTED, CHUNK, CORRECTIONS, DONE, FULL, NONFINITE,
                                           NONFINITE_CORRECTED, REJECTED, REJECTED_LAST, RHS,
                                           STEP_SIZE, ChunkedDopri54)
from tenscontrol.integrate.dopri import C
from tenscontrol.integrate.dopri_kernel import (attempt, dense_state, error_norm, grown_step,
                                                rejected_step, stage_state, step_too_small)
from tenscontrol.mechanics.rigid import kernels as K
from tenscontrol.mechanics.kernels.arrays import copy_into
from tenscontrol.mechanics.kernels.cache import CACHE
from tenscontrol.simulation.actuation import ControllerError
from tenscontrol.simulation.models import RigidRun
from tenscontrol.simulation.recording import Recorder, covered
from tenscontrol.simulation.rigid_feedback import compiled_feedback, derivative, feedback_record

__all__ = ["ENABLED", "RigidLoop", "advance", "applies"]

#: Use the compiled loop where it applies; False forces simulate()'s Python loop (for tests
#: and benchmarks that compare the two).
ENABLED = True

# indices into the loop's own state (beyond ChunkedDopri54's): the clock's time reached by the
# output, time of the first correction failure and of a non-finite command, the counts'
# correction failures, output rows written and next t_eval entry (these three, in this order,
# are the Recorder's counts; the time reached its `reached`), and the fallbacks: derivatives
# whose accelerations took the dependent-rows least squares, correction iterations that took
# the dense SVD step
T_REACHED, FIRST_FAILURE, COMMAND_FAILURE = 2, 3, 4
FAILURES, N_OUT, NEXT_EVAL, DEPENDENT, SVD = 5, 6, 7, 8, 9
# the loop's own statuses: the feedback's command is not finite (clock[COMMAND_FAILURE]: when);
# a fallback is needed that this variant was compiled without (the state is as at the start
# of the attempt: run the variant with fallbacks from there)
NONFINITE_COMMAND, FALLBACK = 6, 7
# what _correct returns when the correction needs the SVD step it was compiled without
_NEEDS_SVD = -2


def applies(run, integrator: str, loads, loop) -> bool:
    """Whether simulate() runs `run` in the compiled loop: rigid bars, ``"dopri54"``, loads
    None or an array (not a function), no controller or a plain StateFeedback."""
    return (ENABLED and isinstance(run, RigidRun) and integrator == "dopri54"
            and compiled_feedback(loop) and not callable(loads))


@njit(cache=CACHE, inline="always")
def _correct(y, t, E0, correction, model, clock, counts, fallback):
    """The run's correction of y in place (as RigidRun._correct): returns its iterations, or
    -1 if the corrected state is not finite (_NEEDS_SVD if it needs the SVD step and
    `fallback` is None); counts a failure to converge and SVD steps."""
    it, ok, svd = K.correct(y, E0, correction, model, fallback)
    if svd < 0:
        return _NEEDS_SVD
    counts[SVD] += svd
    if not ok:
        if counts[FAILURES] == 0:
            clock[FIRST_FAILURE] = t
        counts[FAILURES] += 1
    for i in range(y.shape[0]):
        if not np.isfinite(y[i]):
            return -1
    return it


@njit(cache=CACHE, inline="always")
def _record(t0, h, y0, y1, y_unc, Kst, corrected, E0, correction, model, t_eval, T, Y, clock,
            counts, fallback):
    """Keep the step's end point, or its dense output at the t_eval entries it covers
    (corrected as the steps are), in the rows of the run's :class:`Recorder` as its Python
    call does; returns a status (chunked.DONE, ..., FALLBACK)."""
    t1 = t0 + h
    n = counts[N_OUT]
    for i in range(y1.shape[0]):
        if not np.isfinite(y1[i]):
            return NONFINITE
    if t_eval.shape[0] == 0:
        T[n] = t1
        copy_into(Y[n], y1)
        counts[N_OUT] = n + 1
    else:
        k0 = counts[NEXT_EVAL]
        k1 = covered(t_eval, k0, t1)
        for k in range(k0, k1):
            row = Y[n + k - k0]
            theta = min(max((t_eval[k] - t0) / h, 0.0), 1.0)
            dense_state(y0, y1, y_unc, Kst, h, theta, row)
            if corrected:
                it = _correct(row, t_eval[k], E0, correction, model, clock, counts, fallback)
                if it == _NEEDS_SVD:
                    return FALLBACK
                if it < 0:
                    return NONFINITE_CORRECTED
            T[n + k - k0] = t_eval[k]
        counts[N_OUT] = n + k1 - k0  # all of the step's outputs at once, or none
        counts[NEXT_EVAL] = k1
    clock[T_REACHED] = t1
    return DONE


@njit(cache=CACHE)
def advance(model, fext, fb, corrected, correction, E0, y, f, Kst, ys, y_unc, force, rtol, atol,
            t_final, max_step, limit, t_eval, T, Y, clock, counts, fallback):
    """Dormand-Prince steps of the rigid-bar run from (clock[T], y) until t_final or `limit`
    attempts, as Dopri54 with RigidRun's correction and Recorder; returns a status
    (:mod:`tenscontrol.integrate.chunked`: DONE, CHUNK, FULL, STEP_SIZE, ...; or
    NONFINITE_COMMAND).

    fb is the state feedback's record (None or no strings: open loop). With `fallback` None
    the rank-safe least squares and the SVD correction step are left out of the compiled code
    (numba prunes them, see :mod:`tenscontrol.mechanics.rigid.kernels`): an attempt that
    needs one returns FALLBACK with every array as at its start, and the caller goes on with
    ``fallback=True``, the variant compiled on first use. Writes in place: y, f (the
    derivative at y), clock [t, h, t reached by the output, times of the first correction
    failure and of a non-finite command], counts [accepted, rejected, rhs evaluations, correction
    iterations, rejected-last flag, correction failures, output rows, next t_eval entry,
    dependent-rows derivatives, SVD correction steps], and
    the output rows T (cap,), Y (cap, n). Kst (7, n), ys, y_unc (n,) and force (3n,) are
    work space.
    """
    t, h = clock[0], clock[1]
    f0, clock0, counts0 = np.empty_like(f), np.empty_like(clock), np.empty_like(counts)
    while t < t_final:
        if counts[ACCEPTED] + counts[REJECTED] >= limit:
            return CHUNK
        if t_eval.shape[0] == 0 and counts[N_OUT] >= T.shape[0]:
            return FULL
        if step_too_small(h, t, t_final):
            return STEP_SIZE
        if fallback is None:  # the attempt's start, to return to if it needs a fallback
            copy_into(f0, f)
            copy_into(clock0, clock)
            copy_into(counts0, counts)
        h, last = attempt(t, h, t_final)
        copy_into(Kst[0], f)
        for s in range(1, 7):
            stage_state(y, Kst, s, h, ys)
            code = derivative(ys, fext, fb, force, model, Kst[s], fallback)
            if code == K.FALLBACK_NEEDED:
                return _restart(f, f0, clock, clock0, counts, counts0)
            if code < 0:
                clock[COMMAND_FAILURE] = t + C[s] * h
                return NONFINITE_COMMAND
            counts[DEPENDENT] += code
        counts[RHS] += 6
        err = error_norm(y, ys, Kst, h, rtol, atol)
        if err > 1.0:
            counts[REJECTED] += 1
            counts[REJECTED_LAST] = 1
            h = rejected_step(h, err)
            clock[1] = h
            continue
        t_new = t_final if last else t + h
        copy_into(y_unc, ys)
        copy_into(f, Kst[6])
        if corrected:
            it = _correct(ys, t_new, E0, correction, model, clock, counts, fallback)
            if it == _NEEDS_SVD:
                return _restart(f, f0, clock, clock0, counts, counts0)
            if it < 0:
                return NONFINITE_CORRECTED
            counts[CORRECTIONS] += it
            if it > 0:
                code = derivative(ys, fext, fb, force, model, f, fallback)
                if code == K.FALLBACK_NEEDED:
                    return _restart(f, f0, clock, clock0, counts, counts0)
                if code < 0:
                    clock[COMMAND_FAILURE] = t_new
                    return NONFINITE_COMMAND
                counts[DEPENDENT] += code
                counts[RHS] += 1
        h_next = grown_step(h, err, counts[REJECTED_LAST] == 1, max_step)
        counts[REJECTED_LAST] = 0
        status = _record(t, h, y, ys, y_unc, Kst, corrected, E0, correction, model, t_eval, T,
                         Y, clock, counts, fallback)
        if status == FALLBACK:
            return _restart(f, f0, clock, clock0, counts, counts0)
        copy_into(y, ys)
        t, h = t_new, h_next
        clock[0], clock[1] = t, h
        if status != DONE:
            return status
        counts[ACCEPTED] += 1
    return DONE


@njit(cache=CACHE, inline="always")
def _restart(f, f0, clock, clock0, counts, counts0):
    """Put f, clock and counts back as at the attempt's start; returns FALLBACK (y and the
    recorded rows are only written once an attempt is through)."""
    copy_into(f, f0)
    copy_into(clock, clock0)
    copy_into(counts, counts0)
    return FALLBACK


class LoopRecorder(Recorder):
    """The compiled loop's :class:`Recorder`: its counts and time reached are views of the
    loop's own state, which also holds the loop's fallback counts."""

    def __init__(self, y0: np.ndarray, t_eval, clock, counts):
        super().__init__(y0, t_eval, counts=counts[FAILURES:NEXT_EVAL + 1],
                         reached=clock[T_REACHED:T_REACHED + 1])
        self.loop_counts = counts

    @property
    def fallbacks(self) -> dict:
        """The loop's fallback counts, named as the SimulationStats fields."""
        return {"dependent_constraint_solves": int(self.loop_counts[DEPENDENT]),
                "svd_correction_steps": int(self.loop_counts[SVD])}


class RigidLoop(ChunkedDopri54):
    """The rigid-bar run in the compiled loop, as the Python loop's solver and recorder.

    Parameters
    ----------
    run : RigidRun
        The started run (model, correction, E0).
    fext : ndarray, shape (3n,)
        The constant external load [N] (without the controller's forces).
    y0, t_final, t_eval, rtol, atol, max_step, max_steps
        As for :class:`tenscontrol.integrate.dopri.Dopri54` and the
        :class:`~tenscontrol.simulation.recording.Recorder`.
    """

    def __init__(self, run, fext, y0, t_final, t_eval, *, rtol, atol, max_step, max_steps):
        super().__init__(run.fun, 0.0, y0, t_final, rtol=rtol, atol=atol, max_step=max_step,
                         max_steps=max_steps)
        self.run, self.fext = run, np.ascontiguousarray(fext, dtype=float)
        self.corrected = run.correction != "none"
        # the loop's state, extended past ChunkedDopri54's (see the index constants above)
        self._clock, self._counts = np.zeros(5), np.zeros(10, dtype=np.int64)
        # open loop: None, which leaves the feedback out of the compiled loop
        self.feedback = None if run.loop is None else feedback_record(run.loop, self.fext.size)
        # None until an attempt needs a fallback: the loop compiled without them (see advance)
        self.fallback = None
        self.force = np.empty(self.fext.size)
        self.output = LoopRecorder(self.y, t_eval, self._clock, self._counts)
        self._warned = False

    def _start(self):
        super()._start()
        self._clock[:2], self._counts[:5] = self.clock, self.counts
        self.clock, self.counts = self._clock, self._counts
        self.y_unc = np.empty(self.n)

    def _advance(self, limit: int) -> int:
        run, out = self.run, self.output
        while True:
            status = advance(run.kernel, self.fext, self.feedback, self.corrected,
                             run.correction_record, run.E0, self.y, self.f, self.K, self.ys,
                             self.y_unc, self.force, self.rtol, self.atol, self.t_final,
                             self.max_step, limit, out.t_eval, out.T, out.Y, self.clock,
                             self.counts, self.fallback)
            if status == FALLBACK:  # the same attempt again, in the variant with fallbacks
                self.fallback = True
                continue
            if self.counts[FAILURES] and not self._warned:
                self._warned = True
                warnings.warn(f"correction did not converge in {run.max_iterations} iterations "
                              f"at t = {self.clock[FIRST_FAILURE]:.6g} s; tighten rtol/atol or "
                              "raise max_correction_iterations", RuntimeWarning, stacklevel=4)
            if status == NONFINITE_COMMAND:
                raise ControllerError("controller.force_densities returned non-finite values "
                                      f"at t = {self.clock[COMMAND_FAILURE]:g} s")
            if status != FULL:
                return status
            out.grow()

