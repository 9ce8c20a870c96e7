"""H-infinity synthesis on plain generalized plants, by bisection.

See docs/theory.md, "Control on force densities".

The array-level core behind :func:`tenscontrol.synthesis.hinfsyn`; it knows nothing about
tensegrities. A generalized plant is partitioned as

    x' = A x + B1 w + B2 u,   z = C1 x + D11 w + D12 u,   y = C2 x + D21 w   (D22 = 0),

and a controller ``K = (AK, BK, CK, DK)`` closes it with negative feedback ``u = -K y``
(``xc' = AK xc + BK y``, ``u = -(CK xc + DK y)``), the convention of
:class:`tenscontrol.OutputFeedback` and of the state feedback ``u = -F x``. slycot's sb10fd
and sb10hd return positive-feedback controllers (``u = K y``, as python-control's hinfsyn):
their CK and DK are negated where they are called (:func:`_negative_feedback`).

- :func:`hinf_output_feedback`: bisection on slycot ``sb10fd`` at fixed gamma. ``ct.hinfsyn``
  (``sb10ad`` started at gamma = 1e100) is slow beyond ~20 states and its gamma is not always
  what the closed loop achieves (python-control issue #152), so each trial gamma is accepted
  only if ``sb10fd`` succeeds *and* the closed loop is Hurwitz.
- :func:`hinf_state_feedback`: bisection on the indefinite CARE of the full-information problem.

Both scale time by a reference frequency before the numerics (docs/theory.md, "Minimal
realization") and undo it on the result; the H-infinity norm does not depend on the time unit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import control as ct
import slycot

from tenscontrol.design import riccati
from tenscontrol.linear.norms import MARGIN, hinf_norm, is_hurwitz, stability_scale
from tenscontrol.mechanics.checks import check_finite
from tenscontrol.design.result import Design, sorted_eigenvalues
from tenscontrol.model.tables import summary_table

__all__ = ["BisectionResult", "HinfDesign", "check_axis_modes", "closed_loop",
           "hinf_output_feedback", "hinf_riccati", "hinf_state_feedback", "reference_frequency",
           "verified_loop"]

#: sb10fd results with a reciprocal condition number below this are rejected: below the
#: optimal gamma sb10fd can return a controller (X-Riccati rcond ~1e-15) whose loop is Hurwitz
#: but misses gamma by a factor 3 (the ball of tenscontrol.model.catalog, 48 states).
RCOND_MIN = 1e-12
#: State feedback: a CARE solution is accepted only below this relative residual (SciPy
#: returns non-solutions without an error below the optimal gamma).
CARE_RESIDUAL = 1e-8
#: Largest number of doublings of the initial upper bound before giving up.
_MAX_DOUBLINGS = 30
#: From this many states on the bisections test gamma by the Riccati conditions, solved by
#: doubling (tenscontrol.design.riccati), instead of a synthesis and a loop norm per trial
#: (96-bar tower, 384 states: sb10fd 12 s and slycot's ab13dd 30 s of wall time per trial).
RICCATI_ORDER = riccati.LARGE_ORDER


@dataclass(frozen=True, eq=False)
class BisectionResult:
    """Outcome of a gamma bisection (all in the plant's own time unit).

    Attributes
    ----------
    K : tuple of ndarray
        Output feedback: ``(AK, BK, CK, DK)`` with ``u = -(CK xc + DK y)``; state feedback:
        ``(F,)`` with ``u = -F x``.
    gamma : float
        The gamma the returned controller was synthesized at (backoff times the final upper
        bound).
    gamma_lower : float
        Largest gamma found infeasible (0 if none was tried).
    iterations : int
        Number of synthesis attempts (Riccati solutions or sb10fd calls), bound included.
    rcond : float
        Smallest reciprocal condition number reported by sb10fd (nan for state feedback).
    h2_controller : tuple of ndarray or None
        ``(AK, BK, CK, DK)`` of the H2-optimal controller used for the initial bound.
    method : str
        How gamma was bisected: "sb10fd" (a synthesis per trial), "riccati" (the Riccati
        conditions by doubling, then one sb10fd synthesis; :data:`RICCATI_ORDER`),
        "riccati, then sb10fd" (the synthesis at the Riccati bisection's gamma failed its
        checks and the sb10fd bisection went on above it), "care" or "doubling" for state
        feedback.
    """

    K: tuple
    gamma: float
    gamma_lower: float
    iterations: int
    rcond: float
    h2_controller: tuple | None
    method: str = "sb10fd"


def reference_frequency(A: np.ndarray) -> float:
    """Geometric mean of the smallest and largest nonzero |eig(A)| [rad/s]; 1 if there is none."""
    mag = np.abs(np.linalg.eigvals(A)) if A.size else np.zeros(0)
    mag = mag[mag > 1e-12 * mag.max()] if mag.size and mag.max() > 0 else mag[:0]
    return float(np.sqrt(mag.min() * mag.max())) if mag.size else 1.0


def _negative_feedback(K: tuple) -> tuple:
    """A positive-feedback controller (slycot's ``u = K y``) as ``u = -K y``: CK, DK negated."""
    AK, BK, CK, DK = K
    return AK, BK, -CK, -DK


def closed_loop(plant: tuple, K: tuple) -> tuple:
    """(A, B, C, D) of the loop of P with ``u = -K y`` (negative feedback), D22 = 0.

    ``plant = (A, B1, B2, C1, C2, D11, D12, D21)``; ``K = (AK, BK, CK, DK)``.
    """
    A, B1, B2, C1, C2, D11, D12, D21 = plant
    AK, BK, CK, DK = _negative_feedback(K)   # the command map y -> u: F_l(P, -K)
    Acl = np.block([[A + B2 @ DK @ C2, B2 @ CK], [BK @ C2, AK]])
    Bcl = np.vstack([B1 + B2 @ DK @ D21, BK @ D21])
    Ccl = np.hstack([C1 + D12 @ DK @ C2, D12 @ CK])
    return Acl, Bcl, Ccl, D11 + D12 @ DK @ D21


def _care_residual(A, B, Q, R, S, X) -> float:
    """Relative residual of ``A^T X + X A + Q - (X B + S) R^-1 (B^T X + S^T) = 0``."""
    G = X @ B + S
    res = A.T @ X + X @ A + Q - G @ np.linalg.solve(R, G.T)
    scale = np.linalg.norm(A.T @ X) + np.linalg.norm(Q) + np.linalg.norm(G) ** 2 / max(
        np.abs(np.linalg.eigvals(R)).min(), np.finfo(float).tiny)
    return float(np.linalg.norm(res) / max(scale, np.finfo(float).tiny))


def _loop_norm(plant: tuple, K: tuple) -> float:
    """||F_l(P, K)||_inf, inf if the loop is not Hurwitz or its norm cannot be computed."""
    return _stable_norm(*closed_loop(plant, K))


def _stable_norm(Acl, Bcl, Ccl, Dcl) -> float:
    """||(Acl, Bcl, Ccl, Dcl)||_inf, inf if Acl is not Hurwitz or the norm cannot be computed.

    A trial controller whose loop defeats slycot's ab13dd (QR not converging: seen on the
    30-bar tower near the optimum, where the central controller is ill-conditioned) counts as
    infeasible: the bisection then keeps a larger, verified gamma.
    """
    if not is_hurwitz(Acl):
        return float("inf")
    try:
        return hinf_norm(ct.ss(Acl, Bcl, Ccl, Dcl))
    except slycot.exceptions.SlycotArithmeticError:
        return float("inf")


def _bisect(trial, hi: float, tol: float, what: str, lo: float = 0.0):
    """Bisection on gamma in [lo, hi]: ``trial(g)`` returns a result or None (infeasible).

    The bound hi is doubled until feasible. Returns (result at hi, hi, lo, number of trials).
    """
    best, count, lo0 = None, 0, lo
    for _ in range(_MAX_DOUBLINGS):
        best, count = trial(hi), count + 1
        if best is not None:
            break
        hi *= 2.0
    if best is None:
        raise ValueError(f"{what}: no gamma up to {hi:.3g} gives a stabilizing controller")
    lo = max(0.5 * hi, lo0) if count > 1 else lo0      # the last doubling's start failed
    while hi - lo > tol * hi:
        mid = 0.5 * (lo + hi)
        res, count = trial(mid), count + 1
        if res is None:
            lo = mid
        else:
            hi, best = mid, res
    return best, hi, lo, count


def hinf_riccati(A, B1, B2, C1, D12, gamma: float):
    """The stabilizing X >= 0 of the H-infinity Riccati equation at gamma, by doubling, or None.

    ``A^T X + X A + C1^T C1 - (X B + S) R^-1 (B^T X + S^T) = 0`` with ``B = [B1, B2]``,
    ``R = blkdiag(-gamma^2 I, D12^T D12)``, ``S = [0, C1^T D12]`` (D11 = 0), written as
    ``Ax^T X + X Ax - X G X + Qx = 0`` with the indefinite ``G = B2 Ru^-1 B2^T - B1 B1^T /
    gamma^2`` for :func:`tenscontrol.design.riccati.care_doubling`. None unless X is finite,
    its relative residual is at most :data:`CARE_RESIDUAL`, X is positive semidefinite and
    ``Ax - G X`` is Hurwitz. The dual (the Y of output feedback) is
    ``hinf_riccati(A^T, C1^T, C2^T, B1^T, D21^T, gamma)``.
    """
    Ru = D12.T @ D12
    Ax = A - B2 @ np.linalg.solve(Ru, D12.T @ C1)
    C1p = C1 - D12 @ np.linalg.solve(Ru, D12.T @ C1)     # C1 off the range of D12
    Qx, G = C1p.T @ C1p, B2 @ np.linalg.solve(Ru, B2.T) - (B1 @ B1.T) / gamma**2
    Qx, G = 0.5 * (Qx + Qx.T), 0.5 * (G + G.T)
    try:
        X, _ = riccati.care_doubling(Ax, G, Qx)
    except (np.linalg.LinAlgError, ValueError):
        return None
    ev = np.linalg.eigvalsh(X)
    if (ev.min() < -1e-9 * max(ev.max(), 1.0)
            or riccati.riccati_residual(Ax, G, Qx, X) > CARE_RESIDUAL
            or not is_hurwitz(Ax - G @ X)):
        return None
    return X


def _riccati_feasible(plant: tuple, gamma: float) -> bool:
    """The Riccati conditions of suboptimal H-infinity output feedback at gamma (D11 = 0):
    stabilizing X, Y >= 0 and ``rho(X Y) < gamma^2`` (Glover and Doyle 1988)."""
    A, B1, B2, C1, C2, _, D12, D21 = plant
    X = hinf_riccati(A, B1, B2, C1, D12, gamma)
    if X is None:
        return False
    Y = hinf_riccati(A.T, C1.T, C2.T, B1.T, D21.T, gamma)
    return Y is not None and np.abs(np.linalg.eigvals(X @ Y)).max() < gamma**2


def _split(P: ct.StateSpace, nmeas: int, ncon: int):
    check_finite("hinf_output_feedback", A=P.A, B=P.B, C=P.C, D=P.D)   # slycot hangs on NaN
    A, B, C, D = (np.asarray(X, dtype=float) for X in (P.A, P.B, P.C, P.D))
    m1, p1 = B.shape[1] - ncon, C.shape[0] - nmeas
    if m1 < nmeas or p1 < ncon or nmeas < 0 or ncon < 1:
        raise ValueError(f"generalized plant: need ncon >= 1, inputs - ncon >= nmeas and "
                         f"outputs - nmeas >= ncon; got {B.shape[1]} inputs, {C.shape[0]} "
                         f"outputs, ncon={ncon}, nmeas={nmeas}")
    if np.any(D[p1:, m1:]):
        raise ValueError("generalized plant: D22 (measurements from controls) must be 0")
    return (A, B[:, :m1], B[:, m1:], C[:p1], C[p1:], D[:p1, :m1], D[:p1, m1:], D[p1:, :m1])


def _time_scaled(plant: tuple, omega: float) -> tuple:
    A, B1, B2, *rest = plant
    return (A / omega, B1 / omega, B2 / omega, *rest)


def hinf_output_feedback(P: ct.StateSpace, nmeas: int, ncon: int, *, tol: float = 1e-3,
                         backoff: float = 1.0) -> BisectionResult:
    """Suboptimal H-infinity output feedback by gamma bisection on slycot ``sb10fd``.

    Parameters
    ----------
    P : control.StateSpace
        Generalized plant, inputs ``[w; u]`` (u last, ncon of them), outputs ``[z; y]`` (y last,
        nmeas of them), D22 = 0. Assumptions A1-A4 of sb10fd must hold (D12 full column rank,
        D21 full row rank, no imaginary-axis zeros of the off-diagonal blocks).
    nmeas, ncon : int
    tol : float
        Stop when ``gamma_hi - gamma_lo <= tol * gamma_hi``.
    backoff : float
        >= 1. The controller returned is the central one at ``backoff`` times the final upper
        bound: near the optimum the central controller's poles run off to infinity (ball:
        |lambda| 1e4 rad/s at gamma_opt), a backoff of 1.1-1.5 trades a little H-inf
        performance for a controller that the nonlinear simulation can integrate cheaply.

    Returns
    -------
    BisectionResult
        ``K = (AK, BK, CK, DK)`` in P's time unit, with ``u = -K y``; it is the central
        controller at ``gamma`` = backoff times the final upper bound (it has passed the
        Hurwitz test, and callers compute its closed-loop norm independently).

    Notes
    -----
    A trial gamma is accepted iff sb10fd succeeds, its smallest rcond is >= RCOND_MIN, and the
    loop is Hurwitz with ``||F_l(P, K)||_inf <= gamma (1 + 1e-6)`` (tenscontrol.linear.norms): sb10fd
    alone accepts some gammas below the optimum. Start: ``gamma_hi = 1.01 ||F_l(P, K_H2)||_inf``
    with the H2-optimal controller (slycot ``sb10hd``), doubled until accepted;
    ``gamma_lo = 0``. Time is scaled by :func:`reference_frequency` of A for all slycot calls.

    From :data:`RICCATI_ORDER` states on (and D11 = 0) a trial gamma is tested by the Riccati
    conditions instead (:func:`hinf_riccati` for X and for the dual Y, ``rho(X Y) <
    gamma^2``), each solved by doubling, and sb10fd synthesizes only at the final bound, with
    the checks above; if they fail there, the sb10fd bisection continues above that bound
    (``method`` says which ran).
    """
    plant = _split(P, nmeas, ncon)
    omega = reference_frequency(plant[0])
    sp = _time_scaled(plant, omega)
    A, B1, B2, C1, C2, D11, D12, D21 = sp
    n, m, p = A.shape[0], B1.shape[1] + ncon, C1.shape[0] + nmeas
    B, C = np.hstack([B1, B2]), np.vstack([C1, C2])
    D = np.block([[D11, D12], [D21, np.zeros((nmeas, ncon))]])
    def trial(gamma):
        try:
            *K, rcond = slycot.sb10fd(n, m, p, ncon, nmeas, gamma, A, B, C, D)
        except (slycot.exceptions.SlycotArithmeticError, ValueError):
            return None
        K, rcond = _negative_feedback(K), float(np.min(rcond))
        if rcond < RCOND_MIN or not _loop_norm(sp, K) <= gamma * (1.0 + 1e-6):
            return None                     # not Hurwitz (inf), or not gamma-suboptimal
        return K, rcond

    K2 = None
    try:
        K2 = _negative_feedback(slycot.sb10hd(n, m, p, ncon, nmeas, A, B, C, D)[:4])
        hi = 1.01 * _loop_norm(sp, K2)
    except (slycot.exceptions.SlycotArithmeticError, ValueError):
        hi = float("inf")
    if not np.isfinite(hi):                 # no usable H2 controller: start from a norm scale
        K2 = None
        hi = 1.0 + float(np.linalg.norm(C1) * np.linalg.norm(B1))
    method = "sb10fd"
    if n >= RICCATI_ORDER and not np.any(D11):
        (K, rcond), gamma, lo, count, method = _riccati_bisection(sp, trial, hi, tol)
    else:
        (K, rcond), gamma, lo, count = _bisect(trial, hi, tol, "hinf_output_feedback")
    if backoff > 1.0:
        relaxed = trial(backoff * gamma)
        if relaxed is None:
            raise ValueError(f"hinf_output_feedback: gamma = {backoff:g} x {gamma:.4g} failed "
                             "although the smaller gamma succeeded (ill-conditioned plant)")
        (K, rcond), gamma, count = relaxed, backoff * gamma, count + 1
    unscale = lambda k: (omega * k[0], omega * k[1], k[2], k[3])       # noqa: E731
    return BisectionResult(unscale(K), gamma, lo, count, rcond,
                           None if K2 is None else unscale(K2), method)


def _riccati_bisection(plant: tuple, trial, hi: float, tol: float):
    """Bisection on the Riccati conditions, then one synthesis ``trial`` at the bound found.

    Returns ((K, rcond), gamma, lo, trials, method). When the synthesis at the Riccati bound
    fails its checks (sb10fd's rcond floor, the loop norm), the sb10fd bisection continues
    on [that bound, hi], and the method says so.
    """
    _, g_hi, lo, count = _bisect(lambda g: True if _riccati_feasible(plant, g) else None,
                                 hi, tol, "hinf_output_feedback")
    found = trial(g_hi)
    if found is not None:
        return found, g_hi, lo, count + 1, "riccati"
    found, gamma, lo, more = _bisect(trial, max(hi, g_hi * (1 + tol)), tol,
                                     "hinf_output_feedback", lo=g_hi)
    return found, gamma, lo, count + 1 + more, "riccati, then sb10fd"


def hinf_state_feedback(A, B1, B2, C1, D12, *, tol: float = 1e-3) -> BisectionResult:
    """Suboptimal H-infinity state feedback ``u = -F x`` by bisection on the indefinite CARE.

    Parameters
    ----------
    A, B1, B2, C1, D12 : ndarray
        (n, n), (n, m1), (n, m2), (p1, n), (p1, m2): ``x' = A x + B1 w + B2 u``,
        ``z = C1 x + D12 u`` (D11 = 0), D12 full column rank.
    tol : float
        Stop when ``gamma_hi - gamma_lo <= tol * gamma_hi``.

    Returns
    -------
    BisectionResult
        ``K = (F,)``; gamma is the final upper bound.

    Notes
    -----
    At gamma, X solves ``A^T X + X A + C1^T C1 - (X B + S) R^-1 (B^T X + S^T) = 0`` with
    ``B = [B1, B2]``, ``R = blkdiag(-gamma^2 I, D12^T D12)``, ``S = [0, C1^T D12]`` (SciPy
    ``solve_continuous_are``). gamma is accepted iff X is symmetric positive semidefinite, X
    solves the equation (relative residual <= ``CARE_RESIDUAL``), and the loop with
    ``F = (D12^T D12)^-1 (B2^T X + D12^T C1)`` is Hurwitz with ``||F_l||_inf <= gamma (1 +
    1e-6)``: below the optimal gamma SciPy can return, without an error, a positive
    semidefinite X that is no solution (3-bar tower: residual 4e-2, loop norm 4e4 at gamma
    9.7), so the residual and the norm are checked as for output feedback. The start is 1.01
    times the closed-loop norm of the LQR gain (gamma = inf). From :data:`RICCATI_ORDER`
    states on, X comes from :func:`hinf_riccati` (doubling; SciPy's extended-pencil QZ takes
    a minute at 768 states) and the LQR start from :func:`tenscontrol.design.riccati.care`.
    """
    check_finite("hinf_state_feedback", A=A, B1=B1, B2=B2, C1=C1, D12=D12)
    omega = reference_frequency(A)
    A, B1, B2 = A / omega, B1 / omega, B2 / omega
    m1 = B1.shape[1]
    Ru, Su = D12.T @ D12, C1.T @ D12
    Q = C1.T @ C1

    def gain(X):
        return np.linalg.solve(Ru, B2.T @ X + Su.T)

    B = np.hstack([B1, B2])
    S = np.hstack([np.zeros((A.shape[0], m1)), Su])

    large = A.shape[0] >= RICCATI_ORDER

    def solution(gamma):
        if large:                           # doubling, checked inside
            return hinf_riccati(A, B1, B2, C1, D12, gamma)
        R = scipy.linalg.block_diag(-gamma**2 * np.eye(m1), Ru)
        try:
            X = scipy.linalg.solve_continuous_are(A, B, Q, R, s=S)
        except (np.linalg.LinAlgError, ValueError):
            return None
        X = 0.5 * (X + X.T)
        ev = np.linalg.eigvalsh(X)
        if (ev.min() < -1e-9 * max(ev.max(), 1.0)
                or _care_residual(A, B, Q, R, S, X) > CARE_RESIDUAL):
            return None
        return X

    def trial(gamma):
        X = solution(gamma)
        if X is None:
            return None
        F = gain(X)
        norm = _stable_norm(A - B2 @ F, B1, C1 - D12 @ F, np.zeros((C1.shape[0], m1)))
        return F if norm <= gamma * (1.0 + 1e-6) else None

    if large:                               # the LQR problem, cross term removed
        Ax = A - B2 @ np.linalg.solve(Ru, Su.T)
        X0 = riccati.care(Ax, B2, Q - Su @ np.linalg.solve(Ru, Su.T), Ru).X
    else:
        X0 = scipy.linalg.solve_continuous_are(A, B2, Q, Ru, s=Su)
    F0 = gain(X0)
    hi = 1.01 * hinf_norm(ct.ss(A - B2 @ F0, B1, C1 - D12 @ F0, 0))
    F, gamma, lo, count = _bisect(trial, hi, tol, "hinf_state_feedback")
    return BisectionResult((F,), gamma, lo, count, float("nan"), None,
                           "doubling" if large else "care")


def check_axis_modes(A, Bd, Bu, Cz, Cm, who: str) -> None:
    """Raise a ValueError naming an imaginary-axis mode of A that breaks assumptions A1-A4.

    Modes with ``Re(lambda) >= -1e-8 max|lambda|`` must be seen by the performance outputs Cz
    (A3), excited by the disturbance columns Bd (A4), controllable from Bu (A1) and, for output
    feedback, seen by the measurements Cm (A1). PBH test: the smallest singular value of
    ``[(A - lambda I) / max|lambda|; unit-norm rows]`` (or columns) must exceed 1e-8.
    """
    n = A.shape[0]
    lam = np.linalg.eigvals(A) if n else np.zeros(0)
    scale = max(np.abs(lam).max(initial=0.0), np.finfo(float).tiny)
    checks = [("seen by the performance outputs z", Cz, 1, "add outputs (outputs={...}) that "
               "move in it"), ("excited by the disturbances d", Bd, 0, "add disturbance channels")]
    if Cm is not None:
        checks.append(("seen by the measurements y_m", Cm, 1, "add measurements"))
    checks.append(("controllable from the strings u", Bu, 0, "actuate more strings"))
    for mu in lam[(lam.real >= -1e-8 * scale) & (lam.imag >= 0)]:
        H = (A - mu * np.eye(n)) / scale
        for what, X, axis, fix in checks:
            Xn = X / np.maximum(np.linalg.norm(X, axis=axis, keepdims=True), np.finfo(float).tiny)
            M = np.vstack([H, Xn]) if axis == 1 else np.hstack([H, Xn])
            if X.size == 0 or np.linalg.svd(M, compute_uv=False).min() <= 1e-8:
                raise ValueError(
                    f"{who}: the mode at lambda = {mu.real:.3g}{mu.imag:+.4g}j "
                    f"({abs(mu.imag):.4g} rad/s, undamped) is not {what}, so no H-infinity "
                    f"controller exists (assumptions A1-A4 of sb10fd fail); {fix}, or add "
                    "damping to the structure")


def verified_loop(arrays: tuple, K: tuple, res: BisectionResult, inputs, outputs, who: str):
    """(closed loop StateSpace, its H-inf norm) after the stability and ``norm <= gamma`` checks."""
    Acl, Bcl, Ccl, Dcl = closed_loop(arrays, K)
    growth = np.linalg.eigvals(Acl).real.max() if Acl.size else -np.inf
    if not growth < -MARGIN * stability_scale(Acl):
        raise RuntimeError(f"{who}: the closed loop at gamma = {res.gamma:.6g} is not stable "
                           f"(max Re(lambda) = {growth:.3g} 1/s, balanced ||A_cl|| = "
                           f"{stability_scale(Acl):.3g}); try a larger tol or another order")
    closed = ct.ss(Acl, Bcl, Ccl, Dcl, inputs=list(inputs), outputs=list(outputs))
    norm = hinf_norm(closed)
    if not norm <= res.gamma * (1 + 1e-6):
        how = ("state feedback, indefinite CARE" if np.isnan(res.rcond)
               else f"output feedback, sb10fd rcond {res.rcond:.3g}")
        raise RuntimeError(f"{who}: the closed-loop norm {norm:.6g} exceeds gamma = "
                           f"{res.gamma:.6g} ({how}); the synthesis is "
                           "ill-conditioned: rescale d_scale/y_scale, or raise rho/eps")
    return closed, norm


@dataclass(frozen=True, eq=False)
class HinfDesign(Design):
    """Result of :func:`tenscontrol.synthesis.hinfsyn`.

    Attributes
    ----------
    controller : OutputFeedback or StateFeedback
        In physical units: u [N/m] from y_m [m] (or ``u = -K (x - x*)``).
    gamma : float
        The gamma the returned controller was synthesized at (bisection upper bound).
    gamma_lower : float
        Largest gamma found infeasible: the optimum lies in [gamma_lower, gamma / backoff].
    closed_loop_norm : float
        ``||closed_loop||_inf`` recomputed by tenscontrol.norms.hinf_norm after a stability
        check; <= gamma (1 + 1e-6).
    closed_loop : control.StateSpace
        From w = [d / d_scale; v] to z = [C_z x / y_scale; rho u / u_scale].
    plant : control.StateSpace
        Generalized plant, inputs [w; u] (u in N/m), outputs [z; y_m] (state feedback:
        [z; reduced state]), reduced states, physical time.
    iterations : int
        Syntheses tried in the bisection (bound included).
    synthesis_time : float
        Wall time of the bisection [s].
    rcond : float
        Smallest reciprocal condition number sb10fd reported for the controller (nan for
        state feedback).
    h2_norm : float or None
        Closed-loop H2 norm [s^-1/2] of the H2-optimal controller (slycot sb10hd, as
        control.h2syn) that set the initial bound; None for state feedback.
    minimal : MinimalRealization
    full_closed_loop_norm : float or None
        When the design model was truncated (``order`` below the elastic order): the H-inf
        norm of the controller closing the loop on the full elastic model (the check that
        the reduced design holds on the full one); None when the design model is complete.
    bisection : str or None
        How gamma was bisected (:attr:`BisectionResult.method`): "sb10fd", "riccati",
        "riccati, then sb10fd" (output feedback), "care" or "doubling" (state feedback).
    effort_choice : EffortChoice or None
        With ``hinfsyn(..., damping=...)``: the rho chosen, the least damping reached and what
        stopped the search (:func:`tenscontrol.design.effort.choose_effort`).
    E : ndarray
        Closed-loop eigenvalues [1/s] (of ``closed_loop``), sorted by real part.
    K : ndarray or None
        The state-feedback gain ``u = -K (x - x*)`` (``controller.K``); None for output
        feedback (its matrices are the controller's AK, BK, CK, DK).
    """

    controller: object
    gamma: float
    gamma_lower: float
    closed_loop_norm: float
    closed_loop: ct.StateSpace
    plant: ct.StateSpace
    iterations: int
    synthesis_time: float
    rcond: float
    h2_norm: float | None
    minimal: object
    full_closed_loop_norm: float | None = None
    bisection: str | None = None
    effort_choice: object = None

    @property
    def E(self) -> np.ndarray:
        return sorted_eigenvalues(np.linalg.eigvals(np.asarray(self.closed_loop.A)), False)

    @property
    def K(self):
        return getattr(self.controller, "K", None)

    def summary(self) -> str:
        """The design's figures as a table (what ``print(design)`` shows)."""
        rows = [("controller", f"{type(self.controller).__name__}, "
                 f"{getattr(self.controller, 'n_states', 0)} states, "
                 f"{self.controller.strings.size} inputs"),
                ("plant states", f"{self.plant.nstates}"),
                ("gamma", f"{self.gamma:.6g} (infeasible below {self.gamma_lower:.6g})"),
                ("||closed loop||_inf", f"{self.closed_loop_norm:.6g}"),
                ("iterations, time", f"{self.iterations}, {self.synthesis_time:.3g} s"
                 + (f" ({self.bisection})" if self.bisection else "")),
                ("sb10fd rcond", f"{self.rcond:.3g}")]
        if self.full_closed_loop_norm is not None:
            rows.append(("||closed loop||_inf, full model", f"{self.full_closed_loop_norm:.6g}"))
        return "HinfDesign\n" + summary_table(rows + self._verdict_rows())

    def __repr__(self) -> str:
        c = self.controller
        return (f"HinfDesign(controller={type(c).__name__}, controller_states="
                f"{getattr(c, 'n_states', 0)}, commanded_strings={c.strings.size}, "
                f"gamma={self.gamma:.6g} (infeasible below {self.gamma_lower:.6g}), "
                f"||closed loop||_inf={self.closed_loop_norm:.6g})")
