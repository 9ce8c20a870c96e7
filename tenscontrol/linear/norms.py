"""H2 and H-infinity norms of continuous-time state-space models, done robustly.

python-control's ``norm`` and ``linfnorm`` are unsafe on raw tensegrity linearizations
(docs/theory.md, "Norms and compliance"): ``linfnorm`` does no stability check at all, and ``norm``
uses an absolute 1e-8 threshold on Re(lambda), so its verdict depends on the time unit. The two
functions here first classify the spectrum with a *relative* threshold and a PBH-type test:

- every eigenvalue has ``Re(lambda) < -1e-9 stability_scale(A)`` (about ||A||_2 of the balanced
  A): the norm is computed;
- some eigenvalue is marginal or unstable and excites the output (controllable and observable):
  the norm is ``inf``, never a finite number;
- all marginal/unstable eigenvalues are hidden (uncontrollable or unobservable, as the constraint
  and rigid-body modes of a Cartesian model are): a ``ValueError`` asks for a structurally
  reduced model, ``tenscontrol.minimal_realization(model)``.

Both functions accept a ``control.StateSpace`` or any object with a ``.sys`` attribute holding one
(``LinearModel``, ``ElasticModel``, ``MinimalRealization``). Units are those of the model: for
inputs u and outputs y, ``||G||_inf`` is in [y]/[u] and ``||G||_2`` in [y]/[u] * s^-1/2.

The hidden-mode machinery (invariant subspaces from ordered Schur forms, staircase controllable
subspaces, the cluster-by-cluster Kalman reduction ``kalman_minimal``) is private and shared with
:mod:`tenscontrol.linear.reduction`; neither module imports the mechanics chain (only its
numpy-only :mod:`tenscontrol.mechanics.checks`).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import control as ct

from tenscontrol import validation
from tenscontrol.mechanics.checks import check_finite
from tenscontrol.linear.threads import sized_by

__all__ = ["h2_norm", "hinf_norm", "is_hurwitz", "stability_scale"]

#: A model is asymptotically stable iff max Re(lambda) < -MARGIN * stability_scale(A): the
#: scale is sqrt(||A||_1 ||A||_inf) of the diagonally balanced A, an upper bound of its 2-norm
#: that does not grow with the number of states as ||A||_F does (a 96-bar tower's H-inf loop,
#: 768 states: ||A||_F 752 against 64, which made its lightly damped loop, max Re -6e-7 in
#: scaled time, count as marginal).
MARGIN = 1e-9
#: The largest entry of each nonzero matrix must lie in [1/MAGNITUDE, MAGNITUDE]: outside, the
#: Gramians, Frobenius norms and Hamiltonian products overflow or underflow and a norm of
#: 1e600 comes back as 0.0 (tensegrity models sit far inside: |A| up to ~1e16 1/s^2).
MAGNITUDE = 1e100
#: Relative PBH tolerance for "hidden" marginal modes. It must stay well above sqrt(eps): the
#: constraint Jordan blocks of a Cartesian model split into +-sqrt(eps ||A||) pairs whose
#: computed couplings to B and C are O(sqrt(eps)) instead of 0 (docs/theory.md, "Minimal
#: realization").
PBH_TOL = 1e-6
#: Eigenvalues closer than CLUSTER * ||A|| to a marginal one are tested with it, so that a
#: numerically split Jordan block is never cut in two.
CLUSTER = 1e-6


def _as_statespace(sys, who: str) -> ct.StateSpace:
    """The continuous-time StateSpace behind ``sys`` (itself or its ``.sys``)."""
    obj = sys if isinstance(sys, ct.StateSpace) else getattr(sys, "sys", None)
    if not isinstance(obj, ct.StateSpace):
        raise TypeError(f"{who}: expected a control.StateSpace or an object with a .sys "
                        f"StateSpace (LinearModel, MinimalRealization), got {type(sys).__name__}")
    if not obj.isctime():
        raise ValueError(f"{who}: the system is discrete-time (dt={obj.dt}); only continuous-time "
                         "models are supported")
    # before any LAPACK or slycot call: with NaN in B or C slycot's ab13dd never returns
    check_finite(who, A=obj.A, B=obj.B, C=obj.C, D=obj.D)
    for name, M in (("A", obj.A), ("B", obj.B), ("C", obj.C), ("D", obj.D)):
        size = float(np.abs(np.asarray(M)).max(initial=0.0))
        if size and not 1.0 / MAGNITUDE <= size <= MAGNITUDE:
            raise ValueError(f"{who}: the largest entry of {name} is {size:.3g}, outside "
                             f"[{1 / MAGNITUDE:g}, {MAGNITUDE:g}] where the norm computation "
                             "would overflow or underflow; express the model in other units "
                             "(time, length, force) so that its entries are of usable size")
    return obj


def _balanced_data(ss: ct.StateSpace):
    """(A, B, C, D) after a diagonal similarity that balances A (same eigenvalues and norms)."""
    A, B, C, D = (np.asarray(M, dtype=float) for M in (ss.A, ss.B, ss.C, ss.D))
    if A.size == 0:
        return A, B, C, D
    _, (scale, _) = scipy.linalg.matrix_balance(A, permute=False, separate=True)
    return A * scale[None, :] / scale[:, None], B / scale[:, None], C * scale[None, :], D


def stability_scale(A) -> float:
    """sqrt(||A||_1 ||A||_inf) of A after diagonal balancing (>= its 2-norm) [1/time unit].

    Size-independent reference for "numerically on the imaginary axis": an eigenvalue counts as
    asymptotically stable iff ``Re(lambda) < -MARGIN * stability_scale(A)``.
    """
    A = np.asarray(A, dtype=float)
    if A.size == 0:
        return 0.0
    Ab = scipy.linalg.matrix_balance(A, permute=False)[0]
    return float(np.sqrt(np.abs(Ab).sum(axis=0).max() * np.abs(Ab).sum(axis=1).max()))


def is_hurwitz(A) -> bool:
    """True iff every eigenvalue of the square matrix A has ``Re < -MARGIN * stability_scale(A)``."""
    A = np.asarray(A, dtype=float)
    if A.size == 0:
        return True
    return bool(np.linalg.eigvals(A).real.max() < -MARGIN * stability_scale(A))


def _normalized(M: np.ndarray, axis: int) -> np.ndarray:
    """Columns (axis=0) or rows (axis=1) scaled to unit 2-norm; zero ones are dropped."""
    nrm = np.linalg.norm(M, axis=axis)
    keep = nrm > 0
    return M[:, keep] / nrm[keep] if axis == 0 else M[keep] / nrm[keep, None]


def _invariant_basis(A: np.ndarray, select) -> np.ndarray:
    """Orthonormal basis (n, k) of the right invariant subspace of A for eigenvalues in ``select``.

    ``select(re, im) -> bool`` picks the eigenvalues; an ordered real Schur form puts them first.
    """
    _, U, k = scipy.linalg.schur(A, output="real", sort=select)
    return U[:, :k]


def _krylov_basis(F: np.ndarray, G: np.ndarray, tol_first: float, tol_next: float) -> np.ndarray:
    """Orthonormal basis of the controllable subspace span{G, FG, F^2 G, ...} (staircase).

    A new direction counts if its singular value exceeds ``tol_first`` (for G) or ``tol_next``
    (for F times the previous block; both absolute, callers pass relative tolerances times norms).
    """
    k = F.shape[0]
    Q = np.zeros((k, 0))
    V, tol = G, tol_first
    while Q.shape[1] < k and V.shape[1] > 0:
        for _ in range(2):                      # twice is enough (Kahan, Parlett)
            V = V - Q @ (Q.T @ V)
        U, s, _ = np.linalg.svd(V, full_matrices=False)
        r = int(np.sum(s > tol))
        if r == 0:
            break
        Q = np.hstack([Q, U[:, :r]])
        V, tol = F @ U[:, :r], tol_next
    return Q


def _hidden_reduce(F, G, H, tol: float, scales) -> np.ndarray:
    """Orthonormal Q (k, r): controllable+observable part of (F, G, H) is ``zeta = Q^T eta``.

    ``scales = (||A||, ||B||, ||C||)`` of the whole model: rank decisions are relative to them,
    which is the PBH test ``sigma_min([A - lambda I, B]) <= tol ||[A, B]||`` cluster by cluster.
    """
    nA, nB, nC = scales
    Qc = _krylov_basis(F, G, tol * nB, tol * nA)
    Fc, Hc = Qc.T @ F @ Qc, H @ Qc
    Qo = _krylov_basis(Fc.T, Hc.T, tol * nC, tol * nA)
    return Qc @ Qo


def _spectral_part(A, B, C, select):
    """Decoupled subsystem (F, G, H) of the eigenvalues picked by ``select`` and its bases.

    With Y an orthonormal basis of the *left* invariant subspace, ``eta = Y^T x`` obeys
    ``eta' = F eta + G u`` exactly, and the part's output is ``H eta`` (X: right basis).
    """
    X = _invariant_basis(A, select)
    Y = _invariant_basis(A.T, select)
    if X.shape[1] != Y.shape[1]:
        raise np.linalg.LinAlgError("left and right invariant subspaces differ in dimension")
    YX = Y.T @ X
    F, G = Y.T @ A @ Y, Y.T @ B
    H = C @ X @ np.linalg.inv(YX)
    return F, G, H, X, Y, YX


def _clusters(eigs: np.ndarray, radius: float) -> list:
    """Index sets of eigenvalues linked by distance <= radius (conjugates always together)."""
    pts = eigs.real + 1j * np.abs(eigs.imag)
    adj = np.abs(pts[:, None] - pts[None, :]) <= radius
    label = np.full(eigs.size, -1)
    for i in range(eigs.size):
        if label[i] < 0:
            members, frontier = {i}, [i]
            while frontier:
                new = set(np.flatnonzero(adj[frontier].any(axis=0))) - members
                members |= new
                frontier = list(new)
            label[list(members)] = i
    return [np.flatnonzero(label == g) for g in np.unique(label)]


def _real_span(vecs: np.ndarray, k: int):
    """Orthonormal basis of the real span of k eigenvectors (closed under conjugation), or None
    if they are numerically dependent (defective cluster)."""
    U, s, _ = np.linalg.svd(np.hstack([vecs.real, vecs.imag]), full_matrices=False)
    return U[:, :k] if s[k - 1] > 1e-6 * s[0] else None


def kalman_minimal(A, B, C, tol):
    """Remove only uncontrollable/unobservable modes, cluster by cluster (PBH in modal form).

    Eigenvalues are grouped in clusters (distance <= 1e-6 ||A||); each cluster's exact
    subsystem ``eta = Y^T x`` (Y: left invariant basis) is reduced by staircases with rank
    decisions relative to ||A||, ||B||, ||C|| of the normalised model. Returns (Ar, Br, Cr, V, W).
    """
    nA = np.linalg.norm(A)
    Bn, Cn = _normalized(B, 0), _normalized(C, 1)
    scales = (nA, max(np.linalg.norm(Bn, 2), 1.0), max(np.linalg.norm(Cn, 2), 1.0))
    eigs, Wl, Vr = scipy.linalg.eig(A, left=True, right=True)
    radius = CLUSTER * nA
    Vs, Ws, blocks = [], [], []
    for idx in _clusters(eigs, radius):
        X, Y = _real_span(Vr[:, idx], idx.size), _real_span(Wl[:, idx], idx.size)
        if X is None or Y is None:              # defective: ordered Schur form instead
            lam = eigs[idx]

            def select(re, im, lam=lam):
                return bool(np.min(np.abs(complex(re, im) - lam)) <= radius / 2)
            X, Y = _invariant_basis(A, select), _invariant_basis(A.T, select)
        YXinv = np.linalg.inv(Y.T @ X)
        F = Y.T @ A @ Y
        Q = _hidden_reduce(F, Y.T @ Bn, Cn @ X @ YXinv, tol, scales)
        Vs.append(X @ YXinv @ Q)
        Ws.append(Q.T @ Y.T)
        blocks.append(Q.T @ F @ Q)
    V, W = np.hstack(Vs), np.vstack(Ws)
    return scipy.linalg.block_diag(*blocks), W @ B, C @ V, V, W


def _offending_selector(eigs: np.ndarray, thresh: float, radius: float):
    """select(re, im) for the Schur ordering: marginal/unstable eigenvalues and their cluster.

    The set is closed under "within ``radius`` of a member", so every other eigenvalue is more
    than ``radius`` away and matching the reordered (recomputed) eigenvalues within radius/2 is
    unambiguous.
    """
    bad = eigs[eigs.real >= thresh]
    changed = True
    while changed:                              # close the set under the cluster radius
        near = np.min(np.abs(eigs[:, None] - bad[None, :]), axis=1) <= radius
        new = eigs[near | (eigs.real >= thresh)]
        changed = new.size != bad.size
        bad = new

    def select(re, im):
        return bool(np.min(np.abs(complex(re, im) - bad)) <= radius / 2)

    return select, bad.size


def _is_stable(A, B, C, who: str) -> bool:
    """True if asymptotically stable; False if a marginal/unstable mode is excited; else raise.

    (A, B, C) should be diagonally balanced (:func:`_balanced_data`).
    """
    if A.size == 0:
        return True
    eigs = np.linalg.eigvals(A)
    nA = max(np.linalg.norm(A), np.finfo(float).tiny)
    thresh = -MARGIN * stability_scale(A)
    if eigs.real.max() < thresh:
        return True
    select, n_bad = _offending_selector(eigs, thresh, CLUSTER * nA)
    Bn, Cn = _normalized(B, 0), _normalized(C, 1)
    try:
        F, G, H, *_ = _spectral_part(A, Bn, Cn, select)
    except (np.linalg.LinAlgError, ValueError):
        return False                            # cannot prove the modes hidden: report inf
    Q = _hidden_reduce(F, G, H, PBH_TOL, (nA, max(np.linalg.norm(Bn, 2), 1.0),
                                          max(np.linalg.norm(Cn, 2), 1.0)))
    if Q.shape[1] > 0:
        return False
    lam = eigs[eigs.real >= thresh]
    raise ValueError(
        f"{who}: the model has {n_bad} uncontrollable/unobservable marginal or unstable modes "
        f"(max Re(lambda) = {lam.real.max():.3g}; constraint or rigid-body directions of a "
        "Cartesian linearization). Their transfer function is finite but a state-space norm "
        "computation is ill-posed: reduce the model first with "
        "tenscontrol.minimal_realization(model) and take the norm of its result")


@sized_by
def h2_norm(sys) -> float:
    """H2 norm of a continuous-time LTI system, robust to hidden marginal modes.

    Parameters
    ----------
    sys : control.StateSpace or object with a ``.sys`` StateSpace
        Continuous-time model ``x' = A x + B u, y = C x + D u`` (n states, m inputs, p outputs).

    Returns
    -------
    float
        ``sqrt(trace(C P C^T))`` with P the controllability Gramian,
        ``A P + P A^T + B B^T = 0`` (SciPy's ``solve_continuous_lyapunov(A, -B B^T)``; mind the
        sign: it solves ``A X + X A^T = Q``). Units [y]/[u] s^-1/2. ``inf`` if a marginal or
        unstable mode is controllable and observable, and ``inf`` if D != 0 (a continuous-time
        system with feedthrough has an impulse response with a Dirac part, so infinite energy).

    Raises
    ------
    ValueError
        If the only marginal/unstable modes are uncontrollable or unobservable (reduce the model
        with ``tenscontrol.minimal_realization`` first), the system is discrete-time, or an
        entry of A, B, C or D is NaN or inf (the message names the matrix and the entry).
    TypeError
        If ``sys`` is not a StateSpace and has no ``.sys`` StateSpace.
    """
    A, B, C, D = _balanced_data(_as_statespace(sys, "h2_norm"))
    if not _is_stable(A, B, C, "h2_norm"):
        return float("inf")
    if np.any(D != 0):
        return float("inf")
    if A.size == 0:
        return 0.0
    P = scipy.linalg.solve_continuous_lyapunov(A, -B @ B.T)
    value = np.trace(C @ (0.5 * (P + P.T)) @ C.T)
    return float(np.sqrt(max(value, 0.0)))


@sized_by
def hinf_norm(sys, *, tol: float = 1e-10) -> float:
    """H-infinity norm of a continuous-time LTI system, robust to hidden marginal modes.

    Parameters
    ----------
    sys : control.StateSpace or object with a ``.sys`` StateSpace
    tol : float
        Relative accuracy of the peak gain, 0 < tol < 1 (passed to slycot ``ab13dd`` through
        ``control.linfnorm``, which runs only after the stability check here).

    Returns
    -------
    float
        ``sup_w sigma_max(G(jw))`` in [y]/[u]; ``inf`` if a marginal or unstable mode is
        controllable and observable (``ct.linfnorm`` would return the finite L-infinity norm).

    Raises
    ------
    ValueError
        If the only marginal/unstable modes are uncontrollable or unobservable (reduce the model
        with ``tenscontrol.minimal_realization`` first), if tol is out of range, if the system
        is discrete-time, or if an entry of A, B, C or D is NaN or inf (the message names the
        matrix and the entry; checked before slycot, which hangs on NaN).
    TypeError
        If ``sys`` is not a StateSpace and has no ``.sys`` StateSpace.
    """
    tol = validation.fraction("hinf_norm: tol", tol)
    A, B, C, D = _balanced_data(_as_statespace(sys, "hinf_norm"))
    if A.size == 0:
        return float(scipy.linalg.svdvals(D)[0]) if D.size else 0.0
    if not _is_stable(A, B, C, "hinf_norm"):
        return float("inf")
    if B.shape[1] == 0 or C.shape[0] == 0:
        return 0.0
    gpeak, _ = ct.linfnorm(ct.ss(A, B, C, D), tol=tol)
    return float(gpeak)
