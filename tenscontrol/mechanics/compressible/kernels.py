"""Compiled kernels of the compressible-bar model (docs/theory.md, "Compressible bars" and
"Linearization: force densities in, nodal forces as disturbances").

:mod:`tenscontrol.mechanics.compressible.model` wraps them for users; the simulator's implicit integrator calls
:func:`rhs` and :func:`jacobian` in its step loop, thousands of times on small arrays, hence numba.

Calling convention
------------------
The state is ``y = [q (3n), qd (3n), w (1)]``, w the work of the external forces and dampers.
Every kernel takes the model as one record, ``model`` = ``CompressibleBarModel.kernel`` (a
:class:`~tenscontrol.mechanics.kernels.records.CompressibleKernelModel`: constant_mass M0, inverse_mass
W, gravity G, free, mass_is_constant, bars, members); the loops unpack the leaf records
:class:`~tenscontrol.mechanics.kernels.records.CompressibleBars` (bi, bj, ba0, bra, bex, bk, bl0) and
:class:`~tenscontrol.mechanics.kernels.records.Members` (si, sj, sk, sl0, sc, ssp) into the theory's
symbols::

    rhs(y, fext, model, dy[, fallback])      dy (6n+1,) = [qd, qdd, (f_ext + f_d) . qd]
    jacobian(y, fext, model, J[, fallback])  J (6n+1, 6n+1) = d(dy)/dy, fext held constant,
                                             w column 0
    energies(Y, model)                       Etot of each row of Y (nt, >= 6n) -> (nt,) [J]

Lower-level kernels used by :mod:`tenscontrol.mechanics.compressible.model`:
``accelerations(q, qd, fext, model, held, qdd, gamma, psi[, fallback])`` and
``derivatives(q, qd, fext, model, held, qdd, gamma, psi, D, pw[, fallback])``, where ``held`` is a
:class:`~tenscontrol.mechanics.kernels.records.HeldForceDensities` (held gamma/psi: the control model),
``mass_matrix(q, model, M)`` and ``total_energy(q, qd, model)``; for
:mod:`~tenscontrol.mechanics.compressible.banded`, ``forces``, ``member_blocks`` (the Jacobian's
per-member 3x3 blocks) and ``energy_given``; ``velocity_terms(q, qd, bars,
out)`` (N_T alone) is there for the tests' Euler-Lagrange check.

Kinetic energy of bar k (docs/theory.md, "Compressible bars"):
``T_k = 1/2 m |Xbar qd|^2 + 1/2 mu0 qd^T H qd + 1/2 a(l) (qd^T H qd - ldot^2)``, with mu0 in M0.
All per-bar terms depend on b = n_j - n_i only; node j receives +g(b, bd) and node i -g, so
each 3x3 derivative D = dg/db enters the (i, j) blocks as [[D, -D], [-D, D]].
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tenscontrol.mechanics.kernels.arrays import copy_into, copy_matrix
from tenscontrol.mechanics.kernels.banded import ldl_factor, ldl_solve
from tenscontrol.mechanics.kernels.cache import CACHE as _CACHE
from tenscontrol.mechanics.kernels.cache import INTERNAL as _INTERNAL
from tenscontrol.mechanics.kernels.records import HeldForceDensities
from tenscontrol.mechanics.laws import (damper_density, damper_dissipation, elastic_density,
                                        elastic_energy, is_active, material_coefficient)
from tenscontrol.mechanics.rigid.kernels import spring_potential

#: Relative pivot test of the mass matrix's LDL^T (the ``tol`` of
#: :func:`~tenscontrol.mechanics.kernels.banded.ldl_factor`), dense and band paths alike: a
#: smaller pivot marks M singular on the free coordinates.
MASS_PIVOT_TOL = 1e-14
#: What :func:`rhs` and :func:`jacobian` return, with ``fallback=None``, where the mass matrix
#: is singular (the output unfinished): numba prunes the pseudo-inverse (np.linalg.inv and
#: pinv, about 2 s of compile) from that variant, and the caller repeats the call with
#: ``fallback=True`` (the default), the variant that compiles it, on first use only.
FALLBACK_NEEDED = 3


@njit(cache=_CACHE, **_INTERNAL)
def _a_terms(k, l, ba0, bra, bex):
    """a(l), a'(l), a''(l) of bar k [kg, kg/m, kg/m^2]."""
    a = ba0[k]
    a1 = 0.0
    a2 = 0.0
    if bra[k] != 0.0:
        p = bex[k]
        ar = bra[k] * l ** p
        a += ar
        a1 = p * ar / l
        a2 = p * (p - 1.0) * ar / (l * l)
    return a, a1, a2


@njit(cache=_CACHE, **_INTERNAL)
def _diff(v, i3, j3, out):
    for a in range(3):
        out[a] = v[j3 + a] - v[i3 + a]


@njit(cache=_CACHE, **_INTERNAL)
def _scatter(out, i3, j3, g):
    """Add +g to node j and -g to node i of `out`."""
    for a in range(3):
        out[j3 + a] += g[a]
        out[i3 + a] -= g[a]


@njit(cache=_CACHE, **_INTERNAL)
def _add_block(J, i3, j3, D):
    """Add the member pattern [[D, -D], [-D, D]] on nodes (i, j) to J."""
    for r in range(3):
        for c in range(3):
            d = D[r, c]
            J[i3 + r, i3 + c] += d
            J[j3 + r, j3 + c] += d
            J[i3 + r, j3 + c] -= d
            J[j3 + r, i3 + c] -= d


@njit(cache=_CACHE, **_INTERNAL)
def _string_forces(q, qd, members, held, gamma, xi):
    """Add string and damper forces to xi, fill gamma; returns the damper power [W]."""
    si, sj, sk, sl0, sc, ssp = (members.i, members.j, members.stiffness, members.rest_length,
                                members.damping, members.spring)
    gam_in, hold_g = held.gamma, held.hold_gamma
    power = 0.0
    s = np.empty(3)
    sd = np.empty(3)
    for k in range(si.shape[0]):
        i3 = 3 * si[k]
        j3 = 3 * sj[k]
        _diff(q, i3, j3, s)
        l2 = s[0] * s[0] + s[1] * s[1] + s[2] * s[2]
        l = np.sqrt(l2)
        active = is_active(l, sl0[k], ssp[k])
        if hold_g:
            g = gam_in[k]
        elif active:
            g = elastic_density(sk[k], sl0[k], l)
        else:
            g = 0.0
        gamma[k] = g
        t = g
        if active and sc[k] != 0.0:
            _diff(qd, i3, j3, sd)
            sdot = s[0] * sd[0] + s[1] * sd[1] + s[2] * sd[2]
            t += damper_density(sc[k], sdot, l2)
            power -= damper_dissipation(sc[k], sdot, l2)
        for a in range(3):
            s[a] *= -t
        _scatter(xi, i3, j3, s)
    return power


@njit(cache=_CACHE, **_INTERNAL)
def _bar_forces(q, qd, bars, held, psi, xi, with_elastic):
    """Add -K_b(psi) q (if with_elastic) and -N_T (docs/theory.md, "Compressible bars") to xi; fill
    psi."""
    bi, bj, ba0, bra, bex, bk, bl0 = bars
    psi_in, hold_p = held.psi, held.hold_psi
    b = np.empty(3)
    bd = np.empty(3)
    g = np.empty(3)
    for k in range(bi.shape[0]):
        i3 = 3 * bi[k]
        j3 = 3 * bj[k]
        _diff(q, i3, j3, b)
        l = np.sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2])
        p = psi_in[k] if hold_p else elastic_density(bk[k], bl0[k], l)
        psi[k] = p
        if not with_elastic:
            p = 0.0
        for a in range(3):
            g[a] = -p * b[a]
        if ba0[k] != 0.0 or bra[k] != 0.0:
            _diff(qd, i3, j3, bd)
            a0, a1, _ = _a_terms(k, l, ba0, bra, bex)
            ld = (b[0] * bd[0] + b[1] * bd[1] + b[2] * bd[2]) / l
            bd2 = bd[0] * bd[0] + bd[1] * bd[1] + bd[2] * bd[2]
            alpha = a1 * ld
            beta = a1 * (bd2 + ld * ld) / (2.0 * l) + a0 * (bd2 - ld * ld) / (l * l)
            for a in range(3):
                g[a] -= alpha * bd[a] - beta * b[a]
        _scatter(xi, i3, j3, g)


# forces, mass_matrix and member_blocks, as accelerations and derivatives below, are inlined
# into their compiled callers: numba compiles each kernel into a library of its own and
# optimizes its code again in every caller's, so one level less is one pass less
@njit(cache=_CACHE, inline="always")
def forces(q, qd, fext, model, held, gamma, psi, xi):
    """xi_c = G + f_ext + f_s + f_d - K_b(psi) q - N_T (docs/theory.md, "Compressible bars");
    returns wdot [W]."""
    G = model.gravity
    power = 0.0
    for a in range(q.shape[0]):
        xi[a] = G[a] + fext[a]
        power += fext[a] * qd[a]
    power += _string_forces(q, qd, model.members, held, gamma, xi)
    _bar_forces(q, qd, model.bars, held, psi, xi, with_elastic=True)
    return power


@njit(cache=_CACHE, inline="always")
def mass_matrix(q, model, M):
    """M_qdd(q) = M0 + sum a(l) (H - H q q^T H / l^2) (docs/theory.md, "Compressible bars"),
    written to M."""
    bi, bj, ba0, bra, bex, _, _ = model.bars
    copy_matrix(M, model.constant_mass)
    D = np.empty((3, 3))
    b = np.empty(3)
    for k in range(bi.shape[0]):
        if ba0[k] == 0.0 and bra[k] == 0.0:
            continue
        i3 = 3 * bi[k]
        j3 = 3 * bj[k]
        _diff(q, i3, j3, b)
        l2 = b[0] * b[0] + b[1] * b[1] + b[2] * b[2]
        a0 = _a_terms(k, np.sqrt(l2), ba0, bra, bex)[0]
        for r in range(3):
            for c in range(3):
                D[r, c] = a0 * ((1.0 if r == c else 0.0) - b[r] * b[c] / l2)
        _add_block(M, i3, j3, D)


@njit(cache=_CACHE, **_INTERNAL)
def _factor(M, free):
    """Envelope LDL^T (:func:`~tenscontrol.mechanics.kernels.banded.ldl_factor`) of
    M[free][:, free]: (L, first, ok).

    first[i] is the first nonzero column of row i; L is the envelope storage (nf, w+1) of
    ldl_factor (an envelope factorisation has no fill-in left of first). Bars couple only
    their two end nodes, so for chain-like structures (prism towers) this costs O(nf bw^2)
    instead of O(nf^3). ok is False if the matrix is not (numerically) positive definite.
    """
    nf = free.shape[0]
    first = np.empty(nf, dtype=np.int64)
    w = 0
    for i in range(nf):
        row = M[free[i]]
        f = i
        for c in range(i):
            if row[free[c]] != 0.0:
                f = c
                break
        first[i] = f
        w = max(w, i - f)
    L = np.zeros((nf, w + 1))
    for i in range(nf):
        row = M[free[i]]
        for c in range(first[i], i + 1):
            L[i, w - (i - c)] = row[free[c]]
    ok = ldl_factor(L, first, np.zeros(nf, dtype=np.bool_), MASS_PIVOT_TOL) < 0
    return L, first, ok


@njit(cache=_CACHE, **_INTERNAL)
def _solve_cols(M, free, L, first, ok, B, D, fallback):
    """D = W_c B for a (3n, m) matrix B: solve on the free rows, zero on fixed rows (D
    unfinished if M is singular and `fallback` is None)."""
    nf = free.shape[0]
    if not ok:  # singular mass during motion ("paper" mode): rank-safe pseudo-inverse
        if fallback is None:  # numba prunes the pseudo-inverse from this variant
            return
        _times_sparse(_free_inverse(M, free, ok), B, D)
        return
    D[:, :] = 0.0
    x = np.empty(nf)
    for c in range(B.shape[1]):
        nz = False
        for r in range(nf):
            x[r] = B[free[r], c]
            nz = nz or x[r] != 0.0
        if nz:
            ldl_solve(L, first, x)
            for r in range(nf):
                D[free[r], c] = x[r]


@njit(cache=_CACHE, **_INTERNAL)
def _free_inverse(M, free, ok):
    """W_c (3n, 3n): inverse of M[free][:, free] in the free rows and columns, else zero."""
    nf = free.shape[0]
    Mff = np.empty((nf, nf))
    for r in range(nf):
        for c in range(nf):
            Mff[r, c] = M[free[r], free[c]]
    Wf = np.linalg.inv(Mff) if ok else np.linalg.pinv(Mff, rcond=1e-12)
    Wc = np.zeros(M.shape)
    for r in range(nf):
        for c in range(nf):
            Wc[free[r], free[c]] = 0.5 * (Wf[r, c] + Wf[c, r])
    return Wc


@njit(cache=_CACHE, **_INTERNAL)
def _times_sparse(Wc, B, D):
    """D = Wc B for symmetric Wc and a sparse B (a few 3x3 blocks per member).

    Looping over the nonzeros of B costs nnz(B) 3n instead of the dense product's 2 (3n)^3.
    """
    nq = Wc.shape[0]
    DT = np.zeros((B.shape[1], nq))
    for r in range(B.shape[0]):
        for c in range(B.shape[1]):
            v = B[r, c]
            if v != 0.0:
                for m in range(nq):
                    DT[c, m] += v * Wc[r, m]
    copy_matrix(D, DT.T)


# inlined into rhs (and the band path's rhs, where M(q) is singular)
@njit(cache=_CACHE, inline="always")
def accelerations(q, qd, fext, model, held, qdd, gamma, psi, fallback=True):
    """qdd = W_c xi_c (docs/theory.md, "Compressible bars"), gamma and psi; returns (wdot [W],
    mass_ok).

    With ``held.hold_gamma`` (``held.hold_psi``) the members take the force densities
    ``held.gamma`` (``held.psi``) instead of their elastic laws; a held gamma applies to slack
    strings too. With `fallback` None a singular mass matrix leaves qdd unfinished (mass_ok
    False; see :data:`FALLBACK_NEEDED`).
    """
    free = model.free
    nq = q.shape[0]
    xi = np.empty(nq)
    power = forces(q, qd, fext, model, held, gamma, psi, xi)
    if model.mass_is_constant:
        copy_into(qdd, model.inverse_mass @ xi)
        return power, True
    M = np.empty((nq, nq))
    mass_matrix(q, model, M)
    L, first, ok = _factor(M, free)
    _solve_cols(M, free, L, first, ok, xi.reshape(nq, 1), qdd.reshape(nq, 1), fallback)
    return power, ok


@njit(cache=_CACHE)
def velocity_terms(q, qd, bars, out):
    """N_T(q, qd) (3n,) [N] of docs/theory.md, "Compressible bars", the Euler-Lagrange velocity
    terms, into out."""
    out[:] = 0.0
    zero = np.zeros(bars.i.shape[0])
    held = HeldForceDensities(zero, zero, False, True)   # bar forces held at 0: N_T alone
    _bar_forces(q, qd, bars, held, zero.copy(), out, with_elastic=False)
    for a in range(out.shape[0]):
        out[a] = -out[a]


@njit(cache=_CACHE, **_INTERNAL)
def _laws(gamma, psi):
    """The held record that holds nothing: every member follows its elastic law."""
    return HeldForceDensities(gamma, psi, False, False)


@njit(cache=_CACHE)
def rhs(y, fext, model, dy, fallback=True):
    """State derivative dy = [qd; qdd; wdot] of y = [q; qd; w] (members follow their laws);
    returns 2 when the mass matrix was singular (its pseudo-inverse was used), else 0 (the
    codes of :func:`tenscontrol.mechanics.compressible.banded.rhs`), or
    :data:`FALLBACK_NEEDED` (dy unfinished) when it was singular and `fallback` is None."""
    nq = (y.shape[0] - 1) // 2
    q = y[:nq]
    qd = y[nq:2 * nq]
    qdd = np.empty(nq)
    gamma = np.empty(model.members.i.shape[0])
    psi = np.empty(model.bars.i.shape[0])
    power, ok = accelerations(q, qd, fext, model, _laws(gamma, psi), qdd, gamma, psi, fallback)
    if not ok:
        if fallback is None:
            return FALLBACK_NEEDED
    copy_into(dy[:nq], qd)
    copy_into(dy[nq:2 * nq], qdd)
    dy[2 * nq] = power
    return 0 if ok else 2


@njit(cache=_CACHE, **_INTERNAL)
def _string_blocks(q, qd, members, gamma, hold_g, Sq, Sqd, pq, pqd):
    """3x3 blocks d(f_s + f_d)/db, d f_d/dbd of each string (docs/theory.md, "Linearization: force
    densities in, nodal forces as disturbances") into Sq, Sqd
    (n_strings, 3, 3); adds the damper-power gradients to pq, pqd."""
    si, sj, sk, sl0, sc, ssp = (members.i, members.j, members.stiffness, members.rest_length,
                                members.damping, members.spring)
    s = np.empty(3)
    sd = np.empty(3)
    gs = np.empty(3)
    gsd = np.empty(3)
    for k in range(si.shape[0]):
        i3 = 3 * si[k]
        j3 = 3 * sj[k]
        _diff(q, i3, j3, s)
        l2 = s[0] * s[0] + s[1] * s[1] + s[2] * s[2]
        l = np.sqrt(l2)
        active = is_active(l, sl0[k], ssp[k])
        Dq = Sq[k]
        Dqd = Sqd[k]
        Dqd[:, :] = 0.0
        mat = material_coefficient(sk[k], sl0[k], l, l2) if (active and not hold_g) else 0.0
        for r in range(3):
            for c in range(3):
                Dq[r, c] = -mat * s[r] * s[c]
            Dq[r, r] -= gamma[k]
        if active and sc[k] != 0.0:
            _diff(qd, i3, j3, sd)
            c_ = sc[k]
            rho = (s[0] * sd[0] + s[1] * sd[1] + s[2] * sd[2]) / l2
            for r in range(3):
                for c in range(3):
                    Dq[r, c] -= c_ * s[r] * (sd[c] - 2.0 * rho * s[c]) / l2
                    Dqd[r, c] = -c_ * s[r] * s[c] / l2
                Dq[r, r] -= c_ * rho
                gs[r] = -2.0 * c_ * rho * (sd[r] - rho * s[r])
                gsd[r] = -2.0 * c_ * rho * s[r]
            _scatter(pq, i3, j3, gs)
            _scatter(pqd, i3, j3, gsd)


@njit(cache=_CACHE, **_INTERNAL)
def _inertia_jac(b, bd, bdd, l, a0, a1, a2, Dq, Dqd):
    """Subtract d(N_T + M_a qdd)/db and d N_T/dbd of one bar from Dq, Dqd (qdd held)."""
    u = b / l
    ld = (b[0] * bd[0] + b[1] * bd[1] + b[2] * bd[2]) / l
    bd2 = bd[0] * bd[0] + bd[1] * bd[1] + bd[2] * bd[2]
    dld = (bd - ld * u) / l                      # d ldot / db; d ldot / dbd = u
    S = bd2 + ld * ld
    Dd = bd2 - ld * ld
    alpha = a1 * ld
    dalpha = a2 * ld * u + a1 * dld               # d alpha / db; d alpha / dbd = a1 u
    beta = a1 * S / (2.0 * l) + a0 * Dd / (l * l)
    beta_l = (a2 * S / (2.0 * l) - a1 * S / (2.0 * l * l) + a1 * Dd / (l * l)
              - 2.0 * a0 * Dd / (l * l * l))
    beta_ld = a1 * ld / l - 2.0 * a0 * ld / (l * l)
    beta_bd2 = a1 / (2.0 * l) + a0 / (l * l)
    dbeta = beta_l * u + beta_ld * dld
    dbeta_d = beta_ld * u + 2.0 * beta_bd2 * bd
    # mass term v = a (bdd - b (b . bdd) / l^2) with bdd held
    p = b[0] * bdd[0] + b[1] * bdd[1] + b[2] * bdd[2]
    c1 = (a1 / (l * l) - 2.0 * a0 / (l * l * l)) * p
    for r in range(3):
        for c in range(3):
            dN = bd[r] * dalpha[c] - b[r] * dbeta[c]
            dv = a1 * bdd[r] * u[c] - b[r] * (c1 * u[c] + a0 * bdd[c] / (l * l))
            Dq[r, c] -= dN + dv
            Dqd[r, c] = -(bd[r] * a1 * u[c] - b[r] * dbeta_d[c])
        Dq[r, r] -= -beta - a0 * p / (l * l)
        Dqd[r, r] -= alpha


@njit(cache=_CACHE, **_INTERNAL)
def _bar_blocks(q, qd, qdd, bars, psi, hold_p, Sq, Sqd):
    """3x3 blocks d(-K_b q - N_T - M_a qdd)/db, d(-N_T)/dbd of each bar (qdd held) into Sq, Sqd
    (n_bars, 3, 3)."""
    bi, bj, ba0, bra, bex, bk, bl0 = bars
    b = np.empty(3)
    bd = np.empty(3)
    bdd = np.empty(3)
    for k in range(bi.shape[0]):
        i3 = 3 * bi[k]
        j3 = 3 * bj[k]
        _diff(q, i3, j3, b)
        l2 = b[0] * b[0] + b[1] * b[1] + b[2] * b[2]
        l = np.sqrt(l2)
        Dq = Sq[k]
        Dqd = Sqd[k]
        Dqd[:, :] = 0.0
        mat = 0.0 if hold_p else material_coefficient(bk[k], bl0[k], l, l2)
        for r in range(3):
            for c in range(3):
                Dq[r, c] = -mat * b[r] * b[c]
            Dq[r, r] -= psi[k]
        if ba0[k] != 0.0 or bra[k] != 0.0:
            _diff(qd, i3, j3, bd)
            _diff(qdd, i3, j3, bdd)
            a0, a1, a2 = _a_terms(k, l, ba0, bra, bex)
            _inertia_jac(b, bd, bdd, l, a0, a1, a2, Dq, Dqd)


@njit(cache=_CACHE, inline="always")
def member_blocks(q, qd, qdd, model, held, gamma, psi, Sq, Sqd, Bq, Bqd, pw):
    """Per-member 3x3 blocks of d xi_c/d[q, qd] (qdd held) and pw (6n,) = d wdot/d[q, qd]
    without its load term (the caller adds f_ext to pw[3n:]).

    Sq, Sqd (n_strings, 3, 3) for the strings and Bq, Bqd (n_bars, 3, 3) for the bars: member k
    on nodes (i, j) adds [[D, -D], [-D, D]] to the (i, j) blocks (:func:`derivatives` assembles
    them densely, :mod:`~tenscontrol.mechanics.compressible.banded` in a band). gamma and psi
    are those :func:`forces` returned at the same state.
    """
    nq = q.shape[0]
    pw[:] = 0.0
    _string_blocks(q, qd, model.members, gamma, held.hold_gamma, Sq, Sqd, pw[:nq], pw[nq:])
    _bar_blocks(q, qd, qdd, model.bars, psi, held.hold_psi, Bq, Bqd)


@njit(cache=_CACHE, **_INTERNAL)
def _assemble(Sq, Sqd, ii, jj, Jq, Jqd):
    """Add the member blocks Sq, Sqd on nodes (ii, jj) to the dense Jq, Jqd (in member order)."""
    for k in range(ii.shape[0]):
        _add_block(Jq, 3 * ii[k], 3 * jj[k], Sq[k])
        _add_block(Jqd, 3 * ii[k], 3 * jj[k], Sqd[k])


# inlined into jacobian, its one compiled caller (as accelerations into rhs)
@njit(cache=_CACHE, inline="always")
def derivatives(q, qd, fext, model, held, qdd, gamma, psi, D, pw, fallback=True):
    """qdd and its partial derivatives D = [d qdd/dq, d qdd/dqd] (3n, 6n) (docs/theory.md,
    "Linearization: force densities in, nodal forces as disturbances").

    d qdd/dq = W_c (d xi_c/dq - d(M_qdd(q) qdd)/dq |qdd), d qdd/dqd = W_c d xi_c/dqd, with the
    members' laws or the held values as in :func:`accelerations`. Also fills
    pw (6n,) = d wdot / d[q, qd] (f_ext held). Returns (wdot [W], mass_ok); with `fallback`
    None a singular mass matrix leaves qdd, D and pw unfinished (see :data:`FALLBACK_NEEDED`).
    """
    W, free = model.inverse_mass, model.free
    nq = q.shape[0]
    xi = np.empty(nq)
    power = forces(q, qd, fext, model, held, gamma, psi, xi)
    M = np.empty((0, 0))
    L = np.empty((0, 0))
    first = np.empty(0, dtype=np.int64)
    ok = True
    if model.mass_is_constant:
        copy_into(qdd, W @ xi)
    else:
        M = np.empty((nq, nq))
        mass_matrix(q, model, M)
        L, first, ok = _factor(M, free)
        _solve_cols(M, free, L, first, ok, xi.reshape(nq, 1), qdd.reshape(nq, 1), fallback)
        if not ok:
            if fallback is None:
                return power, ok
    ns, nb = model.members.i.shape[0], model.bars.i.shape[0]
    Sq, Sqd = np.empty((ns, 3, 3)), np.empty((ns, 3, 3))
    Bq, Bqd = np.empty((nb, 3, 3)), np.empty((nb, 3, 3))
    member_blocks(q, qd, qdd, model, held, gamma, psi, Sq, Sqd, Bq, Bqd, pw)
    B = np.zeros((nq, 2 * nq))
    _assemble(Sq, Sqd, model.members.i, model.members.j, B[:, :nq], B[:, nq:])
    _assemble(Bq, Bqd, model.bars.i, model.bars.j, B[:, :nq], B[:, nq:])
    for a in range(nq):
        pw[nq + a] += fext[a]
    if model.mass_is_constant:
        _times_sparse(W, B, D)
    else:
        _solve_cols(M, free, L, first, ok, B, D, fallback)
    return power, ok


@njit(cache=_CACHE)
def jacobian(y, fext, model, J, fallback=True):
    """Dense Jacobian J = d(dy)/dy (6n+1, 6n+1) of :func:`rhs`; fext held, w column zero.
    Returns 0, or :data:`FALLBACK_NEEDED` (J unfinished) where the mass matrix is singular and
    `fallback` is None."""
    nq = (y.shape[0] - 1) // 2
    q = y[:nq]
    qd = y[nq:2 * nq]
    qdd = np.empty(nq)
    gamma = np.empty(model.members.i.shape[0])
    psi = np.empty(model.bars.i.shape[0])
    D = np.empty((nq, 2 * nq))
    pw = np.empty(2 * nq)
    held = _laws(gamma, psi)
    if not derivatives(q, qd, fext, model, held, qdd, gamma, psi, D, pw, fallback)[1]:
        if fallback is None:
            return FALLBACK_NEEDED
    J[:, :] = 0.0
    for a in range(nq):
        J[a, nq + a] = 1.0
    copy_matrix(J[nq:2 * nq, :2 * nq], D)
    copy_into(J[2 * nq, :2 * nq], pw)
    return 0


@njit(cache=_CACHE)
def total_energy(q, qd, model):
    """Etot = T(q, qd) - G^T q + V_s + V_b [J] (docs/theory.md, "Compressible bars"); slack strings
    store none."""
    return energy_given(q, qd, model, 0.5 * (qd @ (model.constant_mass @ qd)))


@njit(cache=_CACHE)
def energy_given(q, qd, model, kinetic0):
    """:func:`total_energy` with its constant-mass part 1/2 qd^T M0 qd [J] given as kinetic0."""
    bi, bj, ba0, bra, bex, bk, bl0 = model.bars
    e = kinetic0 - model.gravity @ q
    b = np.empty(3)
    bd = np.empty(3)
    for k in range(bi.shape[0]):
        i3 = 3 * bi[k]
        j3 = 3 * bj[k]
        _diff(q, i3, j3, b)
        l = np.sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2])
        e += elastic_energy(bk[k], bl0[k], l)
        if ba0[k] != 0.0 or bra[k] != 0.0:
            _diff(qd, i3, j3, bd)
            ld = (b[0] * bd[0] + b[1] * bd[1] + b[2] * bd[2]) / l
            bd2 = bd[0] * bd[0] + bd[1] * bd[1] + bd[2] * bd[2]
            e += 0.5 * _a_terms(k, l, ba0, bra, bex)[0] * (bd2 - ld * ld)
    return e + spring_potential(q, model.members)


@njit(cache=_CACHE)
def energies(Y, model):
    """Total energy [J] of each row of Y = [q, qd, ...] (nt, >= 6n)."""
    nq = model.constant_mass.shape[0]
    out = np.empty(Y.shape[0])
    for t in range(Y.shape[0]):
        out[t] = total_energy(Y[t, :nq], Y[t, nq:2 * nq], model)
    return out


# Called from Python: the variant without the pseudo-inverse first, the one with it only where
# the mass matrix is singular (so that numba compiles it on first use only).

def rhs_lazily(y, fext, model, dy) -> int:
    """:func:`rhs` (the same return), compiling the pseudo-inverse on first use only."""
    code = rhs(y, fext, model, dy, None)
    return rhs(y, fext, model, dy) if code == FALLBACK_NEEDED else code


def jacobian_lazily(y, fext, model, J) -> None:
    """:func:`jacobian`, compiling the pseudo-inverse on first use only."""
    if jacobian(y, fext, model, J, None) == FALLBACK_NEEDED:
        jacobian(y, fext, model, J)
