"""The compiled step loop of compressible-bar runs: Radau IIA steps and recording.

simulate()'s Python loop (:class:`tenscontrol.integrate.radau.Radau5` calling
:class:`~tenscontrol.simulation.models.CompressibleRun` and
:class:`~tenscontrol.simulation.recording.Recorder`) spends most of a small structure's run in
Python: on the T-bar (10 s, 59k steps) the kernels need about a tenth of it. :func:`advance`
runs the same loop compiled: the derivative and Jacobian of
:mod:`tenscontrol.mechanics.compressible.kernels`, the Newton iterations, error estimate and
step-size control of :mod:`tenscontrol.integrate.radau_kernel` (the pieces Radau5 calls, in
the same order), and the recording of every accepted step (or of the collocation polynomial
at t_eval) into preallocated arrays. It takes the same steps as the Python loop and gives the
same states, bit for bit. :class:`CompressibleLoop` drives it in chunks
(:class:`tenscontrol.integrate.chunked.ChunkedRadau5`: pace check, errors, Ctrl-C between
chunks) and grows the step buffers by doubling.

When it applies (:func:`applies`): compressible bars with ``"radau5"``, the dense linear
algebra, no controller, and loads None, a constant array or piecewise constant in time
(:class:`tenscontrol.model.loads.PiecewiseConstantLoads`, as :func:`tenscontrol.doublet`
returns); anything else keeps the Python loop. :data:`ENABLED` = False forces the Python loop
everywhere (tests compare the two).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tenscontrol.integrate.chunked import (
    ACCEPTED, AFTER_ACCEPT, CHUNK, DONE, FAC1, FAC2I, FAC2R, FACCON, FAIL_TIME, FIRST, FULL, H,
    H_LU, H_OLD, JAC_CURRENT, JACOBIANS, LAST, LU, N_OUT, NEED_JAC, NEWTON_FAILURES,
    NEWTON_ITERATIONS, NEXT_EVAL, NONFINITE, NONFINITE_JACOBIAN, QUOT, REC_FAILURES, REJECTED,
    RETRY, RHS, SINGULAR, SLOW, STEP_SIZE, T, T_REACHED, F_PENDING, ChunkedRadau5)
from tenscontrol.integrate.radau_kernel import (
    ALPHA, BETA, C, GAMMA, GOING, OK, THETA_JAC, dense_state, error_estimate, factor, finish,
    newton_iteration, newton_start, newton_test, next_step, quotient)
from tenscontrol.mechanics.compressible import kernels as CK
from tenscontrol.mechanics.kernels.arrays import copy_into, copy_matrix
from tenscontrol.mechanics.kernels.cache import CACHE
from tenscontrol.model.loads import PiecewiseConstantLoads
from tenscontrol.simulation.models import CompressibleRun
from tenscontrol.simulation.recording import Recorder, covered

__all__ = ["CompressibleLoop", "ENABLED", "advance", "applies"]

#: Use the compiled loop where it applies; False forces simulate()'s Python loop (for tests
#: and benchmarks that compare the two).
ENABLED = True
_C1, _C2 = float(C[0]), float(C[1])
#: What advance returns when an attempt meets a singular mass matrix in the variant compiled
#: without its pseudo-inverse (``fallback`` None): every array is as at the attempt's start,
#: and the caller runs the same attempt again with ``fallback=True``.
FALLBACK = 7
_EPS = float(np.finfo(float).eps)


def applies(run, integrator: str, loads, loop) -> bool:
    """Whether simulate() runs `run` in the compiled loop: compressible bars, ``"radau5"``,
    the dense path, no controller, loads None, an array or PiecewiseConstantLoads."""
    return (ENABLED and isinstance(run, CompressibleRun) and integrator == "radau5"
            and run.pattern is None and loop is None
            and (not callable(loads) or isinstance(loads, PiecewiseConstantLoads)))


@njit(cache=CACHE, inline="always")
def _load(times, values, t):
    """The load at t [N]: values[k] with k the number of switching times <= t."""
    k = 0
    while k < times.shape[0] and times[k] <= t:
        k += 1
    return values[k]


@njit(cache=CACHE, inline="always")
def _factors(t, h, y, model, times, values, work, clock, counts, fallback):
    """Radau5.stages' start: J and the LU factors when due; returns OK, NONFINITE_JACOBIAN or
    FALLBACK (before anything changed)."""
    E1, E2, piv1, piv2, J = work[9:14]
    if counts[NEED_JAC] != 0:
        if CK.jacobian(y, _load(times, values, t), model, J, fallback) == CK.FALLBACK_NEEDED:
            return FALLBACK
        counts[JACOBIANS] += 1
        if not np.all(np.isfinite(J)):
            clock[FAIL_TIME] = t
            return NONFINITE_JACOBIAN
        counts[NEED_JAC], counts[JAC_CURRENT], clock[H_LU] = 0, 1, 0.0
    if h != clock[H_LU]:
        fac1, fac2 = GAMMA / h, complex(ALPHA / h, BETA / h)
        clock[FAC1], clock[FAC2R], clock[FAC2I] = fac1, fac2.real, fac2.imag
        counts[LU] += 1
        factor(J, fac1, fac2, E1, E2, piv1, piv2)
        clock[H_LU] = h
    return OK


@njit(cache=CACHE, inline="always")
def _solve(t, h, y, model, times, values, settings, work, clock, counts, fallback):
    """Radau5.newton and Radau5.error: the simplified Newton iterations from the started
    stages, then the scaled norm of the filtered error estimate (filtered twice on a first
    step or a retry when the first estimate fails); returns (status, step factor,
    iterations, error), status FALLBACK (clock and counts put back) if a derivative needs
    the pseudo-inverse that this variant was compiled without.

    Every derivative is evaluated at one call site (the stages, the f at the step's start
    that _successor left pending, the second filtering's), so that the derivative's code is
    inlined into the loop once.
    """
    rtol, fnewt, nit = settings[0], settings[1], int(settings[2])
    f, Q, Z, W, Ys, F, scale, r1, r2, E1, E2, piv1, piv2, J, atol, err = work[:16]
    y_work, f_work, rates, gus, stage_times = work[16:]
    fac1, fac2 = clock[FAC1], complex(clock[FAC2R], clock[FAC2I])
    rates[0], rates[1], rates[2] = 1.0, 1.0, THETA_JAC
    rates[3] = max(clock[FACCON], _EPS) ** 0.8
    stage_times[0], stage_times[1], stage_times[2] = t + _C1 * h, t + _C2 * h, t + h
    stage_times[3] = stage_times[4] = t
    # rows to evaluate: 0-2 the stages, 3 f(t, y), 4 f(t, y + err)
    lo, hi = 0, (4 if counts[F_PENDING] != 0 else 3)
    newt, status, fac, e = 0, GOING, 1.0, 0.0
    # what the attempt changes before its last derivative, put back for a FALLBACK
    rhs0, pending0, slow0, faccon0 = counts[RHS], counts[F_PENDING], counts[SLOW], clock[FACCON]
    while True:
        for k in range(lo, hi):
            point = Ys[k] if k < 3 else (y if k == 3 else y_work)
            out = F[k] if k < 3 else (f if k == 3 else f_work)
            code = CK.rhs(point, _load(times, values, stage_times[k]), model, out, fallback)
            if code == CK.FALLBACK_NEEDED:
                counts[RHS], counts[F_PENDING], counts[SLOW] = rhs0, pending0, slow0
                clock[FACCON] = faccon0
                return FALLBACK, 1.0, 0, 0.0
            if code != 0:
                counts[SINGULAR] += 1
        counts[F_PENDING] = 0
        if lo == 4:  # the second filtering
            e = error_estimate(f_work, Z, y, h, atol, rtol, E1, piv1, err)
            break
        newt += 1
        counts[RHS] += 3
        dyno = newton_iteration(F, y, scale, fac1, fac2, E1, piv1, E2, piv2, Z, W, Ys, r1, r2)
        status, fac = newton_test(newt, nit, dyno, rates, fnewt)
        if status == GOING:
            lo, hi = 0, 3
            continue
        if status != OK:
            break
        clock[FACCON] = rates[3]
        counts[SLOW] = 1 if (newt > 2 and rates[2] > THETA_JAC) else 0
        e = error_estimate(f, Z, y, h, atol, rtol, E1, piv1, err)
        if not (e >= 1.0 and (counts[FIRST] != 0 or counts[RETRY] != 0)):
            break
        for i in range(y.shape[0]):
            y_work[i] = y[i] + err[i]
        counts[RHS] += 1
        lo, hi = 4, 5
    counts[NEWTON_ITERATIONS] += newt
    return status, fac, newt, max(e, 1e-10)


@njit(cache=CACHE, inline="always")
def _record(t0, h, y0, y1, Q, t_eval, T_out, Y_out, clock, counts):
    """Keep the step's end point, or its polynomial at the t_eval entries it covers, in the
    rows of the run's Recorder as its Python call does."""
    t1 = t0 + h
    n = counts[N_OUT]
    if t_eval.shape[0] == 0:
        T_out[n] = t1
        copy_into(Y_out[n], y1)
        counts[N_OUT] = n + 1
    else:
        k0 = counts[NEXT_EVAL]
        k1 = covered(t_eval, k0, t1)
        for k in range(k0, k1):
            theta = min(max((t_eval[k] - t0) / h, 0.0), 1.0)
            dense_state(y0, Q, theta, Y_out[n + k - k0])
            T_out[n + k - k0] = t_eval[k]
        counts[N_OUT] = n + k1 - k0  # all of the step's outputs at once, or none
        counts[NEXT_EVAL] = k1
    clock[T_REACHED] = t1


@njit(cache=CACHE, inline="always")
def _successor(t, y, model, times, values, settings, work, clock, counts):
    """After an accepted step: the next h, and f at the new point due (Radau5._step's
    start)."""
    t_final, max_step, keep_low, keep_high = settings[3], settings[4], settings[5], settings[6]
    counts[F_PENDING] = 1   # f at (t, y): evaluated with the first stages (see _solve)
    counts[RHS] += 1
    slow = counts[SLOW] != 0
    counts[NEED_JAC], counts[JAC_CURRENT] = counts[SLOW], 0
    h, last = next_step(t, clock[H], clock[QUOT], counts[RETRY] != 0, slow, t_final, max_step,
                        keep_low, keep_high)
    clock[H] = h
    counts[LAST] = 1 if last else 0
    counts[FIRST], counts[RETRY], counts[AFTER_ACCEPT] = 0, 0, 0


@njit(cache=CACHE)
def advance(model, times, values, settings, work, y, limit, t_eval, T_out, Y_out, clock,
            counts, fallback):
    """Radau IIA steps of the compressible-bar run from (clock[T], y) until t_final or
    `limit` attempts, as Radau5 with CompressibleRun and Recorder; returns a status
    (:mod:`tenscontrol.integrate.chunked`: DONE, CHUNK, FULL, STEP_SIZE, NONFINITE,
    NONFINITE_JACOBIAN, FALLBACK).

    The loads are values[k] (n_loads, 3n) [N] after the k-th of the switching times `times`
    [s]; `settings` = (rtol, newton_tol, max_newton_iterations, t_final, max_step, keep-h
    window low, high); `work` is the tuple of CompressibleLoop.work. Writes in place: y, the
    work arrays, clock and counts (the indices of chunked), the output rows T_out (cap,),
    Y_out (cap, n). With `fallback` None the variant leaves out the mass matrix's
    pseudo-inverse (compiled on first use): an attempt that needs it returns FALLBACK as at
    its start.
    """
    nit = int(settings[2])
    t_final = settings[3]
    Q, Z = work[1], work[2]
    t = clock[T]
    while t < t_final:
        if t_eval.shape[0] == 0 and counts[N_OUT] >= T_out.shape[0]:
            return FULL
        if counts[AFTER_ACCEPT] != 0:
            _successor(t, y, model, times, values, settings, work, clock, counts)
        while True:
            h = clock[H]
            if counts[ACCEPTED] + counts[REJECTED] + counts[NEWTON_FAILURES] >= limit:
                return CHUNK
            if not (h >= 16 * np.spacing(max(abs(t), abs(t_final))) or counts[LAST] != 0):
                return STEP_SIZE
            status = _factors(t, h, y, model, times, values, work, clock, counts, fallback)
            if status != OK:
                return status
            ratio = h / clock[H_OLD] if clock[H_OLD] != 0.0 else 0.0
            newton_start(y, Q, ratio, work[14], settings[0], Z, work[3], work[4], work[6])
            status, fac, newt, err = _solve(t, h, y, model, times, values, settings, work,
                                            clock, counts, fallback)
            if status == FALLBACK:
                return FALLBACK
            if status == OK:
                quot = quotient(h, err, newt, nit, work[19])
                if err < 1.0:
                    break
                counts[REJECTED] += 1
                clock[H] = 0.1 * h if counts[FIRST] != 0 else h / quot
            else:
                counts[NEWTON_FAILURES] += 1
                clock[H] = h * fac
            # retry smaller, with a fresh J if it was old
            counts[RETRY], counts[LAST], counts[NEED_JAC] = 1, 0, 1 - counts[JAC_CURRENT]
        y_new, Q_new, finite = finish(y, Z)
        if not finite:
            clock[FAIL_TIME] = t + h
            return NONFINITE
        _record(t, h, y, y_new, Q_new, t_eval, T_out, Y_out, clock, counts)
        t = t_final if counts[LAST] != 0 else t + h
        copy_into(y, y_new)  # loops: a[:] = b compiles numba's shape-error message
        copy_matrix(Q, Q_new)
        clock[T], clock[H_OLD], clock[QUOT] = t, h, quot
        counts[AFTER_ACCEPT] = 1
        counts[ACCEPTED] += 1
    return DONE


class CompressibleLoop(ChunkedRadau5):
    """The compressible-bar run in the compiled loop, as the Python loop's solver and recorder.

    Parameters
    ----------
    run : CompressibleRun
        The started run (dense path, no controller).
    loads : None, ndarray (3n,) or PiecewiseConstantLoads
        The external load [N] (flat when constant).
    y0, t_final, t_eval, rtol, atol, max_step, max_steps
        As for :class:`tenscontrol.integrate.radau.Radau5` and the
        :class:`~tenscontrol.simulation.recording.Recorder`.
    """

    def __init__(self, run, loads, y0, t_final, t_eval, *, rtol, atol, max_step, max_steps):
        super().__init__(run.fun, 0.0, y0, t_final, rtol=rtol, atol=atol, max_step=max_step,
                         jac=run.jac, max_steps=max_steps)
        self.run = run
        nq = 3 * run.structure.n_nodes
        if isinstance(loads, PiecewiseConstantLoads):
            self.times = np.asarray(loads.times, dtype=float)
            self.values = np.asarray(loads.values, dtype=float).reshape(-1, nq)
        else:
            self.times = np.zeros(0)
            self.values = np.asarray(np.zeros(nq) if loads is None else loads,
                                     dtype=float).reshape(1, nq)
        # None until an attempt meets a singular mass matrix: the loop compiled without its
        # pseudo-inverse (see advance)
        self.fallback = None
        self.settings = np.array([self.rtol, self.fnewt, self.nit, self.t_final, self.max_step,
                                  *self.keep])
        # the Recorder's counts and time reached are views of the loop's own state
        self.output = Recorder(self.y, t_eval, counts=self.counts[REC_FAILURES:NEXT_EVAL + 1],
                               reached=self.clock[T_REACHED:T_REACHED + 1])

    def _start(self):
        super()._start()  # the work arrays of ChunkedRadau5, then the loop's tuple of them
        # the loop counts on from the singular solves of the first step's Python derivatives
        self.counts[SINGULAR] = self.run.counts["singular_mass_solves"]
        self.work = (self.f, self.Q, self.Z, self.W, self.Y, self.F, self.scale, self.r1,
                     self.r2, self.E1, self.E2, self.piv1, self.piv2, self.J, self.atol,
                     self.err, self.y_work, self.f_work, self.rates, self.gus, np.empty(5))

    def _advance(self, limit: int) -> int:
        out = self.output
        while True:
            status = advance(self.run.kernel, self.times, self.values, self.settings,
                             self.work, self.y, limit, out.t_eval, out.T, out.Y, self.clock,
                             self.counts, self.fallback)
            if status == FALLBACK:  # the same attempt again, in the variant with fallbacks
                self.fallback = True
                continue
            singular = int(self.counts[SINGULAR])
            if singular:
                self.run.counts["singular_mass_solves"] = singular
            if status != FULL:
                return status
            out.grow()
