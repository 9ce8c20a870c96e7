"""The adaptive Dormand-Prince 5(4) integrator, with a correction hook.

Why not scipy's ``RK45``: the direct correction (docs/theory.md, "The direct correction with the
energy row") changes the state after every accepted step, so the first stage of the next step must
be re-evaluated at the corrected state; scipy keeps its FSAL derivative and dense-output stages in
private attributes.

:class:`Dopri54` writes one step of :class:`tenscontrol.integrate.base.Integrator`: the seven
stages, the max-norm error test of the base, and, after an accepted step, the correction hook
``correct(t, y) -> (iterations, changed)``, after which f is re-evaluated at the corrected state.
Its :class:`DopriStep` carries the stages for the dense output.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tenscontrol.integrate.base import Integrator, Step

__all__ = ["C", "A", "B5", "B4", "E", "DENSE", "MAX_FACTOR", "MIN_FACTOR", "SAFETY", "Dopri54",
           "DopriStep", "attempt", "error_norm", "grown_step", "rejected_step"]

# Butcher tableau of Dormand & Prince (1980), "A family of embedded Runge-Kutta formulae".
C = np.array([0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0])
A = np.array([
    [0, 0, 0, 0, 0, 0, 0],
    [1 / 5, 0, 0, 0, 0, 0, 0],
    [3 / 40, 9 / 40, 0, 0, 0, 0, 0],
    [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
    [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0],
])
B5 = A[6].copy()  # 5th-order weights (FSAL: the 7th stage is f at the new point)
B4 = np.array([5179 / 57600, 0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40])
E = B5 - B4
# Dense output coefficients of Hairer, Norsett & Wanner, "Solving ODEs I", dopri5 (contd5).
DENSE = np.array([-12715105075 / 11282082432, 0.0, 87487479700 / 32700410799,
                  -10690763975 / 1880347072, 701980252875 / 199316789632,
                  -1453857185 / 822651844, 69997945 / 29380423])


@njit(cache=True)
def _stage(y0, K, s, h, out):
    """out = y0 + h sum_j A[s, j] K[j] (the state of stage s)."""
    out[:] = y0
    for j in range(s):
        a = A[s, j]
        if a != 0.0:
            out += (h * a) * K[j]


# The step control (the step to attempt, the error test, the factors after a rejection and an
# acceptance), one definition for the Python loop (Dopri54._step) and the compiled loops
# (tenscontrol.integrate.dopri_kernel re-exports it), so that both take the same steps.
SAFETY, MIN_FACTOR, MAX_FACTOR = 0.9, 0.2, 5.0


@njit(cache=True)
def error_norm(y0, y1, K, h, rtol, atol):
    """max_i |h (E . K)_i| / (atol_i + rtol max(|y0_i|, |y1_i|)); inf if any stage, the
    solution or the error is not finite.

    The max of a NaN and a number is the number, so a NaN stage would pass a plain max: the
    explicit test makes the step fail the error test (err > 1) and be retried smaller.
    """
    err = 0.0
    for i in range(y0.shape[0]):
        e = 0.0
        for j in range(7):
            e += E[j] * K[j, i]
        sc = atol[i] + rtol * max(abs(y0[i]), abs(y1[i]))
        r = abs(h * e) / sc
        if not (np.isfinite(r) and np.isfinite(y1[i])):
            return np.inf
        err = max(err, r)
    return err


@njit(cache=True)
def attempt(t, h, t_final):
    """(h, last): the step [s] to attempt from t, stretched to end on t_final when h would
    stop within 1 % of it, and whether it is the last."""
    last = t + 1.01 * h >= t_final
    return (t_final - t if last else h), last


@njit(cache=True)
def rejected_step(h, err):
    """The step [s] to retry with after a step of size h failed the error test with `err`:
    factor SAFETY err^(-1/5), at least MIN_FACTOR (MIN_FACTOR if err is not finite)."""
    return h * (max(MIN_FACTOR, SAFETY * err ** -0.2) if np.isfinite(err) else MIN_FACTOR)


@njit(cache=True)
def grown_step(h, err, rejected_last, max_step):
    """The next step [s] after an accepted step h with error `err` <= 1: factor
    SAFETY err^(-1/5), at most MAX_FACTOR, not above 1 right after a rejection, at most
    max_step."""
    grow = MAX_FACTOR if err == 0 else min(MAX_FACTOR, SAFETY * err ** -0.2)
    if rejected_last:
        grow = min(grow, 1.0)
    return min(h * grow, max_step)


class DopriStep(Step):
    """An accepted Dormand-Prince step: :class:`tenscontrol.integrate.base.Step` plus its stages.

    Attributes
    ----------
    y1_uncorrected : ndarray, shape (n,)
        The 5th-order solution at t0 + h before the correction (equal to y1 without one).
    K : ndarray, shape (7, n)
        The stage derivatives; K[6] is f(t0 + h, y1_uncorrected).
    """

    __slots__ = ("y1_uncorrected", "K")

    def __init__(self, t0, h, y0, y1, y1_uncorrected, K):
        super().__init__(t0, h, y0, y1)
        self.y1_uncorrected, self.K = y1_uncorrected, K

    def dense(self, theta) -> np.ndarray:
        """States at t0 + theta h, theta in [0, 1], shape (len(theta), n).

        The 4th-order continuous extension of dopri5 interpolates between y0 and the uncorrected
        end point; the correction applied at the end (y1 - y1_uncorrected) is blended in
        linearly, so the interpolant is continuous across steps and ends on the corrected state.
        """
        y0, y1_unc, K, h = self.y0, self.y1_uncorrected, self.K, self.h
        theta = np.asarray(theta, dtype=float)[:, None]
        dy = y1_unc - y0
        bspl = h * K[0] - dy
        r4 = dy - h * K[6] - bspl
        r5 = h * (DENSE @ K)
        th1 = 1.0 - theta
        y = y0 + theta * (dy + th1 * (bspl + theta * (r4 + th1 * r5)))
        return y + theta * (self.y1 - y1_unc)


class Dopri54(Integrator):
    """Dormand-Prince 5(4): explicit, adaptive, with an optional correction after each step.

    Takes the arguments of :class:`tenscontrol.integrate.base.Integrator` (no `jac`).
    `correct(t, y) -> (iterations, changed)`, if given, is called after each accepted step and
    may modify y in place; when it reports a change, f is evaluated again at the corrected
    state (one more rhs evaluation) for the next step's first stage. Step-size control: the
    error test of the base with the 5th-order solution, factor 0.9 err^(-1/5) within
    [0.2, 5], no growth right after a rejection; a step whose stages, solution or error are
    not finite fails the error test and is retried 5 times smaller; a step within 1% of
    t_final is stretched to it.
    """

    name = "dopri54"
    supports_correction = True

    def _start(self):
        self.f = self.fun(self.t, self.y)
        self._rhs += 1
        if not np.all(np.isfinite(self.f)):  # no smaller step can help (as Radau5)
            raise FloatingPointError(f"fun(t0, y0) is not finite at t0 = {self.t}")
        self.h = self._initial_step(self.f)
        self.K = np.empty((7, self.n))
        self.ys = np.empty(self.n)
        self.rejected_last = False

    def _attempt(self, h):
        """The stages of a step of size h from (t, y) into self.K; the 5th-order solution."""
        fun, K, ys, y, t = self.fun, self.K, self.ys, self.y, self.t
        K[0] = self.f
        for s in range(1, 7):
            _stage(y, K, s, h, ys)
            K[s] = fun(t + C[s] * h, ys)
        self._rhs += 6
        return ys.copy()  # stage 7 is the 5th-order solution (FSAL)

    def _step(self):
        t, y, t_final = self.t, self.y, self.t_final
        while True:
            h = self.h
            self._check_step(h)
            h, last = attempt(t, h, t_final)
            y_new = self._attempt(h)
            err = error_norm(y, y_new, self.K, h, self.rtol, self.atol)
            if err <= 1.0:
                break
            self._rejected += 1
            self.h = rejected_step(h, err)
            self.rejected_last = True
        t_new = t_final if last else t + h
        K = self.K
        y_unc = y_new.copy()
        f_new = K[6]
        if self.correct is not None:
            iterations, changed = self.correct(t_new, y_new)
            self._correction_iterations += iterations
            if changed:
                f_new = self.fun(t_new, y_new)
                self._rhs += 1
        h_next = grown_step(h, err, self.rejected_last, self.max_step)
        self.rejected_last = False
        self.K = np.empty_like(K)  # the step keeps its stages for its dense output
        self.t, self.y, self.f = t_new, y_new, f_new.copy()
        self.h = h_next
        return DopriStep(t, h, y, y_new, y_unc, K)
