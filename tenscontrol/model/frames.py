"""Frames fixed by rules on the node indices: the form-finding frame and standing on a base.

Both rotate node coordinates into a frame chosen by the geometry and the nodes' indices alone,
never by a basis that a linear-algebra library happens to return: a free-standing form-found
structure is unique only up to a rotation or a reflection (its force density matrix's null space
has no preferred basis), and a symmetric one (a regular prism, the icosahedron) has repeated
eigenvalues in every tensor one could diagonalize, whose eigenvectors LAPACK returns in any
rotation. Rules on named nodes make the result the same on every machine.
"""

from __future__ import annotations

import numpy as np

__all__ = ["base_frame", "standard_frame"]

_TOL = 1e-8  # relative: a projection or an eigenvalue gap below this counts as zero


def _first(values: np.ndarray, tol: float) -> int | None:
    """Index of the first entry of `values` whose magnitude exceeds `tol`, or None."""
    hits = np.flatnonzero(np.abs(values) > tol)
    return int(hits[0]) if hits.size else None


def principal_axis(X: np.ndarray, pairs: np.ndarray) -> np.ndarray | None:
    """The distinguished axis of the unit directions of the members `pairs` (m, 2), or None.

    The tensor ``T = mean(u u^T)`` of the unit member directions u has eigenvalues
    l1 <= l2 <= l3 (trace 1). The axis is the eigenvector of the simple eigenvalue when two
    coincide (l1 = l2: the axis of l3; l2 = l3: the axis of l1; an axis of symmetry of a prism),
    the one of l3 (the members' mean direction) when all differ, and None when T is isotropic
    (all three equal, as for the icosahedron); equal means within 1e-8. A simple eigenvalue's
    eigenvector is unique up to its sign, which the caller fixes.
    """
    d = X[pairs[:, 1]] - X[pairs[:, 0]]
    length = np.linalg.norm(d, axis=1)
    u = d[length > 0] / length[length > 0, None]
    if not len(u):
        return None
    lam, V = np.linalg.eigh(u.T @ u / len(u))
    low, high = lam[1] - lam[0] <= _TOL, lam[2] - lam[1] <= _TOL
    if low and high:
        return None
    return V[:, 0] if high else V[:, 2]


def standard_frame(nodes, pairs) -> np.ndarray:
    """`nodes` (n, 3) moved into the standard frame of a free-standing structure.

    The rule (every "first" in node order; "non-zero" beyond 1e-8 of the nodes' rms distance
    from their centroid):

    1. the centroid of the nodes is the origin;
    2. z is the :func:`principal_axis` of the members `pairs` (m, 2), oriented so that the first
       node off the xy plane lies below it (z < 0); if the members' directions are isotropic, z
       points from the first node off the centroid to the centroid (that node on the -z axis);
    3. x points to the first node off the z axis (its y is 0, its x > 0);
    4. y = z cross x, or its opposite (a reflection) so that the first node off the xz plane has
       y > 0: the mirror image of an equilibrium is one too, and this picks one of the two.

    Returns
    -------
    ndarray, shape (n, 3)
        The rotated (or reflected) nodes; distances between nodes are unchanged.
    """
    X = np.asarray(nodes, dtype=float)
    X = X - X.mean(axis=0)
    tol = _TOL * np.sqrt((X**2).sum(axis=1).mean())
    z = principal_axis(X, np.asarray(pairs, dtype=np.int64).reshape(-1, 2))
    if z is None:
        k = _first(np.linalg.norm(X, axis=1), tol)
        z = -X[k] / np.linalg.norm(X[k])
    k = _first(X @ z, tol)
    if k is not None and X[k] @ z > 0:
        z = -z
    return _complete(X, z, tol)


def _complete(X: np.ndarray, z: np.ndarray, tol: float) -> np.ndarray:
    """X in the frame with axis z, x towards the first node off z, y by the first node off xz."""
    off = X - np.outer(X @ z, z)
    k = _first(np.linalg.norm(off, axis=1), tol)
    if k is None:  # every node on the z axis: x along the world axis farthest from z
        off, k = np.eye(3) - np.outer(z, z), int(np.argmin(np.abs(z)))
    x = off[k] / np.linalg.norm(off[k])
    y = np.cross(z, x)
    j = _first(X @ y, tol)
    if j is not None and X[j] @ y < 0:
        y = -y
    return X @ np.column_stack([x, y, z])


def base_frame(nodes, base, *, coplanar: float = 1e-6, name: str = "base") -> np.ndarray:
    """`nodes` (n, 3) turned and moved so that the nodes `base` rest in the plane z = 0.

    The base nodes (at least three, not on one line) span a plane; the rotation takes the normal
    of that plane that points into the structure to +z, the base's centroid to the origin, and
    the first base node off that centroid onto the +x axis. A proper rotation: no reflection.
    The messages name the base nodes `name`.

    Raises
    ------
    ValueError
        If the base nodes are on one line, are not in one plane (beyond `coplanar` times the
        structure's size), or another node lies below their plane (the structure cannot stand
        on them), or every node lies in that plane.
    """
    X = np.asarray(nodes, dtype=float)
    base = list(base)
    B = X[base] - X[base].mean(axis=0)
    size = max(np.abs(X - X.mean(axis=0)).max(), np.finfo(float).tiny)
    _, sv, Vt = np.linalg.svd(B)
    if sv[1] <= _TOL * size * np.sqrt(len(base)):
        raise ValueError(f"{name}: nodes {base} are on one line; give at least three nodes that "
                         "span a plane")
    z = Vt[2]
    height = (X - X[base].mean(axis=0)) @ z
    off = np.abs(height[base]).max()
    if off > coplanar * size:
        k = base[int(np.argmax(np.abs(height[base])))]
        raise ValueError(f"{name}: nodes {base} are not in one plane (node {k} is {off:.3g} m "
                         f"off the plane through them); give nodes of one face")
    tol = coplanar * size
    if np.abs(height).max() <= tol:
        raise ValueError(f"{name}: every node lies in the plane of nodes {base}: a planar "
                         "structure has no side to stand on")
    if -height.min() > height.max():  # the normal towards the farthest node is "up"
        z, height = -z, -height
    below = np.flatnonzero(height < -tol)
    if below.size:
        raise ValueError(f"{name}: node {below[0]} lies {-height[below[0]]:.3g} m below the plane "
                         f"of nodes {base}, on the other side than the rest: the structure "
                         "cannot stand on them; give nodes of a face on its outside")
    Y = X - X[base].mean(axis=0)
    k = _first(np.linalg.norm(B - np.outer(B @ z, z), axis=1), _TOL * size)
    x = B[k] - (B[k] @ z) * z
    x /= np.linalg.norm(x)
    Y = Y @ np.column_stack([x, np.cross(z, x), z])
    Y[base, 2] = 0.0
    return Y
