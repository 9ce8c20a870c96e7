"""Selecting node coordinates: the outputs, disturbance channels and measurements of a model."""

from __future__ import annotations

import numpy as np

from tenscontrol.model.structure import Structure

AXES = "xyz"


def output_coordinates(structure: Structure, nodes, axes, what: str = "outputs") -> np.ndarray:
    """Indices into q of the free coordinates selected by `nodes` (all if None) and `axes`;
    errors start with `what`."""
    n = structure.n_nodes
    if not isinstance(axes, str) or not axes or any(a not in AXES for a in axes) \
            or len(set(axes)) != len(axes):
        raise ValueError(f"{what}: axes must be distinct letters from 'xyz', got {axes!r}")
    if nodes is None:
        nodes = range(n)
    elif isinstance(nodes, (int, np.integer)):
        nodes = [nodes]
    nodes = list(nodes)
    for node in nodes:
        if not isinstance(node, (int, np.integer)) or not 0 <= node < n:
            raise ValueError(f"{what}: node {node!r} is not a node index; the structure has "
                             f"{n} nodes (indices 0 to {n - 1})")
    fixed = structure.fixed.reshape(-1)
    rows = [3 * int(i) + AXES.index(a) for i in nodes for a in axes]
    rows = np.array([r for r in rows if not fixed[r]], dtype=np.int64)
    if rows.size == 0:
        raise ValueError(f"{what}: every selected coordinate (nodes {nodes}, axes {axes!r}) is "
                         "fixed; choose free coordinates")
    return rows
