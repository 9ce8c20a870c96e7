"""Compressible bars at scale: the mass matrix and the Newton matrices in band storage.

The dense path (:mod:`~tenscontrol.mechanics.compressible.kernels`) applies the (3n, 3n)
inverse mass in every derivative and builds a dense (6n+1)^2 Jacobian that the Radau integrator
factors twice, O(n^2) and O(n^3) per call. Bars and strings couple only their two end nodes, so
after a reverse Cuthill-McKee order of the nodes (:func:`~tenscontrol.mechanics.kernels.banded.node_order`,
once per structure) every matrix of the model lies in a band of half-width w = 3 dn + 2 (dn the
largest node distance of a member in that order; 8-11 coordinates for a prism tower of any
height). Here:

- the accelerations solve M qdd = xi with an envelope LDL^T of M
  (:func:`~tenscontrol.mechanics.kernels.banded.ldl_factor`), factored once when M is constant, else per
  evaluation (a singular M falls back to the dense path, whose Cholesky or pseudo-inverse
  :func:`rhs` reports by its return code);
- the Jacobian is kept as its parts: M, B_q = d xi/dq - d(M qdd)/dq, B_qd = d xi/dqd (band, in the
  node order, fixed rows zero) and the work row pw. With J = [[0, I, 0], [W B_q, W B_qd, 0],
  [p_q, p_qd, 0]] (W = M^-1 on the free coordinates) the Newton system (c I - J) x = r, c real or
  complex, reduces by block elimination to
  ``K(c) x_q = M r_v + (c M - B_qd) r_q``, ``K(c) = c^2 M - c B_qd - B_q``,
  then ``x_v = c x_q - r_q`` and ``x_w = (r_w + p_q x_q + p_qd x_v) / c``. Fixed coordinates
  take identity rows of M and zero rows of B, which gives their exact x_q = (r_v / c + r_q) / c.

K(c) is not symmetric (damping and geometric terms) and is complex for Radau's complex
eigenvalue; it is factored by a band LU without pivoting, checked pivot by pivot. No pivoting
keeps the band (a pivoting band LU needs 3w+1 columns and LAPACK's per-call overhead); it is safe
here because -i K(c) for Radau's c = (ALPHA + i BETA)/h has the Hermitian part
2 ALPHA BETA/h^2 M + BETA/h C (C the symmetric damping), positive definite while h is below the
structure's slowest instability time, and K(GAMMA/h) is dominated by GAMMA^2/h^2 M likewise. A
pivot below 1e-12 of its row's size falls back to the dense LU (:class:`BandedJacobian`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.linalg
from numba import njit

from tenscontrol.mechanics.compressible import kernels as CK
from tenscontrol.mechanics.kernels.arrays import copy_into, copy_matrix
from tenscontrol.mechanics.kernels.banded import envelope, ldl_factor, ldl_solve, node_order
from tenscontrol.mechanics.kernels.cache import CACHE, INTERNAL
from tenscontrol.mechanics.kernels.records import HeldForceDensities

__all__ = ["BANDED_MIN_COORDINATES", "BandPattern", "BandedJacobian", "band_pattern", "rhs",
           "accelerations", "jacobian_parts", "energies", "k_factor", "k_solve"]

# Structures with at least this many coordinates (3n) take the band path in simulate(); below
# it the dense path's small fixed costs win (measured crossover in benchmarks/bench_scaling.py).
BANDED_MIN_COORDINATES = 60

_MASS_TOL = CK.MASS_PIVOT_TOL   # the relative pivot test of the dense path's mass LDL^T
_PIVOT_TOL = 1e-12    # relative pivot of K(c)'s LU below which the dense LU takes over


class BandPattern(NamedTuple):
    """Order and band storage of a compressible model, built once per model.

    Attributes
    ----------
    perm : ndarray of int64 (3n,)
        Coordinate at each band position (nodes in reverse Cuthill-McKee order, xyz within).
    pos : ndarray of int64 (3n,)
        Band position of each coordinate (the inverse of perm).
    free : ndarray of bool (3n,)
        Whether each coordinate (original numbering) is free.
    first : ndarray of int64 (3n,)
        Lower envelope of the mass matrix, in band positions.
    negative : ndarray of bool (3n,)
        All False: the pivots of M must be positive (the argument of ldl_factor).
    width : int
        Half-width w of the band of K(c), B_q, B_qd: entry (i, j) is stored at [i, w + j - i].
    mass0 : ndarray (3n, wm+1)
        Envelope storage of M0 on the free coordinates, identity on fixed ones [kg].
    mass0_factor : ndarray (3n, wm+1)
        Its LDL^T when the mass is constant, else empty (0, 0).
    kinetic : ndarray (3n, wm+1)
        Envelope storage of the whole M0 (fixed coordinates too), for the energy [kg].
    """

    perm: np.ndarray
    pos: np.ndarray
    free: np.ndarray
    first: np.ndarray
    negative: np.ndarray
    width: int
    mass0: np.ndarray
    mass0_factor: np.ndarray
    kinetic: np.ndarray


def _envelope_of(dense, perm, first):
    """Envelope storage (N, wm+1) of the symmetric dense matrix in the band order."""
    n = dense.shape[0]
    wm = int(np.max(np.arange(n) - first)) if n else 0
    P = dense[np.ix_(perm, perm)]
    A = np.zeros((n, wm + 1))
    for i in range(n):
        A[i, wm - (i - first[i]):] = P[i, first[i]:i + 1]
    return A


def band_pattern(model) -> BandPattern:
    """The :class:`BandPattern` of a :class:`~tenscontrol.mechanics.compressible.model.CompressibleBarModel`."""
    s, nq = model.structure, model.n_coordinates
    edges = np.vstack([s.bar_nodes.reshape(-1, 2), s.string_nodes.reshape(-1, 2)])
    order = node_order(s.n_nodes, edges)
    rank = np.empty(s.n_nodes, dtype=np.int64)
    rank[order] = np.arange(s.n_nodes)
    perm = (3 * order[:, None] + np.arange(3)).reshape(-1)
    pos = np.empty(nq, dtype=np.int64)
    pos[perm] = np.arange(nq)
    free = np.zeros(nq, dtype=np.bool_)
    free[model.free] = True
    # M couples the two nodes of a bar (bar blocks, and a(l) blocks when the mass varies)
    bn = s.bar_nodes.reshape(-1, 2)
    pairs = np.vstack([bn, np.column_stack([np.arange(s.n_nodes)] * 2)])
    r3 = np.arange(3)
    rows = (3 * rank[pairs[:, 0]][:, None, None] + r3[:, None] + 0 * r3).reshape(-1)
    cols = (3 * rank[pairs[:, 1]][:, None, None] + 0 * r3[:, None] + r3).reshape(-1)
    first = envelope(nq, rows, cols)
    dn = int(np.max(np.abs(rank[edges[:, 0]] - rank[edges[:, 1]]))) if len(edges) else 0
    width = 3 * dn + 2
    M0 = model.M0
    Mhat = np.where(np.outer(free, free), M0, 0.0) + np.diag((~free).astype(float))
    mass0 = _envelope_of(Mhat, perm, first)
    factor = np.zeros((0, 0))
    if model.const_mass:
        factor = mass0.copy()
        if ldl_factor(factor, first, np.zeros(nq, dtype=np.bool_), _MASS_TOL) >= 0:
            raise ValueError(f"{s.name}: the mass matrix is singular on the free coordinates; "
                             "give every free node mass")
    return BandPattern(perm, pos, free, first, np.zeros(nq, dtype=np.bool_), width, mass0,
                       factor, _envelope_of(M0, perm, first))


@njit(cache=CACHE, **INTERNAL)
def _mass_band(q, model, pat, A):
    """Envelope storage of M(q) on the free coordinates (identity on fixed ones) into A."""
    copy_matrix(A, pat.mass0)
    if model.mass_is_constant:
        return
    bi, bj, ba0, bra, bex, _, _ = model.bars
    pos, free, wm = pat.pos, pat.free, A.shape[1] - 1
    b = np.empty(3)
    for k in range(bi.shape[0]):
        if ba0[k] == 0.0 and bra[k] == 0.0:
            continue
        i3, j3 = 3 * bi[k], 3 * bj[k]
        for a in range(3):
            b[a] = q[j3 + a] - q[i3 + a]
        l2 = b[0] * b[0] + b[1] * b[1] + b[2] * b[2]
        a0 = ba0[k] + (bra[k] * np.sqrt(l2) ** bex[k] if bra[k] != 0.0 else 0.0)
        for r in range(3):
            for c in range(3):
                d = a0 * ((1.0 if r == c else 0.0) - b[r] * b[c] / l2)
                for u, v, sg in ((i3, i3, 1.0), (j3, j3, 1.0), (i3, j3, -1.0), (j3, i3, -1.0)):
                    x, y = u + r, v + c
                    px, py = pos[x], pos[y]
                    if free[x] and free[y] and px >= py:
                        A[px, wm - (px - py)] += sg * d


@njit(cache=CACHE)
def accelerations(q, qd, fext, model, pat, held, qdd, gamma, psi):
    """:func:`kernels.accelerations` with the band mass solve; (wdot [W], path): path 0 the band
    solve, 1 the dense Cholesky (the band LDL^T met a small pivot), 2 the dense pseudo-inverse."""
    nq = q.shape[0]
    xi = np.empty(nq)
    power = CK.forces(q, qd, fext, model, held, gamma, psi, xi)
    perm, free = pat.perm, pat.free
    x = np.empty(nq)
    for p in range(nq):
        a = perm[p]
        x[p] = xi[a] if free[a] else 0.0
    if model.mass_is_constant:
        ldl_solve(pat.mass0_factor, pat.first, x)
    else:
        A = np.empty_like(pat.mass0)
        _mass_band(q, model, pat, A)
        if ldl_factor(A, pat.first, pat.negative, _MASS_TOL) >= 0:
            # singular mass during motion ("paper" mode): the dense rank-safe path
            power, ok = CK.accelerations(q, qd, fext, model, held, qdd, gamma, psi)
            return power, 1 if ok else 2
        ldl_solve(A, pat.first, x)
    for p in range(nq):
        qdd[perm[p]] = x[p]
    return power, 0


@njit(cache=CACHE)
def rhs(y, fext, model, pat, dy):
    """dy = [qd; qdd; wdot] of y = [q; qd; w], as :func:`kernels.rhs`; returns the mass solve's
    path (0 band, 1 dense Cholesky, 2 pseudo-inverse: :func:`accelerations`)."""
    nq = (y.shape[0] - 1) // 2
    gamma = np.empty(model.members.i.shape[0])
    psi = np.empty(model.bars.i.shape[0])
    held = HeldForceDensities(gamma, psi, False, False)
    qdd = np.empty(nq)
    power, path = accelerations(y[:nq], y[nq:2 * nq], fext, model, pat, held, qdd, gamma, psi)
    copy_into(dy[:nq], y[nq:2 * nq])
    copy_into(dy[nq:2 * nq], qdd)
    dy[2 * nq] = power
    return path


@njit(cache=CACHE, **INTERNAL)
def _add_blocks(Sq, Sqd, ii, jj, pat, Bq, Bqd):
    """Add each member's [[D, -D], [-D, D]] to the band Bq, Bqd, skipping fixed rows."""
    pos, free, w = pat.pos, pat.free, pat.width
    for k in range(ii.shape[0]):
        i3, j3 = 3 * ii[k], 3 * jj[k]
        for r in range(3):
            for c in range(3):
                for u, v, sg in ((i3, i3, 1.0), (j3, j3, 1.0), (i3, j3, -1.0), (j3, i3, -1.0)):
                    x, y = u + r, v + c
                    if free[x]:
                        t = w + pos[y] - pos[x]
                        Bq[pos[x], t] += sg * Sq[k, r, c]
                        Bqd[pos[x], t] += sg * Sqd[k, r, c]


@njit(cache=CACHE)
def jacobian_parts(y, fext, model, pat, Mb, Bq, Bqd, pw):
    """The parts of the Jacobian at y: M, B_q, B_qd in band storage (3n, 2w+1), pw (6n,).

    Returns False when M(q) is singular (the caller then uses the dense Jacobian).
    """
    nq = (y.shape[0] - 1) // 2
    q, qd = y[:nq], y[nq:2 * nq]
    ns, nb = model.members.i.shape[0], model.bars.i.shape[0]
    gamma, psi, qdd = np.empty(ns), np.empty(nb), np.empty(nq)
    held = HeldForceDensities(gamma, psi, False, False)
    A = np.empty_like(pat.mass0)
    _mass_band(q, model, pat, A)
    if not model.mass_is_constant and ldl_factor(A.copy(), pat.first, pat.negative,
                                                 _MASS_TOL) >= 0:
        return False
    accelerations(q, qd, fext, model, pat, held, qdd, gamma, psi)
    Sq, Sqd = np.empty((ns, 3, 3)), np.empty((ns, 3, 3))
    Tq, Tqd = np.empty((nb, 3, 3)), np.empty((nb, 3, 3))
    CK.member_blocks(q, qd, qdd, model, held, gamma, psi, Sq, Sqd, Tq, Tqd, pw)
    for a in range(nq):
        pw[nq + a] += fext[a]
    Bq[:, :] = 0.0
    Bqd[:, :] = 0.0
    _add_blocks(Sq, Sqd, model.members.i, model.members.j, pat, Bq, Bqd)
    _add_blocks(Tq, Tqd, model.bars.i, model.bars.j, pat, Bq, Bqd)
    w, wm, first = pat.width, A.shape[1] - 1, pat.first
    Mb[:, :] = 0.0
    for i in range(nq):
        for j in range(first[i], i + 1):
            v = A[i, wm - (i - j)]
            Mb[i, w + j - i] = v
            Mb[j, w + i - j] = v
    return True


@njit(cache=CACHE, error_model="numpy")
def k_factor(Mb, Bq, Bqd, c, K):
    """K = c^2 M - c B_qd - B_q (band), then its LU without pivoting in place.

    Returns -1, or the first row whose pivot is below 1e-12 of the row's size (K is then
    partly overwritten).
    """
    n, wd = K.shape
    w = (wd - 1) // 2
    c2 = c * c
    scale = np.zeros(n)
    for i in range(n):
        for t in range(wd):
            v = c2 * Mb[i, t] - c * Bqd[i, t] - Bq[i, t]
            K[i, t] = v
            scale[i] += abs(v)
    for k in range(n):
        piv = K[k, w]
        if not abs(piv) > _PIVOT_TOL * scale[k]:
            return k
        hi = min(n, k + w + 1)
        for i in range(k + 1, hi):
            lik = K[i, w + k - i]
            if lik == 0.0:
                continue
            lik = lik / piv
            K[i, w + k - i] = lik
            for j in range(k + 1, hi):
                K[i, w + j - i] -= lik * K[k, w + j - k]
    return -1


@njit(cache=CACHE, error_model="numpy")
def k_solve(K, Mb, Bqd, pw, perm, c, r, x):
    """x = (c I - J)^-1 r (6n+1,) from the factors of :func:`k_factor` (block elimination)."""
    n, wd = K.shape
    w = (wd - 1) // 2
    nq = n
    b = np.empty(n, dtype=K.dtype)
    for i in range(n):      # M r_v + (c M - B_qd) r_q, in band order
        s = 0.0 * c
        for j in range(max(0, i - w), min(n, i + w + 1)):
            a = perm[j]
            t = w + j - i
            s += Mb[i, t] * (r[nq + a] + c * r[a]) - Bqd[i, t] * r[a]
        b[i] = s
    for i in range(n):      # L (unit lower)
        s = b[i]
        for j in range(max(0, i - w), i):
            s -= K[i, w + j - i] * b[j]
        b[i] = s
    for i in range(n - 1, -1, -1):   # U
        s = b[i]
        for j in range(i + 1, min(n, i + w + 1)):
            s -= K[i, w + j - i] * b[j]
        b[i] = s / K[i, w]
    xw = r[2 * nq]
    for i in range(n):
        a = perm[i]
        xq = b[i]
        xv = c * xq - r[a]
        x[a] = xq
        x[nq + a] = xv
        xw += pw[a] * xq + pw[nq + a] * xv
    x[2 * nq] = xw / c


@njit(cache=CACHE)
def energies(Y, model, pat):
    """Total energy [J] of each row of Y, as :func:`kernels.energies`."""
    nq = pat.perm.shape[0]
    A, first, perm = pat.kinetic, pat.first, pat.perm
    wm = A.shape[1] - 1
    out = np.empty(Y.shape[0])
    for t in range(Y.shape[0]):
        qd = Y[t, nq:2 * nq]
        e = 0.0
        for i in range(nq):
            vi = qd[perm[i]]
            s = 0.5 * A[i, wm] * vi
            for j in range(first[i], i):
                s += A[i, wm - (i - j)] * qd[perm[j]]
            e += s * vi
        out[t] = CK.energy_given(Y[t, :nq], qd, model, e)
    return out


class _BandSolver:
    """Solves (c I - J) x = b with the band LU of K(c)."""

    __slots__ = ("K", "parts", "c")

    def __init__(self, K, parts, c):
        self.K, self.parts, self.c = K, parts, c

    def solve(self, b):
        """x (6n+1,) of the dtype of c."""
        Mb, _, Bqd, pw, perm = self.parts
        x = np.empty(b.shape[0], dtype=self.K.dtype)
        k_solve(self.K, Mb, Bqd, pw, perm, self.c, b, x)
        return x


class _DenseSolver:
    """Solves (c I - J) x = b with a dense pivoted LU (the fallback of K(c)'s band LU)."""

    __slots__ = ("lu",)

    def __init__(self, J, c):
        self.lu = scipy.linalg.lu_factor(c * np.eye(J.shape[0]) - J, check_finite=False)

    def solve(self, b):
        return scipy.linalg.lu_solve(self.lu, b, check_finite=False)


class BandedJacobian:
    """The compressible model's Jacobian in structured form, for the Radau integrator.

    ``factor(c)`` (c real or complex) returns a solver whose ``solve(b)`` gives
    x = (c I - J)^-1 b (6n+1,) via the band LU of K(c) (module docstring); if that LU meets a
    small pivot, the dense J (from `dense`, a callable) is factored with partial pivoting, and
    ``counts["dense_lu_fallbacks"]`` (`counts` a mapping of int, optional) goes up by one.
    """

    __slots__ = ("parts", "dense", "shape", "counts")

    def __init__(self, Mb, Bq, Bqd, pw, perm, dense, counts=None):
        self.parts, self.dense = (Mb, Bq, Bqd, pw, perm), dense
        self.shape = (2 * Mb.shape[0] + 1,) * 2
        self.counts = counts

    def factor(self, c):
        """A solver of (c I - J) x = b; c is a Python float or complex."""
        Mb, Bq, Bqd, _, _ = self.parts
        if isinstance(c, complex):
            K = np.empty(Mb.shape, dtype=complex)
        else:
            K, c = np.empty(Mb.shape), float(c)
        if k_factor(Mb, Bq, Bqd, c, K) >= 0:
            if self.counts is not None:
                self.counts["dense_lu_fallbacks"] += 1
            return _DenseSolver(self.dense(), c)
        return _BandSolver(K, self.parts, c)

    def __repr__(self) -> str:
        return f"BandedJacobian(shape={self.shape}, band={self.parts[0].shape[1]})"
