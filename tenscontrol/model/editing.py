"""New structures from old ones: the immutable-update pattern behind the ``Structure.with_*`` methods.

A :class:`~tenscontrol.Structure` never changes; each function here returns a new, fully
validated structure with some fields replaced and everything else kept. The member edits take
one value for every selected member or a sequence with one value per selected member, and keep
the member's description consistent: a new material resets the properties the preset supplies
(unless given in the same call), a new rest length replaces a rest fraction and the other way
round, a new stiffness replaces a Young's modulus and the other way round.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from tenscontrol import validation
from tenscontrol.model.checks import show
from tenscontrol.model.frames import base_frame

__all__ = ["KEEP", "with_nodes", "with_members", "with_base", "with_scale"]


class _Keep:
    """The default of an edit argument: keep the member's current value."""

    def __repr__(self) -> str:
        return "KEEP"


KEEP = _Keep()

# what a new value of one field clears, so that the member stays a consistent description
_BAR_CLEARS = {"material": ("density", "youngs_modulus", "poisson")}
_STRING_CLEARS = {
    "material": ("youngs_modulus", "stiffness"),
    "youngs_modulus": ("stiffness",),
    "stiffness": ("youngs_modulus", "material"),
    "rest_length": ("rest_fraction",),
    "rest_fraction": ("rest_length",),
}


def _selected(kind: str, which, count: int) -> np.ndarray:
    """Indices of the members `which` selects (all by default), checked against `count`."""
    if which is None:
        return np.arange(count)
    if isinstance(which, (str, bytes)) or isinstance(which, (bool, np.bool_)):
        raise ValueError(f"which: expected {kind} indices (an int or a list of ints), "
                         f"got {show(which)}")
    idx = np.atleast_1d(np.asarray(which))
    if idx.ndim != 1 or (idx.size and not np.issubdtype(idx.dtype, np.integer)):
        raise ValueError(f"which: expected {kind} indices (an int or a list of ints), "
                         f"got {show(which)}")
    bad = idx[(idx < 0) | (idx >= count)]
    if bad.size:
        raise ValueError(f"which: {kind} {int(bad[0])} does not exist; the structure has "
                         f"{count} {kind}s (indices 0 to {count - 1})")
    values, counts = np.unique(idx, return_counts=True)
    if np.any(counts > 1):  # two values for one member: which would win is arbitrary
        raise ValueError(f"which: {kind} {int(values[counts > 1][0])} is selected "
                         f"{int(counts.max())} times; select each {kind} once")
    return idx.astype(np.int64)


def _per_member(kind: str, name: str, value, count: int) -> list:
    """`value` as one entry per selected member: a scalar repeated, or a sequence of `count`."""
    if isinstance(value, (str, bytes, bool, np.bool_)) or value is None or np.ndim(value) == 0:
        return [value] * count
    values = list(value.tolist() if isinstance(value, np.ndarray) else value)
    if len(values) != count:
        raise ValueError(f"{name}: got {len(values)} values for {count} selected {kind}s; give "
                         f"one value for all or one per selected {kind}")
    return values


def with_members(structure, kind: str, which, changes: dict):
    """A copy of `structure` with the fields `changes` of the selected bars or strings replaced.

    `kind` is ``"bar"`` or ``"string"``; `changes` maps field names to a value (or one per
    selected member); entries equal to :data:`KEEP` are ignored.
    """
    changes = {k: v for k, v in changes.items() if v is not KEEP}
    members = list(structure.bars if kind == "bar" else structure.strings)
    idx = _selected(kind, which, len(members))
    if not changes:
        return structure
    clears = _BAR_CLEARS if kind == "bar" else _STRING_CLEARS
    cleared = {c for name in changes for c in clears.get(name, ()) if c not in changes}
    columns = {name: _per_member(kind, name, v, idx.size) for name, v in changes.items()}
    for pos, k in enumerate(idx):
        new = {c: None for c in cleared}
        new.update({name: col[pos] for name, col in columns.items()})
        # the resolved member's fields as a dict: the Structure validates (and names) them anew
        members[k] = {**members[k].__dict__, **new}
    field = "bars" if kind == "bar" else "strings"
    return dataclasses.replace(structure, **{field: tuple(members)})


def with_nodes(structure, nodes, keep_rest_lengths: bool = True):
    """A copy of `structure` with the nodes at `nodes`; see :meth:`Structure.with_nodes`."""
    try:
        shape = np.shape(nodes)
    except (TypeError, ValueError):  # ragged rows: the Structure names the row
        shape = None
    if shape is not None and shape != (structure.n_nodes, 3):
        raise ValueError(f"with_nodes: nodes must have shape ({structure.n_nodes}, 3), one row "
                         f"per node of the structure, got shape {shape}; to add or remove "
                         "nodes, build a new Structure")
    if not keep_rest_lengths:
        return dataclasses.replace(structure, nodes=nodes)
    strings = [dataclasses.replace(s, rest_length=float(l0), rest_fraction=None)
               for s, l0 in zip(structure.strings, structure.string_rest_lengths)]
    bars = [dataclasses.replace(b, rest_length=float(l0))
            for b, l0 in zip(structure.bars, structure.bar_rest_lengths)]
    cables = [dataclasses.replace(c, rest_length=float(l0), rest_fraction=None)
              for c, l0 in zip(structure.cables, structure.cable_rest_lengths)]
    return dataclasses.replace(structure, nodes=nodes, strings=tuple(strings), bars=tuple(bars),
                               cables=tuple(cables))


def with_base(structure, nodes):
    """A copy of `structure` standing on the nodes `nodes`; see :meth:`Structure.with_base`."""
    base = validation.indices("with_base: nodes", nodes, structure.n_nodes, what="node index")
    if len(set(base.tolist())) < 3:
        raise ValueError(f"with_base: nodes must be at least three distinct nodes that span the "
                         f"base plane, got {base.tolist()}")
    placed = base_frame(structure.nodes, base.tolist(), name="with_base")
    return dataclasses.replace(structure, nodes=placed)


def with_scale(structure, factor):
    """A copy of `structure` with every length times `factor`; see :meth:`Structure.with_scale`."""
    factor = validation.real("with_scale: factor", factor, positive=True)
    strings = [s if s.rest_length is None else
               dataclasses.replace(s, rest_length=s.rest_length * factor)
               for s in structure.strings]
    bars = [b if b.rest_length is None else
            dataclasses.replace(b, rest_length=b.rest_length * factor) for b in structure.bars]
    cables = [c if c.rest_length is None else
              dataclasses.replace(c, rest_length=c.rest_length * factor) for c in structure.cables]
    return dataclasses.replace(structure, nodes=np.asarray(structure.nodes) * factor,
                               strings=tuple(strings), bars=tuple(bars), cables=tuple(cables))
