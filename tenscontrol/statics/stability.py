"""Whether an equilibrium is stable, and whether the loads drive a mechanism.

A configuration is stable where the tangent stiffness ``K_t = -dR/dq`` (:func:`static_tangent`)
is positive definite on the admissible motions: those that keep the rigid bars' lengths, less
the rigid motions the loads leave rigid (translations, rotations about the loads' common axis).
From :data:`~tenscontrol.statics.spectrum.SPARSE_MIN_FREE` free coordinates the tests run on
the sparse KKT matrix (an inertia count, Lanczos by shift-invert); below that, or where the
sparse path cannot vouch for its answer (counted as a dense eigensolve), on a dense basis of
the admissible motions. A rounding-sized eigenvalue is zero, so that a mechanism's sign does
not decide the verdict.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.linalg
import scipy.sparse

from tenscontrol import validation
from tenscontrol.mechanics.geometry import member_columns, nodal_vector
from tenscontrol.model.structure import Structure
from tenscontrol.statics import spectrum
from tenscontrol.statics.problem import (Problem, check_arguments, forces, law_gamma,
                                         tangent_terms)
from tenscontrol.statics.result import (MechanismError, describe_motion, loaded_zero_modes,
                                        working_modes)
from tenscontrol.statics.stiffness import rigid_fields, tangent_stiffness

__all__ = ["check_rigid_motion", "mechanism", "min_stiffness", "negative_count",
           "path_stiffness", "sparse_tangent", "stability_constraints", "static_tangent",
           "unstable"]

#: rcond of the dense null spaces (the dense stability path of small problems): far above
#: the rounding of unit rows, far below any real constraint angle.
_NULL_RCOND = 1e-10
#: A rigid field is kept in the stability test where K couples it to the admissible motions
#: by less than this fraction of max|K| (rounding of K's sums) plus _RESIDUAL_MOMENT times
#: the residual's moment over the structure size (what is left of the loads' moment).
_RIGID_COUPLING, _RESIDUAL_MOMENT = 1e-10, 1e2
#: The mechanism check's window: eigenvalues within this fraction of K's scale are zero.
_ZERO_STIFFNESS = 1e-8
#: A least stiffness below this fraction of K's largest entry is rounding, i.e. zero (about 45
#: machine epsilons): the as-built T-bar with three slack strings (a mechanism) reads
#: +-5.8e-11 N/m against 9.1e5 (6e-17) depending on the basis, while the 384-bar steel tower's
#: smallest stiffnesses near its buckling load are 2e-12 of its largest and real (so the
#: mechanism window _ZERO_STIFFNESS would make its stable start look unstable).
_ROUNDING_STIFFNESS = 1e-14
#: Loads whose work along a free rigid motion is below this fraction of the largest load
#: have no resultant along it (rounding of the sum).
_NO_RESULTANT = 1e-12


def static_tangent(structure: Structure, q, psi, bars: str = "rigid") -> np.ndarray:
    """``K_t = -dR/dq`` (3n, 3n) [N/m] with the rigid bars' psi held (the law's for
    compressible bars)."""
    check_arguments("static_tangent", structure, bars, q=q, psi=psi)
    q = nodal_vector(structure.n_nodes, "q", q)
    psi = validation.per_item("static_tangent: psi", psi, structure.n_bars, "N/m",
                              items=" (one per bar)")
    gamma = law_gamma(structure, q)
    return tangent_stiffness(structure, q, gamma=gamma, bar_force_densities=psi, bars=bars,
                             at_rest="taut")


def min_stiffness(p: Problem, q, gamma, psi, residual: float) -> float:
    """The smallest eigenvalue [N/m] of K on :func:`_stability_basis`' motions: by Lanczos on
    the sparse KKT matrix (:mod:`tenscontrol.statics.spectrum`) from SPARSE_MIN_FREE free
    coordinates, else, or where that cannot vouch for it (counted), on the dense basis."""
    if p.free.size >= spectrum.SPARSE_MIN_FREE:
        K, X = sparse_tangent(p, q, gamma, psi)
        C = stability_constraints(p, q, K, X, residual)
        w = None if C is None else spectrum.smallest_admissible_eigenvalue(K, C)
        if w is not None:
            return _zero_within_rounding(w, abs(K).max() if K.nnz else 0.0)
        p.counts["dense_eigen"] += 1
    K = static_tangent(p.structure, q, psi, p.bars)[np.ix_(p.free, p.free)]
    Z = _stability_basis(p, q, K, residual)
    Kr = Z.T @ K @ Z
    w = np.linalg.eigvalsh(0.5 * (Kr + Kr.T)) if Kr.size else np.zeros(1)
    return _zero_within_rounding(float(w[0]), np.abs(K).max(initial=0.0))


def path_stiffness(p: Problem, q, t, r0) -> float:
    """The smallest reduced tangent stiffness [N/m] at (q, t) on the path (the stability
    test's, :func:`min_stiffness`: sparse from SPARSE_MIN_FREE free coordinates)."""
    r, _, gamma, psi = forces(p, q, (1.0 - t) * r0)
    return min_stiffness(p, q, gamma, psi, float(np.abs(r).max(initial=0.0)))


def unstable(p: Problem, q, t, r0) -> bool:
    """Whether the path's point (q, t) is unstable: the sparse inertia count (one LDL^T, no
    eigenvalue, at every size: a dense test per path step costs a quarter of the 96-bar
    tower's solve) rules it stable, and a negative or untrusted count is confirmed by the
    reduced stiffness (a nylon tower's 3e-5 N/m is 1e-10 of its strings' stiffness, at the
    rounding of the unpivoted factor)."""
    r, _, gamma, psi = forces(p, q, (1.0 - t) * r0)
    K, X = sparse_tangent(p, q, gamma, psi)
    C = stability_constraints(p, q, K, X, float(np.abs(r).max(initial=0.0)))
    if C is not None and spectrum.admissible_negative_count(K, C) == 0:
        return False
    return path_stiffness(p, q, t, r0) < 0.0


def negative_count(p: Problem, q0, r0) -> int | None:
    """The negative stiffnesses at the start by the sparse inertia count (one L D L^T; a
    positive one is taken as it is: the dense test that would confirm it took 1.8 of the
    768-bar nylon tower's 3 s), or None (untrusted, or a small problem: the reduced
    stiffness decides)."""
    if p.free.size < spectrum.SPARSE_MIN_FREE:
        return None
    _, _, gamma, psi = forces(p, q0, r0)
    K, X = sparse_tangent(p, q0, gamma, psi)
    C = stability_constraints(p, q0, K, X, 0.0)
    return None if C is None else spectrum.admissible_negative_count(K, C)


def sparse_tangent(p: Problem, q, gamma, psi):
    """(K, X): the tangent stiffness on the free coordinates (nf, nf) and the active bar
    columns (nf, active bars; None without rigid bars), sparse: the Newton step's terms."""
    tangent = tangent_terms(p, q, gamma, psi)
    X = (p.mats.bar_columns(tangent[0][p.structure.n_strings:]).copy()
         if p.rigid and p.mats.nba else None)
    nf = p.free.size
    return p.mats.kkt(*tangent, 0.0, X)[:nf, :nf].tocsc(), X


def stability_constraints(p: Problem, q, K, X, residual: float):
    """The columns C (nf, m) whose null space is :func:`_stability_basis`' span, found without
    a basis: the bar columns X and the rigid fields K couples to no admissible motion (the
    singular vectors of ``P K R_t``, P the projector onto null(X^T), those of ``Z_a^T K R_t``).
    None where the bars are (nearly) dependent: the dense path decides."""
    Rt = rigid_fields(p.structure, q, bars=p.bars)[p.free]
    cols = [] if X is None else [X]
    if Rt.shape[1] == 0:
        return scipy.sparse.hstack(cols + [scipy.sparse.csc_matrix(p.gauge)], format="csc")
    Y = K @ Rt
    if X is not None:
        gram = p.mats.gram(X)
        if gram.dense is not None:
            return None
        Y = Y - X @ np.column_stack([gram.least_squares(y) for y in Y.T])
    tol = _RIGID_COUPLING * abs(K).max() + _RESIDUAL_MOMENT * residual / p.size
    _, sv, Vt = np.linalg.svd(Y)
    rigid = Rt @ Vt[int(np.sum(sv > tol)):].T
    return scipy.sparse.hstack(cols + [scipy.sparse.csc_matrix(rigid)], format="csc")


def _stability_basis(p: Problem, q, K: np.ndarray, residual: float) -> np.ndarray:
    """Orthonormal basis (nf, r) of the admissible motions at q less the rigid fields that
    stay rigid under the load: those K does not couple to any admissible motion (a free
    rotation about the load axis, a translation). A rotation the load stiffens or softens
    (a pendulum's swing) stays, so its eigenvalue decides the stability."""
    Rt = rigid_fields(p.structure, q, bars=p.bars)[p.free]
    if Rt.shape[1] == 0:
        return _admissible(p, q)
    Za = _admissible(replace(p, gauge=Rt[:, :0]), q)  # Rt lies in span(Za)
    # K Rt is the loads' geometric stiffness; what is left at an equilibrium is rounding in
    # K's sums and the residual's moment
    tol = _RIGID_COUPLING * np.abs(K).max(initial=0.0) + _RESIDUAL_MOMENT * residual / p.size
    _, sv, Vt = np.linalg.svd(Za.T @ K @ Rt)
    rigid = Za.T @ (Rt @ Vt[int(np.sum(sv > tol)):].T)
    return Za @ scipy.linalg.null_space(rigid.T, rcond=_NULL_RCOND) if rigid.shape[1] else Za


def _admissible(p: Problem, q) -> np.ndarray:
    """Orthonormal basis (nf, r) of the free-coordinate motions the constraints and gauge allow."""
    rows = [p.gauge.T]
    if p.rigid and p.structure.n_bars:
        rows.insert(0, member_columns(p.structure.bar_nodes, q)[p.free].T)
    C = np.vstack(rows)
    if C.shape[0] == 0:
        return np.eye(p.free.size)
    C = C[np.linalg.norm(C, axis=1) > 0]
    C = C / np.linalg.norm(C, axis=1, keepdims=True)
    return scipy.linalg.null_space(C, rcond=_NULL_RCOND)


def _zero_within_rounding(w: float, scale: float) -> float:
    """`w` [N/m], or 0 where it is rounding (below _ROUNDING_STIFFNESS of K's largest entry
    `scale`): a mechanism's zero eigenvalue comes out with either sign, and its sign must not
    decide whether the equilibrium is stable."""
    return 0.0 if abs(w) <= _ROUNDING_STIFFNESS * scale else float(w)


def check_rigid_motion(p: Problem) -> None:
    """MechanismError if the loads have a resultant along a rigid motion nothing holds (the
    gauge: translations, and rotations about the loads' axis, along which they do no work)."""
    if p.gauge.shape[1] == 0:
        return
    work = p.gauge.T @ p.load[p.free]
    if np.abs(work).max() <= _NO_RESULTANT * max(np.abs(p.load).max(), 1e-300):
        return
    v = np.zeros(3 * p.structure.n_nodes)
    v[p.free] = p.gauge @ work / np.linalg.norm(work)
    text, nodes = describe_motion(v)
    raise MechanismError(
        f"{p.structure.name}: a rigid-body mechanism: the fixed coordinates leave a rigid motion "
        f"free, and the loads (gravity included) have a resultant along it ({text}), so no "
        "configuration holds them. Fix coordinates (Structure.with_fixed) or give loads without "
        "resultant force", v.reshape(-1, 3), nodes)


def mechanism(p: Problem, q, r, log=None) -> MechanismError | None:
    """A MechanismError if a zero-stiffness admissible motion at q is loaded by r, else None."""
    _, _, gamma, psi = forces(p, q, np.zeros(p.free.size))
    # the rigid fields outside the gauge are rotations that the loads stiffen somewhere
    Rt = rigid_fields(p.structure, q, bars=p.bars)[p.free]
    modes = None
    if p.free.size >= spectrum.SPARSE_MIN_FREE:
        K, X = sparse_tangent(p, q, gamma, psi)
        gauge = scipy.sparse.csc_matrix(p.gauge)
        zero = spectrum.admissible_zero_modes(
            K, gauge if X is None else scipy.sparse.hstack([X, gauge]), r, _ZERO_STIFFNESS)
        modes = None if zero is None else working_modes(zero, r, Rt)
        p.counts["dense_eigen"] += modes is None
    if modes is None:
        K = static_tangent(p.structure, q, psi, p.bars)[np.ix_(p.free, p.free)]
        modes = loaded_zero_modes(K, _admissible(p, q), r, rotations=Rt)
    if modes.shape[1] == 0:
        return None
    v = np.zeros(3 * p.structure.n_nodes)
    v[p.free] = modes[:, 0] * np.sign(modes[:, 0] @ r)
    text, nodes = describe_motion(v)
    return MechanismError(
        f"{p.structure.name}: a mechanism: the loads (gravity included) drive a motion no "
        f"member resists, so no configuration holds them: {text}. Fix those coordinates, add "
        "strings or bars that resist the motion, or prestress the structure "
        "(tenscontrol.equilibrium)", v.reshape(-1, 3), nodes, None if log is None else
        log.frozen())
