"""The sparse pattern of the rigid-bar model: mass couplings, KKT and correction envelopes.

Built once per model, in Python, for the compiled kernels of
:mod:`~tenscontrol.mechanics.rigid.kernels` (docs/theory.md, "The Lagrangian model in Cartesian
nodal coordinates" and "The direct correction with the energy row"):

- the mass matrix M = Mn kron I_3 as its node-level diagonal and one off-diagonal per bar
  (:class:`MassCoupling`): a bar couples its two nodes, nothing else does;
- :class:`KKTPattern`: the ordering and envelope of the constrained accelerations' system
  ``[M_ff J_f^T; J_f 0] [qdd_f; -lambda] = [xi_f; -h]`` on the free coordinates, with the
  constant mass part already in place;
- :class:`NormalPattern`: the envelope of the correction's normal equations ``A_g A_g^T``
  (the bar-length and velocity rows of each bar, interleaved).

Why the KKT form rather than ``J M^-1 J^T``: M couples the two nodes of a bar and every bar that
meets at a node, so M^-1 is dense along a chain of bars (a tower) while the KKT matrix keeps
M's and J's own sparsity. Ordering the nodes by reverse Cuthill-McKee on the bar graph and
placing each bar's constraint row right after the later of its two nodes makes the band of a
tower a constant whatever its height, and keeps every leading block nonsingular, so the
factorization needs no pivoting (see :mod:`~tenscontrol.mechanics.kernels.banded`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tenscontrol.mechanics.kernels.banded import band_matrix, envelope, node_order

__all__ = ["MassCoupling", "KKTPattern", "NormalPattern", "kkt_pattern", "normal_pattern"]


class MassCoupling(NamedTuple):
    """Off-diagonal blocks of the node-level mass matrix Mn; each (n_bars,), one per bar.

    Attributes
    ----------
    i, j : ndarray of int64
        The bar's end nodes.
    value : ndarray of float
        Mn[i, j] = m/4 - mu [kg]; the block of M is ``value * I_3``.
    """

    i: np.ndarray
    j: np.ndarray
    value: np.ndarray


class KKTPattern(NamedTuple):
    """Ordering and envelope of the accelerations' KKT system (N = free coordinates + bars).

    Attributes
    ----------
    position : ndarray of int64 (3n,)
        Row of each coordinate in the KKT system, -1 for a fixed one.
    bar_position : ndarray of int64 (nc,)
        Row of each constrained bar's constraint.
    first : ndarray of int64 (N,)
        First column of each row's envelope.
    negative : ndarray of bool (N,)
        True on the constraint rows (their pivots are negative).
    mass_band : ndarray (N, w+1)
        Envelope storage (:mod:`~tenscontrol.mechanics.kernels.banded`) of the mass part, zero on the
        constraint rows: the kernels copy it and add J.
    """

    position: np.ndarray
    bar_position: np.ndarray
    first: np.ndarray
    negative: np.ndarray
    mass_band: np.ndarray


class NormalPattern(NamedTuple):
    """Envelope of the correction's normal equations; bar k owns rows 2 rank[k], 2 rank[k] + 1.

    Attributes
    ----------
    rank : ndarray of int64 (nc,)
        Place of each constrained bar in the row order.
    first : ndarray of int64 (2 nc,)
        First column of each row's envelope.
    width : int
        Envelope width w (the storage is (2 nc, w+1)).
    pair_k, pair_m, pair_node : ndarray of int64 (np,)
        Each pair of constrained bars (rank[k] >= rank[m], k = m included) meeting at a node,
        once per shared node.
    pair_sign : ndarray of float (np,)
        Product of the signs (+1 end node, -1 start node) of the node in the two bars.
    """

    rank: np.ndarray
    first: np.ndarray
    width: int
    pair_k: np.ndarray
    pair_m: np.ndarray
    pair_node: np.ndarray
    pair_sign: np.ndarray


def _coordinate_order(n_nodes, all_bars, bars, free):
    """(position (3n,), bar_position (nc,), N): nodes in RCM order, bars after their later node."""
    order = node_order(n_nodes, all_bars)
    rank = np.empty(n_nodes, dtype=np.int64)
    rank[order] = np.arange(n_nodes)
    later = np.maximum(rank[bars[:, 0]], rank[bars[:, 1]]) if len(bars) else np.zeros(0, int)
    closing = [[] for _ in range(n_nodes)]
    for k in np.argsort(later, kind="stable"):
        closing[later[k]].append(k)
    position = -np.ones(3 * n_nodes, dtype=np.int64)
    bar_position = np.empty(len(bars), dtype=np.int64)
    row = 0
    for r, node in enumerate(order):
        for a in range(3 * node, 3 * node + 3):
            if free[a]:
                position[a] = row
                row += 1
        for k in closing[r]:
            bar_position[k] = row
            row += 1
    return position, bar_position, row


def kkt_pattern(n_nodes, mass_diagonal, coupling: MassCoupling, bars, free) -> KKTPattern:
    """The :class:`KKTPattern` of a rigid model.

    Parameters
    ----------
    n_nodes : int
    mass_diagonal : ndarray (n_nodes,)
        Diagonal of Mn [kg].
    coupling : MassCoupling
        Every bar's mass coupling (dropped redundant bars keep their mass).
    bars : ndarray of int64 (nc, 2)
        End nodes of the constrained bars.
    free : ndarray of bool (3n,)
        Free coordinates.
    """
    all_bars = np.column_stack([coupling.i, coupling.j])
    position, bar_position, n = _coordinate_order(n_nodes, all_bars, bars, free)
    rows, cols, vals = [], [], []
    for a in np.flatnonzero(free):
        rows.append(position[a]), cols.append(position[a]), vals.append(mass_diagonal[a // 3])
    for i, j, v in zip(coupling.i, coupling.j, coupling.value):
        for a in range(3):
            if free[3 * i + a] and free[3 * j + a]:
                rows.append(position[3 * i + a]), cols.append(position[3 * j + a]), vals.append(v)
    pattern_rows, pattern_cols = list(rows), list(cols)
    for k, (i, j) in enumerate(bars):
        for a in (*range(3 * i, 3 * i + 3), *range(3 * j, 3 * j + 3)):
            if free[a]:
                pattern_rows.append(bar_position[k]), pattern_cols.append(position[a])
    first = envelope(n, np.array(pattern_rows, dtype=np.int64),
                     np.array(pattern_cols, dtype=np.int64))
    negative = np.zeros(n, dtype=np.bool_)
    negative[bar_position] = True
    band = band_matrix(n, first, np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64),
                       np.array(vals, dtype=float))
    return KKTPattern(position, bar_position, first, negative, band)


def normal_pattern(bars, bar_position, free) -> NormalPattern:
    """The :class:`NormalPattern` of the constrained bars (nc, 2), in the KKT order of the bars."""
    nc = len(bars)
    rank = np.empty(nc, dtype=np.int64)
    rank[np.argsort(bar_position, kind="stable")] = np.arange(nc)
    at_node: dict[int, list[tuple[int, float]]] = {}
    for k, (i, j) in enumerate(bars):
        for node, sign in ((int(i), -1.0), (int(j), 1.0)):
            if free[3 * node:3 * node + 3].any():
                at_node.setdefault(node, []).append((k, sign))
    pk, pm, pn, ps = [], [], [], []
    for node, members in at_node.items():
        for k, sk in members:
            for m, sm in members:
                if rank[k] >= rank[m]:
                    pk.append(k), pm.append(m), pn.append(node), ps.append(sk * sm)
    pk, pm = np.array(pk, dtype=np.int64), np.array(pm, dtype=np.int64)
    rows = np.concatenate([2 * rank[pk] + u for u in (0, 1, 0, 1)]) if nc else np.zeros(0, int)
    cols = np.concatenate([2 * rank[pm] + v for v in (0, 0, 1, 1)]) if nc else np.zeros(0, int)
    first = envelope(2 * nc, rows, cols)
    width = int(np.max(np.arange(2 * nc) - first)) if nc else 0
    return NormalPattern(rank, first, width, pk, pm, np.array(pn, dtype=np.int64),
                         np.array(ps, dtype=float))
