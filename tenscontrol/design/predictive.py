"""mpc(): the tension-bounded model predictive controller designed on a linear model.

The design model is the one :func:`tenscontrol.dlqr` uses (the minimal or design-order
realization of ``model.actuated()``, sampled exactly with a zero-order hold); the weights are
the LQR's; the terminal weight is the discrete Riccati solution, so that the MPC is the
discrete LQR wherever no bound is active. The QP and its solver live in
:class:`tenscontrol.control.mpc.PredictiveController`.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from tenscontrol import validation
from tenscontrol.control.controllers import measurement
from tenscontrol.control.mpc import MARGIN_CAP, PredictiveController, require_osqp
from tenscontrol.design.result import MPCDesign
from tenscontrol.design.discrete import dlqr, dlqr_gain, zoh
from tenscontrol.model.selection import Selection

__all__ = ["MAX_HORIZON", "MAX_QP_BYTES", "mpc"]

#: The longest prediction horizon :func:`mpc` accepts [samples]: its condensed QP has
#: horizon x commanded strings variables, dense, and is solved at every sample.
MAX_HORIZON = 1000
#: The most memory the condensed QP of :func:`mpc` may take [bytes], estimated before any
#: is allocated (1 GiB).
MAX_QP_BYTES = 2**30


def _qp_bytes(horizon: int, r: int, nu: int) -> int:
    """Estimated bytes of the condensed QP: the prediction matrices (horizon + 1) x r x
    (horizon nu) and about eight dense (horizon nu)^2 matrices (cost, tension rows, their
    whitening, OSQP's KKT factor)."""
    return 8 * ((horizon + 1) * r * horizon * nu + 8 * (horizon * nu) ** 2)


def check_horizon(model, horizon) -> int:
    """`horizon` as an int in [1, MAX_HORIZON] whose QP fits in MAX_QP_BYTES, with the
    design's size bounded from above by the model's (2 x free coordinates, every string)."""
    horizon = validation.integer("mpc: horizon", horizon, minimum=1, maximum=MAX_HORIZON)
    r = 2 * np.size(getattr(model.structure, "free_coordinates", model.A.shape[0] // 2))
    nu = model.B.shape[1]
    need = _qp_bytes(horizon, r, nu)
    if need > MAX_QP_BYTES:
        fits = next(n for n in range(horizon, 0, -1) if _qp_bytes(n, r, nu) <= MAX_QP_BYTES)
        raise ValueError(f"mpc: horizon = {horizon} samples would make a QP of about "
                         f"{need / 2**30:.3g} GiB ({horizon} x {nu} commands, {r} states), "
                         f"more than {MAX_QP_BYTES / 2**30:g} GiB; use a horizon <= {fits} "
                         "(or a longer period for the same time ahead)")
    return horizon

# intervals per hold at whose ends the bound is imposed on the first move (kind="passive"): a
# quarter period apart. On the T-bar's 40 N doublet at 200 Hz (gamma_min 1 N/m) the least
# applied force density over the run, on a grid of 20 points per period, went from 0.942 N/m
# (the samples only) to 0.963 with these points alone and to 1.0003 with the margin
# (benchmarks/bench_mpc_floor.py has the larger cases): the model's error, not the spacing
# of the points, is what the margin has to cover
_HOLD_POINTS = 4
# the least exact penalty per slack of one gamma_ref in the whitened cost (OSQP's objective
# 1/2 |V|^2 + ...); the controller raises it to three times the last multipliers. The
# T-bar's soft rows' multipliers stay below 0.22, the 3-prism's reach 60: a fixed 1e3 is
# exact on both but left most of the T-bar's QPs at OSQP's iteration cap, a fixed 10 left
# the 3-prism's soft rows violated in 95 % of its samples
_PENALTY = 10.0


def _hold_prediction(A, B, period, delay, points):
    """(W, C), shapes (M+1, r, nw) and (M+1, r, nu): the state at ``t_i + delay + j T / M``
    (j = 0..M; M = points, one point at the hold's start if 0) is ``W_j w_i + C_j u_i``,
    w_i = z_i or [z_i; u_{i-1}] (with delay); exact holds of ``z' = A z + B u``."""
    r, nu = B.shape
    if delay > 0:
        early = zoh(A, B, delay)
    W, C = [], []
    for s in (period * np.arange(points + 1) / points if points else [0.0]):
        held = zoh(A, B, s) if s > 0 else None
        E, Gam = (np.eye(r), np.zeros((r, nu))) if held is None else (held.Phi, held.Gamma0)
        W.append(E if delay == 0 else np.hstack([E @ early.Phi, E @ early.Gamma0]))
        C.append(Gam)
    return np.array(W), np.array(C)


def _time_limit(limit, period, delay) -> float:
    """OSQP's run-time limit [s]: by default the time the command has (the delay, or the
    period without one)."""
    if limit is None:
        return delay if delay > 0 else period
    return validation.real("mpc: time_limit", limit, what="a number of seconds",
                           positive=True, finite=False, expected="a positive number of "
                           "seconds, inf for none, or None for the computation budget")


def _law_gradient(structure, q, strings, basis) -> tuple[np.ndarray, tuple]:
    """The elastic law's gradient on the reduced state, G (nu, r) [N/m per unit z], and the
    law's data (pairs, stiffness, rest length, spring) of the commanded strings."""
    meas = measurement(structure, Selection(nodes=[], strings=list(map(int, strings))), q)
    k = structure.string_stiffness[strings]
    l0 = structure.string_rest_lengths[strings]
    spring = structure.string_is_spring[strings]
    length = meas.lengths_ref
    slope = np.where(spring | (length > l0), k * l0 / length**2, 0.0)   # d gamma / d l
    law = (meas.string_nodes.copy(), k.astype(float), l0.astype(float), spring.astype(bool))
    return slope[:, None] * (meas.C @ basis), law


def mpc(model, period: float, *, horizon: int = 10, gamma_min=0.0, rate_limit=None, Q=None,
        R=None, outputs: Selection | None = None, order=None, effort=1.0, delay: float = 0.0,
        time_limit: float | None = None, margin_cap: float = MARGIN_CAP) -> MPCDesign:
    """A tension-bounded model predictive controller (needs ``tenscontrol[mpc]``: OSQP).

    Keeps the applied force density of every commanded string within ``[gamma_min,
    gamma_max]``: for ``kind="control"`` exactly over the whole run; for ``kind="passive"``
    exactly at the samples (without delay) and, between them, at five points of each hold on
    the design model's prediction, raised by a margin from the law's prediction error over
    the last periods (:mod:`tenscontrol.control.mpc` says what this guarantees on the
    nonlinear plant, and under which assumption).

    Parameters
    ----------
    model : LinearModel
        Linearization at an equilibrium, kind "passive" or "control" (as for :func:`lqr`).
    period : float
        Sample period [s].
    horizon : int
        Prediction horizon N [samples], an integer from 1 to :data:`MAX_HORIZON` (1000)
        whose condensed QP (N x commanded strings variables, dense) is estimated to fit in
        :data:`MAX_QP_BYTES` (1 GiB).
    gamma_min : float or array_like (nu,)
        Least force density of each commanded string [N/m], at most its operating value; the
        largest is ``String.gamma_max`` (unbounded if None).
    rate_limit : float or array_like (nu,), optional
        Largest change of each command [N/m/s]; none by default.
    Q, R, outputs, order, effort
        The weights, outputs, design order and effort of :func:`tenscontrol.lqr` (same
        defaults).
    delay : float
        Computation delay [s], ``0 <= delay < period``: the command computed from the sample
        at t_k acts from ``t_k + delay`` (in the prediction, as in :func:`dlqr`).
    time_limit : float, optional
        OSQP's run-time limit per QP [s] (wall clock); by default the time the command has,
        the delay (or the period without one); ``inf`` for none (runs that do not depend on
        the machine's load).
    margin_cap : float
        The cap of the margin that raises the floor of the first hold's points by the design
        model's observed error, per string in units of its prestress above the floor,
        ``gamma_ref - gamma_min`` (default :data:`tenscontrol.control.mpc.MARGIN_CAP`, 1; 0:
        no margin, the floor held in the design model only). A larger cap keeps the floor
        under larger model errors (the 3-prism's doublet needs 3) but can feed on itself where
        the model's error grows with the commands (the ball's 200 N doublet runs away above 1).

    Returns
    -------
    MPCDesign
        Its ``controller`` is the :class:`PredictiveController`, a
        :class:`~tenscontrol.SampledController` (before issue 30 mpc returned it: its
        attributes are still reached through the design, with a DeprecationWarning); its
        control record's ``sample_info`` has
        per sample OSQP's ``status`` by name ("solved", "solved inaccurate", "maximum
        iterations reached", "run time limit reached": the iterate's first move projected
        onto its bounds was used; "first move infeasible", no first move meets the rate limit
        and the bounds, or any other, e.g. "primal infeasible": the last command was held,
        moved onto its bounds, and ``held_last`` is 1), ``iterations``,
        ``solve_time`` [s], ``soft_active`` (slacks of the soft rows of moves 2..N in use),
        ``penalty`` (the exact penalty used) and the update's ``cpu_time`` [s].

    Raises
    ------
    ImportError
        OSQP is not installed.
    TypeError
        A horizon that is not an integer (2.5, "10", True).
    ValueError
        Bad bounds (gamma_min above an operating force density), horizon (below 1, above
        MAX_HORIZON, or a QP above MAX_QP_BYTES: the message gives the largest that fits),
        period, delay or time limit.
    """
    require_osqp()
    horizon = check_horizon(model, horizon)
    # the rectangle-rule weights: the QP has no cross term between state and command (yet)
    design = dlqr(model, period, delay=delay, Q=Q, R=R, outputs=outputs, order=order,
                  effort=effort, cost="rectangle")
    delay = design.model.delay
    law, cont, zoh = design.controller, design.continuous, design.model
    mr, nu = cont.minimal, law.strings.size
    lo = validation.per_item("mpc: gamma_min", gamma_min, nu, "N/m", items=" (one per string)")
    hi = model.structure.string_gamma_max[law.strings]
    bad = np.flatnonzero((lo > law.gamma_ref) | (lo < 0) & ~model.structure.string_is_spring[
        law.strings])
    if bad.size:
        a = bad[0]
        raise ValueError(f"mpc: gamma_min of string {int(law.strings[a])} must lie in [0, its "
                         f"operating force density {law.gamma_ref[a]:.6g} N/m], got {lo[a]:.6g}")
    rates = None if rate_limit is None else validation.per_item(
        "mpc: rate_limit", rate_limit, nu, "N/m/s", positive=True, items=" (one per string)")
    T = mr.basis
    Qr = T.T @ cont.Q @ T
    Qr = period * 0.5 * (Qr + Qr.T)
    Rd = period * cont.R
    # the terminal weight: the discrete Riccati solution, scaled as dlqr's own solve; with a
    # delay the prediction's state is [z; u_prev], and so are its weights
    if delay > 0:
        Aw, Bw = zoh.augmented()
        Qr = scipy.linalg.block_diag(Qr, np.zeros((nu, nu)))
        _, P = dlqr_gain(Aw, Bw, Qr, Rd, held=nu)
    else:
        Aw, Bw = zoh.Phi, zoh.Gamma0
        _, P = dlqr_gain(Aw, Bw, Qr, Rd)
    if law.kind == "passive":
        G, data = _law_gradient(model.structure, np.asarray(model.q, float), law.strings, T)
        points = _HOLD_POINTS
    else:               # the applied force density gamma_ref + u is constant over a hold
        G, data = np.zeros((nu, T.shape[1])), None
        points = 0
    A, B = np.asarray(mr.sys.A), np.asarray(mr.sys.B)[:, :nu]
    ctrl = PredictiveController(Aw, Bw, mr.left_inverse, Qr, Rd, P, G,
                                law.q_ref, law.strings, law.gamma_ref, law.kind, law.period,
                                lo, hi, horizon, rates, data,
                                _hold_prediction(A, B, period, delay, points), delay=delay,
                                time_limit=_time_limit(time_limit, period, delay),
                                margin_cap=validation.real("mpc: margin_cap", margin_cap,
                                                           what="a number of prestresses",
                                                           low=0.0),
                                penalty=_PENALTY)
    return MPCDesign(ctrl, design, P, Qr, Rd)
