"""Compiled force and energy kernels of the rigid-bar model: members, mass products, energy.

Re-exported by :mod:`tenscontrol.mechanics.rigid.kernels` (see there for the conventions);
:mod:`tenscontrol.mechanics.rigid.correction` uses them too.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tenscontrol.mechanics.kernels.cache import CACHE as _CACHE
from tenscontrol.mechanics.kernels.cache import INTERNAL as _INTERNAL
from tenscontrol.mechanics.laws import (damper_density, damper_dissipation, elastic_density,
                                        is_active, string_energy)


@njit(cache=_CACHE)
def member_forces(q, qd, members, gamma, out):
    """Force densities gamma (ns,) of the members, and their nodal forces added to `out`.

    Returns the damper power f_d . qd [W] (<= 0). The laws and the slack rule are those of
    :mod:`tenscontrol.mechanics.laws` (strings with l <= l0 slack: gamma = 0, damper off;
    springs always active).
    """
    si, sj, sk, sl0, sc, ssp = members
    return _member_forces(q, qd, si, sj, sk, sl0, sc, ssp, gamma, out)


@njit(cache=_CACHE)
def elastic_forces(q, members, gamma, out):
    """As :func:`member_forces` with the dampers left out (the velocities do not enter)."""
    si, sj, sk, sl0, _, ssp = members
    _member_forces(q, q, si, sj, sk, sl0, np.zeros_like(sl0), ssp, gamma, out)


@njit(cache=_CACHE, **_INTERNAL)
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
        if not is_active(l, sl0[k], ssp[k]):
            gamma[k] = 0.0
            continue
        g = elastic_density(sk[k], sl0[k], l)
        gamma[k] = g
        rate = 0.0
        if sc[k] != 0.0:
            sdot = (s0 * (qd[j3] - qd[i3]) + s1 * (qd[j3 + 1] - qd[i3 + 1])
                    + s2 * (qd[j3 + 2] - qd[i3 + 2]))
            rate = damper_density(sc[k], sdot, l2)
            power -= damper_dissipation(sc[k], sdot, l2)
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
        v += string_energy(sk[k], sl0[k], _length(q, si[k], sj[k]), ssp[k])
    return v


@njit(cache=_CACHE)
def spring_rounding(q, members):
    """sum k |l - l0| l over the active tension members [J]: the rounding of
    :func:`spring_potential` per eps. Each length comes from coordinates known to about eps l,
    which moves V_s by the member force k |l - l0| times it: 2 V_s / strain, far above eps
    V_s for stiff strings at small strains."""
    si, sj, sk, sl0, _, ssp = members
    v = 0.0
    for k in range(si.shape[0]):
        l = _length(q, si[k], sj[k])
        if is_active(l, sl0[k], ssp[k]):
            v += sk[k] * abs(l - sl0[k]) * l
    return v


@njit(cache=_CACHE)
def _length(q, i, j):
    """|n_j - n_i| [m] of nodes i, j in q (3n,)."""
    return np.sqrt((q[3 * j] - q[3 * i]) ** 2 + (q[3 * j + 1] - q[3 * i + 1]) ** 2
                   + (q[3 * j + 2] - q[3 * i + 2]) ** 2)


@njit(cache=_CACHE)
def mass_times(v, model, out):
    """out (3n,) = M v [kg * unit of v], M from its node diagonal and bar couplings."""
    md = model.mass_diagonal
    ci, cj, cv = model.mass_coupling
    for n in range(md.shape[0]):
        for a in range(3):
            out[3 * n + a] = md[n] * v[3 * n + a]
    for k in range(ci.shape[0]):
        i3 = 3 * ci[k]
        j3 = 3 * cj[k]
        for a in range(3):
            out[i3 + a] += cv[k] * v[j3 + a]
            out[j3 + a] += cv[k] * v[i3 + a]


@njit(cache=_CACHE)
def kinetic_energy(qd, model):
    """1/2 qd^T M qd [J]."""
    md = model.mass_diagonal
    ci, cj, cv = model.mass_coupling
    t = 0.0
    for n in range(md.shape[0]):
        t += md[n] * (qd[3 * n] ** 2 + qd[3 * n + 1] ** 2 + qd[3 * n + 2] ** 2)
    for k in range(ci.shape[0]):
        i3 = 3 * ci[k]
        j3 = 3 * cj[k]
        t += 2.0 * cv[k] * (qd[i3] * qd[j3] + qd[i3 + 1] * qd[j3 + 1] + qd[i3 + 2] * qd[j3 + 2])
    return 0.5 * t


@njit(cache=_CACHE)
def total_energy(q, qd, model):
    """Etot = 1/2 qd^T M qd - G^T q + V_s(q) [J] (Hsu et al. (2021), eq. (34))."""
    return (kinetic_energy(qd, model) - model.gravity @ q
            + spring_potential(q, model.members))
