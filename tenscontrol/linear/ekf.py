"""An extended Kalman filter on the nonlinear rigid-bar model, for motions too large for the
linear filter of :func:`tenscontrol.discrete_lqg` (issue 23, item 3).

State ``x = [q; qd]`` (2nq,) in Cartesian coordinates. One period T:

- prediction: ``x_k+1|k = F(x_k|k)``, the rigid-bar model (:func:`tenscontrol.accelerations`,
  the same constraint forces as ``simulate``) integrated over T by `substeps` classical
  Runge-Kutta steps, no load (the loads are the process noise);
- its Jacobian ``dF/dx`` by central differences of F over the free coordinates (step `fd_step`
  times max(1, |x_i|)): the whole period's map, so the linearization follows the estimate;
- ``P_k+1|k = Fx P Fx^T + Qd`` with ``Qd = T * G W G^T``, G the free coordinates' velocity
  rows scaled by the inverse lumped mass (white nodal forces of density W [N^2 s]), plus a
  small position part;
- update with the sensors' ``h(q, qd)`` and its analytic Jacobian
  :meth:`SensorSet.output_matrices` (Joseph form);
- projection onto the bar lengths after each update: Gauss-Newton steps
  ``q <- q - J^+ g(q)`` on ``g_k = |b_k|^2 - L_k^2`` with J the bar rows of the constraint
  Jacobian on the free coordinates (the minimum-norm correction), then ``qd <- qd - J^+ J qd``
  (the velocity onto the constraints' tangent space). The covariance is not projected.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tenscontrol.mechanics.dynamics import accelerations
from tenscontrol.mechanics.rigid.model import constraint_jacobian
from tenscontrol.mechanics.sensors import SensorSet
from tenscontrol.model.tables import Presentable, titled_table

__all__ = ["ExtendedKalman", "extended_kalman"]


@dataclass(frozen=True, eq=False)
class ExtendedKalman(Presentable):
    """Extended Kalman filter on the rigid-bar model (module docstring).

    Attributes
    ----------
    sensors : SensorSet
        The measured signals ``h(q, qd)`` (absolute values, e.g. lengths [m]); std > 0.
    period : float
        Sample period T [s].
    Qd : ndarray, shape (2nf, 2nf)
        Process-noise covariance per period on the free coordinates [q; qd].
    substeps : int
        Runge-Kutta steps per period.
    fd_step : float
        Relative step of the central differences of the prediction.
    """

    sensors: SensorSet
    period: float
    Qd: np.ndarray
    substeps: int = 4
    fd_step: float = 1e-6

    @property
    def structure(self):
        return self.sensors.structure

    @property
    def free(self) -> np.ndarray:
        """Indices of the free coordinates of x = [q; qd], shape (2nf,)."""
        f, nq = self.structure.free_coordinates, 3 * self.structure.n_nodes
        return np.concatenate([f, nq + f])

    def __repr__(self) -> str:
        return (f"ExtendedKalman(states={self.Qd.shape[0]}, signals={self.sensors.n_signals}, "
                f"period={self.period:.4g} s, substeps={self.substeps})")

    def summary(self) -> str:
        """The filter's sizes, period, prediction steps and process noise as a table."""
        return titled_table("ExtendedKalman", [
            ("states x signals", f"{self.Qd.shape[0]} x {self.sensors.n_signals}"),
            ("period", f"{self.period:.4g} s"),
            ("prediction", f"{self.substeps} RK4 steps per period, Jacobian by central "
                           f"differences (step {self.fd_step:.0e})"),
            ("trace Qd", f"{np.trace(self.Qd):.4g}")])

    def _xdot(self, x: np.ndarray) -> np.ndarray:
        nq = x.size // 2
        qdd, _ = accelerations(self.structure, x[:nq], x[nq:])
        return np.concatenate([x[nq:], qdd])

    def propagate(self, x: np.ndarray) -> np.ndarray:
        """F(x): the model over one period (RK4, `substeps` steps), shape (2nq,)."""
        h = self.period / self.substeps
        for _ in range(self.substeps):
            k1 = self._xdot(x)
            k2 = self._xdot(x + 0.5 * h * k1)
            k3 = self._xdot(x + 0.5 * h * k2)
            k4 = self._xdot(x + h * k3)
            x = x + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        return x

    def transition(self, x: np.ndarray) -> np.ndarray:
        """dF/dx on the free coordinates by central differences, shape (2nf, 2nf)."""
        cols = []
        for i in self.free:
            step = self.fd_step * max(1.0, abs(x[i]))
            e = np.zeros_like(x)
            e[i] = step
            cols.append((self.propagate(x + e) - self.propagate(x - e))[self.free] / (2 * step))
        return np.array(cols).T

    def output_jacobian(self, x: np.ndarray) -> np.ndarray:
        """dh/dx on the free coordinates (analytic), shape (ny, 2nf)."""
        nq = x.size // 2
        Cq, Cv, _ = self.sensors.output_matrices(x[:nq], x[nq:])
        return np.hstack([Cq, Cv])[:, self.free]

    def project(self, x: np.ndarray, iterations: int = 5) -> np.ndarray:
        """x with the bar lengths restored and the velocity tangent to them (module
        docstring), shape (2nq,)."""
        s, nq = self.structure, x.size // 2
        q, qd, f = x[:nq].copy(), x[nq:].copy(), s.free_coordinates
        ends = np.array([b.nodes for b in s.bars])
        L2 = np.asarray(s.bar_lengths, dtype=float) ** 2
        nfix = s.fixed_coordinates.size
        for _ in range(iterations):
            n = q.reshape(-1, 3)
            g = np.sum((n[ends[:, 1]] - n[ends[:, 0]]) ** 2, axis=1) - L2
            J = constraint_jacobian(s, q)[nfix:][:, f]
            q[f] -= np.linalg.lstsq(J, g, rcond=None)[0]
        J = constraint_jacobian(s, q)[nfix:][:, f]
        qd[f] -= np.linalg.lstsq(J, J @ qd[f], rcond=None)[0]
        return np.concatenate([q, qd])

    def step(self, x_pred, P_pred, y) -> tuple:
        """The update at one sample: (x_k|k, P_k|k) from the prediction and the reading y."""
        nq = x_pred.size // 2
        H = self.output_jacobian(x_pred)
        V = np.diag(self.sensors.std[self.sensors.signal_sensor] ** 2)
        S = H @ P_pred @ H.T + V
        M = np.linalg.solve(S, H @ P_pred).T
        x = x_pred.copy()
        x[self.free] += M @ (y - self.sensors.outputs(x_pred[:nq], x_pred[nq:]))
        IKH = np.eye(P_pred.shape[0]) - M @ H
        return self.project(x), IKH @ P_pred @ IKH.T + M @ V @ M.T

    def filter(self, Y: np.ndarray, x0: np.ndarray, P0: np.ndarray) -> np.ndarray:
        """Filtered states ``x_k|k`` (K, 2nq) of readings Y (K, ny) from the prior x0 (2nq,)
        with covariance P0 (2nf, 2nf)."""
        x, P, out = np.asarray(x0, dtype=float), np.asarray(P0, dtype=float), []
        for y in np.asarray(Y, dtype=float):
            x, P = self.step(x, P, y)
            out.append(x)
            Fx = self.transition(x)
            x, P = self.propagate(x), Fx @ P @ Fx.T + self.Qd
        return np.array(out)


def extended_kalman(sensors: SensorSet, period: float, *, process_noise: float,
                    substeps: int = 4) -> ExtendedKalman:
    """An :class:`ExtendedKalman` with white nodal forces of density `process_noise`
    [N^2 s] on the free coordinates: ``Qd = T [[T^2/3 G, T/2 G], [T/2 G, G]]`` with
    ``G = W / m_i^2`` (lumped masses m_i: half of each bar's mass at each end), the
    covariance of a constant-acceleration noise integrated over the period."""
    if not isinstance(sensors, SensorSet):
        raise TypeError(f"extended_kalman: sensors must be a tenscontrol SensorSet, got "
                        f"{type(sensors).__name__}")
    if np.any(sensors.std <= 0):
        raise ValueError("extended_kalman: every sensor needs a noise std > 0")
    if not (period > 0 and process_noise > 0 and int(substeps) >= 1):
        raise ValueError(f"extended_kalman: period and process_noise must be > 0 and substeps "
                         f">= 1, got {period}, {process_noise}, {substeps}")
    s = sensors.structure
    mass = np.zeros(s.n_nodes)
    for b, m in zip(s.bars, s.bar_masses):
        mass[list(b.nodes)] += 0.5 * m
    m = np.repeat(mass, 3)[s.free_coordinates]
    G = np.diag(float(process_noise) / np.maximum(m, 1e-12) ** 2)
    T = float(period)
    Qd = T * np.block([[T**2 / 3 * G, T / 2 * G], [T / 2 * G, G]])
    return ExtendedKalman(sensors, T, Qd, int(substeps))
