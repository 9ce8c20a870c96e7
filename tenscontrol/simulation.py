"""simulate(): the nonlinear simulation of a tensegrity structure, rigid or compressible bars.

Rigid bars: step -> correct -> record, with the project's own Dormand-Prince 5(4) integrator
(:mod:`tenscontrol.integrators`) and the direct correction of theory.md section 10 after every
accepted step; the compiled kernels of :mod:`tenscontrol._kernels` do the mechanics.
Compressible bars (theory.md section 12): the stiff axial bar modes call for the implicit
Radau IIA integrator of :mod:`tenscontrol.radau` with the analytic Jacobian of
:mod:`tenscontrol._compressible_kernels`; only the linear fixed-coordinate constraints remain,
and they are eliminated, so no correction is needed (theory.md section 12.8).
"""

from __future__ import annotations

import math
import sys
import time
import warnings

import numpy as np

from . import _compressible_kernels as CK
from . import _kernels as K
from .actuation import ClosedLoop, ControllerError
from .compressible import compressible_model
from .dynamics import rigid_model
from .integrators import StepSizeError, dense_output, dopri54
from .radau import radau5, radau_tolerances
from .structure import Structure
from .trajectory import SimulationError, SimulationStats, Trajectory

__all__ = ["simulate", "Trajectory", "SimulationStats", "SimulationError"]

_CORRECTIONS = ("energy", "geometric", "none")
_BARS = ("rigid", "compressible")
_INTEGRATORS = {"rigid": ("dopri54",), "compressible": ("radau5", "dopri54")}


class _Progress:
    """A one-line text progress bar on stderr, called with the time reached."""

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


def _choices(name: str, value, allowed) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")


def _model_options(bars, correction, integrator):
    """Validated (correction, integrator) with the defaults of the bar model."""
    _choices("bars", bars, _BARS)
    if bars == "rigid":
        correction = "energy" if correction is None else correction
        _choices("correction", correction, _CORRECTIONS)
    elif correction not in (None, "none"):
        raise ValueError(f"correction={correction!r} is not available for compressible bars: only "
                         "the linear fixed-coordinate constraints remain, and they are eliminated "
                         "exactly (theory.md section 12.8); leave correction unset or 'none'")
    else:
        correction = "none"
    integrator = _INTEGRATORS[bars][0] if integrator is None else integrator
    if integrator not in _INTEGRATORS[bars]:
        raise ValueError(f"integrator must be one of {', '.join(map(repr, _INTEGRATORS[bars]))} "
                         f"for {bars} bars, got {integrator!r}")
    return correction, integrator


def _check_options(t_final, rtol, atol, t_eval, max_step):
    if not (np.isfinite(t_final) and t_final > 0):
        raise ValueError(f"t_final must be a positive number of seconds, got {t_final!r}")
    for name, v in (("rtol", rtol), ("atol", atol)):
        if not (np.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be positive, got {v!r}")
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


def _initial_state(structure, velocities, constrained_bars):
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
        for k in constrained_bars:
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
             atol: float = 1e-10, bars: str = "rigid", correction: str | None = None,
             integrator: str | None = None, kinetic: str = "consistent", force=None,
             progress: bool = False, velocities=None, max_step: float = np.inf,
             correction_tol: float = 1e-10, max_correction_iterations: int = 10,
             include_radius: bool = False, controller=None) -> Trajectory:
    """Simulate a tensegrity structure: rigid bars with the direct correction, or compressible bars.

    Parameters
    ----------
    structure : Structure
        The structure; it starts from its node positions (at rest unless `velocities`).
    t_final : float
        End time [s].
    t_eval : array_like, optional
        Output times [s] within [0, t_final], increasing, filled by the steps' dense output
        (for rigid bars put back on the constraints by the same correction as the steps).
        By default the trajectory holds the initial state and every accepted step.
    rtol, atol : float
        Relative and absolute tolerances of the local error test (max norm with scale
        atol + rtol max(|y0|, |y1|)). ``"radau5"`` maps them as Hairer's RADAU5 does
        (:func:`tenscontrol.radau.radau_tolerances`), so that both integrators give errors of
        the same size at the same tolerances.
    bars : {"rigid", "compressible"}
        ``"rigid"``: bar lengths are constraints (theory.md sections 8-10).
        ``"compressible"``: elastic bars with each bar's Young's modulus and Poisson's ratio,
        bar lengths free (theory.md section 12).
    correction : {"energy", "geometric", "none"}, optional
        Rigid bars, after every accepted step: ``"energy"`` (the default) corrects positions,
        velocities, energy and work (the paper's scheme, theory.md section 10);
        ``"geometric"`` positions and velocities only (w keeps its integrated value);
        ``"none"`` nothing. Compressible bars take no correction (``"none"``).
    integrator : {"dopri54", "radau5"}, optional
        ``"dopri54"`` (explicit, the only one for rigid bars) or ``"radau5"`` (implicit Radau
        IIA of order 5 with the analytic Jacobian, the default for compressible bars, whose
        axial modes make the problem stiff). ``"radau5"`` steps over axial vibrations smaller
        than the tolerance, where ``"dopri54"`` is held to its stability limit (T-bar,
        2000 GPa bars, 2 s at 1e-6: 0.08 s against 2.0 s); when the vibrations are larger
        than the tolerance both must resolve them and ``"dopri54"`` is cheaper per step
        (HDPE T-bar released from rest, 10 s at 1e-8: 0.48 s against 0.88 s).
    kinetic : {"consistent", "paper"}
        Kinetic energy of compressible bars (theory.md section 12.2): ``"consistent"``, the
        uniform rod with axial stretch (always positive definite), or ``"paper"``, the paper's
        translation + rotation, singular for a bar whose end nodes carry no other mass.
    force : callable ``force(t, q, qd) -> ndarray (n_nodes, 3)``, optional
        External nodal forces [N]; q and qd are flat (3 n_nodes,) arrays (x0, y0, z0, x1, ...).
        The implicit integrator's Jacobian treats it as independent of the state (with a
        controller, its state dependence enters by central differences).
    progress : bool
        Show a progress bar on stderr.
    velocities : array_like, shape (n_nodes, 3), optional
        Initial node velocities [m/s]; they must not move fixed coordinates (nor stretch
        rigid bars).
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
        slender rods (see :func:`tenscontrol.mass_matrix`; for compressible bars with the
        Poisson radius change of theory.md section 12.1).
    controller : Controller, optional
        Close the loop (:mod:`tenscontrol.controllers`): at every derivative evaluation the
        controller's command sets the force densities of the strings it commands, clipped to
        [0, gamma_max] for one-sided strings (:mod:`tenscontrol.actuation`), with the damper of
        a string the command leaves slack off; its internal states are integrated with
        the structure's. The actuators' work joins `work`, so the energy balance and the
        correction hold in closed loop. The trajectory's ``control`` records commands,
        applied force densities, slack and saturation. With ``"radau5"`` the Jacobian adds the
        controller's coupling by central differences.

    Returns
    -------
    Trajectory

    Raises
    ------
    ValueError
        On invalid options or initial state, and (``kinetic="paper"``) for a bar whose mass
        matrix is singular; the message names the bar.
    SimulationError
        If the integration fails (non-finite state, step-size underflow, an error raised by
        `force`, or an interrupt); it carries the trajectory computed so far.
    """
    if not isinstance(structure, Structure):
        raise TypeError(f"expected a tenscontrol.Structure, got {type(structure).__name__}")
    correction, integrator = _model_options(bars, correction, integrator)
    if bars == "rigid" and kinetic != "consistent":
        raise ValueError(f"kinetic={kinetic!r} applies to compressible bars only; pass "
                         "bars='compressible' or leave kinetic unset")
    t_eval = _check_options(t_final, rtol, atol, t_eval, max_step)
    if bars == "rigid":
        run = _RigidRun(structure, include_radius, correction, correction_tol,
                        max_correction_iterations)
    else:
        run = _CompressibleRun(structure, kinetic, include_radius)
    y0 = _initial_state(structure, velocities, run.constrained_bars)
    fext = _force_function(force, structure.n_nodes)
    loop = None
    if controller is not None:
        loop = ClosedLoop(structure, controller)
        y0 = np.concatenate([y0, loop.xc0])
        fext = _with_control(fext, loop)
    try:  # a force or controller function that fails at the start is a usage error
        fext(0.0, y0)
        if loop is not None:
            loop.derivative(0.0, y0)
    except (_ForceError, ControllerError) as exc:
        raise ValueError(str(exc)) from exc.__cause__
    run.start(y0, fext, loop)
    recorder = _Recorder(y0, t_eval, run.project)
    stats = {"integrator": integrator}
    start = time.perf_counter()

    def result():
        return run.trajectory(recorder, stats, time.perf_counter() - start)

    options = dict(rtol=rtol, atol=atol, max_step=max_step, stats=stats,
                   progress=_Progress(t_final) if progress else None)
    try:
        if integrator == "radau5":
            options["rtol"], options["atol"] = radau_tolerances(rtol, atol)
            radau5(run.fun, run.jac, 0.0, y0, float(t_final), record=recorder.radau, **options)
        else:
            dopri54(run.fun, 0.0, y0, float(t_final), correct=run.project,
                    record=recorder.dopri, **options)
    except (StepSizeError, FloatingPointError, KeyboardInterrupt, _ForceError,
            ControllerError) as exc:
        if isinstance(exc, StepSizeError):
            stiff = ("stiff bars: try integrator='radau5'"
                     if (bars, integrator) == ("compressible", "dopri54")
                     else "light nodes on stiff strings")
            cause = (f"{exc}; the motion may be singular or very stiff ({stiff}): check the "
                     "structure, or loosen rtol/atol")
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


def _with_control(fext, loop):
    """The external force function plus the controller's nodal forces."""
    def f(t, y):
        return fext(t, y) + loop.forces(t, y)
    return f


class _Run:
    """What the rigid and compressible runs share: the state layout and the closed loop."""

    loop = None
    nb = 0

    def _attach(self, y0, loop):
        self.loop, self.n_state = loop, y0.size
        self.nb = y0.size - (loop.n_states if loop is not None else 0)

    def _base_rhs(self, y, f):
        dy = np.empty(self.nb)
        self.kernel_rhs(y[:self.nb], f, *self.args, dy)
        return dy

    def fun(self, t, y):
        dy = np.empty_like(y)
        nb = self.nb
        self.kernel_rhs(y[:nb], self.fext(t, y), *self.args, dy[:nb])
        if self.loop is not None:
            dy[nb:] = self.loop.derivative(t, y)
        return dy

    def _control_record(self, t, Y):
        return None if self.loop is None else self.loop.record(t, Y)


class _RigidRun(_Run):
    """The rigid-bar model in the step loop: derivative, correction and output quantities."""

    def __init__(self, structure, include_radius, correction, tol, max_iterations):
        self.structure, self.correction = structure, correction
        self.model = rigid_model(structure, include_radius)
        self.constrained_bars = self.model.constrained_bars
        self.tol, self.max_iterations, self.failures = tol, max_iterations, 0
        self.project = None if correction == "none" else self._correct

    kernel_rhs = staticmethod(K.rhs)

    def start(self, y0, fext, loop):
        m = self.model
        self.fext = fext
        self._attach(y0, loop)
        self.args = (m.W, m.G, *m.bar_args[:2], *m.member_args)
        nq = m.n_coordinates
        si, sj, sk, sl0, _, ssp = m.member_args
        self.correct_args = (m.M, m.G, *m.bar_args, si, sj, sk, sl0, ssp, m.col)
        self.E0 = float(K.total_energy(y0[:nq], y0[nq:2 * nq], m.M, m.G, si, sj, sk, sl0, ssp))

    def _correct(self, t, y):
        tol = self.tol
        it, ok = K.correct(y[:self.nb], self.E0, self.correction == "energy", tol, tol, tol,
                           self.max_iterations, *self.correct_args)
        if not ok:
            if self.failures == 0:
                warnings.warn(f"correction did not converge in {self.max_iterations} "
                              f"iterations at t = {t:.6g} s; tighten rtol/atol or raise "
                              "max_correction_iterations", RuntimeWarning, stacklevel=5)
            self.failures += 1
        if not np.all(np.isfinite(y)):
            raise FloatingPointError("the corrected state is not finite")
        return it, it > 0

    def trajectory(self, recorder, stats, wall):
        s, m = self.structure, self.model
        t, Y = recorder.arrays(self.n_state)
        si, sj, sk, sl0, _, ssp = m.member_args
        energy = K.energies(Y, m.M, m.G, si, sj, sk, sl0, ssp)
        bars = s.bar_nodes
        viol = K.bar_violations(Y, np.ascontiguousarray(bars[:, 0]),
                                np.ascontiguousarray(bars[:, 1]), np.array(s.bar_lengths))
        return _trajectory(s, t, Y, energy, viol, self.E0, stats, self.failures, wall,
                           self.correction, "rigid", None, self._control_record(t, Y))


class _CompressibleRun(_Run):
    """The compressible-bar model in the step loop: derivative and its analytic Jacobian."""

    constrained_bars = ()
    project = None

    def __init__(self, structure, kinetic, include_radius):
        self.structure, self.kinetic = structure, kinetic
        self.model = compressible_model(structure, kinetic, include_radius)
        self.args = self.model.kernel_args

    kernel_rhs = staticmethod(CK.rhs)

    def start(self, y0, fext, loop):
        self.fext = fext
        self._attach(y0, loop)
        self.E0 = float(CK.energies(y0[None, :], *self.args)[0])

    def jac(self, t, y):
        nb, f = self.nb, self.fext(t, y)
        if self.loop is None:
            J = np.empty((nb, nb))
            CK.jacobian(y, f, *self.args, J)
            return J
        J = np.zeros((y.size, y.size))
        Jp = np.empty((nb, nb))
        CK.jacobian(np.ascontiguousarray(y[:nb]), f, *self.args, Jp)
        J[:nb, :nb] = Jp
        return J + self._coupling(t, y, f)

    def _coupling(self, t, y, f0):
        """The controller's (and load's) dependence on the state, for the Newton matrix.

        The derivative is affine in the nodal load (qdd = W (... + f)), so its load columns come
        exactly from unit loads; the loads' and the controller's own derivatives with respect to
        the state come from central differences.
        """
        nq, nb = f0.size, self.nb
        base = self._base_rhs(y, f0)
        Jf = np.zeros((nb, nq))
        for a in self.structure.free_coordinates:
            f = f0.copy()
            f[a] += 1.0
            Jf[:, a] = self._base_rhs(y, f) - base
        g = lambda yy: np.concatenate([self.fext(t, yy), self.loop.derivative(t, yy)])  # noqa
        D = np.zeros((nq + self.loop.n_states, y.size))
        for c in range(y.size):
            if c == 2 * nq:
                continue                     # the work state drives nothing
            h = 1e-6 * max(1.0, abs(y[c]))
            yp, ym = y.copy(), y.copy()
            yp[c] += h
            ym[c] -= h
            D[:, c] = (g(yp) - g(ym)) / (2 * h)
        out = np.zeros((y.size, y.size))
        out[:nb] = Jf @ D[:nq]
        out[nb:] = D[nq:]
        return out

    def trajectory(self, recorder, stats, wall):
        s = self.structure
        t, Y = recorder.arrays(self.n_state)
        energy = CK.energies(Y, *self.args)
        return _trajectory(s, t, Y, energy, np.zeros((len(t), 0)), self.E0, stats, 0, wall,
                           "none", "compressible", self.kinetic, self._control_record(t, Y))


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

    def dopri(self, t0, y0, h, y_unc, y1, K):
        """The record callback of :func:`dopri54`."""
        self.step(t0, h, y1, lambda theta: dense_output(y0, y_unc, y1, K, h, theta))

    def radau(self, t0, y0, h, y1, dense):
        """The record callback of :func:`radau5`."""
        self.step(t0, h, y1, dense)

    def step(self, t0, h, y1, dense):
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
            for t, y in zip(self.t_eval[k0:k1], np.array(dense(theta))):
                if self.project is not None:
                    self.project(t, y)
                self.states.append(y)
            self.times.extend(self.t_eval[k0:k1])
            self.next = k1

    def arrays(self, n_state: int) -> tuple[np.ndarray, np.ndarray]:
        """Output times (nt,) and states (nt, n_state)."""
        t = np.array(self.times)
        return t, np.ascontiguousarray(np.array(self.states).reshape(len(t), n_state))


def _trajectory(structure, t, Y, energy, viol, E0, stats, failures, wall, correction, bars,
                kinetic, control=None):
    nq = 3 * structure.n_nodes
    work = Y[:, 2 * nq].copy()
    st = SimulationStats(stats.get("accepted", 0), stats.get("rejected", 0), stats.get("rhs", 0),
                         stats.get("correction_iterations", 0), failures, wall,
                         stats["integrator"], stats.get("jacobians", 0), stats.get("lu", 0),
                         stats.get("newton_iterations", 0))
    n = structure.n_nodes
    return Trajectory(t, Y[:, :nq].reshape(-1, n, 3), Y[:, nq:2 * nq].reshape(-1, n, 3), energy,
                      work, viol, energy - work - E0, E0, st, structure, correction, bars, kinetic,
                      control)
