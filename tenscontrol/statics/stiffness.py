"""Tangent stiffness and compliance of the passive structure.

See docs/theory.md, "Norms and compliance".

The tangent stiffness is ``K = -d(total static nodal force)/dq``: every active tension member
contributes geometric stiffness ``gamma_k Yhat_k`` and material stiffness
``(k_k l0_k / l_k^3) Yhat_k q q^T Yhat_k``; rigid bars contribute the geometric stiffness
``psi_b H_b`` of their reactions (``psi_b = -2 lambda_b``, lambda held), compressible bars
``psi_j H_j + (k_b l0_j / l_j^3) H_j q q^T H_j``. Compliance is the inverse of K restricted to the
admissible displacements: the constraint tangent space, less the rigid-body motions of a
free-floating structure (Euclidean gauge, same section).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from tenscontrol import validation
from tenscontrol.model.cables import reject_cables
from tenscontrol.mechanics.checks import check_members
from tenscontrol.mechanics.rigid.model import constraint_jacobian, gravity_vector
from tenscontrol.mechanics.geometry import member_columns, nodal_vector
from tenscontrol.mechanics.laws import active_set, elastic_densities, material_coefficients
from tenscontrol.model.structure import Structure
from tenscontrol.model.tables import Presentable, titled_table, value_range

__all__ = ["Compliance", "compliance", "loaded_rigid_fields", "rigid_fields",
           "tangent_stiffness"]

# A string whose length is within this relative distance of its rest length sits on the kink
# of its one-sided law; at_rest decides which side of the kink the stiffness is taken from.
_AT_REST_TOL = 1e-12
#: A rigid field is kept when the unit constraint rows move it by less than this per unit motion.
_RIGID_TOL = 1e-9


_UNITS = {"q": "m", "gamma": "N/m", "bar_force_densities": "N/m", "loads": "N"}


def _validate(who, structure, bars, at_rest, **arrays):
    """TypeError/ValueError naming `who`'s argument; `arrays` must hold real numbers (a
    complex array would lose its imaginary part in the float conversion)."""
    if not isinstance(structure, Structure):
        raise TypeError(f"{who}: structure must be a tenscontrol.Structure, got "
                        f"{validation.describe(structure)}")
    validation.choice(f"{who}: bars", bars, ("rigid", "compressible"))
    for name, value in arrays.items():
        if value is not None:
            validation.real_array(f"{who}: {name}", value, _UNITS[name])
            if name in ("loads", "q"):
                nodal_vector(structure.n_nodes, f"{who}: {name}", value)
    if at_rest not in ("slack", "taut"):
        raise ValueError(f"at_rest must be 'slack' (a string exactly at its rest length has no "
                         f"stiffness) or 'taut' (tension-side derivative), got {at_rest!r}")


def _per_member(value, count: int, name: str) -> np.ndarray:
    v = np.asarray(value, dtype=float).reshape(-1)
    if v.shape != (count,):
        raise ValueError(f"{name} must be {count} finite force densities [N/m], got shape "
                         f"{np.shape(value)}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be {count} finite force densities [N/m]; entries "
                         f"{np.flatnonzero(~np.isfinite(v))[:6].tolist()} are not")
    return v


def _lengths(pairs, q) -> np.ndarray:
    N = q.reshape(-1, 3)
    return np.linalg.norm(N[pairs[:, 1]] - N[pairs[:, 0]], axis=1)


def string_activity(structure: Structure, lengths: np.ndarray, at_rest: str):
    """Which tension members act at these lengths (n_strings,) bool, and which sit at rest.

    The law's active set (:func:`tenscontrol.mechanics.laws.active_set`: springs always, a
    string when longer than its rest length), except that a string within 1e-12 (relative) of
    its rest length sits on the kink of its one-sided law: it acts only with
    ``at_rest="taut"`` (the tension-side derivative). Returns ``(active, at_rest_mask)``.
    """
    l0, spring = structure.string_rest_lengths, structure.string_is_spring
    kink = ~spring & (np.abs(lengths - l0) <= _AT_REST_TOL * l0)
    return (active_set(lengths, l0, spring) & ~kink) | (kink & (at_rest == "taut")), kink


def _string_state(structure: Structure, q, at_rest: str, stacklevel: int):
    """Elastic-law force densities (n_strings,) and material coefficients k l0 / l^3."""
    l = _lengths(structure.string_nodes, q)
    l0, k = structure.string_rest_lengths, structure.string_stiffness
    taut, kink = string_activity(structure, l, at_rest)
    if at_rest == "slack" and kink.any():
        names = ", ".join(f"{k_} (nodes {structure.string_nodes[k_][0]}->"
                          f"{structure.string_nodes[k_][1]})" for k_ in np.flatnonzero(kink))
        warnings.warn(f"{structure.name}: strings {names} sit exactly at their rest length and "
                      "are treated as slack (no stiffness); pass at_rest='taut' for the "
                      "tension-side derivative", stacklevel=stacklevel)
    gamma = np.where(taut, elastic_densities(k, l0, l), 0.0)
    return gamma, np.where(taut, material_coefficients(k, l0, l), 0.0)


def _member_stiffness(pairs, q, n_nodes, density, material) -> np.ndarray:
    """sum_k density_k Yhat_k + material_k (Yhat_k q)(Yhat_k q)^T, shape (3n, 3n).

    Member k adds ``B_k = density_k I + material_k d_k d_k^T`` (d_k = n_j - n_i) to the node
    blocks (i, i) and (j, j) and subtracts it from (i, j) and (j, i): O(members) work on the
    dense output, where the product of the (3n, m) member columns cost O(n^2 m) (1 s at 768
    bars).
    """
    N = q.reshape(-1, 3)
    i, j = pairs[:, 0], pairs[:, 1]
    d = N[j] - N[i]
    B = (np.asarray(density, float)[:, None, None] * np.eye(3)
         + np.asarray(material, float)[:, None, None] * d[:, :, None] * d[:, None, :])
    blocks = np.zeros((n_nodes, n_nodes, 3, 3))
    for a, b, sign in ((i, i, 1.0), (j, j, 1.0), (i, j, -1.0), (j, i, -1.0)):
        np.add.at(blocks, (a, b), sign * B)
    return blocks.transpose(0, 2, 1, 3).reshape(3 * n_nodes, 3 * n_nodes)


def _rigid_bar_densities(structure, q, gamma, loads) -> np.ndarray:
    """psi = -2 lambda_b from the static balance ``J^T lambda = Yhat gamma - G - f`` (lstsq)."""
    J = constraint_jacobian(structure, q)
    if J.shape[0] == 0:
        return np.zeros(0)
    rhs = (member_columns(structure.string_nodes, q) @ gamma
           - gravity_vector(structure) - loads)
    lam = np.linalg.lstsq(J.T, rhs, rcond=None)[0]
    return -2.0 * lam[len(structure.fixed_coordinates):]


def tangent_stiffness(structure: Structure, q=None, *, gamma=None, bar_force_densities=None,
                      bars: str = "rigid", at_rest: str = "slack", loads=None) -> np.ndarray:
    """Tangent stiffness K (3n, 3n) [N/m] of the passive structure.

    See docs/theory.md, "Norms and compliance".

    Parameters
    ----------
    structure : Structure
    q : array_like, shape (3n,), optional
        Configuration [m] (node by node x0, y0, z0, x1, ...); the structure's nodes by default.
    gamma : array_like, shape (n_strings,), optional
        Force densities [N/m] for the geometric term; by default each member's elastic law
        ``k (1 - l0/l)`` at q. The material term and the active set always follow the
        structure's laws at q.
    bar_force_densities : array_like, shape (n_bars,), optional
        Bar force densities psi [N/m] (``-2 lambda`` for rigid bars). By default: rigid bars
        take lambda from the static balance ``J_Phi^T lambda = Yhat gamma - G - f`` at q (least
        squares); compressible bars their law ``k_b (1 - l0_b/l)``.
    bars : {"rigid", "compressible"}
        Rigid bars add only the geometric term of their reactions; compressible bars add
        ``psi H + (k_b l0 / l^3) H q q^T H``.
    at_rest : {"slack", "taut"}
        A string exactly at its rest length (to 1e-12 relative) has no stiffness with
        ``"slack"`` (default, consistent with the strict ``l > l0`` rule; a warning lists
        them) and its tension-side material stiffness ``k l0 / l^3`` with ``"taut"``.
    loads : array_like, shape (n_nodes, 3), optional
        External nodal forces [N] entering the rigid bars' lambda; gravity is added.

    Returns
    -------
    ndarray, shape (3n, 3n)
        Symmetric; for rigid bars, ``-d(xi + J_Phi^T lambda)/dq`` with lambda held.
    """
    reject_cables(structure, "tangent_stiffness")
    _validate("tangent_stiffness", structure, bars, at_rest, q=q, gamma=gamma,
              bar_force_densities=bar_force_densities, loads=loads)
    q = nodal_vector(structure.n_nodes, "q", q, structure.nodes.reshape(-1))
    check_members(structure, "tangent_stiffness", q, bars=bars, inertia=False)
    return _checked(_tangent(structure, q, gamma, bar_force_densities, bars, at_rest, loads),
                    structure, "tangent_stiffness")


def _checked(K: np.ndarray, structure: Structure, who: str) -> np.ndarray:
    """K itself, after a check that the sums of finite member terms did not overflow."""
    bad = np.argwhere(~np.isfinite(K))
    if bad.size:
        i, j = (int(v) for v in bad[0])
        raise ValueError(f"{who}: {structure.name}: the tangent stiffness K[{i}, {j}] (node "
                         f"{i // 3} {'xyz'[i % 3]}, node {j // 3} {'xyz'[j % 3]}) is {K[i, j]}: "
                         "the member stiffnesses or force densities (gamma, "
                         "bar_force_densities) overflow; give them usable sizes")
    return K


def _tangent(structure, q, gamma, bar_force_densities, bars, at_rest, loads) -> np.ndarray:
    """The body of :func:`tangent_stiffness`; its warnings point at the public caller's caller."""
    n = structure.n_nodes
    law, material = _string_state(structure, q, at_rest, stacklevel=4)
    gam = law if gamma is None else _per_member(gamma, structure.n_strings, "gamma")
    K = _member_stiffness(structure.string_nodes, q, n, gam, material)
    if structure.n_bars:
        given = (None if bar_force_densities is None else
                 _per_member(bar_force_densities, structure.n_bars, "bar_force_densities"))
        if bars == "rigid":  # reactions: geometric stiffness only
            f = nodal_vector(structure.n_nodes, "loads", loads)
            psi = _rigid_bar_densities(structure, q, gam, f) if given is None else given
            bar_material = np.zeros(structure.n_bars)
        else:
            l, l0, kb = (_lengths(structure.bar_nodes, q), structure.bar_rest_lengths,
                         structure.bar_stiffness)
            psi = elastic_densities(kb, l0, l) if given is None else given
            bar_material = material_coefficients(kb, l0, l)
        K += _member_stiffness(structure.bar_nodes, q, n, psi, bar_material)
    return 0.5 * (K + K.T)


def rigid_fields(structure: Structure, q=None, *, bars: str = "rigid") -> np.ndarray:
    """Orthonormal rigid-body displacement fields (3n, n_r) compatible with the constraints.

    Translations and rotations ``omega x (n_i - c)`` about the centroid c, restricted to the
    combinations that satisfy the linearized constraints: ``R null(J R)`` (docs/theory.md,
    "Minimal realization"). Empty (n_r = 0) for a pinned structure. `bars` selects J: all
    constraint rows (rigid) or only the fixed coordinates (compressible).
    """
    _validate("rigid_fields", structure, bars, "slack", q=q)
    q = nodal_vector(structure.n_nodes, "q", q, structure.nodes.reshape(-1))
    N = q.reshape(-1, 3)
    d = N - N.mean(axis=0)
    R = np.hstack([np.tile(np.eye(3), (structure.n_nodes, 1)),
                   np.column_stack([np.cross(e, d).reshape(-1) for e in np.eye(3)])])
    R = scipy.linalg.orth(R, rcond=1e-10)  # collinear nodes lose a rotation
    JR = _constraint_rows_times(structure, q, bars, R)
    if JR.shape[0] == 0:
        return R
    # Unit rows and orthonormal fields make J R scale-free (singular values <= sqrt(rows)), so
    # the tolerance is absolute: for a free-floating structure J R vanishes to rounding, and a
    # tolerance relative to its largest singular value would keep no field at all.
    # the thin SVD when J R has at least as many rows as fields: Vt is then whole, without
    # the (rows x rows) U of the full one (777 x 777 for a 768-bar tower, every path step)
    _, sv, Vt = np.linalg.svd(JR, full_matrices=JR.shape[0] < JR.shape[1])
    return R @ Vt[int(np.sum(sv > _RIGID_TOL)):].T


def loaded_rigid_fields(structure: Structure, q, load, *, bars: str = "rigid") -> np.ndarray:
    """The rigid fields (3n, m) that stay rigid under dead loads: orthonormal, in
    :func:`rigid_fields`' span.

    A dead load does no second-order work along a translation, nor along a rotation about an
    axis parallel to every nodal load; along any other rotation it has a geometric stiffness
    (a pendulum's swing: ``m g / L`` hanging, ``-m g / L`` inverted), so that rotation is a
    mode of the loaded structure, not a rigid motion to remove. `load` (3n,) [N] is gravity
    plus the loads; without loads this is :func:`rigid_fields` itself.
    """
    Rt = rigid_fields(structure, q, bars=bars)
    F = validation.real_array("loaded_rigid_fields: load", load, "N",
                              shape=(3 * structure.n_nodes,), finite=True).reshape(-1, 3)
    top = np.abs(F).max(initial=0.0)
    if Rt.shape[1] == 0 or top == 0:
        return Rt
    # axes w with w x f_i = 0 for every node: null([f_i]_x), stacked (3 for no load, 1 for
    # parallel loads such as gravity, else none)
    cross = np.vstack([np.cross(np.eye(3), f).T for f in F / top])
    axes = scipy.linalg.null_space(cross, rcond=1e-10)
    N = np.asarray(q, dtype=float).reshape(-1, 3)
    d = N - N.mean(axis=0)
    moves = [np.tile(np.eye(3), (structure.n_nodes, 1))]
    moves += [np.cross(w, d).reshape(-1, 1) for w in axes.T]
    keep = scipy.linalg.orth(np.hstack(moves), rcond=1e-10)
    # span(Rt) and span(keep) meet where the principal angles vanish (cosines 1)
    U, cos, _ = np.linalg.svd(Rt.T @ keep, full_matrices=False)
    return Rt @ U[:, cos >= 1.0 - 1e-12]


def _constraint_rows_times(structure, q, bars, R: np.ndarray) -> np.ndarray:
    """``_constraint_rows(structure, q, bars) @ R`` (rows, k) without the dense Jacobian:
    a fixed coordinate's unit row picks R's row, a bar's row ``(-d, d) / (sqrt 2 |d|)`` on its
    two nodes gives ``d . (R_j - R_i) / (sqrt 2 |d|)``. O(n k): the dense rows were O(n^2)
    (43 MB for the identity alone at 768 bars), on every path step of the static solve."""
    parts = [R[np.asarray(structure.fixed_coordinates, dtype=np.int64)]]
    if bars == "rigid" and structure.n_bars:
        N = np.asarray(q, dtype=float).reshape(-1, 3)
        b = structure.bar_nodes
        d = N[b[:, 1]] - N[b[:, 0]]
        Rn = R.reshape(structure.n_nodes, 3, -1)
        rows = np.einsum("bk,bkr->br", d, Rn[b[:, 1]] - Rn[b[:, 0]])
        parts.append(rows / (np.sqrt(2.0) * np.linalg.norm(d, axis=1))[:, None])
    return np.vstack(parts)


def _constraint_rows(structure, q, bars) -> np.ndarray:
    """Constraint Jacobian with unit-norm rows (bar rows scale with length; the null space not)."""
    J = (constraint_jacobian(structure, q) if bars == "rigid"
         else np.eye(3 * structure.n_nodes)[structure.fixed_coordinates])
    return J / np.linalg.norm(J, axis=1, keepdims=True) if J.shape[0] else J


def _reduced_basis(structure, q, bars):
    """(Z, R_t): admissible displacements in the Euclidean gauge, and the rigid fields."""
    Rt = rigid_fields(structure, q, bars=bars)
    if bars == "compressible" and Rt.shape[1] == 0:
        return np.eye(3 * structure.n_nodes)[:, structure.free_coordinates], Rt
    rows = np.vstack([_constraint_rows(structure, q, bars), Rt.T])
    if rows.shape[0] == 0:
        return np.eye(3 * structure.n_nodes), Rt
    return scipy.linalg.null_space(rows, rcond=1e-10), Rt


@dataclass(frozen=True, eq=False)
class Compliance(Presentable):
    """Static compliance of a structure about a configuration.

    See docs/theory.md, "Norms and compliance".

    Attributes
    ----------
    matrix : ndarray, shape (r, r)
        ``C = K_red^{-1}`` [m/N] in the reduced coordinates.
    eigenvalues : ndarray, shape (r,)
        Eigenvalues of C, ascending [m/N].
    basis : ndarray, shape (3n, r)
        Z, orthonormal: reduced coordinates -> nodal displacements. For compressible bars on
        a pinned structure, the free-coordinate selector; otherwise ``null([J; R_t^T])``.
    stiffness : ndarray, shape (r, r)
        ``K_red = Z^T K Z`` [N/m].
    rigid_fields : ndarray, shape (3n, n_r)
        Orthonormal rigid-body fields R_t compatible with the constraints (n_r = 0 if pinned).
    bars : str
        The bar model used.
    """

    matrix: np.ndarray
    eigenvalues: np.ndarray
    basis: np.ndarray
    stiffness: np.ndarray
    rigid_fields: np.ndarray
    bars: str = "rigid"

    def displacement(self, loads) -> np.ndarray:
        """Static response ``delta q = Z C Z^T f`` (n_nodes, 3) [m] to nodal forces f [N].

        `loads` (f) has shape (n_nodes, 3) or (3n,). Forces on constrained directions are taken by
        the constraints. A free-floating structure needs a self-equilibrated load
        (``R_t^T f = 0``); otherwise ValueError, since the rigid part has no static response.
        """
        n3 = self.basis.shape[0]
        f = validation.real_array("Compliance.displacement: loads", loads, "N").reshape(-1)
        if f.shape != (n3,) or not np.all(np.isfinite(f)):
            raise ValueError(f"loads must be ({n3 // 3}, 3) finite nodal forces [N], "
                             f"got shape {np.shape(loads)}")
        rigid = self.rigid_fields.T @ f
        if np.abs(rigid).max(initial=0.0) > 1e-9 * max(np.abs(f).max(), 1e-300):
            raise ValueError("loads are not self-equilibrated: its resultant force/moment along "
                             f"the rigid-body fields is {rigid.round(12).tolist()}; a "
                             "free-floating structure has no static response to it. Remove "
                             "the resultant (R_t^T f = 0) or fix more coordinates")
        return (self.basis @ (self.matrix @ (self.basis.T @ f))).reshape(-1, 3)

    def __repr__(self) -> str:
        e = self.eigenvalues
        eig = f"[{e[0]:.4g}, {e[-1]:.4g}]" if e.size else "[]"
        return (f"Compliance(bars={self.bars!r}, reduced_coordinates={e.size}, "
                f"rigid_fields={self.rigid_fields.shape[1]}, eigenvalues={eig} m/N)")

    def summary(self) -> str:
        """The sizes and the range of the compliance eigenvalues as a table."""
        e = self.eigenvalues
        return titled_table("Compliance", [
            ("bars", self.bars), ("reduced coordinates", f"{e.size}"),
            ("rigid-body fields", f"{self.rigid_fields.shape[1]}"),
            ("eigenvalues", value_range(e, "m/N"))])


def compliance(structure: Structure, q=None, *, bars: str = "rigid", at_rest: str = "slack",
               loads=None, gamma=None, bar_force_densities=None) -> Compliance:
    """Compliance ``C = (Z^T K Z)^{-1}`` of the passive structure.

    See docs/theory.md, "Norms and compliance".

    Parameters are those of :func:`tangent_stiffness`. With rigid bars Z spans
    ``null(J_Phi(q))``, with compressible bars the free coordinates; for a free-floating
    structure the rigid-body fields R_t are removed too (``Z = null([J; R_t^T])``, the
    Euclidean gauge ``R_t^T delta q = 0``), and then ``K R_t = 0`` at a self-equilibrated state.

    Returns
    -------
    Compliance

    Raises
    ------
    ValueError
        If a member's derived quantity (length, stiffness, force density law, weight) or K is
        not finite (the message names the member or entry); if ``K_red`` is singular (a
        mechanism, or slack strings): the message gives the number of zero-stiffness
        directions and what to try. A warning is issued if ``K_red`` has negative eigenvalues
        (an unstable configuration).

    Notes
    -----
    If the constraints and the rigid-body fields leave no admissible deformation (r = 0, e.g.
    bars pinned at one end and no strings), the compliance is empty: ``displacement`` then
    returns zero for every load the constraints take.
    """
    reject_cables(structure, "compliance")
    _validate("compliance", structure, bars, at_rest, q=q, gamma=gamma,
              bar_force_densities=bar_force_densities, loads=loads)
    q = nodal_vector(structure.n_nodes, "q", q, structure.nodes.reshape(-1))
    # an infinite stiffness would otherwise make the eigenvalue test blame "a mechanism"
    check_members(structure, "compliance", q, bars=bars, inertia=False)
    K = _checked(_tangent(structure, q, gamma, bar_force_densities, bars, at_rest, loads),
                 structure, "compliance")
    Z, Rt = _reduced_basis(structure, q, bars)
    if Z.shape[1] == 0:
        # the constraints and rigid motions leave no deformation: nothing deforms, nothing to
        # invert (e.g. bars without strings, each pinned at one end)
        empty = np.zeros((0, 0))
        return Compliance(empty, np.zeros(0), Z, empty, Rt, bars)
    Kr = Z.T @ K @ Z
    Kr = 0.5 * (Kr + Kr.T)
    w, V = np.linalg.eigh(Kr)
    top = np.abs(w).max(initial=0.0)
    zero = int(np.sum(np.abs(w) <= 1e-10 * top)) if top > 0 else len(w)
    if zero:
        none = " (the structure has no strings)" if structure.n_strings == 0 else ""
        raise ValueError(
            f"{structure.name}: the reduced stiffness is singular: {zero} of {len(w)} "
            f"admissible directions have zero stiffness (a mechanism, or slack strings){none}. "
            "Prestress the structure (tenscontrol.statics.equilibrium) or, for strings exactly "
            "at their rest length, pass at_rest='taut'")
    if w[0] < 0:
        warnings.warn(f"{structure.name}: the reduced stiffness has {int(np.sum(w < 0))} "
                      "negative eigenvalues; the configuration is statically unstable",
                      stacklevel=2)
    C = (V / w) @ V.T
    return Compliance(0.5 * (C + C.T), np.sort(1.0 / w), Z, Kr, Rt, bars)
