"""Static state feedback compiled, for the compiled rigid step loop.

With a :class:`tenscontrol.StateFeedback` controller, simulate()'s Python loop adds at every
derivative evaluation the nodal forces of the command ``u = -K (x - x*)``
(:meth:`tenscontrol.simulation.actuation.ClosedLoop.forces`, through
:meth:`~tenscontrol.simulation.actuation.Actuators.apply`). :func:`feedback_forces` computes
the command compiled, from a :class:`FeedbackRecord` built once per run, and its forces with
the same compiled actuation (:func:`~tenscontrol.mechanics.actuation.actuated_forces`), so
that :mod:`tenscontrol.simulation.rigid_loop` runs such closed loops too; :func:`derivative`
is the rigid model's derivative with them. The command's products sum in another order than
numpy's matrix product, so the trajectories agree to rounding, not bit for bit.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from tenscontrol.control.controllers import StateFeedback
from tenscontrol.mechanics.rigid import kernels as K
from tenscontrol.mechanics.kernels.cache import CACHE
from tenscontrol.mechanics.kernels.records import Members
from tenscontrol.mechanics.actuation import ActuatorRecord, actuated_forces

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
    actuators : ActuatorRecord
        The commanded strings (:attr:`tenscontrol.simulation.actuation.Actuators.record`).
    """

    gain: np.ndarray
    q_ref: np.ndarray
    actuators: ActuatorRecord


def compiled_feedback(loop) -> bool:
    """Whether the closed loop `loop` (None: open loop) has a compiled form here: exactly a
    StateFeedback (a subclass may redefine its command) with no controller states and no
    commanded cables (their actuation runs in numpy, :class:`~tenscontrol.simulation.
    actuation.Actuators`)."""
    return loop is None or (type(loop.controller) is StateFeedback and loop.n_states == 0
                            and not loop.controller.cables.size)  # cables: the Python loop


def feedback_record(loop, nq: int) -> FeedbackRecord:
    """The record of the closed loop's StateFeedback; with `loop` None, one with no strings."""
    f = np.ascontiguousarray
    if loop is None:
        none, i = np.zeros(0), np.zeros(0, np.int64)
        members = Members(i, i, none, none, none, np.zeros(0, np.bool_))
        return FeedbackRecord(np.zeros((0, 2 * nq)), np.zeros(nq),
                              ActuatorRecord(members, none, none, none, True))
    c = loop.controller
    return FeedbackRecord(f(c.K, float), f(c.q_ref, float), loop.actuators.record)


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
    n = fb.actuators.lower.shape[0]
    u = np.empty(n)
    for a in range(n):
        u[a] = _command(y, fb, a, nq)
        if not np.isfinite(u[a]):
            return False
    actuated_forces(y[:nq], y[nq:2 * nq], u, fb.actuators, out, np.empty(n), np.empty(n))
    return True


@njit(cache=CACHE, inline="always")
def derivative(y, fext, fb, force, model, dy, fallback):
    """dy = the rigid model's derivative at y under the loads fext (3n,) plus the feedback's
    forces (`force` is work space); -1 if the command is not finite, else what K.rhs returns
    (1 when the accelerations took the dependent-rows least squares, 0 otherwise,
    K.FALLBACK_NEEDED when they would and `fallback` is None: see K.rhs).

    fb None (open loop) leaves the feedback out of the compiled code (numba prunes it)."""
    if fb is None:
        return K.rhs(y, fext, model, dy, fallback)
    if fb.actuators.lower.shape[0] == 0:
        return K.rhs(y, fext, model, dy, fallback)
    if not feedback_forces(y, fb, force):
        return -1
    for a in range(force.shape[0]):
        force[a] = fext[a] + force[a]
    return K.rhs(y, force, model, dy, fallback)
