"""Compiled kernels of the rigid-bar model: forces, accelerations, energy and correction.

These are the only implementations of the rigid-bar mechanics; :mod:`tenscontrol.mechanics.rigid.model`
wraps them for users and :mod:`tenscontrol.simulation.simulator` calls them in its step loop. They are
compiled with numba because the simulator calls them thousands of times per run on small
arrays, where numpy's per-call overhead would dominate (docs/theory.md, "The direct correction with
the energy row").

Conventions (docs/theory.md, "Conventions"): q = vec(N) node by node, force densities positive in
tension, constraint forces +J^T lambda. The state is y = [q (3n), qd (3n), w (1)].
The kernels take the model as one record, ``model`` = ``RigidBarModel.kernel`` (a
:class:`~tenscontrol.mechanics.kernels.records.RigidKernelModel`: mass_diagonal, mass_coupling,
gravity, free_column, bars, members, kkt, normal), or the leaf records
:class:`~tenscontrol.mechanics.kernels.records.Members` and
:class:`~tenscontrol.mechanics.kernels.records.RigidBars`; the loops unpack them into the theory's symbols (G; bi, bj the constrained bars; si, sj, sk,
sl0, sc, ssp the members)::

    rhs(y, fext, model, dy[, fallback])    dy (6n+1,) = [qd, qdd, (f_ext + f_d) . qd];
                                           returns 1 if the least-squares fallback ran, else 0
                                           (FALLBACK_NEEDED: see below)
    accelerations(q, qd, fext, model, qdd, lam, gamma[, fallback])  -> (power, fallback code)
    correct(y, E0, correction, model[, fallback])   correction: a records.Correction;
                                           -> (iterations, converged, SVD steps)

The fallbacks (the rank-safe least squares of the accelerations, the SVD step of the
correction) are taken only when the bar rows are (nearly) dependent, which most runs never
meet, yet numba compiles everything a kernel may call: they are most of the first run's
compile time (np.linalg.lstsq alone about 8 s of CPU). With ``fallback=None`` numba prunes
them from the compiled code: :func:`rhs` then returns :data:`FALLBACK_NEEDED` (dy unfinished)
and :func:`correct` a negative SVD count (y partly corrected) where they would run, and the
caller repeats the call with ``fallback=True`` (the default), the variant that compiles them,
on first use only.
    total_energy(q, qd, model), energies(Y, model)
    member_forces(q, qd, members, gamma, out), elastic_forces(q, members, gamma, out)
    bar_violations(Y, bars)                bars: a records.RigidBars (numpy: runs once a run)

No kernel forms a (3n, 3n) array: M is held as its node diagonal and one coupling per bar, and
the accelerations (here) and the correction (:mod:`~tenscontrol.mechanics.rigid.correction`)
factor sparse systems in the envelope of the model's ordering
(:mod:`~tenscontrol.mechanics.rigid.sparse`, :mod:`~tenscontrol.mechanics.kernels.banded`), at a cost
linear in the bars for a bounded band. The forces and energy live in
:mod:`~tenscontrol.mechanics.rigid.forces` and the correction in its own module; both are
re-exported here, so this module stays the one entry point of the rigid kernels.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tenscontrol.mechanics.kernels.arrays import copy_into
from tenscontrol.mechanics.kernels.banded import ldl_factor, ldl_solve
from tenscontrol.mechanics.kernels.cache import CACHE as _CACHE
from tenscontrol.mechanics.kernels.cache import INTERNAL as _INTERNAL
from tenscontrol.mechanics.rigid.correction import correct
from tenscontrol.mechanics.rigid.forces import (elastic_forces, kinetic_energy, mass_times,
                                                member_forces, spring_potential, total_energy)

__all__ = ["FALLBACK_NEEDED", "accelerations_lazily", "correct_lazily", "rhs_lazily",
           "member_forces", "elastic_forces", "spring_potential", "mass_times", "kinetic_energy",
           "total_energy", "accelerations", "rhs", "correct", "energies", "bar_violations"]

#: What :func:`rhs` and :func:`accelerations` return, with ``fallback=None``, where the
#: least squares would run: the caller repeats the call with ``fallback=True``.
FALLBACK_NEEDED = 2


# inlined into rhs, its one compiled caller: numba compiles each kernel into a library of
# its own and optimizes its code again in every caller's, so one level less is one pass less
@njit(cache=_CACHE, inline="always")
def accelerations(q, qd, fext, model, qdd, lam, gamma, fallback=True):
    """Constrained accelerations of the rigid-bar model (Hsu et al. (2021), eqs. (21)-(23)).

    Fills `qdd` (3n,), the bar-row multipliers `lam` (nc,) and the member force densities
    `gamma` (ns,); the power is that of the non-conservative forces (f_ext + f_d) . qd [W].

    Solves the KKT system ``[M_ff J_f^T; J_f 0] [qdd_f; -lam] = [xi_f; -Jdot qd]`` on the free
    coordinates with the envelope LDL^T of the model's ordering (linear in the bars for a
    bounded band); when a constraint pivot shows (nearly) dependent bar rows, falls back to the
    rank-safe least squares on S = J W J^T (:func:`_dependent_rows`). Returns (power [W],
    code): code 1 when the least squares ran (simulate() counts it), 0 otherwise, and
    :data:`FALLBACK_NEEDED` (qdd, lam unfinished) when it would run but `fallback` is None
    (the variant compiled without it).
    """
    bi, bj, _ = model.bars
    position, bar_position, first, negative, band = model.kkt
    nq = q.shape[0]
    nc = bi.shape[0]
    w = band.shape[1] - 1
    xi = np.empty(nq)
    for a in range(nq):  # a loop: an array expression compiles a function of its own
        xi[a] = model.gravity[a] + fext[a]
    power = member_forces(q, qd, model.members, gamma, xi)
    for a in range(nq):
        power += fext[a] * qd[a]
    A = band.copy()
    z = np.zeros(band.shape[0])
    for a in range(nq):
        if position[a] >= 0:
            z[position[a]] = xi[a]
    for r in range(nc):
        p = bar_position[r]
        i3 = 3 * bi[r]
        j3 = 3 * bj[r]
        h = 0.0
        for a in range(3):
            b = q[j3 + a] - q[i3 + a]
            bd = qd[j3 + a] - qd[i3 + a]
            h += 2.0 * bd * bd
            c = position[j3 + a]
            if c >= 0:
                A[p, w - p + c] += 2.0 * b
            c = position[i3 + a]
            if c >= 0:
                A[p, w - p + c] -= 2.0 * b
        z[p] = -h
    if ldl_factor(A, first, negative, 1e-12) >= 0:
        if fallback is None:  # numba prunes the least squares from this variant
            return power, FALLBACK_NEEDED
        _dependent_rows(q, qd, xi, model, qdd, lam)
        return power, 1
    ldl_solve(A, first, z)
    for a in range(nq):
        qdd[a] = z[position[a]] if position[a] >= 0 else 0.0
    for r in range(nc):
        lam[r] = -z[bar_position[r]]
    return power, 0


@njit(cache=_CACHE, **_INTERNAL)
def _mass_solve(F, position, first, x):
    """x (3n,) = W x: M_ff^-1 on the free coordinates, 0 on fixed ones; F from the mass band."""
    z = np.zeros(F.shape[0])
    for a in range(x.shape[0]):
        if position[a] >= 0:
            z[position[a]] = x[a]
    ldl_solve(F, first, z)
    for a in range(x.shape[0]):
        x[a] = z[position[a]] if position[a] >= 0 else 0.0


@njit(cache=_CACHE, **_INTERNAL)
def _dependent_rows(q, qd, xi, model, qdd, lam):
    """The accelerations by least squares on S = J W J^T (rcond 1e-12), for dependent bar rows.

    Only taken when the bar constraints are (nearly) redundant at q: it costs O(nc n w + nc^3)
    and an nc x nc array, unlike the KKT solve.
    """
    bi, bj, _ = model.bars
    position, _, first, _, band = model.kkt
    nq = q.shape[0]
    nc = bi.shape[0]
    F = band.copy()
    w = band.shape[1] - 1
    for p in range(F.shape[0]):
        if model.kkt.negative[p]:
            F[p, w] = 1.0   # unit pivots on the constraint rows: F factors blkdiag(M_ff, I)
    ldl_factor(F, first, np.zeros(F.shape[0], dtype=np.bool_), 0.0)
    wxi = xi.copy()
    _mass_solve(F, position, first, wxi)
    b = np.empty((nc, 3))
    wjt = np.zeros((nq, nc))
    rhs = np.empty(nc)
    for r in range(nc):
        i3 = 3 * bi[r]
        j3 = 3 * bj[r]
        h = 0.0
        jwxi = 0.0
        col = np.zeros(nq)
        for a in range(3):
            b[r, a] = q[j3 + a] - q[i3 + a]
            bd = qd[j3 + a] - qd[i3 + a]
            h += 2.0 * bd * bd
            jwxi += 2.0 * b[r, a] * (wxi[j3 + a] - wxi[i3 + a])
            col[j3 + a] = 2.0 * b[r, a]
            col[i3 + a] = -2.0 * b[r, a]
        rhs[r] = -(jwxi + h)
        _mass_solve(F, position, first, col)
        wjt[:, r] = col
    S = np.empty((nc, nc))
    for r in range(nc):
        i3 = 3 * bi[r]
        j3 = 3 * bj[r]
        for c in range(nc):
            v = 0.0
            for a in range(3):
                v += b[r, a] * (wjt[j3 + a, c] - wjt[i3 + a, c])
            S[r, c] = 2.0 * v
    x = np.linalg.lstsq(S, rhs, rcond=1e-12)[0]
    copy_into(lam, x)
    copy_into(qdd, wxi + wjt @ x)


@njit(cache=_CACHE)
def rhs(y, fext, model, dy, fallback=True):
    """State derivative dy = [qd; qdd; wdot] of y = [q; qd; w]; returns 1 when the
    accelerations took the dependent-rows least squares, else 0 (:data:`FALLBACK_NEEDED`,
    dy unfinished, when they would take it and `fallback` is None)."""
    nq = (y.shape[0] - 1) // 2
    q = y[:nq]
    qd = y[nq:2 * nq]
    qdd = np.empty(nq)
    lam = np.empty(model.bars.i.shape[0])
    gamma = np.empty(model.members.i.shape[0])
    power, code = accelerations(q, qd, fext, model, qdd, lam, gamma, fallback)
    if code == FALLBACK_NEEDED:
        return code
    copy_into(dy[:nq], qd)
    copy_into(dy[nq:2 * nq], qdd)
    dy[2 * nq] = power
    return code


@njit(cache=_CACHE)
def energies(Y, model):
    """Total energy of each row of Y = [q, qd, ...] (nt, >= 6n)."""
    nq = model.gravity.shape[0]
    out = np.empty(Y.shape[0])
    for t in range(Y.shape[0]):
        out[t] = total_energy(Y[t, :nq], Y[t, nq:2 * nq], model)
    return out


def bar_violations(Y, bars):
    """|b| - l for each row of Y = [q, ...] and each bar of `bars` [m], shape (nt, n_bars).

    numpy, not compiled: it runs once per run, on the output rows, where compiling it would
    cost more than all its calls (the same arithmetic as the loop it replaced).
    """
    i, j, lengths = bars
    d = [Y[:, 3 * j + a] - Y[:, 3 * i + a] for a in range(3)]
    return np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) - lengths


# Called from Python: the variant without the fallbacks first, the one with them only where
# they are needed (so that numba compiles them on first use only).

def rhs_lazily(y, fext, model, dy) -> int:
    """:func:`rhs` (the same return), compiling its least squares on first use only."""
    code = rhs(y, fext, model, dy, None)
    return rhs(y, fext, model, dy) if code == FALLBACK_NEEDED else code


def accelerations_lazily(q, qd, fext, model, qdd, lam, gamma):
    """:func:`accelerations` (the same return), compiling its least squares on first use only."""
    power, code = accelerations(q, qd, fext, model, qdd, lam, gamma, None)
    if code == FALLBACK_NEEDED:
        return accelerations(q, qd, fext, model, qdd, lam, gamma)
    return power, code


def correct_lazily(y, E0, correction, model):
    """:func:`correct` (the same return), compiling its SVD step on first use only."""
    start = y.copy()
    result = correct(y, E0, correction, model, None)
    if result[2] >= 0:
        return result
    y[:] = start  # the variant with the SVD step corrects from the same state
    return correct(y, E0, correction, model)
