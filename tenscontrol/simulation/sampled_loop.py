"""The sampled-data closed loop: a SampledController's held commands in simulate()'s step loop.

The controller (:class:`tenscontrol.control.sampled.SampledController`) is called at the
sample instants ``t_k = k T``; its command u_k is held from ``t_k + delay`` on. The command is
constant between those instants, so the integration is restarted at each of them
(:class:`SampledSolver`): every step sees one held command and the closed loop is exact to the
integrator's tolerance, with no step across a switch. Between restarts the bar model, its
correction and the output recorder are those of the continuous loop; the controller's
discrete state is kept here, outside the integrated state.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, fields

import numpy as np

from tenscontrol.control.sampled import check_timing
from tenscontrol.integrate.base import IntegratorStats
from tenscontrol.model.tables import summary_html, titled_table, value_range
from tenscontrol.simulation.actuation import Actuators, ControllerError, ControlRecord

__all__ = ["SampledControlRecord", "SampledLoop", "SampledSolver", "event_times"]

_NEEDED = ("strings", "gamma_ref", "kind", "period", "delay", "n_states", "initial_state",
           "update")
_EMPTY = np.zeros(0)


@dataclass(frozen=True, eq=False, repr=False)
class SampledControlRecord(ControlRecord):
    """A :class:`~tenscontrol.simulation.ControlRecord` of a sampled-data loop, with the samples.

    The base fields are at the output times, with u the command held there (right-continuous:
    at a switching instant, the command that starts there) and ``controller_states`` the
    controller state of the last sample. ``Trajectory.save`` writes the base fields only
    (:func:`tenscontrol.load_trajectory` returns a plain ControlRecord).

    Attributes
    ----------
    sample_times : ndarray, shape (ns,)
        The sample instants t_k [s].
    sample_u : ndarray, shape (ns, nu)
        The commands u_k [N/m], each acting from ``t_k + delay``.
    sample_states : ndarray, shape (ns, n_states)
        The controller state x_k at each sample (before its update).
    sample_info : dict of str to ndarray (ns,)
        The controller's :meth:`~tenscontrol.SampledController.sample_info` per sample
        (e.g. a QP's ``status`` and ``solve_time`` [s]); empty if it gives none.
    update_time : ndarray, shape (ns,)
        CPU time of each ``update`` call [s] (time.process_time).
    period, delay : float
        The controller's sample period and computation delay [s].
    """

    sample_times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    sample_u: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    sample_states: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    sample_info: dict = field(default_factory=dict)
    update_time: np.ndarray = field(default_factory=lambda: np.zeros(0))
    period: float = math.nan
    delay: float = 0.0

    def __repr__(self) -> str:
        base = super().__repr__().replace("ControlRecord(", "", 1).split(", max|u|")[0]
        return (f"SampledControlRecord({base}, period={self.period:g} s, delay={self.delay:g} s, "
                f"controller samples={self.sample_times.size})")

    def _sample_table(self) -> str:
        rows = [("period", f"{self.period:g} s"), ("delay", f"{self.delay:g} s"),
                ("controller samples", f"{self.sample_times.size}")]
        if self.update_time.size:
            rows.append(("update CPU time", f"mean {1e3 * self.update_time.mean():.3g} ms, "
                                            f"max {1e3 * self.update_time.max():.3g} ms"))
        for name, values in self.sample_info.items():     # numbers per sample (NaN: none)
            values = np.asarray(values, dtype=float).reshape(-1)
            rows.append((name, value_range(values[np.isfinite(values)], "").rstrip()))
        return titled_table("SampledControlRecord", rows)

    def summary(self) -> str:
        """The sampling figures, then one line per commanded string (as a ControlRecord)."""
        return self._sample_table() + "\n" + super().summary()

    def _repr_html_(self) -> str:
        return summary_html(self._sample_table()) + "\n" + super()._repr_html_()


def event_times(period: float, delay: float, t_final: float) -> tuple[np.ndarray, np.ndarray]:
    """The sample instants ``k T < t_final`` (ns,) and the switching instants
    ``k T + delay`` (ns,) [s]; with delay 0 they coincide."""
    ns = max(1, math.ceil(t_final / period - 1e-9))
    samples = period * np.arange(ns)
    return samples, samples + delay


class SampledLoop:
    """A :class:`~tenscontrol.SampledController` attached to the simulator.

    It adds the held command's nodal forces to the loads (:meth:`forces`); it integrates no
    state of its own (``n_states`` 0), and keeps the samples for the control record.
    """

    n_states = 0
    xc0 = _EMPTY            # no integrated controller state

    def __init__(self, structure, controller):
        missing = [a for a in _NEEDED if not hasattr(controller, a)]
        if missing:
            raise TypeError(f"controller: {type(controller).__name__} lacks {', '.join(missing)};"
                            " a sampled controller needs the attributes strings, gamma_ref, kind,"
                            " period, delay, n_states and the methods initial_state and update "
                            "of tenscontrol.SampledController")
        self.period, self.delay = check_timing(controller.period, controller.delay,
                                               "controller")
        self.controller = controller
        self.actuators = Actuators(structure, controller.strings, controller.gamma_ref,
                                   controller.kind)
        self.nq = 3 * structure.n_nodes
        self.n_controller = int(controller.n_states)
        xk = np.asarray(controller.initial_state(), dtype=float).reshape(-1)
        if xk.shape != (self.n_controller,) or not np.all(np.isfinite(xk)):
            raise ValueError(f"controller.initial_state() must return {self.n_controller} finite "
                             f"values (controller.n_states), got shape {xk.shape}")
        self.xk = xk
        self.held = np.zeros(self.actuators.n)
        self.pending = self.held
        self.times, self.commands, self.states, self.infos, self.cpu = [], [], [], [], []

    def derivative(self, t, y):
        return _EMPTY

    def forces(self, t: float, y: np.ndarray) -> np.ndarray:
        """Nodal forces (3n,) [N] of the held command at (t, y)."""
        nq = self.nq
        return self.actuators.apply(y[:nq], self.held, y[nq:2 * nq])[0]

    def sample(self, k: int, t: float, y: np.ndarray) -> None:
        """Call the controller at sample k (time t, state y); its command becomes pending."""
        nq, nu = self.nq, self.actuators.n
        q, qd = y[:nq].copy(), y[nq:2 * nq].copy()
        start = time.process_time()
        try:
            u, x_next = self.controller.update(k, t, q, qd, self.xk.copy())
            info = dict(getattr(self.controller, "sample_info", dict)())
        except Exception as exc:
            raise ControllerError(f"controller.update raised {type(exc).__name__}: "
                                  f"{exc}") from exc
        self.cpu.append(time.process_time() - start)
        u = np.asarray(u, dtype=float).reshape(-1)
        x_next = np.asarray(x_next, dtype=float).reshape(-1)
        if u.shape != (nu,) or x_next.shape != (self.n_controller,):
            raise ControllerError(f"controller.update must return ({nu} force densities, "
                                  f"{self.n_controller} states), got shapes {u.shape} and "
                                  f"{x_next.shape} at sample {k}")
        if not (np.all(np.isfinite(u)) and np.all(np.isfinite(x_next))):
            raise ControllerError(f"controller.update returned non-finite values at sample {k} "
                                  f"(t = {t:g} s)")
        self.times.append(t)
        self.commands.append(u)
        self.states.append(self.xk)
        self.infos.append(info)
        self.xk, self.pending = x_next, u

    def hold(self) -> None:
        """Apply the pending command (the zero-order hold switches)."""
        self.held = self.pending

    def record(self, t: np.ndarray, Y: np.ndarray) -> SampledControlRecord:
        """The control record at the output times t (nt,) of the states Y (nt, >= 2nq)."""
        act, nq, nu = self.actuators, self.nq, self.actuators.n
        ts = np.array(self.times)
        U = np.array(self.commands).reshape(ts.size, nu)
        X = np.array(self.states).reshape(ts.size, self.n_controller)
        # the command in force at t: the last one whose switching instant is <= t; at each
        # sample the state of that sample
        tol = 1e-12 * max(self.period, float(np.abs(t).max(initial=0.0)))   # relative: no 1 s
        acting = np.searchsorted(ts + self.delay, t + tol, side="right") - 1
        sampled = np.searchsorted(ts, t + tol, side="right") - 1
        u = (np.where(acting[:, None] >= 0, U[np.maximum(acting, 0)], 0.0) if ts.size
             else np.zeros((t.size, nu)))     # (a run that failed at its first sample)
        xc = X[np.maximum(sampled, 0)] if ts.size else np.zeros((t.size, self.n_controller))
        cmd, applied = np.empty((t.size, nu)), np.empty((t.size, nu))
        for r in range(t.size):
            _, applied[r], cmd[r] = act.apply(Y[r, :nq], u[r], Y[r, nq:2 * nq])
        slack = (applied <= 0.0) & ~act.spring[None, :]
        saturated = cmd > act.upper[None, :]
        names = sorted({name for info in self.infos for name in info})
        info = {name: np.array([i.get(name, np.nan) for i in self.infos]) for name in names}
        return SampledControlRecord(t, act.strings, u, cmd, applied, slack, saturated, xc,
                                    act.cables, ts, U, X, info, np.array(self.cpu), self.period,
                                    self.delay)


def _sum_stats(a: IntegratorStats, b: IntegratorStats) -> IntegratorStats:
    return IntegratorStats(*(getattr(a, f.name) + getattr(b, f.name) for f in fields(a)))


class SampledSolver:
    """simulate()'s solver for a sampled loop: one integrator run between consecutive sample
    and switching instants, the controller sampled and the hold switched in between.

    Parameters
    ----------
    loop : SampledLoop
    make : callable ``make(t0, y0, t1, first_step, max_steps) -> Integrator``
        A new integrator from t0 to t1 (the run's derivative, tolerances and correction).
    y0 : ndarray
        Initial state.
    t_final : float
    max_steps : int
        Step attempts allowed over the whole run.
    """

    def __init__(self, loop: SampledLoop, make, y0: np.ndarray, t_final: float,
                 max_steps: int):
        self.loop, self.make, self.max_steps = loop, make, max_steps
        self.t, self.y, self.h = 0.0, y0.copy(), None
        self.t_final = t_final
        self.samples, self.switches = event_times(loop.period, loop.delay, t_final)
        self._done = IntegratorStats()
        self._current = None

    @property
    def stats(self) -> IntegratorStats:
        if self._current is None:
            return self._done
        return _sum_stats(self._done, self._current.stats)

    @property
    def keep_step(self) -> str:
        return getattr(self._current, "keep_step", "")

    def _events(self):
        """(time, is_sample, k) in time order; a switch at a sample time comes after it."""
        ev = [(t, 0, k) for k, t in enumerate(self.samples)]
        ev += [(t, 1, k) for k, t in enumerate(self.switches) if t < self.t_final]
        return sorted(ev)

    def integrate(self, record=None, progress=None):
        events = self._events()
        times = [t for t, _, _ in events] + [self.t_final]
        for e, (t_event, kind, k) in enumerate(events):
            if kind == 0:
                self.loop.sample(k, t_event, self.y)
            else:
                self.loop.hold()
            t_next = times[e + 1]
            if t_next > self.t * (1 + 1e-15) + 1e-300 and t_next > t_event:
                self._segment(t_next, record, progress)
        return self.t, self.y

    def _segment(self, t_next, record, progress):
        """Integrate from self.t to t_next with the held command."""
        used = self.stats
        left = self.max_steps - (used.accepted + used.rejected + used.newton_failures)
        first = None if self.h is None else min(self.h, t_next - self.t)
        if self._current is not None:
            self._done = _sum_stats(self._done, self._current.stats)
        self._current = solver = self.make(self.t, self.y, t_next, first, max(left, 1))
        try:
            solver.integrate(record=record, progress=progress)
        finally:
            self.t, self.y = solver.t, solver.y
            self.h = getattr(solver, "h", self.h)
