"""The total potential of a conservative structure, the static solver's merit function.

With rigid bars (or none) the loads are constant and the strings store the energy of their law
``gamma = k (1 - l0 / l)``, taut above the rest length (springs always):

    Pi(q) = sum_taut 1/2 k (l - l0)^2 - load^T q + offset^T q_free,

so that ``dPi/dq = -R`` on the free coordinates up to the bar forces, which do no work along
motions that keep the bar lengths (``offset`` is the homotopy's, see statics.continuation). A stable
equilibrium is a minimum of Pi on the bar-length manifold: a line search that asks Pi to
decrease cannot be trapped where |R| has a local minimum that is no equilibrium, the failure
of the |R| merit on soft slender towers.
"""

from __future__ import annotations

import numpy as np

from tenscontrol.mechanics.laws import active_set, string_energies
from tenscontrol.model.structure import Structure

__all__ = ["total_potential"]


def total_potential(structure: Structure, q: np.ndarray, load: np.ndarray, free: np.ndarray,
                    offset: np.ndarray) -> tuple[float, float]:
    """(Pi [J], its rounding error [J]) at q (3n,) under constant `load` (3n,) [N].

    The rounding error bounds what a difference of two values of Pi can resolve: below it
    a line search must judge a step by the residual instead.
    """
    N = q.reshape(-1, 3)
    p = structure.string_nodes
    l = np.linalg.norm(N[p[:, 1]] - N[p[:, 0]], axis=1)
    l0, spring = structure.string_rest_lengths, structure.string_is_spring
    taut = active_set(l, l0, spring)
    e = string_energies(structure.string_stiffness, l0, l, spring)
    work = load * q
    shift = offset * q[free]
    pi = float(e.sum() - work.sum() + shift.sum())
    # each member's energy loses eps k l |l - l0| to the length's rounding; the work terms eps
    scale = (np.sum(structure.string_stiffness * l * np.abs(l - l0) * taut)
             + np.abs(work).sum() + np.abs(shift).sum() + np.abs(e).sum())
    return pi, float(64 * np.finfo(float).eps * scale)
