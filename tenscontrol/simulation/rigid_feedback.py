"""Static state feedback compiled, for the compiled rigid step loop.

With a :class:`tenscontrol.StateFeedback` controller, simulate()'s Python loop adds at every
derivative evaluation the nodal forces of the command ``u = -K (x - x*)``
(:meth:`tenscontrol.simulation.actuation.ClosedLoop.forces`, through
:meth:`~tenscontrol.simulation.actuation.Actuators.apply`). :func:`feedback_forces` computes
the same forces compiled, from a :class:`FeedbackRecord` built once per run, so that
:mod:`tenscontrol.simulation.rigid_loop` runs such closed loops too; :func:`derivative` is the
rigid model's derivative with them. The command's products sum in another order than numpy's
matrix product, so the trajectories agree to rounding, not bit for bit.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from tenscontrol.feedback.controllers import StateFeedback
from tenscontrol.mechanics.rigid import kernels as K
from tenscontrol.mechanics.kernels.cache import CACHE
from tenscontrol.mechanics.laws import damper_density, is_active, string_density

__all__ = ["FeedbackRecord", "compiled_feedback", "derivative", "feedback_forces",
           "feedback_record"]


class FeedbackRecord(NamedTuple):
    """A static state feedback and its actuated strings, as :func:`feedback_forces` reads them.

    Attributes
    ----------
    gain : ndarray, shape (nu, 2 nq)
        K [N/m per m, N/m per m/s].
    q_ref : ndarray, shape (nq,)
        Operating point q* [m].
    i, j : ndarray of int64, shape (nu,)
        End nodes of the commanded strings.
    stiffness, rest_length, damping : ndarray, shape (nu,)
        Their k [N/m], l0 [m] and c [N s/m].
    spring : ndarray of bool, shape (nu,)
        Two-sided springs.
    lower, upper : ndarray, shape (nu,)
        Clipping bounds of the applied force densities [N/m] (-inf for springs, else 0;
        gamma_max).
    gamma_ref : ndarray, shape (nu,)
        Operating-point force densities [N/m] (``kind="control"``).
    passive : bool
        ``kind="passive"``: the command adds to the elastic law.
    """

    gain: np.ndarray
    q_ref: np.ndarray
    i: np.ndarray
    j: np.ndarray
    stiffness: np.ndarray
    rest_length: np.ndarray
    damping: np.ndarray
    spring: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    gamma_ref: np.ndarray
    passive: bool


def compiled_feedback(loop) -> bool:
    """Whether the closed loop `loop` (None: open loop) has a compiled form here: exactly a
    StateFeedback (a subclass may redefine its command) with no controller states."""
    return loop is None or (type(loop.controller) is StateFeedback and loop.n_states == 0)


def feedback_record(loop, nq: int) -> FeedbackRecord:
    """The record of the closed loop's StateFeedback; with `loop` None, one with no strings."""
    f, i = np.ascontiguousarray, np.int64
    if loop is None:
        none = np.zeros(0)
        return FeedbackRecord(np.zeros((0, 2 * nq)), np.zeros(nq), np.zeros(0, i),
                              np.zeros(0, i), none, none, none, np.zeros(0, np.bool_), none,
                              none, none, True)
    c, a = loop.controller, loop.actuators
    return FeedbackRecord(f(c.K, float), f(c.q_ref, float), f(a.i, i), f(a.j, i),
                          f(a.k, float), f(a.l0, float), f(a.c, float), f(a.spring, np.bool_),
                          f(a.lower, float), f(a.upper, float), f(a.gamma_ref, float),
                          a.kind == "passive")


@njit(cache=CACHE)
def _command(y, fb, a, nq):
    """u_a = -(K[a, :nq] (q - q*) + K[a, nq:] qd) [N/m]."""
    G = fb.gain
    v = 0.0
    for b in range(nq):
        v += G[a, b] * (y[b] - fb.q_ref[b])
    w = 0.0
    for b in range(nq):
        w += G[a, nq + b] * y[nq + b]
    return -(v + w)


@njit(cache=CACHE)
def feedback_forces(y, fb, out):
    """out (3n,) = the nodal forces [N] of the feedback's command at y = [q, qd, ...], as
    Actuators.apply; returns False (out unfinished) if the command is not finite."""
    nq = out.shape[0]
    out[:] = 0.0
    extra = np.empty((fb.i.shape[0], 3))
    for a in range(fb.i.shape[0]):
        u = _command(y, fb, a, nq)
        if not np.isfinite(u):
            return False
        i3, j3 = 3 * fb.i[a], 3 * fb.j[a]
        s0, s1, s2 = y[j3] - y[i3], y[j3 + 1] - y[i3 + 1], y[j3 + 2] - y[i3 + 2]
        l2 = s0 * s0 + s1 * s1 + s2 * s2
        l = np.sqrt(l2)
        active = is_active(l, fb.rest_length[a], fb.spring[a])
        law = string_density(fb.stiffness[a], fb.rest_length[a], l, fb.spring[a])
        cmd = (law if fb.passive else fb.gamma_ref[a]) + u
        applied = min(max(cmd, fb.lower[a]), fb.upper[a])
        density = applied - law
        if fb.damping[a] != 0.0:  # the damper acts while the string pulls (Actuators.apply)
            dot = ((y[nq + j3] - y[nq + i3]) * s0 + (y[nq + j3 + 1] - y[nq + i3 + 1]) * s1
                   + (y[nq + j3 + 2] - y[nq + i3 + 2]) * s2)
            rate = damper_density(fb.damping[a], dot, l2)
            pulls = fb.spring[a] or applied > 0.0
            density += (rate if pulls else 0.0) - (rate if active else 0.0)
        extra[a, 0], extra[a, 1], extra[a, 2] = density * s0, density * s1, density * s2
    for a in range(fb.i.shape[0]):  # in np.add.at's order: every start node, then every end
        for c in range(3):
            out[3 * fb.i[a] + c] += extra[a, c]
    for a in range(fb.i.shape[0]):
        for c in range(3):
            out[3 * fb.j[a] + c] -= extra[a, c]
    return True


@njit(cache=CACHE)
def derivative(y, fext, fb, force, model, dy):
    """dy = the rigid model's derivative at y under the loads fext (3n,) plus the feedback's
    forces (`force` is work space); -1 if the command is not finite, else what K.rhs returns
    (1 when the accelerations took the dependent-rows least squares, 0 otherwise)."""
    if fb.i.shape[0] == 0:
        return K.rhs(y, fext, model, dy)
    if not feedback_forces(y, fb, force):
        return -1
    for a in range(force.shape[0]):
        force[a] = fext[a] + force[a]
    return K.rhs(y, force, model, dy)
