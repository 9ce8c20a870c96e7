"""Robust state feedback: one gain for a set of models, grown from the worst cases of mu.

See docs/theory.md, "Structured uncertainty and mu". :func:`robust_lqr` starts from a nominal
LQR design and repeats `rounds` times: find the destabilizing perturbation delta* of the current gain
(:func:`tenscontrol.robust.robust_stability`), add the model at ``SHRINK delta*`` (still stable
under the current gain) to the set, and redesign one common gain K that minimizes the worst
LQR cost over the set. The cost of K on model j is the LQR criterion's H2 form,

    J_j(K) = trace(B_j^T P_j B_j),  (A_j - U_j K)^T P_j + P_j (A_j - U_j K) + Q + K^T R K = 0,

the squared H2 norm from the disturbances d to ``[Q^1/2 x; R^1/2 u]`` (U_j the inputs, B_j the
disturbances of model j), with the gradient ``dJ_j/dK = 2 (R K - U_j^T P_j) X_j``,
``(A_j - U_j K) X_j + X_j (A_j - U_j K)^T + B_j B_j^T = 0``. The worst cost is smoothed by
log-sum-exp (``SHARPNESS``) and minimized by gradient descent with Barzilai-Borwein steps and
backtracking: a step that destabilizes any model of the set has infinite cost and is refused,
so every iterate stabilizes every model. A redesign guarantees only its set, so the gain of
the round with the largest margin is returned. The nominal LQR gain minimizes J_0 (for every B), so
the nominal performance lost is ``sqrt(J_0(K) / J_0(K_lqr)) - 1 >= 0``.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from tenscontrol.design.result import Design
from tenscontrol.linear.reduction import elastic_model
from tenscontrol.model.selection import Selection
from tenscontrol.model.tables import titled_table
from tenscontrol.robust.analysis import robust_stability
from tenscontrol.robust.lft import uncertain_loop

__all__ = ["RobustLQRDesign", "robust_lqr", "worst_cost"]

#: Each new model sits at this fraction of delta* (delta* itself puts an eigenvalue on the axis
#: under the current gain, an infinite cost; any smaller scaling is stable there).
SHRINK = 0.95
#: Log-sum-exp sharpness on the costs relative to the nominal LQR cost: the smoothed worst
#: cost exceeds the true one by at most log(n_models) / SHARPNESS of the nominal cost.
SHARPNESS = 50.0
#: Gradient steps per redesign, backtracking halvings per step, and the relative decrease of
#: the smoothed worst cost below which a redesign stops.
DESCENT_STEPS, BACKTRACKS, DESCENT_RTOL = 200, 40, 1e-7
#: Armijo constant of the backtracking (sufficient decrease along the gradient).
ARMIJO = 1e-4


@dataclass(frozen=True, eq=False)
class RobustLQRDesign(Design):
    """Result of :func:`robust_lqr`.

    Attributes
    ----------
    controller : StateFeedback
        ``u = -K (x - x*)`` on the nominal design's strings [N/m]; runs in simulate and verify.
    K : ndarray, shape (nu, 2nq)
        Cartesian gain (``K_elastic @ left_inverse``: annihilates rigid motion).
    K_elastic : ndarray, shape (nu, 2 n_e)
        The gain on the elastic states the cost is minimized over.
    E : ndarray, shape (2 n_e,)
        Nominal closed-loop eigenvalues [1/s], sorted by real part.
    deltas : ndarray, shape (n_models, m)
        The model set (row 0 the nominal, delta = 0), in units of the parameters' ranges.
    costs : ndarray, shape (n_models,)
        J_j(K) / J_0(K_lqr): each model's LQR cost relative to the nominal LQR's.
    margins : ndarray, shape (rounds + 1,)
        The robust stability margin (1 / peak mu upper) of the nominal gain, then of the gain
        after each round.
    chosen : int
        The round whose gain is returned: the largest margin (0 = the nominal gain, when no
        redesign widened it). `deltas` and `costs` are that gain's model set.
    nominal : LQRDesign
        The design started from (its Q and R are the weights).
    nominal_loss : float
        ``sqrt(J_0(K) / J_0(K_lqr)) - 1``: the relative H2 performance lost on the nominal
        model (>= 0: the LQR gain is optimal there).
    stability : RobustStability
        The analysis of the final gain.
    cpu : float
        CPU seconds.
    """

    K: np.ndarray
    K_elastic: np.ndarray
    E: np.ndarray
    deltas: np.ndarray
    costs: np.ndarray
    margins: np.ndarray
    chosen: int
    nominal: object
    nominal_loss: float
    stability: object
    cpu: float

    def __repr__(self) -> str:
        return (f"RobustLQRDesign(models={self.deltas.shape[0]}, margin={self.margins[0]:.4g} "
                f"-> {self.margins[self.chosen]:.4g}, nominal H2 lost="
                f"{100 * self.nominal_loss:.3g} %)")

    def summary(self) -> str:
        """Margins, the model set's costs and the nominal performance lost as a table."""
        return titled_table("RobustLQRDesign", [
            ("inputs x states", f"{self.K.shape[0]} x {self.K.shape[1]}"),
            ("models", f"{self.deltas.shape[0]} (nominal + worst cases)"),
            ("robust margin per round", " -> ".join(f"{m:.4g}" for m in self.margins)
             + f" (round {self.chosen} kept)"),
            ("worst cost / nominal LQR cost", f"{self.costs.max():.6g}"),
            ("nominal H2 lost", f"{100 * self.nominal_loss:.4g} %"),
            ("slowest pole", f"{self.E[np.argmax(self.E.real)]:.6g} 1/s"),
            ("CPU", f"{self.cpu:.3g} s")])


@dataclass(frozen=True)
class _Model:
    """One model of the set on the elastic states: x' = A x + U u + B d."""

    A: np.ndarray
    U: np.ndarray
    B: np.ndarray


def _models(model, controller, parameters, deltas) -> list:
    """The open-loop models at `deltas`: the zero-gain loop's performance(delta) gives A and
    the disturbances on every free coordinate, through which the string inputs act
    (U = B F_u on those rows: a force on a fixed coordinate moves nothing)."""
    zero = dataclasses.replace(controller, K=np.zeros_like(controller.K))
    open_loop = uncertain_loop(model, zero, parameters)
    st = model.structure
    rows = Selection(nodes=range(st.n_nodes)).coordinates(st, "robust_lqr")
    F_u = np.asarray(model.actuated(controller.strings).force_input, dtype=float)[rows]
    out = []
    for d in deltas:
        A, B, _ = open_loop.performance(d)
        out.append(_Model(A, B @ F_u, B))
    return out


def cost(m: _Model, K: np.ndarray, Q: np.ndarray, R: np.ndarray, gradient: bool = True):
    """(J, dJ/dK) of gain `K` on model `m` (see the module); (inf, None) if unstable."""
    Acl = m.A - m.U @ K
    if np.linalg.eigvals(Acl).real.max() >= 0:
        return np.inf, None
    P = scipy.linalg.solve_continuous_lyapunov(Acl.T, -(Q + K.T @ R @ K))
    J = float(np.trace(m.B.T @ P @ m.B))
    if not gradient:
        return J, None
    X = scipy.linalg.solve_continuous_lyapunov(Acl, -(m.B @ m.B.T))
    return J, 2.0 * (R @ K - m.U.T @ P) @ X


def worst_cost(models, K, Q, R, scale: float):
    """Smoothed worst cost ``log(sum exp(SHARPNESS J_j / scale)) / SHARPNESS`` (relative to
    `scale`), the costs J_j / scale and the gradient in K; inf (no gradient) if a model is
    unstable under K."""
    parts = [cost(m, K, Q, R) for m in models]
    J = np.array([p[0] for p in parts]) / scale
    if not np.all(np.isfinite(J)):
        return np.inf, J, None
    top = J.max()
    w = np.exp(SHARPNESS * (J - top))
    f = top + np.log(w.sum()) / SHARPNESS
    w /= w.sum()
    return float(f), J, sum(wi * p[1] for wi, p in zip(w, parts)) / scale


def _descend(models, K, Q, R, scale):
    """Gradient descent with Barzilai-Borwein steps and Armijo backtracking from a gain that
    stabilizes every model; every accepted iterate does too."""
    f, _, g = worst_cost(models, K, Q, R, scale)
    step = 1.0 / max(np.linalg.norm(g), np.finfo(float).tiny)
    for _ in range(DESCENT_STEPS):
        for _ in range(BACKTRACKS):
            K_new = K - step * g
            f_new, _, g_new = worst_cost(models, K_new, Q, R, scale)
            if f_new <= f - ARMIJO * step * np.sum(g * g):
                break
            step *= 0.5
        else:
            break
        s, y = (K_new - K).ravel(), (g_new - g).ravel()
        done = f - f_new <= DESCENT_RTOL * abs(f)
        K, f, g = K_new, f_new, g_new
        if done:
            break
        sy = s @ y
        step = (s @ s) / sy if sy > 0 else 2.0 * step
    return K


def robust_lqr(model, nominal, parameters, *, rounds: int = 3,
               budget: float | None = None) -> RobustLQRDesign:
    """A state feedback robust to `parameters`: multi-model LQR over the worst cases of mu.

    Parameters
    ----------
    model : LinearModel
        Passive linearization at an equilibrium (as for :func:`uncertain_loop`).
    nominal : LQRDesign
        ``tc.lqr(model, ...)``: the starting gain and the weights Q, R.
    parameters : sequence of Uncertainty
        From :func:`string_stiffness` and :func:`point_masses`.
    rounds : int
        Worst cases added (>= 1), each followed by a redesign.
    budget : float, optional
        CPU seconds of each round's :func:`robust_stability` (its default when None).

    Returns
    -------
    RobustLQRDesign

    Raises
    ------
    TypeError
        If `nominal` is not an LQR design (it needs Q, R and a state feedback).
    ValueError
        Bad `rounds`, or as :func:`uncertain_loop` and :func:`robust_stability`.
    """
    if not all(hasattr(nominal, f) for f in ("Q", "R", "K", "controller")):
        raise TypeError("robust_lqr: nominal must be the LQR design to start from "
                        f"(tc.lqr(model)), got {type(nominal).__name__}")
    if not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise ValueError(f"robust_lqr: rounds must be a positive integer (worst cases added), "
                         f"got {rounds!r}")
    t0 = time.process_time()
    ctrl = nominal.controller
    em = elastic_model(model.actuated(ctrl.strings))
    Q = em.T.T @ np.asarray(nominal.Q, dtype=float) @ em.T
    R = np.asarray(nominal.R, dtype=float)
    K = np.asarray(nominal.K, dtype=float) @ em.T
    deltas = [np.zeros(len(uncertain_loop(model, ctrl, parameters).parameters))]
    scale = cost(_models(model, ctrl, parameters, deltas)[0], K, Q, R, False)[0]
    current, margins, rounds_done = ctrl, [], []
    for _ in range(rounds + 1):
        r = robust_stability(uncertain_loop(model, current, parameters), budget=budget)
        margins.append(r.margin)
        rounds_done.append((r, current, K, len(deltas)))
        if len(rounds_done) > rounds:
            break
        deltas.append(SHRINK * r.delta)
        models = _models(model, ctrl, parameters, deltas)
        K = _descend(models, K, Q, R, scale)
        current = dataclasses.replace(ctrl, K=K @ em.left_inverse)
    # a redesign guarantees only the models of its set: a later round can lose margin
    # elsewhere (the ball's second round did), so the gain with the largest margin is kept
    chosen = max(range(len(rounds_done)), key=lambda i: rounds_done[i][0].margin)
    r, current, K, n_models = rounds_done[chosen]
    deltas = deltas[:n_models]
    models = _models(model, ctrl, parameters, deltas)
    _, costs, _ = worst_cost(models, K, Q, R, scale)
    E = np.linalg.eigvals(models[0].A - models[0].U @ K)
    return RobustLQRDesign(
        controller=current, K=current.K, K_elastic=K, E=E[np.lexsort((E.imag, E.real))],
        deltas=np.array(deltas), costs=costs, margins=np.array(margins), chosen=chosen,
        nominal=nominal, nominal_loss=float(np.sqrt(costs[0]) - 1.0), stability=r,
        cpu=time.process_time() - t0)
