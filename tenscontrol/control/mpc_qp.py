"""The condensed quadratic program of the tension-bounded MPC (:mod:`tenscontrol.control.mpc`).

The prediction runs on ``w = z`` (no computation delay) or ``w = [z; u_prev]`` (the command
of the last sample, still held for the delay): ``w_{i+1} = Aw w_i + Bw u_i``, so that
``w_i = Ax[i] w_0 + Bu[i] U`` with ``U = [u_0; ...; u_{N-1}]``.

Tension rows. Move i is held from ``t_i + delay`` to ``t_{i+1} + delay``; at the points
``t_i + tau_j`` of that hold (``tau_j = delay + j T / M``, j = 0..M, both ends included) the
design model's state is ``z(t_i + tau_j) = W_j w_i + C_j u_i`` (the exact hold of the
continuous model, given by the caller), and the row is the applied force density's change
``u_i + G (z(t_i + tau_j) - z_0)`` (G: the elastic law's gradient; zero for
``kind="control"``, where one point per hold suffices). Every move has its row at the start
of its hold (j = 0); the first move, the one applied, has the rows of all M+1 points. The
start rows of all moves come first: that block is unit lower triangular in U (the whitening
of :func:`whitened` needs it).

Soft rows. The rows of moves 1..N-1 (tension and rate) are soft, with an exact L1 penalty:
one slack ``e >= 0`` per (move, string), shared by all that string's rows of that move,
costing ``penalty * e``; the first move's rows are hard.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

__all__ = ["CondensedQP", "condensed", "soft_layout", "whitened"]

INFINITY = 1e30         # OSQP's infinity
# OSQP's slack variables are SLACK_SCALE times the slacks e: their penalty in OSQP's linear
# term, and the multipliers of their rows e >= 0, are then the penalty / SLACK_SCALE, about 1,
# like the commands' (a penalty of 20-200 in the linear term left the T-bar's rate-limited
# QPs at OSQP's iteration cap)
SLACK_SCALE = 100.0


@dataclass(frozen=True, eq=False)
class CondensedQP:
    """Cost ``U^T H U + 2 w_0^T F^T U`` (+ const); tension rows ``rows @ U`` whose bounds
    move by ``-shift @ w_0``; ``move`` (m,) the move index of each row."""

    H: np.ndarray
    F: np.ndarray
    rows: np.ndarray
    shift: np.ndarray
    move: np.ndarray


def _powers(Aw, Bw, N):
    """Ax (N+1, nw, nw) with Ax[i] = Aw^i, and Bu (N+1, nw, N nu): w_i = Ax[i] w_0 + Bu[i] U."""
    nw, nu = Bw.shape
    Ax = np.empty((N + 1, nw, nw))
    Bu = np.zeros((N + 1, nw, N * nu))
    Ax[0] = np.eye(nw)
    for i in range(1, N + 1):
        Ax[i] = Aw @ Ax[i - 1]
        Bu[i] = Aw @ Bu[i - 1]
        Bu[i][:, (i - 1) * nu:i * nu] = Bw
    return Ax, Bu


def condensed(Aw, Bw, Q, R, P, G, W, C, N) -> CondensedQP:
    """The condensed QP of horizon N: Q, P (nw, nw) stage and terminal weights, R (nu, nu),
    G (nu, r), W (M+1, r, nw) and C (M+1, r, nu) the in-hold prediction (module docstring);
    rows: the start of every move's hold, then the first move's points j = 1..M."""
    Ax, Bu = _powers(Aw, Bw, N)
    nu, r = G.shape
    Qbar = [Q] * (N - 1) + [P]
    H = sum(Bu[i].T @ Qbar[i - 1] @ Bu[i] for i in range(1, N + 1)) + np.kron(np.eye(N), R)
    F = sum(Bu[i].T @ Qbar[i - 1] @ Ax[i] for i in range(1, N + 1))
    Sz = np.eye(r, Aw.shape[0])                 # z_0 = Sz w_0
    rows, shift = [], []
    # the start of every hold (j = 0), then the other points of the first move's hold only
    for j, i in [(0, i) for i in range(N)] + [(j, 0) for j in range(1, len(W))]:
        sel = np.zeros((nu, N * nu))
        sel[:, i * nu:(i + 1) * nu] = np.eye(nu)
        rows.append(sel + G @ (W[j] @ Bu[i] + C[j] @ sel))
        shift.append(G @ (W[j] @ Ax[i] - Sz))
    move = np.concatenate([np.repeat(np.arange(N), nu), np.zeros((len(W) - 1) * nu, int)])
    return CondensedQP(H, F, np.vstack(rows), np.vstack(shift), move)


def whitened(H, rows, N, nu, rate):
    """(unwhiten, A): U = unwhiten @ V turns the cost U^T H U into |V|^2 and the constraint
    rows (tension `rows`, then the rate rows if `rate`) into A V, the first N nu rows (the
    start of every hold) lower triangular."""
    # whitening: the first-order OSQP iteration needs it when self-stress makes H
    # ill-conditioned (commands that change no nodal force cost only R)
    # any W with W^T H W = I whitens; W = T^-1 S with S the Cholesky factor of T H^-1 T^T
    # makes the start rows T W = S triangular: half the nonzeros of the dense T C^-T of
    # H = C C^T, and a KKT factor a third the size (OSQP's iteration on the ball: 3x faster)
    # (T is unit lower triangular: the tension of move i depends on moves 0..i)
    n = N * nu
    T = rows[:n]
    S = np.linalg.cholesky(_symmetric(T @ np.linalg.solve(H, T.T)))
    unwhiten = scipy.linalg.solve_triangular(T, S, lower=True, unit_diagonal=True)
    out = [S, rows[n:] @ unwhiten]
    if rate:
        out.append(unwhiten - np.vstack([np.zeros((nu, n)), unwhiten[:-nu]]))
    return unwhiten, np.vstack(out)


def _symmetric(M):
    return 0.5 * (M + M.T)


@dataclass(frozen=True, eq=False)
class SoftLayout:
    """How the constraint rows (tension, then rate) become OSQP's rows on ``[V; e]``.

    ``hard``: rows kept as they are (the first move's); ``low``/``high``: the soft rows that
    get ``row + e_g >= lower`` and ``row - e_g <= upper`` (``high`` only where an upper bound
    can be finite), with ``group_low``/``group_high`` their slack g; ``n_slack`` slacks."""

    hard: np.ndarray
    low: np.ndarray
    high: np.ndarray
    group_low: np.ndarray
    group_high: np.ndarray
    n_slack: int

    def matrix(self, A):
        """OSQP's constraint matrix (dense) for the rows A (m, n): hard, low, high, then
        ``e >= 0``."""
        n, ns = A.shape[1], self.n_slack
        E_low = np.zeros((self.low.size, ns))
        E_low[np.arange(self.low.size), self.group_low] = 1.0 / SLACK_SCALE
        E_high = np.zeros((self.high.size, ns))
        E_high[np.arange(self.high.size), self.group_high] = -1.0 / SLACK_SCALE
        return np.block([[A[self.hard], np.zeros((self.hard.size, ns))],
                         [A[self.low], E_low], [A[self.high], E_high],
                         [np.zeros((ns, n)), np.eye(ns)]])

    def multiplier(self, y, active) -> float:
        """The largest sum of |multipliers| of one slack's soft rows, from OSQP's dual y, over
        the slacks not `active` (bool (n_slack,); an active slack's sum is the penalty): the
        L1 penalty is exact when it exceeds this at the hard problem's solution."""
        if not self.n_slack or active.all():
            return 0.0
        nh, nl = self.hard.size, self.low.size
        sums = np.zeros(self.n_slack)
        np.add.at(sums, self.group_low, np.abs(y[nh:nh + nl]))
        np.add.at(sums, self.group_high, np.abs(y[nh + nl:nh + nl + self.high.size]))
        return float(sums[~active].max())

    def bounds(self, lo, hi):
        """OSQP's (l, u) for the rows' bounds lo, hi (m,) in the rows' units."""
        inf = np.full(self.high.size, INFINITY)
        zeros, open_ = np.zeros(self.n_slack), np.full(self.n_slack, INFINITY)
        return (np.concatenate([lo[self.hard], lo[self.low], -inf, zeros]),
                np.concatenate([hi[self.hard], np.full(self.low.size, INFINITY), hi[self.high],
                                open_]))


def soft_layout(move, string, finite_upper) -> SoftLayout:
    """The :class:`SoftLayout` of rows with move index `move` (m,), string index `string`
    (m,) and `finite_upper` (m,) bool (an upper bound that can be finite)."""
    nu = int(string.max()) + 1
    hard = np.flatnonzero(move == 0)
    soft = np.flatnonzero(move > 0)
    group = (move - 1) * nu + string
    high = soft[finite_upper[soft]]
    n_slack = int((move.max()) * nu)
    return SoftLayout(hard, soft, high, group[soft], group[high], n_slack)
