"""Closed-loop verification: open against closed loop on the nonlinear model, and the linear
prediction against the nonlinear response.

:func:`verify` runs three simulations of the same disturbance from the operating point: the
nonlinear structure without and with the controller (:func:`tenscontrol.simulate`, corrected
for rigid bars), and the closed loop of the controller with the structure's analytic
linearization (docs/theory.md, "Linearization: force densities in, nodal forces as disturbances").
It returns a :class:`ClosedLoopReport` that prints as a table and plots.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.integrate

from tenscontrol.control.controllers import (OutputFeedback, StateFeedback, measurement,
                                              runtime_controller)
from tenscontrol.control.estimators import DiscreteLQG
from tenscontrol.control.sampled import DiscreteFeedback, SampledController
from tenscontrol.linear.linearization import linearize
from tenscontrol.linear.sampling import exact_hold
from tenscontrol.model.selection import Selection, check_selection
from tenscontrol.model.tables import Presentable, html_table, titled_table
from tenscontrol.simulation.options import output_times, real_array
from tenscontrol.simulation.simulator import simulate
from tenscontrol.simulation.trajectory import Trajectory, max_abs
from tenscontrol.studies.verdicts import (bound_time, estimate_error, settled_offset, verdict,
                                          weak_modes)

__all__ = ["ClosedLoopFigures", "ClosedLoopReport", "output_grid", "verify"]


@dataclass(frozen=True)
class ClosedLoopFigures(Presentable):
    """Figures of one response (deflections are deviations of the chosen outputs).

    Attributes
    ----------
    peak : float
        max over time and outputs of |deflection| [m].
    rms : float
        sqrt(mean over time of the sum of squared output deflections) [m].
    effort_peak, effort_rms : float
        max |u| over strings and time, and the rms of ||u||_2 [N/m] (0 in open loop).
    slack_time, saturated_time : dict of int to float
        Commanded strings that went slack / saturated, with the time spent so [s].
    bar_violation, energy_violation : float
        max |bar length error| [m] and max |Etot - w - E0| [J] (nan for the linear model).
    """

    peak: float
    rms: float
    effort_peak: float
    effort_rms: float
    slack_time: dict
    saturated_time: dict
    bar_violation: float
    energy_violation: float

    def __repr__(self) -> str:
        # nan: not applicable (the linear model has no constraints and no energy balance)
        checks = "".join(f", {label}={value:.2g} {unit}" for label, value, unit in (
            ("max|bar viol|", self.bar_violation, "m"), ("max|E viol|", self.energy_violation, "J"))
            if not np.isnan(value))
        return (f"ClosedLoopFigures(peak={self.peak:.4g} m, rms={self.rms:.4g} m, "
                f"effort_peak={self.effort_peak:.4g} N/m, effort_rms={self.effort_rms:.4g} N/m, "
                f"slack={len(self.slack_time)}, saturated={len(self.saturated_time)}{checks})")

    def summary(self) -> str:
        """The figures as a table (one column of :meth:`ClosedLoopReport.summary`)."""
        def strings(times):
            return ", ".join(f"{k}: {v:.3g} s" for k, v in times.items()) or "none"
        rows = [("peak deflection", f"{self.peak:.4e} m"), ("rms deflection", f"{self.rms:.4e} m"),
                ("peak |u|", f"{self.effort_peak:.4g} N/m"),
                ("rms ||u||", f"{self.effort_rms:.4g} N/m"),
                ("slack strings", strings(self.slack_time)),
                ("saturated strings", strings(self.saturated_time))]
        # nan: not applicable (the linear model has no constraints and no energy balance)
        rows += [(label, f"{value:.2e} {unit}") for label, value, unit in (
            ("max |bar violation|", self.bar_violation, "m"),
            ("max |energy violation|", self.energy_violation, "J")) if not np.isnan(value)]
        return titled_table("ClosedLoopFigures", rows)


def _time_rms(t: np.ndarray, sq: np.ndarray) -> float:
    """sqrt of the time average of sq(t) (trapezoid)."""
    if t.size < 2:
        return float(np.sqrt(sq.mean()))
    return float(np.sqrt(scipy.integrate.trapezoid(sq, t) / (t[-1] - t[0])))


def _figures(t, y, u, traj: Trajectory | None) -> ClosedLoopFigures:
    effort_peak = max_abs(u) if u is not None else 0.0
    effort_rms = _time_rms(t, (u ** 2).sum(axis=1)) if u is not None else 0.0
    slack, sat, bar, energy = {}, {}, np.nan, np.nan
    if traj is not None:
        bar, energy = max_abs(traj.bar_violation), max_abs(traj.energy_violation)
        c = traj.control
        if c is not None:
            slack = {int(k): float(v) for k, v in zip(c.strings, c.slack_time) if v > 0}
            sat = {int(k): float(v) for k, v in zip(c.strings, c.saturated_time) if v > 0}
    return ClosedLoopFigures(max_abs(y), _time_rms(t, (y ** 2).sum(axis=1)), effort_peak,
                             effort_rms, slack, sat, bar, energy)


@dataclass(frozen=True, eq=False)
class ClosedLoopReport(Presentable):
    """The result of :func:`verify`.

    Attributes
    ----------
    t : ndarray, shape (nt,)
        Output times [s].
    output_names : tuple of str
        The deflection outputs (``"z2"``: node 2 along z).
    open_loop, closed_loop : Trajectory
        Nonlinear simulations without and with the controller.
    y_open, y_closed, y_linear : ndarray, shape (nt, ny)
        Output deflections [m]: nonlinear open and closed loop, linear closed loop.
    u_closed, u_linear : ndarray, shape (nt, nu)
        Commands [N/m] in the nonlinear and the linear closed loop.
    open, closed, linear : ClosedLoopFigures
    linear_error : float
        max |y_closed - y_linear| / max |y_closed|: how far the linear prediction is off.
    peak_reduction : float
        1 - peak(closed) / peak(open).
    rms_reduction : float
        1 - rms(closed) / rms(open).
    verdict : str
        "closed loop WORSE than open loop: ..." when the peak or the rms grew (:attr:`worse`),
        else "closed loop better than open loop: ...", with both figures; shown last in the
        summary and in the plot's title.
    causes : tuple of str
        What the run shows held the loop back (:func:`tenscontrol.studies.verdicts.verdict`):
        the likely causes when it is worse, notes when it is better.
    """

    t: np.ndarray
    output_names: tuple
    open_loop: Trajectory
    closed_loop: Trajectory
    y_open: np.ndarray
    y_closed: np.ndarray
    y_linear: np.ndarray
    u_closed: np.ndarray
    u_linear: np.ndarray
    open: ClosedLoopFigures
    closed: ClosedLoopFigures
    linear: ClosedLoopFigures
    linear_error: float
    peak_reduction: float
    rms_reduction: float = np.nan
    verdict: str = ""
    causes: tuple = ()

    @property
    def worse(self) -> bool:
        """True if the closed loop's peak or rms deflection exceeds the open loop's."""
        return bool(self.peak_reduction < 0 or self.rms_reduction < 0)

    def __repr__(self) -> str:
        t = f"[{self.t[0]:g}, {self.t[-1]:g}] s" if self.t.size else "[]"
        return (f"ClosedLoopReport(outputs={len(self.output_names)}, samples={self.t.size}, t={t}, "
                f"peak open={self.open.peak:.4g} m, closed={self.closed.peak:.4g} m, "
                f"peak reduction={100 * self.peak_reduction:.1f} %, "
                f"linear error={100 * self.linear_error:.2f} %"
                + (", WORSE than open loop" if self.worse else "") + ")")

    def _table(self):
        """(columns, rows of (label, cells)) of the figures, one column per response, and the
        closed loop's slack and saturated strings."""
        rows = [("peak deflection [m]", "peak", "{:.4e}"), ("rms deflection [m]", "rms", "{:.4e}"),
                ("peak |u| [N/m]", "effort_peak", "{:.4g}"),
                ("rms ||u|| [N/m]", "effort_rms", "{:.4g}"),
                ("max |bar violation| [m]", "bar_violation", "{:.2e}"),
                ("max |energy violation| [J]", "energy_violation", "{:.2e}")]
        cols = (("open loop", self.open), ("closed loop", self.closed),
                ("linear prediction", self.linear))
        table = [(label, ["-" if np.isnan(v) else fmt.format(v)
                          for v in (getattr(f, attr) for _, f in cols)])
                 for label, attr, fmt in rows]
        strings = [(label, ", ".join(f"{k}: {v:.3g}" for k, v in getattr(self.closed, attr)
                                     .items()) or "none")
                   for label, attr in (("slack strings [s]", "slack_time"),
                                       ("saturated strings [s]", "saturated_time"))]
        return [name for name, _ in cols], table, strings

    def summary(self) -> str:
        """The figures as a table, one column per response."""
        names, table, strings = self._table()
        out = [f"{'':<28}" + "".join(f"{name:>19}" for name in names)]
        out += [f"{label:<28}" + "".join(f"{c:>19}" for c in cells) for label, cells in table]
        out += [f"{label:<28}{text:>38}" for label, text in strings]
        out.append(f"peak reduction (closed vs open loop)   {100 * self.peak_reduction:.1f} %")
        out.append(f"linear prediction error (vs nonlinear) {100 * self.linear_error:.2f} % of peak")
        out += self._verdict_lines()
        return "\n".join(out)

    def _verdict_lines(self) -> list:
        """The verdict and its likely causes, one line each (empty for an old report)."""
        if not self.verdict:
            return []
        label = "likely cause" if self.worse else "note"
        return [f"verdict: {self.verdict}"] + [f"  {label}: {c}" for c in self.causes]

    def _repr_html_(self) -> str:
        names, table, strings = self._table()
        rows = [(label, *cells) for label, cells in table]
        rows += [(label, "", text, "") for label, text in strings]
        rows.append(("peak reduction (closed vs open loop)", "",
                     f"{100 * self.peak_reduction:.1f} %", ""))
        rows.append(("linear prediction error (vs nonlinear)", "", "",
                     f"{100 * self.linear_error:.2f} % of peak"))
        rows += [(line, "", "", "") for line in self._verdict_lines()]
        return html_table(rows, header=["", *names], caption="ClosedLoopReport"
                          + (f": {self.verdict}" if self.verdict else ""))

    def plot(self, output: int | str | None = None):
        """Deflection (open, closed, linear) of one output and the applied force densities of
        the commanded strings; a matplotlib Figure.

        Parameters
        ----------
        output : int or str, optional
            Index or name of the output to show; the one with the largest open-loop peak by
            default.
        """
        from tenscontrol.plotting import plot_closed_loop

        return plot_closed_loop(self, output)


def _prediction_model(structure, controller, options):
    """The analytic linearization the controller is predicted with, at its operating point,
    its inputs the controller's strings (the others follow their laws, as in the simulator)."""
    # an allocated controller predicts as the one it wraps: its self-stress moves have B S = 0
    controller = getattr(controller, "unallocated", controller)
    return linearize(structure, q=_q_ref(controller, structure), bars=options["bars"],
                     kind=controller.kind, kinetic=options["kinetic"],
                     include_radius=options["include_radius"]).actuated(
                         controller.strings, cables=getattr(controller, "cables", None))


def _linear_prediction(model, controller, loads, t, meas):
    """The linear prediction: the controller around the analytic linearization `model`."""
    controller = getattr(controller, "unallocated", controller)
    A, B, E = model.A, model.B, model.E
    nx = A.shape[0]
    if isinstance(controller, StateFeedback):
        Acl, Bd, Cu = A - B @ controller.K, E, -controller.K
    elif isinstance(controller, OutputFeedback):
        Cm = controller.measurement.C
        DK, CK = -controller.DK, -controller.CK    # the command map: u = DK y_m + CK xc
        Acl = np.block([[A + B @ DK @ Cm, B @ CK], [controller.BK @ Cm, controller.AK]])
        Bd = np.vstack([E, np.zeros((controller.n_states, E.shape[1]))])
        Cu = np.hstack([DK @ Cm, CK])
    elif isinstance(controller, SampledController):
        q0 = model.q
        d = lambda tt: np.asarray(loads(tt, q0, np.zeros(nx // 2)), dtype=float).reshape(-1)  # noqa
        X, U = _sampled_response(A, B, E, controller, _sampled_law(controller, q0), d, t)
        return X @ meas.C.T, U
    else:
        return None, None
    nq = nx // 2
    q0, z = model.q, np.zeros(nq)
    X = _lti_response(Acl, Bd, lambda tt: np.asarray(loads(tt, q0, z),
                                                     dtype=float).reshape(-1), t)
    y = X[:, :nx] @ meas.C.T
    return y, X @ Cu.T


def _lti_response(A, B, d, t, substeps: int = 10) -> np.ndarray:
    """States (nt, nx) of x' = A x + B d(t), x(0) = 0, at the times t.

    Each output interval is split into `substeps` parts over which the load is held at its
    midpoint value: exact for loads that are constant between substep boundaries (a doublet
    whose steps fall on the grid) and second order for smooth loads in modes slower than the
    substep; a faster mode (compressible bars' axial vibrations) stays stable and follows the
    held load, with a lag of half a substep.
    """
    nx = A.shape[0]
    X = np.zeros((t.size, nx))
    x = np.zeros(nx)
    hs = np.diff(t) / substeps
    if np.allclose(hs, hs[0], rtol=1e-9, atol=0.0):     # a uniform grid: one matrix exponential
        hs[:] = hs[0]
    steps = {}
    for k in range(1, t.size):
        h = hs[k - 1]
        if h not in steps:
            steps[h] = exact_hold(A, B, h)
        Phi, Gamma = steps[h]
        for j in range(substeps):
            x = Phi @ x + Gamma @ d(t[k - 1] + (j + 0.5) * h)
        X[k] = x
    return X


def _linear_law(AK, BK, CK, DK, Cm):
    """The law of a linear sampled controller on the linear model's state x: the command
    ``-(CK xc + DK Cm x)`` and the next state ``AK xc + BK Cm x``."""
    def law(k, t, x, xc):
        signal = Cm @ x
        return -(CK @ xc + DK @ signal), AK @ xc + BK @ signal
    return law


def _lqg_matrices(c: DiscreteLQG):
    """(AK, BK, CK, DK) of a DiscreteLQG with state ``[z_k|k-1; u_k-1]`` and the noiseless
    measured deviations as input: ``z_k|k = N z_k|k-1 + M y`` (N = I - M Cr),
    ``u_k = -Kz z_k|k - Ku u_k-1``, ``z_k+1|k = Phi z_k|k + Gamma0 u_k + Gamma1 u_k-1``."""
    f = c.kalman
    r = f.Phi.shape[0]
    Kz, Ku = c.K[:, :r], c.K[:, r:]
    Nf = np.eye(r) - f.M @ f.Cr
    CK, DK = np.hstack([Kz @ Nf, Ku]), Kz @ f.M          # u_k = -(CK xc + DK y)
    AK = np.block([[f.Phi @ Nf - f.Gamma0 @ Kz @ Nf, f.Gamma1 - f.Gamma0 @ Ku], [-CK]])
    BK = np.vstack([f.Phi @ f.M - f.Gamma0 @ DK, -DK])
    return AK, BK, CK, DK


def _sampled_law(controller, q0):
    """law(k, t, x, xc) -> (u, next xc) of a sampled controller on the linear model's state
    x = [q - q0; qd]: the matrices of DiscreteFeedback and DiscreteLQG (noiseless: the
    prediction is the mean response, and a seeded noise sequence would not match the
    nonlinear run's samples anyway), else the controller's own update at q0 + x (an MPC's
    QP with the linear plant in the loop)."""
    if isinstance(controller, DiscreteFeedback):
        nx = 2 * q0.size
        Cm = np.eye(nx) if controller.measurement is None else controller.measurement.C
        return _linear_law(controller.AK, controller.BK, controller.CK, controller.DK, Cm)
    if isinstance(controller, DiscreteLQG):
        return _linear_law(*_lqg_matrices(controller), controller.kalman.measurement.C)

    def law(k, t, x, xc):
        nq = q0.size
        return controller.update(k, t, q0 + x[:nq], x[nq:], xc)
    return law


def _sampled_response(A, B, E, controller, law, d, t, substeps: int = 10):
    """States (nt, nx) and held commands (nt, nu) of x' = A x + B u + E d(t), x(0) = 0, with
    the sampled `controller`'s `law` (:func:`_sampled_law`) sampling x at k T and its command
    held from k T + delay (the load held at midpoints of substeps, as in
    :func:`_lti_response`)."""
    T, delay = controller.period, controller.delay
    samples = T * np.arange(max(1, int(np.ceil(t[-1] / T - 1e-9))))
    grid = np.unique(np.concatenate([t, samples, samples + delay]))
    grid = grid[grid <= t[-1]]
    nx, nu = A.shape[0], B.shape[1]
    AB = np.hstack([B, E])
    x, xc, u, pending = np.zeros(nx), controller.initial_state(), np.zeros(nu), np.zeros(nu)
    X, U, r, steps = np.zeros((t.size, nx)), np.zeros((t.size, nu)), 0, {}
    tol = 1e-12 * max(1.0, t[-1])
    for a, b in zip(grid, np.append(grid[1:], np.inf)):
        k = int(np.rint(a / T))
        if abs(a - k * T) <= tol:
            pending, xc = law(k, a, x, xc)
        if abs(a - k * T - delay) <= tol:
            u = pending
        while r < t.size and t[r] <= a + tol:
            X[r], U[r], r = x, u, r + 1
        if b == np.inf:
            break
        h = (b - a) / substeps
        key = round(h / tol)
        if key not in steps:
            steps[key] = exact_hold(A, AB, h)
        Phi, Gamma = steps[key]
        for j in range(substeps):
            x = Phi @ x + Gamma @ np.concatenate([u, d(a + (j + 0.5) * h)])
    return X, U


def _load_function(loads, n_nodes: int):
    """`loads` as a function loads(t, q, qd): a callable as it is, an array held constant."""
    if callable(loads):
        return loads
    if loads is None:
        loads = np.zeros((n_nodes, 3))
    try:
        constant = real_array("verify: loads", loads, "N").reshape(n_nodes, 3)
    except (TypeError, ValueError):
        raise TypeError(f"verify: loads must be a callable loads(t, q, qd) -> ({n_nodes}, 3) "
                        f"array [N] (e.g. tenscontrol.doublet(...)), an ({n_nodes}, 3) array or "
                        f"None, got {type(loads).__name__}") from None
    return lambda t, q=None, qd=None: constant


def output_grid(t_final: float, t_eval, who: str) -> np.ndarray:
    """The checked output grid of a study: `t_eval`, by default 1001 points on [0, t_final];
    errors start with `who` (strict types: a string or a list is not a time)."""
    return output_times(t_final, t_eval, who)[1]


def _q_ref(controller, structure) -> np.ndarray:
    """The controller's operating point: its q_ref, its measurement's, or the nodes."""
    if hasattr(controller, "q_ref"):
        return np.asarray(controller.q_ref, dtype=float).reshape(-1)
    if hasattr(controller, "measurement") and hasattr(controller.measurement, "q_ref"):
        return np.asarray(controller.measurement.q_ref, dtype=float).reshape(-1)
    return structure.nodes.reshape(-1)


def verify(structure, controller, loads, t_final: float = 10.0, *,
           outputs: Selection | None = None, t_eval=None, bars: str = "rigid",
           kinetic: str = "consistent", include_radius: bool = False,
           correction: str | None = None, rtol: float | None = None, atol: float | None = None,
           max_step: float | None = None) -> ClosedLoopReport:
    """Check a controller in closed loop on the nonlinear model against open loop and the
    linear prediction.

    Parameters
    ----------
    structure : Structure
        The structure at its operating point (e.g. ``equilibrium(...).structure``): every
        simulation starts there, at rest.
    controller : Controller, SampledController or a design
        E.g. ``lqr(model).controller`` (or ``lqr(model)``: a design runs its ``.controller``);
        designed about the structure's nodes. A sampled
        controller is predicted in the sampled-data loop (a DiscreteLQG noiseless, an MPC with
        its QP on the linear plant); a continuous controller other than StateFeedback and
        OutputFeedback has no prediction (nan).
    loads : callable ``loads(t, q, qd) -> (n_nodes, 3)``, array_like (n_nodes, 3) or None
        External nodal forces [N], as :func:`tenscontrol.simulate`'s ``loads`` (e.g.
        :func:`tenscontrol.doublet`); the linear prediction evaluates them at the operating
        point. None: no load.
    t_final : float
        Simulated time [s].
    outputs : Selection, optional
        The deflection outputs: node coordinates (``Selection(nodes=[2, 3], axes="xz")``)
        and string lengths (``strings=[...]``); all free coordinates by default (for a
        free-floating structure these include its rigid drift: choose relative outputs such
        as string lengths, ``Selection(nodes=[], strings=[...])``, there).
    t_eval : array_like, optional
        Output times [s], increasing from 0 to at most t_final (the rms and time figures use
        this grid); ``np.linspace(0, t_final, 1001)`` by default.
    bars : {"rigid", "compressible"}
    kinetic : {"consistent", "paper"}
        Kinetic energy of compressible bars, in the simulations and the linear prediction.
    include_radius : bool
        Solid-cylinder bar inertia, in the simulations and the linear prediction.
    correction : {"energy", "geometric", "none"}, optional
        The rigid-bar correction of :func:`tenscontrol.simulate`.
    rtol, atol : float, optional
        Tolerances of the nonlinear simulations; the bar model's by default (1e-10 rigid,
        1e-8 compressible; :func:`tenscontrol.simulation.simulator.default_tolerances`).
    max_step : float, optional
        Largest integration step [s]; by default the mean spacing of the output grid
        (``t_eval[-1] / (len(t_eval) - 1)``), so that load steps (a doublet) are not stepped
        over.

    Returns
    -------
    ClosedLoopReport
        Its ``verdict`` says whether the closed loop is worse than open loop (peak or rms)
        and its ``causes`` what the run shows held it back: slack or saturated strings, an
        MPC's tension bounds, an estimator's error, a linear prediction that is off, a design
        that amplifies the load on the linear model too, a loop that settled away from the
        operating point, modes the loop made less damped or left ringing (from the
        controller closed around the elastic model, :func:`tenscontrol.modes`), a sampling
        period too long for such a mode.
    """
    design = controller
    controller = runtime_controller(controller)     # a design: its .controller
    q_ref = _q_ref(controller, structure)
    if q_ref.shape != (structure.nodes.size,):
        raise ValueError(f"verify: the controller was designed for {q_ref.size // 3} nodes, the "
                         f"structure has {structure.n_nodes}")
    loads = _load_function(loads, structure.n_nodes)
    outputs = check_selection(outputs, "verify: outputs", strings=True)
    gap = float(np.abs(q_ref - structure.nodes.reshape(-1)).max())
    if gap > 1e-9 * max(1.0, float(np.abs(q_ref).max())):
        warnings.warn(f"verify: the controller's operating point differs from the structure's "
                      f"nodes by up to {gap:.3g} m; the simulations start from the nodes",
                      stacklevel=2)
    t = output_grid(t_final, t_eval, "verify")
    step = float(t[-1] - t[0]) / (t.size - 1) if max_step is None else max_step
    meas = measurement(structure, Selection() if outputs is None else outputs, q_ref)
    model_options = dict(bars=bars, kinetic=kinetic, include_radius=include_radius)
    options = dict(t_eval=t, rtol=rtol, atol=atol, loads=loads, max_step=step,
                   correction=correction, **model_options)
    open_loop = simulate(structure, t_final, **options)
    closed_loop = simulate(structure, t_final, controller=controller, **options)
    y_open = np.array([meas(q) for q in open_loop.nodes.reshape(t.size, -1)])
    y_closed = np.array([meas(q) for q in closed_loop.nodes.reshape(t.size, -1)])
    u_closed = closed_loop.control.u
    model = _prediction_model(structure, controller, model_options)
    y_lin, u_lin = _linear_prediction(model, controller, loads, t, meas)
    if y_lin is None:   # a user's nonlinear controller has no linear prediction
        y_lin, u_lin = np.full_like(y_closed, np.nan), np.full_like(u_closed, np.nan)
        linear, err, linear_gain = _figures(t, y_lin, u_lin, None), np.nan, None
    else:
        linear = _figures(t, y_lin, u_lin, None)
        err = max_abs(y_closed - y_lin) / max(max_abs(y_closed), 1e-300)
        linear_gain = _linear_reductions(model, loads, t, meas, linear)
    fo, fc = _figures(t, y_open, None, open_loop), _figures(t, y_closed, u_closed, closed_loop)
    peak = float(1.0 - fc.peak / fo.peak) if fo.peak > 0 else np.nan
    rms = float(1.0 - fc.rms / fo.rms) if fo.rms > 0 else np.nan
    noisy = bool(getattr(controller, "noise", False)) and linear.effort_rms > 0
    text, causes = verdict(peak, rms, fc, float(err), weak_modes(model, design), controller,
                           t[-1], estimate_error(closed_loop, controller, structure, q_ref),
                           linear_gain, bound_time(closed_loop, controller),
                           settled_offset(t, y_closed, u_closed),
                           fc.effort_rms / linear.effort_rms if noisy else np.nan)
    return ClosedLoopReport(t, meas.names, open_loop, closed_loop, y_open, y_closed, y_lin,
                            u_closed, u_lin, fo, fc, linear, float(err), peak, rms, text,
                            causes)


def _linear_reductions(model, loads, t, meas, linear: ClosedLoopFigures) -> tuple:
    """(peak, rms) reductions of the linear prediction against the linear open loop: the
    same comparison with every nonlinearity (slack, saturation, large motion) taken out."""
    q0, z = model.q, np.zeros(model.q.size)
    X = _lti_response(model.A, model.E, lambda tt: np.asarray(loads(tt, q0, z),
                                                              dtype=float).reshape(-1), t)
    y = X @ meas.C.T
    peak, rms = max_abs(y), _time_rms(t, (y ** 2).sum(axis=1))
    return (1.0 - linear.peak / peak if peak > 0 else np.nan,
            1.0 - linear.rms / rms if rms > 0 else np.nan)
