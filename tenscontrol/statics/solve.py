"""Static equilibrium under loads at given rest lengths: the driver that picks the route.

The method: docs/theory.md, "Static equilibrium under loads and form-finding". Unknowns: the
free coordinates of q and, for rigid bars, the bar force densities psi (the multipliers of the
bar-length constraints, ``psi = -2 lambda``). The unbalanced force is

    R(q, psi) = -Yhat(q) gamma(q) - Xhat(q) psi + G + f,

with gamma the strings' elastic law (slack below the rest length: the active set follows the
configuration), psi the compressible bars' law or, for rigid bars, the least-squares
multipliers at q (:mod:`~tenscontrol.statics.problem`).

The routes, in the order :func:`static_equilibrium` tries them (each recorded in
``NewtonHistory.routes`` with its outcome):

1. a start out of equilibrium, unstable under the loads, with a stable unloaded equilibrium
   near it (conservative structures: rigid bars or none) is loaded from that one along the
   path of equilibria (:mod:`~tenscontrol.statics.continuation`): the loading history;
2. else Newton at the full load (:mod:`~tenscontrol.statics.newton`), unless the start is
   stable and its linear response to the full load is far from linear;
3. else, or where Newton fails, the path of equilibria from the start, which answers, or
   finds where the structure buckles or snaps (a StaticsError naming the load);
4. where the path's steps fail, Newton at fixed load factors (load steps).

Stability and mechanism tests: :mod:`~tenscontrol.statics.stability`.
"""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import replace

import numpy as np

from tenscontrol import validation
from tenscontrol.mechanics.geometry import member_columns, nodal_vector
from tenscontrol.mechanics.laws import active_set
from tenscontrol.model.structure import Structure
from tenscontrol.statics.continuation import continuation, path_tangent, unloaded_start
from tenscontrol.statics.linalg import MemberMatrices
from tenscontrol.statics.newton import equilibrium_at, newton
from tenscontrol.statics.problem import (NEWTON, Budget, Log, Problem, bar_lengths,
                                         build_problem, check_arguments, default_limits, forces,
                                         kkt_solver, load_scale, members, project,
                                         rounding_floor, tangent_terms)
from tenscontrol.statics.result import StaticEquilibrium
from tenscontrol.statics.stability import (check_rigid_motion, mechanism, min_stiffness,
                                           negative_count, path_stiffness, sparse_tangent,
                                           stability_constraints, static_tangent)
from tenscontrol.statics.stiffness import loaded_rigid_fields

__all__ = ["static_equilibrium", "unbalanced_force", "static_tangent"]

#: Newton at the full load is skipped, from a stable start, when the start's linear response
#: to the full load (Newton's first step) turns some member by more than this angle [rad]
#: (|dd| / l): the response is far from linear and the path from the start answers. Measured
#: under gravity (turn, Newton at the full load): 9-bar nylon tower 0.6 rad, converged in 12
#: iterations; 30-bar steel tower 0.2 rad, in 33; 96-bar steel tower 1.9 rad and 30-bar
#: steel tower under 30 g 10 rad, failed after 50 (as on the 384- and 768-bar ones); 30-bar
#: nylon tower 3.9 rad, converged in 38 to an unstable equilibrium (returned with a warning),
#: where the path gives the loading history. The strings' stretch does not separate them: its
#: linear change was 3.7-fold on a tower Newton solved, 11-fold on one it did not and 19-fold
#: on another it solved.
_LINEAR_TURN = 1.0

# The solver's pieces under the names the tests that probe them use (tests/test_static_*.py).
_problem, _forces, _tangent, _Log = build_problem, forces, tangent_terms, Log
_solve = equilibrium_at
_path_tangent, _sparse_tangent, _stability_constraints = (path_tangent, sparse_tangent,
                                                          stability_constraints)
_mechanism, _rounding_floor = mechanism, rounding_floor


def static_equilibrium(structure: Structure, *, loads=None, bars: str = "rigid", q=None,
                       rtol: float = 1e-12, max_iterations: int = 50,
                       time_limit: float | None = None,
                       iteration_limit: int | None = None) -> StaticEquilibrium:
    """The configuration near q where gravity, loads, strings, springs and bars balance.

    The rest lengths are the structure's; only the configuration changes.

    Parameters
    ----------
    structure : Structure
    loads : array_like, shape (n_nodes, 3) or (3n,), optional
        External nodal forces [N]; gravity (``structure.gravity``) is added.
    bars : {"rigid", "compressible"}
        Rigid bars keep their lengths (constraints whose multipliers are the bar force
        densities); compressible bars are springs with their law ``k_b (1 - l0_b / l)``.
    q : array_like, shape (3n,) or (n_nodes, 3), optional
        Starting configuration [m]; the structure's nodes by default. With rigid bars each
        bar keeps its length in the structure.
    rtol : float
        Converged when the largest unbalanced force on a free coordinate is at most `rtol`
        times the force scale: the largest nodal gravity-plus-load force or the largest
        member force at the start, whichever is larger, or, with neither, the structure's
        force scale E / L (docs/theory.md, "Scales"); or the residual's rounding error,
        16 eps k l of the stiffest member or eps k |q| (the spacing of floats at the
        largest coordinate |q|), when that is larger (compressible bars, tall stiff towers).
    max_iterations : int
        Newton steps per load step.
    time_limit : float, optional
        CPU time [s] (``time.process_time``, the whole process) the solve may spend, every
        route together; past it, a StaticsError names the route and the load factor reached.
        Default: 30 s plus 20 ms per free coordinate (122 s for the 768-bar prism tower).
    iteration_limit : int, optional
        Newton and corrector iterations the solve may take, every route together (the same
        error past it). Default: 1000 plus the number of free coordinates.

    Returns
    -------
    StaticEquilibrium
        The equilibrium Newton reaches; if it is unstable (``stable`` False: an inverted
        pendulum on a pin, or a structure past its buckling load that Newton reached at the
        full load directly from a start without a stable unloaded equilibrium near it) it is
        returned with a UserWarning.

    Raises
    ------
    MechanismError
        If the loads drive a motion with zero stiffness that no configuration holds (a
        free-floating structure under gravity, a node free to slide along a load, ...); the
        message names the nodes and directions.
    StaticsError
        If Newton fails at the full load and along the path of equilibria from the start, or,
        for a start out of equilibrium and unstable under the loads that has a stable
        unloaded equilibrium near it, along the loading path from there (tried first,
        without Newton at the full load): in particular where that path loses stability
        before the full load (the structure buckles: the message gives the load fraction,
        bracketed to 0.5 %) or turns back (a limit point: it snaps; the message gives the
        load factor and the reduced stiffness there).
        Also when the solve passes `time_limit` or `iteration_limit` (the message names the
        route, the load factor reached and the limit; ``error.route`` is that route).
    ValueError, TypeError
        For invalid arguments (the message names them).

    Notes
    -----
    Strings switch between taut and slack as their length passes the rest length (the active
    set is re-evaluated at every trial point). A free-floating structure (no fixed
    coordinates) needs loads without resultant force; the rigid motions the loads leave rigid
    (translations, rotations about an axis parallel to every load) are held by the gauge
    ``R_t^T dq = 0``. A rigid rotation the loads stiffen (a pendulum's swing about its pin) is
    a mode: the loads turn the structure until it balances, and ``stable`` says whether it
    hangs (``W / L`` for a point mass on a pinned bar) or stands upright (``-W / L``).

    Which route answers: a start in equilibrium is returned as it is; a start that is stable
    under the loads (or a non-conservative structure: compressible bars) is tried by Newton at
    the full load, then along the path of equilibria from it. A start out of equilibrium that
    is unstable under the loads (the sparse inertia count of its tangent stiffness) but has a
    stable equilibrium near it without loads (rigid bars or none) is loaded from that one
    along the path: the result is that of a loading history, a stable equilibrium or the
    buckling error, the same whatever start near it is given. Without such an unloaded
    equilibrium (a pendulum on a pin is neutral without its weight) Newton at the full load
    is tried, and an unstable equilibrium it reaches is returned with the warning.
    """
    rtol = validation.fraction("static_equilibrium: rtol", rtol)
    max_iterations = validation.integer("static_equilibrium: max_iterations", max_iterations,
                                        minimum=1)
    check_arguments("static_equilibrium", structure, bars, loads=loads, q=q)
    p = build_problem(structure, loads, bars)
    budget = _budget(p.free.size, time_limit, iteration_limit)
    q0 = project(p, nodal_vector(structure.n_nodes, "q", q, structure.nodes.reshape(-1)))
    # the gauge holds only the motions the loads leave rigid; the KKT pattern carries it
    gauge = loaded_rigid_fields(structure, q0, p.load, bars=bars)[p.free]
    p = replace(p, gauge=gauge, mats=MemberMatrices(structure.string_nodes, structure.bar_nodes,
                                                     p.index, gauge, p.rigid), budget=budget)
    check_rigid_motion(p)
    log = Log([], [], [])
    tol = max(rtol * load_scale(p, q0, members=True), rounding_floor(p))
    try:
        ok, q_end, stable, start, tried = _full_load(p, q0, tol, max_iterations, log)
        if ok:
            log.load_steps.append(1.0)
        else:
            if tried:
                log.failed.append(1.0)
            q_end = continuation(p, q0, tol, max_iterations, log, stable, start)
    except ValueError as exc:   # SciPy's "array must not contain infs or NaNs"
        if "infs or NaNs" not in str(exc):
            raise
        raise _overflow(p) from None
    result = _result(p, q_end, log)
    if not result.stable:
        warnings.warn(f"{structure.name}: the equilibrium found is unstable (the reduced tangent "
                      f"stiffness has eigenvalue {result.min_stiffness:.3g} N/m < 0): past a "
                      "buckling load, a simulation started there leaves it; raise the prestress "
                      "or stiffen the structure", stacklevel=2)
    return result


def _budget(n_free: int, time_limit, iteration_limit) -> Budget:
    """The solve's Budget: the given limits, validated, or the defaults for `n_free`."""
    cpu, iterations = default_limits(n_free)
    if time_limit is not None:
        cpu = validation.real("static_equilibrium: time_limit", time_limit, positive=True,
                              what="a number of seconds")
    if iteration_limit is not None:
        iterations = validation.integer("static_equilibrium: iteration_limit",
                                        iteration_limit, minimum=1)
    return Budget(cpu, iterations)


def _full_load(p: Problem, q0, tol, max_iterations, log: Log):
    """(converged, q, whether the start is stable or None if not tested, the stable unloaded
    start or None, whether Newton at the full load was tried).

    The route is decided from the start: a start out of equilibrium and unstable under the
    loads with a stable unloaded equilibrium near it (:func:`_loading_start`) goes to the path
    from there; a stable start whose linear response to the full load is far from linear
    (:func:`_far_from_linear`) to the path from the start; only the rest try
    :func:`~tenscontrol.statics.newton.equilibrium_at` at the full load, and from a stable
    start without the |r| Newton after the potential's has failed (the path from there finds
    the loaded equilibrium on the loading path)."""
    zero = np.zeros(p.free.size)
    if not (p.rigid or not p.structure.n_bars):
        ok, q = newton(p, q0, 1.0, zero, tol, max_iterations, log)
        log.outcome(NEWTON, "answered" if ok else f"failed after {max_iterations} iterations")
        return ok, q, None, None, True
    start = _loading_start(p, q0, tol, max_iterations, log)
    p.budget.route = NEWTON
    if start is not None:
        log.outcome(NEWTON, "skipped (the start is unstable under the loads, stable without)")
        return False, q0, False, start, False
    far = _far_from_linear(p, q0, tol)
    if far and path_stiffness(p, q0, 0.0, forces(p, q0, zero)[0]) > 0:
        log.outcome(NEWTON, f"skipped ({far})")
        return False, q0, True, None, False
    ok, q = newton(p, q0, 1.0, zero, tol, max_iterations, log, energy=True)
    if ok:
        log.outcome(NEWTON, "answered")
        return ok, q, None, None, True
    failed = f"failed after {max_iterations} iterations"
    stable = path_stiffness(p, q0, 0.0, forces(p, q0, zero)[0]) > 0
    if stable:
        log.outcome(NEWTON, failed)
        return False, q, stable, None, True
    ok, q = newton(p, q0, 1.0, zero, tol, max_iterations, log)
    log.outcome(NEWTON, "answered (|r| merit)" if ok else failed + " (potential and |r|)")
    return ok, q, stable, None, True


def _far_from_linear(p: Problem, q0, tol) -> str:
    """Why the start's linear response to the full load (one KKT solve, Newton's first step)
    is far from linear, or "" if it is not: it turns a member by more than _LINEAR_TURN."""
    r, _, gamma, psi = forces(p, q0, np.zeros(p.free.size))
    if np.abs(r).max(initial=0.0) <= tol:
        return ""
    dq = kkt_solver(p, tangent_terms(p, q0, gamma, psi), 0.0)(r)
    _, l = members(p, q0)
    turn = float(np.max(np.linalg.norm(p.mats.differences(dq), axis=1) / l, initial=0.0))
    return (f"its linear response turns a member by {turn:.3g} rad" if turn > _LINEAR_TURN
            else "")


def _loading_start(p: Problem, q0, tol, max_iterations, log: Log):
    """The stable unloaded equilibrium near q0 (:func:`unloaded_start`) where q0 is out of
    equilibrium and unstable under the loads, else None (a conservative structure). The path
    from there is the loading history, whose verdict Newton at the full load could only
    contradict: it reached an unstable equilibrium on the 30- and 96-bar nylon towers, and
    failed twice on the 768-bar one (19 of its 23 s). The search's counts and rows join p's
    and the log only when it succeeds: every other case runs as if it had not been made."""
    probe = replace(p, counts=Counter())
    r0 = forces(probe, q0, np.zeros(p.free.size))[0]
    if np.abs(r0).max(initial=0.0) <= tol:
        return None
    count = negative_count(probe, q0, r0)
    if count == 0 or (count is None and path_stiffness(probe, q0, 0.0, r0) > 0):
        return None
    rows = Log([], [], [])
    start = unloaded_start(probe, q0, tol, max_iterations, rows)
    if start is not None:
        p.counts.update(probe.counts)
        log.rows.extend(rows.rows)
    return start


def _result(p: Problem, q, log: Log) -> StaticEquilibrium:
    """Certify the residual at q (full load) and build the result."""
    s = p.structure
    r, R, gamma, psi = forces(p, q, np.zeros(p.free.size))
    residual = float(np.abs(r).max(initial=0.0))
    reactions = np.zeros(3 * s.n_nodes)
    fixed = s.fixed_coordinates
    reactions[fixed] = -R[fixed]
    violation = (float(np.abs(bar_lengths(s, q) - p.lengths).max(initial=0.0)) if p.rigid
                 else 0.0)
    least = min_stiffness(p, q, gamma, psi, residual)
    N = q.reshape(-1, 3)
    l = np.linalg.norm(N[s.string_nodes[:, 1]] - N[s.string_nodes[:, 0]], axis=1)
    slack = ~active_set(l, s.string_rest_lengths, s.string_is_spring)
    return StaticEquilibrium(
        structure=s.with_nodes(N), q=q, gamma=gamma, bar_force_densities=psi,
        reactions=reactions.reshape(-1, 3), loads=p.f.reshape(-1, 3), residual=residual,
        relative_residual=residual / load_scale(p, q), constraint_violation=violation,
        displacement=float(np.linalg.norm(N - s.nodes, axis=1).max(initial=0.0)),
        min_stiffness=least, slack=slack, bars=p.bars, history=log.frozen(),
        dense_bar_solves=p.counts["dense_bar"], dense_kkt_solves=p.counts["dense_kkt"],
        dense_eigensolves=p.counts["dense_eigen"])


def _overflow(p: Problem) -> ValueError:
    """The error of loads whose Newton steps overflow (their squares leave the float range)."""
    load = float(np.abs(p.load[p.free]).max(initial=0.0))
    return ValueError(f"static_equilibrium: the loads on {p.structure.name} (largest "
                      f"{load:.3g} N on a free coordinate) make the Newton steps overflow "
                      f"(non-finite displacements): no equilibrium in the float range answers "
                      f"them; give the loads in N, many orders smaller")


def unbalanced_force(structure: Structure, q=None, *, loads=None, bars: str = "rigid",
                     bar_force_densities=None) -> np.ndarray:
    """The unbalanced nodal force R (3n,) [N] at q: gravity + loads - member forces.

    Strings follow their elastic law (slack below the rest length). Rigid bars take
    `bar_force_densities` (psi, negative in compression) if given, else the least-squares
    multipliers on the free coordinates; compressible bars their law. R vanishes on the free
    coordinates at an equilibrium; on the fixed ones it is minus the support reaction.
    """
    check_arguments("unbalanced_force", structure, bars, loads=loads, q=q,
                     bar_force_densities=bar_force_densities)
    q = nodal_vector(structure.n_nodes, "q", q, structure.nodes.reshape(-1))
    p = build_problem(structure, loads, bars, check=False)
    _, R, gamma, psi = forces(p, q, np.zeros(p.free.size))
    if bar_force_densities is not None:
        given = validation.per_item("unbalanced_force: bar_force_densities", bar_force_densities,
                                    structure.n_bars, "N/m", items=" (one per bar)")
        R = R + member_columns(structure.bar_nodes, q) @ (psi - given)
    return R
