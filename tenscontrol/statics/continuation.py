"""The path of equilibria from a start to the full load, and where it ends short of it.

The imbalance at the start ``r0`` is applied gradually (a Newton homotopy: the offset
``(1 - t) r0`` holds it back, so the start is in equilibrium at t = 0 and the structure carries
the full load at t = 1); from a stable unloaded equilibrium, r0 is the loads themselves and t
their fraction: the path is the loading history. Each step predicts along the path's tangent
(``K_t dq/dt = r0`` by the KKT solve) and corrects by pseudo-arclength Newton (the KKT solve
bordered by the arc-length condition), so the path is followed around a turning point in t;
the arc length doubles after a quick correction and halves after a failed one. A path that
loses stability (the sparse inertia count of K_t turns negative) is the structure buckling:
the load factor where the smallest reduced stiffness passes zero is bracketed by secant steps
at fixed t, and a StaticsError gives it; a path that turns back without losing stability is a
limit point. Where the path's steps fail, load steps of Newton at fixed t are taken instead,
halving a step that fails and doubling one that works.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tenscontrol.statics.newton import equilibrium_at, newton
from tenscontrol.statics.problem import (LOAD_STEPS, PATH, UNLOADED_PATH, Log, Problem, forces,
                                         kkt_solver, load_scale, members, project,
                                         tangent_terms)
from tenscontrol.statics.result import StaticsError
from tenscontrol.statics.stability import mechanism, path_stiffness, unstable

__all__ = ["continuation", "path_tangent", "unloaded_start", "STAGE_RTOL"]

#: Intermediate load steps and path points converge to this residual relative to the member
#: forces; only the full load needs rtol. They serve as the next predictor's start and the
#: stability test's point: on the steel towers 1e-6 gives the same buckling load (0.6551 of
#: gravity at 384 bars) as 1e-8 in two thirds of the corrector iterations.
STAGE_RTOL = 1e-6

# The path's steps (:func:`_follow_path`).
#: Pseudo-arclength corrector iterations before a step is given up and its arc halved.
_CORRECTIONS = 8
#: A correction in at most _QUICK - 1 iterations doubles the next arc length (on the steel
#: towers three or more iterations are the rule, and doubling after three fails the next
#: step one time in three).
_QUICK = 3
#: The shortest arc length of a path step (in units of the load factor).
_SMALLEST_ARC = 0.5 ** 12
#: The largest member turn [rad] of the first step's linear prediction (:func:`_first_arc`):
#: on the steel towers the corrector fails the first steps whose prediction turns a member by
#: 0.18-0.21 rad and converges on those of 0.09-0.10 rad.
_FIRST_TURN = 0.15
#: The stability test (an inertia count, a quarter of a path step's cost) runs every this
#: many accepted steps; where it finds the path unstable, the buckling bracket starts from
#: the last point it found stable (the secant narrows a few steps' bracket in one or two more
#: solves); the full load is tested whatever the count.
_STABILITY_EVERY = 4

# The buckling load (:func:`_refine_buckling`).
#: Secant or bisection steps that narrow the load factor where the path loses stability.
_REFINEMENTS = 8
#: The bracket is narrowed to this fraction of its upper load factor (0.5 %).
_BRACKET = 5e-3
#: The bracket's equilibria converge to this residual relative to the member forces, tighter
#: than STAGE_RTOL: near the buckling load the least stiffness is a small difference, and
#: the errors STAGE_RTOL leaves in q move it by 10 % on the 768-bar nylon tower (its load
#: read 3.397e-5 or 3.398e-5 depending on the guess Newton started from); the quadratic
#: tail makes the extra digits cost about one iteration.
_REFINE_RTOL = 1e-9
#: The secant's next load factor is moved by this fraction past its zero, away from t*
#: itself, where K_t is singular (and its KKT solves fall back to the dense path).
_PAST_ZERO = 1e-3

#: Load steps (:func:`_load_steps`) are given up below this fraction of the load factor
#: reached (2^-7).
_SMALLEST_LOAD_STEP = 0.5 ** 7


def continuation(p: Problem, q0, tol, max_iterations, log: Log, stable=None, start=None):
    """From t = 0 (q0 balanced by the offset) to t = 1; returns q at t = 1.

    From a stable start the path of equilibria is followed (:func:`_follow_path`); a path
    that loses stability (the structure buckles) or turns back at a limit point (it buckles
    or snaps) raises a StaticsError that says at which load. From a start that is not a stable
    equilibrium the homotopy's path is no loading history (the nylon towers' turns back at
    0.64 of the load, unstable all along): a conservative structure starts instead from its
    unloaded equilibrium near q0, if that is stable (:func:`unloaded_start`), and the load
    is applied along the path from there; else, and where the path's steps fail, load steps
    by Newton at fixed t (:func:`_load_steps`). `stable`: whether the start is stable, if
    known; `start`: the stable unloaded start, if already found (:func:`_loading_start`)."""
    r0 = forces(p, q0, np.zeros(p.free.size))[0]
    q, t, dt = q0, 0.0, 0.5  # the full step already failed
    stable = path_stiffness(p, q0, 0.0, r0) > 0 if stable is None else stable
    if start is None and not stable:
        start = unloaded_start(p, q0, tol, max_iterations, log)
    if start is not None:
        # the offset that holds back the loads and the residual left at the start: the
        # rigid bars' multipliers, least squares of the rest, then carry t times the loads,
        # so the path is the loading history and t the fraction of the loads
        q0 = q = start
        unloaded = replace(p, load=np.zeros_like(p.load))
        r0 = p.load[p.free] + forces(unloaded, q0, np.zeros(p.free.size))[0]
        stable = True
    if stable:
        route = PATH if start is None else UNLOADED_PATH
        p.budget.route = route
        q, t, fold = _follow_path(p, q0, r0, tol, max_iterations, log)
        if log.unstable is not None:
            raise _buckling_error(p, r0, tol, max_iterations, log, route)
        if t == 1.0:
            log.outcome(route, "answered")
            return q
        if fold is not None:
            log.outcome(route, f"turns back at {t:.4g} of the load (limit point)")
            raise _limit_point(p, t, path_stiffness(p, q, t, r0), log)
        log.outcome(route, f"steps failed at {t:.4g} of the load")
        dt = 1.0 - t
    p.budget.route = LOAD_STEPS
    q_end, reached, dt = _load_steps(p, q, t, dt, r0, tol, max_iterations, log)
    if q_end is not None:
        log.outcome(LOAD_STEPS, "answered")
        return q_end
    log.outcome(LOAD_STEPS, f"failed at {log.failed[-1]:.4g} of the load")
    raise StaticsError(
        f"{p.structure.name}: static_equilibrium found no equilibrium: Newton failed at load "
        f"factor {log.failed[-1]:.4g} even in steps of {2 * dt:.3g} (reached {reached:.4g} of "
        "the load). The structure may pass a limit point (snap-through or buckling) on its "
        "way, or a string system that cannot carry the load; give a starting configuration q "
        "nearer the loaded shape, or smaller loads", log.frozen())


def unloaded_start(p: Problem, q0, tol, max_iterations, log: Log):
    """The stable equilibrium near q0 without gravity and loads (a conservative structure:
    rigid bars or none), from which the path of equilibria is the loading history; None if
    there is none (not found, or unstable)."""
    if not (p.rigid or not p.structure.n_bars):
        return None
    p.budget.route = UNLOADED_PATH
    unloaded = replace(p, load=np.zeros_like(p.load))
    zero = np.zeros(p.free.size)
    ok, q = equilibrium_at(unloaded, q0, 0.0, zero, max(tol, STAGE_RTOL * load_scale(p, q0, True)),
                   max_iterations, log)
    if not ok or not path_stiffness(unloaded, q, 1.0, zero) > 0:
        return None
    return q


def _follow_path(p: Problem, q0, r0, tol, max_iterations, log: Log):
    """(q, t, fold): the path of equilibria followed from (q0, 0) to t = 1, or to where it
    turns back (fold: that point, (q, t)) or its steps fail (fold None).

    Each step predicts along the path's tangent and corrects by pseudo-arclength Newton
    (:func:`_corrector`), so it follows the path around a turning point in t; the arc length
    grows after a quick correction and halves after a failed one. The last step goes to
    t = 1 by Newton at that load (:func:`equilibrium_at`) from the tangent's prediction."""
    zero = np.zeros(p.free.size)
    slope = path_tangent(p, q0, 0.0, r0, 1.0)[1]
    scale = max(float(np.abs(slope).max(initial=0.0)), 1e-9 * p.size)  # [m] per unit load
    tangent, slope = path_tangent(p, q0, 0.0, r0, scale)
    q, t, ds, grow = q0, 0.0, _first_arc(p, q0, slope, tangent[1]), True
    behind = None  # the path point before (q, t), for the predictor's curvature
    # the path's points (t, q) from the last one tested stable on: where the path loses
    # stability they are the buckling bracket's guesses (:func:`_refine_buckling`)
    since = [(0.0, q0)]
    while ds >= _SMALLEST_ARC:
        if t + ds * tangent[1] >= 1.0:  # the full load is within reach: Newton at t = 1
            ok, q_end = equilibrium_at(p, project(p, q + (1.0 - t) * slope), 1.0, zero, tol,
                                       max_iterations, log)
            if ok and unstable(p, q_end, 1.0, r0):
                # buckled between the last stable test and the full load
                log.unstable = (*since, (1.0, q_end))
                return since[0][1], since[0][0], None
            if ok:
                log.load_steps.append(1.0)
                return q_end, 1.0, None
            log.failed.append(1.0)
            ds, grow = 0.5 * (1.0 - t) / tangent[1], False
            continue
        stage = max(tol, STAGE_RTOL * load_scale(p, q, True))
        rows = len(log.rows)
        q_guess, t_guess = _predict(q, t, tangent, ds, scale, behind)
        ok, q_new, t_new = _corrector(p, project(p, q_guess), t_guess, (q, t), tangent, ds,
                                      r0, stage, scale, log)
        if not ok:
            # no mechanism test here (dense: 20 of the 32 s of the 768-bar tower's path): a
            # loaded mechanism fails every step, and the load steps after them test it
            log.failed.append(float(t + ds * tangent[1]))
            ds, grow = 0.5 * ds, False
            continue
        new, new_slope = path_tangent(p, q_new, t_new, r0, scale, tangent)
        # tested every _STABILITY_EVERY steps, and where the path turns back: a fold past
        # an untested loss of stability is the buckling's, not a limit point's
        if len(since) >= _STABILITY_EVERY or new[1] <= 0.0:
            if unstable(p, q_new, t_new, r0):
                # from a stable start: buckled since the last stable test
                log.unstable = (*since, (float(t_new), q_new))
                return since[0][1], since[0][0], None
            since = []
        since.append((float(t_new), q_new))
        if new[1] <= 0.0:
            return q_new, t_new, (q_new, t_new)
        behind, (q, t, tangent, slope) = (q, t), (q_new, float(t_new), new, new_slope)
        log.load_steps.append(t)
        ds *= 2.0 if grow and len(log.rows) - rows <= _QUICK else 1.0
        grow = True
    if len(since) > 1 and unstable(p, q, t, r0):  # the steps failed past an untested instability
        log.unstable = tuple(since)
        return since[0][1], since[0][0], None
    return q, t, None


def _first_arc(p: Problem, q0, slope, rise: float) -> float:
    """The first step's arc length: 1/2 (the full step already failed), halved while its
    linear prediction (``rise`` dt per unit arc, `slope` dq/dt [m]) turns a member by more
    than _FIRST_TURN, down to _SMALLEST_ARC: the halvings the corrector would otherwise try
    and fail one by one, each of a few iterations."""
    _, l = members(p, q0)
    rate = float(np.max(np.linalg.norm(p.mats.differences(slope), axis=1) / l, initial=0.0))
    ds = 0.5
    while ds * rise * rate > _FIRST_TURN and ds >= 2 * _SMALLEST_ARC:
        ds *= 0.5
    return ds


def _predict(q, t, tangent, ds, scale: float, behind):
    """(q, t) predicted at arc length ds along the path from (q, t): on the quadratic with the
    path's unit tangent there that passes through the point `behind` (the path point before,
    None at the start: the tangent line). In the scaled units x = (q / scale, t) it is
    ``x + ds T + ds^2 c`` with ``c = (x_behind - x + h T) / h^2``, h the arc to x_behind: the
    tangent line's error grows as ds^2 times the path's curvature, and on stiff string
    systems it stretches strings (the projection onto the bar lengths moves them) into a
    residual a thousand times the corrector's tolerance, which costs a corrector iteration."""
    tq, tt = tangent
    if behind is None:
        return q + ds * scale * tq, t + ds * tt
    qb, tb = behind
    h = float(np.sqrt(np.sum(((qb - q) / scale) ** 2) + (tb - t) ** 2))
    w = (ds / h) ** 2
    return (q + ds * scale * tq + w * (qb - q + h * scale * tq),
            t + ds * tt + w * (tb - t + h * tt))


def path_tangent(p: Problem, q, t, r0, scale: float, previous=None):
    """The unit tangent (dq (3n,), dt) of the equilibrium path at (q, t), q measured in units
    of `scale` [m], and the path's slope dq/dt (3n,) [m]: ``K_t dq/dt = r0`` on the bar
    lengths' tangent space (:func:`kkt_solver`); oriented along `previous`, else towards
    larger t."""
    r, _, gamma, psi = forces(p, q, (1.0 - t) * r0)
    # unguarded (as the corrector's): the predictor is judged by the correction after it
    slope = kkt_solver(p, tangent_terms(p, q, gamma, psi), 0.0, guarded=False)(r0)
    dq, dt = slope / scale, 1.0
    norm = np.sqrt(dq @ dq + 1.0)
    dq, dt = dq / norm, dt / norm
    if previous is not None and dq @ previous[0] + dt * previous[1] < 0:
        dq, dt = -dq, -dt
    return (dq, dt), slope


def _corrector(p: Problem, q, t, start, tangent, ds, r0, tol, scale, log: Log):
    """Newton on the path and on the plane normal to `tangent` at distance ds from `start`
    (the pseudo-arclength condition, bordered onto the KKT solve: two right-hand sides of
    one factorization); returns (converged, q, t). Gives up when |r| grows twice in a row
    (once is common: a steel string's force takes a predictor's small length error up a
    thousandfold, and the first correction can overshoot)."""
    (qa, ta), (tq, tt) = start, tangent
    last, worse = np.inf, 0
    for _ in range(_CORRECTIONS):
        r, _, gamma, psi = forces(p, q, (1.0 - t) * r0)
        res = np.abs(r).max(initial=0.0)
        if res <= tol:
            log.rows.append((t, res, 0.0, 0.0, 0, 0))
            return True, q, t
        worse = 0 if res < last else worse + 1
        if worse == 2:
            break
        p.budget.spend(p, t, log)
        last = res
        # unguarded: a step from an ill-conditioned system shows in the next residual
        solve = kkt_solver(p, tangent_terms(p, q, gamma, psi), 0.0, guarded=False)
        a, b = solve(r), solve(r0)  # K dq = r + r0 dt: dq = a + dt b
        g = tq @ (q - qa) / scale + tt * (t - ta) - ds
        dt = -(g + tq @ a / scale) / (tq @ b / scale + tt)
        p.counts["trials"] += 1
        trial = project(p, q + a + dt * b)
        log.rows.append((t, res, 1.0, 0.0, 0, 1))
        if not np.all(members(p, trial)[1] > 0):
            break
        q, t = trial, t + dt
    return False, q, t


def _load_steps(p: Problem, q, t, dt, r0, tol, max_iterations, log: Log):
    """(q at t = 1 or None, the load factor reached, the last step): Newton at fixed load
    factors from (q, t), the first step dt, halved when it fails and doubled when it works,
    given up below 2^-7 of the load reached (of the full load from t = 0)."""
    while t < 1.0:
        target = min(1.0, t + dt)
        ok, q_new = equilibrium_at(p, q, target, (1.0 - target) * r0,
                           tol if target == 1.0 else max(tol, STAGE_RTOL * load_scale(p, q, True)),
                           max_iterations, log)
        if ok:
            q, t, dt = q_new, target, 2.0 * dt
            log.load_steps.append(target)
            continue
        log.failed.append(target)
        _check_mechanism(p, q, q_new, target, r0, log)
        dt *= 0.5
        if dt < _SMALLEST_LOAD_STEP * (1.0 if t == 0.0 else t):
            return None, t, dt
    return q, t, dt


def _check_mechanism(p: Problem, q, q_new, target, r0, log: Log) -> None:
    """Raise the MechanismError of a zero-stiffness motion loaded (at load factor `target`)
    at both ends, q and q_new, of a failed step."""
    offset = (1.0 - target) * r0
    error = mechanism(p, q_new, forces(p, q_new, offset)[0], log)
    if error is not None and mechanism(p, q, forces(p, q, offset)[0]):
        raise error


def _buckling_error(p: Problem, r0, tol, max_iterations, log: Log,
                    route: str) -> StaticsError:
    """The StaticsError of a followed path (`route`) that lost stability (the reduced
    stiffness passes zero: a bifurcation, where the structure buckles, or a fold) between its
    last two steps, the bracket narrowed by :func:`_refine_buckling`."""
    ta, tb, t = _refine_buckling(p, r0, tol, max_iterations, log)
    log.outcome(route, f"loses stability near {t:.4g} of the load (buckles)")
    return StaticsError(
        f"{p.structure.name}: no stable equilibrium under the full load: the path of "
        f"equilibria from the start loses stability between {ta:.4g} and {tb:.4g} of the load "
        f"(near {t:.4g}: the reduced tangent stiffness passes zero, the structure buckles "
        "there). Stiffen or prestress the structure, or give smaller loads", log.frozen())


def _refine_buckling(p: Problem, r0, tol, max_iterations, log: Log):
    """(ta, tb, t*): the bracket of the load factor where the path's smallest reduced
    stiffness lambda(t) passes zero, narrowed to 0.5 % by at most _REFINEMENTS steps, and t*
    interpolated linearly in it. Each step is the secant through the last two points (lambda
    is nearly linear in t near t*, but not across a path step that overshot t* 30-fold: the
    nylon towers' then has several modes unstable), kept inside the bracket, else a
    bisection (geometric: the bracket can span decades). Its equilibrium at fixed t is found
    by the |r| Newton (the potential's would leave the unstable straight path for a buckled
    one) from the chord between the two known equilibria nearest t on either side
    (:func:`_between`): the path's points inside the bracket and those found here."""
    points = sorted(log.unstable, key=lambda point: point[0])
    (ta, qa), (tb, qb) = log.unstable[0], log.unstable[-1]
    la, lb = path_stiffness(p, qa, ta, r0), path_stiffness(p, qb, tb, r0)
    last = [(ta, la), (tb, lb)]
    for _ in range(_REFINEMENTS):
        if not la > 0 > lb or tb - ta <= _BRACKET * tb:
            break
        (t1, l1), (t2, l2) = last[-2:]
        t = t2 - l2 * (t2 - t1) / (l2 - l1) if l2 != l1 else ta
        # just past the secant's zero, towards the last point's other side: the next
        # point then closes the bracket
        t *= 1.0 + (_PAST_ZERO if l2 > 0 else -_PAST_ZERO)
        if not ta < t < tb:
            t = np.sqrt(ta * tb) if ta > 0 else 0.5 * tb
        guess = project(p, _between(points, t))
        stage = max(tol, _REFINE_RTOL * load_scale(p, guess, True))
        # the corrector's full Newton steps at fixed t first (the tangent (0, 1) fixes t:
        # its arc condition is t's), as quick here as on the path; the |r| Newton's line
        # search crawls from a chord's guess (17 iterations on the 768-bar steel tower)
        ok, q, _ = _corrector(p, guess, t, (guess, t), (np.zeros_like(guess), 1.0), 0.0, r0,
                              stage, 1.0, log)
        if not ok:
            ok, q = newton(p, guess, t, (1.0 - t) * r0, stage, max_iterations, log)
        if not ok:
            break
        points = sorted([*points, (t, q)], key=lambda point: point[0])
        lt = path_stiffness(p, q, t, r0)
        last.append((t, lt))
        if lt > 0:
            ta, qa, la = t, q, lt
        else:
            tb, qb, lb = t, q, lt
    return ta, tb, (ta + (tb - ta) * la / (la - lb) if la > 0 > lb else tb)


def _between(points, t: float) -> np.ndarray:
    """q (3n,) at load factor t on the chord between the two of `points` ((t, q) sorted by
    t, t inside their range) nearest t on either side: the bracket's ends can be several
    path steps apart, and the chord between them strays from the curved path (the 768-bar
    steel tower's first refinement took 23 Newton iterations from it)."""
    i = int(np.clip(np.searchsorted([u for u, _ in points], t), 1, len(points) - 1))
    (t1, q1), (t2, q2) = points[i - 1], points[i]
    return q1 + (q2 - q1) * (t - t1) / (t2 - t1)


def _limit_point(p: Problem, t, stiffness, log: Log) -> StaticsError:
    """The StaticsError of a path that turns back at load factor t (a fold: past it, no
    nearby equilibrium carries more load); `stiffness` the reduced stiffness there [N/m]."""
    peak = max([t, *log.load_steps])
    return StaticsError(
        f"{p.structure.name}: no equilibrium under the full load near the start: the path of "
        f"equilibria turns back at {peak:.4g} of the load (a limit point: the "
        f"structure buckles or snaps under it; the reduced tangent stiffness there is "
        f"{stiffness:.3g} N/m). Stiffen or prestress the structure, or give smaller loads",
        log.frozen())
