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

The frame of the result is fixed by rules (:func:`tenscontrol.model.frames.standard_frame`),
never by the basis LAPACK returns for the null space (which differs between machines, and is
arbitrary for symmetric shapes): centroid at the origin, z along the principal axis of the bars'
directions with the first node off the xy plane below it, the first node off the z axis on +x,
and the first node off the xz plane at y > 0. Fixed nodes keep their coordinates.

D is sparse (:mod:`tenscontrol.model.force_density`), so memory grows with the members, and the
input is checked before any work: integer node pairs, one connected topology (every part held by
a fixed node), nonzero finite densities, member groups that exist.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import scipy.sparse
import scipy.sparse.csgraph
import scipy.sparse.linalg

from tenscontrol import validation
from tenscontrol.model import force_density as fd
from tenscontrol.model.frames import standard_frame
from tenscontrol.model.tables import Presentable, titled_table, value_range

__all__ = ["FormFinding", "equilibrium_matrix", "force_density_matrix", "form_find"]

_ZERO = 1e-9  # an eigenvalue of D below this fraction of the largest counts as zero


def _sequence(x) -> bool:
    """Whether `x` is a sequence of items (a list, tuple, range, array; not a str or dict)."""
    if isinstance(x, (str, bytes, Mapping)) or not isinstance(x, Iterable):
        return False
    return not (isinstance(x, np.ndarray) and x.ndim == 0)


def _pairs(pairs, n_nodes: int, name: str, where: str = "form_find") -> np.ndarray:
    """`pairs` as an (m, 2) int64 array of distinct node indices in 0..n_nodes-1."""
    arg = f"{where}: {name}s"
    if not _sequence(pairs):
        raise TypeError(f"{arg} must be a sequence of node pairs, e.g. [(0, 2), (1, 3)], got "
                        f"{validation.describe(pairs)}")
    items = []
    for k, item in enumerate(pairs):  # a triple is refused, never re-paired
        pair = list(item) if _sequence(item) else None
        if pair is None or len(pair) != 2:
            raise ValueError(f"{arg}: {name} {k} is {validation.show(item)}; each {name} is a "
                             f"pair of node indices (i, j), e.g. [(0, 2), (1, 3)]")
        items.append(pair)
    # integers only: 2.7 or True would otherwise be truncated to a node index
    p = validation.indices(arg, [v for item in items for v in item], None, what="node index")
    p = p.reshape(-1, 2)
    bad = np.flatnonzero((p < 0).any(axis=1) | (p >= n_nodes).any(axis=1) | (p[:, 0] == p[:, 1]))
    if bad.size:
        raise ValueError(f"{where}: {name} {bad[0]} joins nodes {p[bad[0]].tolist()}: node "
                         f"indices must be distinct and in 0..{n_nodes - 1}")
    return p


def _densities(value, pairs: np.ndarray, name: str) -> np.ndarray:
    """The force densities of the `name`s (one or one per member): finite and nonzero."""
    arg = f"form_find: {name}_force_densities"
    w = validation.per_item(arg, value, len(pairs), "N/m", items=f" (one per {name})")
    zero = np.flatnonzero(w == 0)
    if zero.size:
        i, j = pairs[zero[0]]
        raise ValueError(f"{arg}: {name} {zero[0]} (nodes {i}->{j}) has force density 0, so it "
                         "carries nothing and holds nothing; give it a nonzero density or leave "
                         "it out")
    return w


def _groups(solve_for, n_members: int) -> list:
    """`solve_for` as a list of int arrays: non-empty groups of existing members, disjoint."""
    what = ("a list of member groups, each a sequence of member indices (bars first, then "
            "strings), e.g. [range(3), range(3, 9)]")
    if not _sequence(solve_for):
        raise TypeError(f"form_find: solve_for must be {what}, got "
                        f"{validation.describe(solve_for)}")
    groups, owner = [], {}
    for g, group in enumerate(solve_for):
        arg = f"form_find: solve_for[{g}]"
        if not _sequence(group):
            raise TypeError(f"{arg} must be a sequence of member indices (solve_for is {what}), "
                            f"got {validation.describe(group)}")
        idx = validation.indices(arg, list(group), n_members, what="member index")
        if not idx.size:
            raise ValueError(f"{arg} is empty: each group needs a member")
        for k in idx:
            if owner.setdefault(int(k), g) != g:
                raise ValueError(f"form_find: solve_for: member {k} is in groups {owner[int(k)]} "
                                 f"and {g}; each member's density is solved for in one group")
        groups.append(idx)
    return groups


def _fixed(fixed, n_nodes: int):
    """`fixed` as (sorted node indices, their coordinates (k, 3))."""
    if not isinstance(fixed, Mapping):
        raise TypeError("form_find: fixed must be a dict {node: (x, y, z)}, got "
                        f"{validation.describe(fixed)}")
    items = sorted((validation.integer("form_find: fixed: node", k, minimum=0,
                                       maximum=n_nodes - 1), xyz) for k, xyz in fixed.items())
    idx = np.array([k for k, _ in items], dtype=np.int64)
    X = np.array([validation.real_array(f"form_find: fixed[{k}]", xyz, "m", shape=(3,),
                                        finite=True) for k, xyz in items])
    return idx, X


def _check_topology(n: int, pairs: np.ndarray, held) -> None:
    """ValueError for a free node in no member, or a connected part that nothing holds (no
    fixed node in it; free-standing (`held` None): more than one part)."""
    used = np.zeros(n, dtype=bool)
    used[pairs.reshape(-1)] = True
    if held is not None:
        used[held] = True
    if not used.all():
        k = int(np.flatnonzero(~used)[0])
        raise ValueError(f"form_find: node {k} is in no member: nothing places it; join it by "
                         "a bar or string" + ("" if held is None else ", or fix it"))
    graph = scipy.sparse.coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])),
                                    shape=(n, n))
    parts, label = scipy.sparse.csgraph.connected_components(graph, directed=False)
    if held is None and parts > 1:
        k = int(np.flatnonzero(label != label[0])[0])
        raise ValueError(f"form_find: the members form {parts} separate parts (node 0 in one, "
                         f"node {k} in another); a free-standing structure is one connected "
                         "part: form-find each part alone, or join them")
    if held is not None:
        loose = np.flatnonzero(~np.isin(label, label[held]))
        if loose.size:
            raise ValueError(f"form_find: node {loose[0]} is in a part of the members with no "
                             "fixed node, so nothing holds it; fix a node of that part or join "
                             "it to a fixed one")


def force_density_matrix(n_nodes: int, pairs, densities) -> np.ndarray:
    """The force density matrix ``D = C^T diag(w) C`` (n, n) [N/m] of members `pairs` (m, 2)."""
    p = _pairs(pairs, n_nodes, "member", "force_density_matrix")
    w = validation.per_item("force_density_matrix: densities", densities, len(p), "N/m",
                            items=" (one per member)")
    return fd.density_matrix(n_nodes, p, w).toarray()


def equilibrium_matrix(nodes, pairs) -> np.ndarray:
    """The equilibrium matrix A (3n, m): column k is the force of member k per unit force
    density on the nodes, node by node (x0, y0, z0, x1, ...), so ``A w`` is the nodal force
    of the force densities w [N]; a self-stress is a w with ``A w = 0``."""
    N = np.asarray(nodes, dtype=float).reshape(-1, 3)
    p = _pairs(pairs, len(N), "member", "equilibrium_matrix")
    d = N[p[:, 1]] - N[p[:, 0]]
    A = np.zeros((len(N), 3, len(p)))
    k = np.arange(len(p))
    A[p[:, 0], :, k] = d
    A[p[:, 1], :, k] = -d
    return A.reshape(3 * len(N), len(p))


@dataclass(frozen=True, eq=False)
class FormFinding(Presentable):
    """The result of :func:`form_find`.

    Attributes
    ----------
    nodes : ndarray, shape (n, 3)
        The form-found node positions [m].
    densities : ndarray, shape (m,)
        The members' force densities [N/m] (after adjustment of the solved groups).
    rank : int
        Rank of the force density matrix (n - 4 for a free-standing 3-D structure; with fixed
        nodes, above 300 nodes, n minus the zero eigenvalues among the 8 nearest zero).
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

    def summary(self) -> str:
        """The sizes, the rank and the self-stress check as a table."""
        d = self.densities
        return titled_table("FormFinding", [
            ("nodes, members", f"{len(self.nodes)}, {d.size}"),
            ("force densities", value_range(d, "N/m", 6)),
            ("rank", f"{self.rank}"),
            ("self-stress residual", f"{self.self_stress_residual:.3g}")])


def form_find(n_nodes: int, bars, strings, *, string_force_densities=1.0,
              bar_force_densities=-1.0, solve_for=None, fixed=None) -> FormFinding:
    """A geometry in which the given force densities are in equilibrium (force density method).

    Parameters
    ----------
    n_nodes : int
        Number of nodes, >= 2 (>= 5 free-standing); every node must be in a member (or be
        fixed).
    bars, strings : array_like of int, shape (n_bars, 2), (n_strings, 2)
        The node pairs of the bars and the strings (the topology); at least one member in all.
        Free-standing, the members must connect every node; with `fixed`, every connected part
        must hold a fixed node.
    string_force_densities, bar_force_densities : float or array_like
        Force densities (or their ratios: the geometry depends only on the ratios) [N/m], one
        for all or one per member, finite and nonzero; strings positive (tension), bars
        negative (compression).
    solve_for : sequence of sequences of int, optional
        Member groups (indices into ``bars + strings``, bars first; disjoint, non-empty) whose
        common force density is solved for so that the force density matrix has rank n - 4
        (free-standing only); by default, all bars as one group when `fixed` is None. Give an
        empty list to keep the densities as given.
    fixed : dict {node: (x, y, z)}, optional
        Nodes held at given coordinates [m]; the others follow from ``D_ff N_f = -D_fx N_x``.
        Without fixed nodes the structure is free-standing: its geometry is the null space of D.

    Returns
    -------
    FormFinding
        With fixed nodes, in their frame (they keep their coordinates). Free-standing, in the
        standard frame, the same on every machine (the null space of D has no preferred basis,
        so a rule picks the rotation and the mirror image):

        1. the nodes' centroid at the origin, their second moments isotropic
           (``nodes.T @ nodes = n_nodes * I``: an rms distance of sqrt(3) from the centroid);
        2. z along the principal axis of the bars' directions (the axis of the tensor
           ``mean(u u^T)`` of their unit vectors u whose eigenvalue is simple, e.g. a prism's
           axis; the largest if all differ; all members' if there are no bars), oriented so that
           the first node (in index order) off the xy plane is below it; when that tensor is
           isotropic (the icosahedron), z points from node 0 to the centroid (node 0 on the -z
           axis);
        3. x towards the first node off the z axis (its y = 0, x > 0);
        4. the first node off the xz plane at y > 0 (a mirror image otherwise).

        So the regular n-prism with nodes 0..n-1 on one ring stands on that ring (z < 0) with
        node 0 at +x. Stand it on another face with :meth:`Structure.with_base`; scale it with
        :meth:`Structure.with_scale`.

    Raises
    ------
    TypeError
        If an argument has the wrong type: a node index that is not an integer (0.7, True), a
        `solve_for` that is not a list of groups of member indices, a `fixed` that is not a dict.
    ValueError
        If a member is not a pair of distinct nodes in range, a density is zero or not finite or
        their number is wrong, a group is empty, overlaps another or names a member that does
        not exist, `solve_for` is given with `fixed`, a fixed node's coordinates are not three
        finite numbers, there is no member, a (free) node is in no member, the topology falls
        apart (free-standing: in more than one part; fixed: a part without a fixed node), the
        free-standing D lacks the rank deficiency of exactly 4 after the adjustment (the
        message gives its smallest eigenvalues), D_ff is singular, or the geometry degenerates
        (a member of zero length; free-standing, all nodes in a plane).
    """
    n_nodes = validation.integer("form_find: n_nodes", n_nodes, minimum=2)
    b = _pairs(bars, n_nodes, "bar")
    s = _pairs(strings, n_nodes, "string")
    pairs = np.vstack([b, s])
    if not len(pairs):
        raise ValueError("form_find: bars and strings are both empty: give the members")
    w = np.concatenate([_densities(bar_force_densities, b, "bar"),
                        _densities(string_force_densities, s, "string")])
    groups = None if solve_for is None else _groups(solve_for, len(pairs))
    idx, X = (None, None) if fixed is None else _fixed(fixed, n_nodes)
    if idx is not None and idx.size:
        if groups:
            raise ValueError("form_find: solve_for adjusts a free-standing structure's densities; "
                             "with fixed nodes give none (solve_for=None)")
        if len(idx) == 1 or not np.ptp(X, axis=0).any():  # D 1 = 0: all at that point
            raise ValueError(f"form_find: the fixed nodes are all at one point "
                             f"{X[0].tolist()}, where they would hold every free node (each "
                             "member of length 0); fix nodes at two places or more")
        _check_topology(n_nodes, pairs, idx)
        return _with_fixed(n_nodes, pairs, w, idx, X, len(b))
    if n_nodes < 5:  # rank n - 4 = 0 would be D = 0: any placement of the nodes
        raise ValueError(f"form_find: a free-standing structure needs at least 5 nodes (its "
                         f"force density matrix has rank n_nodes - 4 >= 1), got n_nodes="
                         f"{n_nodes}; fix some nodes (fixed={{node: (x, y, z)}})")
    _check_topology(n_nodes, pairs, None)
    if groups is None:
        groups = [np.arange(len(b))] if len(b) else []
    return _free_standing(n_nodes, pairs, w, groups, len(b))


def _free_standing(n: int, pairs, w, groups, nb: int) -> FormFinding:
    """The null space of D (after adjusting `groups`) as a geometry in the standard frame."""
    if groups:
        w = fd.adjust(n, pairs, w, groups)
    D = fd.density_matrix(n, pairs, w)
    vals, vecs = fd.nontrivial_eigenpairs(D, 4)
    top = fd.largest_eigenvalue(D)
    zero = np.abs(vals) <= _ZERO * top
    if not zero[:3].all():
        raise ValueError(f"form_find: the force density matrix has no rank deficiency 4 (its "
                         f"smallest eigenvalues beyond the trivial one are "
                         f"{np.round(vals[:3] / top, 12).tolist()} of the largest): no "
                         "free-standing geometry holds these force densities; solve for some "
                         "(solve_for=[[member indices], ...]) or change their ratios")
    if zero[3:].any():
        raise ValueError("form_find: the force density matrix has a rank deficiency above 4 "
                         f"(eigenvalues {np.round(vals / top, 12).tolist()} of the largest): "
                         "these densities hold a family of geometries, not one; change their "
                         "ratios, solve for fewer groups, or add members")
    nodes = vecs[:, :3] * np.sqrt(n)  # orthonormal columns: isotropic second moments
    _check_geometry(nodes, pairs, nb, planar=True)
    nodes = standard_frame(nodes, pairs[:nb] if nb else pairs)
    return _finish(nodes, pairs, w, D, np.arange(n), n - 4)


def _with_fixed(n: int, pairs, w, idx, X, nb: int) -> FormFinding:
    """The free nodes from the sparse solve ``D_ff N_f = -D_fx N_x``."""
    free = np.setdiff1d(np.arange(n), idx)
    D = fd.density_matrix(n, pairs, w).tocsc()
    N = np.zeros((n, 3))
    N[idx] = X
    if free.size:
        Dff = D[free][:, free].tocsc()
        try:
            lu = scipy.sparse.linalg.splu(Dff)
            cond = _condition(Dff, lu)
        except RuntimeError:  # splu: "Factor is exactly singular"
            cond = np.inf
        if not np.isfinite(cond) or cond > 1e12:
            raise ValueError(f"form_find: D_ff is singular (condition {cond:.3g}): the free "
                             "nodes are not held by the fixed ones with these force densities")
        N[free] = lu.solve(-(D[free][:, idx] @ X))
    _check_geometry(N, pairs, nb, planar=False)
    rank = n - fd.null_count(D, _ZERO * abs(D).max())
    return _finish(N, pairs, w, D, free, rank)


def _condition(Dff, lu) -> float:
    """Condition number of D_ff: exact (2-norm) up to DENSE_NODES, a 1-norm estimate above."""
    if Dff.shape[0] <= fd.DENSE_NODES:
        return float(np.linalg.cond(Dff.toarray()))
    inverse = scipy.sparse.linalg.LinearOperator(
        Dff.shape, matvec=lu.solve, rmatvec=lambda v: lu.solve(v, trans="T"))
    return float(scipy.sparse.linalg.norm(Dff, 1) * scipy.sparse.linalg.onenormest(inverse))


def _member(k: int, pairs, nb: int) -> str:
    """Member k of ``bars + strings`` as the user numbers it: "bar 2 (nodes 1->4)"."""
    name = f"bar {k}" if k < nb else f"string {k - nb}"
    return f"{name} (nodes {pairs[k, 0]}->{pairs[k, 1]})"


def _check_geometry(N, pairs, nb: int, planar: bool) -> None:
    """ValueError if the geometry degenerated: a member of zero length, or (`planar`) every
    node in one plane (rank of the centred coordinates below 3)."""
    X = N - N.mean(axis=0)
    size = np.sqrt((X**2).sum(axis=1).mean())
    length = np.linalg.norm(N[pairs[:, 1]] - N[pairs[:, 0]], axis=1)
    short = np.flatnonzero(length <= 1e-8 * size)
    if short.size:
        raise ValueError(f"form_find: the geometry degenerated: {_member(short[0], pairs, nb)} "
                         "has length 0 (its nodes coincide); change the force density ratios "
                         "or the topology")
    sv = np.linalg.svd(X, compute_uv=False)
    rank = int((sv > 1e-8 * sv[0]).sum())
    if planar and rank < 3:
        raise ValueError(f"form_find: the geometry degenerated to rank {rank} (every node in a "
                         "plane or on a line); no 3-D structure holds these force densities")


def _finish(nodes, pairs, w, D, free, rank: int) -> FormFinding:
    d = nodes[pairs[:, 1]] - nodes[pairs[:, 0]]
    force = (D @ nodes)[free]  # the densities' nodal forces, -A w node by node
    member = (np.abs(w) * np.abs(d).max(axis=1)).max(initial=1e-300)
    return FormFinding(nodes, w, rank, float(np.abs(force).max(initial=0.0) / member))
