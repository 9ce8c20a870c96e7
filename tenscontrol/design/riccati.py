"""The continuous algebraic Riccati equation at a thousand states, checked.

    A^T X + X A - X G X + Q = 0,   G = B R^-1 B^T,   K = R^-1 B^T X,   A - B K Hurwitz.

:func:`care` returns the stabilizing solution and its gain, and checks every answer by the
relative residual (:func:`care_residual`) and the closed loop's eigenvalues. Three solvers:

- ``"doubling"``: the structure-preserving doubling algorithm (SDA) of Chu, Fan and Lin (2005).
  The Hamiltonian pencil is Cayley-transformed by a shift g > 0, which maps the stable
  eigenvalues into the unit disk, and the resulting symplectic pencil in standard form
  ``[[E, 0], [-H, I]] - mu [[I, G], [0, E^T]]`` is squared k times; H_k increases to X and E_k
  decays like ``rho^(2^k)``, rho the largest ``|(lambda + g) / (lambda - g)|`` over the closed
  loop's eigenvalues. One step costs one LU and a few products of n x n matrices (about
  17 n^3 flops) and keeps G_k, H_k symmetric; a mode damped at 1e-9 of the time scale needs
  about 33 steps. No QZ or Schur form: at 768 states it is 2x faster than slycot's
  Hamiltonian Schur method (sb02md) and 20x faster than SciPy's extended-pencil QZ.
- ``"slycot"``: sb02md through python-control's ``lqr``.
- ``"scipy"``: ``scipy.linalg.solve_continuous_are`` (balanced extended-pencil QZ).

Below :data:`LARGE_ORDER` states ``"auto"`` tries slycot, SciPy, doubling (the order used
before doubling existed); from it on doubling, slycot, SciPy. An answer that is not finite,
whose residual exceeds :data:`RESIDUAL_TOL` after up to two Newton-Kleinman refinement steps,
or whose loop is not Hurwitz is refused and the next solver tried; the refusals are kept in
:attr:`RiccatiSolution.fallbacks`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import control as ct

from tenscontrol.linear.norms import MARGIN, stability_scale
from tenscontrol.model.tables import Presentable, titled_table

__all__ = ["LARGE_ORDER", "RESIDUAL_TOL", "RiccatiSolution", "care", "care_doubling",
           "care_residual", "riccati_residual"]

#: From this many states on, ``care(method="auto")`` starts with doubling (slycot's sb02md
#: 0.79 s and doubling 0.70 s at 384 states; 7.5 s and 3.8 s at 768, where sb02md's gain did
#: not stabilize the 192-bar tower).
LARGE_ORDER = 300
#: Largest accepted relative residual (:func:`care_residual`). The solvers reach 1e-14..1e-13
#: on the catalog towers; a Newton step refines anything between.
RESIDUAL_TOL = 1e-10
#: Doubling stops when H_k changes by less than this (relative, 1-norm).
_STEP_TOL = 1e-13
_MAX_STEPS = 60
_METHODS = ("doubling", "slycot", "scipy")


@dataclass(frozen=True, eq=False)
class RiccatiSolution(Presentable):
    """The stabilizing solution of a CARE and how it was found.

    Attributes
    ----------
    X : ndarray, shape (n, n)
        Symmetric stabilizing solution.
    K : ndarray, shape (m, n)
        ``R^-1 B^T X``.
    poles : ndarray, shape (n,)
        Eigenvalues of ``A - B K``.
    residual : float
        Relative residual (:func:`care_residual`).
    method : str
        The solver whose answer was accepted ("doubling", "slycot" or "scipy"), with
        "+newton" when Newton-Kleinman steps refined it.
    steps : int
        Doubling steps, 0 for the other solvers.
    fallbacks : tuple of str
        One line per refused solver: its name and why ("slycot: loop not Hurwitz (max Re
        2.6e-3)").
    """

    X: np.ndarray
    K: np.ndarray
    poles: np.ndarray
    residual: float
    method: str
    steps: int
    fallbacks: tuple

    def __repr__(self) -> str:
        growth = self.poles.real.max() if self.poles.size else float("nan")
        return (f"RiccatiSolution(states={self.X.shape[0]}, method={self.method!r}, "
                f"steps={self.steps}, residual={self.residual:.2g}, max Re pole={growth:.4g}, "
                f"fallbacks={len(self.fallbacks)})")

    def summary(self) -> str:
        """The solver, its residual and the loop's slowest pole as a table, then each refused
        solver."""
        growth = self.poles.real.max() if self.poles.size else float("nan")
        return titled_table("RiccatiSolution", [
            ("states", f"{self.X.shape[0]}"),
            ("method", self.method + (f" ({self.steps} doubling steps)" if self.steps else "")),
            ("relative residual", f"{self.residual:.2g}"),
            ("max Re pole", f"{growth:.4g}")] + [("refused", f) for f in self.fallbacks])


def care_residual(A, B, Q, R, X) -> float:
    """Relative residual of ``A^T X + X A - X B R^-1 B^T X + Q = 0``.

    ``||res||_F / (2 ||A^T X||_F + ||Q||_F + ||X G X||_F)``: about n eps for a backward
    stable solver.
    """
    XB = X @ B
    return riccati_residual(A, None, Q, X, XB @ np.linalg.solve(R, XB.T))


def riccati_residual(A, G, Q, X, XGX=None) -> float:
    """Relative residual of ``A^T X + X A - X G X + Q = 0`` (G may be indefinite), as
    :func:`care_residual`; ``XGX`` if already computed."""
    XGX = X @ G @ X if XGX is None else XGX
    AX = A.T @ X
    res = AX + AX.T - XGX + Q
    scale = 2 * np.linalg.norm(AX) + np.linalg.norm(Q) + np.linalg.norm(XGX)
    return float(np.linalg.norm(res) / max(scale, np.finfo(float).tiny))


def _lu(M, what: str):
    """LU factors of M; LinAlgError when M is numerically singular."""
    lu, piv = scipy.linalg.lu_factor(M, check_finite=False)
    d = np.abs(np.diag(lu))
    if not d.min() > 1e2 * np.finfo(float).eps * max(d.max(), np.finfo(float).tiny):
        raise np.linalg.LinAlgError(f"{what} is numerically singular")
    return lu, piv


def care_doubling(A, G, Q, shift: float = 1.0) -> tuple[np.ndarray, int]:
    """(X, steps): the structure-preserving doubling algorithm for ``A^T X + X A - X G X + Q = 0``.

    Parameters
    ----------
    A : ndarray, shape (n, n)
    G, Q : ndarray, shape (n, n)
        Symmetric; G = B R^-1 B^T (or the indefinite ``B2 R^-1 B2^T - B1 B1^T / gamma^2`` of
        an H-infinity problem), Q the state weight.
    shift : float
        Cayley shift g > 0 [1/time unit]; the time scale of A (1 after scaling time by a
        reference frequency) converges fastest.

    Raises
    ------
    numpy.linalg.LinAlgError
        ``A - g I``, ``W`` or ``I + G_k H_k`` numerically singular, or no convergence in 60
        steps.
    """
    n = A.shape[0]
    eye = np.eye(n)
    lu_a = _lu(A - shift * eye, "A - shift I")
    AiG = scipy.linalg.lu_solve(lu_a, G, check_finite=False)             # A_g^-1 G
    lu_w = _lu(A.T - shift * eye + Q @ AiG, "W = A_g^T + Q A_g^-1 G")
    Winv = scipy.linalg.lu_solve(lu_w, eye, check_finite=False)
    QAi = scipy.linalg.lu_solve(lu_a, Q, trans=1, check_finite=False).T  # Q A_g^-1 (Q symmetric)
    E = eye + 2 * shift * Winv.T
    Gk = 2 * shift * AiG @ Winv
    Hk = 2 * shift * Winv @ QAi
    Gk, Hk = 0.5 * (Gk + Gk.T), 0.5 * (Hk + Hk.T)
    previous = np.inf
    for step in range(1, _MAX_STEPS + 1):
        lu_z = _lu(eye + Gk @ Hk, "I + G_k H_k")
        Y = scipy.linalg.lu_solve(lu_z, np.hstack([E, Gk]), check_finite=False)
        YE, YG = Y[:, :n], Y[:, n:]
        dH = E.T @ (Hk @ YE)
        Gk = Gk + (E @ YG) @ E.T
        E = E @ YE
        Gk, dH = 0.5 * (Gk + Gk.T), 0.5 * (dH + dH.T)
        Hk = Hk + dH
        if not np.all(np.isfinite(dH)):
            raise np.linalg.LinAlgError("doubling: the iterates overflowed")
        change = np.linalg.norm(dH, 1) / max(np.linalg.norm(Hk, 1), np.finfo(float).tiny)
        # near convergence each change is about the square of the last (E_k squares): one
        # of 1e-8 after one of 1e-5 leaves about 1e-16, so the step that would show it is saved
        if change <= _STEP_TOL or (change <= 1e-8 and change <= previous**1.5):
            return Hk, step
        previous = change
    raise np.linalg.LinAlgError(f"doubling: no convergence in {_MAX_STEPS} steps")


def _newton_step(A, B, Q, R, X):
    """One Newton-Kleinman step from X (its loop Hurwitz): Lyapunov solve by Bartels-Stewart."""
    K = np.linalg.solve(R, B.T @ X)
    Acl = A - B @ K
    Xn = scipy.linalg.solve_continuous_lyapunov(Acl.T, -(Q + K.T @ R @ K))
    return 0.5 * (Xn + Xn.T)


def _solve(method, A, B, Q, R, G):
    """(X, steps) by one solver."""
    if method == "doubling":
        return care_doubling(A, G, Q, shift=1.0)
    if method == "slycot":
        return np.asarray(ct.lqr(A, B, Q, R)[1], dtype=float), 0
    return scipy.linalg.solve_continuous_are(A, B, Q, R), 0


def _checked(A, B, Q, R, X, method):
    """(solution fields, None) if X passes, else (None, reason); Newton steps refine X."""
    if not np.all(np.isfinite(X)):
        return None, "not finite"
    X = 0.5 * (X + X.T)
    res = care_residual(A, B, Q, R, X)
    for refined in range(3):
        Acl = A - B @ np.linalg.solve(R, B.T @ X)
        poles = np.linalg.eigvals(Acl)
        growth = poles.real.max()
        if not growth < -MARGIN * stability_scale(Acl):
            return None, f"loop not Hurwitz (max Re {growth:.3g})"
        if res <= RESIDUAL_TOL or refined == 2:
            break
        X = _newton_step(A, B, Q, R, X)
        res, method = care_residual(A, B, Q, R, X), method.split("+")[0] + "+newton"
    if not res <= RESIDUAL_TOL:
        return None, f"residual {res:.3g} > {RESIDUAL_TOL:g}"
    return (X, np.linalg.solve(R, B.T @ X), poles, res, method), None


def care(A, B, Q, R, *, method: str = "auto") -> RiccatiSolution:
    """The stabilizing solution of ``A^T X + X A - X B R^-1 B^T X + Q = 0``, checked.

    Parameters
    ----------
    A : ndarray, shape (n, n)
    B : ndarray, shape (n, m)
    Q : ndarray, shape (n, n)
        Symmetric positive semidefinite.
    R : ndarray, shape (m, m)
        Symmetric positive definite.
    method : {"auto", "doubling", "slycot", "scipy"}
        "auto": slycot, SciPy, doubling below :data:`LARGE_ORDER` states, doubling, slycot,
        SciPy from it on; a named method alone (no fallback).

    Returns
    -------
    RiccatiSolution
        Residual at most :data:`RESIDUAL_TOL`, ``A - B K`` Hurwitz (``Re < -MARGIN *
        stability_scale(A)``); refused answers are listed in ``fallbacks``.

    Raises
    ------
    ValueError
        An unknown method.
    numpy.linalg.LinAlgError
        No solver produced an answer that passes the checks (the reasons in the message).
    """
    if method == "auto":
        n = A.shape[0]
        order = _METHODS if n >= LARGE_ORDER else ("slycot", "scipy", "doubling")
    elif method in _METHODS:
        order = (method,)
    else:
        raise ValueError(f"care: method must be 'auto' or one of {_METHODS}, got {method!r}")
    G = B @ np.linalg.solve(R, B.T)
    G = 0.5 * (G + G.T)
    refused = []
    for name in order:
        try:
            X, steps = _solve(name, A, B, Q, R, G)
        except Exception as exc:            # slycot/LAPACK errors: no stabilizing solution
            refused.append(f"{name}: {' '.join(str(exc).split())[:160]}")
            continue
        fields, reason = _checked(A, B, Q, R, X, name)
        if fields is None:
            refused.append(f"{name}: {reason}")
            continue
        X, K, poles, res, how = fields
        return RiccatiSolution(X, K, poles, res, how, steps, tuple(refused))
    raise np.linalg.LinAlgError("care: no stabilizing solution passed the checks ("
                                + "; ".join(refused) + ")")
