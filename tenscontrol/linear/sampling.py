"""The integrals of sampled-data design, each computed in one place.

- :func:`exact_hold`: ``(e^{A t}, int_0^t e^{A s} ds B)``, the exact zero-order hold of
  ``x' = A x + B u`` over a time t, from one matrix exponential (used by :func:`tenscontrol.zoh`,
  :func:`tenscontrol.discrete_lqg`, :func:`sampled_cost` and the linear prediction of
  :func:`tenscontrol.verify`);
- :func:`van_loan`: ``int_0^t e^{F s} W e^{F^T s} ds``, the covariance of white noise of
  intensity W through ``x' = F x`` (the process noise of a sampled Kalman filter, and, with
  ``F = A_hat^T``, the integral of a quadratic cost; Van Loan, "Computing integrals involving
  the matrix exponential", IEEE TAC 23(3), 1978);
- :func:`sampled_cost`: the exact sampled-data LQR cost: the continuous cost ``int x^T Q x +
  u^T R u dt`` over one period under the hold, as ``x_k^T Qd x_k + 2 x_k^T Nd u_k + u_k^T Rd
  u_k`` on the state of :meth:`tenscontrol.design.discrete.ZOHModel.augmented` (Franklin,
  Powell & Workman, *Digital Control of Dynamic Systems*, 3rd ed., section 9.4.4), computation
  delay included.

The check of a period and a delay is :func:`tenscontrol.control.sampled.check_timing` (the
sampled controllers of :mod:`tenscontrol.control` validate with it too).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

__all__ = ["exact_hold", "sampled_cost", "van_loan"]


def exact_hold(A, B, t: float) -> tuple[np.ndarray, np.ndarray]:
    """``(e^{A t}, int_0^t e^{A s} ds B)`` from one exponential of ``[[A, B], [0, 0]] t``.

    Parameters
    ----------
    A : ndarray, shape (n, n)
    B : ndarray, shape (n, m)
    t : float
        The time the input is held [s] (0 gives ``(I, 0)``).

    Returns
    -------
    Phi : ndarray, shape (n, n)
    Gamma : ndarray, shape (n, m)
    """
    n, m = B.shape
    big = np.zeros((n + m, n + m))
    big[:n, :n], big[:n, n:] = A * t, B * t
    E = scipy.linalg.expm(big)
    return E[:n, :n], E[:n, n:]


def van_loan(F, W, t: float) -> np.ndarray:
    """``int_0^t e^{F s} W e^{F^T s} ds`` (n, n), symmetric, from one exponential of
    ``[[-F, W], [0, F^T]] t`` (Van Loan, 1978: its blocks are ``e^{-F t} X`` and
    ``e^{F^T t}``).

    Parameters
    ----------
    F : ndarray, shape (n, n)
    W : ndarray, shape (n, n)
        Symmetric (a noise intensity, a cost weight).
    t : float
        [s].
    """
    n = F.shape[0]
    E = scipy.linalg.expm(np.block([[-F, W], [np.zeros((n, n)), F.T]]) * t)
    X = E[n:, n:].T @ E[:n, n:]
    return 0.5 * (X + X.T)


def _held_cost(A, B, Q, R, t: float) -> np.ndarray:
    """The cost matrix (n + m, n + m) of ``[x(0); u]`` over a time t with u held:
    ``int_0^t e^{A_hat^T s} diag(Q, R) e^{A_hat s} ds``, ``A_hat = [[A, B], [0, 0]]``."""
    n, m = B.shape
    Ahat = np.zeros((n + m, n + m))
    Ahat[:n, :n], Ahat[:n, n:] = A, B
    return van_loan(Ahat.T, scipy.linalg.block_diag(Q, R), t)


def sampled_cost(A, B, Q, R, period: float, delay: float = 0.0) -> tuple:
    """The exact sampled-data cost of the continuous LQR cost under the zero-order hold.

    Over one period, ``int_{t_k}^{t_k+1} x^T Q x + u^T R u dt`` with u_k-1 held until
    ``t_k + delay`` and u_k after it equals ``z_k^T Qd z_k + 2 z_k^T Nd u_k + u_k^T Rd u_k``
    with ``z_k = x_k`` (no delay) or ``[x_k; u_k-1]``: the state of
    :meth:`~tenscontrol.design.discrete.ZOHModel.augmented`.

    Parameters
    ----------
    A : ndarray, shape (n, n)
    B : ndarray, shape (n, m)
    Q : ndarray, shape (n, n)
        Symmetric state weight.
    R : ndarray, shape (m, m)
        Symmetric input weight.
    period, delay : float
        [s], ``0 <= delay < period`` (checked by the callers).

    Returns
    -------
    Qd : ndarray, shape (nz, nz)
    Rd : ndarray, shape (m, m)
    Nd : ndarray, shape (nz, m)
        nz = n without delay, n + m with.
    """
    n, m = B.shape
    late = _held_cost(A, B, Q, R, period - delay)         # [x(t_k + delay); u_k]
    if delay == 0:
        return late[:n, :n], late[n:, n:], late[:n, n:]
    early = _held_cost(A, B, Q, R, delay)                 # [x_k; u_k-1]
    Phi, Gamma = exact_hold(A, B, delay)
    # [x(t_k + delay); u_k] = S [x_k; u_k-1; u_k]
    S = np.zeros((n + m, n + 2 * m))
    S[:n, :n], S[:n, n:n + m], S[n:, n + m:] = Phi, Gamma, np.eye(m)
    total = S.T @ late @ S
    total[:n + m, :n + m] += early
    total = 0.5 * (total + total.T)
    return total[:n + m, :n + m], total[n + m:, n + m:], total[:n + m, n + m:]
