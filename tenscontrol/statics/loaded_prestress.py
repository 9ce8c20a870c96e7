"""Prestress where the built geometry cannot hold the load (docs/theory.md, "Static equilibrium
under loads and form-finding", "prestress goal at the loaded state"): ``equilibrium(...,
configuration="free")``.

Under gravity a structure whose equilibrium matrix is rank-deficient on the free coordinates
(an icosahedron on a face, a prism with its base fixed) can hold the load only after it sags.
The configuration and the force densities are found together, along a family of rest lengths
with one parameter, the prestress shift c >= 0:

- path "built": the prestress designed at the built geometry without gravity and loads with
  every string at ``gamma_min + c`` gives rest lengths;
- path "given" (when that design is infeasible, e.g. a payload hung from strings that only
  gravity holds, or when path "built" finds nothing): the static equilibrium at the
  structure's own rest lengths gives a loaded configuration q1 with force densities gamma1;
  rest lengths giving ``gamma1 + c`` at q1 make the family (c = 0: the structure's own).

For each c the static solve under gravity and loads gives the loaded configuration q*(c) and
its string force densities; the shortfall ``m(c) = min_k (gamma_k(q*) - gamma_min_k)`` is
driven to ``[0, tol]`` by a safeguarded secant on the measured slope (regula falsi once a
bracket is known), and the prestress design at q*(c) then gives rest lengths under which q*
is an exact equilibrium with every string at or above gamma_min. (Raising the shift by a fixed
multiple of the shortfall crept towards gamma_min and never reached it when the loaded minimum
rose by less than 0.7 per unit of shift.) Shifts are searched upwards from 0 only: when the
first design already meets gamma_min it is returned as before.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from tenscontrol.statics.result import StaticsError
from tenscontrol.statics.solve import static_equilibrium
from tenscontrol.model.structure import Structure

__all__ = ["loaded_prestress", "EVALUATIONS", "SHORTFALL_RTOL"]

#: Static solves per path at most (each with its prestress design at the loaded configuration).
EVALUATIONS = 30
#: The loaded strings' minimum is driven to within this fraction of gamma_min above it (aiming
#: at half of it: well above the 1e-9 relative tolerance with which the design at the loaded
#: configuration snaps force densities to their bounds, which would cost equilibrium accuracy).
SHORTFALL_RTOL = 1e-6


class _PathFailed(Exception):
    """One path of the search ended without a solution; the message says at which step."""


@dataclasses.dataclass
class _Search:
    """The data of one search: the rest-length family, the goal, and the designs."""

    structure: Structure
    family: object        # c -> Structure at its rest lengths (raises error_type)
    start: np.ndarray     # starting configuration of the first static solve [m]
    gamma_min: np.ndarray
    loads: object
    bars: str
    design: object        # (structure, gamma_min, loads) -> Equilibrium (fixed geometry)
    error_type: type
    source: str           # what the family's rest lengths come from, for the messages
    name: str             # the family's name in Equilibrium.rest_lengths: "built" or "given"
    tol: float = 0.0
    route: str = ""       # the last static solve's route
    first: object = None  # the static equilibrium at shift 0 when already known
    history: list = dataclasses.field(default_factory=list)  # (c, m) per static solve


def loaded_prestress(structure: Structure, design, realise, gamma_min: np.ndarray, loads,
                     bars: str, error_type):
    """The Equilibrium of `design` at the loaded configuration (see the module docstring).

    `design(structure, gamma_min, loads)` is the fixed-geometry prestress design
    (:func:`tenscontrol.equilibrium` with ``configuration="fixed"``); `realise(structure,
    gamma, psi)` the structure whose rest lengths give those force densities at its nodes;
    `error_type` their error (PrestressError), raised with what each path tried when none
    succeeds.
    """
    taut = ~structure.string_is_spring
    scale = float(np.max(gamma_min[taut], initial=0.0))
    unloaded = structure.with_gravity((0.0, 0.0, 0.0))

    def built(c):
        level = gamma_min + c * taut
        return design(unloaded, level, None).structure.with_gravity(structure.gravity)

    notes = []
    search = _Search(structure, built, structure.nodes.reshape(-1), gamma_min, loads, bars,
                     design, error_type, "the prestress design at the built geometry without "
                     "gravity and loads", "built")
    try:
        return _finish(search, _run(search, scale), ())
    except _PathFailed as failed:
        notes.append(f"from the prestress at the built geometry: {failed}")
    try:
        search = _given(structure, realise, gamma_min, loads, bars, design, error_type)
        return _finish(search, _run(search, scale), (f"built: {notes[0]}",))
    except _PathFailed as failed:
        notes.append(f"from the static equilibrium at the structure's rest lengths: {failed}")
    raise error_type(f"{structure.name}: configuration='free' found no prestress meeting "
                     "gamma_min at a loaded configuration; " + "; ".join(notes))


def _given(structure, realise, gamma_min, loads, bars, design, error_type) -> _Search:
    """The search along rest lengths giving gamma1 + c at the static equilibrium q1."""
    try:
        first = static_equilibrium(structure, loads=loads, bars=bars)
    except StaticsError as err:
        raise _PathFailed(f"the static equilibrium failed ({_short(err)})") from None
    taut = ~structure.string_is_spring

    def given(c):
        if c == 0.0:
            return first.structure
        return realise(first.structure, first.gamma + c * taut, first.bar_force_densities)

    return _Search(structure, given, first.q, gamma_min, loads, bars, design, error_type,
                   "the rest lengths for its force densities raised by the shift", "given",
                   first=first)


def _finish(search: _Search, found, fallbacks: tuple):
    """The found Equilibrium marked as configuration 'free', with its displacement, rounds,
    rest-length family, last static route and the families that failed before."""
    moved = np.linalg.norm(found.structure.nodes - search.structure.nodes, axis=1).max()
    return dataclasses.replace(found, configuration="free", displacement=float(moved),
                               rounds=len(search.history), rest_lengths=search.name,
                               static_route=search.route, fallbacks=fallbacks)


def _short(err) -> str:
    text = str(err)
    return text if len(text) <= 300 else text[:297] + "..."


def _run(search: _Search, scale: float):
    """The design at the loaded configuration of the smallest shift meeting gamma_min."""
    taut = ~search.structure.string_is_spring
    c, q = 0.0, search.start
    lo = hi = None  # (c, m) short of the goal (m < tol), and past it (m > tol, overshoot)
    for _ in range(EVALUATIONS):
        sag = _sag(search, c, q)
        search.route = sag.route
        m = float(np.min((sag.gamma - search.gamma_min)[taut], initial=np.inf))
        if not search.history:
            search.tol = SHORTFALL_RTOL * max(scale, abs(m), 1e-300)
        search.history.append((c, m))
        found, err = _attempt(search, sag.structure)
        if found is not None and (c == 0.0 or m <= search.tol):
            return found  # else the shift overshot: the loaded strings are all above the goal
        if found is None and m >= search.tol:
            raise _PathFailed(f"at prestress shift {c:.6g} N/m the loaded strings meet "
                              f"gamma_min (down to {m:+.3g} N/m above it), but the prestress "
                              f"design at that configuration failed ({_short(err)})")
        if m < search.tol:  # short, or a design that failed this close to the goal
            lo = (c, m)
        else:
            hi = (c, m)
        c, q = _next_shift(search, lo, hi), sag.q
    c_last, m_last = search.history[-1]
    raise _PathFailed(f"{EVALUATIONS} static solves raised the prestress shift to "
                      f"{c_last:.6g} N/m and left the loaded strings' minimum {m_last:+.3g} N/m "
                      "from gamma_min")


def _sag(search: _Search, c: float, q):
    """The static equilibrium of the family's rest lengths at shift c, started at q."""
    if c == 0.0 and search.first is not None:
        return search.first
    try:
        rest = search.family(c)
    except search.error_type as err:
        where = "" if c == 0.0 else f" at prestress shift {c:.6g} N/m"
        raise _PathFailed(f"{search.source} failed{where} ({_short(err)})") from None
    try:
        return static_equilibrium(rest, loads=search.loads, bars=search.bars, q=q)
    except StaticsError as err:
        raise _PathFailed(f"the static equilibrium under the loads at prestress shift {c:.6g} "
                          f"N/m failed ({_short(err)})") from None


def _attempt(search: _Search, at: Structure):
    """(Equilibrium, None) of the design at the loaded configuration, or (None, its error)."""
    try:
        return search.design(at, search.gamma_min, search.loads), None
    except search.error_type as err:
        return None, err


def _next_shift(search: _Search, lo, hi) -> float:
    """The next shift: a secant on the last two static solves towards m = tol / 2, kept inside
    the bracket [lo, hi] once one is known (else bisection), and growing at most 4-fold while
    none is."""
    target = 0.5 * search.tol
    (c1, m1) = search.history[-1]
    slope = 1.0  # the first step: the shortfall itself, as if the load took nothing more
    if len(search.history) > 1:
        c0, m0 = search.history[-2]
        if c1 != c0 and (m1 - m0) / (c1 - c0) > 0:
            slope = (m1 - m0) / (c1 - c0)
        else:
            slope = None
    step = (target - m1) / slope if slope else np.inf
    if hi is None:
        reach = max(4.0 * c1, target - m1)  # no bracket yet: at most 4 times the last shift
        return c1 + float(np.clip(step, 0.1 * (target - m1), reach))
    c = c1 + step
    (cl, _), (ch, _) = lo, hi
    return c if cl < c < ch else 0.5 * (cl + ch)  # (a NaN step fails the test too)
