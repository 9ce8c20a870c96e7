"""Tension-bounded model predictive control on the string force densities.

At each sample t_k the controller solves a quadratic program over a horizon of N commands
``U = [u_0; ...; u_{N-1}]`` on the exact zero-order-hold model of the reduced design model
(``z_0 = left_inverse (x_k - x*)``, the left inverse of the minimal realization, as for LQR), with the
computation delay d in it: u_i acts from ``t_i + d`` to ``t_{i+1} + d``, so the prediction runs
on ``w = [z; u_prev]`` when d > 0 (the last command, still held until ``t_k + d``):

    minimize    sum_{i<N} (z_i^T Q z_i + u_i^T R u_i) + w_N^T P w_N + penalty * sum(e)
    subject to  gamma_min <= gamma(t) + u_i <= gamma_max     at the points t of u_i's hold
                |u_i - u_{i-1}| <= rate_limit * period       (optional)
                relaxed by e >= 0 for the moves i >= 1 (soft); the first move's rows hard

with P the discrete Riccati solution of the (delayed) model, so that without active bounds
the first move is the discrete LQR's (:func:`tenscontrol.dlqr` with the same delay).
``gamma(t)`` is what u adds to: ``gamma_ref`` for ``kind="control"``; for ``kind="passive"``
the elastic law, exactly at the sampled state and, after it, that value plus the law's
linearized change along the exact hold of the design model (``G (z(t) - z_0)``), so a string
that shortens within a period counts against its bound.

**What is guaranteed, where.** ``kind="control"``: the applied force density
``gamma_ref + u`` is constant over each hold, so every commanded string is within
``[gamma_min, gamma_max]`` over the whole run, exactly (the first move is projected onto its
bounds; before the first command acts, u = 0). ``kind="passive"``: (1) at each sample
instant (d = 0) exactly, with the nonlinear law at the sampled state; (2) at the M + 1 = 5
evenly spaced points of the first move's hold (both ends included), in the design model,
with the bound raised by a margin: the law's over-prediction over the last period plus its
growth since the period before, times ``max(1, (tau / T)^2)`` at the point ``t_k + tau``
(an error that grows as an unmodeled constant force's), at most the string's prestress above
its floor, ``gamma_ref - gamma_min`` (an error that large says the design model no longer
describes the structure: no guarantee there). On the nonlinear plant the floor
therefore holds over the whole period when the design model's error of the law over the
coming hold is at most that margin (a load, or a nonlinearity, that changes slowly from one
period to the next) and the law between the points stays above them (the points are a
quarter period apart). A step in an unmodeled load is seen one sample late: the hold planned
before it (and, with a delay, the held last command) can dip below. Measured on the T-bar
and the 3-prism under doublets twice those that slacken the LQR, gamma_min 5 N/m
(``benchmarks/bench_mpc_floor.py``): the least applied force density over the whole run,
between the samples, at or above gamma_min without delay (5.000, 5.000 N/m) and within 0.9 %
of it with a half-period delay (4.9996, 4.956: the dip is in the hold planned at t = 0, before
the load's step was seen), where the MPC that bounded the samples only let it fall to 4.819
(T-bar) and to zero, a slack string (3-prism). Known limit: on the ball under its 200 N doublet
(``benchmarks/bench_mpc.py``: 32 strings, gamma_min 1 N/m of 40-100) the model's error grows
with the commands and the margin with it: the loop runs away (peak of node 12: 4.4 m at horizon 3,
5.3 m at horizon 5, against 2.8 and 0.098 m for the MPC that bounded the samples only); a
cap of one prestress would stop it but leaves the 3-prism's floor at 1.1 N/m.

**The solve.** The QP is condensed (U and the slacks) and set up in OSQP at the start of
each run (:meth:`PredictiveController.initial_state`; its KKT matrix factored there, and
again only when OSQP's adaptive rho changes); each sample updates the linear term and the
bounds and warm-starts from the last solution. The variables are whitened (``U = W V`` with
``W^T H W = I``: the cost becomes ``|V|^2``): without that, the strings' self-stress
directions (commands that change no nodal force, costed by R alone) leave OSQP's first-order
iteration at its iteration limit on the ball; of the whitenings, the one that makes the start
rows of the holds lower triangular keeps OSQP's KKT factor smallest. The rows of the moves
after the first are soft, one slack per move and string, with an L1 penalty: exact (the
answer of the hard QP whenever that one is feasible) when the penalty exceeds the soft rows'
multipliers; it is the larger of a floor and three times their largest sum at the last sample.
OSQP runs with a time limit (by default the time the command has: the delay, or the period
without one; wall clock, so a loaded machine hits it sooner) and an iteration cap; a QP
stopped by either uses its iterate's first move projected onto the first move's bounds (the
rate limit's box, then the force densities' at the points of its hold, which win). When no first
move meets both its rate limit and its force-density bounds (checked before OSQP runs, whose
infeasibility certificate can take its whole budget; status "first move infeasible"), or
when OSQP fails (its status by name, e.g. "primal infeasible"), the last command is held,
moved onto the same bounds (the floor wins over the rate limit): ``held_last`` 1 in the
control record. A non-finite sampled state is refused with a ValueError naming the sample (in a
simulation, a ControllerError) rather than commanded as NaN.

OSQP is an optional dependency (``pip install tenscontrol[mpc]``): sparse, warm-started, with
a status per solve, and BSD-licensed with binary wheels.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from tenscontrol.control.mpc_qp import (INFINITY, SLACK_SCALE, condensed, soft_layout,
                                        whitened)
from tenscontrol.control.sampled import SampledController, sampled_table, check_timing
from tenscontrol.model.tables import value_range

__all__ = ["PredictiveController", "require_osqp"]

_EPS = 1e-6             # OSQP's absolute and relative tolerances
# over-relaxation (OSQP's default 1.6): on the ball's recorded QPs (32 strings, horizon 5) it
# cuts the worst sample from 525 to 200 iterations at the same accuracy (benchmarks/bench_mpc.py)
_ALPHA = 1.8
# residuals checked every 10 iterations (OSQP's default 25): the T-bar's QPs converge in 5-10
_CHECK = 10
# rho adapted every 50 iterations: OSQP's default (0) picks the interval from the setup's
# timing, so the iterations (and answers) would depend on the machine's load; 50 is what it
# picked on the T-bar and the ball
_RHO_INTERVAL = 50
# the iteration cap: the ball's worst recorded QP (32 strings, horizon 5) takes 200
# iterations (27 us each) and 2 refactorizations (0.8 ms each), 7 ms CPU; 250 keeps a step
# under 10 ms. A QP stopped here uses its iterate's first move, projected onto its bounds
_MAX_ITER = 250
# OSQP statuses whose iterate is used (its first move projected onto its bounds at the sample)
_USABLE = ("solved", "solved inaccurate", "maximum iterations reached",
           "run time limit reached")
# the status of a sample whose first move was found infeasible before OSQP ran
_INFEASIBLE = "first move infeasible"
_NO_LIMIT = 1e10        # OSQP's time limit when there is none [s] (it must be positive)
# a slack counts as active above this fraction of its string's gamma_ref (OSQP's tolerance,
# 1e-6 in these units, leaves inactive slacks at about 1e-6)
_ACTIVE = 1e-4
_PASSES = 3             # fixed-point passes of the first move's projection
# the penalty's factor over the soft rows' largest multiplier (a slack's group sum) at the
# last sample: on the 3-prism's doublet the sums stay within 60 and change by a few percent
# per period (benchmarks/bench_mpc_floor.py); a larger factor costs OSQP iterations (10: the
# T-bar's rate-limited QPs, median 250 iterations instead of 115 at 3)
_SAFETY = 3.0
#: The default cap of the margin, in units of each string's prestress above its floor
#: (gamma_ref - gamma_min): an error that large says the design model no longer describes the
#: structure. Measured (benchmarks/bench_mpc_floor.py, bench_mpc.py): the 3-prism's doublet
#: needs more than 2 to keep its floor between samples (at 1: least 1.12 N/m against 5; at 3:
#: 5.000), but on the ball's 200 N doublet a cap above 1 lets the margin feed on itself
#: (commands of -3700 N/m, OSQP at its iteration cap, largest displacement 2.7 m in 0.6 s
#: against 0.17 m at 1 and 0.105 m without a margin). The default is the cap that keeps every
#: catalog loop measured stable; ``mpc(margin_cap=3)`` buys the 3-prism's floor.
MARGIN_CAP = 1.0


def require_osqp():
    """The osqp module, or an ImportError that names the extra to install."""
    try:
        import osqp
    except ImportError:
        raise ImportError("model predictive control needs OSQP, an optional dependency: "
                          "pip install 'tenscontrol[mpc]' (or pip install osqp)") from None
    return osqp


def _check_finite(k, t, values: dict):
    """ValueError naming sample k if any of the named arrays has a NaN or an infinity."""
    for name, value in values.items():
        bad = np.flatnonzero(~np.isfinite(value))
        if bad.size:
            raise ValueError(f"PredictiveController: {name} at sample {k} "
                             f"(t = {t:g} s) is not finite (entry {int(bad[0])} is "
                             f"{value[bad[0]]}); the MPC refuses a non-finite state rather "
                             "than command NaN: check the simulation or the estimator that "
                             "feeds it")


class PredictiveController(SampledController):
    """The tension-bounded MPC as a :class:`~tenscontrol.SampledController` (see the module
    docstring for the QP and for what is guaranteed where); built by :func:`tenscontrol.mpc`.

    Parameters
    ----------
    Ad, Bd : ndarray, shape (nw, nw), (nw, nu)
        The exact ZOH model of the reduced design model at `period` on ``w = z``
        (``nw = r``) or, with a computation delay, on ``w = [z; u_prev]`` (``nw = r + nu``).
    left_inverse : ndarray, shape (r, 2nq)
        ``z = left_inverse (x - x*)`` (the attribute was ``L`` before issue 30: deprecated, L
        names the Kalman gain).
    Q, P : ndarray, shape (nw, nw)
        Stage and terminal weights on w; R : ndarray (nu, nu).
    G : ndarray, shape (nu, r)
        Gradient of the commanded strings' elastic law on z (zero for ``kind="control"``).
    q_ref, strings, gamma_ref, kind, period
        As for every sampled controller.
    gamma_min, gamma_max : ndarray, shape (nu,)
        Force-density bounds [N/m].
    horizon : int
    rate_limit : ndarray (nu,) or None
        [N/m/s].
    law : tuple or None
        (pairs (nu, 2), stiffness, rest_length, spring) of the commanded strings, for the
        exact elastic law at the sample (``kind="passive"``).
    hold : tuple of ndarray
        (W, C), shapes (M+1, r, nw) and (M+1, r, nu): the design model's state at the points
        ``t_i + tau_j`` of each hold, ``W_j w_i + C_j u_i`` (module docstring).
    delay : float
        Computation delay [s], ``0 <= delay < period``: u_k acts from ``t_k + delay``.
    time_limit : float
        OSQP's run-time limit per QP [s] (``inf``: none).
    penalty : float
        The least exact penalty per unit slack (in the whitened cost's units, a slack of one
        gamma_ref); at each sample the penalty is the larger of it and three times the soft
        rows' largest multiplier sum at the last sample (module docstring).
    """

    def __init__(self, Ad, Bd, left_inverse, Q, R, P, G, q_ref, strings, gamma_ref, kind, period,
                 gamma_min, gamma_max, horizon, rate_limit, law, hold, *, delay=0.0,
                 time_limit=np.inf, penalty=10.0, margin_cap=MARGIN_CAP):
        require_osqp()
        self.period, self.delay = check_timing(period, delay, "PredictiveController")
        self.strings, self.gamma_ref, self.kind = strings, gamma_ref, kind
        self.q_ref, self.left_inverse, self.law = q_ref, left_inverse, law
        self.gamma_min, self.gamma_max = gamma_min, np.minimum(gamma_max, INFINITY)
        self.horizon, self.rate_limit = horizon, rate_limit
        self.time_limit, self.penalty = float(time_limit), float(penalty)
        self.margin_cap = float(margin_cap)
        nu, N = strings.size, horizon
        self.n_states = nu                         # the last command (rate limit, delay)
        qp = condensed(Ad, Bd, Q, R, P, G, hold[0], hold[1], N)
        self._condensed, self._shift, self.hold_points = qp, qp.shift, len(hold[0])
        self._qp = self._problem(qp, N, nu)
        self._Aw, self._Bw, self._G = Ad, Bd, G
        self._growth = self._margin_growth(qp.move.size, nu)
        self._predicted = self._error = None
        # the first move's rows (all points of its hold) as functions of u_0 alone:
        # (I + coupling_j) u_0, the coupling G C_j its own effect on the law within the hold
        self._first = np.flatnonzero(qp.move == 0)
        self._coupling = qp.rows[self._first, :nu] - np.tile(np.eye(nu), (self._first.size
                                                                          // nu, 1))
        self._solver = self._setup()
        self._info = {}

    @property
    def L(self) -> np.ndarray:
        """Deprecated spelling of :attr:`left_inverse` (L names the Kalman gain)."""
        warnings.warn("PredictiveController.L is deprecated: the left inverse is "
                      "PredictiveController.left_inverse (L names the Kalman gain)",
                      DeprecationWarning, stacklevel=2)
        return self.left_inverse

    def _problem(self, qp, N: int, nu: int) -> dict:
        """OSQP's problem (P, q, A, l, u) on ``[V; e]`` for the condensed QP `qp`: whitened,
        scaled, the soft rows with their slacks (bounds open until the first update)."""
        import scipy.sparse as sp
        # the cost scaled so that a command of one gamma_ref costs about 1: OSQP's absolute
        # tolerance is then a fixed fraction of the prestress, not of the cost's units
        unit = np.tile(np.where(self.gamma_ref > 0, self.gamma_ref, 1.0), N)
        scale = 1.0 / np.mean(np.diag(qp.H) * unit**2)
        rate = self.rate_limit is not None
        self._unwhiten, A = whitened(scale * qp.H, qp.rows, N, nu, rate)
        self._F = self._unwhiten.T @ (scale * qp.F)
        # each constraint row in units of its string's gamma_ref, as the cost: OSQP's absolute
        # tolerance is then the same fraction of the prestress at every length scale
        n_rows = A.shape[0]
        self._row_unit = np.tile(unit[:nu], n_rows // nu)
        A = A / self._row_unit[:, None]
        move = np.concatenate([qp.move, np.repeat(np.arange(N), nu) if rate else
                               np.zeros(0, int)])
        upper = np.tile(self.gamma_max < INFINITY, n_rows // nu)
        upper[qp.move.size:] = True                # rate rows: both sides
        self._soft = soft_layout(move, np.tile(np.arange(nu), n_rows // nu), upper)
        n, ns = N * nu, self._soft.n_slack
        l, u = self._soft.bounds(-np.full(n_rows, INFINITY), np.full(n_rows, INFINITY))
        return dict(P=sp.block_diag([sp.identity(n), sp.csc_matrix((ns, ns))], "csc"),
                    q=np.zeros(n + ns), A=sp.csc_matrix(self._soft.matrix(A)), l=l, u=u)

    def __repr__(self) -> str:
        return (f"PredictiveController(kind={self.kind!r}, commanded_strings={self.strings.size}"
                f", horizon={self.horizon}, period={self.period:g} s, delay={self.delay:g} s, "
                f"rate_limit={'none' if self.rate_limit is None else 'yes'})")

    def summary(self) -> str:
        """The horizon, the bounds, the rate limit and the solver's limits as a table."""
        gmax = np.where(self.gamma_max >= INFINITY, np.inf, self.gamma_max)
        rate = ("none" if self.rate_limit is None else
                value_range(self.rate_limit, "N/m/s"))
        limit = "none" if self.time_limit >= _NO_LIMIT else f"{self.time_limit:g} s"
        return sampled_table(self, ("horizon", f"{self.horizon} samples"),
                             ("design states", f"{self.left_inverse.shape[0]}"),
                             ("gamma_min", value_range(self.gamma_min, "N/m")),
                             ("gamma_max", value_range(gmax, "N/m")),
                             ("rate limit", rate),
                             ("bound checked at", f"{self.hold_points} point"
                                                 f"{'s' if self.hold_points > 1 else ''} "
                                                 "per hold"),
                             ("soft rows", f"moves 2..{self.horizon}, penalty "
                                           f"{self.penalty:g}"),
                             ("QP time limit", limit),
                             law="QP over the horizon, bounded force densities")

    def elastic_law(self, q: np.ndarray) -> np.ndarray:
        """What u adds to at positions q (3n,): the elastic law's force densities (passive)
        or gamma_ref (control) [N/m], shape (nu,)."""
        if self.law is None:
            return self.gamma_ref
        pairs, k, l0, spring = self.law
        N = q.reshape(-1, 3)
        length = np.linalg.norm(N[pairs[:, 1]] - N[pairs[:, 0]], axis=1)
        law = k * (1.0 - l0 / length)
        return np.where(spring | (length > l0), law, 0.0)

    def _margin_growth(self, n_tension: int, nu: int) -> np.ndarray:
        """(n_tension,) the margin's factor on each tension row: at the first move's points
        ``max(1, (tau / T)^2)`` (tau from the sample: an error that grows as an unmodeled
        constant force's, beyond the period it was measured over), 0 at the sample itself
        (no delay); 1 on the later moves."""
        T, points = self.period, self.hold_points - 1
        factor = np.ones(n_tension)
        tau = self.delay + T * np.arange(points + 1) / max(points, 1)
        grow = np.maximum(1.0, (tau / T) ** 2)
        factor[:nu] = grow[0] if self.delay > 0 else 0.0
        factor[n_tension - points * nu:] = np.repeat(grow[1:], nu)
        return factor

    def margin(self, base: np.ndarray) -> np.ndarray:
        """The tightening (nu,) [N/m] of the predicting rows at this sample: how much the
        design model over-predicted each string's elastic law `base` (nu,) over the last
        period, plus how much more than over the period before (zero at the first sample and
        where it under-predicted), at most `margin_cap` times the string's prestress above its
        floor."""
        if self._predicted is None or self.law is None:
            return np.zeros_like(base)
        error = self._predicted - base
        trend = 0.0 if self._error is None else np.maximum(error - self._error, 0.0)
        cap = self.margin_cap * np.maximum(self.gamma_ref - self.gamma_min, 0.0)
        return np.minimum(np.maximum(error + trend, 0.0), cap)

    def bounds(self, q: np.ndarray, w0: np.ndarray, u_prev: np.ndarray):
        """(lower, upper) [N/m] of the QP's constraint rows (tension, then rate) at the
        sample: q (3n,) the sampled positions, w0 the prediction's start, u_prev (nu,) the
        last command."""
        base = self.elastic_law(q)
        shift = self._shift @ w0
        reps = self._shift.shape[0] // base.size
        tighten = self._growth * np.tile(self.margin(base), reps)
        lo = np.tile(self.gamma_min - base, reps) - shift + tighten
        hi = np.tile(self.gamma_max - base, reps) - shift
        if self.rate_limit is not None:
            N = self.horizon
            step = np.tile(self.rate_limit * self.period, N)
            first = np.concatenate([u_prev, np.zeros((N - 1) * u_prev.size)])
            lo, hi = np.concatenate([lo, first - step]), np.concatenate([hi, first + step])
        return lo, hi

    def _in_units(self, bound: np.ndarray) -> np.ndarray:
        """Constraint bounds [N/m] in the rows' units (OSQP's infinity kept)."""
        return np.where(np.abs(bound) >= INFINITY, bound, bound / self._row_unit)

    def _setup(self):
        """A new OSQP solver of the QP (factors its KKT matrix)."""
        solver = require_osqp().OSQP()
        solver.setup(**self._qp, verbose=False, warm_starting=True, polishing=False,
                     eps_abs=_EPS, eps_rel=_EPS, max_iter=_MAX_ITER, alpha=_ALPHA,
                     check_termination=_CHECK, adaptive_rho_interval=_RHO_INTERVAL,
                     time_limit=min(self.time_limit, _NO_LIMIT))
        # the multipliers of the slacks' rows e >= 0 are the penalty while the soft rows hold
        # (nearly always): started there, not at 0, OSQP need not climb to them (from 0 it
        # stopped at the iteration cap on the T-bar's first QPs)
        self._x = np.zeros(self._qp["q"].size)
        self._y = np.zeros(self._qp["l"].size)
        self._y[self._y.size - self._soft.n_slack:] = -self.penalty / SLACK_SCALE
        self._rho = self._used = self.penalty
        return solver

    def initial_state(self) -> np.ndarray:
        """Zero (no last command); the solver is set up anew, so that a run (a simulation,
        :func:`tenscontrol.verify`'s linear prediction) does not depend on the runs before it
        (OSQP keeps its last solution and its adapted step size rho)."""
        self._solver = self._setup()
        self._predicted = self._error = None
        x0 = np.zeros(self.strings.size)
        # one update at the operating point: its answer is zero, as is OSQP's cold start (the
        # solver's state stays the same), and it takes the first calls' costs (allocations,
        # cold caches: 0.3-0.5 ms on the T-bar) out of the first sample's time
        self.update(0, 0.0, self.q_ref, np.zeros_like(self.q_ref), x0)
        self._info, self._predicted, self._error = {}, None, None
        return x0

    def update(self, k, t, q, qd, xk):
        start = time.process_time()
        _check_finite(k, t, {"positions q": q, "velocities qd": qd, "last command": xk})
        z0 = self.left_inverse @ np.concatenate([q - self.q_ref, qd])
        w0 = z0 if self.delay == 0 else np.concatenate([z0, xk])
        lo, hi = self.bounds(q, w0, xk)
        penalty, n = self._rho, self._unwhiten.shape[1]
        if self._first_infeasible(lo, hi):       # OSQP may take its whole budget to say so
            status, iterations, run_time, x = _INFEASIBLE, 0, 0.0, None
        else:
            status, iterations, run_time, x = self._solve(w0, lo, hi, penalty)
        u = self._first_move(None if x is None else x[:n], xk, lo, hi)
        slack = np.zeros(0) if x is None else x[n:] / SLACK_SCALE
        if self.law is not None:          # the law the design model predicts for the next sample
            r, base = self._G.shape[1], self.elastic_law(q)
            z1 = (self._Aw @ w0 + self._Bw @ u)[:r]
            self._error = None if self._predicted is None else self._predicted - base
            self._predicted = base + self._G @ (z1 - z0)
        self._info = {"status": status, "iterations": iterations, "solve_time": run_time,
                      "soft_active": int(np.count_nonzero(slack > _ACTIVE)),
                      "held_last": int(x is None), "penalty": penalty,
                      "cpu_time": time.process_time() - start}
        return u, u

    def _first_infeasible(self, lo, hi) -> bool:
        """Whether no first move meets its rate limit and its force-density bounds at every
        point of its hold (the coupling between the strings, 1e-3 at most, left out)."""
        if self.rate_limit is None and np.all(self.gamma_max >= INFINITY):
            return False
        nu, nt = self.strings.size, self._shift.shape[0]
        floor = lo[self._first].reshape(-1, nu).max(axis=0)
        ceiling = hi[self._first].reshape(-1, nu).min(axis=0)
        if self.rate_limit is not None:
            floor = np.maximum(floor, lo[nt:nt + nu])
            ceiling = np.minimum(ceiling, hi[nt:nt + nu])
        return bool(np.any(floor > ceiling))

    def _solve(self, w0, lo, hi, penalty):
        """(status, iterations, run time [s], x or None) of OSQP's QP at the sample; x is
        OSQP's iterate [V; SLACK_SCALE e] when its status is one whose iterate is used."""
        ns = self._soft.n_slack
        low, high = self._soft.bounds(self._in_units(lo), self._in_units(hi))
        self._solver.update(q=np.concatenate([self._F @ w0, np.full(ns, penalty / SLACK_SCALE)]),
                            l=low, u=high)
        self._y[self._y.size - ns:] -= (penalty - self._used) / SLACK_SCALE   # (see _setup)
        self._solver.warm_start(x=self._x, y=self._y)
        res = self._solver.solve(raise_error=False)
        status = str(res.info.status)
        usable = status in _USABLE and np.all(np.isfinite(res.x)) and np.all(np.isfinite(res.y))
        if usable:
            self._x, self._y, self._used = res.x, res.y, penalty
            # exact while the multipliers grow less than threefold in one period
            active = res.x[self._unwhiten.shape[1]:] / SLACK_SCALE > _ACTIVE
            self._rho = max(self.penalty, _SAFETY * self._soft.multiplier(res.y, active))
        return status, int(res.info.iter), float(res.info.run_time), res.x if usable else None

    def _first_move(self, x, u_prev, lo, hi):
        """The first move of OSQP's iterate `x` (the last command if None: the QP failed),
        projected onto its bounds: the rate limit's box, then the force densities' at the
        points of its hold (which win where the two do not meet)."""
        nu, nt = self.strings.size, self._shift.shape[0]
        u = u_prev.copy() if x is None else self._unwhiten[:nu] @ x
        if self.rate_limit is not None:
            u = np.clip(u, lo[nt:nt + nu], hi[nt:nt + nu])
        # a fixed point of the per-string boxes at every point (the coupling, a string's law
        # answering its own command within one period, is small: 1e-3 on the T-bar at 5 ms);
        # it removes OSQP's tolerance-sized violations (about 1e-3 of gamma_min on the ball)
        # and those of an iterate stopped early
        low, high = lo[self._first], hi[self._first]
        for _ in range(_PASSES):
            c = self._coupling @ u
            u = np.maximum(np.minimum(u, (high - c).reshape(-1, nu).min(axis=0)),
                           (low - c).reshape(-1, nu).max(axis=0))
        # the start of the hold has no coupling: exact there
        return np.clip(u, lo[:nu], hi[:nu])

    def sample_info(self) -> dict:
        """The last QP's figures: OSQP's ``status`` by name ("solved", "solved inaccurate",
        "maximum iterations reached", "run time limit reached": the iterate's first move
        projected onto its bounds was used; "first move infeasible" (found before OSQP ran)
        or any other, e.g. "primal infeasible": the last command held, projected onto the
        first move's bounds, and ``held_last`` 1),
        ``iterations``, OSQP's ``solve_time`` [s], ``soft_active`` (how many slacks of the
        soft rows of moves 2..N were active, above 1e-4 gamma_ref) and the update's
        ``cpu_time`` [s]."""
        return dict(self._info)
