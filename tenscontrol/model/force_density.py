"""The force density matrix and its eigenproblems, sparse: memory and work grow with the members.

``D = C^T diag(w) C`` (n x n) has four entries per member, so it is built as a scipy.sparse
matrix in O(m). Its eigenpairs next to zero are found densely up to :data:`DENSE_NODES` nodes
(exact and fast there) and by shift-invert Lanczos (ARPACK, a deterministic start vector) above.
``D 1 = 0`` for any densities, so the ones vector is always in the null space: the eigenpairs
wanted by form-finding are those orthogonal to it.
"""

from __future__ import annotations

import numpy as np
import scipy.optimize
import scipy.sparse
import scipy.sparse.linalg

__all__ = ["DENSE_NODES", "adjust", "density_matrix", "largest_eigenvalue", "nontrivial_eigenpairs",
           "null_count"]

#: Up to this many nodes the eigenproblems are solved densely; sparse above.
DENSE_NODES = 300


def density_matrix(n: int, pairs: np.ndarray, w: np.ndarray) -> scipy.sparse.csr_matrix:
    """``D = C^T diag(w) C`` (n, n), sparse, for members `pairs` (m, 2) of densities `w` (m,)."""
    i, j = pairs[:, 0], pairs[:, 1]
    rows, cols = np.concatenate([i, j, i, j]), np.concatenate([i, j, j, i])
    return scipy.sparse.csr_matrix((np.concatenate([w, w, -w, -w]), (rows, cols)), shape=(n, n))


def _start(n: int) -> np.ndarray:
    """ARPACK's start vector: fixed (its own is random), and not the ones vector."""
    return np.cos(0.7 * np.arange(n)) + 0.5


def largest_eigenvalue(D) -> float:
    """The largest eigenvalue magnitude of the symmetric D (a scale for relative tolerances):
    exact up to :data:`DENSE_NODES` nodes; above, Gershgorin's bound, the largest row sum of
    magnitudes (at most twice the eigenvalue for a connected D of members of one sign; Lanczos
    converges slowly on the clustered top of a large structure's spectrum)."""
    if D.shape[0] <= DENSE_NODES:
        return float(np.abs(np.linalg.eigvalsh(D.toarray())).max())
    return float(abs(D).sum(axis=1).max())


def _near_zero(D, k: int):
    """The `k` eigenpairs of the sparse symmetric D nearest zero (shift-invert Lanczos)."""
    scale = abs(D).sum(axis=1).max()  # >= every eigenvalue's magnitude (Gershgorin)
    # a shift just off zero: D itself is singular, and the wanted eigenvalues stay far apart
    # from the rest after the inversion
    return scipy.sparse.linalg.eigsh(D.tocsc(), k=k, sigma=-1e-8 * scale, which="LM",
                                     v0=_start(D.shape[0]))


def nontrivial_eigenpairs(D, count: int):
    """The `count` eigenpairs of D of least magnitude on the complement of the ones vector.

    Returns the eigenvalues (count,) in order of magnitude and orthonormal eigenvectors
    (n, count), each orthogonal to the ones vector. Fewer when n - 1 < count.
    """
    n = D.shape[0]
    count = min(count, n - 1)
    if n <= DENSE_NODES:
        # (shift / n) 1 1^T moves the ones vector's eigenvalue beyond the spectrum
        shift = 2.0 * abs(D).sum(axis=1).max() + 1.0
        w, V = np.linalg.eigh(D.toarray() + shift / n)
    else:
        _, V = _near_zero(D, min(count + 1, n - 1))
        # Rayleigh-Ritz on the span found, with the ones vector projected out of it
        U, s, _ = np.linalg.svd(V - V.mean(axis=0), full_matrices=False)
        U = U[:, s > 1e-6]
        w, Y = np.linalg.eigh(U.T @ (D @ U))
        V = U @ Y
    order = np.argsort(np.abs(w))[:count]
    return w[order], V[:, order]


def null_count(D, tol: float) -> int:
    """How many eigenvalues of D are within `tol` of zero (counted among the 8 nearest zero
    above :data:`DENSE_NODES` nodes)."""
    n = D.shape[0]
    if n <= DENSE_NODES:
        return n - int(np.linalg.matrix_rank(D.toarray(), tol=tol))
    return int((np.abs(_near_zero(D, min(8, n - 1))[0]) <= tol).sum())


def adjust(n: int, pairs: np.ndarray, w: np.ndarray, groups) -> np.ndarray:
    """`w` with the common density of each member group in `groups` (int arrays) solved for, so
    that D has three zero eigenvalues beyond the ones vector's (rank n - 4)."""
    w = w.copy()

    def fun(x):
        for g, v in zip(groups, x):
            w[g] = v
        D = density_matrix(n, pairs, w)
        scale = np.abs(w).max()
        return np.sort(nontrivial_eigenpairs(D, 3)[0]) / scale  # sorted: a smooth order

    x = scipy.optimize.least_squares(fun, np.array([w[g].mean() for g in groups])).x
    for _ in range(8):  # Gauss-Newton polish: least_squares stops at its relative tolerances
        r = fun(x)
        h = 1e-7 * np.maximum(np.abs(x), 1e-3)
        Jac = np.column_stack([(fun(x + h[i] * e) - fun(x - h[i] * e)) / (2 * h[i])
                               for i, e in enumerate(np.eye(len(x)))])
        x = x - np.linalg.lstsq(Jac, r, rcond=None)[0]
    fun(x)
    return w
