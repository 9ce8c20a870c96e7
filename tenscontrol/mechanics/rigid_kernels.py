"""Compiled kernels of the rigid-bar model: forces, accelerations, energy and correction.

These are the only implementations of the rigid-bar mechanics; :mod:`tenscontrol.mechanics.rigid`
wraps them for users and :mod:`tenscontrol.simulation.simulator` calls them in its step loop. They are
compiled with numba because the simulator calls them thousands of times per run on small
arrays, where numpy's per-call overhead would dominate (theory.md section 10.4).

Conventions (theory.md section 0): q = vec(N) node by node, force densities positive in
tension, constraint forces +J^T lambda. The state is y = [q (3n), qd (3n), w (1)].
The kernels take the model as one record, ``model`` = ``RigidBarModel.kernel`` (a
:class:`~tenscontrol.mechanics.records.RigidKernelModel`: mass, inverse_mass, gravity,
free_column, bars, members), or the leaf records :class:`~tenscontrol.mechanics.records.Members`
and :class:`~tenscontrol.mechanics.records.RigidBars`; the loops unpack them into the theory's
symbols (W, M, G; bi, bj the constrained bars; si, sj, sk, sl0, sc, ssp the members)::

    rhs(y, fext, model, dy)                dy (6n+1,) = [qd, qdd, (f_ext + f_d) . qd]
    accelerations(q, qd, fext, model, qdd, lam, gamma)
    correct(y, E0, correction, model)      correction: a records.Correction
    total_energy(q, qd, model), energies(Y, model)
    member_forces(q, qd, members, gamma, out), elastic_forces(q, members, gamma, out)
    bar_violations(Y, bars)                bars: a records.RigidBars
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tenscontrol.mechanics.kernel_cache import CACHE as _CACHE


@njit(cache=_CACHE)
def member_forces(q, qd, members, gamma, out):
    """Force densities gamma (ns,) of the members, and their nodal forces added to `out`.

    Returns the damper power f_d . qd [W] (<= 0). Strings with l <= l0 are slack (gamma = 0,
    damper off); springs are always active.
    """
    si, sj, sk, sl0, sc, ssp = members
    return _member_forces(q, qd, si, sj, sk, sl0, sc, ssp, gamma, out)


@njit(cache=_CACHE)
def elastic_forces(q, members, gamma, out):
    """As :func:`member_forces` with the dampers left out (the velocities do not enter)."""
    si, sj, sk, sl0, _, ssp = members
    _member_forces(q, q, si, sj, sk, sl0, np.zeros_like(sl0), ssp, gamma, out)


@njit(cache=_CACHE)
def _member_forces(q, qd, si, sj, sk, sl0, sc, ssp, gamma, out):
    """:func:`member_forces` on the unpacked member arrays."""
    power = 0.0
    for k in range(si.shape[0]):
        i3 = 3 * si[k]
        j3 = 3 * sj[k]
        s0 = q[j3] - q[i3]
        s1 = q[j3 + 1] - q[i3 + 1]
        s2 = q[j3 + 2] - q[i3 + 2]
        l2 = s0 * s0 + s1 * s1 + s2 * s2
        l = np.sqrt(l2)
        if not ssp[k] and l <= sl0[k]:
            gamma[k] = 0.0
            continue
        g = sk[k] * (1.0 - sl0[k] / l)
        gamma[k] = g
        rate = 0.0
        if sc[k] != 0.0:
            sdot = (s0 * (qd[j3] - qd[i3]) + s1 * (qd[j3 + 1] - qd[i3 + 1])
                    + s2 * (qd[j3 + 2] - qd[i3 + 2]))
            rate = sc[k] * sdot / l2
            power -= sc[k] * sdot * sdot / l2
        t = g + rate
        out[i3] += t * s0
        out[i3 + 1] += t * s1
        out[i3 + 2] += t * s2
        out[j3] -= t * s0
        out[j3 + 1] -= t * s1
        out[j3 + 2] -= t * s2
    return power


@njit(cache=_CACHE)
def spring_potential(q, members):
    """Elastic energy of the active tension members [J]."""
    si, sj, sk, sl0, _, ssp = members
    v = 0.0
    for k in range(si.shape[0]):
        i3 = 3 * si[k]
        j3 = 3 * sj[k]
        l = np.sqrt((q[j3] - q[i3]) ** 2 + (q[j3 + 1] - q[i3 + 1]) ** 2
                    + (q[j3 + 2] - q[i3 + 2]) ** 2)
        if ssp[k] or l > sl0[k]:
            v += 0.5 * sk[k] * (l - sl0[k]) ** 2
    return v


@njit(cache=_CACHE)
def _cholesky_solve(S, b):
    """Solve S x = b for symmetric positive definite S; returns (x, ok)."""
    n = S.shape[0]
    L = np.zeros((n, n))
    scale = 0.0
    for i in range(n):
        scale = max(scale, S[i, i])
    for j in range(n):
        d = S[j, j]
        for p in range(j):
            d -= L[j, p] * L[j, p]
        if d <= 1e-13 * scale:
            return b.copy(), False
        L[j, j] = np.sqrt(d)
        for i in range(j + 1, n):
            v = S[i, j]
            for p in range(j):
                v -= L[i, p] * L[j, p]
            L[i, j] = v / L[j, j]
    x = b.copy()
    for i in range(n):
        for p in range(i):
            x[i] -= L[i, p] * x[p]
        x[i] /= L[i, i]
    for i in range(n - 1, -1, -1):
        for p in range(i + 1, n):
            x[i] -= L[p, i] * x[p]
        x[i] /= L[i, i]
    return x, True


@njit(cache=_CACHE)
def accelerations(q, qd, fext, model, qdd, lam, gamma):
    """Constrained accelerations of the rigid-bar model (theory.md (21)-(23)).

    Fills `qdd` (3n,), the bar-row multipliers `lam` (nc,) and the member force densities
    `gamma` (ns,). Returns the power of the non-conservative forces (f_ext + f_d) . qd [W].
    """
    W = model.inverse_mass
    bi, bj, _ = model.bars
    nq = q.shape[0]
    nc = bi.shape[0]
    xi = model.gravity + fext
    power = member_forces(q, qd, model.members, gamma, xi)
    for a in range(nq):
        power += fext[a] * qd[a]
    wxi = W @ xi
    if nc == 0:
        qdd[:] = wxi
        return power
    # W J^T, column r = W[:, j-block] 2b - W[:, i-block] 2b (J is sparse: 6 entries a row)
    wjt = np.zeros((nq, nc))
    b = np.empty((nc, 3))
    rhs = np.empty(nc)
    for r in range(nc):
        i3 = 3 * bi[r]
        j3 = 3 * bj[r]
        h = 0.0
        jwxi = 0.0
        for a in range(3):
            b[r, a] = q[j3 + a] - q[i3 + a]
            bd = qd[j3 + a] - qd[i3 + a]
            h += 2.0 * bd * bd
            jwxi += 2.0 * b[r, a] * (wxi[j3 + a] - wxi[i3 + a])
        rhs[r] = -(jwxi + h)
        for m in range(nq):
            v = 0.0
            for a in range(3):
                v += (W[m, j3 + a] - W[m, i3 + a]) * b[r, a]
            wjt[m, r] = 2.0 * v
    S = np.empty((nc, nc))
    for r in range(nc):
        i3 = 3 * bi[r]
        j3 = 3 * bj[r]
        for c in range(nc):
            v = 0.0
            for a in range(3):
                v += b[r, a] * (wjt[j3 + a, c] - wjt[i3 + a, c])
            S[r, c] = 2.0 * v
    x, ok = _cholesky_solve(S, rhs)
    if not ok:  # (near-)redundant constraints during motion: rank-safe least squares
        x = np.linalg.lstsq(S, rhs, rcond=1e-12)[0]
    lam[:] = x
    qdd[:] = wxi + wjt @ x
    return power


@njit(cache=_CACHE)
def rhs(y, fext, model, dy):
    """State derivative dy = [qd; qdd; wdot] of y = [q; qd; w]."""
    nq = (y.shape[0] - 1) // 2
    q = y[:nq]
    qd = y[nq:2 * nq]
    qdd = np.empty(nq)
    lam = np.empty(model.bars.i.shape[0])
    gamma = np.empty(model.members.i.shape[0])
    power = accelerations(q, qd, fext, model, qdd, lam, gamma)
    dy[:nq] = qd
    dy[nq:2 * nq] = qdd
    dy[2 * nq] = power


@njit(cache=_CACHE)
def total_energy(q, qd, model):
    """Etot = 1/2 qd^T M qd - G^T q + V_s(q) [J] (theory.md (34))."""
    M = model.mass
    return (0.5 * (qd @ (M @ qd)) - model.gravity @ q
            + spring_potential(q, model.members))


@njit(cache=_CACHE)
def energies(Y, model):
    """Total energy of each row of Y = [q, qd, ...] (nt, >= 6n)."""
    nq = model.mass.shape[0]
    out = np.empty(Y.shape[0])
    for t in range(Y.shape[0]):
        out[t] = total_energy(Y[t, :nq], Y[t, nq:2 * nq], model)
    return out


@njit(cache=_CACHE)
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


@njit(cache=_CACHE)
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


@njit(cache=_CACHE)
def correct(y, E0, correction, model):
    """Direct correction of y onto the bar-length, velocity and energy constraints, in place.

    Implements theory.md section 10: repeated minimum-norm Newton steps
    dx = lstsq(A_c, r_c) on the free coordinates (fixed coordinates never move, so their
    constraint rows hold exactly). With ``correction.energy`` False the energy row and the work
    column are dropped ("geometric" mode) and w keeps its integrated value.

    Returns (iterations, converged).
    """
    with_energy, eps_p, eps_v, eps_E, max_iter = correction
    M, G, col = model.mass, model.gravity, model.free_column
    bi, bj, bl = model.bars
    members = model.members
    nq = (y.shape[0] - 1) // 2
    nc = bi.shape[0]
    nf = 0
    for a in range(nq):
        if col[a] >= 0:
            nf += 1
    nrow = 2 * nc + (1 if with_energy else 0)
    ncol = 2 * nf + (1 if with_energy else 0)
    gamma = np.empty(members.i.shape[0])
    for it in range(max_iter + 1):
        rp, rv, rE = _residuals(y, E0, model)
        if rp <= eps_p and rv <= eps_v and (not with_energy or abs(rE) <= eps_E):
            return it, True
        if it == max_iter or nrow == 0:
            break
        A = np.zeros((nrow, ncol))
        r = np.zeros(nrow)
        for k in range(nc):
            i3 = 3 * bi[k]
            j3 = 3 * bj[k]
            l2 = 0.0
            v = 0.0
            for a in range(3):
                b = y[j3 + a] - y[i3 + a]
                bd = y[nq + j3 + a] - y[nq + i3 + a]
                l2 += b * b
                v += 2.0 * b * bd
                cj = col[j3 + a]
                ci = col[i3 + a]
                if cj >= 0:
                    A[k, cj] += 2.0 * b
                    A[nc + k, cj] += 2.0 * bd
                    A[nc + k, nf + cj] += 2.0 * b
                if ci >= 0:
                    A[k, ci] -= 2.0 * b
                    A[nc + k, ci] -= 2.0 * bd
                    A[nc + k, nf + ci] -= 2.0 * b
            r[k] = bl[k] * bl[k] - l2
            r[nc + k] = -v
        if with_energy:
            # dEtot/dq = K(gamma) q - G = -(G + member forces); dEtot/dqd = M qd
            f = G.copy()
            elastic_forces(y[:nq], members, gamma, f)
            mqd = M @ y[nq:2 * nq]
            for a in range(nq):
                c = col[a]
                if c >= 0:
                    A[2 * nc, c] = -f[a]
                    A[2 * nc, nf + c] = mqd[a]
            A[2 * nc, 2 * nf] = -1.0
            r[2 * nc] = rE
        dx = _min_norm_solve(A, r)
        for a in range(nq):
            c = col[a]
            if c >= 0:
                y[a] += dx[c]
                y[nq + a] += dx[nf + c]
        if with_energy:
            y[2 * nq] += dx[2 * nf]
    return max_iter, False


@njit(cache=_CACHE)
def bar_violations(Y, bars):
    """|b| - l for each row of Y = [q, ...] and each bar of `bars` [m], shape (nt, n_bars)."""
    bars_i, bars_j, lengths = bars
    out = np.empty((Y.shape[0], bars_i.shape[0]))
    for t in range(Y.shape[0]):
        for k in range(bars_i.shape[0]):
            i3 = 3 * bars_i[k]
            j3 = 3 * bars_j[k]
            l2 = 0.0
            for a in range(3):
                l2 += (Y[t, j3 + a] - Y[t, i3 + a]) ** 2
            out[t, k] = np.sqrt(l2) - lengths[k]
    return out
