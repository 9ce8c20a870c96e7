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
    """(position (3n,), bar_position (nc,), N): nodes in RCM order, bars after their later node.

    The rows in order: for each node in RCM order its free coordinates (x, y, z), then the
    bars whose later node it is (in bar order); one sort of those keys, not a loop over nodes.
    """
    order = node_order(n_nodes, all_bars)
    rank = np.empty(n_nodes, dtype=np.int64)
    rank[order] = np.arange(n_nodes)
    later = np.maximum(rank[bars[:, 0]], rank[bars[:, 1]]) if len(bars) else np.zeros(0, int)
    coords = np.flatnonzero(free)
    n_bars = len(later)
    node_key = np.concatenate([rank[coords // 3], later])
    kind_key = np.concatenate([np.zeros(coords.size, np.int64), np.ones(n_bars, np.int64)])
    sub_key = np.concatenate([coords % 3, np.arange(n_bars)])
    row = np.empty(coords.size + n_bars, dtype=np.int64)
    row[np.lexsort((sub_key, kind_key, node_key))] = np.arange(row.size)
    position = -np.ones(3 * n_nodes, dtype=np.int64)
    position[coords] = row[:coords.size]
    return position, row[coords.size:].copy(), row.size


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
    # the mass entries: the free diagonal, then each bar's coupling per axis (bar by bar)
    coords = np.flatnonzero(free)
    ci = 3 * np.asarray(coupling.i, dtype=np.int64)[:, None] + np.arange(3)
    cj = 3 * np.asarray(coupling.j, dtype=np.int64)[:, None] + np.arange(3)
    both = free[ci] & free[cj]
    rows = np.concatenate([position[coords], position[ci][both]])
    cols = np.concatenate([position[coords], position[cj][both]])
    vals = np.concatenate([np.asarray(mass_diagonal, dtype=float)[coords // 3],
                           np.broadcast_to(np.asarray(coupling.value, dtype=float)[:, None],
                                           ci.shape)[both]])
    # the constraint rows: each bar's row on the free coordinates of its two ends
    ends = np.concatenate([3 * bars[:, :1] + np.arange(3), 3 * bars[:, 1:] + np.arange(3)],
                          axis=1) if len(bars) else np.zeros((0, 6), np.int64)
    on = free[ends]
    pattern_rows = np.concatenate([rows, np.broadcast_to(bar_position[:, None], ends.shape)[on]])
    pattern_cols = np.concatenate([cols, position[ends][on]])
    first = envelope(n, pattern_rows.astype(np.int64), pattern_cols.astype(np.int64))
    negative = np.zeros(n, dtype=np.bool_)
    negative[bar_position] = True
    band = band_matrix(n, first, rows.astype(np.int64), cols.astype(np.int64),
                       vals.astype(float))
    return KKTPattern(position, bar_position, first, negative, band)


def normal_pattern(bars, bar_position, free) -> NormalPattern:
    """The :class:`NormalPattern` of the constrained bars (nc, 2), in the KKT order of the bars."""
    nc = len(bars)
    rank = np.empty(nc, dtype=np.int64)
    rank[np.argsort(bar_position, kind="stable")] = np.arange(nc)
    pk, pm, pn, ps = _node_pairs(bars, free, rank)
    rows = np.concatenate([2 * rank[pk] + u for u in (0, 1, 0, 1)]) if nc else np.zeros(0, int)
    cols = np.concatenate([2 * rank[pm] + v for v in (0, 0, 1, 1)]) if nc else np.zeros(0, int)
    first = envelope(2 * nc, rows, cols)
    width = int(np.max(np.arange(2 * nc) - first)) if nc else 0
    return NormalPattern(rank, first, width, pk, pm, pn, ps)


def _node_pairs(bars, free, rank):
    """(k, m, node, sign) of every pair of bars k, m meeting at a node with a free
    coordinate, rank[k] >= rank[m]: nodes in the order bars first reach them (k, i before j),
    then k and m in bar order at the node; the sign is the product of their ends' signs (-1
    at i, +1 at j). The kernels sum the pairs in this order."""
    nc = len(bars)
    ends = np.asarray(bars, dtype=np.int64).reshape(-1)                  # i0, j0, i1, j1, ...
    bar = np.repeat(np.arange(nc, dtype=np.int64), 2)
    sign = np.tile(np.array([-1.0, 1.0]), nc)
    keep = free.reshape(-1, 3)[ends].any(axis=1) if nc else np.zeros(0, bool)
    ends, bar, sign = ends[keep], bar[keep], sign[keep]
    nodes, first_seen = np.unique(ends, return_index=True)
    first = np.empty(ends.max(initial=-1) + 1, dtype=np.int64)
    first[nodes] = first_seen
    order = np.argsort(first[ends], kind="stable")     # grouped by node, in first-seen order
    ends, bar, sign = ends[order], bar[order], sign[order]
    start = np.flatnonzero(np.r_[True, ends[1:] != ends[:-1]]) if ends.size else ends
    size = np.diff(np.r_[start, ends.size])
    group_start, group_size = np.repeat(start, size), np.repeat(size, size)
    out = np.repeat(np.arange(ends.size), group_size)                    # the k of each pair
    block = np.cumsum(group_size) - group_size
    other = np.repeat(group_start, group_size) + np.arange(out.size) - np.repeat(block,
                                                                                  group_size)
    pk, pm = bar[out], bar[other]
    ok = rank[pk] >= rank[pm]
    return (pk[ok], pm[ok], ends[out][ok].astype(np.int64),
            (sign[out] * sign[other])[ok].astype(float))
