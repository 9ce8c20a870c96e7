"""The rigid model's direct correction (docs/theory.md, "The direct correction with the energy
row"), on the normal equations' envelope.

Each Newton iteration takes the minimum-norm step ``dx = A^+ r`` of the linearized bar-length,
velocity and energy conditions. A = [A_g; a^T]: the geometric rows A_g (two per bar, touching
only the bar's two nodes) and the dense energy row a. The step is

    dx = A_g^T y1 + a y2,   [B c; c^T s] [y1; y2] = r,   B = A_g A_g^T, c = A_g a, s = a.a,

with B factored by the envelope LDL^T of :mod:`~tenscontrol.mechanics.kernels.banded` (the rows of
each bar interleaved, the bars in the KKT order of the model: a band of constant width for a
tower) and the energy row eliminated as a border: two solves with B and the scalar Schur
complement s - c^T B^-1 c >= 1 (the work column, -1, is in a only). An iteration then costs
about one derivative evaluation. A column no row involves gets exactly zero, as the SVD
solve guaranteed. When B shows (nearly) dependent rows (a pivot under 1e-10 of its row's
terms), the iteration takes the SVD least squares on the dense A instead, as before.

Called as ``correct(y, E0, correction, model)`` (re-exported by
:mod:`~tenscontrol.mechanics.rigid.kernels`); ``correct(..., fallback=None)`` compiles without
the SVD step (see there).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tenscontrol.mechanics.kernels.arrays import add_into, copy_into
from tenscontrol.mechanics.kernels.banded import ldl_factor, ldl_solve
from tenscontrol.mechanics.kernels.cache import CACHE as _CACHE
from tenscontrol.mechanics.kernels.cache import INTERNAL as _INTERNAL
from tenscontrol.mechanics.rigid.forces import (elastic_forces, kinetic_energy, mass_times,
                                                spring_potential, spring_rounding, total_energy)

__all__ = ["correct"]

# the energy residual E0 + w - Etot cannot be driven below the rounding of the terms it sums:
# a few eps of their sizes (measured: 1-4 eps on the T-bar and the towers)
_ROUNDING = 8.0 * np.finfo(np.float64).eps

# a pivot of B = A_g A_g^T under this fraction of its row's terms means dependent rows (the
# normal equations square A's condition number: 1e-10 keeps the step's relative error under
# about 1e-6 before the SVD takes over)
_DEPENDENT = 1e-10


@njit(cache=_CACHE, **_INTERNAL)
def _residuals(y, E0, model):
    """Position (m^2), velocity (m^2/s) and energy (J) residual norms at y."""
    bi, bj, bl = model.bars
    nq = (y.shape[0] - 1) // 2
    rp = 0.0
    rv = 0.0
    for r in range(bi.shape[0]):
        i3 = 3 * bi[r]
        j3 = 3 * bj[r]
        l2 = 0.0
        v = 0.0
        for a in range(3):
            b = y[j3 + a] - y[i3 + a]
            l2 += b * b
            v += 2.0 * b * (y[nq + j3 + a] - y[nq + i3 + a])
        rp += (l2 - bl[r] * bl[r]) ** 2
        rv += v * v
    rE = E0 + y[2 * nq] - total_energy(y[:nq], y[nq:2 * nq], model)
    return np.sqrt(rp), np.sqrt(rv), rE


@njit(cache=_CACHE, **_INTERNAL)
def _bar_vectors(y, model):
    """(b, bd, r): bar vectors (nc, 3), their rates (nc, 3) and the geometric residuals (2 nc,)."""
    bi, bj, bl = model.bars
    nq = (y.shape[0] - 1) // 2
    nc = bi.shape[0]
    b = np.empty((nc, 3))
    bd = np.empty((nc, 3))
    r = np.empty(2 * nc)
    for k in range(nc):
        l2 = 0.0
        v = 0.0
        for a in range(3):
            b[k, a] = y[3 * bj[k] + a] - y[3 * bi[k] + a]
            bd[k, a] = y[nq + 3 * bj[k] + a] - y[nq + 3 * bi[k] + a]
            l2 += b[k, a] * b[k, a]
            v += 2.0 * b[k, a] * bd[k, a]
        r[k] = bl[k] * bl[k] - l2
        r[nc + k] = -v
    return b, bd, r


@njit(cache=_CACHE, **_INTERNAL)
def _energy_row(y, model, gamma):
    """(dE/dq, dE/dqd) (3n,) each: -(G + elastic forces) and M qd."""
    nq = (y.shape[0] - 1) // 2
    f = model.gravity.copy()
    elastic_forces(y[:nq], model.members, gamma, f)
    mqd = np.empty(nq)
    mass_times(y[nq:2 * nq], model, mqd)
    for c in range(nq):  # loops, not array expressions: each of those compiles a function
        f[c] = -f[c]
    return f, mqd


@njit(cache=_CACHE, **_INTERNAL)
def _normal_matrix(b, bd, model):
    """B = A_g A_g^T in envelope storage (2 nc, w+1), rows of bar k at 2 rank[k] + (0, 1)."""
    rank, first, width, pk, pm, pn, ps = model.normal
    col = model.free_column
    B = np.zeros((2 * rank.shape[0], width + 1))
    w = width
    for e in range(pk.shape[0]):
        k, m = pk[e], pm[e]
        pp = pv = vp = vv = 0.0
        for a in range(3):
            if col[3 * pn[e] + a] < 0:
                continue
            pp += b[k, a] * b[m, a]
            pv += b[k, a] * bd[m, a]
            vp += bd[k, a] * b[m, a]
            vv += bd[k, a] * bd[m, a]
        s = 4.0 * ps[e]
        rk = 2 * rank[k]
        rm = 2 * rank[m]
        B[rk, w - rk + rm] += s * pp
        B[rk + 1, w - rk - 1 + rm] += s * vp
        B[rk + 1, w - rk + rm] += s * (vv + pp)
        if k != m:
            B[rk, w - rk + rm + 1] += s * pv
    return B


@njit(cache=_CACHE, **_INTERNAL)
def _geometric_rows_times(b, bd, model, x, out):
    """out (2 nc,) = A_g x, x = [dq (3n), dqd (3n)] on all coordinates (fixed ones masked)."""
    bi, bj, _ = model.bars
    col = model.free_column
    nq = col.shape[0]
    nc = bi.shape[0]
    for k in range(nc):
        p = 0.0
        v = 0.0
        for a in range(3):
            for node, sign in ((bj[k], 2.0), (bi[k], -2.0)):
                c = 3 * node + a
                if col[c] >= 0:
                    p += sign * b[k, a] * x[c]
                    v += sign * (bd[k, a] * x[c] + b[k, a] * x[nq + c])
        out[k] = p
        out[nc + k] = v


@njit(cache=_CACHE, **_INTERNAL)
def _add_geometric_transpose(b, bd, model, y1, dx):
    """dx[:6n] += A_g^T y1 (only the free coordinates receive anything)."""
    bi, bj, _ = model.bars
    col = model.free_column
    nq = col.shape[0]
    nc = bi.shape[0]
    for k in range(nc):
        for a in range(3):
            for node, sign in ((bj[k], 2.0), (bi[k], -2.0)):
                c = 3 * node + a
                if col[c] >= 0:
                    dx[c] += sign * (b[k, a] * y1[k] + bd[k, a] * y1[nc + k])
                    dx[nq + c] += sign * b[k, a] * y1[nc + k]


@njit(cache=_CACHE, **_INTERNAL)
def _band_solve(B, first, rank, rhs):
    """B^-1 rhs for rhs in bar order (2 nc,: position rows, then velocity rows)."""
    nc = rank.shape[0]
    z = np.empty(2 * nc)
    for k in range(nc):
        z[2 * rank[k]] = rhs[k]
        z[2 * rank[k] + 1] = rhs[nc + k]
    ldl_solve(B, first, z)
    out = np.empty(2 * nc)
    for k in range(nc):
        out[k] = z[2 * rank[k]]
        out[nc + k] = z[2 * rank[k] + 1]
    return out


# inlined into correct, its one caller (one compiled library less; see kernels.accelerations)
@njit(cache=_CACHE, inline="always")
def _normal_step(y, E0, with_energy, model, gamma, dx):
    """The minimum-norm step dx (6n+1,) through the normal equations; False if B is singular."""
    nq = (y.shape[0] - 1) // 2
    first = model.normal.first
    rank = model.normal.rank
    b, bd, r = _bar_vectors(y, model)
    B = _normal_matrix(b, bd, model)
    if ldl_factor(B, first, np.zeros(B.shape[0], dtype=np.bool_), _DEPENDENT) >= 0:
        return False
    y1 = _band_solve(B, first, rank, r)
    for c in range(dx.shape[0]):
        dx[c] = 0.0
    if with_energy:
        eq, eqd = _energy_row(y, model, gamma)
        a = np.zeros(2 * nq + 1)
        for c in range(nq):
            if model.free_column[c] >= 0:
                a[c] = eq[c]
                a[nq + c] = eqd[c]
        a[2 * nq] = -1.0
        ca = np.empty(r.shape[0])
        _geometric_rows_times(b, bd, model, a, ca)
        v = _band_solve(B, first, rank, ca)
        rE = E0 + y[2 * nq] - total_energy(y[:nq], y[nq:2 * nq], model)
        y2 = (rE - ca @ y1) / (a @ a - ca @ v)
        for k in range(y1.shape[0]):  # loops: an array expression compiles a function
            y1[k] -= y2 * v[k]
        for c in range(dx.shape[0]):
            dx[c] += y2 * a[c]
    _add_geometric_transpose(b, bd, model, y1, dx)
    return True


@njit(cache=_CACHE, **_INTERNAL)
def _min_norm_solve(A, r):
    """Minimum-norm least-squares solution of A x = r (SVD-based, rcond 1e-12).

    Columns of A that are exactly zero get exactly zero components (as the minimum-norm
    solution has in exact arithmetic); leaving them out of the SVD keeps rounding from
    leaking into directions the constraints do not involve, e.g. out of the plane of a
    planar motion, where an unstable folding mode would amplify it.
    """
    used = np.zeros(A.shape[1], dtype=np.bool_)
    for c in range(A.shape[1]):
        for k in range(A.shape[0]):
            if A[k, c] != 0.0:
                used[c] = True
                break
    idx = np.flatnonzero(used)
    x = np.zeros(A.shape[1])
    if idx.size:
        x[idx] = np.linalg.lstsq(np.ascontiguousarray(A[:, idx]), r, rcond=1e-12)[0]
    return x


@njit(cache=_CACHE, **_INTERNAL)
def _svd_step(y, E0, with_energy, model, gamma, dx):
    """The minimum-norm step dx (6n+1,) by SVD least squares on the dense A (dependent rows)."""
    nq = (y.shape[0] - 1) // 2
    nc = model.bars.i.shape[0]
    nrow = 2 * nc + (1 if with_energy else 0)
    A = np.zeros((nrow, 2 * nq + 1))
    r = np.zeros(nrow)
    b, bd, rg = _bar_vectors(y, model)
    copy_into(r[:2 * nc], rg)
    bi, bj, _ = model.bars
    col = model.free_column
    for k in range(nc):
        for a in range(3):
            for node, sign in ((bj[k], 2.0), (bi[k], -2.0)):
                c = 3 * node + a
                if col[c] >= 0:
                    A[k, c] += sign * b[k, a]
                    A[nc + k, c] += sign * bd[k, a]
                    A[nc + k, nq + c] += sign * b[k, a]
    if with_energy:
        eq, eqd = _energy_row(y, model, gamma)
        for c in range(nq):
            if model.free_column[c] >= 0:
                A[2 * nc, c] = eq[c]
                A[2 * nc, nq + c] = eqd[c]
        A[2 * nc, 2 * nq] = -1.0
        r[2 * nc] = E0 + y[2 * nq] - total_energy(y[:nq], y[nq:2 * nq], model)
    copy_into(dx, _min_norm_solve(A, r))


@njit(cache=_CACHE, **_INTERNAL)
def _energy_floor(y, E0, model):
    """8 eps times the energy content at y: |E0| + |w| + T + sum |G_a q_a| + V_s [J]."""
    nq = (y.shape[0] - 1) // 2
    content = abs(E0) + abs(y[2 * nq]) + kinetic_energy(y[nq:2 * nq], model)
    content += spring_potential(y[:nq], model.members)
    G = model.gravity
    for a in range(nq):
        content += abs(G[a] * y[a])
    # and eps sum k |l - l0| l, V_s's own rounding (2 V_s / strain: the shape-changed 3-prism's
    # commanded strings stalled at 0.1-0.4 eps of it, up to 16 eps of the content)
    return _ROUNDING * (content + spring_rounding(y[:nq], model.members) / 8.0)


@njit(cache=_CACHE)
def correct(y, E0, correction, model, fallback=True):
    """Direct correction of y onto the bar-length, velocity and energy constraints, in place.

    Implements docs/theory.md, "The direct correction with the energy row": repeated minimum-norm
    Newton steps on the free coordinates (fixed coordinates never move, so their constraint rows
    hold exactly). With
    ``correction.energy`` False the energy row and the work column are dropped ("geometric"
    mode) and w keeps its integrated value.

    The energy row's tolerance is ``correction.energy_tol`` but not below 8 eps of the energy
    content at y (the residual's own rounding), which loads and controllers change as the run
    goes. Returns (iterations, converged, svd_steps): svd_steps counts the iterations that took
    the dense SVD step because B showed dependent rows (simulate() reports them). With
    `fallback` None the SVD step is left out of the compiled code: where it would be taken,
    returns svd_steps = -1 with y partly corrected (the caller corrects its copy of y again
    with ``fallback=True``).
    """
    with_energy, eps_p, eps_v, eps_E, max_iter = correction
    floored = not with_energy  # the floor is computed once, and only when it may matter
    nq = (y.shape[0] - 1) // 2
    nc = model.bars.i.shape[0]
    gamma = np.empty(model.members.i.shape[0])
    dx = np.zeros(2 * nq + 1)
    svd = 0
    for it in range(max_iter + 1):
        rp, rv, rE = _residuals(y, E0, model)
        if not floored and abs(rE) > eps_E:  # loads and controllers change the content
            eps_E = max(eps_E, _energy_floor(y, E0, model))
            floored = True
        if rp <= eps_p and rv <= eps_v and (not with_energy or abs(rE) <= eps_E):
            return it, True, svd
        if it == max_iter or (nc == 0 and not with_energy):
            break
        if not _normal_step(y, E0, with_energy, model, gamma, dx):
            if fallback is None:  # numba prunes the SVD step from this variant
                return it, False, -1
            _svd_step(y, E0, with_energy, model, gamma, dx)
            svd += 1
        add_into(y[:2 * nq], dx)
        if with_energy:
            y[2 * nq] += dx[2 * nq]
    return max_iter, False, svd
