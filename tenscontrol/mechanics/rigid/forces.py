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
                                        is_active, string_energy, string_tension)


@njit(cache=_CACHE)
def member_forces(q, qd, members, gamma, out):
    """Force densities gamma (ns,) of the members, and their nodal forces added to `out`.

    Returns the damper power f_d . qd [W] (<= 0). The laws and the slack rule are those of
    :mod:`tenscontrol.mechanics.laws` (strings with l <= l0 slack: gamma = 0, damper off;
    springs always active); a segment of a clustered cable carries the cable's tension T, so
    gamma = T / l (slack when the whole cable is).
    """
    return _member_forces(q, qd, members, True, gamma, out)


@njit(cache=_CACHE)
def elastic_forces(q, members, gamma, out):
    """As :func:`member_forces` with the dampers left out (the velocities do not enter)."""
    _member_forces(q, q, members, False, gamma, out)


@njit(cache=_CACHE, **_INTERNAL)
def _cable_tensions(q, qd, members, damped, tension, rate):
    """Elastic tension (n_cables,) [N] of each cable, and its damper's tension c dL/dt [N]
    into `rate` (0 undamped or slack); returns the cables' damper power [W] (<= 0)."""
    si, sj, cab = members.i, members.j, members.cable
    tension[:] = 0.0  # the lengths L accumulate here first
    rate[:] = 0.0  # and the rates dL/dt = sum over segments of s . sd / l
    for k in range(si.shape[0]):
        c = cab[k]
        if c < 0:
            continue
        i3 = 3 * si[k]
        j3 = 3 * sj[k]
        l = _length(q, si[k], sj[k])
        tension[c] += l
        if damped:
            rate[c] += ((q[j3] - q[i3]) * (qd[j3] - qd[i3])
                        + (q[j3 + 1] - q[i3 + 1]) * (qd[j3 + 1] - qd[i3 + 1])
                        + (q[j3 + 2] - q[i3 + 2]) * (qd[j3 + 2] - qd[i3 + 2])) / l
    power = 0.0
    for c in range(tension.shape[0]):
        L = tension[c]
        cc = members.cable_damping[c]
        taut = is_active(L, members.cable_rest_length[c], False)
        tension[c] = string_tension(members.cable_stiffness[c], members.cable_rest_length[c], L,
                                    False)
        Ld = rate[c]
        rate[c] = cc * Ld if taut and damped else 0.0
        power -= rate[c] * Ld
    return power


@njit(cache=_CACHE, **_INTERNAL)
def _member_forces(q, qd, members, damped, gamma, out):
    """:func:`member_forces` (`damped` True) and :func:`elastic_forces` (False)."""
    si, sj, sk, sl0, sc, ssp = (members.i, members.j, members.stiffness, members.rest_length,
                                members.damping, members.spring)
    cab = members.cable
    nc = members.cable_stiffness.shape[0]
    tension = np.empty(nc)
    rate_c = np.empty(nc)
    power = 0.0
    if nc:
        power = _cable_tensions(q, qd, members, damped, tension, rate_c)
    for k in range(si.shape[0]):
        i3 = 3 * si[k]
        j3 = 3 * sj[k]
        s0 = q[j3] - q[i3]
        s1 = q[j3 + 1] - q[i3 + 1]
        s2 = q[j3 + 2] - q[i3 + 2]
        l2 = s0 * s0 + s1 * s1 + s2 * s2
        l = np.sqrt(l2)
        c = cab[k]
        rate = 0.0
        if c >= 0:
            g = tension[c] / l
            rate = rate_c[c] / l
        elif not is_active(l, sl0[k], ssp[k]):
            gamma[k] = 0.0
            continue
        else:
            g = elastic_density(sk[k], sl0[k], l)
            if damped and sc[k] != 0.0:
                sdot = (s0 * (qd[j3] - qd[i3]) + s1 * (qd[j3 + 1] - qd[i3 + 1])
                        + s2 * (qd[j3 + 2] - qd[i3 + 2]))
                rate = damper_density(sc[k], sdot, l2)
                power -= damper_dissipation(sc[k], sdot, l2)
        gamma[k] = g
        t = g + rate
        out[i3] += t * s0
        out[i3 + 1] += t * s1
        out[i3 + 2] += t * s2
        out[j3] -= t * s0
        out[j3 + 1] -= t * s1
        out[j3 + 2] -= t * s2
    return power


@njit(cache=_CACHE)
def _cable_lengths(q, members):
    """(n_cables,) cable lengths L [m]: the sums of their segments' lengths."""
    L = np.zeros(members.cable_stiffness.shape[0])
    for k in range(members.i.shape[0]):
        if members.cable[k] >= 0:
            L[members.cable[k]] += _length(q, members.i[k], members.j[k])
    return L


@njit(cache=_CACHE)
def spring_potential(q, members):
    """Elastic energy of the active tension members [J]."""
    si, sj, sk, sl0, ssp = (members.i, members.j, members.stiffness, members.rest_length,
                            members.spring)
    v = 0.0
    for k in range(si.shape[0]):
        if members.cable[k] < 0:
            v += string_energy(sk[k], sl0[k], _length(q, si[k], sj[k]), ssp[k])
    if members.cable_stiffness.shape[0]:
        L = _cable_lengths(q, members)
        for c in range(L.shape[0]):
            v += string_energy(members.cable_stiffness[c], members.cable_rest_length[c], L[c],
                               False)
    return v


@njit(cache=_CACHE)
def spring_rounding(q, members):
    """sum k |l - l0| l over the active tension members [J]: the rounding of
    :func:`spring_potential` per eps. Each length comes from coordinates known to about eps l,
    which moves V_s by the member force k |l - l0| times it: 2 V_s / strain, far above eps
    V_s for stiff strings at small strains."""
    si, sj, sk, sl0, ssp = (members.i, members.j, members.stiffness, members.rest_length,
                            members.spring)
    v = 0.0
    for k in range(si.shape[0]):
        l = _length(q, si[k], sj[k])
        if members.cable[k] < 0 and is_active(l, sl0[k], ssp[k]):
            v += sk[k] * abs(l - sl0[k]) * l
    if members.cable_stiffness.shape[0]:
        L = _cable_lengths(q, members)
        for c in range(L.shape[0]):
            if is_active(L[c], members.cable_rest_length[c], False):
                v += abs(string_tension(members.cable_stiffness[c],
                                        members.cable_rest_length[c], L[c], False)) * L[c]
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
