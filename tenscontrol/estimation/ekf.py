"""An extended Kalman filter on the nonlinear rigid-bar model, for motions too large for the
linear filter of :func:`tenscontrol.discrete_lqg` (issue 23, item 3).

State ``x = [q; qd]`` (2nq,) in Cartesian coordinates, covariance P on the free coordinates
(2nf, 2nf). One period T, commands held as in the sampled loop (u_k-1 until ``t_k + delay``,
u_k after it):

- prediction: ``x_k+1|k = Pi(F(x_k|k))``. F integrates the rigid-bar model
  (:func:`tenscontrol.accelerations`, the simulator's constraint forces) with the commanded
  strings' forces from the simulator's own actuation law
  (:func:`tenscontrol.mechanics.actuation.actuated_forces`: ``law + u`` or ``gamma_ref + u``,
  clipped to ``[0, gamma_max]``, the damper of a commanded string on while it pulls) by
  `substeps` classical Runge-Kutta steps per held piece, no load (the loads are the process
  noise); Pi puts the result back on the bar lengths (Gauss-Newton ``q <- q - J^+ g(q)``,
  then ``qd <- qd - J^+ J qd``);
- ``P_k+1|k = D Fx (P Fx^T + Qd) D^T`` with Fx the exact derivative of the Runge-Kutta map
  (its stages' Jacobians from :func:`tenscontrol.linearize` at the stage states, the
  commands' force derivatives added,
  :func:`tenscontrol.mechanics.actuation.actuation_jacobians`) and
  ``D = [[Pi_t, 0], [-J^+ X Pi_t, Pi_t]]`` that of the projection (``Pi_t = I - J^+ J`` the
  tangent projector, ``X = d(J qd)/dq``), so P stays on the constraints' tangent space;
- update with the sensors' ``h(q, qd)`` and their analytic Jacobian
  :meth:`SensorSet.output_matrices` (Joseph form), then Pi.

Qd is the process noise of white nodal forces of density W on every free coordinate through
the model's ``E`` at the operating point (Van Loan's integral, as :func:`discrete_lqg` forms
its own on the reduced coordinates).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from tenscontrol import validation
from tenscontrol.control.controllers import check_kind
from tenscontrol.control.sampled import check_timing
from tenscontrol.linear.linearization import linearize
from tenscontrol.linear.sampling import van_loan
from tenscontrol.mechanics.actuation import (ActuatorRecord, actuated_forces,
                                             actuation_jacobians, actuator_record)
from tenscontrol.mechanics.dynamics import accelerations
from tenscontrol.mechanics.rigid.model import constraint_jacobian
from tenscontrol.mechanics.sensors import SensorSet
from tenscontrol.model.tables import Presentable, titled_table

__all__ = ["ExtendedKalman", "extended_kalman", "process_covariance"]

_EMPTY_INT = np.zeros(0, dtype=np.int64)
_NO_VELOCITIES = np.zeros(0)


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
        Runge-Kutta steps per held piece of the period.
    delay : float
        Computation delay [s]: u_k acts from ``t_k + delay`` (0 <= delay < period).
    strings : ndarray of int, shape (nu,)
        The commanded strings (none: the filter of an uncontrolled structure).
    gamma_ref : ndarray, shape (nu,)
        Their operating force densities [N/m] (``kind="control"``).
    kind : {"passive", "control"}
        How a command acts, as in the simulator: ``law + u`` or ``gamma_ref + u``.
    held : ndarray of int
        Strings whose load cells read ``gamma_held`` (see
        :class:`tenscontrol.control.estimators.SensorMeasurement`); none by default.
    gamma_held : ndarray, shape (n_strings,) or (0,)
        Force densities of the held strings [N/m].
    """

    sensors: SensorSet
    period: float
    Qd: np.ndarray
    substeps: int = 1
    delay: float = 0.0
    strings: np.ndarray = field(default_factory=lambda: _EMPTY_INT)
    gamma_ref: np.ndarray = field(default_factory=lambda: np.zeros(0))
    kind: str = "passive"
    held: np.ndarray = field(default_factory=lambda: _EMPTY_INT)
    gamma_held: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self):
        for name in ("Qd", "strings", "gamma_ref", "held", "gamma_held"):
            value = np.array(getattr(self, name),
                             dtype=np.int64 if name in ("strings", "held") else float)
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        period, delay = check_timing(self.period, self.delay, "ExtendedKalman")
        object.__setattr__(self, "period", period)
        object.__setattr__(self, "delay", delay)
        check_kind(self.kind)
        n = 2 * self.structure.free_coordinates.size
        if self.Qd.shape != (n, n) or self.gamma_ref.shape != self.strings.shape:
            raise ValueError(f"ExtendedKalman: Qd must be ({n}, {n}) (the free coordinates' "
                             f"[q; qd]) and gamma_ref one value per commanded string "
                             f"({self.strings.size}), got {self.Qd.shape} and "
                             f"{self.gamma_ref.shape}")

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
                f"commanded_strings={self.strings.size}, period={self.period:.4g} s, "
                f"substeps={self.substeps})")

    def summary(self) -> str:
        """The filter's sizes, period, prediction steps and process noise as a table."""
        return titled_table("ExtendedKalman", [
            ("states x signals", f"{self.Qd.shape[0]} x {self.sensors.n_signals}"),
            ("commanded strings", f"{self.strings.size} ({self.kind})"),
            ("period, delay", f"{self.period:.4g} s, {self.delay:.4g} s"),
            ("prediction", f"{self.substeps} RK4 step(s) per held piece, analytic Jacobian "
                           "(linearize at the stages)"),
            ("trace Qd", f"{np.trace(self.Qd):.4g}")])

    # ---- the model ----------------------------------------------------------------------------

    @cached_property
    def _actuation(self) -> ActuatorRecord:
        """The commanded strings as the simulator's actuation law reads them
        (:func:`tenscontrol.mechanics.actuation.actuator_record`)."""
        return actuator_record(self.structure, self.strings, self.gamma_ref, self.kind)

    def command_forces(self, q: np.ndarray, u, qd=None) -> tuple[np.ndarray, np.ndarray]:
        """Nodal forces (nq,) [N] of the command u (nu,) [N/m] at q (and qd: the dampers
        switched as the simulator switches them; none: as the kernels have them) and their
        derivative d f/dq (nq, nq): the simulator's law
        (:func:`tenscontrol.mechanics.actuation.actuated_forces`)."""
        f, dfdq, _ = self._command(np.asarray(q, dtype=float), self._u(u),
                                   _NO_VELOCITIES if qd is None else np.asarray(qd, float))
        return f, dfdq

    def _command(self, q, u, qd) -> tuple:
        """(f (nq,), d f/dq, d f/dqd (nq, nq)) of the command u at (q, qd)."""
        if not self.strings.size:
            return np.zeros(q.size), np.zeros((q.size, q.size)), np.zeros((q.size, q.size))
        f, n = np.empty(q.size), self.strings.size
        q, qd = np.ascontiguousarray(q), np.ascontiguousarray(qd)
        u = np.ascontiguousarray(u, dtype=float)
        actuated_forces(q, qd, u, self._actuation, f, np.empty(n), np.empty(n))
        return (f, *actuation_jacobians(self._actuation, q, qd, u))

    def derivative(self, x: np.ndarray, u=None) -> np.ndarray:
        """``xdot = [qd; qdd(q, qd, u)]`` (2nq,)."""
        return self._stage(x, self._u(u), False)[0]

    def jacobian(self, x: np.ndarray, u=None) -> np.ndarray:
        """d xdot / dx on the free coordinates (2nf, 2nf): linearize's A at x (the commands'
        forces as loads) plus ``E [d f/dq, d f/dqd]``."""
        return self._stage(x, self._u(u), True)[1]

    def _stage(self, x: np.ndarray, u: np.ndarray, tangent: bool) -> tuple:
        """(xdot (2nq,), its Jacobian on the free coordinates or None) at x."""
        nq = x.size // 2
        f, dfdq, dfdqd = self._command(x[:nq], u, x[nq:])
        qdd, _ = accelerations(self.structure, x[:nq], x[nq:], loads=f)
        if not tangent:
            return np.concatenate([x[nq:], qdd]), None
        with warnings.catch_warnings():
            # a stage point is off the bar lengths to O(h^2) and may be at rest out of
            # equilibrium: the model is wanted there as it is
            warnings.simplefilter("ignore")
            model = linearize(self.structure, q=x[:nq], qd=x[nq:], loads=f, kind="passive")
        A = np.array(model.A)
        A[nq:, :nq] += model.E[nq:] @ dfdq
        A[nq:, nq:] += model.E[nq:] @ dfdqd
        return np.concatenate([x[nq:], qdd]), A[np.ix_(self.free, self.free)]

    def _u(self, u) -> np.ndarray:
        return np.zeros(self.strings.size) if u is None else np.asarray(u, dtype=float)

    def _pieces(self, u_prev, u) -> list:
        """[(duration, command)] of the held pieces of one period."""
        pieces = [(self.delay, self._u(u_prev))] if self.delay > 0 else []
        return pieces + [(self.period - self.delay, self._u(u))]

    def propagate(self, x: np.ndarray, u_prev=None, u=None, tangent: bool = False):
        """F(x): the model over one period (RK4), shape (2nq,); with `tangent`, also its
        derivative on the free coordinates (2nf, 2nf)."""
        x = np.asarray(x, dtype=float)
        free = self.free
        Fx = np.eye(free.size)
        for duration, command in self._pieces(u_prev, u):
            h = duration / self.substeps
            for _ in range(self.substeps):
                x, step = self._rk4(x, command, h, tangent)
                Fx = step @ Fx if tangent else Fx
        return (x, Fx) if tangent else x

    def _rk4(self, x, u, h, tangent):
        """One classical Runge-Kutta step and (with `tangent`) its exact derivative: the
        stages' ``dk_i = A(point_i) (I + c_i h dk_i-1)``."""
        eye = np.eye(self.free.size)
        k, dk, total, dtotal = None, None, np.zeros_like(x), np.zeros_like(eye)
        for c, w in ((0.0, 1.0), (0.5, 2.0), (0.5, 2.0), (1.0, 1.0)):
            k, A = self._stage(x if k is None else x + c * h * k, u, tangent)
            total += w * k
            if tangent:
                dk = A if dk is None else A @ (eye + c * h * dk)
                dtotal += w * dk
        return x + h / 6.0 * total, (eye + h / 6.0 * dtotal) if tangent else None

    def transition(self, x: np.ndarray, u_prev=None, u=None) -> np.ndarray:
        """dF/dx on the free coordinates (analytic), shape (2nf, 2nf)."""
        return self.propagate(x, u_prev, u, tangent=True)[1]

    # ---- the constraints ----------------------------------------------------------------------

    def _bar_rows(self, v: np.ndarray) -> np.ndarray:
        """The bar rows of the constraint Jacobian at v on the free coordinates (nb, nf); at
        v = qd they are ``X = d(J qd)/dq`` (J is linear in q)."""
        s = self.structure
        return constraint_jacobian(s, v)[s.fixed_coordinates.size:][:, s.free_coordinates]

    def project(self, x: np.ndarray, iterations: int = 5) -> np.ndarray:
        """x with the bar lengths restored and the velocity tangent to them (module
        docstring), shape (2nq,)."""
        s, nq = self.structure, x.size // 2
        q, qd, f = x[:nq].copy(), x[nq:].copy(), s.free_coordinates
        ends = np.array([b.nodes for b in s.bars]).reshape(-1, 2)
        L2 = np.asarray(s.bar_lengths, dtype=float) ** 2
        for _ in range(iterations):
            n = q.reshape(-1, 3)
            g = np.sum((n[ends[:, 1]] - n[ends[:, 0]]) ** 2, axis=1) - L2
            q[f] -= np.linalg.lstsq(self._bar_rows(q), g, rcond=None)[0]
        J = self._bar_rows(q)
        qd[f] -= np.linalg.lstsq(J, J @ qd[f], rcond=None)[0]
        return np.concatenate([q, qd])

    def projection_jacobian(self, x: np.ndarray) -> np.ndarray:
        """The derivative of :meth:`project` at a state x on the constraints (2nf, 2nf):
        ``[[Pi_t, 0], [-J^+ X Pi_t, Pi_t]]``."""
        nq = x.size // 2
        J = self._bar_rows(x[:nq])
        Jp = np.linalg.pinv(J, rcond=1e-10)
        Pi = np.eye(J.shape[1]) - Jp @ J
        X = self._bar_rows(x[nq:])
        return np.block([[Pi, np.zeros_like(Pi)], [-Jp @ X @ Pi, Pi]])

    # ---- the filter ---------------------------------------------------------------------------

    def outputs(self, x: np.ndarray) -> np.ndarray:
        """The noiseless signals h(x) (ny,), held strings at gamma_held."""
        nq = x.size // 2
        if self.held.size:
            return self.sensors.outputs(x[:nq], x[nq:], self.gamma_held, self.held)
        return self.sensors.outputs(x[:nq], x[nq:])

    def output_jacobian(self, x: np.ndarray) -> np.ndarray:
        """dh/dx on the free coordinates (analytic), shape (ny, 2nf)."""
        nq = x.size // 2
        held = (self.gamma_held, self.held) if self.held.size else (None, None)
        Cq, Cv, _ = self.sensors.output_matrices(x[:nq], x[nq:], *held)
        return np.hstack([Cq, Cv])[:, self.free]

    def correct(self, x_pred, P_pred, y) -> tuple:
        """The update at one sample: (x_k|k, P_k|k) from the prediction and the reading y
        (absolute signals, ny)."""
        H = self.output_jacobian(x_pred)
        V = np.diag(self.sensors.std[self.sensors.signal_sensor] ** 2)
        S = H @ P_pred @ H.T + V
        M = np.linalg.solve(S, H @ P_pred).T
        x = np.array(x_pred, dtype=float)
        x[self.free] += M @ (np.asarray(y, dtype=float) - self.outputs(x_pred))
        IKH = np.eye(P_pred.shape[0]) - M @ H
        P = IKH @ P_pred @ IKH.T + M @ V @ M.T
        return self.project(x), 0.5 * (P + P.T)

    def predict(self, x, P, u_prev=None, u=None) -> tuple:
        """(x_k+1|k, P_k+1|k) from (x_k|k, P_k|k) and the commands u_k-1, u_k (nu,) [N/m]."""
        x_new, Fx = self.propagate(x, u_prev, u, tangent=True)
        x_new = self.project(x_new)
        D = self.projection_jacobian(x_new)
        P_new = D @ (Fx @ P @ Fx.T + self.Qd) @ D.T
        return x_new, 0.5 * (P_new + P_new.T)

    def filter(self, Y: np.ndarray, x0: np.ndarray, P0: np.ndarray, U=None) -> np.ndarray:
        """Filtered states ``x_k|k`` (K, 2nq) of readings Y (K, ny) from the prior x0 (2nq,)
        with covariance P0 (2nf, 2nf), commands U (K, nu) [N/m] (none by default)."""
        Y = np.asarray(Y, dtype=float)
        U = np.zeros((Y.shape[0], self.strings.size)) if U is None else np.asarray(U, float)
        D = self.projection_jacobian(self.project(np.asarray(x0, dtype=float)))
        x, P, out = self.project(np.asarray(x0, dtype=float)), D @ P0 @ D.T, []
        u_prev = np.zeros(self.strings.size)
        for y, u in zip(Y, U):
            x, P = self.correct(x, P, y)
            out.append(x)
            x, P = self.predict(x, P, u_prev, u)
            u_prev = u
        return np.array(out)


def process_covariance(model, period: float, process_noise: float) -> np.ndarray:
    """Qd (2nf, 2nf): ``int_0^T e^{A s} E W E^T e^{A^T s} ds`` on the free coordinates of a
    :class:`tenscontrol.LinearModel` (Van Loan, 1978), W = `process_noise` [N^2 s] on every
    free coordinate's force."""
    s = model.structure
    f, nq = s.free_coordinates, 3 * s.n_nodes
    free = np.concatenate([f, nq + f])
    G = model.E[free][:, f] * np.sqrt(process_noise)
    return van_loan(model.A[np.ix_(free, free)], G @ G.T, period)


def extended_kalman(sensors: SensorSet, period: float, *, process_noise: float,
                    substeps: int = 1) -> ExtendedKalman:
    """An :class:`ExtendedKalman` of an uncontrolled structure with white nodal forces of
    density `process_noise` [N^2 s] on the free coordinates (:func:`process_covariance` of
    ``linearize(sensors.structure)`` at its nodes).

    Parameters
    ----------
    sensors : SensorSet
        Every sensor needs a noise std > 0.
    period : float
        Sample period [s].
    process_noise : float
        [N^2 s].
    substeps : int
        Runge-Kutta steps per period.
    """
    if not isinstance(sensors, SensorSet):
        raise TypeError(f"extended_kalman: sensors must be a tenscontrol SensorSet, got "
                        f"{type(sensors).__name__}")
    if np.any(sensors.std <= 0):
        raise ValueError("extended_kalman: every sensor needs a noise std > 0")
    T, _ = check_timing(period, 0.0, "extended_kalman")
    w = validation.real("extended_kalman: process_noise", process_noise, positive=True,
                        expected="a positive spectral density [N^2 s]")
    substeps = validation.integer("extended_kalman: substeps", substeps, minimum=1)
    Qd = process_covariance(linearize(sensors.structure), T, w)
    return ExtendedKalman(sensors, T, Qd, substeps)

