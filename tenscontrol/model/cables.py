"""Clustered strings: one cable running over several nodes, with one tension along it.

A :class:`Cable` groups an ordered chain of string members (its segments: consecutive
segments share a node) into one physical cable, frictionless at its interior nodes
(docs/theory.md, "Clustered cables"): its length is the sum of its segments' lengths, it has
one rest length, one stiffness ``k = E A / L0`` from the whole cable, one tension
``T = k (L - L0)`` while ``L > L0`` (slack as a whole otherwise), and each segment carries that
tension, so a segment of length l has the force density ``T / l``. The segments' own stiffness,
rest length and damping are replaced by the cable's; they serve only as the cable's defaults.

:func:`resolve_cables` turns the given cables (instances or dicts) into validated instances, as
:class:`~tenscontrol.Structure` stores them, with every default filled in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

import numpy as np

from tenscontrol.model.checks import real, reject_unknown_keys, show
from tenscontrol.model.members import member_repr, string_stiffness_fields, member_list

__all__ = ["Cable", "cable_node_sequence", "reject_cables", "resolve_cables"]


@dataclass(frozen=True)
class Cable:
    """A clustered string: one cable through an ordered chain of string members.

    Parameters
    ----------
    strings : tuple of int
        The indices of its segments (string members of kind ``"string"``), in the order the
        cable runs; at least two, each sharing a node with the next. A string belongs to at
        most one cable.
    stiffness : float, optional
        Axial stiffness of the whole cable k [N/m]. Give this, or `youngs_modulus` (or
        `material`) and `radius`, from which ``k = E pi r^2 / rest_length``. By default the
        segments' Young's modulus and radius, which must then agree.
    youngs_modulus, radius, material
        As for :class:`~tenscontrol.String`.
    rest_length : float, optional
        Rest length L0 of the whole cable [m]. Give this or `rest_fraction`; by default the
        sum of the segments' rest lengths.
    rest_fraction : float, optional
        L0 as a fraction of the cable's initial length (the sum of its segments' lengths).
    damping : float, optional
        Damper coefficient c >= 0 [N s/m] on the cable's length rate: the tension grows by
        ``c dL/dt`` while the cable is taut. By default the segments' damping, which must
        then agree.
    """

    strings: tuple[int, ...]
    stiffness: float | None = None
    youngs_modulus: float | None = None
    radius: float | None = None
    material: str | None = None
    rest_length: float | None = None
    rest_fraction: float | None = None
    damping: float | None = None

    __repr__ = member_repr


_KEYS = [f.name for f in fields(Cable)]


def _segments(where: str, value, strings: tuple, taken: dict) -> tuple[int, ...]:
    """The cable's string indices, checked: integers in range, kind string, not in two cables."""
    if isinstance(value, (str, bytes, Mapping)) or not np.iterable(value):
        raise ValueError(f"{where}: strings must be a list of string indices, got {show(value)}")
    out = []
    for v in value:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"{where}: strings must be integer string indices, got {show(v)}")
        k = int(v)
        if not 0 <= k < len(strings):
            raise ValueError(f"{where}: string index {k} out of range; the structure has "
                             f"{len(strings)} strings (indices 0 to {len(strings) - 1})")
        if strings[k].kind != "string":
            raise ValueError(f"{where}: string {k} is a {strings[k].kind!r}; a cable's segments "
                             "must be one-sided strings (kind 'string')")
        if k in taken:
            raise ValueError(f"{where}: string {k} is already a segment of cable {taken[k]}; a "
                             "string belongs to at most one cable")
        out.append(k)
    if len(out) < 2:
        raise ValueError(f"{where}: a cable needs at least 2 segments, got {len(out)}; a single "
                         "string is an ordinary string member")
    return tuple(out)


def cable_node_sequence(segments, string_nodes: np.ndarray, where: str = "cable") -> tuple:
    """The nodes n_0, n_1, ..., n_m the cable of `segments` runs through, in order.

    Parameters
    ----------
    segments : sequence of int
        The cable's string indices, in order (m >= 2 of them).
    string_nodes : ndarray of int, shape (n_strings, 2)
        Start and end node of every string.
    where : str
        The cable's name for the error message.

    Raises
    ------
    ValueError
        If two consecutive segments share no node (the chain is broken).
    """
    pairs = [tuple(int(v) for v in string_nodes[k]) for k in segments]
    a, b = pairs[0]
    # the first segment starts at the node it does not share with the second
    start = b if a in pairs[1] and b not in pairs[1] else a
    sequence = [start]
    for s, (i, j) in zip(segments, pairs):
        here = sequence[-1]
        if here not in (i, j):
            raise ValueError(
                f"{where}: segments are not chained: string {s} (nodes {i}->{j}) does not "
                f"continue from node {here}, where the previous segment ends; list the strings "
                "in the order the cable runs, each sharing a node with the next")
        sequence.append(j if here == i else i)
    return tuple(sequence)


def _shared(where: str, name: str, segments, strings: tuple):
    """The segments' common value of `name`, or ValueError naming the field and the fix."""
    values = {getattr(strings[k], name) for k in segments}
    if len(values) != 1:
        raise ValueError(f"{where}: its segments have different {name} values "
                         f"({', '.join(sorted(map(show, values)))}); give the cable's {name}")
    return values.pop()


def _cable_fields(where: str, c: Mapping, segments, strings: tuple) -> dict:
    """The validated fields of one cable (all but strings), defaults from the segments."""
    given = dict(c)
    if given.get("stiffness") is None and given.get("youngs_modulus") is None \
            and given.get("material") is None:
        stiffness = _shared(where, "stiffness", segments, strings)
        if stiffness is not None:
            given["stiffness"] = stiffness
        else:
            given["youngs_modulus"] = _shared(where, "youngs_modulus", segments, strings)
            if given.get("radius") is None:
                given["radius"] = _shared(where, "radius", segments, strings)
    elif given.get("radius") is None and given.get("stiffness") is None:
        given["radius"] = _shared(where, "radius", segments, strings)
    out = string_stiffness_fields(where, given)
    rest_length, rest_fraction = c.get("rest_length"), c.get("rest_fraction")
    if rest_length is not None and rest_fraction is not None:
        raise ValueError(f"{where}: give rest_length or rest_fraction, not both")
    if rest_length is not None:
        rest_length = real(where, "rest_length", rest_length, positive=True)
    if rest_fraction is not None:
        rest_fraction = real(where, "rest_fraction", rest_fraction, positive=True)
    damping = c.get("damping")
    damping = (_shared(where, "damping", segments, strings) if damping is None
               else real(where, "damping", damping, nonnegative=True))
    return dict(out, rest_length=rest_length, rest_fraction=rest_fraction, damping=damping)


def resolve_cables(cables, strings: tuple, string_nodes: np.ndarray,
                   string_rest_lengths: np.ndarray) -> tuple:
    """The cables (instances or dicts) as validated :class:`Cable` instances.

    A cable given without a rest length or fraction gets the sum of its segments' rest lengths
    `string_rest_lengths` [m] as `rest_length`; every other default is filled in as well.
    """
    taken, out = {}, []
    for c, cable in enumerate(member_list("cables", cables)):
        where = f"cable {c}"
        if isinstance(cable, Cable):
            given = cable.__dict__
        elif isinstance(cable, Mapping):
            reject_unknown_keys(where, cable, _KEYS)
            if "strings" not in cable:
                raise ValueError(f"{where}: missing key 'strings' (its segments' string indices)")
            given = cable
        else:
            raise ValueError(f"{where}: expected a Cable or a dict of its fields, got "
                             f"{type(cable).__name__}")
        segments = _segments(where, given["strings"], strings, taken)
        cable_node_sequence(segments, string_nodes, where)
        values = _cable_fields(where, given, segments, strings)
        if values["rest_length"] is None and values["rest_fraction"] is None:
            values["rest_length"] = float(string_rest_lengths[list(segments)].sum())
        taken.update((k, c) for k in segments)
        out.append(Cable(strings=segments, **values))
    return tuple(out)


def reject_cables(structure, what: str) -> None:
    """ValueError if `structure` has clustered cables, which `what` does not model yet.

    The rigid-bar simulation models cables; the other layers would treat each segment as a
    string of its own (its own rest length and stiffness) and so give a different structure's
    answer: they refuse instead.
    """
    if getattr(structure, "cables", None):  # not a Structure: the caller's own check names it
        raise ValueError(
            f"{what}: structure {structure.name!r} has {len(structure.cables)} clustered "
            f"cable(s), which {what} does not model yet (only the rigid-bar simulate does); "
            "build it without them (dataclasses.replace(structure, cables=())) to treat their "
            "segments as separate strings")
