"""The tangent stiffness on the admissible motions without a basis of them (sparse).

The stability test of a static equilibrium wants the smallest eigenvalue of the tangent
stiffness K (nf x nf) on the motions with ``C^T dq = 0`` (C: the bar columns and the rigid
fields held by the gauge), and the mechanism check wants its eigenvectors of (near) zero
stiffness. The dense path forms an orthonormal basis Z of null(C^T) (an SVD, O(nf^3)) and the
eigenvalues of ``Z^T K Z``. Here the same eigenvalues come from the shift-invert operator

    S x = Z (Z^T (K - sigma I) Z)^{-1} Z^T x = first block of
          [[K - sigma I, C], [C^T, 0]]^{-1} [x; 0],

symmetric, with eigenvalues ``1 / (lambda - sigma)`` on null(C^T) (lambda those of Z^T K Z)
and 0 on range(C): one sparse LU of the KKT matrix and a few dozen solves of Lanczos (ARPACK,
scipy.sparse.linalg.eigsh), O(members) each for a tower. With sigma below every eigenvalue
the largest eigenvalue of S gives the smallest lambda. Lanczos alone cannot tell whether one
lies below sigma (its 1 / (lambda - sigma) is a small negative number next to the cluster of
stiff modes near 0); Sylvester's law of inertia can: ``[[K - sigma I, C], [C^T, 0]]`` has m
(C's columns) plus that many negative eigenvalues, counted from the pivots of its ``L D L^T``
(:func:`_count_below`). sigma starts just below 0 and moves down until the count is 0 (only
an unstable equilibrium has any). docs/theory.md, "Stability test without the null space".

Each function returns None where it cannot vouch for its answer: a pivot too small to trust
its sign, the KKT matrix singular or ill-conditioned (dependent constraints, sigma on an
eigenvalue), Lanczos without convergence. The caller then takes the dense path, which is
exact, and counts it.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse
import scipy.sparse.csgraph
import scipy.sparse.linalg

from tenscontrol.statics.linalg import equilibrated, unpivoted_lu

__all__ = ["SPARSE_MIN_FREE", "admissible_zero_modes", "admissible_negative_count",
           "smallest_admissible_eigenvalue"]

#: Problems with fewer free coordinates take the dense path (exact, and faster there); tests
#: lower it to run the sparse path on small structures.
SPARSE_MIN_FREE = 300
#: sigma = -_SHIFT max|K|: below every nonnegative eigenvalue, the KKT matrix well conditioned.
_SHIFT = 1e-8
#: The shift moves down by this factor while eigenvalues lie below it (unstable equilibria).
_MOVE = 4.0
#: A pivot of the inertia count below this fraction of |A|max: its sign is not trusted.
_PIVOT = 1e-12
#: Lanczos' relative tolerance on the Ritz values of S (the eigenvalues come out far better).
_TOL = 1e-12
#: Up to this many free coordinates S is formed column by column (ARPACK wants more).
_SMALL = 8
#: Most (near-)zero modes the mechanism check looks for before it takes the dense path.
_MAX_MODES = 16
#: Constraint columns with at most this many entries (a bar's: two nodes, three coordinates
#: each) are added to K as ``rho c c^T`` (:func:`_kkt_matrix`): that term lies in the bar's
#: own member blocks, so it fills nothing; the denser rigid fields are not.
_LOCAL_ENTRIES = 6


def _kkt_inverse(K, C, sigma: float):
    """A function x (nf,) -> first block of ``[[K - sigma I, C], [C^T, 0]]^{-1} [x; 0]``, or
    None when the sparse LU fails or LAPACK's test would call the matrix ill-conditioned."""
    nf, m = C.shape
    A, d = equilibrated(_kkt_matrix(K, C, sigma))  # the test in scaled units (equilibrated)
    try:
        lu = scipy.sparse.linalg.splu(A)
    except RuntimeError:  # "Factor is exactly singular"
        return None
    inverse = scipy.sparse.linalg.LinearOperator(A.shape, matvec=lu.solve,
                                                 rmatvec=lambda v: lu.solve(v, trans="T"),
                                                 dtype=float)
    if scipy.sparse.linalg.norm(A, 1) * scipy.sparse.linalg.onenormest(inverse) \
            >= 1.0 / np.finfo(float).eps:
        return None
    zeros = np.zeros(m)
    return lambda x: (d * lu.solve(d * np.concatenate([x, zeros])))[:nf]


def _unit_columns(C) -> scipy.sparse.csc_matrix:
    """C with its zero columns dropped and the others scaled to unit norm (the null space is
    the same; the KKT matrix better scaled)."""
    C = scipy.sparse.csc_matrix(C)
    norms = np.sqrt(np.asarray(C.multiply(C).sum(axis=0)).ravel())
    keep = norms > 0
    return scipy.sparse.csc_matrix(C[:, keep] @ scipy.sparse.diags(1.0 / norms[keep]))


def _start(n: int) -> np.ndarray:
    """The Lanczos start vector: fixed, so that the results are reproducible."""
    return np.random.default_rng(20).standard_normal(n)


def _shift_invert(K, C, sigma: float):
    """S (a LinearOperator) at sigma, or None (see :func:`_kkt_inverse`)."""
    solve = _kkt_inverse(K, C, sigma)
    if solve is None:
        return None
    nf = K.shape[0]

    def matvec(x):
        y = solve(np.ravel(x))
        if not np.all(np.isfinite(y)):
            raise scipy.sparse.linalg.ArpackError(-9999)
        return y
    return scipy.sparse.linalg.LinearOperator((nf, nf), matvec=matvec, dtype=float)


def smallest_admissible_eigenvalue(K, C) -> float | None:
    """The smallest eigenvalue [N/m] of K on null(C^T), or None (the caller's dense path).

    K: the tangent stiffness on the free coordinates (nf, nf), sparse and symmetric; C (nf, m)
    sparse or dense, the constraint columns (zero columns ignored), independent: dependent
    ones make the KKT matrix singular and the answer None.
    """
    nf = K.shape[0]
    C = _unit_columns(C)
    scale = float(abs(K).max()) if K.nnz else 0.0
    if scale == 0.0:
        return None
    sigma, bound = -_SHIFT * scale, 2.0 * float(abs(K).sum(axis=0).max())
    while True:  # sigma below every eigenvalue, within a factor _MOVE of the smallest
        below = _count_below(K, C, sigma)
        if below is None:
            return None
        if below == 0:
            break
        if -sigma > bound:  # |lambda| <= |K|_1: the count cannot be right
            return None
        sigma *= _MOVE  # an unstable equilibrium: look further down
    S = _shift_invert(K, C, sigma)
    if S is None:
        return None
    if nf <= _SMALL:  # ARPACK needs k < nf - 1: S itself, column by column
        M = np.column_stack([S @ e for e in np.eye(nf)])
        theta = np.linalg.eigvalsh(0.5 * (M + M.T))[-1:]
    else:
        try:
            theta = scipy.sparse.linalg.eigsh(S, k=2, which="LA", v0=S @ _start(nf), tol=_TOL,
                                              return_eigenvectors=False)
        except (scipy.sparse.linalg.ArpackNoConvergence, scipy.sparse.linalg.ArpackError):
            return None
    theta = float(theta.max())
    return sigma + 1.0 / theta if theta > 0.0 else None


def admissible_negative_count(K, C) -> int | None:
    """The number of negative eigenvalues of K on null(C^T) (an unstable equilibrium has at
    least one), by the inertia count of one sparse ``L D L^T``; None when it cannot be
    trusted (a pivot too small for its sign: the caller's dense path). No shift: a slender
    tower's bending stiffness is 1e-9 of its strings' (-_SHIFT max|K| would hide it)."""
    return _count_below(K, _unit_columns(C), 0.0) if K.nnz else None


def _kkt_matrix(K, C, sigma: float) -> scipy.sparse.csc_matrix:
    """``[[K + rho C C^T - sigma I, C], [C^T, 0]]``, sparse, where C's columns are all bar
    columns (unit, at most _LOCAL_ENTRIES entries), rho twice the 1-norm of K - sigma I.

    The augmented term vanishes on null(C^T), so the KKT matrix has the same inertia and the
    same first block of its inverse on those motions; it makes the coordinate block stiff along
    every bar, where K alone is nearly singular (a rigid bar's own direction carries only the
    geometric term): without it the unpivoted L D L^T of a steel tower grew a million-fold
    and the pivot test rejected half the inertia counts. rho bounds every eigenvalue of
    K - sigma I (the 1-norm does), so the sum is stiff along a bar whatever K's sign there (an
    upright pendulum's K is -W/L I: rho = max|K| cancelled it exactly). Only where every
    column is a bar's: a free-floating structure's gauge columns are dense (their C C^T
    would fill K), and its coordinate block stays singular along the rigid motions whatever
    the bars add, so there the plain KKT matrix is factored, as before.
    """
    A = K - sigma * scipy.sparse.identity(K.shape[0], format="csc")
    if _bars_only(C):
        rho = 2.0 * max(float(abs(A).sum(axis=0).max()), np.finfo(float).tiny)
        A = (A + rho * (C @ C.T)).tocsc()
    return (scipy.sparse.bmat([[A, C], [C.T, None]], format="csc") if C.shape[1]
            else scipy.sparse.csc_matrix(A))


def _bars_only(C) -> bool:
    """Whether C has columns and every one is a bar's (at most _LOCAL_ENTRIES entries)."""
    return bool(C.shape[1]) and bool(np.all(np.diff(C.indptr) <= _LOCAL_ENTRIES))


def _kkt_order(K, C) -> np.ndarray:
    """An elimination order of the KKT matrix: the coordinates in reverse Cuthill-McKee
    order (banded for a tower), each constraint right after the last of its coordinates, so
    that its pivot, ``-c^T (K - sigma I)^{-1} c`` on them, is no structural zero."""
    nf, m = C.shape
    pattern = abs(K) + scipy.sparse.identity(nf, format="csr")
    rank = np.empty(nf)
    rank[scipy.sparse.csgraph.reverse_cuthill_mckee(pattern.tocsr(), symmetric_mode=True)] = \
        np.arange(nf)
    last = np.full(m, -1.0)
    cols = np.repeat(np.arange(m), np.diff(C.indptr))
    np.maximum.at(last, cols, rank[C.indices])
    return np.argsort(np.concatenate([rank, last + 0.5]), kind="stable")


def _count_below(K, C, sigma: float) -> int | None:
    """The number of eigenvalues of K on null(C^T) below sigma, or None when unknown.

    Sylvester's law of inertia on ``A = L D L^T`` (SuperLU without pivoting in the order of
    :func:`_kkt_order`): A has m + that many negative eigenvalues (m = C's columns, each
    constraint one negative and one positive). None when SuperLU had to exchange rows or a
    pivot is too small for its sign to be trusted (a factorization without pivoting of an
    indefinite matrix can grow; A near singular).
    """
    A = _kkt_matrix(K, C, sigma)
    if _bars_only(C):
        # the congruence D A D keeps the inertia and brings the constraint pivots (-c^T K^-1 c,
        # 1e-7 of max|A| on a steel tower) into the range the pivot test trusts; the plain
        # KKT matrix of a free-floating structure (see _kkt_matrix) keeps its scale, where
        # the test was set
        A, _ = equilibrated(A)
    order = _kkt_order(K, C)
    A = A[order][:, order].tocsc()
    lu = unpivoted_lu(A, "NATURAL")
    if lu is None:
        return None
    pivots = lu.U.diagonal()
    big = max(float(abs(A).max()), float(np.abs(pivots).max()))
    if not np.all(np.abs(pivots) > _PIVOT * big):
        return None
    return int(np.sum(pivots < 0)) - C.shape[1]


def admissible_zero_modes(K, C, force: np.ndarray, rtol: float) -> np.ndarray | None:
    """Orthonormal eigenvectors (nf, j) of K on null(C^T) whose eigenvalue is within `rtol`
    of the scale ``max(|K|max, largest |eigenvalue|)``, or None (the caller's dense path).

    Lanczos starts from the part of `force` (nf,) on the admissible motions, so that the
    modes along which it works come first; they are all the caller needs
    (:func:`tenscontrol.statics.result.working_modes`).
    """
    nf = K.shape[0]
    C = _unit_columns(C)
    eigsh = scipy.sparse.linalg.eigsh
    if nf < 3:
        return None
    P = _shift_invert(scipy.sparse.identity(nf, format="csc"), C, 0.0)  # the projector
    if P is None:
        return None
    reduced = scipy.sparse.linalg.LinearOperator((nf, nf), matvec=lambda x: P @ (K @ (P @ x)),
                                                 dtype=float)
    try:
        largest = eigsh(reduced, k=1, which="LM", v0=P @ _start(nf), tol=1e-6,
                        return_eigenvectors=False)
    except (scipy.sparse.linalg.ArpackNoConvergence, scipy.sparse.linalg.ArpackError):
        return None
    top = max(float(np.abs(largest).max()), float(abs(K).max()) if K.nnz else 0.0, 1e-300)
    window = rtol * top
    sigma = -2.0 * window  # the window |lambda| <= rtol top is theta in [1/(3 w), 1/w]
    S = _shift_invert(K, C, sigma)
    v0 = P @ force
    if S is None or not np.any(v0):
        return None if S is None else np.zeros((nf, 0))
    for k in (4, 8, _MAX_MODES):
        if k >= nf:
            return None
        try:
            theta, V = eigsh(S, k=k, which="LA", v0=v0, tol=_TOL)
        except (scipy.sparse.linalg.ArpackNoConvergence, scipy.sparse.linalg.ArpackError):
            return None
        if theta.min() < 1.0 / (3.0 * window):  # past the window: every mode in it found
            lam = sigma + 1.0 / theta
            return V[:, (theta > 0) & (np.abs(lam) <= window)]
    return None
