"""Tension-bounded model predictive control on the string force densities.

At each sample the controller solves a quadratic program over a horizon of N commands
``U = [u_0; ...; u_{N-1}]`` on the exact zero-order-hold model of the reduced design model,
``z_{i+1} = Ad z_i + Bd u_i`` (``z_0 = left_inverse (x_k - x*)``, the left inverse of the minimal
realization, as for LQR):

    minimize    sum_{i<N} (z_i^T Q z_i + u_i^T R u_i) + z_N^T P z_N + penalty * sum(e)
    subject to  gamma_min - e_i <= gamma_i + u_i <= gamma_max + e_i   (every commanded string)
                |u_i - u_{i-1}| <= rate_limit * period + e'_i        (optional)
                e, e' >= 0, e_0 = e'_0 = 0 (the first move's rows hard)

with P the discrete Riccati solution (so without active bounds the first move is the discrete
LQR's). ``gamma_i`` is what u adds to: ``gamma_ref`` for ``kind="control"``; for
``kind="passive"`` the elastic law, exactly at the sampled state for i = 0 and linearized
along the prediction after (``gamma_0 + G (z_i - z_0)``, G its gradient), so a stretched
string's own tension counts against its bounds. With a computation delay d (``mpc(delay=...)``,
default 0) u_i acts from ``t_i + d`` to ``t_{i+1} + d`` and the last command until ``t_k + d``:
the prediction runs on ``w = [z; u_prev]`` (the model of :func:`tenscontrol.dlqr` with the same
delay, whose Riccati solution is P), each row bounds the law where its move starts acting,
``z(t_i + d) = Phi(d) z_i + Gamma(d) u_{i-1}``, and the first move's row is then a prediction
too (the law's change over d, with its first-order term exact from the sampled velocities). The
rows of the moves after the first are soft, one slack per row, with an exact L1 penalty (1000
per gamma_ref of violation, in cost units where a command of one gamma_ref costs about 1; 28
times the largest multiplier measured on the hard QP), so the answer is the hard QP's whenever
that one is feasible, and a later move that cannot meet its bounds no longer makes the whole QP
infeasible (``soft_active`` in the control record counts the slacks in use). The QP is
condensed (U only) and set up in OSQP at the start of each run
(:meth:`PredictiveController.initial_state`; its KKT matrix factored there, and again only when
OSQP's adaptive rho changes); each sample updates the linear term and the bounds and
warm-starts from the last solution. The variables are whitened (``U = W V`` with ``W^T H W =
I``: the cost becomes ``|V|^2``): without that, the strings' self-stress directions (commands
that change no nodal force, costed by R alone) leave OSQP's first-order iteration at its
iteration limit on the ball. Of the whitenings the one that makes the constraint rows lower
triangular keeps OSQP's KKT factor smallest. A QP stopped at the iteration cap or at the
optional time limit (``mpc(time_limit=...)``, wall clock, at most the period) uses the first
move of its iterate projected onto that move's bounds, so no sample breaks a hard bound. A QP
that fails (OSQP's status by name in :data:`STATUS_NAMES`, e.g. "primal infeasible"), or whose
first move cannot meet both the rate limit and the force-density bounds ("first move
infeasible", found before OSQP runs), holds the last command projected onto the first move's
bounds (the floor wins over the rate limit; ``held_last`` 1 in the control record). A
non-finite sampled state (or last command) is refused with a ValueError naming the sample,
never commanded as NaN.

Inside the first move's hold (``kind="passive"``): the applied force density of string s
at ``t_k + d + tau_j`` (``tau_j = j T / M``, j = 1..M, M = ``HOLD_POINTS`` = 4 of
:mod:`tenscontrol.design.predictive`, the hold's end included) is bounded too, predicted on the
exact hold of the continuous design model (without delay ``gamma_0 + G (Phi(tau_j) - I) z_0 +
(I + G Gamma(tau_j)) u_0``),
with the law's first-order change taken from the sampled velocities exactly (``law_rate``)
rather than from the linear model (which misses the geometry's change at large motion), and its
second-order change corrected from the plant: the nonlinear accelerations at the sample
(:meth:`PredictiveController.accelerations`, the structure's own, with the command acting
and the operating loads) less the design model's, held as a forcing over the hold and
answered by the design model's exact hold (a fast mode swings, boundedly, rather than
growing with tau^2 / 2 as a Taylor term would: the Taylor form kept the 3-prism's floor as
well but took the ball's peak from 0.105 to 0.166 m), plus the law's own curvature in the
string's velocity. On the 3-prism at 0.1 m the design model alone put the law 8-18 N/m too
high within 3/4 of a period, and a string went slack there
(``benchmarks/bench_mpc_floor_gap.py``; :meth:`PredictiveController.hold_prediction` gives
the prediction). A
string whose own law undoes most of its command within the period (``authority``, the least
share ``1 + (G Gamma(tau_j))_ss`` of its command left in it, below 0.5: the period is too
long for it) gets no bound inside the hold: bounding it would take commands without limit
(on the ball's fastest strings 2 % of a command is left at the period's end; the loop ran
away with those rows). ``held_over_period`` says which strings are bounded inside the hold.

What is guaranteed, where. ``kind="control"``: the applied force density ``gamma_ref + u``
is constant over each hold, so every commanded string is within its bounds over the whole
run, exactly (the first move is projected onto its bounds; before the first command, u = 0).
``kind="passive"``: (1) at each sample instant (without delay), exactly, with the
nonlinear law at the sampled state; with a delay d, where the command starts acting
(``t_k + d``) in the prediction, and the interval from ``t_k`` to ``t_k + d`` by the
previous sample's rows; (2) inside each hold, for the strings of ``held_over_period``, at the M
points in the prediction (to OSQP's tolerance, and by a projection of the first move;
4 points give the same least value as 8 on the T-bar and the 3-prism): on the nonlinear
plant the floor there holds up to the prediction's error over one period, which is the
unknown load's share (the MPC has no model of the disturbance: the doublet's onset and its
held value; a margin fed by the law's observed prediction error ran the ball away, peak
4.5 m) and the law's change beyond second order. With ``mpc(expected_load=F)`` the rows'
floor there (and at ``t_k + d``) is raised by ``load_margin``, the most a constant unknown
nodal force of 2-norm at most F moves each string's law, to first order
(:mod:`tenscontrol.design.predictive` derives it): the floor then holds at those points for
every such load, to first order in its motion; (3) between samples, the strings not in
``held_over_period``: nothing (the ball's 24 fastest strings go slack under its 200 N
doublet). Measured (``python benchmarks/bench_mpc.py floor``, gamma_min 5 N/m, 20 points per
period and the end of every hold): the T-bar under twice its LQR's slackening doublet keeps
4.9984 N/m (the doublet's share, 1.3e-3 N/m); the 3-prism 2.4273 N/m (0 before the
curvature correction: a string went slack), below the floor 0.076 s of 2.5 s, every hold
below it explained by the doublet to 0.26 N/m (``benchmarks/bench_mpc_floor_gap.py``); with
the doublet's amplitude as ``expected_load`` 5.0000 N/m (5.6334 with a 2.5 ms delay).

OSQP is an optional dependency
(``pip install tenscontrol[mpc]``): sparse, warm-started, with a status per solve, and
BSD-licensed with binary wheels.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from tenscontrol import validation
from tenscontrol.control.mpc_qp import (INFINITY, PENALTY, SLACK_SCALE, condensed, hold_rows,
                                        soft_rows, whitened)
from tenscontrol.control.sampled import SampledController, sampled_table, check_timing
from tenscontrol.model.tables import value_range

__all__ = ["STATUS_NAMES", "PredictiveController", "require_osqp", "status_counts"]

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
# under 10 ms. A QP stopped here (status 7) uses its iterate's first move, projected onto
# its bounds
_MAX_ITER = 250
# the first move's projection onto its rows inside the hold is a fixed-point iteration that
# contracts by the bounded strings' coupling, max_j ||(G Gamma_j)_HH||_inf: 0 on the T-bar,
# 0.55 on the 3-prism, 0.71 on the ball's 8 bounded strings (5 ms); it stops when a pass
# moves no command by more than _PROJECTION_TOL of the largest gamma_ref (OSQP's tolerance
# is 1e-6 of it), or after _MAX_PASSES (0.71^80 = 1e-12)
_PROJECTION_TOL = 1e-9
_MAX_PASSES = 80
# the least share of a string's own command that must stay in its applied force density
# through the hold (``1 + (G Gamma_j)_ii``) for the floor to be bounded inside the hold: on
# the ball (32 strings, 5 ms) some strings keep 2 % of their command at the period's end (the
# law undoes the rest), and bounding them there asks for commands of 1e6 N/m and the loop
# runs away (peak 2.7 m against 0.105 m); the T-bar's and the 3-prism's strings keep 72 % or
# more. Below this share the period is too long for the string: its floor holds at the
# samples only
_MIN_AUTHORITY = 0.5
# the unguarded strings named in the summary (the ball has 24)
_LISTED = 6
# a slack counts as active above this, in units of its string's gamma_ref (OSQP's
# tolerance, 1e-6 in these units, leaves inactive slacks near 1e-6)
_ACTIVE = 1e-4
#: OSQP's statuses (``osqp.SolverStatus``, OSQP's ``status_val``) by name, and this module's
#: own: ``"first move infeasible"`` (no first move meets its bounds; found before OSQP runs,
#: whose infeasibility certificate can take its whole iteration budget). The control record
#: keeps the code per sample (its ``sample_info`` holds numbers); :func:`status_counts` names
#: them.
STATUS_NAMES = {1: "solved", 2: "solved inaccurate", 3: "primal infeasible",
                4: "primal infeasible inaccurate", 5: "dual infeasible",
                6: "dual infeasible inaccurate", 7: "maximum iterations reached",
                8: "run time limit reached", 9: "problem non convex", 10: "interrupted",
                11: "unsolved", -1: "first move infeasible"}
_CODES = {name: code for code, name in STATUS_NAMES.items()}
# the statuses whose iterate is used (its first move projected onto its bounds): a QP stopped
# by the iteration cap or the time limit still has a usable, if suboptimal, iterate
_USABLE = ("solved", "solved inaccurate", "maximum iterations reached",
           "run time limit reached")


def require_osqp():
    """The osqp module, or an ImportError that names the extra to install."""
    try:
        import osqp
    except ImportError:
        raise ImportError("model predictive control needs OSQP, an optional dependency: "
                          "pip install 'tenscontrol[mpc]' (or pip install osqp)") from None
    return osqp


def status_counts(codes) -> dict:
    """How many samples ended in each status: ``{name: count}`` for the ``status`` codes
    (ns,) of a control record's ``sample_info`` (names from :data:`STATUS_NAMES`)."""
    values, counts = np.unique(np.asarray(codes, dtype=int), return_counts=True)
    return {STATUS_NAMES.get(int(v), f"status {int(v)}"): int(n) for v, n in zip(values, counts)}


def _check_finite(k: int, t: float, values: dict) -> None:
    """ValueError naming sample k if any of the named arrays has a NaN or an infinity."""
    for name, value in values.items():
        bad = np.flatnonzero(~np.isfinite(value))
        if bad.size:
            raise ValueError(f"PredictiveController: {name} at sample {k} (t = {t:g} s) is not "
                             f"finite (entry {int(bad[0])} is {value[bad[0]]}); the MPC refuses "
                             "a non-finite state rather than command NaN: check the simulation "
                             "or the estimator that feeds it")


def _check_time_limit(time_limit, period: float):
    """`time_limit` [s] as a float in (0, period], or None (no limit)."""
    if time_limit is None:
        return None
    limit = validation.real("mpc: time_limit", time_limit, what="a number of seconds",
                            positive=True, expected="a positive number of seconds or None")
    if limit > period:
        raise ValueError(f"mpc: time_limit must be at most the period {period:g} s (the "
                         f"command is due at the next sample), got {limit:g} s")
    return limit


class PredictiveController(SampledController):
    """The tension-bounded MPC as a :class:`~tenscontrol.SampledController` (see the module
    docstring); built by :func:`tenscontrol.mpc`.

    Parameters
    ----------
    Ad, Bd : ndarray, shape (nw, nw), (nw, nu)
        ZOH model of the reduced design model at `period` on ``w = z`` (nw = r) or, with a
        computation delay, on ``w = [z; u_prev]`` (nw = r + nu).
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
    time_limit : float or None
        OSQP's run-time limit per QP [s] (wall clock), in (0, period]; None: none (the
        iteration cap alone bounds the work, and the commands do not depend on the machine).
    hold : sequence of (tau, Phi, Gamma)
        The points tau_j [s] inside a hold and the exact hold of the continuous design model
        over them, (r, r) and (r, nu) (``kind="passive"``).
    rate_gradient : ndarray, shape (nu, r), or None
        The law's rate on z in the design model, ``G A`` [N/m/s per unit z]
        (``kind="passive"``).
    delay : float
        Computation delay [s], ``0 <= delay < period``: u_k acts from ``t_k + delay``.
    start : ndarray, shape (r, nw), or None
        ``z(t_i + delay) = start w_i`` (``[Phi(delay), Gamma(delay)]``; None without delay).
    plant : tuple or None
        (``accelerations(q, qd, f) -> qdd`` (3n,) of the nonlinear plant at loads f (3n,) [N],
        the operating loads (3n,) [N], the design model's accelerations on ``[z; u]`` (3n, r +
        nu), the law's response at the first hold's start and its points to an acceleration
        held from the sample (M + 1, nu, 3n)): the curvature correction inside the hold
        (``kind="passive"``; None: none).
    margin : ndarray, shape (M + 1, nu), or None
        The floor's raise [N/m] for an unknown load within ``mpc(expected_load=...)`` at the
        first hold's start (``t_k + delay``; zero without delay) and at its M points
        (``kind="passive"``; None: none).

    Attributes
    ----------
    hold_points : int
        The points inside the first hold at which the floor is bounded (0 for
        ``kind="control"``).
    authority : ndarray, shape (nu,)
        The least share of each string's own command left in its applied force density
        inside the hold, ``min_j (1 + G Gamma(tau_j))_ss`` (1 for ``kind="control"``).
    held_over_period : ndarray of bool, shape (nu,)
        The strings bounded inside the hold (authority at least 0.5).
    load_margin : ndarray, shape (M + 1, nu)
        What the floor is raised by [N/m] at the first hold's start and its M points for the
        unknown load (zero without ``expected_load``; empty (0, nu) for ``kind="control"``).
    margin_unmet : ndarray of bool, shape (nu,)
        The strings bounded inside the hold whose ``gamma_min`` plus largest margin exceeds
        ``gamma_max``: no command meets their raised rows (named in :meth:`summary`).
    """

    def __init__(self, Ad, Bd, left_inverse, Q, R, P, G, q_ref, strings, gamma_ref, kind, period,
                 gamma_min, gamma_max, horizon, rate_limit, law, time_limit=None, hold=(),
                 rate_gradient=None, delay=0.0, start=None, plant=None, margin=None):
        require_osqp()
        self.period, self.delay = check_timing(period, delay, "PredictiveController")
        self.strings, self.gamma_ref, self.kind = strings, gamma_ref, kind
        self.q_ref, self.left_inverse, self.law = q_ref, left_inverse, law
        self.time_limit = _check_time_limit(time_limit, self.period)
        self.gamma_min, self.gamma_max = gamma_min, np.minimum(gamma_max, INFINITY)
        self.horizon, self.rate_limit = horizon, rate_limit
        nu, N = strings.size, horizon
        self.n_states = nu              # the last command (the rate limit, the delay's hold)
        start = np.eye(G.shape[1]) if start is None else start
        H, F, T, shift = condensed(Ad, Bd, Q, R, P, G, start, N)
        # the first move's rows inside its hold (none for kind="control": there the applied
        # force density is constant over the hold, and the sample's row covers it)
        extra, hold_shift = hold_rows(G, hold if law is not None else (), start, N)
        self._shift = np.vstack([shift, hold_shift])
        self.hold_points = len(hold) if law is not None else 0
        self._n_tension = self._shift.shape[0]
        # the hold's points as times from the sample
        self._taus = self.delay + np.array([h[0] for h in hold[:self.hold_points]])
        self._rate_gradient = rate_gradient
        # (accelerations(q, qd, f) -> qdd, operating loads f*, the design model's law
        # acceleration on z and on the acting command, G A A and G A B)
        self._plant = plant
        # u_0's effect on its own rows inside the hold, G Gamma_j (for the projection)
        self._coupling = extra[:, :nu] - np.tile(np.eye(nu), (self.hold_points, 1))
        # the share of a string's own command left in its applied force density at the
        # worst point of the hold, min_j (1 + G Gamma_j)_ii: where its elastic law undoes
        # most of the command within the period the floor over the hold is not kept (see
        # _MIN_AUTHORITY)
        own = 1.0 + np.array([np.diag(c) for c in self._coupling.reshape(-1, nu, nu)])
        self.authority = own.min(axis=0) if self.hold_points else np.ones(nu)
        self.held_over_period = self.authority >= _MIN_AUTHORITY
        rows = self.hold_points + 1 if self.hold_points else 0
        self.load_margin = (np.zeros((rows, nu)) if margin is None or not self.hold_points
                            else np.array(margin, dtype=float).reshape(rows, nu))
        # the strings bounded inside the hold whose floor plus margin lies above gamma_max:
        # no command meets those rows, the QP answers with its first-move projection (the
        # sample's bounds win) or holds the last command
        self.margin_unmet = (self.held_over_period & (
            self.gamma_min + self.load_margin.max(axis=0, initial=0.0) > self.gamma_max))
        self._qp = self._problem(H, F, T, extra)
        self._solver = self._setup()
        self._info = {}

    def _problem(self, H, F, T, extra) -> dict:
        """OSQP's problem (P, q, A, l, u) on ``[V; slacks]`` for the condensed QP (cost H, F;
        rows T at the holds' starts, `extra` inside the first hold): whitened, scaled, the
        rows that can bound kept, the later moves' rows soft (bounds open until the first
        update)."""
        import scipy.sparse as sp
        nu, N = self.strings.size, self.horizon
        # the cost scaled so that a command of one gamma_ref costs about 1: OSQP's absolute
        # tolerance is then a fixed fraction of the prestress, not of the cost's units
        unit = np.tile(np.where(self.gamma_ref > 0, self.gamma_ref, 1.0), N)
        scale = 1.0 / np.mean(np.diag(H) * unit**2)
        self._unwhiten, A = whitened(scale * H, T, extra, N, nu, self.rate_limit is not None)
        self._F = self._unwhiten.T @ (scale * F)
        # each constraint row in units of its string's gamma_ref, as the cost: OSQP's absolute
        # tolerance is then the same fraction of the prestress at every length scale (a row
        # scaling keeps A lower triangular)
        self._row_unit = np.tile(unit[:nu], A.shape[0] // nu)
        A = A / self._row_unit[:, None]
        # OSQP gets the rows that can bound: not those inside the hold of a string whose own
        # law undoes its command within the period (their bounds would stay open: on the
        # ball 96 of its 128 rows inside the hold)
        keep = np.ones(A.shape[0], bool)
        keep[N * nu:self._n_tension] = np.tile(self.held_over_period, self.hold_points)
        self._keep = np.flatnonzero(keep)
        self._soft = soft_rows(N, nu, self._n_tension, A.shape[0], self.gamma_max, self._keep)
        self._n_vars = N * nu
        ns = self._soft.n_slack
        A = self._soft.matrix(A[self._keep])
        cost = sp.block_diag([sp.identity(N * nu), sp.csc_matrix((ns, ns))], format="csc")
        self._penalty = np.full(ns, PENALTY / SLACK_SCALE)
        return dict(P=cost, q=np.zeros(N * nu + ns), A=sp.csc_matrix(A),
                    l=-np.full(A.shape[0], INFINITY), u=np.full(A.shape[0], INFINITY))

    @property
    def L(self) -> np.ndarray:
        """Deprecated spelling of :attr:`left_inverse` (L names the Kalman gain)."""
        warnings.warn("PredictiveController.L is deprecated: the left inverse is "
                      "PredictiveController.left_inverse (L names the Kalman gain)",
                      DeprecationWarning, stacklevel=2)
        return self.left_inverse

    def __repr__(self) -> str:
        return (f"PredictiveController(kind={self.kind!r}, commanded_strings={self.strings.size}"
                f", horizon={self.horizon}, period={self.period:g} s, delay={self.delay:g} s, "
                f"rate_limit={'none' if self.rate_limit is None else 'yes'})")

    def summary(self) -> str:
        """The horizon, the bounds, the rate limit and the QP's time limit as a table."""
        gmax = np.where(self.gamma_max >= INFINITY, np.inf, self.gamma_max)
        rate = ("none" if self.rate_limit is None else
                value_range(self.rate_limit, "N/m/s"))
        return sampled_table(self, ("horizon", f"{self.horizon} samples"),
                              ("design states", f"{self.left_inverse.shape[0]}"),
                              ("gamma_min", value_range(self.gamma_min, "N/m")),
                              ("gamma_max", value_range(gmax, "N/m")),
                              ("rate limit", rate),
                              ("QP time limit", "none" if self.time_limit is None else
                               f"{self.time_limit:g} s (wall clock)"),
                              ("floor in the hold", self._hold_text()),
                              ("load margin", "none" if not np.any(self.load_margin) else
                               value_range(self.load_margin, "N/m")),
                              law="QP over the horizon, bounded force densities")

    def _hold_text(self) -> str:
        if not self.hold_points:
            return ("not needed (gamma_ref + u constant over the hold)" if self.law is None
                    else "none")
        text = (f"{int(self.held_over_period.sum())} of {self.strings.size} strings at "
                f"{self.hold_points} points (authority >= {_MIN_AUTHORITY:g})")
        unmet = np.flatnonzero(self.margin_unmet)
        if unmet.size:
            text += "; floor + load margin above gamma_max: " + ", ".join(
                f"string {int(self.strings[a])} (margin {self.load_margin[:, a].max():.3g} "
                "N/m)" for a in unmet[:_LISTED]) + (", ..." if unmet.size > _LISTED else "")
        open_ = np.flatnonzero(~self.held_over_period)
        if open_.size:
            # the strings whose floor holds at the samples only, and why
            text += "; at the samples only: " + ", ".join(
                f"string {int(self.strings[a])} (authority {self.authority[a]:.2g})"
                for a in open_[:_LISTED]) + (", ..." if open_.size > _LISTED else "")
        return text

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

    def law_rate(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """The elastic law's rate of change at positions q and velocities qd (3n,), d gamma /
        dt = (k l0 / l^2) dl/dt while taut [N/m/s], shape (nu,); zero for kind="control"."""
        if self.law is None:
            return np.zeros(self.strings.size)
        pairs, k, l0, spring = self.law
        N, V = q.reshape(-1, 3), qd.reshape(-1, 3)
        d = N[pairs[:, 1]] - N[pairs[:, 0]]
        length = np.linalg.norm(d, axis=1)
        rate = np.einsum("ij,ij->i", d, V[pairs[:, 1]] - V[pairs[:, 0]]) / length
        return np.where(spring | (length > l0), k * l0 / length**2 * rate, 0.0)

    def bounds(self, q: np.ndarray, qd: np.ndarray, u_prev: np.ndarray):
        """(lower, upper) [N/m] of the QP's constraint rows (tension, then rate) at the
        sample: q, qd (3n,) the sampled positions and velocities, u_prev (nu,) the last
        command."""
        base, shift = self._law_change(q, qd, u_prev)
        N, nu, reps = self.horizon, base.size, self._n_tension // base.size
        lo = np.tile(self.gamma_min - base, reps) - shift
        hi = np.tile(self.gamma_max - base, reps) - shift
        if self.hold_points:
            # the floor raised by the most an unknown load within the bound moves the law
            lo[:nu] += self.load_margin[0]
            lo[N * nu:] += self.load_margin[1:].reshape(-1)
            # no bound inside the hold for a string its own law answers within the period
            open_ = np.tile(~self.held_over_period, self.hold_points)
            lo[N * nu:][open_], hi[N * nu:][open_] = -INFINITY, INFINITY
        if self.rate_limit is not None:
            step = np.tile(self.rate_limit * self.period, N)
            first = np.concatenate([u_prev, np.zeros((N - 1) * u_prev.size)])
            lo, hi = np.concatenate([lo, first - step]), np.concatenate([hi, first + step])
        return lo, hi

    def _law_change(self, q, qd, u_prev):
        """(base (nu,), shift (rows,)) [N/m]: the elastic law at the sample, and its predicted
        change to every tension row's instant with no command from this sample on."""
        z0 = self.left_inverse @ np.concatenate([q - self.q_ref, qd])
        base = self.elastic_law(q)
        shift = self._shift @ self.prediction_start(z0, u_prev)
        if self.hold_points:
            # the law's rate at the sample, exact from the sampled velocities, in place of the
            # design model's (linear in z_0, wrong by the geometry's change at large motion):
            # the first-order term of the law's change from the sample to the hold's points
            # (and to the first hold's start, with a delay)
            N, nu = self.horizon, base.size
            error = self.law_rate(q, qd) - self._rate_gradient @ z0
            taus = np.repeat(self._taus, nu)
            shift[N * nu:] += taus * np.tile(error, self.hold_points)
            shift[:nu] += self.delay * error
            if self._plant is not None:
                shift += self._curvature(q, qd, u_prev, z0)
        return base, shift

    def _curvature(self, q, qd, u_prev, z0):
        """The tension rows' correction (rows,) [N/m] for the design model's error in the law's
        second-order change: the plant's accelerations at the sample less the design
        model's, held as a forcing over the hold through the design model's exact hold (a
        fast mode answers it with a bounded swing, not with tau^2 / 2), plus the law's
        own curvature in the string's velocity, ``k l0 (|v|^2 - 3 l'^2) / l^3`` times tau^2
        / 2. The linear model's curvature is wrong by far more than its rate at large motion
        (the 3-prism at 0.1 m: 8-18 N/m over 3/4 of a period, benchmarks/
        bench_mpc_floor_gap.py). The command acting at the sample: the last one with a
        delay, none without."""
        N, nu = self.horizon, self.strings.size
        acting = u_prev if self.delay else np.zeros(nu)
        _, _, design_acc, response = self._plant
        residual = self.accelerations(q, qd, acting) - design_acc @ np.concatenate([z0, acting])
        pairs, k, l0, spring = self.law
        Nq, V = q.reshape(-1, 3), qd.reshape(-1, 3)
        d, dv = Nq[pairs[:, 1]] - Nq[pairs[:, 0]], V[pairs[:, 1]] - V[pairs[:, 0]]
        length = np.linalg.norm(d, axis=1)
        rate = np.einsum("ij,ij->i", d, dv) / length
        own = np.where(spring | (length > l0), k * l0 * (np.einsum("ij,ij->i", dv, dv)
                                                         - 3.0 * rate**2) / length**3, 0.0)
        times = np.concatenate([[self.delay], self._taus])         # the first hold's start too
        out = response @ residual + 0.5 * times[:, None] ** 2 * own    # (M + 1, nu)
        rows = np.zeros(self._n_tension)
        rows[:nu] = out[0]
        rows[N * nu:] = out[1:].reshape(-1)
        return rows

    def accelerations(self, q, qd, u):
        """The plant's nonlinear accelerations qdd (3n,) [m/s^2] at positions q and velocities
        qd (3n,) with the command u (nu,) [N/m] added to the commanded strings' elastic laws,
        unclipped as in the QP's prediction (the operating point's loads, no others: the MPC
        does not know the disturbance;
        kind="passive", built by :func:`tenscontrol.mpc`)."""
        if self._plant is None:
            raise ValueError("PredictiveController.accelerations needs the plant: a "
                             "kind='passive' controller built by tenscontrol.mpc")
        accelerations, loads, _, _ = self._plant
        pairs = self.law[0]
        N = q.reshape(-1, 3)
        d = N[pairs[:, 1]] - N[pairs[:, 0]]
        # the command's nodal forces: a force density u pulls node i toward node j
        F = loads.reshape(-1, 3).copy()
        np.add.at(F, pairs[:, 0], u[:, None] * d)
        np.add.at(F, pairs[:, 1], -u[:, None] * d)
        return accelerations(q, qd, F.reshape(-1))

    def law_acceleration(self, q, qd, u):
        """The elastic law's second derivative in time at positions q and velocities qd (3n,)
        with the command u (nu,) [N/m] acting, ``k l0 (l'' / l^2 - 2 l'^2 / l^3)`` while taut
        [N/m/s^2], shape (nu,), from the plant's :meth:`accelerations`."""
        pairs, k, l0, spring = self.law
        N, V = q.reshape(-1, 3), qd.reshape(-1, 3)
        Acc = self.accelerations(q, qd, u).reshape(-1, 3)
        d = N[pairs[:, 1]] - N[pairs[:, 0]]
        dv, da = V[pairs[:, 1]] - V[pairs[:, 0]], Acc[pairs[:, 1]] - Acc[pairs[:, 0]]
        length = np.linalg.norm(d, axis=1)
        rate = np.einsum("ij,ij->i", d, dv) / length
        second = (np.einsum("ij,ij->i", dv, dv) + np.einsum("ij,ij->i", d, da) - rate**2) / length
        law = k * l0 * (second / length**2 - 2.0 * rate**2 / length**3)
        return np.where(spring | (length > l0), law, 0.0)

    def hold_prediction(self, q, qd, u_prev, u):
        """What the QP predicts for the first hold: the instants inside it, (M,) [s] after the
        sample (``delay + tau_j``), and the applied force density there of every commanded
        string, (M, nu) [N/m], for the command u (nu,) computed from the sample (q, qd (3n,)
        with the last command u_prev) -- the strings outside :attr:`held_over_period` too,
        whose rows the QP leaves open. Empty (0,), (0, nu) for ``kind="control"`` (its applied
        density is constant over the hold)."""
        nu, M, N = self.strings.size, self.hold_points, self.horizon
        if not M:
            return np.zeros(0), np.zeros((0, nu))
        base, shift = self._law_change(np.asarray(q, float), np.asarray(qd, float),
                                       np.asarray(u_prev, float))
        u = np.asarray(u, float)
        change = shift[N * nu:].reshape(M, nu) + u + (self._coupling @ u).reshape(M, nu)
        return self._taus.copy(), base + change

    def prediction_start(self, z0: np.ndarray, u_prev: np.ndarray) -> np.ndarray:
        """w_0: z_0 (r,), or ``[z_0; u_prev]`` (r + nu,) with a computation delay (the last
        command acts until ``t_k + delay``)."""
        return z0 if self.delay == 0 else np.concatenate([z0, u_prev])

    def _in_units(self, bound: np.ndarray) -> np.ndarray:
        """Constraint bounds [N/m] in the rows' units (OSQP's infinity kept), of the rows
        OSQP has."""
        bound = np.where(np.abs(bound) >= INFINITY, bound, bound / self._row_unit)
        return bound[self._keep]

    def _setup(self):
        """A new OSQP solver of the QP (factors its KKT matrix)."""
        solver = require_osqp().OSQP()
        limit = {} if self.time_limit is None else {"time_limit": self.time_limit}
        solver.setup(**self._qp, verbose=False, warm_starting=True, polishing=False,
                     eps_abs=_EPS, eps_rel=_EPS, max_iter=_MAX_ITER, alpha=_ALPHA,
                     check_termination=_CHECK, adaptive_rho_interval=_RHO_INTERVAL, **limit)
        # the multipliers of the slacks' rows e >= 0 are minus their cost (1) while the soft
        # rows hold: started there rather than at 0, OSQP need not climb to them
        ns = self._soft.n_slack
        y = np.zeros(self._qp["l"].size)
        y[y.size - ns:] = -1.0
        solver.warm_start(x=np.zeros(self._qp["q"].size), y=y)
        return solver

    def initial_state(self) -> np.ndarray:
        """Zero (no last command); the solver is set up anew, so that a run (a simulation,
        :func:`tenscontrol.verify`'s linear prediction) does not depend on the runs before it
        (OSQP keeps its last solution and its adapted step size rho)."""
        self._solver = self._setup()
        x0 = np.zeros(self.strings.size)
        # one update at the operating point: its answer is zero, as is OSQP's cold start (the
        # solver's state stays the same), and it takes the first calls' costs (allocations,
        # cold caches: 0.3-0.5 ms on the T-bar) out of the first sample's time
        self.update(0, 0.0, self.q_ref, np.zeros_like(self.q_ref), x0)
        self._info = {}
        return x0

    def update(self, k, t, q, qd, xk):
        start = time.process_time()
        _check_finite(k, t, {"positions q": q, "velocities qd": qd, "last command": xk})
        lo, hi = self.bounds(q, qd, xk)
        w0 = self.prediction_start(self.left_inverse @ np.concatenate([q - self.q_ref, qd]), xk)
        if self._first_infeasible(lo, hi):
            status, iterations, run_time, x = _CODES["first move infeasible"], 0, 0.0, None
        else:
            low, high = self._soft.bounds(self._in_units(lo), self._in_units(hi))
            self._solver.update(q=np.concatenate([self._F @ w0, self._penalty]), l=low, u=high)
            res = self._solver.solve(raise_error=False)
            status, iterations = int(res.info.status_val), int(res.info.iter)
            run_time = float(res.info.run_time)
            usable = STATUS_NAMES.get(status) in _USABLE and np.all(np.isfinite(res.x))
            x = res.x if usable else None
        slack = np.zeros(0) if x is None else x[self._n_vars:] / SLACK_SCALE
        x = None if x is None else x[:self._n_vars]
        u = self._first_move(x, xk, lo, hi)
        self._info = {"status": status, "iterations": iterations,
                      "solve_time": run_time, "held_last": int(x is None),
                      "soft_active": int(np.count_nonzero(slack > _ACTIVE)),
                      "cpu_time": time.process_time() - start}
        return u, u

    def _first_infeasible(self, lo, hi) -> bool:
        """Whether no first move meets both its rate limit and its force-density bounds (at
        the sample and inside the hold, there without the small coupling G Gamma_j)."""
        if self.rate_limit is None:
            return False            # the force-density box alone (gamma_min <= gamma_max) is met
        nu, nt, N = self.strings.size, self._n_tension, self.horizon
        rows = np.vstack([lo[:nu], lo[N * nu:nt].reshape(-1, nu), lo[nt:nt + nu]])
        tops = np.vstack([hi[:nu], hi[N * nu:nt].reshape(-1, nu), hi[nt:nt + nu]])
        return bool(np.any(rows.max(axis=0) > tops.min(axis=0)))

    def _first_move(self, x, u_prev, lo, hi):
        """The first move of OSQP's iterate `x` (None: the QP failed, and the last command
        `u_prev` is held), projected onto its bounds at the sample: the rate limit's box,
        then the force densities' (which win where the two do not meet)."""
        nu, nt, N = self.strings.size, self._n_tension, self.horizon
        u = u_prev.copy() if x is None else self._unwhiten[:nu] @ x
        if self.rate_limit is not None:
            u = np.clip(u, lo[nt:nt + nu], hi[nt:nt + nu])
        if self.hold_points:
            u = self._onto_hold_rows(u, lo[N * nu:nt].reshape(-1, nu),
                                     hi[N * nu:nt].reshape(-1, nu))
        # the first move's rows at the sample are its bounds at the sampled state (no
        # prediction in them): clipping there removes OSQP's tolerance-sized violations
        # (about 1e-3 of gamma_min on the ball), so the command meets gamma_min exactly at
        # the sample (and wins over the rows inside the hold where they do not meet)
        return np.clip(u, lo[:nu], hi[:nu])

    def _onto_hold_rows(self, u, low, high):
        """u (nu,) moved onto the first move's rows inside the hold, ``low_j <= (I +
        coupling_j) u <= high_j`` (low, high (M, nu); open for the strings not bounded there):
        the per-string boxes with the coupling (a string's law answering the commands within
        the period) taken at the last pass, to a fixed point. It removes the tolerance-sized
        violations of OSQP's answer and those of an iterate stopped early."""
        tol = _PROJECTION_TOL * float(np.max(self.gamma_ref))
        nu = u.size
        for _ in range(_MAX_PASSES):
            c = (self._coupling @ u).reshape(-1, nu)
            new = np.maximum(np.minimum(u, (high - c).min(axis=0)), (low - c).max(axis=0))
            if np.abs(new - u).max() <= tol:
                return new
            u = new
        return u

    def sample_info(self) -> dict:
        """The last QP's figures: OSQP's ``status`` code (:data:`STATUS_NAMES`; "solved",
        "solved inaccurate", "maximum iterations reached", "run time limit reached": the
        iterate's first move, projected onto its bounds, is the command; any other, e.g.
        "primal infeasible", or "first move infeasible": the last command is held, projected
        onto the first move's bounds, and ``held_last`` is 1), ``iterations``, OSQP's
        ``solve_time`` [s] (wall clock), ``soft_active`` (how many soft rows of moves 2..N
        were relaxed, a slack above 1e-4 of its string's gamma_ref) and the update's
        ``cpu_time`` [s]."""
        return dict(self._info)
