"""Load generators: functions ``loads(t, q, qd) -> (n_nodes, 3)`` [N] for the time-domain
functions (:func:`tenscontrol.simulate`, :func:`tenscontrol.verify`)."""

from __future__ import annotations

import numpy as np

from tenscontrol import validation
from tenscontrol.model.selection import Selection, check_selection
from tenscontrol.model.structure import Structure

__all__ = ["doublet"]


def doublet(structure: Structure, disturbances: Selection, amplitude: float = 10.0,
            half_period: float = 1.0):
    """A doublet force on the selected coordinates, as ``loads(t, q, qd) -> (n_nodes, 3)`` [N].

    +amplitude for 0 <= t < half_period, -amplitude for half_period <= t < 2 half_period,
    0 afterwards, on each selected coordinate; on one coordinate its L2 norm is
    ``amplitude * sqrt(2 half_period)`` [N s^0.5].

    Parameters
    ----------
    structure : Structure
    disturbances : Selection
        The loaded coordinates, e.g. ``Selection(2, "z")`` (node 2 along z); fixed
        coordinates are left out.
    amplitude : float
        [N].
    half_period : float
        [s], > 0.

    Returns
    -------
    callable
        ``loads(t, q=None, qd=None) -> ndarray (n_nodes, 3)``.
    """
    if not isinstance(structure, Structure):
        raise TypeError(f"doublet: expected a tenscontrol.Structure, got "
                        f"{type(structure).__name__} (the first argument is the structure now, "
                        "not the number of nodes)")
    sel = check_selection(disturbances, "doublet: disturbances")
    if sel is None:
        raise TypeError("doublet: disturbances must be a tenscontrol.Selection, e.g. "
                        "Selection(2, 'z'); got None")
    coords = sel.coordinates(structure, "doublet: disturbances")
    amplitude = validation.real("doublet: amplitude", amplitude, expected="a finite force [N]")
    half_period = validation.real("doublet: half_period", half_period, positive=True,
                                  expected="a positive time [s]")
    n_nodes = structure.n_nodes

    def loads(t, q=None, qd=None):
        f = np.zeros(3 * n_nodes)
        if t < half_period:
            f[coords] = amplitude
        elif t < 2 * half_period:
            f[coords] = -amplitude
        return f.reshape(n_nodes, 3)

    return loads
