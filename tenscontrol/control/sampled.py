"""Sampled-data controllers: force-density commands computed at a fixed rate and held.

A :class:`SampledController` runs at the sample instants ``t_k = k * period``: it reads the
nodal state there and returns the command u_k [N/m] (the change from the operating point, read
as for every :class:`tenscontrol.control.controllers.Controller`, by ``kind``), which a
zero-order hold applies from ``t_k + delay`` to ``t_{k+1} + delay`` (a computation delay
``0 <= delay < period``; before the first command acts, u = 0). The simulator restarts its
integration at every sample and every delay instant, so the held command is exact
(:mod:`tenscontrol.simulation.sampled_loop`).

:class:`DiscreteFeedback` is the linear discrete-time law that
:func:`tenscontrol.discretize` and :func:`tenscontrol.dlqr` return; subclass
:class:`SampledController` and write :meth:`SampledController.update` for a law of your own
(an estimator, a model predictive controller).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tenscontrol import validation
from tenscontrol.control.controllers import (Measurement, check_controller_fields,
                                              controller_repr, controller_table)
from tenscontrol.model.tables import Presentable

__all__ = ["MIN_RADIANS_PER_SAMPLE", "DiscreteFeedback", "SampledController",
           "check_resolution", "check_samples", "check_timing", "is_sampled"]


def check_timing(period, delay, who: str) -> tuple[float, float]:
    """(period, delay) as floats, checked: period > 0 finite, 0 <= delay < period."""
    period = validation.real(f"{who}: period", period, what="a number of seconds",
                             positive=True, expected="a positive number of seconds")
    delay = validation.real(f"{who}: delay", delay, what="a number of seconds")
    if not 0 <= delay < period:
        raise ValueError(f"{who}: delay must satisfy 0 <= delay < period = {period:g} s, got "
                         f"{delay}")
    return period, delay


#: Least angle [rad] the fastest mode of a design model turns in one period: below it the
#: sampled model is the identity to within that, and the discrete Riccati equations lose
#: their digits (the T-bar, |lambda| = 3.97 rad/s: 1e-9 s loses 4 digits of the gain, 1e-11 s
#: fails in the solver).
MIN_RADIANS_PER_SAMPLE = 1e-6


def check_resolution(period: float, A, who: str) -> None:
    """Refuse a period in which the fastest mode of the design model `A` (r, r) turns less
    than MIN_RADIANS_PER_SAMPLE (dlqr, discrete_lqg, discrete_closed_loop: a discrete loop
    whose model is the identity to rounding is judged unstable at 1e-300 s)."""
    A = np.asarray(A, dtype=float)
    fastest = float(np.abs(np.linalg.eigvals(A)).max()) if A.size else 0.0
    if fastest > 0 and period * fastest < MIN_RADIANS_PER_SAMPLE:
        turn = period * fastest
        raise ValueError(f"{who}: period = {period:g} s is too short for the design model: its "
                         f"fastest mode (|lambda| = {fastest:.3g} rad/s) turns {turn:.2g} rad "
                         f"per sample, the sampled model is the identity to within that "
                         f"and the discrete design and analysis lose their digits; use a "
                         f"period >= "
                         f"{MIN_RADIANS_PER_SAMPLE / fastest:.3g} s ({MIN_RADIANS_PER_SAMPLE:g} "
                         f"rad per sample), or the continuous design (tenscontrol.lqr, "
                         f"tenscontrol.lqg)")


def check_samples(period: float, t_final: float, max_steps: int, who: str) -> int:
    """The number of samples of a run of `t_final` seconds at `period`, refused above
    `max_steps`: every sample restarts the integration, so each costs one step at least, and
    a period far below the structure's time scales (1e-7 s over 1 s: 10 million samples)
    would not end in reasonable time."""
    n = math.floor(t_final / period) + 1
    if n > max_steps:
        raise ValueError(f"{who}: period = {period:g} s over t_final = {t_final:g} s is {n:,} "
                         f"samples, each at least one integration step: more than max_steps "
                         f"= {max_steps:,}; raise the period (a few dozen samples per period "
                         f"of the fastest mode you control are enough), shorten t_final or "
                         f"raise max_steps")
    return n


def _repr(controller, *figures: str, law: str | None = None) -> str:
    """One line: the class, its law, kind, sizes and timing."""
    return controller_repr(controller, f"period={getattr(controller, 'period', None)!r} s",
                           f"delay={getattr(controller, 'delay', None)!r} s", *figures, law=law)


def _seconds(controller, name: str) -> str:
    value = getattr(controller, name, None)
    return "not set" if value is None else f"{value:g} s"


def sampled_table(controller, *rows: tuple, law: str | None = None) -> str:
    """The summary table of a sampled-data controller: the continuous controllers' table
    (law, kind, strings, gamma_ref, states), its period and delay, then `rows`."""
    return controller_table(controller, ("period", _seconds(controller, "period")),
                             ("delay", _seconds(controller, "delay")), *rows, law=law)


class SampledController(Presentable):
    """What the simulator needs from a sampled-data controller (subclass it for your own).

    Attributes
    ----------
    strings : ndarray of int, shape (nu,)
        The commanded strings, in the order of its output.
    gamma_ref : ndarray, shape (nu,)
        Their force densities at the operating point [N/m].
    kind : {"passive", "control"}
        How u is applied, as for :class:`tenscontrol.control.controllers.Controller`.
    period : float
        Sample period [s].
    delay : float
        Computation delay [s], ``0 <= delay < period``: u_k acts from ``t_k + delay``.
    n_states : int
        Size of the controller's discrete state (0 for a static law).
    """

    strings: np.ndarray
    gamma_ref: np.ndarray
    kind: str = "passive"
    period: float
    delay: float = 0.0
    n_states: int = 0

    def __repr__(self) -> str:
        return _repr(self)

    def summary(self) -> str:
        """How u is applied, the commanded strings, the states, period and delay as a table."""
        return sampled_table(self)

    def initial_state(self) -> np.ndarray:
        """The controller state at the first sample, shape (n_states,)."""
        return np.zeros(self.n_states)

    def update(self, k: int, t: float, q: np.ndarray, qd: np.ndarray,
               xk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The command and the next state at sample k.

        Parameters
        ----------
        k : int
            Sample index; ``t = k * period``.
        t : float
            Sample time [s].
        q, qd : ndarray, shape (3n,)
            Sampled positions [m] and velocities [m/s]. A sensor-based controller forms its
            measurements (with seeded noise) from them here.
        xk : ndarray, shape (n_states,)
            The controller state at sample k.

        Returns
        -------
        u : ndarray, shape (nu,)
            The command [N/m], held from ``t + delay`` to ``t + period + delay``.
        x_next : ndarray, shape (n_states,)
            The controller state at sample k + 1.
        """
        raise NotImplementedError("a SampledController subclass must define update")

    def sample_info(self) -> dict:
        """Optional figures of the last :meth:`update` (name -> number), kept per sample in
        the control record (e.g. a QP's status and solve time); none by default."""
        return {}


def is_sampled(controller) -> bool:
    """Whether `controller` is a sampled-data controller (has ``period`` and ``update``)."""
    return hasattr(controller, "period") and callable(getattr(controller, "update", None))


@dataclass(frozen=True, eq=False)
class DiscreteFeedback(SampledController):
    """A linear discrete-time law on the sampled state or a measurement (negative feedback).

    ``xc_{k+1} = AK xc_k + BK s_k``, ``u_k = -(CK xc_k + DK s_k)`` with the signal
    ``s_k = [q_k - q*; qd_k]`` (state feedback, ``measurement`` None) or ``s_k = y_m(q_k)``
    (the measured deviations of a :class:`~tenscontrol.control.controllers.Measurement`).
    A static state feedback ``u_k = -K (x_k - x*)`` has AK, BK, CK empty and DK = K.

    Attributes
    ----------
    AK, BK, CK, DK : ndarray
        (nk, nk), (nk, ns), (nu, nk), (nu, ns), ns = 2 nq or the measured signals.
    q_ref : ndarray, shape (nq,)
        Operating point q* [m].
    strings, gamma_ref, kind, period, delay
        As for every :class:`SampledController`.
    measurement : Measurement, optional
        The measured signals; None for state feedback.
    """

    AK: np.ndarray
    BK: np.ndarray
    CK: np.ndarray
    DK: np.ndarray
    q_ref: np.ndarray
    strings: np.ndarray
    gamma_ref: np.ndarray
    kind: str = "passive"
    period: float = 1e-3
    delay: float = 0.0
    measurement: Measurement | None = None

    def __post_init__(self):
        check_controller_fields(self)
        period, delay = check_timing(self.period, self.delay, "DiscreteFeedback")
        object.__setattr__(self, "period", period)
        object.__setattr__(self, "delay", delay)
        nk, nu = self.AK.shape[0] if self.AK.ndim == 2 else 0, self.strings.size
        ns = 2 * self.q_ref.size if self.measurement is None else self.measurement.n_signals
        shapes = {"AK": (nk, nk), "BK": (nk, ns), "CK": (nu, nk), "DK": (nu, ns)}
        for name, shape in shapes.items():
            if np.shape(getattr(self, name)) != shape:
                raise ValueError(f"DiscreteFeedback: {name} must have shape {shape}, got "
                                 f"{np.shape(getattr(self, name))}")

    @property
    def n_states(self) -> int:
        return self.AK.shape[0]

    def __repr__(self) -> str:
        return _repr(self, law="u_k = -(CK xc_k + DK s_k)")

    def summary(self) -> str:
        """The law, timing, the fed-back signal and the gains' sizes as a table."""
        rows = [("fed back", "state [q - q*; qd]" if self.measurement is None else
                 f"{self.measurement.n_signals} measured signals"),
                ("||DK||_F", f"{np.linalg.norm(self.DK):.4g}")]
        if self.n_states:
            rho = float(np.abs(np.linalg.eigvals(self.AK)).max())
            rows += [("||CK||_F", f"{np.linalg.norm(self.CK):.4g}"),
                     ("spectral radius of AK", f"{rho:.6g}")]
        return sampled_table(self, *rows, law="u_k = -(CK xc_k + DK s_k)")

    def signal(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """The fed-back signal s at (q, qd): ``[q - q*; qd]`` or the measurement."""
        if self.measurement is None:
            return np.concatenate([q - self.q_ref, qd])
        return self.measurement(q)

    def update(self, k, t, q, qd, xk):
        s = self.signal(q, qd)
        return -(self.CK @ xk + self.DK @ s), self.AK @ xk + self.BK @ s
