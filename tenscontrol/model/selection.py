"""Selecting node coordinates: the outputs, disturbance channels and measurements of a model.

:class:`Selection` is the one spelling of "these coordinates" across the public API:
``outputs=``, ``disturbances=`` and ``measurements=`` all take one (``measurements`` may also
select string lengths).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tenscontrol.model.structure import Structure

__all__ = ["AXES", "Selection", "check_selection"]

AXES = "xyz"
_EXAMPLE = "Selection(nodes=[2, 3], axes='xz'), or Selection(3, 'x') + Selection(6, 'y')"


def _is_index(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _indices(value, name: str) -> tuple:
    """A sequence of non-negative ints as a tuple; TypeError/ValueError naming `name`."""
    if isinstance(value, (str, bytes, dict)) or not np.iterable(value):
        raise TypeError(f"Selection: {name} must be a sequence of ints, got {value!r}")
    items = tuple(value)
    for item in items:
        if not _is_index(item):
            raise TypeError(f"Selection: {name} must be ints, got {item!r} in {value!r}")
        if item < 0:
            raise ValueError(f"Selection: {name} must be >= 0, got {int(item)}")
    return tuple(int(i) for i in items)


@dataclass(frozen=True, repr=False)
class Selection:
    """A selection of node coordinates (and, for measurements, string lengths).

    Parameters
    ----------
    nodes : "all", int or sequence of int
        The nodes, in order; ``"all"`` (default) for every node, ``[]`` for none (string
        lengths only).
    axes : str
        Distinct letters of ``"xyz"``, in order within a node.
    strings : sequence of int
        Strings whose lengths are selected (only ``measurements`` arguments accept them).

    Notes
    -----
    ``a + b`` concatenates, keeping the order: ``Selection(3, "x") + Selection(6, "y") +
    Selection(7, "z")`` selects x3, y6, z7 (the nodal-force channels fx3, fy6, fz7 as
    ``disturbances``). The coordinates come node by node within each term, the terms one
    after the other; the strings of every term come after all coordinates.
    ``nodes`` and ``axes`` are those of the first term; :attr:`terms` lists them all.
    """

    nodes: object = "all"
    axes: str = "xyz"
    strings: tuple = ()
    _more: tuple = field(default=(), init=False, repr=False)  # later terms of a sum (+)

    def __post_init__(self):
        nodes = self.nodes
        if isinstance(nodes, str):
            if nodes != "all":
                raise TypeError(f"Selection: nodes must be 'all', an int or a sequence of ints, "
                                f"got {nodes!r}")
        elif _is_index(nodes):
            if nodes < 0:
                raise ValueError(f"Selection: nodes must be >= 0, got {int(nodes)}")
            nodes = int(nodes)
        else:
            nodes = _indices(nodes, "nodes")
        axes = self.axes
        if not isinstance(axes, str) or not axes or any(a not in AXES for a in axes) \
                or len(set(axes)) != len(axes):
            raise ValueError(f"Selection: axes must be distinct letters from 'xyz', got {axes!r}")
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "strings", _indices(self.strings, "strings"))

    @property
    def all_strings(self) -> tuple:
        """The selected strings of every term, in order."""
        return tuple(k for t in self.terms for k in t.strings)

    @property
    def terms(self) -> tuple:
        """The terms of a sum, each a Selection of its own (a single term: ``(self,)``)."""
        if not self._more:
            return (self,)
        return (Selection(self.nodes, self.axes, self.strings),) + self._more

    def __add__(self, other):
        if not isinstance(other, Selection):
            return NotImplemented
        out = Selection(self.nodes, self.axes, self.strings)
        object.__setattr__(out, "_more", self.terms[1:] + other.terms)
        return out

    def __repr__(self) -> str:
        return " + ".join(_term_repr(t) for t in self.terms)

    def coordinates(self, structure: Structure, what: str = "outputs") -> np.ndarray:
        """Indices (int) into q of the selected free coordinates, in order.

        `structure` needs only ``n_nodes`` and ``fixed``. Fixed coordinates are left out
        (their deviations are identically zero, the constraints absorb their forces). Errors
        start with `what` (the argument, e.g. ``"hinfsyn: disturbances"``) and name the node
        and the fix. An empty result is an error, unless the selection names strings and no
        node.
        """
        n = structure.n_nodes
        fixed = structure.fixed.reshape(-1)
        rows, requested = [], []
        for term in self.terms:
            nodes = _node_list(term.nodes, n)
            for node in nodes:
                if not 0 <= node < n:
                    raise ValueError(f"{what}: node {node!r} is not a node index; the structure "
                                     f"has {n} nodes (indices 0 to {n - 1})")
            term_rows = [3 * i + AXES.index(a) for i in nodes for a in term.axes]
            requested += term_rows
            rows += [r for r in term_rows if not fixed[r]]
        if len(set(requested)) != len(requested):
            c = next(r for r in requested if requested.count(r) > 1)
            raise ValueError(f"{what}: coordinate {AXES[c % 3]}{c // 3} is selected twice in "
                             f"{self!r}; select each coordinate once")
        if not rows and (requested or not self.all_strings):
            if not requested:
                raise ValueError(f"{what}: {self!r} selects nothing; select nodes (or, for "
                                 "measurements, strings)")
            where = (f"nodes {_node_list(self.nodes, n)}, axes {self.axes!r}"
                     if not self._more else repr(self))
            raise ValueError(f"{what}: every selected coordinate ({where}) is fixed; choose "
                             "free coordinates")
        return np.array(rows, dtype=np.int64)


def _node_list(nodes, n_nodes: int) -> list:
    return list(range(n_nodes)) if nodes == "all" else (
        [nodes] if isinstance(nodes, int) else list(nodes))


def _term_repr(term: Selection) -> str:
    nodes = list(term.nodes) if isinstance(term.nodes, tuple) else term.nodes
    text = f"nodes={nodes!r}, axes={term.axes!r}"
    if term.strings:
        text += f", strings={list(term.strings)!r}"
    return f"Selection({text})"


def _channel(item) -> Selection:
    """One old-style channel as a Selection: "fz2" / "z2" / (2, "z")."""
    if isinstance(item, str):
        name = item[1:] if item[:1] in ("f", "v") and item[1:2] in ("x", "y", "z") else item
        return Selection(int(name[1:]), name[0])
    node, axis = item
    return Selection(node, axis)


def _suggestion(value) -> str | None:
    """The Selection spelling of an old-style selection (a dict, (node, axis) pairs, "fz2")."""
    try:
        if isinstance(value, dict):
            keys = {k: v for k, v in value.items()
                    if k in ("nodes", "axes", "strings") and v is not None}
            if keys.get("strings") and "nodes" not in keys:
                keys["nodes"] = []      # the old measurement(strings=...) measured lengths only
            return repr(Selection(**keys))
        single = isinstance(value, str) or (isinstance(value, tuple) and len(value) == 2
                                            and isinstance(value[1], str))
        items = [value] if single else list(value)
        return repr(sum(map(_channel, items[1:]), _channel(items[0])))
    except (TypeError, ValueError, KeyError, IndexError):
        return None


def check_selection(value, argument: str, *, strings: bool = False) -> Selection | None:
    """`value` if it is a Selection (or None); a TypeError naming `argument` otherwise.

    With ``strings=False`` a Selection of string lengths is a ValueError: only
    ``measurements`` take string lengths.
    """
    if value is None:
        return None
    if not isinstance(value, Selection):
        hint = _suggestion(value)
        got = f"{type(value).__name__} {value!r}"
        raise TypeError(f"{argument} must be a tenscontrol.Selection: write {hint} for {got}"
                        if hint else f"{argument} must be a tenscontrol.Selection, e.g. "
                        f"{_EXAMPLE}; got {got}")
    if not strings and value.all_strings:
        raise ValueError(f"{argument} selects node coordinates only, got string lengths in "
                         f"{value!r}; measure string lengths with measurements= (an "
                         "output-feedback design), or drop strings=")
    return value
