"""Checks of a controller against the structure it is simulated with, at simulate()'s
boundary: a controller designed for another structure is refused before the run, naming both
sizes, instead of failing inside its first command with numpy's broadcasting error."""

from __future__ import annotations

import numpy as np

__all__ = ["check_fits"]

# where a controller keeps the operating point q* it was designed at
_OPERATING_POINTS = ("q_ref", "measurement.q_ref", "kalman.measurement.q_ref")


def _operating_point(controller, depth: int = 0):
    """(shape, where) of the operating point of `controller` (or of the controller it wraps),
    or None for a controller of the user's that keeps none."""
    for where in _OPERATING_POINTS:
        owner = controller
        for name in where.split("."):
            try:
                owner = getattr(owner, name, None)
            except Exception:  # a property of the user's that fails: nothing to check here
                owner = None
            if owner is None:
                break
        if isinstance(owner, np.ndarray):
            return owner.shape, where
    inner = getattr(controller, "controller", None)   # an allocated controller's wrapped one
    return None if inner is None or depth > 2 else _operating_point(inner, depth + 1)


def check_fits(structure, controller) -> None:
    """Refuse a controller designed for a structure of another size (before the run, not
    as a broadcasting error inside its first command)."""
    found = _operating_point(controller)
    nq = 3 * structure.n_nodes
    if found is not None and found[0] != (nq,):
        shape, where = found
        size = int(np.prod(shape))
        raise ValueError(f"controller: {type(controller).__name__} was designed for a structure "
                         f"of {size // 3} nodes ({where} has {size} coordinates), the structure "
                         f"simulated has {structure.n_nodes} nodes ({nq}); design it on this "
                         f"structure, e.g. tenscontrol.lqr(tenscontrol.linearize(structure))")
