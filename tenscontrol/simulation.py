"""simulate(): the energy-corrected nonlinear simulation of a rigid-bar tensegrity structure.

Step -> correct -> record, with the project's own Dormand-Prince 5(4) integrator
(:mod:`tenscontrol.integrators`) and the direct correction of theory.md section 10 after every
accepted step. The compiled kernels of :mod:`tenscontrol._kernels` do the mechanics.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np

from . import _kernels as K
from .dynamics import rigid_model
from .integrators import StepSizeError, dense_output, dopri54
from .structure import Structure

__all__ = ["simulate", "Trajectory", "SimulationStats", "SimulationError"]

_CORRECTIONS = ("energy", "geometric", "none")


@dataclass(frozen=True)
class SimulationStats:
    """Work done by a simulation.

    Attributes
    ----------
    accepted_steps, rejected_steps : int
    rhs_evaluations : int
        Derivative evaluations, including the re-evaluation after each correction that moved
        the state and the one of the initial-step estimate.
    correction_iterations : int
        Newton iterations of the correction, summed over steps (0 for a step that was already
        on the constraints).
    correction_failures : int
        Steps whose correction did not converge within `max_correction_iterations`.
    wall_time : float
        Seconds spent in the integration loop.
    """

    accepted_steps: int
    rejected_steps: int
    rhs_evaluations: int
    correction_iterations: int
    correction_failures: int
    wall_time: float


@dataclass(frozen=True, eq=False)
class Trajectory:
    """The result of :func:`simulate`.

    Attributes
    ----------
    t : ndarray, shape (nt,)
        Output times [s].
    nodes : ndarray, shape (nt, n_nodes, 3)
        Node positions [m].
    velocities : ndarray, shape (nt, n_nodes, 3)
        Node velocities [m/s].
    energy : ndarray, shape (nt,)
        Total energy Etot = T - G^T q + V_s [J].
    work : ndarray, shape (nt,)
        Work w of the non-conservative forces (external loads and dampers) since t = 0 [J].
    bar_violation : ndarray, shape (nt, n_bars)
        |b| - l for each bar [m].
    energy_violation : ndarray, shape (nt,)
        Etot - w - E0 [J]; zero for the exact solution.
    E0 : float
        Total energy of the initial state [J].
    stats : SimulationStats
    structure : Structure
    correction : str
        The correction mode used.
    """

    t: np.ndarray
    nodes: np.ndarray
    velocities: np.ndarray
    energy: np.ndarray
    work: np.ndarray
    bar_violation: np.ndarray
    energy_violation: np.ndarray
    E0: float
    stats: SimulationStats
    structure: Structure
    correction: str

    def __repr__(self) -> str:
        if not len(self.t):
            return "Trajectory(empty)"
        return (f"Trajectory({len(self.t)} samples, t = {self.t[0]:g}..{self.t[-1]:g} s, "
                f"max |bar violation| = {np.abs(self.bar_violation).max(initial=0):.2e} m, "
                f"max |energy violation| = {np.abs(self.energy_violation).max():.2e} J)")


class SimulationError(RuntimeError):
    """A simulation failed; carries the trajectory up to the last accepted step.

    Attributes
    ----------
    time : float
        Time [s] of the last accepted step before the failure.
    cause : str
        What went wrong and what to try.
    trajectory : Trajectory
        Everything computed up to the failure.
    """

    def __init__(self, time: float, cause: str, trajectory: Trajectory):
        super().__init__(f"simulation failed at t = {time:.6g} s: {cause} "
                         f"(the trajectory up to there is in the exception's .trajectory)")
        self.time = time
        self.cause = cause
        self.trajectory = trajectory


class _Progress:
    """A one-line text progress bar on stderr."""

    def __init__(self, t_final: float, width: int = 30):
        self.t_final, self.width, self.shown = t_final, width, -1

    def __call__(self, t: float) -> None:
        pct = int(100 * t / self.t_final)
        if pct != self.shown:
            self.shown = pct
            bar = "#" * (pct * self.width // 100)
            sys.stderr.write(f"\r[{bar:<{self.width}}] {pct:3d}%  t = {t:.4g} s")
            if pct >= 100:
                sys.stderr.write("\n")
            sys.stderr.flush()


def _check_options(t_final, rtol, atol, correction, t_eval, max_step):
    if not (np.isfinite(t_final) and t_final > 0):
        raise ValueError(f"t_final must be a positive number of seconds, got {t_final!r}")
    for name, v in (("rtol", rtol), ("atol", atol)):
        if not (np.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be positive, got {v!r}")
    if correction not in _CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(map(repr, _CORRECTIONS))}, "
                         f"got {correction!r}")
    if not max_step > 0:
        raise ValueError(f"max_step must be positive, got {max_step!r}")
    if t_eval is None:
        return None
    t_eval = np.asarray(t_eval, dtype=float).reshape(-1)
    if t_eval.size == 0 or not np.all(np.isfinite(t_eval)):
        raise ValueError("t_eval must be a non-empty array of finite times [s]")
    if np.any(np.diff(t_eval) <= 0):
        raise ValueError("t_eval must be strictly increasing")
    if t_eval[0] < 0 or t_eval[-1] > t_final * (1 + 1e-12):
        raise ValueError(f"t_eval must lie within [0, t_final] = [0, {t_final:g}] s")
    return t_eval


def _initial_state(structure, model, velocities):
    nq = 3 * structure.n_nodes
    qd = np.zeros(nq)
    if velocities is not None:
        v = np.asarray(velocities, dtype=float)
        if v.size != nq or not np.all(np.isfinite(v)):
            raise ValueError(f"velocities must be a finite ({structure.n_nodes}, 3) array [m/s]")
        qd = v.reshape(-1).copy()
        moving = [int(c) for c in structure.fixed_coordinates if qd[c] != 0]
        if moving:
            c = moving[0]
            raise ValueError(f"velocities: node {c // 3} moves along its fixed {'xyz'[c % 3]} axis; "
                             "give zero velocity on fixed coordinates")
        q = structure.nodes.reshape(-1)
        for k in model.constrained_bars:
            i, j = structure.bar_nodes[k]
            b, bd = q[3 * j:3 * j + 3] - q[3 * i:3 * i + 3], qd[3 * j:3 * j + 3] - qd[3 * i:3 * i + 3]
            if abs(b @ bd) > 1e-9 * (np.linalg.norm(b) * np.linalg.norm(bd) + 1e-300):
                raise ValueError(f"velocities: bar {k} (nodes {i}->{j}) changes length "
                                 "(its end velocities must not stretch it)")
    return np.concatenate([structure.nodes.reshape(-1), qd, [0.0]])


class _ForceError(Exception):
    """The user's force function failed or returned a wrong value."""


def _force_function(force, n_nodes):
    """Wrap the user's force(t, q, qd) so that it returns a flat, checked (3n,) array."""
    nq = 3 * n_nodes
    if force is None:
        zeros = np.zeros(nq)
        return lambda t, y: zeros
    if not callable(force):
        raise TypeError("force must be a callable force(t, q, qd) -> (n_nodes, 3) array [N]")

    def f(t, y):
        try:
            out = np.asarray(force(t, y[:nq].copy(), y[nq:2 * nq].copy()), dtype=float)
        except Exception as exc:
            raise _ForceError(f"force(t, q, qd) raised {type(exc).__name__}: {exc}") from exc
        if out.size != nq:
            raise _ForceError(f"force(t, q, qd) must return an ({n_nodes}, 3) array [N], "
                              f"got shape {out.shape}")
        out = out.reshape(nq)
        # the sum is finite whenever every entry is (barring overflow): a cheap first test
        if not math.isfinite(out.sum()) and not np.all(np.isfinite(out)):
            raise _ForceError(f"force(t, q, qd) returned non-finite values at t = {t:g} s")
        return out

    return f


def simulate(structure: Structure, t_final: float, *, t_eval=None, rtol: float = 1e-10,
             atol: float = 1e-10, correction: str = "energy", force=None, progress: bool = False,
             velocities=None, max_step: float = np.inf, correction_tol: float = 1e-10,
             max_correction_iterations: int = 10, include_radius: bool = False) -> Trajectory:
    """Simulate a rigid-bar tensegrity structure with the direct energy correction.

    Parameters
    ----------
    structure : Structure
        The structure; it starts from its node positions (at rest unless `velocities`).
    t_final : float
        End time [s].
    t_eval : array_like, optional
        Output times [s] within [0, t_final], increasing, filled by the steps' dense output
        and put back on the constraints by the same correction as the steps. By default the
        trajectory holds the initial state and every accepted step.
    rtol, atol : float
        Relative and absolute tolerances of the Dormand-Prince 5(4) error test (max norm).
    correction : {"energy", "geometric", "none"}
        After every accepted step: ``"energy"`` corrects positions, velocities, energy and
        work (the paper's scheme, theory.md section 10); ``"geometric"`` positions and
        velocities only (w keeps its integrated value); ``"none"`` nothing.
    force : callable ``force(t, q, qd) -> ndarray (n_nodes, 3)``, optional
        External nodal forces [N]; q and qd are flat (3 n_nodes,) arrays (x0, y0, z0, x1, ...).
    progress : bool
        Show a progress bar on stderr.
    velocities : array_like, shape (n_nodes, 3), optional
        Initial node velocities [m/s]; they must not move fixed coordinates or stretch bars.
    max_step : float
        Largest step [s].
    correction_tol : float
        Tolerance of the correction on each residual: bar rows in m^2, velocity rows in
        m^2/s, energy in J (theory.md section 10.4).
    max_correction_iterations : int
        Cap on the correction's Newton iterations per step; a step that hits it is counted
        in ``stats.correction_failures`` and a warning is issued once.
    include_radius : bool
        Give bars the transverse inertia of solid cylinders of their radius instead of
        slender rods (see :func:`tenscontrol.mass_matrix`).

    Returns
    -------
    Trajectory

    Raises
    ------
    ValueError
        On invalid options or initial state.
    SimulationError
        If the integration fails (non-finite state, step-size underflow, an error raised by
        `force`, or an interrupt); it carries the trajectory computed so far.
    """
    if not isinstance(structure, Structure):
        raise TypeError(f"expected a tenscontrol.Structure, got {type(structure).__name__}")
    t_eval = _check_options(t_final, rtol, atol, correction, t_eval, max_step)
    model = rigid_model(structure, include_radius)
    y0 = _initial_state(structure, model, velocities)
    nq = 3 * structure.n_nodes
    W, M, G, col = model.W, model.M, model.G, model.col
    bi, bj, bl2 = model.bar_args
    si, sj, sk, sl0, sc, ssp = model.member_args
    fext = _force_function(force, structure.n_nodes)
    try:  # a force function that cannot be called at the start is a usage error
        fext(0.0, y0)
    except _ForceError as exc:
        raise ValueError(str(exc)) from exc.__cause__
    E0 = float(K.total_energy(y0[:nq], y0[nq:2 * nq], M, G, si, sj, sk, sl0, ssp))

    def fun(t, y):
        dy = np.empty_like(y)
        K.rhs(y, fext(t, y), W, G, bi, bj, si, sj, sk, sl0, sc, ssp, dy)
        return dy

    failures = [0]

    def correct(t, y):
        it, ok = K.correct(y, E0, correction == "energy", correction_tol, correction_tol,
                           correction_tol, max_correction_iterations,
                           M, G, bi, bj, bl2, si, sj, sk, sl0, ssp, col)
        if not ok:
            if failures[0] == 0:
                warnings.warn(f"correction did not converge in {max_correction_iterations} "
                              f"iterations at t = {t:.6g} s; tighten rtol/atol or raise "
                              "max_correction_iterations", RuntimeWarning, stacklevel=4)
            failures[0] += 1
        if not np.all(np.isfinite(y)):
            raise FloatingPointError("the corrected state is not finite")
        return it, it > 0

    recorder = _Recorder(y0, t_eval, None if correction == "none" else correct)
    stats = {}
    start = time.perf_counter()

    def result():
        return _trajectory(structure, model, correction, recorder, E0, stats, failures[0],
                           time.perf_counter() - start)

    try:
        dopri54(fun, 0.0, y0, float(t_final), rtol=rtol, atol=atol,
                correct=None if correction == "none" else correct, record=recorder,
                max_step=max_step, stats=stats, progress=_Progress(t_final) if progress else None)
    except (StepSizeError, FloatingPointError, KeyboardInterrupt, _ForceError) as exc:
        if isinstance(exc, StepSizeError):
            cause = (f"{exc}; the motion may be singular or very stiff (light nodes on stiff "
                     "strings): check the structure, or loosen rtol/atol")
        elif isinstance(exc, FloatingPointError):
            cause = f"{exc}; check the loads and the structure for a singular configuration"
        elif isinstance(exc, KeyboardInterrupt):
            cause = "interrupted"
        else:
            cause = str(exc)
        if progress:
            sys.stderr.write("\n")
        raise SimulationError(recorder.t_reached, cause, result()) from exc.__cause__
    return result()


class _Recorder:
    """Collects the output states: every accepted step, or the dense output at `t_eval`.

    Dense-output states are put back on the constraints by `project` (the run's correction),
    so that bar lengths and energy hold at requested output times as at step points; the
    integrator's own state is not touched.
    """

    def __init__(self, y0: np.ndarray, t_eval, project=None):
        self.t_eval = t_eval
        self.project = project
        self.t_reached = 0.0
        keep_initial = t_eval is None or t_eval[0] == 0.0
        self.times = [0.0] if keep_initial else []
        self.states = [y0.copy()] if keep_initial else []
        self.next = len(self.times)  # index of the next t_eval entry to fill

    def __call__(self, t0, y0, h, y_unc, y1, K):
        if not np.all(np.isfinite(y1)):
            raise FloatingPointError("the state became non-finite")
        t1 = t0 + h
        self.t_reached = t1
        if self.t_eval is None:
            self.times.append(t1)
            self.states.append(y1.copy())
            return
        k0 = k1 = self.next
        while k1 < len(self.t_eval) and self.t_eval[k1] <= t1 * (1 + 1e-15):
            k1 += 1
        if k1 > k0:
            theta = np.clip((self.t_eval[k0:k1] - t0) / h, 0.0, 1.0)
            for t, y in zip(self.t_eval[k0:k1], dense_output(y0, y_unc, y1, K, h, theta)):
                if self.project is not None:
                    self.project(t, y)
                self.states.append(y)
            self.times.extend(self.t_eval[k0:k1])
            self.next = k1


def _trajectory(structure, model, correction, recorder, E0, stats, failures, wall):
    nq = 3 * structure.n_nodes
    t = np.array(recorder.times)
    Y = np.array(recorder.states).reshape(len(t), 2 * nq + 1)
    si, sj, sk, sl0, _, ssp = model.member_args
    energy = K.energies(Y, model.M, model.G, si, sj, sk, sl0, ssp)
    work = Y[:, 2 * nq].copy()
    bars = structure.bar_nodes
    viol = K.bar_violations(Y, np.ascontiguousarray(bars[:, 0]), np.ascontiguousarray(bars[:, 1]),
                            np.array(structure.bar_lengths))
    st = SimulationStats(stats.get("accepted", 0), stats.get("rejected", 0), stats.get("rhs", 0),
                         stats.get("correction_iterations", 0), failures, wall)
    n = structure.n_nodes
    return Trajectory(t, Y[:, :nq].reshape(-1, n, 3), Y[:, nq:2 * nq].reshape(-1, n, 3), energy,
                      work, viol, energy - work - E0, E0, st, structure, correction)
