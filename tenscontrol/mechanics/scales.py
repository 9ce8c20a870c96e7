"""A structure's own scales: a length, a mass, an energy and a time.

The tolerances of the simulation's correction, of its default absolute error test and of the
static solve are relative to these scales (docs/theory.md, "Scales"), so that a structure and
its similar copy at another size (:func:`tenscontrol.model.scaling.similar`) are computed to
the same relative accuracy in the same number of steps.

:func:`structure_scales` defines, from the structure alone (its initial configuration):

- length ``L``: the mean length of its members (bars and tension members) [m]; with no
  members, the extent of its nodes, else 1 m;
- mass ``M``: its total mass (bars and point masses) [kg];
- energy ``E``: ``1/2 sum_k k_k (l_k - l0_k)^2 + M |g| L + sum_i |f_i| L``, the prestress
  energy of the tension members (by the member laws of :mod:`tenscontrol.mechanics.laws`:
  strings when stretched, springs both ways) plus the work of gravity and of the nodal loads
  at the start (when given) over one length [J]; if these vanish,
  the members' ``sum_k k_k l_k^2``, else the bars' axial ``sum k_b l_b^2`` (bars with a Young's
  modulus), else ``M L^2 / (1 s)^2``;
- time ``T = L sqrt(M / E)`` [s] (the period scale of a mass M on the stiffness E / L^2) and
  velocity ``V = L / T`` [m/s].

Under the elastic similarity of :func:`tenscontrol.model.scaling.similar` every scale is exact:
L, M, E, T scale as s, s^3, s^3, s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tenscontrol.mechanics.laws import string_energies

__all__ = ["FORCE_ROUNDING_ULPS", "Scales", "force_rounding", "prestress_energy",
           "structure_scales"]

#: A nodal force from a member law ``k (1 - l0/l) l`` carries a rounding error of a few eps
#: times ``k l``; the static solve's convergence floor and linearize's equilibrium test count
#: this many eps of the stiffest member's ``k l``.
FORCE_ROUNDING_ULPS = 16


@dataclass(frozen=True)
class Scales:
    """The characteristic scales of a structure (see :func:`structure_scales`).

    Attributes
    ----------
    length : float
        Mean member length [m].
    mass : float
        Total mass [kg] (1 kg when nothing has mass: every node fixed, no bars or masses).
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


def structure_scales(structure, loads=None) -> Scales:
    """The length, mass, energy and time scales of `structure` (module docstring).

    Parameters
    ----------
    structure : Structure
    loads : array_like, shape (n, 3) or (3n,), optional
        The external nodal forces at the start [N]: their work over one length,
        ``sum_i |f_i| L``, adds to the energy scale (a structure shaken by loads much larger
        than its prestress moves on their scale, not on the prestress's).

    Returns
    -------
    Scales
        All positive and finite for a valid structure.
    """
    lengths = np.concatenate([structure.bar_lengths, structure.string_lengths])
    span = float(np.ptp(structure.nodes, axis=0).max()) if structure.n_nodes > 1 else 0.0
    L = float(lengths.mean()) if lengths.size else span  # no members: the nodes' extent
    if not L > 0:
        L = 1.0  # a single node, or all at one point: nothing sets a length
    M = structure.total_mass
    if not M > 0:
        M = 1.0  # nothing has mass (every node fixed, no bars): nothing sets a mass
    parts = {"prestress": prestress_energy(structure),
             "gravity": M * float(np.linalg.norm(structure.gravity)) * L,
             "loads": 0.0 if loads is None else _load_sum(loads) * L}
    E = sum(parts.values())
    if not math.isfinite(E) or not math.isfinite(M) or not math.isfinite(L):
        _overflow(structure, loads, parts, L, M)
    if not E > 0:  # strings at their rest lengths, no gravity, no loads: their stiffness
        E = float(np.sum(structure.string_stiffness * structure.string_lengths ** 2))
    if not E > 0:
        E = _bar_energy(structure)
    if not E > 0:
        E = M * L * L  # nothing stiff and no gravity: a time scale of 1 s
    T = L * math.sqrt(M / E)
    if not T > 0:   # E / M above the float range: the largest finite E with a tiny mass
        _overflow(structure, loads, parts, L, M)
    return Scales(L, M, E, T)


def _load_sum(loads) -> float:
    """sum_i |f_i| [N], without overflow in the squares of forces above 1e154 N."""
    f = np.reshape(np.asarray(loads, dtype=float), (-1, 3))
    top = float(np.abs(f).max()) if f.size else 0.0
    if not 0 < top < math.inf:
        return top
    return float(np.linalg.norm(f / top, axis=1).sum()) * top


def _overflow(structure, loads, parts: dict, L: float, M: float):
    """Raise the ValueError of a structure or loads whose scales leave the float range."""
    big = max(parts, key=lambda k: parts[k] if math.isfinite(parts[k]) else math.inf)
    most = float(np.abs(loads).max()) if loads is not None and np.size(loads) else 0.0
    raise ValueError(f"{structure.name}: the energy scale E (docs/theory.md, \"Scales\") "
                     f"overflows: prestress {parts['prestress']:.3g} J + gravity "
                     f"{parts['gravity']:.3g} J + loads {parts['loads']:.3g} J (largest load "
                     f"{most:.3g} N, L = {L:.3g} m, M = {M:.3g} kg); the {big} term is near the "
                     f"float limit (1.8e308): give loads, stiffnesses and masses in ranges "
                     f"whose products stay finite (e.g. below 1e100)")


def prestress_energy(structure) -> float:
    """The elastic energy 1/2 sum k (l - l0)^2 [J] of the tension members in the initial
    configuration (strings only when stretched, springs both ways)."""
    return float(np.sum(string_energies(structure.string_stiffness,
                                        structure.string_rest_lengths,
                                        structure.string_lengths, structure.string_is_spring)))


def _bar_energy(structure) -> float:
    """sum k_b l_b^2 of the bars with a Young's modulus [J], 0 if none has one."""
    if structure.n_bars == 0 or any(b.youngs_modulus is None for b in structure.bars):
        return 0.0
    return float(np.sum(structure.bar_stiffness * structure.bar_lengths ** 2))


def force_rounding(structure, bars: str = "rigid") -> float:
    """The rounding error of the nodal forces of the member laws [N]: the larger of
    ``16 eps max k l`` and ``eps max k max |q|``.

    A member law ``k (1 - l0 / l) l`` computed in floating point loses about eps ``k l``: for
    stiff members (a compressible steel bar has k ~ 1e8 N/m) far more than a relative 1e-12,
    or even 1e-8, of the prestress forces. Nor is a configuration known better than to the
    spacing of floats at its coordinates, eps |q|, which the stiffest member turns into
    eps k |q| (a 64 m steel-string tower, k = 7e5 N/m: 1e-8 N, above 16 eps k l). No residual
    of the forces is meaningful below it; :func:`tenscontrol.static_equilibrium` stops there,
    and :func:`tenscontrol.linearize` accepts an equilibrium to within it.

    Parameters
    ----------
    structure : Structure
        Its configuration gives the member lengths l and the coordinates q.
    bars : {"rigid", "compressible"}
        With compressible bars, the bars' axial stiffness counts too (rigid bars have no law).

    Returns
    -------
    float
        The floor [N]; 0 with no member.
    """
    kl = [structure.string_stiffness * structure.string_lengths]
    k = [structure.string_stiffness]
    if bars == "compressible" and structure.n_bars:
        kl.append(structure.bar_stiffness * structure.bar_lengths)
        k.append(structure.bar_stiffness)
    eps = float(np.finfo(float).eps)
    size = float(np.abs(structure.nodes).max(initial=0.0))
    return max(FORCE_ROUNDING_ULPS * eps * float(np.concatenate(kl).max(initial=0.0)),
               eps * size * float(np.concatenate(k).max(initial=0.0)))