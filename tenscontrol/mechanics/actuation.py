"""The actuation law: how a commanded force density acts on a string, and its derivatives.

The mechanics kernels apply every string's elastic law. A controller's command changes the force
density of the strings it commands to

    gamma_applied = clip(gamma_cmd, lower, gamma_max),
    gamma_cmd = law(q) + u          (kind "passive")   or   gamma_ref + u   (kind "control"),

with lower = 0 for one-sided strings (they cannot push) and -inf for two-sided springs. The
difference ``gamma_applied - law(q)`` enters as an extra nodal force ``-(gamma_applied - law)
Yhat_k q``, the same force the kernels would apply for that force density. A string's damper acts
while the string pulls (docs/theory.md, "The Lagrangian model in Cartesian nodal coordinates"):
the kernels switch it by length (l > l0), so the extra force takes it out for a string the
command leaves slack and puts it in for a string the command pulls although l <= l0.

One law for every layer that applies or predicts a command: the simulator
(:mod:`tenscontrol.simulation.actuation`, :mod:`tenscontrol.simulation.rigid_feedback`) calls
the compiled :func:`actuated_forces`, and so does the extended Kalman filter
(:class:`tenscontrol.estimation.ExtendedKalman`), which also takes the law's exact derivatives from
:func:`actuation_jacobians`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from tenscontrol.mechanics.kernels.cache import CACHE
from tenscontrol.mechanics.kernels.records import Members
from tenscontrol.mechanics.laws import (active_set, damper_density, density_slopes, is_active,
                                        string_densities, string_density)

__all__ = ["ActuatorRecord", "actuated_forces", "actuation_jacobians", "actuator_record",
           "member_laws"]


class ActuatorRecord(NamedTuple):
    """The commanded strings as the compiled actuation reads them.

    Attributes
    ----------
    members : Members
        The commanded strings, in command order, as the kernels' member record
        (:class:`tenscontrol.mechanics.kernels.records.Members`, each field (nu,)).
    lower, upper : ndarray, shape (nu,)
        Clipping bounds of the applied force densities [N/m] (-inf for springs, else 0;
        gamma_max).
    gamma_ref : ndarray, shape (nu,)
        Operating-point force densities [N/m] (``kind="control"``).
    passive : bool
        ``kind="passive"``: the command adds to the elastic law.
    """

    members: Members
    lower: np.ndarray
    upper: np.ndarray
    gamma_ref: np.ndarray
    passive: bool


def actuator_record(structure, strings, gamma_ref, kind: str) -> ActuatorRecord:
    """The :class:`ActuatorRecord` of `strings` (nu,) of `structure` with operating force
    densities `gamma_ref` (nu,) [N/m] and `kind` ("passive" or "control"); the caller checks
    them (:class:`tenscontrol.simulation.actuation.Actuators` does)."""
    strings = np.asarray(strings, dtype=np.int64).reshape(-1)
    pairs = structure.string_nodes[strings]
    spring = structure.string_is_spring[strings]
    f, i = np.ascontiguousarray, np.int64
    members = Members(f(pairs[:, 0], i), f(pairs[:, 1], i),
                      f(structure.string_stiffness[strings], float),
                      f(structure.string_rest_lengths[strings], float),
                      f(structure.string_damping[strings], float), f(spring, np.bool_))
    return ActuatorRecord(members, f(np.where(spring, -np.inf, 0.0), float),
                          f(structure.string_gamma_max[strings], float),
                          f(np.asarray(gamma_ref, dtype=float).reshape(-1), float),
                          kind == "passive")


@njit(cache=CACHE)
def _law(q, act, a):
    """Commanded string a at q (3n,): its vector s = n_j - n_i [m] (three numbers), squared
    length [m^2], elastic-law force density [N/m] and whether the kernels count it active
    (a spring, or l > l0)."""
    m = act.members
    i3, j3 = 3 * m.i[a], 3 * m.j[a]
    s0, s1, s2 = q[j3] - q[i3], q[j3 + 1] - q[i3 + 1], q[j3 + 2] - q[i3 + 2]
    l2 = s0 * s0 + s1 * s1 + s2 * s2
    length = np.sqrt(l2)
    active = is_active(length, m.rest_length[a], m.spring[a])
    law = string_density(m.stiffness[a], m.rest_length[a], length, m.spring[a])
    return s0, s1, s2, l2, law, active


@njit(cache=CACHE)
def member_laws(q, act, s, law, active):
    """s (nu, 3) [m], law (nu,) [N/m] and active (nu,) of every commanded string at q (3n,),
    as :func:`actuated_forces` sees them."""
    for a in range(act.lower.shape[0]):
        s[a, 0], s[a, 1], s[a, 2], _, law[a], active[a] = _law(q, act, a)


@njit(cache=CACHE)
def actuated_forces(q, qd, u, act, out, applied, commanded):
    """out (3n,) = the extra nodal forces [N] of the command u (nu,) [N/m] at positions q
    (3n,) [m], with the applied and commanded force densities (nu,) [N/m] written to
    `applied` and `commanded`.

    qd (3n,) [m/s] switches each string's damper to act while the string pulls (the kernels
    switch it by length); an empty qd leaves the dampers as the kernels have them.
    """
    m, n = act.members, u.shape[0]
    extra = np.empty((n, 3))
    for a in range(n):
        s0, s1, s2, l2, law, active = _law(q, act, a)
        cmd = (law if act.passive else act.gamma_ref[a]) + u[a]
        app = min(max(cmd, act.lower[a]), act.upper[a])
        density = app - law
        if qd.shape[0] != 0 and m.damping[a] != 0.0:
            i3, j3 = 3 * m.i[a], 3 * m.j[a]
            dot = ((qd[j3] - qd[i3]) * s0 + (qd[j3 + 1] - qd[i3 + 1]) * s1
                   + (qd[j3 + 2] - qd[i3 + 2]) * s2)
            rate = damper_density(m.damping[a], dot, l2)
            pulls = m.spring[a] or app > 0.0
            density += (rate if pulls else 0.0) - (rate if active else 0.0)
        extra[a, 0], extra[a, 1], extra[a, 2] = density * s0, density * s1, density * s2
        applied[a], commanded[a] = app, cmd
    out[:] = 0.0
    for a in range(n):  # every start node, then every end node (np.add.at's order before)
        for c in range(3):
            out[3 * m.i[a] + c] += extra[a, c]
    for a in range(n):
        for c in range(3):
            out[3 * m.j[a] + c] -= extra[a, c]


def actuation_jacobians(act: ActuatorRecord, q, qd, u) -> tuple[np.ndarray, np.ndarray]:
    """The derivatives of :func:`actuated_forces`'s nodal forces f(q, qd) [N] at q, qd (3n,)
    under the command u (nu,) [N/m], with the switches (slack, clipped, damper on) held as
    they are at the point: ``(d f/dq (3n, 3n) [N/m], d f/dqd (3n, 3n) [N s/m])``.

    An empty qd leaves the dampers as the kernels have them (d f/dqd is then zero), as in
    :func:`actuated_forces`.
    """
    q, u = np.asarray(q, dtype=float), np.asarray(u, dtype=float)
    qd = np.asarray(qd, dtype=float)
    m, nq = act.members, q.size
    dq, dqd = np.zeros((nq, nq)), np.zeros((nq, nq))
    if not u.size:
        return dq, dqd
    N = q.reshape(-1, 3)
    s = N[m.j] - N[m.i]                                          # (nu, 3)
    l2 = np.einsum("ac,ac->a", s, s)
    length = np.sqrt(l2)
    active = active_set(length, m.rest_length, m.spring)
    law = string_densities(m.stiffness, m.rest_length, length, m.spring)
    cmd = (law if act.passive else act.gamma_ref) + u
    applied = np.clip(cmd, act.lower, act.upper)
    density = applied - law
    # d law/ds = (k l0 / l^2) s/l while active; the applied force density follows the law
    # only for a passive command inside its bounds, so density = applied - law moves with -law
    follows = act.passive & (cmd > act.lower) & (cmd < act.upper)
    dlaw = np.where(active & ~follows, density_slopes(m.stiffness, m.rest_length, length), 0.0)
    grad = -(dlaw / length)[:, None] * s                         # d density/ds (nu, 3)
    if qd.size:
        V = qd.reshape(-1, 3)
        sd = V[m.j] - V[m.i]
        switch = ((m.spring | (applied > 0.0)).astype(float) - active) * m.damping
        dot = np.einsum("ac,ac->a", s, sd)
        density = density + switch * dot / l2
        # d(c s.sd/l^2)/ds = c (sd/l^2 - 2 (s.sd) s/l^4), d/dsd = c s/l^2
        grad = grad + (switch / l2)[:, None] * (sd - (2.0 * dot / l2)[:, None] * s)
        H = -(switch / l2)[:, None, None] * s[:, :, None] * s[:, None, :]   # d f_j/d sd
    # f_j = -density s, f_i = +density s with s = q_j - q_i
    G = -(density[:, None, None] * np.eye(3) + s[:, :, None] * grad[:, None, :])
    # string a adds c_a c_a^T (x) G_a, c_a its incidence (+1 at node j, -1 at node i)
    c = np.zeros((u.size, nq // 3))
    c[np.arange(u.size), m.j] = 1.0
    c[np.arange(u.size), m.i] = -1.0
    dq = np.einsum("an,am,axy->nxmy", c, c, G).reshape(nq, nq)
    if qd.size:
        dqd = np.einsum("an,am,axy->nxmy", c, c, H).reshape(nq, nq)
    return dq, dqd
