"""The one result shape of every synthesis function: a :class:`Design`.

Every synthesis (:func:`tenscontrol.lqr`, :func:`tenscontrol.dlqr`, :func:`tenscontrol.hinfsyn`,
:func:`tenscontrol.lqg`, :func:`tenscontrol.discrete_lqg`, :func:`tenscontrol.extended_lqg`,
:func:`tenscontrol.mpc`, :func:`tenscontrol.shape_change`) returns a frozen design object: the
runtime controller the simulator calls (``.controller``), the design model, the Riccati
solutions and the figures, named as python-control names them: ``K`` the state-feedback gain,
``S`` the regulator's Riccati solution, ``E`` the closed-loop eigenvalues, ``L`` the Kalman
(observer) gain and ``P`` its error covariance. docs/api.md, "Designs", has the table of
functions, result types and fields.

This module holds the base class and the designs of the functions that returned a bare
controller before issue 30 (:func:`discrete_lqg`, :func:`mpc`, :func:`extended_lqg`); for those,
the controller's attributes are still reached through the design, with a DeprecationWarning.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from tenscontrol.design.verdict import DampingVerdict, damping_verdict, lqr_behind, verdict_rows
from tenscontrol.linear.modal import DEFAULT_DAMPING
from tenscontrol.model.tables import Presentable, titled_table, value_range

__all__ = ["Design", "DiscreteLQGDesign", "ExtendedLQGDesign", "MPCDesign"]


@dataclass(frozen=True, eq=False)
class Design(Presentable):
    """Base of every synthesis result.

    Attributes
    ----------
    controller : Controller or SampledController
        What :func:`tenscontrol.simulate` runs (``simulate(..., controller=design)`` takes the
        design too) and :func:`tenscontrol.save_controller` writes.
    """

    controller: object

    # the function whose result was the bare controller before (issue 30): its controller's
    # attributes are forwarded with a DeprecationWarning (None: no forwarding)
    _returned_controller = None

    def __getattr__(self, name: str):
        # only reached when normal lookup fails: the old spelling ``discrete_lqg(...).K`` etc.
        who = type(self)._returned_controller
        if who is None or name.startswith("_"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        controller = self.__dict__.get("controller")
        if controller is None or not hasattr(controller, name):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        warnings.warn(f"{who}(...) returns a design ({type(self).__name__}) since issue 30; "
                      f"read {name!r} from its controller: {who}(...).controller.{name}",
                      DeprecationWarning, stacklevel=2)
        return getattr(controller, name)

    def damping_verdict(self, damping: float = DEFAULT_DAMPING) -> DampingVerdict:
        """The modes this design leaves below `damping` in closed loop, and why
        (:func:`tenscontrol.design.verdict.damping_verdict`): "unreachable", "unobserved",
        "weights", "effort" (with the effort that would damp it) or "sampling".

        Parameters
        ----------
        damping : float
            The damping ratio target, in (0, 1); 2 % by default
            (:data:`tenscontrol.linear.modal.DEFAULT_DAMPING`).
        """
        # computed once per target: a summary (print, a notebook's repr) asks again; the
        # design is immutable, so the verdict cannot go stale
        cache = self.__dict__.setdefault("_verdicts", {})
        key = float(damping)
        if key not in cache:
            cache[key] = damping_verdict(self, damping)
        return cache[key]

    def _verdict_rows(self) -> list:
        """The summary rows of :meth:`damping_verdict` at the default target, or, for a design
        given a damping target (its ``effort_choice``), the weight chosen and the verdict at
        that target."""
        choice = getattr(self, "effort_choice", None)
        if choice is None:          # an LQG, DLQR or MPC: its LQR's
            choice = getattr(lqr_behind(self), "effort_choice", None)
        if choice is None:
            return verdict_rows(self, self.damping_verdict, hint=True)
        return ([("damping target", choice.line())]
                + verdict_rows(self, self.damping_verdict, damping=choice.target))


def sorted_eigenvalues(values: np.ndarray, discrete: bool) -> np.ndarray:
    """Eigenvalues sorted by modulus (discrete) or by real part, then imaginary part."""
    values = np.asarray(values)
    if discrete:
        return values[np.argsort(np.abs(values), kind="stable")]
    return values[np.lexsort((values.imag, values.real))]


def _spectral_radius(E: np.ndarray) -> float:
    return float(np.abs(E).max()) if E.size else 0.0


@dataclass(frozen=True, eq=False)
class DiscreteLQGDesign(Design):
    """Result of :func:`tenscontrol.discrete_lqg`.

    Attributes
    ----------
    controller : DiscreteLQG
        The sampled LQG controller.
    lqr : LQRDesign
        The continuous design whose weights and minimal realization (``lqr.minimal``, order r)
        were used.
    S : ndarray, shape (r + nu, r + nu)
        Solution of the discrete Riccati equation of the regulator on ``[z; u_k-1]``.
    K : ndarray, shape (nu, r + nf + nu)
        ``u_k = -K [z_k|k; f_k|k; u_k-1]`` [N/m] (nf load states with ``load_drift``, else 0).
    L : ndarray, shape (r + nf, ny)
        The filter's correction gain: ``z_k|k = z_k|k-1 + L (y_k - C_r z_k|k-1)``.
    P : ndarray, shape (r + nf, r + nf)
        Steady a-priori error covariance of ``[z; f]``.
    E : ndarray
        Closed-loop eigenvalues (separation principle): the regulator's on ``[z; u_k-1]``,
        then the filter error's ``Phi (I - L C_r)``, each sorted by modulus.
    spectral_radius : float
        Their largest modulus (< 1: the loop is stable).
    tuning : NoiseTuning
        The filter's process noise and load drift and where each came from (given, from
        ``expected_load`` or the default load; :mod:`tenscontrol.estimation.tuning`).
    fallbacks : tuple of str
        The filter Riccati solvers that refused the equation, with their reasons, before the
        one that solved it (empty: slycot's, the first, solved it; SciPy's is the fallback).
    """

    lqr: object
    S: np.ndarray
    tuning: object = None
    fallbacks: tuple = ()

    _returned_controller = "discrete_lqg"

    @property
    def K(self) -> np.ndarray:
        return self.controller.K

    @property
    def L(self) -> np.ndarray:
        return self.controller.kalman.M

    @property
    def P(self) -> np.ndarray:
        return self.controller.kalman.P

    @property
    def minimal(self):
        """The minimal realization of the design model (``lqr.minimal``)."""
        return self.lqr.minimal

    @property
    def E(self) -> np.ndarray:
        kf, r = self.controller.kalman, self.lqr.minimal.order
        nu = self.controller.strings.size
        Pa = np.block([[kf.Phi[:r, :r], kf.Gamma1[:r]], [np.zeros((nu, r + nu))]])
        Ga = np.vstack([kf.Gamma0[:r], np.eye(nu)])
        K = np.hstack([self.K[:, :r], self.K[:, self.K.shape[1] - nu:]])
        regulator = np.linalg.eigvals(Pa - Ga @ K)
        n = kf.Phi.shape[0]
        error = np.linalg.eigvals(kf.Phi @ (np.eye(n) - kf.M @ kf.Cr))
        return np.concatenate([sorted_eigenvalues(regulator, True),
                               sorted_eigenvalues(error, True)])

    @property
    def spectral_radius(self) -> float:
        return _spectral_radius(self.E)

    def __repr__(self) -> str:
        c = self.controller
        return (f"DiscreteLQGDesign(inputs={c.strings.size}, signals={c.kalman.Cr.shape[0]}, "
                f"period={c.period:.4g} s, delay={c.delay:.4g} s, spectral radius="
                f"{self.spectral_radius:.6g})")

    def summary(self) -> str:
        """Sizes, timing, the gains' sizes and the loop's spectral radius as a table."""
        c = self.controller
        return titled_table("DiscreteLQGDesign", [
            ("controller", f"DiscreteLQG, {c.n_states} states"),
            ("inputs x signals", f"{c.strings.size} x {c.kalman.Cr.shape[0]}"),
            ("reduced order", f"{self.lqr.minimal.order}"),
            ("period", f"{c.period:.4g} s"), ("delay", f"{c.delay:.4g} s"),
            ("||K||_F", f"{np.linalg.norm(self.K):.6g}"),
            ("||L||_F (Kalman)", f"{np.linalg.norm(self.L):.6g}"),
            ("trace P", f"{np.trace(self.P):.4g}"),
            ("spectral radius", f"{self.spectral_radius:.6g}")]
            + [("refused", f) for f in self.fallbacks]
            + self._verdict_rows()
            + ([] if self.tuning is None else self.tuning.rows()))


@dataclass(frozen=True, eq=False)
class ExtendedLQGDesign(Design):
    """Result of :func:`tenscontrol.extended_lqg`.

    Attributes
    ----------
    controller : ExtendedLQG
        The extended Kalman filter and the linear gain.
    linear : DiscreteLQGDesign
        The sampled LQG design whose gain (and initial covariance) the controller uses.
    K : ndarray, shape (nu, 2nq)
        Gain on ``x_k|k - x*`` (``controller.Kx``); ``controller.Ku`` acts on u_k-1.
    S, E, spectral_radius, minimal
        The linear design's (``linear.S`` ...): the loop's linearization at the operating point.
    P : ndarray, shape (2nf, 2nf)
        The filter's prior covariance (``controller.P0``).
    """

    linear: DiscreteLQGDesign

    _returned_controller = "extended_lqg"

    @property
    def K(self) -> np.ndarray:
        return self.controller.Kx

    @property
    def S(self) -> np.ndarray:
        return self.linear.S

    @property
    def P(self) -> np.ndarray:
        return self.controller.P0

    @property
    def E(self) -> np.ndarray:
        return self.linear.E

    @property
    def spectral_radius(self) -> float:
        return self.linear.spectral_radius

    @property
    def minimal(self):
        return self.linear.minimal

    def __repr__(self) -> str:
        c = self.controller
        return (f"ExtendedLQGDesign(inputs={c.strings.size}, signals="
                f"{c.kalman.sensors.n_signals}, period={c.period:.4g} s, delay={c.delay:.4g} s,"
                f" linearized spectral radius={self.spectral_radius:.6g})")

    def summary(self) -> str:
        """Sizes, timing, the gain and the linearized loop's spectral radius as a table."""
        c = self.controller
        return titled_table("ExtendedLQGDesign", [
            ("controller", f"ExtendedLQG, {c.n_states} recorded states"),
            ("inputs x signals", f"{c.strings.size} x {c.kalman.sensors.n_signals}"),
            ("period", f"{c.period:.4g} s"), ("delay", f"{c.delay:.4g} s"),
            ("||K||_F", f"{np.linalg.norm(self.K):.6g}"),
            ("trace P (prior)", f"{np.trace(self.P):.4g}"),
            ("linearized spectral radius", f"{self.spectral_radius:.6g}")]
            + self._verdict_rows()
            + ([] if self.linear.tuning is None else self.linear.tuning.rows()))


@dataclass(frozen=True, eq=False)
class MPCDesign(Design):
    """Result of :func:`tenscontrol.mpc`.

    Attributes
    ----------
    controller : PredictiveController
        The tension-bounded MPC.
    dlqr : DiscreteLQRDesign
        The unconstrained design on the same sampled model, weights and delay: the MPC's
        law wherever no bound is active.
    S : ndarray, shape (nw, nw)
        The terminal weight, the discrete Riccati solution, on the prediction's state (the
        reduced state, nw = r; with a computation delay ``[z; u_prev]``, nw = r + nu).
    Q, R : ndarray, shapes (nw, nw), (nu, nu)
        The stage weights per sample (the LQR's times the period) on the prediction's state
        (the held command unweighted) and u.
    K, E, spectral_radius, minimal
        The unconstrained design's (``dlqr.K`` ...).
    """

    dlqr: object
    S: np.ndarray
    Q: np.ndarray
    R: np.ndarray

    _returned_controller = "mpc"

    @property
    def K(self) -> np.ndarray:
        return self.dlqr.K

    @property
    def E(self) -> np.ndarray:
        return self.dlqr.E

    @property
    def spectral_radius(self) -> float:
        return self.dlqr.spectral_radius

    @property
    def minimal(self):
        return self.dlqr.minimal

    def __repr__(self) -> str:
        c = self.controller
        return (f"MPCDesign(inputs={c.strings.size}, horizon={c.horizon}, period={c.period:g} s,"
                f" unconstrained spectral radius={self.spectral_radius:.6g})")

    def summary(self) -> str:
        """Horizon, bounds and the unconstrained design's figures as a table."""
        c = self.controller
        return titled_table("MPCDesign", [
            ("controller", f"PredictiveController, kind {c.kind!r}"),
            ("inputs x design states", f"{c.strings.size} x {self.S.shape[0]}"),
            ("horizon", f"{c.horizon} samples"), ("period", f"{c.period:g} s"),
            ("gamma_min", value_range(c.gamma_min, "N/m")),
            ("trace S (terminal)", f"{np.trace(self.S):.6g}"),
            ("unconstrained spectral radius", f"{self.spectral_radius:.6g}")]
            + self._verdict_rows())
