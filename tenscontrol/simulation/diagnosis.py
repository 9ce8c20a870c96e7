"""Why a run's steps collapsed: the stiffest member and the runaway coordinate, in words.

Called once, after the integrator gave up (step limit or step-size underflow), to turn its
counters into a cause the user can act on: either a member whose frequency estimate holds an
explicit method to tiny steps (a light node on a stiff string, a huge damper), or a coordinate
whose displacement or acceleration is running away.
"""

from __future__ import annotations

import numpy as np

from tenscontrol.model.structure import Structure

__all__ = ["fastest_member", "runaway_coordinate", "collapse_cause"]

_AXES = "xyz"


def _end_mass(structure: Structure, moving: np.ndarray, i: int, j: int) -> float:
    """The lighter lumped mass [kg] of the member's moving ends (inf if both are fully fixed)."""
    masses = [float(structure.node_masses[n]) for n in (i, j) if moving[n]]
    return min(masses) if masses else np.inf


def fastest_member(structure: Structure, bars: str) -> tuple[str, float, str] | None:
    """(name, rate [1/s], what) of the member with the highest rate: sqrt(k/m) of its stiffness,
    or c/m of its damper, with m the lighter lumped mass of its free ends; compressible bars
    count their axial stiffness. None for a structure with no such member."""
    members = [(f"string {k} (nodes {i}->{j})", i, j, k_s, c)
               for k, ((i, j), k_s, c) in enumerate(zip(structure.string_nodes,
                                                        structure.string_stiffness,
                                                        structure.string_damping))]
    if bars == "compressible":
        members += [(f"bar {k} (nodes {i}->{j})", i, j, k_b, 0.0)
                    for k, ((i, j), k_b) in enumerate(zip(structure.bar_nodes,
                                                          structure.bar_stiffness))]
    moving = np.zeros(structure.n_nodes, dtype=bool)
    moving[structure.free_coordinates // 3] = True
    best = None
    for name, i, j, k, c in members:
        m = _end_mass(structure, moving, int(i), int(j))
        if not (m > 0 and np.isfinite(m)):
            continue
        for rate, what in ((np.sqrt(k / m), f"sqrt(k/m) = sqrt({k:.3g} N/m / {m:.3g} kg)"),
                           (c / m, f"c/m = {c:.3g} N s/m / {m:.3g} kg")):
            if best is None or rate > best[1]:
                best = (name, float(rate), what)
    return best


def runaway_coordinate(structure: Structure, y: np.ndarray, dy: np.ndarray | None) -> str:
    """The free coordinate that moved farthest from its start, and the one with the largest
    acceleration (when the derivative `dy` at the last state is known), in words."""
    nq = 3 * structure.n_nodes
    free = structure.free_coordinates
    if free.size == 0:
        return ""
    q0 = structure.nodes.reshape(-1)

    def name(c):
        return f"node {c // 3} {_AXES[c % 3]}"

    moved = np.abs(y[:nq] - q0)[free]
    c = int(free[np.argmax(moved)])
    parts = [f"the largest displacement is {name(c)} ({moved.max():.3g} m from its start)"]
    if dy is not None and np.all(np.isfinite(dy[nq:2 * nq])):
        acc = np.abs(dy[nq:2 * nq])[free]
        c = int(free[np.argmax(acc)])
        parts.append(f"the largest acceleration is {name(c)} ({acc.max():.3g} m/s^2)")
    return "; ".join(parts)


def collapse_cause(structure: Structure, bars: str, y: np.ndarray, dy: np.ndarray | None,
                   h: float | None) -> str:
    """A sentence on why the steps collapsed: the fastest member when its rate times the last
    step is near an explicit method's stability limit (about 3), else the runaway coordinate."""
    member = fastest_member(structure, bars)
    runaway = runaway_coordinate(structure, y, dy)
    stiff = member is not None and h is not None and member[1] * h > 0.3
    text = []
    if member is not None:
        name, rate, what = member
        text.append(f"the fastest member is {name}: {what} = {rate:.3g} 1/s, which holds an "
                    f"explicit step to about {3 / rate:.3g} s")
    if runaway:
        text.append(runaway)
    if not stiff and runaway:
        text.reverse()  # the state, not a member, is what limits the steps
    return "; ".join(text)
