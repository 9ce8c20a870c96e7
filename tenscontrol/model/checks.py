"""Strict checks of user input for the model layer: numbers, node indices, keys, ranges.

Every check raises a ValueError whose message starts with where the value sits (``"bar 3
(nodes 2->5)"``), names the field and says what was expected. Numbers are strict: a string, a
bool or a complex number is not a number, and an integer too large for a float is reported as
such rather than as Python's OverflowError. Messages show values through :func:`show`, which
stays short and never recurses into deeply nested input.
"""

from __future__ import annotations

import contextlib
import gc
import math
from collections.abc import Mapping, Sequence

import numpy as np

from tenscontrol import validation
from tenscontrol.validation import reject_unknown_keys, show

__all__ = ["SMALLEST", "LARGEST", "SHORTEST_RELATIVE", "show", "real", "node_index",
           "node_pair", "reject_unknown_keys", "first_out_of_range", "paused_gc"]

#: Smallest and largest magnitude [SI units] of a physical quantity of a structure (lengths,
#: radii, rest lengths, masses, stiffnesses, coordinates, gravity). Within this window the
#: products the mechanics forms (k l^2, k/m, (k/m)^2, m g l, l^4 ...) stay far from overflow
#: and underflow, and it spans every physical structure by many orders of magnitude.
SMALLEST = 1e-30
LARGEST = 1e30

#: Shortest member length relative to the structure's size (the span of its nodes or its
#: largest coordinate, whichever is larger). Shorter members have directions known to fewer
#: than 10 significant digits, which breaks the rank test of the bar constraints and the
#: tangent stiffness; the error asks to merge the nodes or rescale instead.
SHORTEST_RELATIVE = 1e-6


def real(where: str, name: str, value, *, positive: bool = False,
         nonnegative: bool = False, finite: bool = True) -> float:
    """`value` as a finite float; ValueError naming `where` and `name` otherwise.

    Accepts Python and numpy integers and floats (not bools, strings or complex numbers), as
    :func:`tenscontrol.validation.real` with ``error=ValueError``. With ``finite=False`` inf
    and NaN pass (the caller reports them with more context).
    """
    return validation.real(f"{where}: {name}", value, finite=finite,
                           low=0.0 if positive or nonnegative else None, open_low=positive,
                           error=ValueError, typed=False)


def node_index(where: str, value, n_nodes: int, *, integral_floats: bool = False) -> int:
    """`value` as a node index in [0, n_nodes); ValueError naming `where` otherwise.

    Integers only (not bools or strings); `integral_floats` also accepts 2.0 for 2.
    """
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if not ok and integral_floats and isinstance(value, (float, np.floating)):
        ok = math.isfinite(value) and value == int(value)
    if not ok:
        raise ValueError(f"{where}: node must be an integer node index, got {show(value)}")
    i = int(value)
    if not 0 <= i < n_nodes:
        raise ValueError(f"{where}: node index {show(i)} out of range; the structure has "
                         f"{n_nodes} nodes (indices 0 to {n_nodes - 1})")
    return i


def node_pair(where: str, nodes, n_nodes: int) -> tuple[int, int]:
    """Two different node indices (integers, or floats equal to integers) as ints."""
    if isinstance(nodes, (str, bytes, Mapping)) or not isinstance(nodes, (Sequence, np.ndarray)) \
            or len(nodes) != 2:
        raise ValueError(f"{where}: nodes must be two node indices, got {show(nodes)}")
    pair = []
    for v in nodes:
        if not ((isinstance(v, (int, np.integer)) or (isinstance(v, (float, np.floating))
                 and math.isfinite(v) and v == int(v))) and not isinstance(v, (bool, np.bool_))):
            raise ValueError(f"{where}: nodes must be two node indices, got {show(nodes)}")
        pair.append(node_index(where, v, n_nodes, integral_floats=True))
    i, j = pair
    if i == j:
        raise ValueError(f"{where}: joins node {i} to itself; a member needs two different nodes")
    return i, j


def first_out_of_range(values: np.ndarray, low: float = SMALLEST,
                       high: float = LARGEST) -> int | None:
    """Index of the first entry not in [low, high] (NaN included), or None."""
    bad = np.flatnonzero(~((values >= low) & (values <= high)))
    return int(bad[0]) if bad.size else None


@contextlib.contextmanager
def paused_gc():
    """Pause Python's cyclic garbage collector while building many small objects.

    Reading a 100k-node structure allocates millions of lists, dicts and floats, none of
    them cyclic; each collection pass rescans all of them, which tripled the loading time.
    Reference counting still frees everything; the collector resumes as it was.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
