"""Estimators as plain matrices: the sensors' measurement, a discrete Kalman filter and the
sampled LQG controller built on them (designed by :mod:`tenscontrol.estimation.lqg`).

- :class:`SensorMeasurement`: ``y_m = h(q, qd) - h(q*, 0)``, the noiseless signals of a
  :class:`tenscontrol.mechanics.sensors.SensorSet` about the operating point, as an
  :class:`tenscontrol.OutputFeedback` measures them. Load cells on commanded strings read the
  member law (``kind="passive"``) or the operating force density (``kind="control"``): the
  command's own part ``D u`` is known to the controller and taken out, so y_m depends on the
  state only and its linearization is the model's ``C`` of ``LinearModel.with_sensors``.
- :class:`DiscreteKalman`: the current-estimate Kalman filter on the reduced coordinates z of a
  minimal realization (``x - x* = basis @ z``), sampled with a zero-order hold and a
  computation delay.
- :class:`DiscreteLQG`: the sampled controller ``update(k, t, q, qd, xk) -> (u, x_next)``
  (the protocol of the sampled closed loop): at ``t_k = k period`` it reads the sensors with
  noise from its own Generator (``default_rng([seed, k])``: the same reading for the same k),
  corrects the estimate, commands ``u_k = -K [z_k|k; u_k-1]`` (applied from ``t_k + delay`` to
  ``t_k+1 + delay``) and predicts ``z_k+1|k``.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field, fields

import numpy as np

from tenscontrol.control.sampled import SampledController, check_timing, sampled_table
from tenscontrol.mechanics.sensors import SensorSet
from tenscontrol.model.tables import Presentable, titled_table

__all__ = ["DiscreteKalman", "DiscreteLQG", "SensorMeasurement"]


def _freeze(obj) -> None:
    for f in fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, np.ndarray):
            value = np.array(value, dtype=np.int64 if value.dtype.kind in "iu" else float)
            value.setflags(write=False)
            object.__setattr__(obj, f.name, value)


@dataclass(frozen=True, eq=False)
class SensorMeasurement(Presentable):
    """Measured signals ``y_m = h(q, qd) - y_ref`` of a sensor set (an OutputFeedback's
    measurement).

    Attributes
    ----------
    sensors : SensorSet
    C : ndarray, shape (ny, 2nq)
        The linearization of y_m on x = [q; qd] (``LinearModel.with_sensors(sensors).C``).
    q_ref : ndarray, shape (nq,)
        The operating point q* [m].
    y_ref : ndarray, shape (ny,)
        ``h(q*, 0)`` in the signals' units.
    held : ndarray of int
        Strings whose force density is held at ``gamma_held`` (``kind="control"``: the
        commanded strings); the others follow their member law.
    gamma_held : ndarray, shape (n_strings,)
        Force densities [N/m] of the held strings (the others' entries unused).
    """

    sensors: SensorSet
    C: np.ndarray
    q_ref: np.ndarray
    y_ref: np.ndarray
    held: np.ndarray
    gamma_held: np.ndarray

    def __post_init__(self):
        _freeze(self)

    @property
    def names(self) -> tuple:
        return self.sensors.names

    @property
    def n_signals(self) -> int:
        return self.C.shape[0]

    def __repr__(self) -> str:
        return (f"SensorMeasurement(signals={self.n_signals}, sensors={self.sensors.n_sensors}, "
                f"held_strings={self.held.size})")

    def summary(self) -> str:
        """The measured signals, their sensors and the held strings as a table."""
        return titled_table("SensorMeasurement", [
            ("signals", f"{self.n_signals}"), ("sensors", f"{self.sensors.n_sensors}"),
            ("held strings", f"{self.held.size}"),
            ("names", textwrap.shorten(" ".join(self.names), 70, placeholder=" ..."))])

    def signals(self, q, qd) -> np.ndarray:
        """``h(q, qd)`` without noise, shape (ny,)."""
        if self.held.size:
            return self.sensors.outputs(q, qd, self.gamma_held, self.held)
        return self.sensors.outputs(q, qd)

    def __call__(self, q, qd=None) -> np.ndarray:
        """The measured deviations at (q, qd), shape (ny,), without noise."""
        return self.signals(q, qd) - self.y_ref

    def read(self, q, qd, rng: np.random.Generator) -> np.ndarray:
        """The deviations with the sensors' noise model (white noise, bias, quantization)."""
        return self.sensors.noisy(self.signals(q, qd), rng) - self.y_ref


@dataclass(frozen=True, eq=False)
class DiscreteKalman(Presentable):
    """The current-estimate Kalman filter on reduced coordinates, sampled at `period`.

    ``z_k+1 = Phi z_k + Gamma0 u_k + Gamma1 u_k-1 + w_k``, ``y_k = Cr z_k + v_k``; the
    filter corrects ``z_k|k = z_k|k-1 + M (y_k - Cr z_k|k-1)`` and predicts
    ``z_k+1|k = Phi z_k|k + Gamma0 u_k + Gamma1 u_k-1``.

    Attributes
    ----------
    Phi : ndarray, shape (r, r)
    Gamma0, Gamma1 : ndarray, shape (r, nu)
        The zero-order hold of u_k (from ``t_k + delay``) and of u_k-1 (until then).
    Cr : ndarray, shape (ny, r)
    M : ndarray, shape (r, ny)
        The current-estimate gain ``P Cr^T (Cr P Cr^T + V)^-1``.
    P : ndarray, shape (r, r)
        Steady a-priori error covariance (python-control's ``dlqe``).
    basis : ndarray, shape (2nq, r)
        ``x - x* ~= basis @ z``.
    measurement : SensorMeasurement
    period, delay : float
        [s].
    """

    Phi: np.ndarray
    Gamma0: np.ndarray
    Gamma1: np.ndarray
    Cr: np.ndarray
    M: np.ndarray
    P: np.ndarray
    basis: np.ndarray
    measurement: SensorMeasurement
    period: float
    delay: float

    def __post_init__(self):
        _freeze(self)

    def __repr__(self) -> str:
        return (f"DiscreteKalman(states={self.Phi.shape[0]}, signals={self.Cr.shape[0]}, "
                f"period={self.period:.4g} s, delay={self.delay:.4g} s)")

    def summary(self) -> str:
        """Sizes, timing, the gain and the error covariance as a table."""
        r, ny = self.M.shape
        # the a-priori error obeys e_k+1 = Phi (I - M Cr) e_k: its spectral radius is the
        # filter's rate of convergence per sample
        error = self.Phi @ (np.eye(r) - self.M @ self.Cr)
        rho = float(np.abs(np.linalg.eigvals(error)).max()) if r else 0.0
        return titled_table("DiscreteKalman", [
            ("states x signals", f"{r} x {ny}"), ("inputs", f"{self.Gamma0.shape[1]}"),
            ("period", f"{self.period:.4g} s"), ("delay", f"{self.delay:.4g} s"),
            ("||M||_F", f"{np.linalg.norm(self.M):.4g}"), ("trace P", f"{np.trace(self.P):.4g}"),
            ("error spectral radius", f"{rho:.6g}")])

    def correct(self, z_pred: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``z_k|k`` from the prediction and the measured deviations y (ny,)."""
        return z_pred + self.M @ (y - self.Cr @ z_pred)

    def predict(self, z: np.ndarray, u: np.ndarray, u_prev: np.ndarray) -> np.ndarray:
        """``z_k+1|k`` from ``z_k|k``, the command u_k and the one before it."""
        return self.Phi @ z + self.Gamma0 @ u + self.Gamma1 @ u_prev

    def states(self, z: np.ndarray) -> np.ndarray:
        """The Cartesian deviation ``x - x* = basis @ z`` (2nq,) or (..., 2nq)."""
        return z @ self.basis.T

    def filter(self, Y: np.ndarray, U: np.ndarray | None = None) -> np.ndarray:
        """Filtered estimates ``z_k|k`` (K, r) of measured deviations Y (K, ny) with known
        commands U (K, nu) (zero by default), from ``z_0|-1 = 0``."""
        Y = np.asarray(Y, dtype=float)
        nu = self.Gamma0.shape[1]
        U = np.zeros((Y.shape[0], nu)) if U is None else np.asarray(U, dtype=float)
        z, u_prev, out = np.zeros(self.Phi.shape[0]), np.zeros(nu), []
        for y, u in zip(Y, U):
            zf = self.correct(z, y)
            out.append(zf)
            z, u_prev = self.predict(zf, u, u_prev), u
        return np.array(out).reshape(Y.shape[0], -1)


@dataclass(frozen=True, eq=False)
class DiscreteLQG(SampledController):
    """A sampled LQG controller: a :class:`DiscreteKalman` and a discrete LQR gain on
    ``[z_k|k; u_k-1]``, with the attributes and methods of the sampled closed loop's
    controllers.

    Attributes
    ----------
    strings : ndarray of int, shape (nu,)
    gamma_ref : ndarray, shape (nu,)
        [N/m].
    kind : {"passive", "control"}
    period, delay : float
        Sample period [s] and computation delay (0 <= delay < period) [s].
    K : ndarray, shape (nu, r + nu)
        ``u_k = -K [z_k|k; u_k-1]`` [N/m] (z_k|k ends with the load states of
        ``discrete_lqg(load_drift=)``, fed forward).
    kalman : DiscreteKalman
    seed : int
        The noise of the reading at sample k comes from ``default_rng([seed, k])``.
    noise : bool
        Read the sensors with their noise model (True) or noiseless.
    """

    strings: np.ndarray
    gamma_ref: np.ndarray
    # field(): no default, although SampledController's class attributes give kind and delay one
    kind: str = field()
    period: float = field()
    delay: float = field()
    K: np.ndarray
    kalman: DiscreteKalman
    seed: int = 0
    noise: bool = True

    def __post_init__(self):
        _freeze(self)
        period, delay = check_timing(self.period, self.delay, "DiscreteLQG")
        object.__setattr__(self, "period", period)
        object.__setattr__(self, "delay", delay)

    @property
    def n_states(self) -> int:
        return self.K.shape[1]

    def __repr__(self) -> str:
        return (f"DiscreteLQG(kind={self.kind!r}, commanded_strings={self.strings.size}, "
                f"states={self.n_states}, signals={self.kalman.Cr.shape[0]}, "
                f"period={self.period:.4g} s, delay={self.delay:.4g} s)")

    def summary(self) -> str:
        """The law, timing, the measured signals and the gains' sizes as a table."""
        return sampled_table(self, ("measured signals", f"{self.kalman.Cr.shape[0]}"),
                              ("||K||_F", f"{np.linalg.norm(self.K):.4g}"),
                              ("||M||_F (Kalman)", f"{np.linalg.norm(self.kalman.M):.4g}"),
                              ("sensor noise", f"{'on' if self.noise else 'off'} (seed "
                                               f"{self.seed})"),
                              law="u_k = -K [z_k|k; u_k-1]")

    def initial_state(self) -> np.ndarray:
        """``[z_0|-1; u_-1] = 0``, shape (n_states,)."""
        return np.zeros(self.n_states)

    def update(self, k: int, t: float, q: np.ndarray, qd: np.ndarray,
               xk: np.ndarray) -> tuple:
        """The command u_k (nu,) [N/m] and the next state from the sampled state at t_k."""
        meas, r = self.kalman.measurement, self.kalman.Phi.shape[0]
        y = (meas.read(q, qd, np.random.default_rng([self.seed, int(k)])) if self.noise
             else meas(q, qd))
        z, u_prev = self.kalman.correct(xk[:r], y), xk[r:]
        u = -self.K @ np.concatenate([z, u_prev])
        return u, np.concatenate([self.kalman.predict(z, u, u_prev), u])
