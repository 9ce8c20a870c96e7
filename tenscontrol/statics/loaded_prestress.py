"""Prestress where the built geometry cannot hold the load (docs/theory.md, "Static equilibrium
under loads and form-finding", "prestress goal at the loaded state"): ``equilibrium(...,
configuration="free")``.

Under gravity a structure whose equilibrium matrix is rank-deficient on the free coordinates
(an icosahedron on a face, a prism with its base fixed) can hold the load only after it sags.
The configuration and the force densities are found together: a prestress at the built geometry
without gravity and loads gives rest lengths, the static solve under gravity and loads at those
rest lengths gives the sagged configuration, and a prestress design there (now feasible: the
sagged configuration's own force densities hold it) gives rest lengths under which that
configuration is an exact equilibrium. When the strings at the sagged configuration are below
`gamma_min` and no design there lifts them, the unloaded prestress is raised and the loop
repeats.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from tenscontrol.statics.solve import static_equilibrium
from tenscontrol.model.structure import Structure

__all__ = ["loaded_prestress"]

_ROUNDS = 12


def loaded_prestress(structure: Structure, design, gamma_min: np.ndarray, loads, bars: str,
                     error_type):
    """The Equilibrium of `design` at the loaded configuration (see the module docstring).

    `design(structure, gamma_min, loads)` is the fixed-geometry prestress design
    (:func:`tenscontrol.equilibrium` with ``configuration="fixed"``); `error_type` its error
    (PrestressError), raised with the history of the rounds when none succeeds.
    """
    unloaded = structure.with_gravity((0.0, 0.0, 0.0))
    level = gamma_min.copy()
    notes = []
    for _ in range(_ROUNDS):
        rest = design(unloaded, level, None).structure.with_gravity(structure.gravity)
        sag = static_equilibrium(rest, loads=loads, bars=bars)
        try:
            found = design(sag.structure, gamma_min, loads)
        except error_type as err:
            taut = ~structure.string_is_spring
            short = float(np.max((gamma_min - sag.gamma)[taut], initial=0.0))
            notes.append(f"unloaded prestress {level.max():.4g} N/m: strings down to "
                         f"{sag.gamma[taut].min(initial=np.inf):.4g} N/m loaded ({err})")
            if short <= 0:
                raise
            level = level + 1.5 * short  # raise the prestress by what the load took, with margin
            continue
        moved = np.linalg.norm(found.structure.nodes - structure.nodes, axis=1).max()
        return dataclasses.replace(found, configuration="free", displacement=float(moved))
    raise error_type(f"{structure.name}: configuration='free' found no prestress meeting "
                     f"gamma_min at the loaded configuration in {_ROUNDS} rounds: "
                     + "; ".join(notes[-2:]))
