"""Similar copies of a structure: the same structure at another size.

:func:`similar` scales a structure by a length factor s under the elastic similarity: densities,
Young's moduli and Poisson's ratios kept, so that masses scale as s^3 and stiffnesses as s;
time then scales as s, velocities are unchanged, forces scale as s^2 and energies as s^3, and
for the equations of motion to stay similar, gravity scales as 1/s and damping as s^2. (Keeping
gravity at 9.81 m/s^2 would not be a similarity: the elastic time scales as s, the pendulum
time as sqrt(s).) The structure's own scales (:func:`tenscontrol.mechanics.scales.
structure_scales`), to which the tolerances of the simulation and the static solve are
relative, then scale exactly: L, M, E, T as s, s^3, s^3, s (docs/theory.md, "Scales").
"""

from __future__ import annotations

import dataclasses
import math

__all__ = ["similar"]


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
