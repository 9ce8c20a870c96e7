"""Compiled pieces of the Radau IIA step, shared by :class:`tenscontrol.integrate.radau.Radau5`
and step loops compiled with numba.

:class:`~tenscontrol.integrate.radau.Radau5` runs its step loop in Python and calls these for
the per-step arithmetic: the Newton matrices and their LU factors, the simplified Newton
iteration, its convergence test, the error estimate, the step-size quotient, the next step.
A caller whose right-hand side and Jacobian are numba functions writes the whole loop as one
compiled function from the same pieces (:mod:`tenscontrol.simulation.compressible_loop`), so
that both loops take the same steps with the same arithmetic. As for Dormand-Prince
(:mod:`tenscontrol.integrate.dopri_kernel`), the loop lives next to its right-hand side:
numba does not cache a function that takes another compiled function as an argument.

The LU factors come from LAPACK's ``getrf`` (through the entry point numba's own
``np.linalg`` uses, the LAPACK of scipy.linalg.cython_lapack), the routine behind
:func:`scipy.linalg.lu_factor`, so the factors are those scipy gives, without its per-call
overhead (about 20 us, more than a T-bar's step).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.np.linalg import F_INT_nbtype, F_INT_nptype, ensure_lapack

__all__ = ["A", "ALPHA", "B", "BETA", "C", "DENSE", "DIVERGED", "E", "GAMMA", "GOING", "OK",
           "PIVOT_DTYPE", "SLOW", "T", "THETA_JAC", "TI", "dense_state", "error_estimate",
           "factor", "finish", "lu_solve", "newton_iteration", "newton_start", "newton_test",
           "next_step", "quotient", "reaches"]

_S6 = math.sqrt(6.0)
# Radau IIA, s = 3 (HW section IV.5): nodes, coefficient matrix, weights b = last row of A.
C = np.array([(4 - _S6) / 10, (4 + _S6) / 10, 1.0])
A = np.array([
    [(88 - 7 * _S6) / 360, (296 - 169 * _S6) / 1800, (-2 + 3 * _S6) / 225],
    [(296 + 169 * _S6) / 1800, (88 + 7 * _S6) / 360, (-2 - 3 * _S6) / 225],
    [(16 - _S6) / 36, (16 + _S6) / 36, 1 / 9],
])
B = A[2].copy()
# Embedded estimate (HW IV.8): err = (GAMMA/h I - J)^-1 (f(t0, y0) + (E . Z) / h).
E = np.array([-13 - 7 * _S6, -13 + 7 * _S6, -1.0]) / 3
# Eigenvalues of inv(A): one real GAMMA and the pair ALPHA +- i BETA.
GAMMA = 3 + 3 ** (2 / 3) - 3 ** (1 / 3)
ALPHA = 3 + 0.5 * (3 ** (1 / 3) - 3 ** (2 / 3))
BETA = 0.5 * (3 ** (5 / 6) + 3 ** (7 / 6))


def _transformation():
    """T with inv(T) inv(A) T = [[GAMMA, 0, 0], [0, ALPHA, -BETA], [0, BETA, ALPHA]]."""
    lam, vec = np.linalg.eig(np.linalg.inv(A))
    real = vec[:, np.argmin(np.abs(lam.imag))].real
    # the eigenvector of ALPHA - i BETA gives the block [[ALPHA, -BETA], [BETA, ALPHA]]
    cplx = vec[:, np.argmin(lam.imag)]
    real, cplx = real / real[2], cplx / cplx[2]  # last stage component 1: a fixed normalisation
    return np.column_stack([real, cplx.real, cplx.imag])


T = _transformation()
TI = np.linalg.inv(T)
# Collocation polynomial: u(t0 + theta h) = y0 + sum_p theta^(p+1) Q[p], Q = DENSE @ Z, through
# (0, y0) and (C[i], y0 + Z[i]).
DENSE = np.linalg.inv(C[:, None] ** np.arange(1, 4))

#: Newton contraction rate above which J is refreshed.
THETA_JAC = 1e-3
#: The integer type of LAPACK's pivots (the `piv` arrays of :func:`factor`).
PIVOT_DTYPE = F_INT_nptype
# What newton_test returns: go on iterating, converged, too slow, diverged
GOING, OK, SLOW, DIVERGED = -1, 0, 1, 2
_SAFE, _FAC_MIN, _FAC_MAX = 0.9, 0.2, 8.0
_EPS = float(np.finfo(float).eps)
_C1, _C2 = float(C[0]), float(C[1])

ensure_lapack()
# LAPACK ?getrf through numba's helper (kind 'd' or 'z' picks the routine); the matrix pointer
# is untyped so that one declaration serves both kinds
_getrf = types.ExternalFunction("numba_xxgetrf", types.intc(
    types.char, types.intp, types.intp, types.voidptr, types.intp, types.CPointer(F_INT_nbtype)))


@njit(cache=True, error_model="numpy")
def lu_solve(lu, piv, b):
    """Solve in place with LU factors in LAPACK's layout (0-based pivots), real or complex."""
    n = b.shape[0]
    for i in range(n):
        p = piv[i]
        if p != i:
            tmp = b[i]
            b[i] = b[p]
            b[p] = tmp
    for j in range(n):  # column-oriented: the factors are Fortran-ordered
        bj = b[j]
        for i in range(j + 1, n):
            b[i] -= lu[i, j] * bj
    for j in range(n - 1, -1, -1):
        b[j] /= lu[j, j]
        bj = b[j]
        for i in range(j):
            b[i] -= lu[i, j] * bj


@njit(cache=True, error_model="numpy")
def factor(J, fac1, fac2, E1, E2, piv1, piv2):
    """LU factors of fac1 I - J (real) into E1, piv1 and of fac2 I - J (complex) into E2, piv2,
    as scipy.linalg.lu_factor gives them: E1, E2 (n, n) Fortran-ordered, 0-based pivots of
    dtype PIVOT_DTYPE. An exactly singular matrix gives a zero pivot (and infinite solves)."""
    n = J.shape[0]
    for j in range(n):
        for i in range(n):
            E1[i, j] = -J[i, j]
            E2[i, j] = -J[i, j]
        E1[j, j] += fac1
        E2[j, j] += fac2
    _getrf(100, n, n, E1.ctypes, n, piv1.ctypes)  # 'd'
    _getrf(122, n, n, E2.ctypes, n, piv2.ctypes)  # 'z'
    for i in range(n):
        piv1[i] -= 1
        piv2[i] -= 1


@njit(cache=True, error_model="numpy")
def newton_start(y0, Q, ratio, atol, rtol, Z, W, Y, scale):
    """Newton start: the previous collocation polynomial extrapolated (Q = 0: zero start)."""
    for k in range(3):
        th = 1.0 + C[k] * ratio
        a1, a2, a3 = th - 1.0, th * th - 1.0, th * th * th - 1.0
        for i in range(y0.shape[0]):
            Z[k, i] = a1 * Q[0, i] + a2 * Q[1, i] + a3 * Q[2, i]
            Y[k, i] = y0[i] + Z[k, i]
    for i in range(y0.shape[0]):
        for k in range(3):
            W[k, i] = TI[k, 0] * Z[0, i] + TI[k, 1] * Z[1, i] + TI[k, 2] * Z[2, i]
        scale[i] = atol[i] + rtol * abs(y0[i])


@njit(cache=True, error_model="numpy")
def newton_rhs(F, fac1, fac2, W, r1, r2):
    """Right-hand sides r1 (real) and r2 (complex) of the transformed Newton systems."""
    for i in range(r1.shape[0]):
        g1 = TI[0, 0] * F[0, i] + TI[0, 1] * F[1, i] + TI[0, 2] * F[2, i]
        g2 = TI[1, 0] * F[0, i] + TI[1, 1] * F[1, i] + TI[1, 2] * F[2, i]
        g3 = TI[2, 0] * F[0, i] + TI[2, 1] * F[1, i] + TI[2, 2] * F[2, i]
        r1[i] = g1 - fac1 * W[0, i]
        r2[i] = complex(g2, g3) - fac2 * complex(W[1, i], W[2, i])


@njit(cache=True, error_model="numpy")
def newton_update(y0, scale, r1, r2, Z, W, Y):
    """Add the solved increments to W, Z, Y; returns the scaled max norm of the increment."""
    n = y0.shape[0]
    norm = 0.0
    total = 0.0
    for i in range(n):
        d1, d2, d3 = r1[i], r2[i].real, r2[i].imag
        W[0, i] += d1
        W[1, i] += d2
        W[2, i] += d3
        total += d1 + d2 + d3
        norm = max(norm, max(abs(d1), abs(d2), abs(d3)) / scale[i])
        for k in range(3):
            Z[k, i] = T[k, 0] * W[0, i] + T[k, 1] * W[1, i] + T[k, 2] * W[2, i]
            Y[k, i] = y0[i] + Z[k, i]
    return norm if math.isfinite(total) else math.inf


@njit(cache=True, error_model="numpy")
def newton_iteration(F, y0, scale, fac1, fac2, lu1, piv1, lu2, piv2, Z, W, Y, r1, r2):
    """One simplified Newton iteration on W = TI Z from the stage derivatives F (3, n);
    returns the scaled max norm of the increment (inf if not finite)."""
    newton_rhs(F, fac1, fac2, W, r1, r2)
    lu_solve(lu1, piv1, r1)
    lu_solve(lu2, piv2, r2)
    return newton_update(y0, scale, r1, r2, Z, W, Y)


@njit(cache=True, error_model="numpy")
def newton_test(newt, nit, dyno, rates, fnewt):
    """After Newton iteration `newt` of at most `nit` with increment norm `dyno`: whether to go
    on (HW IV.8). `rates` (4,) holds [dynold, thqold, theta, faccon] and is updated.

    Returns (status, step factor): GOING (iterate again), OK (converged), SLOW (would not
    converge in time: retry with h times the factor) or DIVERGED (retry with h / 2).
    """
    if dyno == math.inf:
        return DIVERGED, 0.5
    if 1 < newt < nit:
        thq = dyno / rates[0]
        theta = thq if newt == 2 else math.sqrt(thq * rates[1])
        rates[1] = thq
        rates[2] = theta
        if theta >= 0.99:
            return DIVERGED, 0.5
        faccon = theta / (1.0 - theta)
        rates[3] = faccon
        # predicted iteration error after the remaining iterations
        dyth = faccon * dyno * theta ** float(nit - 1 - newt) / fnewt
        if dyth >= 1.0:
            qnewt = max(1e-4, min(20.0, dyth))
            return SLOW, 0.8 * qnewt ** (-1.0 / (4 + nit - 1 - newt))
    rates[0] = max(dyno, _EPS)
    if rates[3] * dyno <= fnewt:
        return OK, 1.0
    if newt >= nit:
        return DIVERGED, 0.5
    return GOING, 1.0


@njit(cache=True, error_model="numpy")
def error_rhs(f, Z, h, r):
    """r = f + E.Z / h, the error estimate before its filtering."""
    for i in range(r.shape[0]):
        r[i] = f[i] + (E[0] * Z[0, i] + E[1] * Z[1, i] + E[2] * Z[2, i]) / h


@njit(cache=True, error_model="numpy")
def error_norm(r, Z, y0, atol, rtol):
    """Scaled max norm of the filtered estimate r."""
    err = 0.0
    total = 0.0
    for i in range(y0.shape[0]):
        total += r[i]
        sc = atol[i] + rtol * max(abs(y0[i]), abs(y0[i] + Z[2, i]))
        err = max(err, abs(r[i]) / sc)
    return err if math.isfinite(total) else math.inf


@njit(cache=True, error_model="numpy")
def error_estimate(f, Z, y0, h, atol, rtol, lu1, piv1, r):
    """Filtered error estimate r = E1^-1 (f + E.Z / h) and its scaled max norm."""
    error_rhs(f, Z, h, r)
    lu_solve(lu1, piv1, r)
    return error_norm(r, Z, y0, atol, rtol)


@njit(cache=True, error_model="numpy")
def finish(y0, Z):
    """The accepted step: new state y0 + Z[2], polynomial coefficients DENSE Z, finite flag."""
    n = y0.shape[0]
    y1 = np.empty(n)
    Q = np.empty((3, n))
    total = 0.0
    for i in range(n):
        y1[i] = y0[i] + Z[2, i]
        total += y1[i]
        for p in range(3):
            Q[p, i] = DENSE[p, 0] * Z[0, i] + DENSE[p, 1] * Z[1, i] + DENSE[p, 2] * Z[2, i]
    return y1, Q, math.isfinite(total)


@njit(cache=True, error_model="numpy")
def dense_state(y0, Q, theta, out):
    """out (n,) = u(t0 + theta h) = y0 + theta Q[0] + theta^2 Q[1] + theta^3 Q[2], summed as
    :meth:`tenscontrol.integrate.radau.RadauStep.dense` does (the same rounding)."""
    th2 = theta * theta
    th3 = th2 * theta
    for i in range(y0.shape[0]):
        out[i] = y0[i] + ((theta * Q[0, i] + th2 * Q[1, i]) + th3 * Q[2, i])


@njit(cache=True, error_model="numpy")
def quotient(h, err, newt, nit, gus):
    """h / h_new from the error; for an accepted step also from Gustafsson's predictor, with
    `gus` (3,) = [h, err, 1] of the previous accepted step ([., ., 0]: none yet), updated."""
    fac = min(_SAFE, _SAFE * (1 + 2 * nit) / (newt + 2 * nit))
    quot = min(1 / _FAC_MIN, max(1 / _FAC_MAX, err ** 0.25 / fac))
    if err < 1.0:
        if gus[2] != 0.0:
            pred = gus[0] / h * (err * err / gus[1]) ** 0.25 / _SAFE
            quot = max(quot, min(1 / _FAC_MIN, max(1 / _FAC_MAX, pred)))
        gus[0] = h
        gus[1] = max(1e-2, err)
        gus[2] = 1.0
    return quot


@njit(cache=True, error_model="numpy")
def reaches(t, h, t_final, max_step):
    """Whether the step after a proposed h should end at t_final (stretching h by <= 1%)."""
    rest = t_final - t
    return rest <= 1.01 * h and rest <= max_step * (1 + 1e-12)


@njit(cache=True, error_model="numpy")
def next_step(t, h, quot, reject, slow, t_final, max_step, keep_low, keep_high):
    """(h, last): the step after an accepted step h from t, and whether it ends at t_final;
    h is kept (with its LU factors) while h_new / h lies in [keep_low, keep_high] and J is
    not being refreshed (`slow`)."""
    h_new = min(h / quot, max_step, h if reject else math.inf)
    if reaches(t, h_new, t_final, max_step):
        return t_final - t, True
    if slow or not keep_low <= h_new / h <= keep_high:
        return h_new, False
    return h, False
