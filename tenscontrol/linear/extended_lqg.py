"""The extended Kalman filter in the sampled closed loop: :class:`ExtendedLQG`, a
:class:`tenscontrol.SampledController` that estimates the state with an
:class:`tenscontrol.ExtendedKalman` on the nonlinear model and feeds it back through the gain
of :func:`tenscontrol.discrete_lqg` (issue 23, item 3).

At ``t_k = k period`` it reads the sensors (noise from ``default_rng([seed, k])``, the readings
a :class:`tenscontrol.DiscreteLQG` of the same seed takes), corrects ``x_k|k``, commands

    u_k = -Kx (x_k|k - x*) - Ku u_k-1,    Kx = Kz @ left_inverse

(``Kz``, ``Ku`` the discrete LQR gain of ``discrete_lqg`` on ``[z; u_k-1]``, ``z = left_inverse
(x - x*)`` the LQR design's reduced coordinates) and predicts ``x_k+1|k``, ``P_k+1|k`` through
the nonlinear model with u_k-1 and u_k held as the loop holds them. The controller's state is
``[x_k|k-1 (2nq); P_k|k-1 (2nf x 2nf, row by row); u_k-1 (nu)]``. Near the operating point the
two controllers agree; the EKF keeps its estimate where the motion leaves the linear range.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tenscontrol.feedback.estimators import DiscreteLQG
from tenscontrol.feedback.sampled import SampledController, check_timing, sampled_table
from tenscontrol.linear.ekf import ExtendedKalman, process_covariance
from tenscontrol.linear.estimation import discrete_lqg
from tenscontrol.linear.synthesis import lqr
from tenscontrol import validation

__all__ = ["ExtendedLQG", "extended_lqg"]


@dataclass(frozen=True, eq=False)
class ExtendedLQG(SampledController):
    """A sampled controller: an :class:`ExtendedKalman` and a linear state feedback.

    Attributes
    ----------
    strings, gamma_ref, kind, period, delay
        The commanded strings (nu,), their operating force densities [N/m], how a command
        acts, the sample period and the computation delay [s], as for every
        :class:`tenscontrol.SampledController`.
    Kx : ndarray, shape (nu, 2nq)
        Gain on ``x_k|k - x*`` [N/m per m, per m/s].
    Ku : ndarray, shape (nu, nu)
        Gain on u_k-1.
    q_ref : ndarray, shape (nq,)
        Operating point x* = [q_ref; 0] [m].
    kalman : ExtendedKalman
        Its commanded strings, kind and delay are this controller's.
    P0 : ndarray, shape (2nf, 2nf)
        Covariance of the prior ``x_0|-1 = x*``.
    seed, noise
        As for :class:`tenscontrol.DiscreteLQG`: with `noise`, the reading at sample k has
        the sensors' noise drawn from ``default_rng([seed, k])``.
    """

    strings: np.ndarray
    gamma_ref: np.ndarray
    kind: str = field()         # required: the base class's attributes would be defaults
    period: float = field()
    delay: float = field()
    Kx: np.ndarray
    Ku: np.ndarray
    q_ref: np.ndarray
    kalman: ExtendedKalman
    P0: np.ndarray
    seed: int = 0
    noise: bool = True

    def __post_init__(self):
        for name in ("strings", "gamma_ref", "Kx", "Ku", "q_ref", "P0"):
            value = np.array(getattr(self, name),
                             dtype=np.int64 if name == "strings" else float)
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        period, delay = check_timing(self.period, self.delay, "ExtendedLQG")
        object.__setattr__(self, "period", period)
        object.__setattr__(self, "delay", delay)
        f = self.kalman
        mine = (self.period, self.delay, self.kind, self.strings.tolist())
        if (f.period, f.delay, f.kind, f.strings.tolist()) != mine:
            raise ValueError("ExtendedLQG: kalman must have this controller's period, delay, "
                             "kind and commanded strings")

    @property
    def n_states(self) -> int:
        return 2 * self.q_ref.size + self.P0.size + self.strings.size

    def __repr__(self) -> str:
        return (f"ExtendedLQG(kind={self.kind!r}, commanded_strings={self.strings.size}, "
                f"states={self.n_states}, signals={self.kalman.sensors.n_signals}, "
                f"period={self.period:.4g} s, delay={self.delay:.4g} s)")

    def summary(self) -> str:
        """The law, timing, the measured signals and the gains' sizes as a table."""
        return sampled_table(self, ("measured signals", f"{self.kalman.sensors.n_signals}"),
                             ("estimator", f"extended Kalman filter, {self.kalman.substeps} "
                                           "RK4 step(s) per held piece"),
                             ("||Kx||_F", f"{np.linalg.norm(self.Kx):.4g}"),
                             ("trace P0", f"{np.trace(self.P0):.4g}"),
                             ("sensor noise", f"{'on' if self.noise else 'off'} (seed "
                                              f"{self.seed})"),
                             law="u_k = -Kx (x_k|k - x*) - Ku u_k-1")

    def pack(self, x: np.ndarray, P: np.ndarray, u_prev: np.ndarray) -> np.ndarray:
        """The controller state ``[x; P row by row; u_prev]``, shape (n_states,)."""
        return np.concatenate([x, np.ravel(P), u_prev])

    def unpack(self, xk: np.ndarray) -> tuple:
        """(x (2nq,), P (2nf, 2nf), u_prev (nu,)) of a controller state."""
        nx, m = 2 * self.q_ref.size, self.P0.shape[0]
        return xk[:nx], xk[nx:nx + m * m].reshape(m, m), xk[nx + m * m:]

    def estimates(self, states: np.ndarray) -> np.ndarray:
        """The predicted states ``x_k|k-1`` (ns, 2nq) of controller states (ns, n_states),
        e.g. a sampled run's ``trajectory.control.sample_states``."""
        return np.atleast_2d(states)[:, :2 * self.q_ref.size]

    def initial_state(self) -> np.ndarray:
        """``[x*; P0; 0]``, shape (n_states,)."""
        x = np.concatenate([self.q_ref, np.zeros(self.q_ref.size)])
        return self.pack(x, self.P0, np.zeros(self.strings.size))

    def update(self, k: int, t: float, q: np.ndarray, qd: np.ndarray,
               xk: np.ndarray) -> tuple:
        """The command u_k (nu,) [N/m] and the next state from the sampled state at t_k."""
        f = self.kalman
        x_true = np.concatenate([q, qd])
        y = f.outputs(x_true)
        if self.noise:
            y = f.sensors.noisy(y, np.random.default_rng([self.seed, int(k)]))
        x_pred, P_pred, u_prev = self.unpack(np.asarray(xk, dtype=float))
        x, P = f.correct(x_pred, P_pred, y)
        dx = x - np.concatenate([self.q_ref, np.zeros(self.q_ref.size)])
        u = -self.Kx @ dx - self.Ku @ u_prev
        x_next, P_next = f.predict(x, P, u_prev, u)
        return u, self.pack(x_next, P_next, u)


def _initial_covariance(lin: DiscreteLQG, r: int, free: np.ndarray) -> np.ndarray:
    """The linear filter's steady a-priori covariance in Cartesian coordinates (2nf, 2nf)."""
    basis = lin.kalman.basis[:, :r][free]
    return basis @ lin.kalman.P[:r, :r] @ basis.T


def extended_lqg(model, sensors, period, *, process_noise, delay=0.0, Q=None, R=None,
                 effort=1.0, order=None, seed=0, noise=True, substeps=1) -> ExtendedLQG:
    """A sampled controller with an extended Kalman filter on the nonlinear model and the
    discrete LQR gain of :func:`tenscontrol.discrete_lqg` (module docstring).

    Parameters
    ----------
    model, sensors, period, process_noise, delay, Q, R, effort, order, seed, noise
        As for :func:`tenscontrol.discrete_lqg` (rigid bars): the same gain, readings and
        white nodal-force noise; the filter's process noise is :func:`process_covariance`
        of `model` in Cartesian coordinates.
    substeps : int
        Runge-Kutta steps of the prediction per held piece of the period (one or two: from
        ``t_k`` to ``t_k + delay`` and on).

    Returns
    -------
    ExtendedLQG
        Its prior is the operating point with the linear filter's steady covariance.
    """
    if getattr(model, "bars", "rigid") != "rigid":
        raise ValueError("extended_lqg: model must be a rigid-bar LinearModel (the filter "
                         f"predicts with the rigid-bar model), got bars={model.bars!r}")
    substeps = validation.integer("extended_lqg: substeps", substeps, minimum=1)
    lin = discrete_lqg(model, sensors, period, process_noise=process_noise, delay=delay, Q=Q,
                       R=R, effort=effort, order=order, seed=seed, noise=noise)
    minimal = lqr(model, Q=Q, R=R, effort=effort, order=order).minimal
    r = minimal.order
    if not np.allclose(minimal.basis, lin.kalman.basis[:, :r], rtol=0.0, atol=1e-12):
        raise RuntimeError("extended_lqg: the LQR design's reduced coordinates differ from "
                           "discrete_lqg's; report this as a bug")
    Kx = lin.K[:, :r] @ minimal.left_inverse
    Ku = lin.K[:, lin.K.shape[1] - lin.strings.size:]
    meas = lin.kalman.measurement
    T, d = lin.period, lin.delay
    ekf = ExtendedKalman(sensors, T, process_covariance(model, T, process_noise), substeps, d,
                         lin.strings, lin.gamma_ref, lin.kind, meas.held, meas.gamma_held)
    P0 = _initial_covariance(lin, r, ekf.free)
    return ExtendedLQG(lin.strings, lin.gamma_ref, lin.kind, T, d, Kx, Ku, meas.q_ref, ekf, P0,
                       int(seed), bool(noise))
