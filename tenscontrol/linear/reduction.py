"""Structural reduction and minimal realisation of tensegrity linear models.

A Cartesian linearization (docs/theory.md, "Linearization: force densities in, nodal forces as
disturbances") is never minimal: every constraint adds an uncontrollable double eigenvalue at 0,
and a free-floating structure adds rigid-body modes that the nodal forces d excite. Thresholds on
eigenvalues cannot separate these reliably, so the reduction is done in two stages
(docs/theory.md, "Minimal realization" and "Norms and compliance"):

1. **Structural projection** (:func:`elastic_model`, exact, no eigenvalue thresholds): Galerkin
   projection on the elastic subspace ``Z = null([J; R_t^T M])`` of the constraint tangent space,
   orthogonal in the mass metric to the rigid fields R_t.
2. **Balanced truncation** of the elastic model (:func:`minimal_realization`), in scaled time and
   length units, with the Hankel singular values of slycot's square-root method. If the elastic
   model is not asymptotically stable, a Kalman minimal realisation that only removes
   uncontrollable or unobservable modes (PBH tests, cluster by cluster) is done instead.

Rigid-body motion of a free-floating structure (driven by d) is not in the elastic model: the
reduced models describe the elastic deformation in the mass-weighted gauge ``R_t^T M dq = 0``.
This module works on arrays and ``control.StateSpace``; it duck-types the ``LinearModel`` of
``tenscontrol.linear.linearization`` and never imports the mechanics chain.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import control as ct
import slycot

from tenscontrol.linear import norms as _nm
from tenscontrol.linear import splitting as _sp
from tenscontrol import validation
from tenscontrol.mechanics.checks import check_finite
from tenscontrol.linear.threads import sized_by
from tenscontrol.model.tables import Presentable, titled_table

__all__ = ["elastic_basis", "ElasticModel", "elastic_model", "MinimalRealization",
           "minimal_realization"]

#: Required relative invariance residual ||A T - T A_e|| / ||A|| (Frobenius norms).
INVARIANCE_TOL = 1e-8


def _rows_normalized(J: np.ndarray) -> np.ndarray:
    """Rows scaled to unit norm: same row space, rank decisions free of the rows' units."""
    nrm = np.linalg.norm(J, axis=1)
    if np.any(nrm == 0):
        raise ValueError(f"constraint_jacobian: rows {np.flatnonzero(nrm == 0).tolist()} are zero")
    return J / nrm[:, None]


def _rigid_fields(q: np.ndarray, rtol: float) -> np.ndarray:
    """Orthonormal basis of the infinitesimal rigid motions (translations, omega x (n_i - c))."""
    N = q.reshape(-1, 3)
    r = N - N.mean(axis=0)
    cols = [np.tile(e, len(N)) for e in np.eye(3)]
    cols += [np.cross(e, r).ravel() for e in np.eye(3)]
    R = np.column_stack(cols)
    nrm = np.linalg.norm(R, axis=0)
    R = R[:, nrm > rtol * nrm.max()] / nrm[nrm > rtol * nrm.max()]
    U, s, _ = np.linalg.svd(R, full_matrices=False)
    return U[:, s > rtol * s[0]]           # a collinear structure has one rotation fewer


def elastic_basis(constraint_jacobian, mass_matrix, q, *, rtol: float = 1e-9):
    """Elastic subspace Z and compatible rigid fields R_t (docs/theory.md, "Minimal realization").

    Parameters
    ----------
    constraint_jacobian : array_like, shape (c, nq)
        Linearly independent constraint rows at q (fixed coordinates, rigid-bar lengths).
    mass_matrix : array_like, shape (nq, nq)
        Symmetric positive definite mass matrix M [kg].
    q : array_like, shape (nq,)
        Nodal coordinates [m] of the operating point, node by node.
    rtol : float
        Relative tolerance of the rank decisions. Rows of J are normalised to unit length and
        rigid fields to an orthonormal basis, so every matrix that is SVD-ranked has O(1)
        scale; singular values <= rtol (times the largest, at least 1) count as zero.

    Returns
    -------
    Z : ndarray, shape (nq, n_e)
        Orthonormal basis of ``null([J; R_t^T M])``, ``n_e = nq - c - n_rigid``.
    R_t : ndarray, shape (nq, n_rigid)
        Orthonormal basis of the rigid fields allowed by the constraints, ``span(R null(J R))``
        (empty for a pinned structure).
    """
    q = np.asarray(q, dtype=float).ravel()
    nq = q.size
    J = np.asarray(constraint_jacobian, dtype=float).reshape(-1, nq)
    M = np.asarray(mass_matrix, dtype=float)
    if nq % 3 or M.shape != (nq, nq):
        raise ValueError(f"elastic_basis: need q of length 3n and mass_matrix ({nq}, {nq}), got "
                         f"q {q.shape} and mass_matrix {M.shape}")
    check_finite("elastic_basis", constraint_jacobian=J, mass_matrix=M, q=q)
    if not np.allclose(M, M.T, rtol=1e-12, atol=1e-14 * np.abs(M).max()):
        raise ValueError("elastic_basis: mass_matrix must be symmetric")
    R0 = _rigid_fields(q, rtol)
    if J.shape[0]:
        Jn = _rows_normalized(J)
        sJ = np.linalg.svd(Jn, compute_uv=False)
        if sJ[-1] <= rtol * sJ[0] or J.shape[0] > nq:
            raise ValueError("elastic_basis: constraint_jacobian rows are linearly dependent; "
                             "drop redundant constraint rows")
        _, s, Vt = np.linalg.svd(Jn @ R0)
        rank = int(np.sum(s > rtol * max(sJ[0], 1.0)))
        R_t = R0 @ Vt[rank:].T
    else:
        Jn, R_t = np.zeros((0, nq)), R0
    S = np.vstack([Jn, _rows_normalized(R_t.T @ M)]) if R_t.shape[1] else Jn
    if S.shape[0] == 0:
        return np.eye(nq), R_t
    _, s, Vt = np.linalg.svd(S)
    if s[-1] <= rtol * s[0]:
        raise ValueError("elastic_basis: [J; R_t^T M] is rank deficient; check that mass_matrix "
                         "is positive definite")
    return Vt[S.shape[0]:].T, R_t


@dataclass(frozen=True, eq=False)
class ElasticModel(Presentable):
    """Exact Galerkin elastic model ``x_e = [a; a_dot]``, ``dq = Z a`` (docs/theory.md, "Minimal
    realization").

    ``M_e a'' + D_e a' + K_e a = Z^T F_u du + Z^T dd``; as a first-order system
    ``x_e' = A x_e + B du + E dd``, ``dy = C x_e``.

    Attributes
    ----------
    A : ndarray (2 n_e, 2 n_e); B : ndarray (2 n_e, nu); E : ndarray (2 n_e, nq);
    C : ndarray (ny, 2 n_e)
    Z : ndarray (nq, n_e)
        Orthonormal elastic basis; ``R_t`` (nq, n_rigid) the compatible rigid fields.
    M_e, K_e, D_e : ndarray (n_e, n_e)
        ``Z^T M Z`` [kg], ``Z^T K Z`` [N/m], ``Z^T D Z`` [N s/m].
    n_e : int
        Number of elastic degrees of freedom.
    invariance_residual : float
        ``||A T - T A_e||_F / ||A||_F`` with the full model's A (checked <= 1e-8).
    T : ndarray (2 nq, 2 n_e)
        ``blkdiag(Z, Z)``: ``x - x* = T x_e`` for motions without rigid part.
    left_inverse : ndarray (2 n_e, 2 nq)
        ``blkdiag(L_q, L_q)``, ``L_q = (Z^T M Z)^-1 Z^T M``: ``x_e = left_inverse (x - x*)``,
        ``left_inverse T = I`` (``L`` before issue 30: deprecated, L is the Kalman gain).
    sys : control.StateSpace
        ``(A, [B E], C, 0)`` with the model's input, disturbance and output names; states
        "a0".. and "a0_dot"...
    """

    A: np.ndarray
    B: np.ndarray
    E: np.ndarray
    C: np.ndarray
    Z: np.ndarray
    R_t: np.ndarray
    M_e: np.ndarray
    K_e: np.ndarray
    D_e: np.ndarray
    n_e: int
    invariance_residual: float
    T: np.ndarray
    left_inverse: np.ndarray
    sys: ct.StateSpace

    @property
    def L(self) -> np.ndarray:
        """Deprecated spelling of :attr:`left_inverse` (L names the Kalman gain)."""
        warnings.warn("ElasticModel.L is deprecated: the left inverse is "
                      "ElasticModel.left_inverse (L names the Kalman gain)",
                      DeprecationWarning, stacklevel=2)
        return self.left_inverse

    def __repr__(self) -> str:
        return (f"ElasticModel(n_e={self.n_e}, states={2 * self.n_e}, rigid={self.R_t.shape[1]}, "
                f"inputs={self.B.shape[1]}+{self.E.shape[1]}, outputs={self.C.shape[0]}, "
                f"invariance_residual={self.invariance_residual:.1e})")

    def summary(self) -> str:
        """The sizes and the invariance check as a table."""
        return titled_table("ElasticModel", [
            ("elastic coordinates", f"{self.n_e} ({2 * self.n_e} states)"),
            ("rigid-body fields", f"{self.R_t.shape[1]}"),
            ("inputs, disturbances", f"{self.B.shape[1]}, {self.E.shape[1]}"),
            ("outputs", f"{self.C.shape[0]}"),
            ("invariance residual", f"{self.invariance_residual:.1e}")])


_FIELDS = ("A", "B", "E", "C", "q", "qd", "at_equilibrium", "constraint_jacobian", "mass_matrix",
           "stiffness", "damping", "force_input", "input_names", "disturbance_names",
           "output_names")
#: The numeric fields, checked finite before any factorization.
_NUMERIC = ("A", "B", "E", "C", "q", "qd", "constraint_jacobian", "mass_matrix", "stiffness",
            "damping", "force_input")


def _check_model(model, who: str) -> None:
    """Duck-type check of a LinearModel, of its operating point and of its numbers."""
    missing = [f for f in _FIELDS if not hasattr(model, f)]
    if missing:
        raise TypeError(f"{who}: expected a tenscontrol LinearModel, got "
                        f"{type(model).__name__} without fields {missing}")
    # before scipy's Cholesky and Schur and slycot's ab09ax, which fail with foreign messages
    # (or hang) on NaN and inf
    check_finite(who, **{f: getattr(model, f) for f in _NUMERIC})
    if np.any(np.asarray(model.qd) != 0):
        raise ValueError(f"{who}: the structural reduction needs an equilibrium operating "
                         "point; this model was linearized about a moving state (qd != 0). Call "
                         "tenscontrol.equilibrium first and linearize there")
    if not model.at_equilibrium:
        raise ValueError(f"{who}: the structural reduction needs an equilibrium operating "
                         "point; this model is at rest (qd = 0) but not in equilibrium "
                         "(at_equilibrium=False). Call tenscontrol.equilibrium (a prestress "
                         "that holds this configuration) or tenscontrol.static_equilibrium (the "
                         "configuration its rest lengths hold) first and linearize its "
                         "structure")


def _relative(residual: np.ndarray, ref: np.ndarray) -> float:
    nr = np.linalg.norm(ref)
    return float(np.linalg.norm(residual) / nr) if nr > 0 else float(np.linalg.norm(residual))


@sized_by
def elastic_model(model) -> ElasticModel:
    """Structurally reduced (elastic) model of a LinearModel at an equilibrium.

    Parameters
    ----------
    model : LinearModel
        Duck-typed: A, B, E, C, q, qd, at_equilibrium, constraint_jacobian, mass_matrix,
        stiffness, damping, force_input and the name tuples (tenscontrol.linear.linearization).

    Returns
    -------
    ElasticModel

    Raises
    ------
    ValueError
        If a numeric field of the model has a NaN or inf entry (named), the operating point is
        not an equilibrium, or if the model data are inconsistent:
        the elastic subspace is not invariant under A (``||A T - T A_e|| > 1e-8 ||A||``), the
        inputs u move the rigid body, or E differs from ``[0; W P]``.
    """
    return _elastic_model(model, "elastic_model")


def _elastic_model(model, who: str) -> ElasticModel:
    """:func:`elastic_model`, with `who` (the public caller) in the messages."""
    _check_model(model, who)
    M = np.asarray(model.mass_matrix, dtype=float)
    Z, R_t = elastic_basis(model.constraint_jacobian, M, model.q)
    n_e = Z.shape[1]
    M_e, K_e, D_e = (Z.T @ np.asarray(X, dtype=float) @ Z
                     for X in (M, model.stiffness, model.damping))
    M_e = 0.5 * (M_e + M_e.T)              # K, D may legitimately be unsymmetric
    try:
        cho = scipy.linalg.cho_factor(M_e)
    except np.linalg.LinAlgError:
        raise ValueError(f"{who}: mass_matrix is not positive definite on the elastic "
                         "subspace (Z^T M Z); check the mass matrix") from None
    zero, eye = np.zeros((n_e, n_e)), np.eye(n_e)
    A_e = np.block([[zero, eye], [-scipy.linalg.cho_solve(cho, K_e),
                                  -scipy.linalg.cho_solve(cho, D_e)]])
    F_u = np.asarray(model.force_input, dtype=float).reshape(M.shape[0], -1)
    B_e = np.vstack([np.zeros((n_e, F_u.shape[1])), scipy.linalg.cho_solve(cho, Z.T @ F_u)])
    E_e = np.vstack([np.zeros((n_e, Z.shape[0])), scipy.linalg.cho_solve(cho, Z.T)])
    T = scipy.linalg.block_diag(Z, Z)
    L_q = scipy.linalg.cho_solve(cho, Z.T @ M)
    L = scipy.linalg.block_diag(L_q, L_q)
    A, B, E = (np.asarray(X, dtype=float) for X in (model.A, model.B, model.E))
    C_e = np.asarray(model.C, dtype=float) @ T
    residual = _relative(A @ T - T @ A_e, A)
    if residual > INVARIANCE_TOL:
        raise ValueError(f"{who}: the model data are inconsistent: ||A T - T A_e|| = "
                         f"{residual:.2e} ||A|| > {INVARIANCE_TOL:g} ||A||. A must equal "
                         "[[0, I], [-W P K, -W P D]] with K R_t = 0 and D R_t = 0 (check "
                         "stiffness, damping, mass_matrix and constraint_jacobian)")
    if B.size and _relative(B - T @ B_e, B) > INVARIANCE_TOL:
        raise ValueError(f"{who}: the inputs u move the rigid body or B differs from "
                         "[0; W P F_u] (check force_input): the elastic model cannot hold them")
    if E.size and _relative(L @ E - E_e, E_e) > INVARIANCE_TOL:
        raise ValueError(f"{who}: E differs from [0; W P] on the elastic subspace "
                         "(check E, mass_matrix and constraint_jacobian)")
    sys = ct.ss(A_e, np.hstack([B_e, E_e]), C_e, 0,
                inputs=list(model.input_names) + list(model.disturbance_names),
                outputs=list(model.output_names),
                states=[f"a{i}" for i in range(n_e)] + [f"a{i}_dot" for i in range(n_e)])
    return ElasticModel(A_e, B_e, E_e, C_e, Z, R_t, M_e, K_e, D_e, n_e, residual, T, L, sys)


@dataclass(frozen=True, eq=False)
class MinimalRealization(Presentable):
    """Reduced model of the elastic dynamics, in physical units.

    Attributes
    ----------
    sys : control.StateSpace
        ``z' = A_r z + B_r [du; dd]``, ``dy = C_r z``: the model's input, disturbance and output
        names, states "z0"... Same frequency response as the elastic model up to ``error_bound``.
    hsv : ndarray or None
        Hankel singular values of the elastic model, descending (length ``structural_order``);
        None if the elastic model is not asymptotically stable (Kalman reduction).
    order, structural_order, full_order : int
        Reduced order r, ``2 n_e`` and ``2 nq``.
    basis : ndarray, shape (2 nq, r)
        ``x - x* ~= basis @ z`` (elastic part of the motion).
    left_inverse : ndarray, shape (r, 2 nq)
        ``z = left_inverse @ (x - x*)``, with ``left_inverse @ basis = I``; it annihilates rigid
        motion and constraint-violating directions.
    elastic : ElasticModel
    error_bound : float
        ``2 * sum(discarded HSVs)``, a bound on ``||G_elastic - G_r||_inf``; 0 for the Kalman
        reduction (exact).
    n_marginal : int
        States of the modes on (or numerically on) the imaginary axis kept exactly when an
        ``order`` was asked of a model that is not asymptotically stable (``hsv`` then holds
        the HSVs of the stable part only); 0 otherwise.
    """

    sys: ct.StateSpace
    hsv: np.ndarray | None
    order: int
    structural_order: int
    full_order: int
    basis: np.ndarray
    left_inverse: np.ndarray
    elastic: ElasticModel
    error_bound: float
    n_marginal: int = 0

    def __repr__(self) -> str:
        head = (f"MinimalRealization(order={self.order}, structural_order={self.structural_order}, "
                f"full_order={self.full_order}")
        if self.hsv is None:
            return head + "; Kalman: elastic model not asymptotically stable, exact, no HSVs)"
        hsv = self.hsv[self.hsv > 0]
        span = f"{hsv[0]:.3e} .. {hsv[-1]:.3e}" if hsv.size else "all zero"
        kept = f", {self.n_marginal} marginal kept" if self.n_marginal else ""
        return (head + f"; balanced truncation{kept}, HSV {span}, "
                f"||G - G_r||_inf <= {self.error_bound:.3e})")

    def summary(self) -> str:
        """The orders, the reduction and its error bound as a table."""
        rows = [("order", f"{self.order} (structural {self.structural_order}, "
                          f"full {self.full_order})")]
        if self.hsv is None:
            rows.append(("reduction", "Kalman (elastic model not asymptotically stable), exact"))
        else:
            hsv = self.hsv[self.hsv > 0]
            rows += [("reduction", "balanced truncation"
                      + (f", {self.n_marginal} marginal states kept" if self.n_marginal else "")),
                     ("HSV", f"{hsv[0]:.3e} .. {hsv[-1]:.3e}" if hsv.size else "all zero"),
                     ("||G - G_r||_inf <=", f"{self.error_bound:.3e}")]
        return titled_table("MinimalRealization", rows)


def _scaling(em: ElasticModel, q):
    """Reference frequency w [rad/s] and state scales s (2 n_e,) [m, m/s] (control-notes 3).

    w is the geometric mean of the smallest and largest nonzero |eig(M_e^-1 K_e)|^(1/2) (or of
    the damping rates eig(M_e^-1 D_e) without stiffness); lengths are the rms node distance
    from the centroid.
    """
    N = np.asarray(q, dtype=float).reshape(-1, 3)
    length = float(np.sqrt(np.mean(np.sum((N - N.mean(axis=0)) ** 2, axis=1)))) or 1.0
    omega = 1.0
    for X, power in ((em.K_e, 0.5), (em.D_e, 1.0)):
        mag = np.abs(scipy.linalg.eigvalsh(0.5 * (X + X.T), em.M_e)) if em.n_e else np.zeros(0)
        mag = mag[mag > 1e-12 * mag.max()] if mag.size and mag.max() > 0 else mag[:0]
        if mag.size:
            omega = float(np.sqrt(mag.min() * mag.max()) ** power)
            break
    return omega, np.concatenate([np.full(em.n_e, length), np.full(em.n_e, length * omega)])


def _balanced_truncation(S, U, B, C, order, tol):
    """Square-root balanced truncation (slycot ab09ax) of (U S U^T, B, C), S real Schur.

    Returns (V, W, hsv, bound): ``A_r = W A V`` with ``W V = I``.
    """
    n, m, p = S.shape[0], B.shape[1], C.shape[0]
    hsv, r = np.zeros(n), 0
    V, W = np.zeros((n, 0)), np.zeros((0, n))
    if m and p and np.any(B) and np.any(C):
        nmin, _, _, _, hsv, Tr, Ti = slycot.ab09ax("C", "B", n, m, p, S, U.T @ B, C @ U,
                                                   nr=None, tol=0.0)
        r = int(np.sum(hsv > tol * hsv[0])) if order is None else int(order)
        if r > nmin:
            warnings.warn(f"minimal_realization: order {r} exceeds the numerical minimal order "
                          f"{nmin} (HSV <= n eps hsv[0]); returning order {nmin}",
                          stacklevel=4)   # the caller, past the thread-policy wrapper
            r = nmin
        # The square-root (job='B') truncation matrices go HSV by HSV: their leading r
        # columns/rows are the order-r balanced truncation.
        V, W = U @ Tr[:, :r], Ti[:r] @ U.T
    return V, W, hsv, 2.0 * float(np.sum(hsv[r:]))


def _split_truncation(S, U, B, C, order, tol, thresh, radius):
    """Balanced truncation of the stable part only; the marginal modes are kept exactly.

    Returns (V, W, hsv of the stable part, bound, number of marginal states).
    """
    split = _sp.marginal_split(S, U, thresh, radius)
    k, n = split.k, S.shape[0]
    if order < k:
        raise ValueError(f"minimal_realization: order={order} is below the {k} states of the "
                         "modes on (or numerically on) the imaginary axis, which balanced "
                         f"truncation cannot remove; pass order >= {k}, or add damping")
    Bs = (split.U.T @ B)[k:]
    Cs = C @ split.U[:, :k] @ split.X + C @ split.U[:, k:]
    V2, W2, hsv, bound = _balanced_truncation(split.S[k:, k:], np.eye(n - k), Bs, Cs,
                                              order - k, tol)
    return split.right(V2), split.left(W2), hsv, bound, k


def _response(S, U, B, C, points) -> np.ndarray:
    """G(s) (len(points), p, m) of (U S U^H, B, C) with S upper triangular, O(n^2 m) per point."""
    out = np.zeros((len(points), C.shape[0], B.shape[1]), complex)
    if S.shape[0] == 0:
        return out
    Bt, Ct = U.conj().T @ B, C @ U
    for k, s in enumerate(points):
        R = -S
        R[np.diag_indices_from(R)] += s
        out[k] = Ct @ scipy.linalg.solve_triangular(R, Bt, check_finite=False)
    return out


def _check_response(full, reduced, eigs, stable: bool, allowed, schur_full=None):
    """Raise if the reduced frequency response leaves the allowed error (scaled units).

    Points: 16 modal frequencies |Im lambda| (all if fewer), 0 and a 16-point log grid; on the
    axis if stable, else at s = w (0.1 + 1j) (undamped poles sit on the axis). The error is
    measured on a random 8-dimensional input subspace when there are more inputs (a lower
    bound of ||G - G_r||, so never a false alarm), which keeps the check O(n^2) per point.
    """
    w = np.unique(np.abs(eigs.imag[eigs.imag > 0]))
    w = w[np.unique(np.linspace(0, w.size - 1, 16).round().astype(int))] if w.size else w
    mag = np.abs(eigs)
    mag = mag[mag > 1e-8 * mag.max()] if mag.size and mag.max() > 0 else np.ones(1)
    lo, hi = mag.min(), mag.max()            # zero eigenvalues (integrators) stay off the grid
    w = np.concatenate([w, np.logspace(np.log10(lo) - 1, np.log10(hi) + 1, 16)])
    pts = 1j * np.concatenate([[0.0], w]) if stable else np.concatenate([[1.0], w * (0.1 + 1j)])
    (A, B, C), (Ar, Br, Cr) = full, reduced
    if B.shape[1] > 8:
        X = np.linalg.qr(np.random.default_rng(0).standard_normal((B.shape[1], 8)))[0]
        B, Br = B @ X, Br @ X
    if schur_full is None:
        schur_full = scipy.linalg.schur(A.astype(complex), output="complex")
    G = _response(*schur_full, B, C, pts)
    Gr = _response(*scipy.linalg.schur(Ar.astype(complex), output="complex"), Br, Cr, pts)
    err = max(np.linalg.norm(G[k] - Gr[k], 2) for k in range(len(pts)))
    peak = max(np.linalg.norm(G[k], 2) for k in range(len(pts)))
    if err > allowed(peak):
        raise RuntimeError(f"minimal_realization: reduced frequency response is off by {err:.3e} "
                           f"(peak gain {peak:.3e}, allowed {allowed(peak):.3e}); the elastic "
                           "model is numerically ill-conditioned, try a larger tol")


@sized_by
def minimal_realization(model, *, order: int | None = None, tol: float = 1e-9
                        ) -> MinimalRealization:
    """Structural projection, then balanced truncation (or Kalman reduction) of a LinearModel.

    Parameters
    ----------
    model : LinearModel
        Linearization at an equilibrium (see :func:`elastic_model`).
    order : int, optional
        Reduced order r (0 <= r <= 2 n_e). Default: keep the states whose Hankel singular value
        exceeds ``tol * hsv[0]``. On an elastic model that is not asymptotically stable the
        marginal modes (``Re(lambda) >= -1e-9 stability_scale(A)``, with their clusters) are
        kept exactly and the rest is balanced-truncated to ``order - n_marginal`` states
        (a design order for lightly damped structures such as prism towers).
    tol : float
        Relative HSV threshold (balanced truncation) or relative PBH rank tolerance (Kalman
        reduction, against ||A||, ||B||, ||C|| of the scaled model with unit input columns and
        output rows), 0 < tol < 1.

    Returns
    -------
    MinimalRealization

    Notes
    -----
    The elastic model is scaled first (time by a reference frequency w, positions by the rms
    node distance from the centroid, velocities by that times w; docs/theory.md, "Minimal
    realization")
    so that balancing and rank decisions see O(1) numbers. HSVs, the bound and the frequency
    response are invariant under this scaling, and the returned model is scaled back to
    physical units. HSVs and truncation matrices come from slycot ``ab09ax`` (the square-root
    core of ``ab09ad``) on the real Schur form. The reduced response is checked against the
    elastic one at modal frequencies and on a log grid: a violation of ``error_bound``
    (balanced) or of 1e-6 relative (Kalman) raises RuntimeError.

    If ``max Re lambda >= -1e-9 ||A||`` (undamped structure, control model without stiffness),
    balanced truncation is impossible; only uncontrollable or unobservable modes are removed
    (PBH tests cluster by cluster in modal form), ``hsv`` is None and ``error_bound`` 0. Rigid
    body motion of a free-floating structure is not in the model: z describes the elastic
    deformation in the mass-weighted gauge ``R_t^T M dq = 0`` (docs/theory.md, "Minimal
    realization").
    """
    tol = validation.fraction("minimal_realization: tol", tol)
    em = _elastic_model(model, "minimal_realization")
    n2 = 2 * em.n_e
    if order is not None:  # n2 = 2 n_e, the elastic order
        order = validation.integer("minimal_realization: order", order, minimum=0, maximum=n2,
                                   error=ValueError)
    omega, s = _scaling(em, model.q)
    A1 = em.A * s[None, :] / s[:, None] / omega
    B1, C1 = np.hstack([em.B, em.E]) / s[:, None] / omega, em.C * s[None, :]
    S, U = scipy.linalg.schur(A1, output="real")
    eigs = np.linalg.eigvals(S)            # cheap on the quasi-triangular factor
    thresh = -_nm.MARGIN * _nm.stability_scale(A1)
    # a 1e-6 relative floor: lightly damped axial bar modes (zeta ~ 5e-6) leave rounding
    # errors of ~1e-8 of the peak gain in an untruncated model (compressible T-bar)
    allowed = lambda peak: bound * (1 + 1e-6) + 1e-6 * peak              # noqa: E731
    n_marginal = 0
    if n2 == 0 or eigs.real.max() < thresh:
        V, W, hsv, bound = _balanced_truncation(S, U, B1, C1, order, tol)
    elif order is not None:                # keep the marginal modes, truncate the rest
        V, W, hsv, bound, n_marginal = _split_truncation(S, U, B1, C1, order, tol, thresh,
                                                          _nm.CLUSTER * _nm.stability_scale(A1))
    else:
        Ar, _, _, V, W = _nm.kalman_minimal(A1, B1, C1, tol)
        hsv, bound = None, 0.0
        allowed = lambda peak: max(1e-6, 1e3 * tol) * peak               # noqa: E731
    Ar, Br, Cr = W @ A1 @ V, W @ B1, C1 @ V
    _check_response((A1, B1, C1), (Ar, Br, Cr), eigs, hsv is not None and not n_marginal,
                    allowed, _sp.complex_schur(S, U))
    r = Ar.shape[0]
    sys = ct.ss(omega * Ar, omega * Br, Cr, 0, inputs=list(em.sys.input_labels),
                outputs=list(em.sys.output_labels), states=[f"z{i}" for i in range(r)])
    basis, left = em.T @ (s[:, None] * V), (W / s[None, :]) @ em.left_inverse
    return MinimalRealization(sys, hsv, r, n2, em.T.shape[0], basis, left, em, bound,
                              n_marginal)
