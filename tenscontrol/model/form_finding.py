"""Form-finding by the force density method (Schek 1974; Tibert & Pellegrino 2003).

Pure linear algebra on the topology (numpy and scipy only), so that the catalog can use it.
With force densities w_k on the members (strings w > 0, bars w < 0) and no loads, every free node
is in equilibrium when ``D N = 0`` on its rows, with the force density matrix
``D = C^T diag(w) C`` (n x n) and C the member-node incidence matrix. With fixed nodes (given
coordinates) the free ones follow from the linear solve ``D_ff N_f = -D_fx N_x``. A free-standing
3-D structure needs a null space of D of dimension 4 (rank n - 4): the all-ones vector and the
three coordinate columns. The force densities usually have to be adjusted to reach it (the
nonlinear refinement, after the adaptive force density method of Zhang & Ohsaki 2006): here the
densities of chosen member groups are solved for, by least squares on the three smallest
eigenvalues of D on the complement of the ones vector. The geometry is then that null space,
orthonormalised; it is unique up to an affine map, and orthonormalising it picks the map under
which the nodes' second moments are isotropic (for a symmetric structure, its regular shape up
to a rotation and a stretch along its axes of symmetry).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.optimize

from tenscontrol import validation

__all__ = ["FormFinding", "equilibrium_matrix", "force_density_matrix", "form_find"]


def _pairs(pairs, n_nodes: int, name: str) -> np.ndarray:
    try:
        p = np.asarray(pairs, dtype=object).reshape(-1, 2)
    except ValueError:
        raise ValueError(f"form_find: {name}s must be pairs of node indices, e.g. [(0, 2), "
                         f"(1, 3)], got {validation.show(pairs)}") from None
    # integers only: 2.7 or True would otherwise be truncated to a node index
    p = validation.indices(f"form_find: {name}s", p.reshape(-1), None, what="node index")
    p = p.reshape(-1, 2)
    bad = np.flatnonzero((p < 0).any(axis=1) | (p >= n_nodes).any(axis=1) | (p[:, 0] == p[:, 1]))
    if bad.size:
        raise ValueError(f"{name} {bad[0]} joins nodes {p[bad[0]].tolist()}: node indices must "
                         f"be distinct and in 0..{n_nodes - 1}")
    return p


def incidence(pairs: np.ndarray, n_nodes: int) -> np.ndarray:
    """Member-node incidence matrix C (m, n): -1 at the start node, +1 at the end node."""
    C = np.zeros((len(pairs), n_nodes))
    C[np.arange(len(pairs)), pairs[:, 0]] = -1.0
    C[np.arange(len(pairs)), pairs[:, 1]] = 1.0
    return C


def force_density_matrix(n_nodes: int, pairs, densities) -> np.ndarray:
    """The force density matrix ``D = C^T diag(w) C`` (n, n) [N/m] of members `pairs` (m, 2)."""
    p = _pairs(pairs, n_nodes, "member")
    C = incidence(p, n_nodes)
    return C.T @ (np.asarray(densities, dtype=float).reshape(-1)[:, None] * C)


def equilibrium_matrix(nodes, pairs) -> np.ndarray:
    """The equilibrium matrix A (3n, m): column k is the force of member k per unit force
    density on the nodes, node by node (x0, y0, z0, x1, ...), so ``A w`` is the nodal force
    of the force densities w [N]; a self-stress is a w with ``A w = 0``."""
    N = np.asarray(nodes, dtype=float).reshape(-1, 3)
    p = _pairs(pairs, len(N), "member")
    d = N[p[:, 1]] - N[p[:, 0]]
    A = np.zeros((len(N), 3, len(p)))
    k = np.arange(len(p))
    A[p[:, 0], :, k] = d
    A[p[:, 1], :, k] = -d
    return A.reshape(3 * len(N), len(p))


@dataclass(frozen=True, eq=False)
class FormFinding:
    """The result of :func:`form_find`.

    Attributes
    ----------
    nodes : ndarray, shape (n, 3)
        The form-found node positions [m].
    densities : ndarray, shape (m,)
        The members' force densities [N/m] (after adjustment of the solved groups).
    rank : int
        Rank of the force density matrix (n - 4 for a free-standing 3-D structure).
    self_stress_residual : float
        Max abs nodal force ``|A w|`` on the free nodes [N], relative to the largest member
        force: the check that the densities are a self-stress of the geometry.
    """

    nodes: np.ndarray
    densities: np.ndarray
    rank: int
    self_stress_residual: float

    def __repr__(self) -> str:
        return (f"FormFinding(nodes={len(self.nodes)}, members={self.densities.size}, "
                f"rank={self.rank}, self_stress_residual={self.self_stress_residual:.3g})")


def _nontrivial_eigenvalues(D: np.ndarray, count: int):
    """The `count` smallest-magnitude eigenpairs of D on the complement of the ones vector."""
    n = len(D)
    P = scipy.linalg.null_space(np.ones((1, n)))  # orthonormal complement of 1
    w, V = np.linalg.eigh(P.T @ D @ P)
    order = np.argsort(np.abs(w))[:count]
    return w[order], P @ V[:, order]


def _adjust(n, pairs, w, groups):
    """Solve for the densities of `groups` (lists of member indices) so that rank D = n - 4."""
    groups = [np.asarray(g, dtype=np.int64) for g in groups]
    w = w.copy()

    def fun(x):
        for g, v in zip(groups, x):
            w[g] = v
        D = force_density_matrix(n, pairs, w)
        scale = np.abs(w).max()
        return np.sort(_nontrivial_eigenvalues(D, 3)[0]) / scale  # sorted: a smooth order

    x = scipy.optimize.least_squares(fun, np.array([w[g].mean() for g in groups])).x
    for _ in range(8):  # Gauss-Newton polish: least_squares stops at its relative tolerances
        r = fun(x)
        h = 1e-7 * np.maximum(np.abs(x), 1e-3)
        Jac = np.column_stack([(fun(x + h[i] * e) - fun(x - h[i] * e)) / (2 * h[i])
                               for i, e in enumerate(np.eye(len(x)))])
        x = x - np.linalg.lstsq(Jac, r, rcond=None)[0]
    fun(x)
    return w


def form_find(n_nodes: int, bars, strings, *, string_force_densities=1.0,
              bar_force_densities=-1.0, solve_for=None, fixed=None) -> FormFinding:
    """A geometry in which the given force densities are in equilibrium (force density method).

    Parameters
    ----------
    n_nodes : int
    bars, strings : array_like of int, shape (n_bars, 2), (n_strings, 2)
        The node pairs of the bars and the strings (the topology).
    string_force_densities, bar_force_densities : float or array_like
        Force densities (or their ratios: the geometry depends only on the ratios) [N/m];
        strings positive (tension), bars negative (compression).
    solve_for : sequence of sequences of int, optional
        Member groups (indices into ``bars + strings``, bars first) whose common force density
        is solved for so that the force density matrix has rank n - 4 (free-standing only);
        by default, all bars as one group when `fixed` is None. Give an empty list to keep the
        densities as given.
    fixed : dict {node: (x, y, z)}, optional
        Nodes held at given coordinates [m]; the others follow from ``D_ff N_f = -D_fx N_x``.
        Without fixed nodes the structure is free-standing: its geometry is the null space of D.

    Returns
    -------
    FormFinding

    Raises
    ------
    ValueError
        If a member joins invalid nodes, the free-standing D lacks the rank deficiency 4 after
        the adjustment (the message gives its smallest eigenvalues), or D_ff is singular.
    """
    n_nodes = validation.integer("form_find: n_nodes", n_nodes, minimum=2)
    b = _pairs(bars, n_nodes, "bar")
    s = _pairs(strings, n_nodes, "string")
    pairs = np.vstack([b, s])
    w = np.concatenate([
        validation.per_item("form_find: bar_force_densities", bar_force_densities, len(b),
                            "N/m", items=" (one per bar)"),
        validation.per_item("form_find: string_force_densities", string_force_densities,
                            len(s), "N/m", items=" (one per string)")])
    if fixed:
        return _with_fixed(n_nodes, pairs, w, fixed)
    groups = [list(range(len(b)))] if solve_for is None else list(solve_for)
    if groups:
        w = _adjust(n_nodes, pairs, w, groups)
    D = force_density_matrix(n_nodes, pairs, w)
    vals, vecs = _nontrivial_eigenvalues(D, 4)
    top = np.abs(np.linalg.eigvalsh(D)).max()
    if np.abs(vals[:3]).max() > 1e-9 * top:
        raise ValueError(f"form_find: the force density matrix has no rank deficiency 4 (its "
                         f"smallest eigenvalues beyond the trivial one are "
                         f"{np.round(vals[:3] / top, 12).tolist()} of the largest): no "
                         "free-standing geometry holds these force densities; solve for some "
                         "(solve_for=[[member indices], ...]) or change their ratios")
    nodes = vecs[:, :3] * np.sqrt(n_nodes)  # orthonormal columns: isotropic second moments
    return _finish(nodes, pairs, w, D, np.arange(n_nodes))


def _with_fixed(n, pairs, w, fixed) -> FormFinding:
    idx = np.array(sorted(int(k) for k in fixed), dtype=np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"fixed: node indices must be in 0..{n - 1}, got {idx.tolist()}")
    X = np.array([np.asarray(fixed[k], float).reshape(3) for k in idx])
    free = np.setdiff1d(np.arange(n), idx)
    D = force_density_matrix(n, pairs, w)
    Dff = D[np.ix_(free, free)]
    cond = np.linalg.cond(Dff) if free.size else 1.0
    if not np.isfinite(cond) or cond > 1e12:
        raise ValueError(f"form_find: D_ff is singular (condition {cond:.3g}): the free nodes "
                         "are not held by the fixed ones with these force densities")
    N = np.zeros((n, 3))
    N[idx] = X
    N[free] = np.linalg.solve(Dff, -D[np.ix_(free, idx)] @ X)
    return _finish(N, pairs, w, D, free)


def _finish(nodes, pairs, w, D, free) -> FormFinding:
    A = equilibrium_matrix(nodes, pairs)
    force = (A @ w).reshape(-1, 3)[free]
    member = np.abs(A * w).max(initial=1e-300)
    rank = int(np.linalg.matrix_rank(D, tol=1e-9 * np.abs(D).max()))
    return FormFinding(nodes, w, rank, float(np.abs(force).max(initial=0.0) / member))
