"""Envelope (variable-band) LDL^T of symmetric matrices, and the orderings that keep bands narrow.

The rigid-bar kernels solve, in every derivative evaluation and correction iteration, a
symmetric system whose nonzero pattern is fixed by the structure: the KKT system
``[M J^T; J 0]`` of the accelerations and the normal equations ``A A^T`` of the correction.
After a reverse Cuthill-McKee ordering (computed once per structure, in Python) the nonzeros of
row i lie in columns ``first[i] .. i``; an LDL^T without pivoting fills only inside this
envelope, so the factorization costs ``sum_i (i - first[i])^2`` flops and the storage
``N (w + 1)`` numbers, w = max(i - first[i]): linear in N for a bounded band (a tower).

Storage: ``A[i, w - (i - j)]`` holds entry (i, j) of the lower triangle, ``first[i] <= j <= i``;
the diagonal is column w. :func:`ldl_factor` overwrites it with the unit lower factor L
(strictly lower part) and D (column w).

No pivoting is safe for the two systems the kernels factor:

- ``A A^T`` is positive definite when A has full row rank;
- the KKT system when every constraint row comes after the coordinates it touches and J has
  full row rank: each leading block is then itself a KKT block with a positive definite mass
  part and a full-rank constraint part, hence nonsingular, and its pivots are positive on
  coordinates and negative on constraints.

:func:`ldl_factor` checks exactly that (sign of each pivot and its size relative to the terms
it was formed from) and reports the first row that fails, so a caller can fall back to a
rank-revealing dense solve when constraints become (nearly) dependent during motion.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse
from numba import njit
from scipy.sparse.csgraph import reverse_cuthill_mckee

from tenscontrol.mechanics.kernels.cache import CACHE

__all__ = ["ldl_factor", "ldl_solve", "node_order", "envelope", "band_matrix", "dense_from_band"]


# error_model="numpy": the divisions by pivots skip Python's zero-division check (a zero pivot
# is caught by the pivot test before it is used); flat indexing avoids 2-D wraparound checks.
# Together about 25 % off the factorization, the largest cost of a tower's derivative.
@njit(cache=CACHE, error_model="numpy")
def ldl_factor(A, first, negative, tol):
    """LDL^T of the symmetric envelope matrix `A` (N, w+1), in place, without pivoting.

    Parameters
    ----------
    A : ndarray (N, w+1), C-contiguous
        Lower envelope, ``A[i, w - (i - j)]`` = entry (i, j); overwritten by L and D.
    first : ndarray of int64 (N,)
        First column of each row's envelope.
    negative : ndarray of bool (N,)
        Rows whose pivot must be negative (the constraint rows of a KKT system).
    tol : float
        A pivot d_i fails when its sign is wrong or ``|d_i| <= tol * (|A_ii| + sum_k |L_ik^2
        d_k|)``: the row is then (nearly) a combination of the rows before it.

    Returns
    -------
    int
        -1 on success, else the first row that failed (A is then partly overwritten).
    """
    n = A.shape[0]
    w = A.shape[1] - 1
    a = A.reshape(-1)
    for i in range(n):
        fi = first[i]
        ri = i * w + w      # a[ri + j] is entry (i, j)
        # row i holds v_k = L_ik d_k while it is being formed
        for j in range(fi, i):
            rj = j * w + w
            s = a[ri + j]
            for k in range(max(fi, first[j]), j):
                s -= a[ri + k] * a[rj + k]
            a[ri + j] = s
        d = a[ri + i]
        scale = abs(d)
        for k in range(fi, i):
            v = a[ri + k]
            lik = v / a[k * w + w + k]
            t = v * lik
            d -= t
            scale += abs(t)
            a[ri + k] = lik
        if (d < 0.0) != negative[i] or abs(d) <= tol * scale or d == 0.0:
            return i
        a[ri + i] = d
    return -1


@njit(cache=CACHE, error_model="numpy")
def ldl_solve(A, first, x):
    """Solve (L D L^T) x = b in place, with `A` as left by :func:`ldl_factor`; x (N,) holds b."""
    n = A.shape[0]
    w = A.shape[1] - 1
    a = A.reshape(-1)
    for i in range(n):
        ri = i * w + w
        s = x[i]
        for k in range(first[i], i):
            s -= a[ri + k] * x[k]
        x[i] = s
    for i in range(n):
        x[i] /= a[i * w + w + i]
    for i in range(n - 1, -1, -1):
        ri = i * w + w
        xi = x[i]
        for k in range(first[i], i):
            x[k] -= a[ri + k] * xi


def node_order(n_nodes: int, edges) -> np.ndarray:
    """Reverse Cuthill-McKee order (n_nodes,) of the graph of `edges` (pairs of nodes)."""
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    g = scipy.sparse.coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])),
                                shape=(n_nodes, n_nodes)).tocsr()
    g = (g + g.T).tocsr()
    return np.asarray(reverse_cuthill_mckee(g, symmetric_mode=True), dtype=np.int64)


def envelope(n: int, rows, cols) -> np.ndarray:
    """first (n,) of the lower envelope holding the entries (rows[k], cols[k]) and the diagonal."""
    first = np.arange(n, dtype=np.int64)
    r, c = np.maximum(rows, cols), np.minimum(rows, cols)
    np.minimum.at(first, np.asarray(r, dtype=np.int64), np.asarray(c, dtype=np.int64))
    return first


def band_matrix(n: int, first: np.ndarray, rows, cols, values) -> np.ndarray:
    """The envelope storage (n, w+1) of the symmetric matrix with these lower entries (summed)."""
    w = int(np.max(np.arange(n) - first)) if n else 0
    A = np.zeros((n, w + 1))
    r, c = np.maximum(rows, cols), np.minimum(rows, cols)
    np.add.at(A, (r, w - (r - c)), values)
    return A


def dense_from_band(A: np.ndarray) -> np.ndarray:
    """The full symmetric matrix (N, N) of an envelope storage (for tests and small checks)."""
    n, w = A.shape[0], A.shape[1] - 1
    out = np.zeros((n, n))
    for i in range(n):
        for c in range(max(0, w - i), w + 1):
            out[i, i - (w - c)] = A[i, c]
    return out + np.tril(out, -1).T
