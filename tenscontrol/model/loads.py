"""Load generators: functions ``loads(t, q, qd) -> (n_nodes, 3)`` [N] for the time-domain
functions (:func:`tenscontrol.simulate`, :func:`tenscontrol.verify`).

A load that is piecewise constant in time is a :class:`PiecewiseConstantLoads`: callable as
any loads function, and readable by the simulation's compiled step loops, which then need no
Python per derivative evaluation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tenscontrol import validation
from tenscontrol.model.selection import Selection, check_selection
from tenscontrol.model.structure import Structure

__all__ = ["ExpectedLoad", "PiecewiseConstantLoads", "doublet"]


@dataclass(frozen=True)
class ExpectedLoad:
    """The load a design is made for (an estimator's tuning, the MPC's margin inside the hold):
    amplitude and frequency, in the units the user knows.

    Parameters
    ----------
    amplitude : float
        Force amplitude [N]: the magnitude of the nodal-force vector (its amplitude for a load
        on one coordinate; 52 = 30 sqrt(3) for ``catalog.ball_load(30.0)``, 30 N on three).
    frequency : float
        Angular frequency of the load [rad/s] (1 for ``30 sin t``); for a load with a band,
        its upper edge.
    """

    amplitude: float
    frequency: float

    def __post_init__(self):
        a = validation.real("ExpectedLoad: amplitude", self.amplitude, positive=True,
                            expected="a positive force [N], the amplitude of the nodal-force "
                                     "vector (e.g. 30.0 for 30 sin t N on one coordinate)")
        w = validation.real("ExpectedLoad: frequency", self.frequency, positive=True,
                            expected="a positive angular frequency [rad/s] (1.0 for sin t; "
                                     "2 pi f for f in Hz)")
        object.__setattr__(self, "amplitude", a)
        object.__setattr__(self, "frequency", w)

    def __repr__(self) -> str:
        return (f"ExpectedLoad(amplitude={self.amplitude:.4g} N, "
                f"frequency={self.frequency:.4g} rad/s)")


class PiecewiseConstantLoads:
    """Loads constant between switching times: ``values[k]`` [N] from ``times[k-1]`` (from
    the start for k = 0) until just before ``times[k]``.

    Parameters
    ----------
    times : ndarray, shape (k,)
        Increasing switching times [s].
    values : ndarray, shape (k + 1, n_nodes, 3)
        The nodal loads [N] before the first switch, then after each.
    """

    def __init__(self, times: np.ndarray, values: np.ndarray):
        self.times = np.array(times, dtype=float)
        self.values = np.array(values, dtype=float)
        if self.values.ndim != 3 or self.values.shape[0] != self.times.size + 1:
            raise ValueError(f"values must have shape ({self.times.size + 1}, n_nodes, 3) for "
                             f"{self.times.size} switching times, got {self.values.shape}")

    def __call__(self, t, q=None, qd=None) -> np.ndarray:
        """The loads at time t [s]: ndarray (n_nodes, 3) [N] (a new array)."""
        return self.values[int(np.searchsorted(self.times, t, side="right"))].copy()

    def __repr__(self) -> str:
        return (f"PiecewiseConstantLoads({self.times.size} switches, "
                f"{self.values.shape[1]} nodes)")


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
    PiecewiseConstantLoads
        Callable as ``loads(t, q=None, qd=None) -> ndarray (n_nodes, 3)``.
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
    values = np.zeros((3, 3 * structure.n_nodes))
    values[0, coords], values[1, coords] = amplitude, -amplitude
    return PiecewiseConstantLoads(np.array([half_period, 2 * half_period]),
                                  values.reshape(3, structure.n_nodes, 3))
