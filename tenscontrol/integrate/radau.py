"""The implicit Radau IIA method of order 5 (RADAU5) for stiff problems, with dense output.

Written from the method's description in Hairer & Wanner, "Solving Ordinary Differential
Equations II", 2nd ed., section IV.8: the 3-stage Radau IIA collocation method; simplified Newton
iterations on the stage increments Z with the caller's analytic Jacobian J; the stage system
transformed by the eigen-decomposition of inv(A) into one real and one complex n x n system (one
real and one complex solve per Newton iteration); the embedded error estimate filtered through
(GAMMA/h I - J)^-1, filtered a second time on the first step and after a rejection; Gustafsson's
predictive step-size control; and the reuse of J and the LU factors across steps while Newton
contracts fast. J is recomputed only when Newton converged slowly (more than two iterations
and a contraction rate above 1e-3, the rule of scipy's ``Radau``), or when a step with an old
J is retried (Newton failure or error-test rejection). h, and with it the LU factors, is kept
when the proposed step ratio lies in [1, 1.2] (or [0.99, 2] for n >= 30), so the matrices are
refactorized only when h changes materially (the ``keep_step`` option: ``"narrow"`` [1, 1.2],
``"wide"`` [0.99, 2], ``"auto"`` the first below n = 30 unknowns, the second from 30 on).

:class:`Radau5` writes one step of :class:`tenscontrol.integrate.base.Integrator`, whose max-norm
error test max_i |err_i| / (atol_i + rtol max(|y0_i|, |y1_i|)) <= 1 it applies to the
tolerances as given (as scipy's ``Radau``). The embedded estimate is only of order 3, so for the
accuracy Dopri54 gives at the same tolerances pass them through
:meth:`Radau5.error_test_tolerances` first (Hairer's mapping; :func:`tenscontrol.simulate` does).
The Newton increments are measured in the same max norm with the scale atol_i + rtol |y0_i|.

The per-step arithmetic runs in the numba kernels of :mod:`tenscontrol.integrate.radau_kernel`
(LAPACK's LU factors, as :func:`scipy.linalg.lu_factor` gives them, and the forward/back
substitutions, whose scipy wrappers' per-call overhead would exceed the whole step budget at
the problem sizes of tenscontrol; the Newton iteration and its convergence test; the step-size
control); a step loop compiled with numba calls the same kernels and takes the same steps
(:mod:`tenscontrol.simulation.compressible_loop`).
"""

from __future__ import annotations

import math

import numpy as np

from tenscontrol.integrate.base import DEFAULT_MAX_STEPS, Integrator, Step, positive
from tenscontrol.integrate.radau_kernel import (  # noqa: F401 (the tableau, exported here too)
    ALPHA, BETA, DENSE, DIVERGED, GAMMA, GOING, OK, PIVOT_DTYPE, SLOW, THETA_JAC, TI, A, B, C, E,
    T, error_estimate, error_norm, error_rhs, factor, finish, newton_iteration, newton_rhs,
    newton_start, newton_test, newton_update, next_step, quotient, reaches)

__all__ = ["C", "A", "B", "E", "GAMMA", "ALPHA", "BETA", "T", "TI", "DENSE", "KEEP_STEP",
           "LARGE_N", "Radau5", "RadauStep", "keep_window"]

# Keep h and its LU factors while the proposed step ratio h_new / h lies in this window:
# Hairer's default for small systems, and his suggestion for large full ones, where the
# O(n^3) factorization outweighs a few more steps (measured crossover near n = 30).
KEEP_STEP = {"narrow": (1.0, 1.2), "wide": (0.99, 2.0)}
#: Unknowns from which keep_step="auto" takes the "wide" window.
LARGE_N = 30
_EPS = np.finfo(float).eps
_C1, _C2 = float(C[0]), float(C[1])
# Newton's outcome (radau_kernel's codes, under the names tests and benchmarks patch)
_OK, _SLOW, _DIVERGED = OK, SLOW, DIVERGED


def keep_window(keep_step: str, n: int) -> tuple[str, tuple[float, float]]:
    """The validated `keep_step` rule for n unknowns ("auto" resolved) and its window."""
    if keep_step not in ("auto", *KEEP_STEP):
        raise ValueError(f"keep_step must be one of 'auto', 'narrow', 'wide', got "
                         f"{keep_step!r}")
    if keep_step == "auto":
        keep_step = "narrow" if n < LARGE_N else "wide"
    return keep_step, KEEP_STEP[keep_step]


class RadauStep(Step):
    """An accepted Radau IIA step: :class:`tenscontrol.integrate.base.Step` plus its collocation
    polynomial.

    Attributes
    ----------
    Q : ndarray, shape (3, n)
        Coefficients of u(t0 + theta h) = y0 + theta Q[0] + theta^2 Q[1] + theta^3 Q[2].
    """

    __slots__ = ("Q",)

    def __init__(self, t0, h, y0, y1, Q):
        super().__init__(t0, h, y0, y1)
        self.Q = Q

    def dense(self, theta) -> np.ndarray:
        """States at t0 + theta h, theta in [0, 1], shape (len(theta), n), from the step's
        collocation polynomial (cubic, through y0 and the three stages)."""
        Q = self.Q
        th = np.asarray(theta, dtype=float).reshape(-1, 1)
        return self.y0 + (th * Q[0] + th * th * Q[1] + th * th * th * Q[2])


class Radau5(Integrator):
    """Radau IIA of order 5 for stiff systems: implicit, adaptive, with the caller's Jacobian.

    Takes the arguments of :class:`tenscontrol.integrate.base.Integrator`, with `jac` required
    and no `correct`, and:

    Parameters
    ----------
    newton_tol : float, optional
        Stop the Newton iterations when the estimated iteration error, in the error-test norm,
        is below this; default ``max(10 eps / rtol, min(0.03, sqrt(rtol)))``.
    max_newton_iterations : int, optional
        Newton iterations per step before the step is retried with h / 2 (default 7).
    keep_step : {"auto", "narrow", "wide"}, optional
        When h and its LU factors are kept: while the proposed step ratio lies in [1, 1.2]
        (``"narrow"``, Hairer's default) or in [0.99, 2] (``"wide"``, his advice for large
        full systems, where a factorization costs more than a few extra steps); ``"auto"``
        (the default) takes ``"narrow"`` below :data:`LARGE_N` = 30 unknowns, ``"wide"`` from
        there on. The rule taken is the attribute ``keep_step``.

    Notes
    -----
    The error test is the base's max norm on the tolerances as given (as in scipy's
    ``Radau``); the embedded estimate is only of order 3, so for the accuracy Dopri54 gives at
    the same tolerances pass them through :meth:`error_test_tolerances` first. With
    ``max_step=first_step`` and tolerances loose enough to accept every step, the steps are
    constant (h stays within the keep-h window of the controller). `fun` must not keep a
    reference to its `y` argument (a workspace of the integrator).

    `jac(t, y)` returns a dense (n, n) array, or, for large structured problems, an object with
    a method ``factor(c)`` (c a float or a complex) returning a solver whose ``solve(b)`` returns
    x = (c I - J)^-1 b (n,) for a real or complex b (of c's type); such an object is used as it
    is (no dense matrix is formed here) and is responsible for its own finiteness checks.
    """

    name = "radau5"
    needs_jacobian = True

    def __init__(self, fun, t0, y0, t_final, *, rtol, atol, max_step=np.inf, first_step=None,
                 jac=None, correct=None, max_steps=DEFAULT_MAX_STEPS, newton_tol=None,
                 max_newton_iterations=7, keep_step="auto"):
        super().__init__(fun, t0, y0, t_final, rtol=rtol, atol=atol, max_step=max_step,
                         first_step=first_step, jac=jac, correct=correct, max_steps=max_steps)
        if newton_tol is None:  # HW's FNEWT (untransformed)
            newton_tol = max(10 * _EPS / self.rtol, min(0.03, self.rtol ** 0.5))
        self.fnewt = positive("newton_tol", newton_tol)
        nit = max_newton_iterations
        if not (isinstance(nit, (int, np.integer)) and nit >= 1):
            raise ValueError(f"max_newton_iterations must be an integer >= 1, got {nit!r}")
        self.nit = int(nit)
        n = self.n
        self.Z, self.W, self.Y, self.F = (np.zeros((3, n)) for _ in range(4))
        self.scale, self.r1, self.err = np.empty(n), np.empty(n), np.empty(n)
        self.r2 = np.empty(n, dtype=complex)
        self.E1 = self.E2 = None        # dense LU factors, allocated on first use
        self.J = self.piv1 = self.piv2 = None
        self.structured, self.S1, self.S2 = False, None, None
        self.faccon, self.slow = 1.0, False
        self.keep_step, self.keep = keep_window(keep_step, n)
        self.need_jac, self.jac_current, self.h_lu = True, False, 0.0
        self.gus = np.zeros(3)          # [h, err, 1] of the last accepted step (radau_kernel)

    @classmethod
    def error_test_tolerances(cls, rtol: float, atol: float) -> tuple[float, float]:
        """The error-test tolerances that give the accuracy `rtol`, `atol` ask for.

        Radau IIA's embedded error estimate is only of order 3 while the solution is of order 5,
        so testing it against the user's tolerance over-resolves; Hairer and Wanner's RADAU5 code
        therefore tests against 0.1 rtol^(2/3) (atol scaled alike). Measured on the damped HDPE
        T-bar over 10 s at rtol = atol = 1e-8: without the mapping the nodes are 100x more
        accurate than Dormand-Prince's (4e-10 m against 4.5e-8 m) at 2.3x its steps; with it
        they match (4.0e-8 m) at 0.9x its steps.
        """
        mapped = 0.1 * rtol ** (2.0 / 3.0)
        return mapped, atol * mapped / rtol

    def rhs(self, t, y):
        """fun(t, y), shape-checked."""
        f = np.asarray(self.fun(t, y), dtype=float)
        self._rhs += 1
        if f.shape != (self.n,):
            raise ValueError(f"fun(t, y) must return an array of shape ({self.n},), got shape "
                             f"{f.shape}")
        return f

    def jacobian(self, t, y):
        """Evaluate and check jac(t, y) (a dense array, or a structured Jacobian)."""
        out = self.jac(t, y)
        self._jacobians += 1
        self.structured = hasattr(out, "factor")
        if self.structured:     # the object checks its own entries (see the class Notes)
            self.J = out
            return
        try:
            J = np.asarray(out, dtype=float)
        except (TypeError, ValueError):
            J = np.empty(0)  # e.g. a sparse matrix: reported as a wrong shape below
        if J.shape != (self.n, self.n):
            raise ValueError(f"jac(t, y) must return a dense array of shape ({self.n}, {self.n}), "
                             f"got {type(out).__name__} of shape {np.shape(out)}")
        if not np.all(np.isfinite(J)):
            raise FloatingPointError(f"jac(t, y) returned non-finite entries at t = {t:.6g}")
        self.J = J

    def factorize(self, h):
        """LU factors of GAMMA/h I - J and (ALPHA + i BETA)/h I - J."""
        self.fac1, self.fac2 = GAMMA / h, complex(ALPHA / h, BETA / h)
        self._lu += 1
        if self.structured:
            self.S1, self.S2 = self.J.factor(self.fac1), self.J.factor(self.fac2)
            return
        if self.E1 is None:
            n = self.n
            self.E1 = np.empty((n, n), order="F")
            self.E2 = np.empty((n, n), dtype=complex, order="F")
            self.piv1, self.piv2 = np.empty(n, PIVOT_DTYPE), np.empty(n, PIVOT_DTYPE)
        factor(self.J, self.fac1, self.fac2, self.E1, self.E2, self.piv1, self.piv2)

    def newton(self, t, h, y0):
        """Simplified Newton iterations (HW IV.8); returns (status, step factor, iterations)."""
        fun, F, Y, Z, W = self.fun, self.F, self.Y, self.Z, self.W
        args = (self.E1, self.piv1, self.E2, self.piv2, Z, W, Y, self.r1, self.r2)
        t1, t2, t3 = t + _C1 * h, t + _C2 * h, t + h
        # [dynold, thqold, theta, faccon] (radau_kernel.newton_test)
        rates = np.array([1.0, 1.0, THETA_JAC, max(self.faccon, _EPS) ** 0.8])
        for newt in range(1, self.nit + 1):
            F[0], F[1], F[2] = fun(t1, Y[0]), fun(t2, Y[1]), fun(t3, Y[2])
            self._rhs += 3
            if self.structured:
                dyno = self._newton_structured(y0)
            else:
                dyno = newton_iteration(F, y0, self.scale, self.fac1, self.fac2, *args)
            status, factor_ = newton_test(newt, self.nit, dyno, rates, self.fnewt)
            if status == OK:
                # slow: J is refreshed for the next step (not after 1-2 iterations, as scipy)
                self.faccon, self.slow = rates[3], newt > 2 and rates[2] > THETA_JAC
            if status != GOING:
                return status, factor_, newt
        raise AssertionError("newton_test ends the iterations at max_newton_iterations")

    def _newton_structured(self, y0):
        """One Newton iteration with the solvers of a structured Jacobian."""
        newton_rhs(self.F, self.fac1, self.fac2, self.W, self.r1, self.r2)
        x1, x2 = self.S1.solve(self.r1), self.S2.solve(self.r2)
        return newton_update(y0, self.scale, x1, x2, self.Z, self.W, self.Y)

    def _error_structured(self, f, h, y0):
        error_rhs(f, self.Z, h, self.err)
        self.err = self.S1.solve(self.err)
        return error_norm(self.err, self.Z, y0, self.atol, self.rtol)

    def error(self, t, h, y0, f0, careful):
        """Scaled max norm of the filtered embedded error estimate."""
        if self.structured:
            err = self._error_structured(f0, h, y0)
            if err >= 1.0 and careful:
                err = self._error_structured(self.rhs(t, y0 + self.err), h, y0)
            return max(err, 1e-10)
        args = (self.Z, y0, h, self.atol, self.rtol, self.E1, self.piv1, self.err)
        err = error_estimate(f0, *args)
        if err >= 1.0 and careful:  # a second filtering damps the stiff components
            err = error_estimate(self.rhs(t, y0 + self.err), *args)
        return max(err, 1e-10)

    def stages(self, t, y, h, Q, ratio):
        """Jacobian and LU when due, then the Newton iterations from the extrapolated Q."""
        if self.need_jac:
            self.jacobian(t, y)
            self.need_jac, self.jac_current, self.h_lu = False, True, 0.0
        if h != self.h_lu:
            self.factorize(h)
            self.h_lu = h
        newton_start(y, Q, ratio, self.atol, self.rtol, self.Z, self.W, self.Y, self.scale)
        status, factor, newt = self.newton(t, h, y)
        self._newton_iterations += newt
        return status, factor, newt

    def quotient(self, h, err, newt):
        """h / h_new from the error; for an accepted step also from Gustafsson's predictor."""
        return quotient(h, err, newt, self.nit, self.gus)

    def next_step(self, t, h, quot, reject):
        """The step after an accepted one, and whether it ends at t_final."""
        slow = self.slow
        self.need_jac, self.jac_current = slow, False
        return next_step(t, h, quot, reject, slow, self.t_final, self.max_step, *self.keep)

    def _start(self):
        t, y = self.t, self.y
        self.f = self.rhs(t, y)
        if not np.all(np.isfinite(self.f)):
            raise FloatingPointError(f"fun(t0, y0) is not finite at t0 = {t}")
        h = self._initial_step(self.f)
        self.Q, self.h_old, self.first, self.reject = np.zeros((3, self.n)), 0.0, True, False
        self.last = reaches(t, h, self.t_final, self.max_step)
        self.h = self.t_final - t if self.last else h
        self.after_accept = False

    def _step(self):
        t, y = self.t, self.y
        if self.after_accept:  # f at the new point and the next h, once the step is recorded
            self.f = self.rhs(t, y)
            self.h, self.last = self.next_step(t, self.h, self.quot, self.reject)
            self.first = self.reject = False
        while True:
            h = self.h
            self._check_step(h, self.last)
            status, factor, newt = self.stages(t, y, h, self.Q,
                                               h / self.h_old if self.h_old else 0.0)
            if status == _OK:
                err = self.error(t, h, y, self.f, self.first or self.reject)
                quot = self.quotient(h, err, newt)
                if err < 1.0:
                    break
                self._rejected += 1
                self.h = 0.1 * h if self.first else h / quot
            else:
                self._newton_failures += 1
                self.h = h * factor
            # retry smaller, with a fresh J if it was old
            self.reject, self.last, self.need_jac = True, False, not self.jac_current
        y_new, Q, finite = finish(y, self.Z)
        if not finite:
            raise FloatingPointError(f"the state became non-finite at t = {t + h:.9g} s")
        self.t = self.t_final if self.last else t + h
        self.y, self.h_old, self.Q, self.quot, self.after_accept = y_new, h, Q, quot, True
        return RadauStep(t, h, y, y_new, Q)
