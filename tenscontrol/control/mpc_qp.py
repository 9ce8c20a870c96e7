"""The condensed quadratic program of the tension-bounded MPC (:mod:`tenscontrol.control.mpc`).

The prediction runs on ``w = z`` (no computation delay) or ``w = [z; u_prev]``:
``w_{i+1} = Ad w_i + Bd u_i``, so that ``w_i = Ax[i] w_0 + Bu[i] U`` with ``U = [u_0; ...;
u_{N-1}]`` (:func:`powers`). :func:`condensed` gives the cost and the tension rows at the
start of every move's hold, :func:`hold_rows` the first move's rows inside its hold,
:func:`whitened` the change of variables that makes the cost ``|V|^2``, and
:class:`SoftRows` turns the rows of the moves after the first into soft rows with slacks.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

__all__ = ["INFINITY", "PENALTY", "SLACK_SCALE", "SoftRows", "condensed", "hold_rows",
           "powers", "soft_rows", "whitened"]

INFINITY = 1e30         # OSQP's infinity
#: The exact L1 penalty of the soft rows (moves 2..N), per unit of violation in units of the
#: string's gamma_ref, in the whitened cost's units (a command of one gamma_ref costs about
#: 1): the soft QP's answer is the hard one whenever that is feasible and the penalty exceeds
#: every soft row's multiplier. The largest multiplier measured on the hard QP: 35.5 (T-bar,
#: rate limit 20 N/m/s), 7.8 (3-prism passive, twice its LQR's slackening doublet), 3.5
#: (ball, 200 N doublet): 1000 is 28 times the largest
PENALTY = 1000.0
#: OSQP's slack variables are the slacks times this, so that their cost is 1 per unit, like
#: the whitened commands': with the penalty itself in OSQP's linear term (scale 1) OSQP
#: stopped at its iteration cap on 163 of the T-bar's 500 QPs and on 187 of the ball's 300
#: (whose loop then ran away, peak 5.5 m); scaled, 1 and 1 (the hard QP: 9 and 0)
SLACK_SCALE = PENALTY


def powers(Ad, Bd, N):
    """Ax (N+1, r, r) with Ax[i] = Ad^i, and Bu (N+1, r, N nu): z_i = Ax[i] z_0 + Bu[i] U."""
    r, nu = Bd.shape
    Ax = np.empty((N + 1, r, r))
    Bu = np.zeros((N + 1, r, N * nu))
    Ax[0] = np.eye(r)
    for i in range(1, N + 1):
        Ax[i] = Ad @ Ax[i - 1]
        Bu[i] = Ad @ Bu[i - 1]
        Bu[i][:, (i - 1) * nu:i * nu] = Bd
    return Ax, Bu


def condensed(Ad, Bd, Q, R, P, G, start, N):
    """The condensed QP on U of the prediction ``w_{i+1} = Ad w_i + Bd u_i`` (w = z, or
    ``[z; u_prev]`` with a computation delay): cost ``U^T H U + 2 w_0^T F^T U`` (+ const),
    tension rows T U (``u_i + G (z(t_i + delay) - z_0)``, the law's change at the start of
    move i's hold, ``z(t_i + delay) = start w_i``) whose bounds move by ``-shift w_0``."""
    Ax, Bu = powers(Ad, Bd, N)
    Qbar = [Q] * (N - 1) + [P]
    H = sum(Bu[i].T @ Qbar[i - 1] @ Bu[i] for i in range(1, N + 1)) + np.kron(np.eye(N), R)
    F = sum(Bu[i].T @ Qbar[i - 1] @ Ax[i] for i in range(1, N + 1))
    Gs, Gz = G @ start, G @ np.eye(*start.shape)       # z_0 = [I 0] w_0
    T = np.eye(N * Bd.shape[1]) + np.vstack([Gs @ Bu[i] for i in range(N)])
    shift = np.vstack([Gs @ Ax[i] - Gz for i in range(N)])
    return H, F, T, shift


def hold_rows(G, hold, start, N):
    """The first move's tension rows inside its hold, (M nu, N nu), and their shifts on w_0,
    (M nu, nw): at ``t_k + delay + tau_j`` the design model is at ``Phi_j start w_0 +
    Gamma_j u_0`` (`hold`: tau_j [s] and its exact hold (Phi_j, Gamma_j), j = 1..M), so the
    applied force density's change there is ``(I + G Gamma_j) u_0 + G (Phi_j start w_0 -
    z_0)``."""
    nu, nw = G.shape[0], start.shape[1]
    rows = np.zeros((len(hold) * nu, N * nu))
    shift = np.zeros((len(hold) * nu, nw))
    for j, (_, Phi, Gamma) in enumerate(hold):
        rows[j * nu:(j + 1) * nu, :nu] = np.eye(nu) + G @ Gamma
        shift[j * nu:(j + 1) * nu] = G @ (Phi @ start - np.eye(*start.shape))
    return rows, shift


def whitened(H, T, extra, N, nu, rate):
    """(unwhiten, A): U = unwhiten @ V turns the cost U^T H U into |V|^2 and the constraint
    rows (tensions T U, the `extra` rows (m, N nu), and the rate rows if `rate`) into A V,
    its first N nu rows (T's) lower triangular."""
    # whitening: the first-order OSQP iteration needs it when self-stress makes H
    # ill-conditioned (commands that change no nodal force cost only R)
    # any W with W^T H W = I whitens; W = T^-1 S with S the Cholesky factor of T H^-1 T^T
    # makes the tension rows T W = S triangular: half the nonzeros of the dense T C^-T of
    # H = C C^T, and a KKT factor a third the size (OSQP's iteration on the ball: 3x faster)
    # (T is unit lower triangular: the tension of move i depends on moves 0..i)
    S = np.linalg.cholesky(_symmetric(T @ np.linalg.solve(H, T.T)))
    unwhiten = scipy.linalg.solve_triangular(T, S, lower=True, unit_diagonal=True)
    rows = [S, extra @ unwhiten]
    if rate:
        rows.append(unwhiten - np.vstack([np.zeros((nu, N * nu)), unwhiten[:-nu]]))
    return unwhiten, np.vstack(rows)


class SoftRows:
    """How the constraint rows (kept, in their order) become OSQP's rows on ``[V; e]``: the
    hard rows as they are, each soft row as ``row + e_r >= lower`` and, where its upper
    bound can be finite, ``row - e_r <= upper``, then ``e >= 0``."""

    def __init__(self, soft, upper):
        self.hard = np.flatnonzero(~soft)
        self.soft = np.flatnonzero(soft)
        self.high = np.flatnonzero(upper[self.soft])     # among the soft rows
        self.n_slack = self.soft.size

    def matrix(self, A):
        """OSQP's constraint matrix (dense) for the kept rows A (m, n)."""
        ns, n = self.n_slack, A.shape[1]
        eye = np.eye(ns) / SLACK_SCALE
        return np.block([[A[self.hard], np.zeros((self.hard.size, ns))],
                         [A[self.soft], eye],
                         [A[self.soft[self.high]], -eye[self.high]],
                         [np.zeros((ns, n)), np.eye(ns)]])

    def bounds(self, lo, hi):
        """OSQP's (l, u) for the kept rows' bounds lo, hi (m,)."""
        s, top = self.soft, self.soft[self.high]
        open_ = np.full(top.size, INFINITY)
        return (np.concatenate([lo[self.hard], lo[s], -open_, np.zeros(s.size)]),
                np.concatenate([hi[self.hard], np.full(s.size, INFINITY), hi[top],
                                np.full(s.size, INFINITY)]))


def soft_rows(N, nu, n_tension, n_rows, gamma_max, keep) -> SoftRows:
    """The :class:`SoftRows` of the full rows (tension: N nu at the holds' starts, then those
    inside the first hold; rate: N nu), of which `keep` go to OSQP: the rows of moves 2..N
    are soft."""
    soft = np.zeros(n_rows, bool)
    soft[nu:N * nu] = True
    soft[n_tension + nu:] = True                  # the rate rows of moves 2..N (if any)
    upper = np.ones(n_rows, bool)                 # rate rows: both sides
    upper[:n_tension] = np.tile(gamma_max < INFINITY, n_tension // nu)
    return SoftRows(soft[keep], upper[keep])


def _symmetric(M):
    return 0.5 * (M + M.T)
