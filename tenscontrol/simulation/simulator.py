"""simulate(): the nonlinear simulation of a tensegrity structure, rigid or compressible bars.

Rigid bars: step -> correct -> record, with the project's own Dormand-Prince 5(4) integrator
(:mod:`tenscontrol.integrate.dopri`) and the direct correction of docs/theory.md, "The direct
correction with the energy row" after every accepted step; the compiled kernels of
:mod:`tenscontrol.mechanics.rigid.kernels` do the mechanics. Without Python per derivative
evaluation (loads None or an array; no controller or a plain StateFeedback) the whole step loop runs
compiled (:mod:`tenscontrol.simulation.rigid_loop`), taking the same steps.
Compressible bars (docs/theory.md, "Compressible bars"): the stiff axial bar modes call for the
implicit Radau IIA integrator of :mod:`tenscontrol.integrate.radau` with the analytic Jacobian of
:mod:`tenscontrol.mechanics.compressible.kernels`; only the linear fixed-coordinate constraints
remain, and they are eliminated, so no correction is needed; without Python per derivative
evaluation (loads None, an array or piecewise constant in time, no controller, the dense path)
the whole Radau step loop runs compiled (:mod:`tenscontrol.simulation.compressible_loop`),
taking the same steps. The two models' step-loop code
lives in :mod:`tenscontrol.simulation.models`; a controller closes the loop through
:mod:`tenscontrol.simulation.actuation`.
"""

from __future__ import annotations

import math
import time

import numpy as np

from tenscontrol.simulation.actuation import ClosedLoop, ControllerError
from tenscontrol.integrate import DEFAULT_MAX_STEPS, INTEGRATORS, StepLimitError, StepSizeError
from tenscontrol.simulation.controller_checks import check_fits
from tenscontrol.simulation.diagnosis import collapse_cause
from tenscontrol.simulation import compressible_loop, rigid_loop
from tenscontrol.simulation.models import CompressibleRun, RigidRun
from tenscontrol.simulation.options import (duration, flag, positive_count, positive_number,
                                            real_array, times)
from tenscontrol.simulation.progress import ProgressBar
from tenscontrol.mechanics.scales import Scales
from tenscontrol.simulation.recording import Recorder
from tenscontrol.simulation.sampled_loop import SampledLoop, SampledSolver
from tenscontrol.control.controllers import runtime_controller
from tenscontrol.control.sampled import check_samples, is_sampled
from tenscontrol.model.structure import Structure
from tenscontrol.simulation.trajectory import (SimulationError, SimulationInterrupted,
                                               SimulationStats, Trajectory)

__all__ = ["COMPRESSIBLE_TOLERANCE", "RIGID_TOLERANCE", "SimulationError", "SimulationStats",
           "SimulationInterrupted", "Trajectory", "absolute_tolerances", "default_tolerances",
           "simulate"]

# The default rtol = atol of each bar model, for every function that simulates (simulate, verify,
# compare_materials, compare_closed_loop): rigid bars are cheap at tight tolerances and the
# correction holds the constraints to 1e-10; compressible bars' stiff axial modes make 1e-8 the
# practical default of the implicit integrator.
RIGID_TOLERANCE = 1e-10
COMPRESSIBLE_TOLERANCE = 1e-8

_CORRECTIONS = ("energy", "geometric", "none")
_BARS = ("rigid", "compressible")
_INTEGRATORS = {"rigid": ("dopri54",), "compressible": ("radau5", "dopri54")}
_LINEAR_ALGEBRA = ("auto", "dense", "banded")


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
                         "exactly (docs/theory.md, \"Compressible bars\"); leave correction unset "
                         "or 'none'")
    else:
        correction = "none"
    integrator = _INTEGRATORS[bars][0] if integrator is None else integrator
    if integrator not in _INTEGRATORS[bars]:
        raise ValueError(f"integrator must be one of {', '.join(map(repr, _INTEGRATORS[bars]))} "
                         f"for {bars} bars, got {integrator!r}")
    return correction, integrator


def _linear_algebra(bars, linear_algebra):
    """The validated linear_algebra option: any of _LINEAR_ALGEBRA for compressible bars,
    only "auto" for rigid bars (their KKT solve has one path)."""
    _choices("linear_algebra", linear_algebra, _LINEAR_ALGEBRA)
    if bars == "rigid" and linear_algebra != "auto":
        raise ValueError(f"linear_algebra={linear_algebra!r} applies to compressible bars only: "
                         "rigid bars always solve their KKT system in the envelope of the "
                         "model's ordering (stats.linear_algebra 'sparse'); leave it 'auto'")
    return linear_algebra


def default_tolerances(bars: str, rtol: float | None = None,
                       atol: float | None = None) -> tuple[float, float]:
    """(rtol, atol) with None replaced by the default of the bar model `bars`.

    Rigid bars: :data:`RIGID_TOLERANCE` (1e-10); compressible bars:
    :data:`COMPRESSIBLE_TOLERANCE` (1e-8).
    """
    _choices("bars", bars, _BARS)
    default = RIGID_TOLERANCE if bars == "rigid" else COMPRESSIBLE_TOLERANCE
    return (default if rtol is None else rtol), (default if atol is None else atol)


def _check_options(t_final, rtol, atol, t_eval, max_step, max_steps):
    """The step loop's options, strictly typed: (t_final, rtol, atol, t_eval, max_step)."""
    t_final = duration("t_final", t_final)
    rtol = positive_number("rtol", rtol)
    atol = positive_number("atol", atol)
    max_step = positive_number("max_step", max_step, "a number of seconds", finite=False)
    positive_count("max_steps", max_steps)
    return (t_final, rtol, atol, None if t_eval is None else times("t_eval", t_eval, t_final),
            max_step)


def _check_flags(progress, include_radius, correction_tol, max_correction_iterations):
    flag("progress", progress)
    flag("include_radius", include_radius)
    positive_number("correction_tol", correction_tol)
    positive_count("max_correction_iterations", max_correction_iterations)


def absolute_tolerances(scales: Scales, atol: float, n_state: int, nq: int) -> np.ndarray:
    """The error test's absolute tolerance of each state entry: `atol` times its scale.

    With the run's length L, velocity V and energy E (`scales`, from :func:`tenscontrol.
    mechanics.scales.structure_scales` with the loads at the start) and nq coordinates:
    positions atol L [m], velocities atol V [m/s], the work atol E [J];
    a controller's states atol (their units are the controller's). A structure and its similar
    copies then take the same steps (docs/theory.md, "Scales").

    Returns
    -------
    ndarray, shape (n_state,)
    """
    out = np.full(n_state, atol)
    out[:nq] *= scales.length
    out[nq:2 * nq] *= scales.velocity
    out[2 * nq] *= scales.energy
    return out


def _initial_state(structure, velocities, constrained_bars):
    nq = 3 * structure.n_nodes
    qd = np.zeros(nq)
    if velocities is not None:
        v = real_array("qd", velocities, "m/s")
        if v.size != nq or not np.all(np.isfinite(v)):
            raise ValueError(f"qd must be a finite ({structure.n_nodes}, 3) array [m/s]")
        qd = v.reshape(-1).copy()
        moving = [int(c) for c in structure.fixed_coordinates if qd[c] != 0]
        if moving:
            c = moving[0]
            raise ValueError(f"qd: node {c // 3} moves along its fixed {'xyz'[c % 3]} axis; "
                             "give zero velocity on fixed coordinates")
        q = structure.nodes.reshape(-1)
        for k in constrained_bars:
            i, j = structure.bar_nodes[k]
            b, bd = q[3 * j:3 * j + 3] - q[3 * i:3 * i + 3], qd[3 * j:3 * j + 3] - qd[3 * i:3 * i + 3]
            if abs(b @ bd) > 1e-9 * (np.linalg.norm(b) * np.linalg.norm(bd) + 1e-300):
                raise ValueError(f"qd: bar {k} (nodes {i}->{j}) changes length "
                                 "(its end velocities must not stretch it)")
    return np.concatenate([structure.nodes.reshape(-1), qd, [0.0]])


class _ForceError(Exception):
    """The user's loads function failed or returned a wrong value."""


def _force_function(loads, n_nodes):
    """Wrap the user's loads: a constant array, or loads(t, q, qd) returning a flat, checked
    (3n,) array."""
    nq, shape = 3 * n_nodes, (n_nodes, 3)
    if loads is None:
        zeros = np.zeros(nq)
        return lambda t, y: zeros
    if not callable(loads):
        try:
            constant = np.asarray(loads)
            if constant.dtype.kind not in "iuf":  # strings, bools, complex: refused, not cast
                raise TypeError
            constant = constant.astype(float).reshape(nq)
        except (TypeError, ValueError):
            raise TypeError(f"loads must be an ({n_nodes}, 3) array [N] or a callable "
                            f"loads(t, q, qd) -> ({n_nodes}, 3) array [N] of real numbers, got "
                            f"{type(loads).__name__} of shape {np.shape(loads)}"
                            + (f" and dtype {constant.dtype}"
                               if isinstance(constant, np.ndarray) else "")) from None
        if not np.all(np.isfinite(constant)):
            raise ValueError("loads must be finite [N]")
        return lambda t, y: constant

    def f(t, y):
        try:
            out = np.asarray(loads(t, y[:nq].copy(), y[nq:2 * nq].copy()))
        except Exception as exc:
            raise _ForceError(f"loads(t, q, qd) raised {type(exc).__name__}: {exc}") from exc
        if out.dtype.kind != "f":
            if out.dtype.kind not in "iu":  # complex: the imaginary part is not a force
                raise _ForceError(f"loads(t, q, qd) must return real numbers [N], got dtype "
                                  f"{out.dtype} at t = {t:g} s")
            out = out.astype(float)
        if out.shape != shape and out.shape != (nq,):
            raise _ForceError(f"loads(t, q, qd) must return an ({n_nodes}, 3) array [N], "
                              f"got shape {out.shape}")
        out = out.reshape(nq)
        # the sum is finite whenever every entry is (barring overflow): a cheap first test
        if not math.isfinite(out.sum()) and not np.all(np.isfinite(out)):
            raise _ForceError(f"loads(t, q, qd) returned non-finite values at t = {t:g} s")
        return out

    return f


def simulate(structure: Structure, t_final: float, *, t_eval=None, rtol: float | None = None,
             atol: float | None = None, bars: str = "rigid", correction: str | None = None,
             integrator: str | None = None, kinetic: str = "consistent", loads=None,
             progress: bool = False, qd=None, max_step: float = np.inf,
             correction_tol: float = 1e-12, max_correction_iterations: int = 10,
             include_radius: bool = False, controller=None,
             max_steps: int = DEFAULT_MAX_STEPS, linear_algebra: str = "auto") -> Trajectory:
    """Simulate a tensegrity structure: rigid bars with the direct correction, or compressible bars.

    Parameters
    ----------
    structure : Structure
        The structure; it starts from its node positions (at rest unless `qd`).
    t_final : float
        End time [s].
    t_eval : array_like, optional
        Output times [s] within [0, t_final], increasing, filled by the steps' dense output
        (for rigid bars put back on the constraints by the same correction as the steps).
        By default the trajectory holds the initial state and every accepted step.
    rtol, atol : float, optional
        Relative and absolute tolerances of the local error test (max norm with scale
        atol_i + rtol max(|y0_i|, |y1_i|)); by default the bar model's
        (:func:`default_tolerances`: 1e-10 for rigid bars, 1e-8 for compressible bars).
        `atol` is relative to the structure's scales (:func:`absolute_tolerances`,
        docs/theory.md, "Scales"): positions are tested to atol L [m], velocities to atol V
        [m/s], the work to atol E [J], with L the mean member length, E the prestress energy
        plus M |g| L and V = sqrt(E / M); a controller's states to atol. A structure and its
        similar copies at any size then take the same steps. ``"radau5"`` maps them as Hairer's
        RADAU5 does (:meth:`tenscontrol.integrate.Radau5.error_test_tolerances`), so that both
        integrators give errors of the same size at the same tolerances.
    bars : {"rigid", "compressible"}
        ``"rigid"``: bar lengths are constraints (docs/theory.md, "Rigid bars: constraints and
        multipliers" and "The direct correction with the energy row").
        ``"compressible"``: elastic bars with each bar's Young's modulus and Poisson's ratio,
        bar lengths free (docs/theory.md, "Compressible bars").
    correction : {"energy", "geometric", "none"}, optional
        Rigid bars, after every accepted step: ``"energy"`` (the default) corrects positions,
        velocities, energy and work (the paper's scheme, docs/theory.md, "The direct correction
        with the energy row");
        ``"geometric"`` positions and velocities only (w keeps its integrated value);
        ``"none"`` nothing. Compressible bars take no correction (``"none"``).
    integrator : {"dopri54", "radau5"}, optional
        ``"dopri54"`` (explicit, the only one for rigid bars) or ``"radau5"`` (implicit Radau
        IIA of order 5 with the analytic Jacobian, the default for compressible bars, whose
        axial modes make the problem stiff). ``"radau5"`` steps over axial vibrations smaller
        than the tolerance, where ``"dopri54"`` is held to its stability limit (T-bar,
        2000 GPa bars, 2 s at 1e-6: 0.08 s against 2.0 s); when the vibrations are larger
        than the tolerance both must resolve them and ``"dopri54"`` is cheaper per step,
        though ``"radau5"`` in its compiled loop (no controller, loads constant or piecewise
        constant) takes less time overall (HDPE T-bar released from rest, 10 s at 1e-8: 0.5 s
        for ``"dopri54"``, 0.2-0.3 s CPU for ``"radau5"``; 0.9 s in its Python loop).
    kinetic : {"consistent", "paper"}
        Kinetic energy of compressible bars (docs/theory.md, "Compressible bars"):
        ``"consistent"``, the
        uniform rod with axial stretch (always positive definite), or ``"paper"``, the paper's
        translation + rotation, singular for a bar whose end nodes carry no other mass.
    loads : array_like (n_nodes, 3) or callable, optional
        External nodal forces [N]: constant, or ``loads(t, q, qd) -> ndarray (n_nodes, 3)``
        with q and qd flat (3 n_nodes,) arrays (x0, y0, z0, x1, ...).
        The implicit integrator's Jacobian treats it as independent of the state (with a
        controller, its state dependence enters by central differences).
    progress : bool
        Show a progress bar over simulated time (tqdm: a widget in a notebook, a text bar on
        stderr elsewhere) once the run has taken longer than a second; it goes away when the
        run ends or fails.
    qd : array_like, shape (n_nodes, 3) or (3 n_nodes,), optional
        Initial node velocities [m/s] (at rest by default); they must not move fixed
        coordinates (nor stretch rigid bars).
    max_step : float
        Largest step [s].
    max_steps : int
        Largest number of step attempts (accepted, rejected, or retried after a Newton
        failure) before the run stops with a :class:`SimulationError` that names the fastest
        member or the runaway coordinate: the guard that ends in bounded time a run whose
        steps collapse (a light node on a stiff string, a huge damper, a state running away).
        Every 2000 attempts the pace of the last ones is extrapolated to t_final, and the run
        stops as soon as it would need more than `max_steps`: a collapsed run stops within a
        second or so, not after max_steps. When the time advanced per 2000 attempts has shrunk
        by 10% or more in each of the last 6 windows (a state running away, a destabilizing
        controller), the shrink is extrapolated too, and steps that would converge short of
        t_final stop the run whatever `max_steps` (after 14000 attempts at the earliest). The
        default, 1000000, lets the longest benchmark run through (about 760k steps); raise it
        for longer runs of stiff structures.
    correction_tol : float
        Relative tolerance of the correction on each residual (docs/theory.md, "The direct
        correction with the energy row"): bar rows |l^2 - l0^2| to correction_tol L^2 [m^2]
        each, their rates to correction_tol L^2 / T [m^2/s], the energy to correction_tol E
        [J] (none below its rounding: 8 eps of the coordinates and of the energy content
        |E0| + |w| + T + sum |G q| + V_s), with L, T and E the run's length, time and energy
        scales (docs/theory.md, "Scales"). At the default 1e-12 the T-bar's energy is held to
        1e-10 J (E = 99.96 J), as the reference code's absolute 1e-10 does; pass 1e-13 for ten
        times less at about 25 % more CPU time.
    max_correction_iterations : int
        Cap on the correction's Newton iterations per step; a step that hits it is counted
        in ``stats.correction_failures`` and a warning is issued once.
    include_radius : bool
        Give bars the transverse inertia of solid cylinders of their radius instead of
        slender rods (see :func:`tenscontrol.mass_matrix`; for compressible bars with the
        Poisson radius change of docs/theory.md, "Compressible bars").
    controller : Controller or a design, optional
        Close the loop (:mod:`tenscontrol.control.controllers`; a design, the result of a
        synthesis such as ``lqr(...)``, runs its ``.controller``): at every derivative
        evaluation the controller's command sets the force densities of the strings it commands, clipped to
        [0, gamma_max] for one-sided strings (:mod:`tenscontrol.simulation.actuation`), with the damper of
        a string the command leaves slack off; its internal states are integrated with
        the structure's. A :class:`~tenscontrol.SampledController` (one with ``period`` and
        ``update``) is called at ``t_k = k period`` instead and its command held from
        ``t_k + delay`` (:mod:`tenscontrol.simulation.sampled_loop`): the integration restarts
        at every sample and switching instant, so the hold is exact; the control record is
        then a :class:`~tenscontrol.simulation.SampledControlRecord` with the samples. The actuators' work joins `work`, so the energy balance and the
        correction hold in closed loop. The trajectory's ``control`` records commands,
        applied force densities, slack and saturation. With ``"radau5"`` the Jacobian adds the
        controller's coupling by central differences.
    linear_algebra : {"auto", "dense", "banded"}
        Compressible bars: how the mass matrix and the Newton matrices are solved.
        ``"banded"``: in band storage after a reverse Cuthill-McKee order of the nodes, O(n)
        per solve (:mod:`tenscontrol.mechanics.compressible.banded`); ``"dense"``: dense
        matrices, whose small fixed costs win on small structures; ``"auto"`` (the default):
        ``"banded"`` from ``compressible.banded.BANDED_MIN_COORDINATES`` = 60 coordinates
        (20 nodes) on, else ``"dense"``. Rigid bars take only ``"auto"`` (their KKT system is
        always solved in its envelope, ``"sparse"``). The path taken is
        ``stats.linear_algebra``; a solve that leaves it is counted in the stats' fallback
        fields (``stats.fallbacks``), and a fallback that changes the accuracy is warned of
        once, with its count, at the end of the run.

    Returns
    -------
    Trajectory

    Raises
    ------
    ValueError
        On invalid options or initial state, and (``kinetic="paper"``) for a bar whose mass
        matrix is singular; the message names the bar.
    TypeError
        For an option of the wrong type (a string, a bool, a list or a complex number where a
        number is expected, a non-bool flag, complex loads); the message names the option.
    SimulationError
        If the integration fails (non-finite state, step-size underflow, `max_steps` spent, a
        singular matrix, an error raised by `loads` or the controller); it carries the
        trajectory computed so far.
    SimulationInterrupted
        A subclass of KeyboardInterrupt (so ``except Exception`` does not catch it): the run
        was interrupted (Ctrl-C, or a KeyboardInterrupt raised by `loads` or the controller);
        it carries the time reached (``.time``) and the trajectory up to there
        (``.trajectory``, every array of the same length).
    """
    if not isinstance(structure, Structure):
        raise TypeError(f"expected a tenscontrol.Structure, got {type(structure).__name__}")
    correction, integrator = _model_options(bars, correction, integrator)
    linear_algebra = _linear_algebra(bars, linear_algebra)
    if bars == "rigid" and kinetic != "consistent":
        raise ValueError(f"kinetic={kinetic!r} applies to compressible bars only; pass "
                         "bars='compressible' or leave kinetic unset")
    rtol, atol = default_tolerances(bars, rtol, atol)
    t_final, rtol, atol, t_eval, max_step = _check_options(t_final, rtol, atol, t_eval, max_step,
                                                           max_steps)
    _check_flags(progress, include_radius, correction_tol, max_correction_iterations)
    if bars == "rigid":
        run = RigidRun(structure, include_radius, correction, correction_tol,
                        max_correction_iterations)
    else:
        run = CompressibleRun(structure, kinetic, include_radius, linear_algebra)
    y0 = _initial_state(structure, qd, run.constrained_bars)
    fext = _force_function(loads, structure.n_nodes)
    constant_loads = None if callable(loads) else fext(0.0, y0)
    loop = None
    if controller is not None:
        controller = runtime_controller(controller)      # a design runs its .controller
        check_fits(structure, controller)
        loop = (SampledLoop if is_sampled(controller) else ClosedLoop)(structure, controller)
        if isinstance(loop, SampledLoop):
            check_samples(loop.period, t_final, max_steps, "controller")
        y0 = np.concatenate([y0, loop.xc0])
        fext = _with_control(fext, loop)
    try:  # a force or controller function that fails at the start is a usage error
        fext(0.0, y0)
        if loop is not None:
            loop.derivative(0.0, y0)
    except (_ForceError, ControllerError) as exc:
        raise ValueError(str(exc)) from exc.__cause__
    run.start(y0, fext, loop)
    method = INTEGRATORS[integrator]
    test_rtol, test_atol = method.error_test_tolerances(
        rtol, absolute_tolerances(run.scales, atol, y0.size, 3 * structure.n_nodes))
    if rigid_loop.applies(run, integrator, loads, loop):  # no Python per step: compiled loop
        solver = rigid_loop.RigidLoop(run, constant_loads, y0, float(t_final), t_eval,
                                      rtol=test_rtol, atol=test_atol, max_step=max_step,
                                      max_steps=max_steps)
        recorder = solver.output
    elif compressible_loop.applies(run, integrator, loads, loop):  # the same, Radau IIA
        solver = compressible_loop.CompressibleLoop(
            run, loads if callable(loads) else constant_loads, y0, float(t_final), t_eval,
            rtol=test_rtol, atol=test_atol, max_step=max_step, max_steps=max_steps)
        recorder = solver.output
    elif isinstance(loop, SampledLoop):  # restarted at every sample and switching instant
        recorder = Recorder(y0, t_eval, run.project)
        jac = run.jac if method.needs_jacobian else None
        solver = SampledSolver(loop, lambda t0, y, t1, first, steps: method(
            run.fun, t0, y, t1, rtol=test_rtol, atol=test_atol, max_step=max_step, jac=jac,
            correct=run.project, max_steps=steps, first_step=first), y0, float(t_final),
            max_steps)
    else:
        recorder = Recorder(y0, t_eval, run.project)
        solver = method(run.fun, 0.0, y0, float(t_final), rtol=test_rtol, atol=test_atol,
                        max_step=max_step, jac=run.jac if method.needs_jacobian else None,
                        correct=run.project, max_steps=max_steps)
    start = time.perf_counter()

    def result():
        paths = (integrator, solver.stats, getattr(solver, "keep_step", ""))
        return run.trajectory(recorder, paths, time.perf_counter() - start)

    bar = ProgressBar(t_final) if progress else None
    try:
        if isinstance(solver, (rigid_loop.RigidLoop, compressible_loop.CompressibleLoop)):
            solver.integrate(progress=bar)  # the compiled loop records the steps itself
        else:
            solver.integrate(record=recorder, progress=bar)
    except (KeyboardInterrupt, SystemError) as exc:
        if not _interrupt(exc):
            raise
        raise SimulationInterrupted(recorder.t_reached, result()) from exc
    except _NUMERICAL_FAILURES as exc:
        cause = _failure_cause(exc, bars, integrator)
        if isinstance(exc, (StepSizeError, StepLimitError)):
            cause += "; " + collapse_cause(structure, bars, solver.y, _derivative(run, solver),
                                           getattr(solver, "h", None))
        user = isinstance(exc, (_ForceError, ControllerError))  # show the user's own exception
        raise SimulationError(recorder.t_reached, cause, result()) from (
            exc.__cause__ if user else exc)
    finally:
        if bar is not None:
            bar.close()
    return result()


# What ends a run as a SimulationError with its partial trajectory: the integrator's guards, a
# numerical failure anywhere in the step loop (numpy's or a compiled kernel's), the user's loads
# or controller failing.
_NUMERICAL_FAILURES = (StepSizeError, StepLimitError, FloatingPointError, np.linalg.LinAlgError,
                       ZeroDivisionError, OverflowError, _ForceError, ControllerError)


def _interrupt(exc: BaseException) -> bool:
    """Whether exc is a KeyboardInterrupt, or the SystemError numba raises when one arrives
    while a compiled function returns ("returned a result with an exception set")."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, KeyboardInterrupt):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def _derivative(run, solver):
    """The derivative at the integrator's last state, or None if it cannot be evaluated."""
    try:
        return run.fun(solver.t, solver.y.copy())
    except Exception:  # the run already failed; this only adds detail to the message
        return None


def _failure_cause(exc, bars, integrator) -> str:
    """What went wrong in the integration, and what to try."""
    if isinstance(exc, StepLimitError) and exc.reach is not None:
        return (f"{exc}; the motion runs away or becomes singular (check the structure, the "
                "loads and the controller)")
    if isinstance(exc, StepLimitError):
        stiff = ("try integrator='radau5' for stiff bars, "
                 if (bars, integrator) == ("compressible", "dopri54") else "")
        return (f"{exc}; the run would not end in reasonable time ({stiff}check the structure "
                "and the loads, or raise max_steps)")
    if isinstance(exc, StepSizeError):
        stiff = ("stiff bars: try integrator='radau5'"
                 if (bars, integrator) == ("compressible", "dopri54")
                 else "light nodes on stiff strings")
        return (f"{exc}; the motion may be singular or very stiff ({stiff}): check the "
                "structure, or loosen rtol/atol")
    if isinstance(exc, np.linalg.LinAlgError):
        return (f"a linear solve failed ({type(exc).__name__}: {exc}); the forces or the state "
                "became too large or singular: check the loads and the structure")
    if isinstance(exc, (ZeroDivisionError, OverflowError)):
        return (f"{type(exc).__name__}: {exc}; check the loads and the structure for a "
                "singular configuration")
    if isinstance(exc, FloatingPointError):
        return f"{exc}; check the loads and the structure for a singular configuration"
    return str(exc)


def _with_control(fext, loop):
    """The external force function plus the controller's nodal forces."""
    def f(t, y):
        return fext(t, y) + loop.forces(t, y)
    return f
