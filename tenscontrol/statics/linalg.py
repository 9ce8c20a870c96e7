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
import scipy.sparse.csgraph
import scipy.sparse.linalg

__all__ = ["bar_columns", "BarGram", "MemberMatrices", "Pattern", "equilibrated", "kkt_factor",
           "kkt_solve", "sparse_kkt_solve", "unpivoted_lu"]

#: A Cholesky pivot d_i with d_i / G_ii below this marks bar i as (nearly) dependent on the
#: ones before it (the sine squared of its angle to their span): use least squares instead.
_PIVOT_TOL = 1e-8
#: Sweeps of the symmetric Ruiz scaling (:func:`equilibrated`); each takes the largest entry
#: of every row to within a square root of 1. Three leave the rows of a 768-bar steel tower's
#: KKT matrix within a factor 8 of 1 and its condition estimate within 25 % of eight sweeps'
#: (3.4e10 against 4.3e10), far from the 1/eps the test looks for, at half the cost.
_RUIZ_SWEEPS = 3
#: Blocks of the 1-norm estimate of the inverse (scipy's onenormest `t`): one gave the same
#: estimate as two on the steel towers' KKT matrices, in a third of the solves.
_NORMEST_BLOCKS = 1
#: A matrix whose estimated 1-norm condition number (after the scaling) exceeds this is taken
#: as singular: LAPACK's own test (reciprocal condition number below eps).
_SINGULAR_COND = 1.0 / np.finfo(float).eps


def equilibrated(A: scipy.sparse.spmatrix):
    """(D A D as CSC, d): the symmetric A scaled by D = diag(d) > 0 so that every row and
    column has its largest entry near 1 (Ruiz's iteration, symmetric).

    The KKT matrices mix stiffnesses (1e7 N/m for a steel string) with bar columns (about
    1 m), and unit constraint rows: unscaled, their 1-norm condition number is 1e14-1e16 on a
    steel tower that is well conditioned in the scaled units (1e8), and the constraint pivots
    of an ``L D L^T`` (-c^T K^{-1} c, 1e-7) fall below any pivot test relative to max|A|. A
    congruence D A D keeps the inertia (Sylvester), so inertia counts are unchanged, and
    ``A x = b`` is ``(D A D) (D^{-1} x) = D b``.
    """
    A = scipy.sparse.csc_matrix(A)
    A.sum_duplicates()
    n = A.shape[0]
    cols = np.repeat(np.arange(n), np.diff(A.indptr))
    size = np.abs(A.data)
    filled = np.diff(A.indptr) > 0
    starts = A.indptr[:-1][filled]
    d = np.ones(n)
    for _ in range(_RUIZ_SWEEPS):
        # on the stored entries (CSC: each column's entries are contiguous); an empty
        # column (none in a KKT matrix with independent constraints) keeps its scale
        big = np.ones(n)
        big[filled] = np.maximum.reduceat(size * d[A.indices] * d[cols], starts)
        d /= np.sqrt(np.where(big > 0, big, 1.0))
    B = scipy.sparse.csc_matrix((A.data * d[A.indices] * d[cols], A.indices, A.indptr),
                                shape=A.shape)
    return B, d


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


def unpivoted_lu(A: scipy.sparse.csc_matrix, permc_spec: str):
    """SuperLU of the symmetric A in the symmetric order `permc_spec` without pivoting, so
    that U's diagonal holds the pivots of ``A = L D L^T``; None when A is exactly singular
    or SuperLU had to exchange rows anyway."""
    try:
        lu = scipy.sparse.linalg.splu(A, permc_spec=permc_spec, diag_pivot_thresh=0.0,
                                      options={"SymmetricMode": True})
    except RuntimeError:  # "Factor is exactly singular"
        return None
    return lu if np.array_equal(lu.perm_r, lu.perm_c) else None


def _sparse_cholesky(G: scipy.sparse.csc_matrix, diagonal: np.ndarray):
    """A sparse LU of the symmetric positive definite G without pivoting, or None.

    With a symmetric fill-reducing order and no pivoting, SuperLU's U has the pivots
    ``d_i = c_ii^2`` of the Cholesky factor of the reordered G on its diagonal; a pivot below
    _PIVOT_TOL of its diagonal entry (the sine squared of the bar's angle to the span of the
    bars before it), a nonpositive one or a row exchange means (nearly) dependent bars.
    """
    lu = unpivoted_lu(G, "MMD_AT_PLUS_A")
    if lu is None:
        return None
    inverse = np.empty_like(lu.perm_c)
    inverse[lu.perm_c] = np.arange(lu.perm_c.size)
    pivots = lu.U.diagonal()
    if not np.all(pivots / diagonal[inverse] > _PIVOT_TOL):
        return None
    return lu


class _BandedCholesky:
    """The Cholesky factor of a symmetric positive definite matrix in band storage, after a
    bandwidth-reducing permutation (LAPACK pbtrf through scipy): O(n b^2) for bandwidth b."""

    def __init__(self, band: np.ndarray, order: np.ndarray, diagonal: np.ndarray):
        self.order = order
        self.factor = scipy.linalg.cholesky_banded(band, lower=False, check_finite=False)
        self.ok = bool(np.all(self.factor[-1] ** 2 / diagonal > _PIVOT_TOL))

    def solve(self, b: np.ndarray) -> np.ndarray:
        x = np.empty_like(b)
        x[self.order] = scipy.linalg.cho_solve_banded((self.factor, False), b[self.order],
                                                      check_finite=False)
        return x


class _Columns:
    """A sparse (nf, n) matrix held as its COO entries, for the products ``X @ v`` and
    ``X.T @ f`` of a :class:`BarGram` on a banded factor: a snapshot of the refilled pattern
    without a scipy.sparse copy (whose construction checks were a third of a trial's cost)."""

    def __init__(self, rows: np.ndarray, cols: np.ndarray, values: np.ndarray,
                 shape: tuple[int, int]):
        self.rows, self.cols, self.values, self.shape = rows, cols, values, shape

    @property
    def T(self) -> "_Columns":
        return _Columns(self.cols, self.rows, self.values, self.shape[::-1])

    def __matmul__(self, v: np.ndarray) -> np.ndarray:
        return np.bincount(self.rows, weights=self.values * v[self.cols],
                           minlength=self.shape[0])


class BarGram:
    """Solves with the normal equations ``G = X^T X`` of the bar columns X (nf, n_bars).

    Bars with no free end (a zero column) take 0. `dense` is None when G factored well;
    otherwise the solves are least squares on the dense X (minimum norm), as before.
    """

    def __init__(self, X: scipy.sparse.csc_matrix, G: scipy.sparse.csc_matrix | None = None,
                 factor=None):
        self.X = X
        if factor is not None:  # a factor of the whole G that passed the pivot test
            self.active, self.factor, self.dense = np.ones(X.shape[1], bool), factor, None
            return
        G = scipy.sparse.csc_matrix(X.T @ X) if G is None else G
        diagonal = G.diagonal()
        self.active = diagonal > 0
        if not self.active.all():
            G = G[self.active][:, self.active].tocsc()
            diagonal = diagonal[self.active]
        self.factor = _sparse_cholesky(G, diagonal) if diagonal.size else None
        self.dense = (None if self.factor is not None or not diagonal.size
                      else X.toarray())

    def _solve(self, b: np.ndarray) -> np.ndarray:
        x = np.zeros(self.X.shape[1])
        if self.factor is not None:
            x[self.active] = self.factor.solve(b[self.active])
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
    return sparse_kkt_solve(A, r, counts)


def sparse_kkt_solve(A: scipy.sparse.csc_matrix, r: np.ndarray, counts=None) -> np.ndarray:
    """x (nf,) of ``A [x; y] = [r; 0]`` for the assembled sparse KKT matrix A, nf = r.size:
    the sparse LU with the fallbacks of :func:`kkt_solve`."""
    return kkt_factor(A, r.size, counts)(r)


def kkt_factor(A: scipy.sparse.csc_matrix, nf: int, counts=None, guarded: bool = True):
    """A function r (nf,) -> x (nf,) solving ``A [x; y] = [r; 0]`` with one factorization.

    The sparse LU of A scaled by :func:`equilibrated`; when it fails, or LAPACK's own test
    would call the scaled A ill-conditioned (estimated reciprocal 1-norm condition number
    below eps), the dense symmetric solve of
    each right-hand side, least squares where that is singular (`counts["dense_kkt"]` + 1).

    Without `guarded`, the sparse LU of A as it is, and the dense path only where that fails
    or gives a non-finite x: no scaling and no condition estimate (together as costly as the
    factorization), for a caller that judges each solution by the residual it leaves (the
    path's corrector: a step from an ill-conditioned system fails there and is shortened).
    """
    size = A.shape[0]
    if size == 0:
        return lambda r: np.zeros(0)

    def dense(r):
        if counts is not None:
            counts["dense_kkt"] += 1
        return _dense_kkt(A.toarray(), np.concatenate([r, np.zeros(size - nf)]))[:nf]
    if not guarded:
        try:
            lu = scipy.sparse.linalg.splu(A)
        except RuntimeError:  # "Factor is exactly singular"
            return dense

        def plain(r):
            x = lu.solve(np.concatenate([r, np.zeros(size - nf)]))
            return x[:nf] if np.all(np.isfinite(x)) else dense(r)
        return plain
    B, d = equilibrated(A)  # the condition test in the scaled units (see equilibrated)
    try:
        lu = scipy.sparse.linalg.splu(B)
        inverse = scipy.sparse.linalg.LinearOperator(B.shape, matvec=lu.solve,
                                                     rmatvec=lambda v: lu.solve(v, trans="T"),
                                                     dtype=float)
        if scipy.sparse.linalg.norm(B, 1) * scipy.sparse.linalg.onenormest(
                inverse, t=_NORMEST_BLOCKS) < _SINGULAR_COND:
            def solve(r):
                x = d * lu.solve(d * np.concatenate([r, np.zeros(size - nf)]))
                return x[:nf] if np.all(np.isfinite(x)) else dense(r)
            return solve
    except RuntimeError:  # "Factor is exactly singular"
        pass
    return dense


def _dense_kkt(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The dense symmetric solve, least squares when LAPACK finds A singular or ill-conditioned."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
        try:
            return scipy.linalg.solve(A, b, assume_a="sym")
        except (np.linalg.LinAlgError, scipy.linalg.LinAlgWarning):
            return np.linalg.lstsq(A, b, rcond=1e-13)[0]


class Pattern:
    """A sparse matrix (CSC) whose sparsity is fixed once and whose values are refilled.

    Built from the COO coordinates `rows`, `cols` of every contribution (duplicates add up).
    :meth:`fill` sums the contributions' values into the stored entries in place (one
    ``np.bincount``): no index arrays are sorted or checked again, which scipy.sparse's
    constructors did on every trial point of the line search.
    """

    def __init__(self, rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]):
        key = np.asarray(cols, np.int64) * shape[0] + np.asarray(rows, np.int64)
        unique, self.slot = np.unique(key, return_inverse=True)
        indptr = np.zeros(shape[1] + 1, np.int64)
        indptr[1:] = np.cumsum(np.bincount(unique // shape[0], minlength=shape[1]))
        self.matrix = scipy.sparse.csc_matrix(
            (np.zeros(unique.size), (unique % shape[0]).astype(np.int32),
             indptr.astype(np.int32)), shape=shape)

    def fill(self, values: np.ndarray) -> scipy.sparse.csc_matrix:
        """The matrix with the contributions `values` (in the order of the coordinates)."""
        self.matrix.data[:] = np.bincount(self.slot, weights=values,
                                          minlength=self.matrix.nnz)
        return self.matrix


class MemberMatrices:
    """The static solve's sparse matrices on the free coordinates, with fixed patterns.

    For members `pairs` (m, 2) (strings, then bars) and the free index `index` (3n,) of each
    coordinate (-1 if fixed): the member forces, the bar columns X (nf, active bars), their
    normal equations ``X^T X`` and the KKT matrix ``[[K + mu I, C], [C^T, 0]]`` with
    ``C = [X, gauge]`` (X only for rigid bars). ``K = sum_k (w_k I + c_k d_k d_k^T)`` over the
    3x3 node blocks of member k (d_k = n_j - n_i), the tangent stiffness of
    :func:`tenscontrol.tangent_stiffness` restricted to the free coordinates. Every matrix
    costs O(members) to refill, nothing is assembled dense.
    """

    def __init__(self, strings: np.ndarray, bars: np.ndarray, index: np.ndarray,
                 gauge: np.ndarray, rigid: bool):
        self.pairs = np.vstack([strings, bars]).astype(np.int64).reshape(-1, 2)
        self.n_strings, self.index, self.nf = len(strings), index, gauge.shape[0]
        self.gauge, self.rigid = gauge, rigid
        nb = len(bars)
        # bar columns: the six coordinates of each bar that are free
        rows = index[np.hstack([3 * bars[:, :1] + np.arange(3),
                                3 * bars[:, 1:] + np.arange(3)])].ravel() if nb else np.zeros(0, int)
        self.x_keep = rows >= 0
        cols = np.repeat(np.arange(nb), 6)[self.x_keep]
        self.bar_active = np.bincount(cols, minlength=nb) > 0  # a bar fixed at both ends: no row
        position = np.cumsum(self.bar_active) - 1
        self.x_rows, self.x_cols = rows[self.x_keep], position[cols]
        self.nba = int(self.bar_active.sum())
        self.X = Pattern(self.x_rows, self.x_cols, (self.nf, self.nba))
        self._gram_pattern()
        self._kkt_pattern()

    def _gram_pattern(self):
        """X^T X: a product for each two entries of X in the same row."""
        order = np.argsort(self.x_rows, kind="stable")
        starts = np.searchsorted(self.x_rows[order], np.arange(self.nf + 1))
        first, second = [], []
        for a, b in zip(starts[:-1], starts[1:]):
            e = order[a:b]
            first.append(np.repeat(e, e.size))
            second.append(np.tile(e, e.size))
        self.g_first = np.concatenate(first) if first else np.zeros(0, int)
        self.g_second = np.concatenate(second) if second else np.zeros(0, int)
        self.G = Pattern(self.x_cols[self.g_first], self.x_cols[self.g_second],
                         (self.nba, self.nba))
        self._band_pattern()

    def _band_pattern(self):
        """Where each entry of X^T X goes in the upper band storage of its reverse
        Cuthill-McKee reordering (a tower's bars, numbered stage by stage or not, get a
        bandwidth of a few bars)."""
        n = self.nba
        pattern = self.G.matrix.copy()
        pattern.data[:] = 1.0
        self.order = (scipy.sparse.csgraph.reverse_cuthill_mckee(pattern.tocsr(),
                                                                 symmetric_mode=True)
                      if n else np.zeros(0, int))
        rank = np.empty(n, np.int64)
        rank[self.order] = np.arange(n)
        i = rank[self.x_cols[self.g_first]]
        j = rank[self.x_cols[self.g_second]]
        self.band_keep = i <= j
        self.bandwidth = int((j - i)[self.band_keep].max(initial=0))
        self.band_flat = ((self.bandwidth + i - j) * n + j)[self.band_keep]

    def _kkt_pattern(self):
        """Rows and columns of K's member blocks, the shift, C and C^T in the KKT matrix."""
        i3 = 3 * self.pairs[:, :1] + np.arange(3)             # (m, 3) coordinates of node i
        j3 = 3 * self.pairs[:, 1:] + np.arange(3)
        blocks = []
        for a, b in ((i3, i3), (j3, j3), (i3, j3), (j3, i3)):
            blocks.append((np.repeat(a, 3, axis=1), np.tile(b, (1, 3))))  # (m, 9) each
        r = self.index[np.stack([blk[0] for blk in blocks], axis=1)]  # (m, 4, 9)
        c = self.index[np.stack([blk[1] for blk in blocks], axis=1)]
        self.k_keep = (r >= 0) & (c >= 0)
        rows, cols = [r[self.k_keep]], [c[self.k_keep]]
        nf, m = self.nf, self.nba if self.rigid else 0
        rows.append(np.arange(nf))
        cols.append(np.arange(nf))
        g_rows, g_cols = np.meshgrid(np.arange(nf), np.arange(self.gauge.shape[1]),
                                     indexing="ij")
        pairs = [(g_rows.ravel(), nf + m + g_cols.ravel())]
        if m:
            pairs.insert(0, (self.x_rows, nf + self.x_cols))
        for rr, cc in pairs:
            rows += [rr, cc]
            cols += [cc, rr]
        size = nf + m + self.gauge.shape[1]
        self.K = Pattern(np.concatenate(rows), np.concatenate(cols), (size, size))

    def differences(self, q: np.ndarray) -> np.ndarray:
        """d_k = n_j - n_i (m, 3) of every member (strings, then bars) at q."""
        N = q.reshape(-1, 3)
        return N[self.pairs[:, 1]] - N[self.pairs[:, 0]]

    def forces(self, d: np.ndarray, density: np.ndarray) -> np.ndarray:
        """``-sum_k w_k Yhat_k q`` (3n,): each member pulls node i by w d and node j by -w d."""
        w = density[:, None] * d
        n3 = 3 * (int(self.index.size) // 3)
        coords = np.concatenate([3 * self.pairs[:, :1] + np.arange(3),
                                 3 * self.pairs[:, 1:] + np.arange(3)]).ravel()
        return np.bincount(coords, weights=np.concatenate([w, -w]).ravel(), minlength=n3)

    def bar_columns(self, d_bars: np.ndarray) -> scipy.sparse.csc_matrix:
        """X (nf, active bars) at the bar differences `d_bars` (n_bars, 3); refilled in place."""
        return self.X.fill(np.hstack([-d_bars, d_bars]).ravel()[self.x_keep])

    def gram(self, X: scipy.sparse.csc_matrix) -> BarGram:
        """The normal equations of the (just filled) bar columns X, on the fixed pattern."""
        values = self.X.matrix.data[self.X.slot]  # X's entries in COO order
        products = values[self.g_first] * values[self.g_second]
        n = self.nba
        band = np.bincount(self.band_flat, weights=products[self.band_keep],
                           minlength=(self.bandwidth + 1) * n).reshape(-1, n)
        diagonal = band[-1]
        if n and np.all(diagonal > 0) and self.bandwidth < max(n // 4, 8):
            try:
                factor = _BandedCholesky(band, self.order, diagonal)
                if factor.ok:
                    return BarGram(_Columns(self.x_rows, self.x_cols, values.copy(),
                                            X.shape), factor=factor)
            except np.linalg.LinAlgError:  # not positive definite: the general path decides
                pass
        return BarGram(X.copy(), self.G.fill(products).copy())

    def kkt(self, d: np.ndarray, density: np.ndarray, material: np.ndarray, mu: float,
            X=None) -> scipy.sparse.csc_matrix:
        """The KKT matrix at the member differences d (m, 3), geometric densities w (m,),
        material coefficients c (m,) and shift mu; X the bar columns (rigid bars)."""
        B = (density[:, None, None] * np.eye(3)
             + material[:, None, None] * d[:, :, None] * d[:, None, :]).reshape(-1, 1, 9)
        values = [np.concatenate([B, B, -B, -B], axis=1)[self.k_keep], np.full(self.nf, mu)]
        if self.rigid and self.nba:
            x = X.data[self.X.slot]
            values += [x, x]
        if self.gauge.size:
            values += [self.gauge.ravel(), self.gauge.ravel()]
        return self.K.fill(np.concatenate(values))

    def diagonal(self, d: np.ndarray, density: np.ndarray, material: np.ndarray) -> np.ndarray:
        """The diagonal of K on the free coordinates (nf,)."""
        block = density[:, None] + material[:, None] * d ** 2           # (m, 3)
        coords = np.concatenate([3 * self.pairs[:, :1] + np.arange(3),
                                 3 * self.pairs[:, 1:] + np.arange(3)]).ravel()
        full = np.bincount(coords, weights=np.concatenate([block, block]).ravel(),
                           minlength=self.index.size)
        return full[self.index >= 0]
