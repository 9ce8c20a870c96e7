"""Compiled force and energy kernels of the rigid-bar model: members, mass products, energy.

Re-exported by :mod:`tenscontrol.mechanics.rigid.kernels` (see there for the conventions);
:mod:`tenscontrol.mechanics.rigid.correction` uses them too.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import overload

from tenscontrol.mechanics.kernels.cache import CACHE as _CACHE
from tenscontrol.mechanics.kernels.cache import INTERNAL as _INTERNAL
from tenscontrol.mechanics.laws import (damper_density, damper_dissipation, elastic_density,
                                        is_active, string_energy, string_tension)


@njit(cache=_CACHE)
def member_forces(q, qd, members, gamma, out):
    """Force densities gamma (ns,) of the members, and their nodal forces added to `out`.

    Returns the damper power f_d . qd [W] (<= 0). The laws and the slack rule are those of
    :mod:`tenscontrol.mechanics.laws` (strings with l <= l0 slack: gamma = 0, damper off;
    springs always active). With a ``ClusteredMembers`` record, a cable's segments carry its
    tension T: gamma = T / l, slack when the whole cable is.
    """
    si, sj, sk, sl0, sc, ssp = members[0], members[1], members[2], members[3], members[4], \
        members[5]
    power = _member_forces(q, qd, si, sj, sk, sl0, sc, ssp, gamma, out)
    return power + _cable_forces(q, qd, members, True, gamma, out)


@njit(cache=_CACHE)
def elastic_forces(q, members, gamma, out):
    """As :func:`member_forces` with the dampers left out (the velocities do not enter)."""
    si, sj, sk, sl0, _, ssp = members[0], members[1], members[2], members[3], members[4], \
        members[5]
    _member_forces(q, q, si, sj, sk, sl0, np.zeros_like(sl0), ssp, gamma, out)
    _cable_forces(q, q, members, False, gamma, out)


@njit(cache=_CACHE, **_INTERNAL)
def _member_forces(q, qd, si, sj, sk, sl0, sc, ssp, gamma, out):
    """:func:`member_forces` on the unpacked member arrays (a cable segment has stiffness and
    damping 0 in its record: nothing here; :func:`_cable_forces` applies it)."""
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


def _cable_forces(q, qd, members, damped, gamma, out):
    """Replace the cable segments' string forces by the cables' (compiled by the overload)."""
    raise NotImplementedError("compiled only")  # pragma: no cover


def _cable_energy(q, members, rounding):
    """The cables' correction to the energy sums (compiled by the overload)."""
    raise NotImplementedError("compiled only")  # pragma: no cover


def _clustered(members) -> bool:
    """Whether the numba type of `members` is a ClusteredMembers record."""
    return "cable_segments" in getattr(members, "fields", ())


@overload(_cable_forces, inline="always")
def _cable_forces_overload(q, qd, members, damped, gamma, out):
    """Plain Members: nothing (inlined away, so a structure without cables runs the loop it
    always ran). ClusteredMembers: each segment gets gamma = T / l and the nodal forces of
    T / l plus its cable's damper c dL/dt / l; returns the cables' damper power [W] (<= 0)."""
    if not _clustered(members):
        return lambda q, qd, members, damped, gamma, out: 0.0
    return _cable_forces_impl


@overload(_cable_energy, inline="always")
def _cable_energy_overload(q, members, rounding):
    """Plain Members: 0. ClusteredMembers: the cables' energies (or rounding terms T L); the
    string sums count their segments as 0 (stiffness 0 in the record)."""
    if not _clustered(members):
        return lambda q, members, rounding: 0.0
    return _cable_energy_impl


def _cable_forces_impl(q, qd, members, damped, gamma, out):
    return _cable_loop(q, qd, members[0], members[1], members[7], members[8], members[9],
                       members[10], members[11], damped, gamma, out)


def _cable_energy_impl(q, members, rounding):
    return _cable_sum(q, members[0], members[1], members[7], members[8], members[9],
                      members[10], rounding)


@njit(cache=_CACHE, **_INTERNAL)
def _cable_loop(q, qd, si, sj, seg, start, ck, cl0, cc, damped, gamma, out):
    """:func:`_cable_forces` of a ClusteredMembers record, on its unpacked arrays (as
    :func:`_member_forces`: a call with the record itself costs more in reference counts
    than the loop). Two passes over each cable (length and rate, then forces): nothing is
    allocated."""
    power = 0.0
    for c in range(ck.shape[0]):
        L = 0.0
        Ld = 0.0
        for n in range(start[c], start[c + 1]):
            k = seg[n]
            i3 = 3 * si[k]
            j3 = 3 * sj[k]
            l = _length(q, si[k], sj[k])
            L += l
            Ld += ((q[j3] - q[i3]) * (qd[j3] - qd[i3])
                   + (q[j3 + 1] - q[i3 + 1]) * (qd[j3 + 1] - qd[i3 + 1])
                   + (q[j3 + 2] - q[i3 + 2]) * (qd[j3 + 2] - qd[i3 + 2])) / l
        tension = string_tension(ck[c], cl0[c], L, False)
        rate = cc[c] * Ld if damped and is_active(L, cl0[c], False) else 0.0
        power -= rate * Ld
        for n in range(start[c], start[c + 1]):
            k = seg[n]
            i3 = 3 * si[k]
            j3 = 3 * sj[k]
            s0 = q[j3] - q[i3]
            s1 = q[j3 + 1] - q[i3 + 1]
            s2 = q[j3 + 2] - q[i3 + 2]
            l = np.sqrt(s0 * s0 + s1 * s1 + s2 * s2)
            gamma[k] = tension / l
            t = (tension + rate) / l
            out[i3] += t * s0
            out[i3 + 1] += t * s1
            out[i3 + 2] += t * s2
            out[j3] -= t * s0
            out[j3 + 1] -= t * s1
            out[j3 + 2] -= t * s2
    return power


@njit(cache=_CACHE, **_INTERNAL)
def _cable_sum(q, si, sj, seg, start, ck, cl0, rounding):
    """:func:`_cable_energy` of a ClusteredMembers record, on its unpacked arrays."""
    v = 0.0
    for c in range(ck.shape[0]):
        L = 0.0
        for n in range(start[c], start[c + 1]):
            L += _length(q, si[seg[n]], sj[seg[n]])
        if rounding:
            v += abs(string_tension(ck[c], cl0[c], L, False)) * L
        else:
            v += string_energy(ck[c], cl0[c], L, False)
    return v


@njit(cache=_CACHE)
def spring_potential(q, members):
    """Elastic energy of the active tension members [J] (each cable once, as a whole)."""
    si, sj, sk, sl0, ssp = members[0], members[1], members[2], members[3], members[5]
    v = 0.0
    for k in range(si.shape[0]):
        v += string_energy(sk[k], sl0[k], _length(q, si[k], sj[k]), ssp[k])
    return v + _cable_energy(q, members, False)


@njit(cache=_CACHE)
def spring_rounding(q, members):
    """sum k |l - l0| l over the active tension members [J]: the rounding of
    :func:`spring_potential` per eps. Each length comes from coordinates known to about eps l,
    which moves V_s by the member force k |l - l0| times it: 2 V_s / strain, far above eps
    V_s for stiff strings at small strains. A cable counts T L."""
    si, sj, sk, sl0, ssp = members[0], members[1], members[2], members[3], members[5]
    v = 0.0
    for k in range(si.shape[0]):
        l = _length(q, si[k], sj[k])
        if is_active(l, sl0[k], ssp[k]):
            v += sk[k] * abs(l - sl0[k]) * l
    return v + _cable_energy(q, members, True)


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
