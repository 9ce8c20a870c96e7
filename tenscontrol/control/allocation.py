"""Self-stress allocation at run time: a controller whose every command is moved along the
commanded strings' self-stresses (no nodal force) to keep each string's force density within
its bounds.

The self-stress directions and the least move that keeps the bounds (a least-distance program)
are statics (:mod:`tenscontrol.statics.self_stress`); here they wrap a continuous or a sampled
controller. S is computed once, at the controller's operating point (where it was designed):
away from it the nodal forces of S c are of the order of the displacement times c, the same
order the linearization neglects.
"""

from __future__ import annotations

import numpy as np

from tenscontrol.control.controllers import Controller, controller_table, runtime_controller
from tenscontrol.control.sampled import SampledController, is_sampled, sampled_table
from tenscontrol.mechanics.laws import string_densities
from tenscontrol.model.tables import value_range
from tenscontrol.statics.self_stress import SelfStress, self_stress

__all__ = ["AllocatedController", "AllocatedSampled", "allocated"]


class _Allocating:
    """What the continuous and the sampled allocated controllers share: the wrapped
    controller's strings, kind and states, and the base the commands add to."""

    def __init__(self, controller, structure, self_stress: SelfStress):
        self.controller = controller
        self.self_stress = self_stress
        pairs = structure.string_nodes[self_stress.strings]
        self._pairs = pairs
        self._law = (structure.string_stiffness[self_stress.strings],
                     structure.string_rest_lengths[self_stress.strings],
                     structure.string_is_spring[self_stress.strings])

    strings = property(lambda self: self.controller.strings)
    gamma_ref = property(lambda self: self.controller.gamma_ref)
    kind = property(lambda self: self.controller.kind)
    n_states = property(lambda self: int(self.controller.n_states))

    @property
    def unallocated(self):
        """The wrapped controller: the one whose linear prediction this loop has."""
        return self.controller

    def __getattr__(self, name):
        # q_ref, K, measurement, ...: what the wrapped controller has (verify reads q_ref)
        if name.startswith("_") or name in ("controller", "self_stress"):
            raise AttributeError(name)
        return getattr(self.controller, name)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(of={type(self.controller).__name__}, "
                f"kind={self.kind!r}, commanded_strings={self.self_stress.strings.size}, "
                f"self_stress_dimension={self.self_stress.dimension})")

    _table = staticmethod(controller_table)

    def summary(self) -> str:
        """The wrapped controller, the commanded strings and the bounds kept as a table."""
        return self._table(
            self, ("wraps", type(self.controller).__name__),
            ("self-stresses", f"{self.self_stress.dimension} independent"),
            ("gamma_min", value_range(self.self_stress.gamma_min, "N/m")),
            ("gamma_max", value_range(self.self_stress.gamma_max, "N/m")),
            law="u + S c, the least move that keeps the bounds")

    def initial_state(self):
        return self.controller.initial_state()

    def base(self, q) -> np.ndarray:
        """What the command adds to at q (nu,) [N/m]: gamma_ref, or the strings' law."""
        if self.kind == "control":
            return np.asarray(self.gamma_ref, dtype=float)
        N = np.asarray(q, dtype=float).reshape(-1, 3)
        lengths = np.linalg.norm(N[self._pairs[:, 1]] - N[self._pairs[:, 0]], axis=1)
        return string_densities(*self._law[:2], lengths, self._law[2])


class AllocatedController(_Allocating, Controller):
    """A controller whose every command is moved along the self-stresses to keep the bounds.

    Built by :func:`allocated`. It commands the same strings, with the same kind and internal
    states, as the controller it wraps; :meth:`force_densities` returns
    ``self_stress.allocate(u, base).command`` for the wrapped controller's u, with base the
    operating-point force densities (``kind="control"``) or the strings' law at q
    (``kind="passive"``).

    Attributes
    ----------
    controller : Controller
        The wrapped controller (its linear prediction is this one's: ``B S = 0``).
    self_stress : SelfStress
    """

    def state_derivative(self, t, q, qd, xc):
        return self.controller.state_derivative(t, q, qd, xc)

    def force_densities(self, t, q, qd, xc):
        u = self.controller.force_densities(t, q, qd, xc)
        return self.self_stress.allocate(u, self.base(q)).command


class AllocatedSampled(_Allocating, SampledController):
    """A sampled controller whose every command is moved along the self-stresses to keep the
    bounds at the sample (built by :func:`allocated` from a
    :class:`~tenscontrol.SampledController`: a discretized LQR, a ``DiscreteLQG``, your own).

    :meth:`update` returns ``self_stress.allocate(u_k, base(q_k)).command`` for the wrapped
    controller's u_k and its next state unchanged (an estimator inside it goes on with the
    command it computed: the allocated one makes the same nodal forces at the operating
    point). Between samples the held command's strings follow the motion, as any held
    command's do.

    Attributes
    ----------
    controller : SampledController
        The wrapped controller (its linear prediction is this one's: ``B S = 0``).
    self_stress : SelfStress
    """

    period = property(lambda self: self.controller.period)
    delay = property(lambda self: self.controller.delay)
    _table = staticmethod(sampled_table)      # with the period and delay

    def update(self, k, t, q, qd, xk):
        u, x_next = self.controller.update(k, t, q, qd, xk)
        return self.self_stress.allocate(u, self.base(q)).command, x_next

    def sample_info(self) -> dict:
        return dict(self.controller.sample_info())


def allocated(controller, structure, *, gamma_min=0.0, gamma_max=None,
              q=None) -> AllocatedController:
    """`controller` with self-stress allocation: its commands keep every string within bounds.

    Parameters
    ----------
    controller : Controller or SampledController
        Any controller (``lqr(...).controller``, ``hinfsyn(...).controller``, a sampled one
        such as ``dlqr(...).controller`` or ``discrete_lqg(...).controller``, your own); a
        design (``lqr(...)``) gives its ``.controller``.
    structure : Structure
        The structure it runs on.
    gamma_min : float or array_like, shape (nu,)
        Least force density of each commanded string [N/m].
    gamma_max : float or array_like, shape (nu,), optional
        Largest force density [N/m]; the strings' ``gamma_max`` by default.
    q : array_like, shape (3n,), optional
        Where the self-stresses are computed: the controller's ``q_ref`` if it has one, else
        the structure's nodes.

    Returns
    -------
    AllocatedController or AllocatedSampled
        (the latter for a sampled `controller`). Its commands make the same nodal forces as the controller's (through the bar
        constraints, at q) and keep ``gamma_min <= gamma <= gamma_max`` whenever some
        self-stress combination can; otherwise the largest margin that can be kept.
    """
    controller = runtime_controller(controller)
    command = ("update",) if is_sampled(controller) else ("force_densities",)
    missing = [a for a in ("strings", "gamma_ref", "kind") + command
               if not hasattr(controller, a)]
    if missing:
        raise TypeError(f"allocated: controller must be a Controller or SampledController (it "
                        f"lacks {', '.join(missing)}), got {type(controller).__name__}")
    if q is None and hasattr(controller, "q_ref"):
        q = controller.q_ref
    stress = self_stress(structure, np.asarray(controller.strings, dtype=np.int64), q,
                         gamma_min=gamma_min, gamma_max=gamma_max)
    if is_sampled(controller):
        return AllocatedSampled(controller, structure, stress)
    return AllocatedController(controller, structure, stress)
