"""A structure's own scales (a length, a mass, an energy, a time) and its similar copies.

The tolerances of the simulation's correction, of its default absolute error test and of the
static solve are relative to these scales (docs/theory.md, "Scales"), so that a structure and
its similar copy at another size are computed to the same relative accuracy in the same number
of steps.

:func:`structure_scales` defines, from the structure alone (its initial configuration):

- length ``L``: the mean length of its members (bars and tension members) [m];
- mass ``M``: its total mass (bars and point masses) [kg];
- energy ``E``: ``1/2 sum_k k_k (l_k - l0_k)^2 + M |g| L``, the prestress energy of the
  tension members (strings when stretched, springs both ways) plus the work of gravity over
  one length [J]; if both vanish, the members' ``sum_k k_k l_k^2``, else the bars' axial
  ``sum k_b l_b^2`` (bars with a Young's modulus), else ``M L^2 / (1 s)^2``;
- time ``T = L sqrt(M / E)`` [s] (the period scale of a mass M on the stiffness E / L^2) and
  velocity ``V = L / T`` [m/s].

:func:`similar` scales a structure by a length factor s under the elastic similarity: densities,
Young's moduli and Poisson's ratios kept, so that masses scale as s^3 and stiffnesses as s;
time then scales as s, velocities are unchanged, forces scale as s^2 and energies as s^3, and
for the equations of motion to stay similar, gravity scales as 1/s and damping as s^2. (Keeping
gravity at 9.81 m/s^2 would not be a similarity: the elastic time scales as s, the pendulum
time as sqrt(s).) Under it every scale above is exact: L, M, E, T scale as s, s^3, s^3, s.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Scales", "similar", "structure_scales"]


@dataclass(frozen=True)
class Scales:
    """The characteristic scales of a structure (see :func:`structure_scales`).

    Attributes
    ----------
    length : float
        Mean member length [m].
    mass : float
        Total mass [kg].
    energy : float
        Prestress energy of the tension members plus M |g| L [J].
    time : float
        L sqrt(M / E) [s].
    """

    length: float
    mass: float
    energy: float
    time: float

    @property
    def velocity(self) -> float:
        """L / T [m/s]."""
        return self.length / self.time


def structure_scales(structure) -> Scales:
    """The length, mass, energy and time scales of `structure` (module docstring).

    Parameters
    ----------
    structure : Structure

    Returns
    -------
    Scales
        All positive and finite for a valid structure.
    """
    lengths = np.concatenate([structure.bar_lengths, structure.string_lengths])
    L = float(lengths.mean())
    M = structure.total_mass
    E = prestress_energy(structure) + M * float(np.linalg.norm(structure.gravity)) * L
    if not E > 0:  # strings at their rest lengths, no gravity: their stiffness
        E = float(np.sum(structure.string_stiffness * structure.string_lengths ** 2))
    if not E > 0:
        E = _bar_energy(structure)
    if not E > 0:
        E = M * L * L  # nothing stiff and no gravity: a time scale of 1 s
    return Scales(L, M, E, L * math.sqrt(M / E))


def prestress_energy(structure) -> float:
    """The elastic energy 1/2 sum k (l - l0)^2 [J] of the tension members in the initial
    configuration (strings only when stretched, springs both ways)."""
    stretch = structure.string_lengths - structure.string_rest_lengths
    taut = structure.string_is_spring | (stretch > 0)
    return float(0.5 * np.sum(np.where(taut, structure.string_stiffness * stretch ** 2, 0.0)))


def _bar_energy(structure) -> float:
    """sum k_b l_b^2 of the bars with a Young's modulus [J], 0 if none has one."""
    if structure.n_bars == 0 or any(b.youngs_modulus is None for b in structure.bars):
        return 0.0
    return float(np.sum(structure.bar_stiffness * structure.bar_lengths ** 2))


def similar(structure, factor: float):
    """The structure scaled by the length factor `factor` under the elastic similarity.

    Lengths (nodes, radii, rest lengths) times s; densities, Young's moduli and Poisson's
    ratios kept (so masses times s^3, stiffnesses times s); given stiffnesses and force-density
    limits times s, damping times s^2, point masses times s^3, gravity times 1/s. A motion of
    the copy is the original's with times s t, positions s q and the same velocities, under
    loads s^2 f(t / s); its energies are s^3 times the original's.

    Parameters
    ----------
    structure : Structure
    factor : float
        The length factor s > 0.

    Returns
    -------
    Structure
        Named ``"<name>-x<factor>"``.
    """
    s = float(factor)
    if not (s > 0 and math.isfinite(s)):
        raise ValueError(f"factor must be a positive, finite number, got {factor!r}")
    bars = [_scaled_member(b, s, ("radius", "rest_length"), ()) for b in structure.bars]
    strings = [_scaled_member(m, s, ("radius", "rest_length"), ("stiffness", "gamma_max"))
               for m in structure.strings]
    strings = [dataclasses.replace(m, damping=m.damping * s * s) for m in strings]
    masses = [dataclasses.replace(p, mass=p.mass * s ** 3) for p in structure.point_masses]
    return dataclasses.replace(structure, nodes=structure.nodes * s, bars=tuple(bars),
                               strings=tuple(strings), point_masses=tuple(masses),
                               gravity=structure.gravity / s, name=f"{structure.name}-x{s:g}")


def _scaled_member(member, s, lengths, per_length):
    """`member` with its length fields times s and its force-per-length fields times s."""
    changes = {name: getattr(member, name) * s for name in lengths + per_length
               if getattr(member, name) is not None}
    return dataclasses.replace(member, **changes)
