"""The extended Kalman filter in the sampled closed loop: :class:`ExtendedLQG`, a
:class:`tenscontrol.SampledController` that estimates the state with an
:class:`tenscontrol.estimation.ExtendedKalman` on the nonlinear model and feeds it back through the gain
of :func:`tenscontrol.discrete_lqg` (issue 23, item 3).

At ``t_k = k period`` it reads the sensors (noise from ``default_rng([seed, k])``, the readings
a :class:`tenscontrol.control.DiscreteLQG` of the same seed takes), corrects ``x_k|k``, commands

    u_k = -Kx (x_k|k - x*) - Ku u_k-1,    Kx = Kz @ left_inverse

(``Kz``, ``Ku`` the discrete LQR gain of ``discrete_lqg`` on ``[z; u_k-1]``, ``z = left_inverse
(x - x*)`` the LQR design's reduced coordinates) and predicts ``x_k+1|k``, ``P_k+1|k`` through
the nonlinear model with u_k-1 and u_k held as the loop holds them. Near the operating point the
two controllers agree; the EKF keeps its estimate where the motion leaves the linear range.

The controller's recorded state is ``[x_k|k-1 (2nq); diag P_k|k-1 (2nf); u_k-1 (nu)]``: what a
user plots (the estimate and its variances), a size linear in the structure. The covariance
itself (2nf x 2nf) lives in the controller's runtime between samples (issue 30, item 4: in the
record it took samples x (2nf)^2 floats, 2.6 GB for 10,000 samples of 30 free nodes).
:meth:`ExtendedLQG.initial_state` starts a run (the covariance back to P0), as the sampled
loop and :func:`tenscontrol.verify` do at the start of every run, so repeated runs are the
same; the samples must then come in order, k = 0, 1, ... (a sample out of order is refused).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from tenscontrol.control.sampled import SampledController, check_timing, sampled_table
from tenscontrol.design.result import DiscreteLQGDesign, ExtendedLQGDesign
from tenscontrol.estimation.ekf import ExtendedKalman, process_covariance
from tenscontrol.design.synthesis import lqr
from tenscontrol.estimation.lqg import discrete_lqg, reduced_model, sensor_measurement, with_reach
from tenscontrol.estimation.tuning import check_noise, noise_tuning
from tenscontrol import validation

__all__ = ["ExtendedLQG", "extended_lqg"]


class _Covariance:
    """The filter's covariance between samples of one run: ``P`` is ``P_k|k-1`` of the next
    sample ``k`` (the mutable runtime of a frozen :class:`ExtendedLQG`)."""

    __slots__ = ("P", "k")

    def __init__(self, P0: np.ndarray):
        self.P, self.k = P0, 0

    def __getstate__(self):             # picklable (a study's worker processes)
        return self.P, self.k

    def __setstate__(self, state):
        self.P, self.k = state


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
        Covariance of the prior ``x_0|-1 = x*``; the covariance of later samples is kept by
        the controller between samples, not in its state (module docstring).
    seed, noise
        As for :class:`tenscontrol.control.DiscreteLQG`: with `noise`, the reading at sample k has
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
        object.__setattr__(self, "_runtime", _Covariance(self.P0))

    @property
    def n_states(self) -> int:
        return 2 * self.q_ref.size + self.P0.shape[0] + self.strings.size

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

    def pack(self, x: np.ndarray, variances: np.ndarray, u_prev: np.ndarray) -> np.ndarray:
        """The recorded controller state ``[x; variances; u_prev]``, shape (n_states,);
        `variances` is the covariance's diagonal (2nf,)."""
        return np.concatenate([x, variances, u_prev])

    def unpack(self, xk: np.ndarray) -> tuple:
        """(x (2nq,), variances (2nf,), u_prev (nu,)) of a recorded controller state."""
        nx, m = 2 * self.q_ref.size, self.P0.shape[0]
        return xk[:nx], xk[nx:nx + m], xk[nx + m:]

    def estimates(self, states: np.ndarray) -> np.ndarray:
        """The predicted states ``x_k|k-1`` (ns, 2nq) of controller states (ns, n_states),
        e.g. a sampled run's ``trajectory.control.sample_states``."""
        return np.atleast_2d(states)[:, :2 * self.q_ref.size]

    def variances(self, states: np.ndarray) -> np.ndarray:
        """The variances ``diag P_k|k-1`` (ns, 2nf) of the predicted free coordinates (in
        the order of ``kalman.free``) of controller states (ns, n_states)."""
        nx = 2 * self.q_ref.size
        return np.atleast_2d(states)[:, nx:nx + self.P0.shape[0]]

    def covariance(self) -> np.ndarray:
        """``P_k|k-1`` (2nf, 2nf) of the next sample of the current run (P0 before any)."""
        return self._runtime.P.copy()

    def initial_state(self) -> np.ndarray:
        """``[x*; diag P0; 0]``, shape (n_states,); starts a run (the covariance is P0)."""
        self._runtime.P, self._runtime.k = self.P0, 0
        x = np.concatenate([self.q_ref, np.zeros(self.q_ref.size)])
        return self.pack(x, np.diag(self.P0).copy(), np.zeros(self.strings.size))

    def _prior(self, k: int, variances: np.ndarray) -> np.ndarray:
        """P_k|k-1 of sample k: P0 at k = 0, else the runtime's, checked to be this run's."""
        rt = self._runtime
        if k == 0:
            return self.P0
        if rt.k != k or not np.array_equal(np.diag(rt.P), variances):
            raise ValueError(f"ExtendedLQG.update: sample {k} does not follow the controller's "
                             f"last update (its next sample is {rt.k}, or the state is another "
                             "run's): the filter's covariance is kept between samples, so call "
                             "initial_state() to start a run and update k = 0, 1, ... in order, "
                             "one run at a time (dataclasses.replace(controller) gives an "
                             "independent copy)")
        return rt.P

    def update(self, k: int, t: float, q: np.ndarray, qd: np.ndarray,
               xk: np.ndarray) -> tuple:
        """The command u_k (nu,) [N/m] and the next state from the sampled state at t_k."""
        f, k = self.kalman, int(k)
        x_true = np.concatenate([q, qd])
        y = f.outputs(x_true)
        if self.noise:
            y = f.sensors.noisy(y, np.random.default_rng([self.seed, k]))
        x_pred, variances, u_prev = self.unpack(np.asarray(xk, dtype=float))
        P_pred = self._prior(k, variances)
        x, P = f.correct(x_pred, P_pred, y)
        dx = x - np.concatenate([self.q_ref, np.zeros(self.q_ref.size)])
        u = -self.Kx @ dx - self.Ku @ u_prev
        x_next, P_next = f.predict(x, P, u_prev, u)
        self._runtime.P, self._runtime.k = P_next, k + 1
        return u, self.pack(x_next, np.diag(P_next).copy(), u)


def _initial_covariance(lin: DiscreteLQGDesign, free: np.ndarray) -> np.ndarray:
    """The linear filter's steady a-priori covariance in Cartesian coordinates (2nf, 2nf)."""
    kalman, r = lin.controller.kalman, lin.minimal.order
    basis = kalman.basis[:, :r][free]
    return basis @ kalman.P[:r, :r] @ basis.T


def extended_lqg(model, sensors, period, *, process_noise=None, delay=0.0, Q=None, R=None,
                 effort=1.0, order=None, seed=0, noise=True, substeps=1,
                 cost: str = "exact", expected_load=None, damping=None,
                 d_scale=None) -> ExtendedLQGDesign:
    """A sampled controller with an extended Kalman filter on the nonlinear model and the
    discrete LQR gain of :func:`tenscontrol.discrete_lqg` (module docstring).

    Parameters
    ----------
    model, sensors, period, process_noise, delay, Q, R, effort, order, seed, noise
        As for :func:`tenscontrol.discrete_lqg` (rigid bars): the same gain, readings and
        white nodal-force noise; the filter's process noise is :func:`process_covariance`
        of `model` in Cartesian coordinates. The EKF has no load states: a `process_noise`
        not given is derived as :func:`tenscontrol.lqg`'s, ``F^2 / (n_d w)`` of `expected_load`.
    expected_load : ExpectedLoad, optional
        As for :func:`tenscontrol.lqg`; the design's ``linear.tuning`` says what was used.
    substeps : int
        Runge-Kutta steps of the prediction per held piece of the period (one or two: from
        ``t_k`` to ``t_k + delay`` and on).
    cost : {"exact", "rectangle"}
        The sampled-data cost of the LQR gain, as for :func:`tenscontrol.discrete_lqg`.
    damping, d_scale
        The damping target of the gain, as for :func:`tenscontrol.lqr`.

    Returns
    -------
    ExtendedLQGDesign
        Its ``controller`` is the :class:`ExtendedLQG` (before issue 30 extended_lqg returned
        it: its attributes are still reached through the design, with a DeprecationWarning),
        whose prior is the operating point with the linear filter's steady covariance; its
        ``linear`` the :func:`tenscontrol.discrete_lqg` design whose gain it uses.
    """
    if getattr(model, "bars", "rigid") != "rigid":
        raise ValueError("extended_lqg: model must be a rigid-bar LinearModel (the filter "
                         f"predicts with the rigid-bar model), got bars={model.bars!r}")
    substeps = validation.integer("extended_lqg: substeps", substeps, minimum=1)
    w, _, load = check_noise("extended_lqg", process_noise, None, expected_load)
    tuning = None
    if w is None:       # the white-force rule needs the reduced model's lowest mode
        behind = lqr(model, Q=Q, R=R, effort=effort, order=order)
        A, _, E = reduced_model(behind)
        tuning = noise_tuning(model, A, E, behind.minimal.basis, expected_load=load,
                              load_states=False)
        tuning = with_reach(tuning, behind, sensor_measurement(model, sensors).C
                            @ behind.minimal.basis, sensors)
        w = tuning.process_noise
    lin = discrete_lqg(model, sensors, period, process_noise=w, delay=delay, Q=Q,
                       R=R, effort=effort, order=order, seed=seed, noise=noise, cost=cost,
                       damping=damping, d_scale=d_scale)
    lin = lin if tuning is None else replace(lin, tuning=tuning)
    process_noise = w
    law, r = lin.controller, lin.minimal.order
    # the gain on z = left_inverse (x - x*), the reduced coordinates the filter's basis spans
    Kx = law.K[:, :r] @ lin.minimal.left_inverse
    Ku = law.K[:, law.K.shape[1] - law.strings.size:]
    meas = law.kalman.measurement
    T, d = law.period, law.delay
    ekf = ExtendedKalman(sensors, T, process_covariance(model, T, process_noise), substeps, d,
                         law.strings, law.gamma_ref, law.kind, meas.held, meas.gamma_held)
    P0 = _initial_covariance(lin, ekf.free)
    ctrl = ExtendedLQG(law.strings, law.gamma_ref, law.kind, T, d, Kx, Ku, meas.q_ref, ekf, P0,
                       int(seed), bool(noise))
    return ExtendedLQGDesign(ctrl, lin)
