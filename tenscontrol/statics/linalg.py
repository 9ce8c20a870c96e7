"""Sparse linear algebra of the static solver (:mod:`tenscontrol.statics.solve`).

The static solve repeats two linear solves many times: the minimum-norm correction onto the
rigid bar lengths (and the least-squares bar force densities), both through the normal
equations ``X^T X`` of the bar columns X (n_bars x n_bars, nonzero only where bars share a free
node), and the Newton step's KKT system ``[[K + mu I, C], [C^T, 0]]``, sparse because K couples
only nodes joined by a member. Dense least squares and a dense symmetric solve made a 192-bar
tower take minutes; here a Cholesky factor of ``X^T X`` and a sparse LU of the KKT matrix take
milliseconds. Each falls back to the dense, rank-revealing path when the factorization shows
(near-)dependent rows or an ill-conditioned matrix, as the dense code did: SVD least squares on X
itself (never on ``X^T X``, whose condition number is cond(X)^2), and for the KKT system a dense
symmetric solve, then SVD least squares. The caller can count the fallbacks: :class:`BarGram`
says which path it took in ``dense``, :func:`kkt_solve` adds to a ``counts`` mapping.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg

__all__ = ["bar_columns", "BarGram", "kkt_solve"]

#: A Cholesky pivot d_i with d_i / G_ii below this marks bar i as (nearly) dependent on the
#: ones before it (the sine squared of its angle to their span): use least squares instead.
_PIVOT_TOL = 1e-8


def bar_columns(bar_nodes: np.ndarray, q: np.ndarray, index: np.ndarray) -> scipy.sparse.csc_matrix:
    """The bar columns ``H_b q`` on the free coordinates, sparse (nf, n_bars).

    `index` (3n,) maps a coordinate to its free index, -1 for a fixed one. Column b holds
    ``-(n_j - n_i)`` on node i's free rows and ``+(n_j - n_i)`` on node j's, like
    :func:`tenscontrol.mechanics.geometry.member_columns`.
    """
    N = q.reshape(-1, 3)
    d = N[bar_nodes[:, 1]] - N[bar_nodes[:, 0]]
    rows = index[np.hstack([3 * bar_nodes[:, :1] + np.arange(3),
                            3 * bar_nodes[:, 1:] + np.arange(3)])].ravel()
    vals = np.hstack([-d, d]).ravel()
    cols = np.repeat(np.arange(len(bar_nodes)), 6)
    keep = rows >= 0
    nf = int(index.max(initial=-1)) + 1
    return scipy.sparse.csc_matrix((vals[keep], (rows[keep], cols[keep])),
                                   shape=(nf, len(bar_nodes)))


class BarGram:
    """Solves with the normal equations ``G = X^T X`` of the bar columns X (nf, n_bars).

    Bars with no free end (a zero column) take 0. `dense` is None when G factored well;
    otherwise the solves are least squares on the dense X (minimum norm), as before.
    """

    def __init__(self, X: scipy.sparse.csc_matrix):
        self.X = X
        G = (X.T @ X).toarray()
        self.active = np.diag(G) > 0
        Ga = G[np.ix_(self.active, self.active)]
        self.factor = None
        if Ga.size:
            try:
                c, low = scipy.linalg.cho_factor(Ga, lower=True, check_finite=False)
                if np.min(np.diag(c) ** 2 / np.diag(Ga)) > _PIVOT_TOL:
                    self.factor = (c, low)
            except np.linalg.LinAlgError:
                pass
        self.dense = None if self.factor is not None or not Ga.size else X.toarray()

    def _solve(self, b: np.ndarray) -> np.ndarray:
        x = np.zeros(self.X.shape[1])
        if self.factor is not None:
            x[self.active] = scipy.linalg.cho_solve(self.factor, b[self.active],
                                                    check_finite=False)
        return x

    def min_norm_step(self, phi: np.ndarray) -> np.ndarray:
        """dq (nf,) of least norm with ``X^T dq = phi`` (the rows of inactive bars ignored).

        On the dense path the SVD least squares of ``X^T dq = phi`` itself: the normal
        equations would lose digits as cond(X)^2 where X is ill-conditioned, which is exactly
        when this path runs.
        """
        if self.dense is not None:
            return np.linalg.lstsq(self.dense.T, phi, rcond=None)[0]
        return self.X @ self._solve(phi)

    def least_squares(self, f: np.ndarray) -> np.ndarray:
        """psi (n_bars,) minimizing ``|f - X psi|`` (minimum norm if X is rank-deficient).

        The normal equations with one step of refinement on the residual: their error grows
        with cond(X)^2, the refined one about as least squares' own (X is well conditioned
        whenever the Cholesky factor passed its pivot test).
        """
        if self.dense is not None:
            return np.linalg.lstsq(self.dense, f, rcond=None)[0]
        psi = self._solve(self.X.T @ f)
        return psi + self._solve(self.X.T @ (f - self.X @ psi))


def kkt_solve(K: np.ndarray, C, r: np.ndarray, counts=None) -> np.ndarray:
    """x (nf,) of ``[[K, C], [C^T, 0]] [x; y] = [r; 0]``; K (nf, nf) dense, C (nf, m) sparse.

    A sparse LU. When it fails, or LAPACK's own test would call the matrix ill-conditioned
    (estimated reciprocal 1-norm condition number below eps), the dense solve of the same
    system, and least squares if that is singular too: a mechanism or slack strings.
    `counts` (a mapping of int, optional) gets ``counts["dense_kkt"] += 1`` when the dense
    path runs.
    """
    nf, m = C.shape
    if nf + m == 0:
        return np.zeros(0)
    A = scipy.sparse.bmat([[scipy.sparse.csc_matrix(K), C], [C.T, None]], format="csc") if m else (
        scipy.sparse.csc_matrix(K))
    b = np.concatenate([r, np.zeros(m)])
    try:
        lu = scipy.sparse.linalg.splu(A)
        x = lu.solve(b)
        inverse = scipy.sparse.linalg.LinearOperator(A.shape, matvec=lu.solve,
                                                     rmatvec=lambda v: lu.solve(v, trans="T"),
                                                     dtype=float)
        anorm = scipy.sparse.linalg.norm(A, 1)
        if np.all(np.isfinite(x)) and anorm * scipy.sparse.linalg.onenormest(inverse) < (
                1.0 / np.finfo(float).eps):
            return x[:nf]
    except RuntimeError:  # "Factor is exactly singular"
        pass
    if counts is not None:
        counts["dense_kkt"] += 1
    return _dense_kkt(A.toarray(), b)[:nf]


def _dense_kkt(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The dense symmetric solve, least squares when LAPACK finds A singular or ill-conditioned."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
        try:
            return scipy.linalg.solve(A, b, assume_a="sym")
        except (np.linalg.LinAlgError, scipy.linalg.LinAlgWarning):
            return np.linalg.lstsq(A, b, rcond=1e-13)[0]
