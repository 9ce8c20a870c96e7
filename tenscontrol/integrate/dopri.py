"""The project's own adaptive Dormand-Prince 5(4) integrator with a correction hook.

Why not scipy's ``RK45``: the direct correction (theory.md section 10) changes the state after
every accepted step, so the first stage of the next step must be re-evaluated at the corrected
state; scipy keeps its FSAL derivative and dense-output stages in private attributes.

The driver :func:`dopri54` is generic: it integrates ``y' = fun(t, y)`` and, after each accepted
step, calls ``correct(t, y) -> (iterations, changed)`` which may modify y in place, then
``record(t0, y0, h, y_uncorrected, y, K)`` with the step's stages for dense output.
Error norm: the maximum over components of |err_i| / (atol + rtol max(|y0_i|, |y1_i|)), as in
MATLAB's ode45 (the reference code's integrator).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["C", "A", "B5", "B4", "E", "DENSE", "dopri54", "dense_output", "StepSizeError"]

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


class StepSizeError(RuntimeError):
    """The step size fell below what floating point can resolve at the current time."""


@njit(cache=True)
def _stage(y0, K, s, h, out):
    """out = y0 + h sum_j A[s, j] K[j] (the state of stage s)."""
    out[:] = y0
    for j in range(s):
        a = A[s, j]
        if a != 0.0:
            out += (h * a) * K[j]


@njit(cache=True)
def _error_norm(y0, y1, K, h, rtol, atol):
    err = 0.0
    for i in range(y0.shape[0]):
        e = 0.0
        for j in range(7):
            e += E[j] * K[j, i]
        sc = atol + rtol * max(abs(y0[i]), abs(y1[i]))
        err = max(err, abs(h * e) / sc)
    return err



def initial_step(fun, t0, y0, f0, rtol, atol, direction_span):
    """Initial step after Hairer, Norsett & Wanner (II.4), with the same max norm."""
    sc = atol + rtol * np.abs(y0)
    d0 = np.max(np.abs(y0) / sc)
    d1 = np.max(np.abs(f0) / sc)
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    h0 = min(h0, direction_span)
    y1 = y0 + h0 * f0
    f1 = fun(t0 + h0, y1)
    d2 = np.max(np.abs(f1 - f0) / sc) / h0
    if max(d1, d2) <= 1e-15:
        h1 = max(1e-6, h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** (1 / 5)
    return min(100 * h0, h1, direction_span)


def dopri54(fun, t0, y0, t_final, *, rtol, atol, correct=None, record=None, max_step=np.inf,
            first_step=None, stats=None, progress=None):
    """Integrate y' = fun(t, y) from t0 to t_final with Dormand-Prince 5(4).

    Parameters
    ----------
    fun : callable ``fun(t, y) -> ndarray``
        Right-hand side; must return a new array.
    t0, t_final : float
        Start and end time [s], t_final > t0.
    y0 : ndarray
        Initial state (copied).
    rtol, atol : float
        Relative and absolute tolerances of the max-norm error test.
    correct : callable ``correct(t, y) -> (iterations, changed)``, optional
        Called after each accepted step; may modify y in place.
    record : callable ``record(t0, y0, h, y_uncorrected, y, K)``, optional
        Called after each accepted (and corrected) step; K (7, len(y)) are the stages.
    max_step, first_step : float, optional
        Bounds on the step size [s].
    stats : dict, optional
        Counters ``accepted``, ``rejected``, ``rhs`` and ``correction_iterations`` are added.
    progress : callable ``progress(t)``, optional

    Returns
    -------
    t, y : float, ndarray
        The final time and state.

    Raises
    ------
    StepSizeError
        If the step size underflows.
    """
    st = stats if stats is not None else {}
    for key in ("accepted", "rejected", "rhs", "correction_iterations"):
        st.setdefault(key, 0)
    t = float(t0)
    y = np.array(y0, dtype=float)
    f = fun(t, y)
    st["rhs"] += 1
    span = t_final - t
    if first_step is None:
        h = initial_step(fun, t, y, f, rtol, atol, min(span, max_step))
        st["rhs"] += 1
    else:
        h = min(first_step, span, max_step)
    K = np.empty((7, y.size))
    ys = np.empty_like(y)
    rejected_last = False
    while t < t_final:
        h_min = 16 * np.spacing(max(abs(t), abs(t_final)))
        if h < h_min:
            raise StepSizeError(f"step size {h:.3g} s fell below the resolvable {h_min:.3g} s")
        last = t + 1.01 * h >= t_final
        if last:
            h = t_final - t
        K[0] = f
        for s in range(1, 7):
            _stage(y, K, s, h, ys)
            K[s] = fun(t + C[s] * h, ys)
        st["rhs"] += 6
        y_new = ys.copy()  # stage 7 is the 5th-order solution (FSAL)
        err = _error_norm(y, y_new, K, h, rtol, atol)
        if not np.isfinite(err):
            err = np.inf
        if err > 1.0:
            st["rejected"] += 1
            h *= max(0.2, 0.9 * err ** -0.2) if np.isfinite(err) else 0.2
            rejected_last = True
            continue
        t_new = t_final if last else t + h
        y_unc = y_new.copy()
        f_new = K[6]
        if correct is not None:
            iters, changed = correct(t_new, y_new)
            st["correction_iterations"] += iters
            if changed:
                f_new = fun(t_new, y_new)
                st["rhs"] += 1
        if record is not None:
            record(t, y, h, y_unc, y_new, K)
        st["accepted"] += 1
        grow = 5.0 if err == 0 else min(5.0, 0.9 * err ** -0.2)
        if rejected_last:
            grow = min(grow, 1.0)
        rejected_last = False
        t, y, f = t_new, y_new, f_new.copy()
        if progress is not None:
            progress(t)
        h = min(h * grow, max_step)
    return t, y


def dense_output(y0, y1_unc, y1, K, h, theta):
    """State at t0 + theta h inside an accepted step, theta in [0, 1], shape (len(theta), n).

    The 4th-order continuous extension of dopri5 interpolates between y0 and the uncorrected
    end point; the correction applied at the end (y1 - y1_unc) is blended in linearly, so the
    interpolant is continuous across steps and ends on the corrected state.
    """
    theta = np.asarray(theta, dtype=float)[:, None]
    dy = y1_unc - y0
    bspl = h * K[0] - dy
    r4 = dy - h * K[6] - bspl
    r5 = h * (DENSE @ K)
    th1 = 1.0 - theta
    y = y0 + theta * (dy + th1 * (bspl + theta * (r4 + th1 * r5)))
    return y + theta * (y1 - y1_unc)
