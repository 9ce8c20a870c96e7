"""Static equilibrium under loads at given rest lengths.

The method: docs/theory.md, "Static equilibrium under loads and form-finding".

Unknowns: the free coordinates of q and, for rigid bars, the bar force densities psi (the
multipliers of the bar-length constraints, ``psi = -2 lambda``). The unbalanced force is

    R(q, psi) = -Yhat(q) gamma(q) - Xhat(q) psi + G + f,

with gamma the strings' elastic law (slack below the rest length: the active set follows the
configuration), psi the compressible bars' law or, for rigid bars, the least-squares multipliers
at q. Newton solves ``K_t dq + X dpsi = R``, ``X^T dq = 0`` (the KKT step; K_t the tangent
stiffness of :func:`tenscontrol.tangent_stiffness` with psi held, so that ``K_t = -dR/dq``),
each trial point is put back on the bar-length manifold, and a backtracking line search with
a Levenberg shift of K_t (raised when no step length is accepted) globalizes it. The line
search judges a step by ``|R|`` until it has to cut one; then, for conservative structures
(rigid bars or none), by Armijo's decrease of the total potential (statics.merit), the shift
raised until the step descends it: ``|R|`` is a poor merit on soft slender towers (a 192-bar
tower took 809 cut steps and load stepping, 10 by the potential). A stable equilibrium is a
minimum of the potential; should that path fail (an unstable one), the ``|R|`` path runs from
the same start. When Newton fails at the full load, the imbalance at the start is applied
gradually (a Newton homotopy: the factor t scales it from 0, where the start is in
equilibrium, to 1) and the path of equilibria is followed: a predictor along its tangent
(``K_t dq/dt = r0`` by the KKT solve) and a pseudo-arclength corrector (the KKT solve
bordered by the arc-length condition), the arc length doubled after a quick correction and
halved after a failed one, so the path is followed around a turning point in t. A path from
a stable start that loses stability (the sparse inertia count of K_t turns negative) before
t = 1 is the structure buckling under the load: the load factor where the smallest reduced
stiffness passes zero is bracketed by secant steps on it at fixed t, and a StaticsError gives
it; a path that turns back at a limit point without losing stability is one too. A start
that is not a stable equilibrium of the homotopy is replaced by the unloaded equilibrium
near it (conservative structures), from which the path is the loading history and t the
fraction of the loads; Newton at the full load is not tried from such a start. Where
neither holds, or the path's steps fail, load steps of Newton at fixed t are taken
instead, halving a step that fails and doubling one that works.
"""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.linalg
import scipy.sparse

from tenscontrol import validation
from tenscontrol.mechanics.checks import check_members
from tenscontrol.mechanics.geometry import member_columns, nodal_vector
from tenscontrol.mechanics.laws import (active_set, elastic_densities, material_coefficients,
                                        string_densities)
from tenscontrol.mechanics.rigid.model import gravity_vector
from tenscontrol.statics.result import (MechanismError, NewtonHistory,
                                                 StaticEquilibrium, StaticsError,
                                                 describe_motion, loaded_zero_modes,
                                                 working_modes)
from tenscontrol.statics import spectrum
from tenscontrol.statics.linalg import BarGram, MemberMatrices, kkt_factor
from tenscontrol.statics.merit import total_potential
from tenscontrol.statics.stiffness import (loaded_rigid_fields, rigid_fields, string_activity,
                                          tangent_stiffness)
from tenscontrol.mechanics.scales import force_rounding, structure_scales
from tenscontrol.model.structure import Structure

__all__ = ["static_equilibrium", "unbalanced_force", "static_tangent"]

_BAR_MODELS = ("rigid", "compressible")
#: Intermediate load steps and path points converge to this residual relative to the member
#: forces; only the full load needs rtol. They serve as the next predictor's start and the
#: stability test's point: on the steel towers 1e-6 gives the same buckling load (0.6551 of
#: gravity at 384 bars) in 390 corrector iterations instead of 596 (1e-8).
_STAGE_RTOL = 1e-6
#: Steps cut short in a row after which the line search judges by the total potential: a
#: full Newton step keeps Newton's own path (and quadratic tail) wherever |r| accepts it.
_CUTS = 1
#: The shortest step the line search tries (twelve halvings of the Newton step).
_SMALLEST_STEP = 0.5 ** 11
#: Iterations of the projection onto the bar lengths (chord iterations, refactored when slow).
_PROJECTIONS = 16
#: Pseudo-arclength corrector iterations; a correction in at most _QUICK - 1 iterations
#: doubles the arc length (two: on the steel towers three or more were the rule, and
#: doubling after three failed the next step one time in three: 304 -> 257 iterations).
_CORRECTIONS = 8
_QUICK = 3
#: The shortest arc length of a path step (in units of the load factor).
_SMALLEST_ARC = 0.5 ** 12
#: Secant or bisection steps that narrow the load factor where the path loses stability.
_REFINEMENTS = 8
#: Newton at the full load is skipped, from a stable start, when the start's linear response
#: to the full load (Newton's first step) turns some member by more than this angle [rad]
#: (|dd| / l): the response is far from linear and the path from the start answers. Measured
#: under gravity (turn, Newton at the full load): 9-bar nylon tower 0.6 rad, converged in 12
#: iterations; 30-bar steel tower 0.2 rad, in 33; 96-bar steel tower 1.9 rad and 30-bar
#: steel tower under 30 g 10 rad, failed after 50 (50 iterations thrown away on the 384-
#: and 768-bar ones too); 30-bar nylon tower 3.9 rad, converged in 38 to an unstable
#: equilibrium (returned with a warning), where the path gives the loading history. The
#: strings' stretch does not separate them: its linear change was 3.7-fold on a tower Newton
#: solved, 11-fold on one it did not and 19-fold on another it solved.
_LINEAR_TURN = 1.0

#: The projection onto the bar lengths is done when every squared length is within this
#: fraction of the largest (a few eps: the rounding of |d|^2 itself) ...
_PROJECTED = 4e-16
#: ... or when a fresh factor's Newton iteration stalls within this fraction (its quadratic
#: phase has ended in rounding; a few hundred eps of the squared lengths).
_PROJECTION_ROUNDING = 1e-13
#: Armijo's sufficient decrease (of |r| or of the potential) per unit step length: the usual
#: small value, so that nearly any descent is accepted.
_ARMIJO = 1e-4
#: The Levenberg shift starts at this fraction of the largest diagonal stiffness, grows
#: tenfold a rejection, and gives up past _MAX_SHIFT of it (the step is then a gradient step
#: too short to matter); after an accepted step it falls tenfold, to 0 below _KEEP_SHIFT.
_FIRST_SHIFT, _MAX_SHIFT, _KEEP_SHIFT = 1e-6, 1e8, 1e-4
#: A Newton iterate this many structure sizes from the start has run away (nothing holds it).
_RUNAWAY = 1e3
#: Load steps are given up below this fraction of the load factor reached (2^-7).
_SMALLEST_LOAD_STEP = 0.5 ** 7
#: The buckling bracket is narrowed to this fraction of its upper load factor (0.5 %).
_BRACKET = 5e-3
#: The secant's next load factor is moved by this fraction past its zero, away from t*
#: itself, where K_t is singular (its dense fallback took 7 of a 10-s solve).
_PAST_ZERO = 1e-3
#: rcond of the dense null spaces (the dense stability path of small problems): far above
#: the rounding of unit rows, far below any real constraint angle.
_NULL_RCOND = 1e-10
#: A rigid field is kept in the stability test where K couples it to the admissible motions
#: by less than this fraction of max|K| (rounding of K's sums) plus _RESIDUAL_MOMENT times
#: the residual's moment over the structure size (what is left of the loads' moment).
_RIGID_COUPLING, _RESIDUAL_MOMENT = 1e-10, 1e2
#: The mechanism check's window: eigenvalues within this fraction of K's scale are zero.
_ZERO_STIFFNESS = 1e-8
#: A least stiffness below this fraction of K's largest entry is rounding, i.e. zero (about 45
#: machine epsilons): the as-built T-bar with three slack strings (a mechanism) reads
#: +-5.8e-11 N/m against 9.1e5 (6e-17) depending on the basis, while the 384-bar steel tower's
#: smallest stiffnesses near its buckling load are 2e-12 of its largest and real (the wider
#: mechanism window _ZERO_STIFFNESS made its stable start look unstable)
_ROUNDING_STIFFNESS = 1e-14
#: Loads whose work along a free rigid motion is below this fraction of the largest load
#: have no resultant along it (rounding of the sum).
_NO_RESULTANT = 1e-12

#: The path's stability test (an inertia count, a quarter of a path step's cost) runs every
#: this many accepted steps; where it finds the path unstable, the buckling bracket starts
#: from the last point it found stable (the secant narrows a few steps' bracket in one or
#: two more solves); the full load is tested whatever the count.
_STABILITY_EVERY = 4

#: The routes, in the order the driver tries them (NewtonHistory.routes).
NEWTON, PATH, UNLOADED_PATH, LOAD_STEPS = "newton", "path", "unloaded start + path", "load steps"


@dataclass(frozen=True, eq=False)
class _Problem:
    """The fixed data of one solve: structure, bar model, free coordinates, loads and scales."""

    structure: Structure
    bars: str
    free: np.ndarray
    f: np.ndarray        # external loads (3n,) [N]
    load: np.ndarray     # gravity plus loads (3n,) [N]
    lengths: np.ndarray  # rigid bar lengths L (n_bars,) [m]
    gauge: np.ndarray    # rigid-body fields on the free coordinates (nf, n_r)
    index: np.ndarray    # free index of each coordinate (3n,), -1 if fixed
    size: float          # structure size [m], for the runaway guard
    force: float         # force scale E / L [N] (mechanics.scales.structure_scales)
    stiffness: float     # stiffness scale E / L^2 [N/m]
    mats: MemberMatrices  # the sparse matrices' fixed patterns, refilled at each point
    # linear solves that left the sparse path ("dense_bar": BarGram, "dense_kkt": kkt_solve)
    counts: Counter = field(default_factory=Counter)

    @property
    def rigid(self) -> bool:
        return self.bars == "rigid"


def _law_gamma(structure: Structure, q: np.ndarray) -> np.ndarray:
    """String force densities by the dynamics' law: k (1 - l0/l) when l > l0 (springs always)."""
    N = q.reshape(-1, 3)
    p = structure.string_nodes
    l = np.linalg.norm(N[p[:, 1]] - N[p[:, 0]], axis=1)
    return string_densities(structure.string_stiffness, structure.string_rest_lengths, l,
                            structure.string_is_spring)


def _bar_lengths(structure: Structure, q: np.ndarray) -> np.ndarray:
    N = q.reshape(-1, 3)
    p = structure.bar_nodes
    return np.linalg.norm(N[p[:, 1]] - N[p[:, 0]], axis=1)


def _load_at(p: _Problem, q: np.ndarray) -> np.ndarray:
    """Gravity plus loads at q (3n,) [N]. A Structure's bar mass is its density times its
    length between the nodes, so a compressible bar's weight follows its length: the dynamics
    of ``structure.with_nodes(q)`` see the weight at q, and so must its equilibrium."""
    s = p.structure
    if p.rigid or not s.n_bars:
        return p.load
    extra = 0.5 * (s.bar_masses / s.bar_lengths) * (_bar_lengths(s, q) - s.bar_lengths)
    dm = np.zeros(s.n_nodes)
    np.add.at(dm, s.bar_nodes[:, 0], extra)
    np.add.at(dm, s.bar_nodes[:, 1], extra)
    return p.load + np.kron(dm, s.gravity)


def _members(p: _Problem, q: np.ndarray):
    """(d (m, 3), l (m,)): n_j - n_i and the length of every member, strings then bars."""
    d = p.mats.differences(q)
    return d, np.sqrt(np.einsum("ij,ij->i", d, d))


def _gram(p: _Problem, q: np.ndarray) -> BarGram:
    """The normal equations of the (active) bar columns at q, counting a dense (rank-revealing)
    one; the matrices are refilled on their fixed patterns."""
    ns = p.structure.n_strings
    gram = p.mats.gram(p.mats.bar_columns(p.mats.differences(q)[ns:]))
    if gram.dense is not None:
        p.counts["dense_bar"] += 1
    return gram


def _forces(p: _Problem, q: np.ndarray, offset: np.ndarray):
    """(r on the free coordinates, full R (3n,), gamma, psi) at q, minus the homotopy offset."""
    s = p.structure
    d, l = _members(p, q)
    ns, psi = s.n_strings, np.zeros(s.n_bars)
    gamma = string_densities(s.string_stiffness, s.string_rest_lengths, l[:ns],
                             s.string_is_spring)
    F = _load_at(p, q) + p.mats.forces(d, np.concatenate([gamma, psi]))
    if p.rigid and p.mats.nba:
        psi[p.mats.bar_active] = _gram(p, q).least_squares(F[p.free] - offset)
    elif not p.rigid:
        psi = elastic_densities(s.bar_stiffness, s.bar_rest_lengths, l[ns:])
    R = F + p.mats.forces(d, np.concatenate([np.zeros(ns), psi]))
    return R[p.free] - offset, R, gamma, psi


def _tangent(p: _Problem, q: np.ndarray, gamma: np.ndarray, psi: np.ndarray):
    """(d, densities, material coefficients) of every member: the terms of ``K_t = -dR/dq``
    (:func:`static_tangent`, at_rest="taut"), for the sparse KKT matrix."""
    s = p.structure
    d, l = _members(p, q)
    ns = s.n_strings
    active, _ = string_activity(s, l[:ns], "taut")
    material = [np.where(active, material_coefficients(s.string_stiffness,
                                                       s.string_rest_lengths, l[:ns]), 0.0),
                np.zeros(s.n_bars) if p.rigid else
                material_coefficients(s.bar_stiffness, s.bar_rest_lengths, l[ns:])]
    return d, np.concatenate([gamma, psi]), np.concatenate(material)


def unbalanced_force(structure: Structure, q=None, *, loads=None, bars: str = "rigid",
                     bar_force_densities=None) -> np.ndarray:
    """The unbalanced nodal force R (3n,) [N] at q: gravity + loads - member forces.

    Strings follow their elastic law (slack below the rest length). Rigid bars take
    `bar_force_densities` (psi, negative in compression) if given, else the least-squares
    multipliers on the free coordinates; compressible bars their law. R vanishes on the free
    coordinates at an equilibrium; on the fixed ones it is minus the support reaction.
    """
    _check_arguments("unbalanced_force", structure, bars, loads=loads, q=q,
                     bar_force_densities=bar_force_densities)
    q = nodal_vector(structure.n_nodes, "q", q, structure.nodes.reshape(-1))
    p = _problem(structure, loads, bars, check=False)
    _, R, gamma, psi = _forces(p, q, np.zeros(p.free.size))
    if bar_force_densities is not None:
        given = validation.per_item("unbalanced_force: bar_force_densities", bar_force_densities,
                                    structure.n_bars, "N/m", items=" (one per bar)")
        R = R + member_columns(structure.bar_nodes, q) @ (psi - given)
    return R


def static_tangent(structure: Structure, q, psi, bars: str = "rigid") -> np.ndarray:
    """``K_t = -dR/dq`` (3n, 3n) [N/m] with the rigid bars' psi held (the law's for compressible)."""
    _check_arguments("static_tangent", structure, bars, q=q, psi=psi)
    q = nodal_vector(structure.n_nodes, "q", q)
    psi = validation.per_item("static_tangent: psi", psi, structure.n_bars, "N/m",
                              items=" (one per bar)")
    gamma = _law_gamma(structure, q)
    return tangent_stiffness(structure, q, gamma=gamma, bar_force_densities=psi, bars=bars,
                             at_rest="taut")


def _problem(structure, loads, bars, check=True) -> _Problem:
    if not isinstance(structure, Structure):
        raise TypeError(f"expected a tenscontrol.Structure, got {type(structure).__name__}")
    if bars not in _BAR_MODELS:
        raise ValueError(f"bars must be 'rigid' or 'compressible', got {bars!r}")
    if check:
        check_members(structure, "static_equilibrium", bars=bars, inertia=False)
    f = nodal_vector(structure.n_nodes, "loads", loads)
    q0 = structure.nodes.reshape(-1)
    free = np.asarray(structure.free_coordinates)
    R_t = rigid_fields(structure, q0, bars=bars)
    span = structure.nodes.max(axis=0) - structure.nodes.min(axis=0)
    index = np.full(q0.size, -1)
    index[free] = np.arange(free.size)
    scales = structure_scales(structure, loads=f)  # the guards' units: the structure's own
    mats = MemberMatrices(structure.string_nodes, structure.bar_nodes, index, R_t[free],
                          bars == "rigid")
    return _Problem(structure, bars, free, f, gravity_vector(structure) + f,
                    structure.bar_lengths.copy(), R_t[free], index,
                    float(max(span.max(), scales.length)), scales.energy / scales.length,
                    scales.energy / scales.length ** 2, mats)


def _project(p: _Problem, q: np.ndarray, lengths=None) -> np.ndarray:
    """q moved (min-norm, free coordinates only) onto bar lengths `lengths` (default: the
    rigid bars' lengths; compressible bars have none unless given)."""
    if lengths is None:
        if not (p.rigid and p.structure.n_bars):
            return q
        lengths = p.lengths
    q = q.copy()
    scale, last, gram, fresh = (lengths ** 2).max(), np.inf, None, False
    for iteration in range(2 * _PROJECTIONS):
        phi = _bar_lengths(p.structure, q) ** 2 - lengths ** 2
        err = np.abs(phi).max()
        if err <= _PROJECTED * scale:
            break
        slow = err > 0.5 * last
        if slow and fresh and err <= _PROJECTION_ROUNDING * scale:
            break  # Newton's quadratic phase has ended in rounding
        if slow or iteration >= _PROJECTIONS:
            # the chord slowed down, or a far start (a long trial step) used up the chord
            # iterations: a new factor at q, full Newton from here on
            gram = None
        # a chord (simplified Newton) iteration: the factor of the first point is reused
        # while it contracts; a factorization per iteration was most of a trial's cost
        fresh = gram is None
        gram = _gram(p, q) if fresh else gram
        last = err
        q[p.free] += gram.min_norm_step(-0.5 * phi[p.mats.bar_active])
    return q


def _kkt_solver(p: _Problem, tangent, mu: float, guarded: bool = True):
    """A function r (nf,) -> dq (3n,) solving ``[[K + mu I, C], [C^T, 0]] [dq; y] = [r; 0]``
    with one factorization: C the active bar columns (rigid bars; bars fixed at both ends have
    none) and the gauge; `tangent` the member terms of K (:func:`_tangent`). `guarded`: with
    the condition test of :func:`~tenscontrol.statics.linalg.kkt_factor`."""
    d, density, material = tangent
    X = (p.mats.bar_columns(d[p.structure.n_strings:]) if p.rigid and p.mats.nba else None)
    solve = kkt_factor(p.mats.kkt(d, density, material, mu, X), p.free.size, p.counts,
                       guarded)

    def step(r):
        dq = np.zeros(3 * p.structure.n_nodes)
        dq[p.free] = solve(r)
        return dq
    return step


def _kkt_step(p: _Problem, q: np.ndarray, tangent, r: np.ndarray, mu: float):
    """Newton step dq (3n,) of :func:`_kkt_solver`."""
    return _kkt_solver(p, tangent, mu)(r)


@dataclass
class _Log:
    """Mutable record of the iterations, frozen into a NewtonHistory at the end."""

    rows: list
    load_steps: list
    failed: list
    # the path's steps (t, q) on either side of where it lost stability (path following)
    unstable: tuple | None = None
    # the routes tried, "name: outcome" (NewtonHistory.routes)
    routes: list = field(default_factory=list)

    def frozen(self) -> NewtonHistory:
        cols = list(zip(*self.rows)) if self.rows else [()] * 6
        return NewtonHistory(np.array(cols[0], float), np.array(cols[1], float),
                             np.array(cols[2], float), np.array(cols[3], float),
                             np.array(cols[4], int), tuple(self.load_steps), tuple(self.failed),
                             np.array(cols[5], int), tuple(self.routes))

    def outcome(self, route: str, what: str) -> None:
        """Record that `route` ended with `what` ("answered", "failed after ...", ...)."""
        self.routes.append(f"{route}: {what}")


def _line_search(p, q, dq, r, offset, merit=None):
    """(alpha, q_new, state) of the first accepted step length, or None: from 1, each
    rejected length cut to the minimum of the merit's quadratic model (:func:`_interpolate`);
    where that finds none, the halvings 1, 1/2, ..., 1/2^11 (:func:`_backtrack`). Strings
    that go slack and taut again make the merit kinked, and the acceptable lengths can lie in
    a narrow window (a payload whose strings all went slack is caught again only near 1/64)
    that cuts by up to 10 can step over.
    """
    return (_backtrack(p, q, dq, r, offset, merit, interpolate=True)
            or _backtrack(p, q, dq, r, offset, merit, interpolate=False))


def _backtrack(p, q, dq, r, offset, merit, interpolate: bool):
    """The backtracking of :func:`_line_search`: each rejected length cut by the quadratic
    model's factor (`interpolate`) or halved.

    Without `merit`, a step is accepted when it reduces |r|; with ``merit = (Pi, noise,
    slope)`` (the potential at q, its rounding error and its derivative along dq, negative),
    when Pi decreases by Armijo's test, or, where the change of Pi is below its rounding
    error (near the solution), when |r| decreases.
    """
    norm = np.linalg.norm(r)
    alpha = 1.0
    l, slope = None, None
    if not p.rigid and p.structure.n_bars:  # stiff bar springs: keep their length change linear
        ns = p.structure.n_strings
        d, l = (a[ns:] for a in _members(p, q))
        slope = np.einsum("ij,ij->i", d, p.mats.differences(dq)[ns:]) / l
    bend = _bend(p, q, dq)
    while alpha >= _SMALLEST_STEP:
        p.counts["trials"] += 1
        trial = _project(p, q + alpha * dq + alpha ** 2 * bend,
                         None if l is None else l + alpha * slope)
        shrink = 0.5
        if np.all(_members(p, trial)[1] > 0):
            state = _forces(p, trial, offset)
            new_norm = np.linalg.norm(state[0])
            decrease = new_norm <= (1.0 - _ARMIJO * alpha) * norm
            # the minimum of the quadratic through the merit at 0 and alpha and its slope
            # at 0 (|r|^2 / 2 falls as -|r|^2 along a Newton step)
            shrink = _interpolate(0.5 * (new_norm ** 2 - norm ** 2), -norm ** 2, alpha)
            if merit is not None:
                pi, noise, dpi = merit
                change = total_potential(p.structure, trial, p.load, p.free, offset)[0] - pi
                armijo = change <= _ARMIJO * alpha * dpi
                decrease = armijo or (decrease and abs(change) <= noise
                                      and -alpha * dpi <= noise)
                shrink = _interpolate(change, dpi, alpha)
            if decrease:
                return alpha, trial, state
        alpha *= shrink if interpolate else 0.5
    return None


def _bend(p: _Problem, q, dq) -> np.ndarray:
    """The second-order correction c (3n,) of a step dq that keeps the rigid bars' lengths
    (``X^T dq = 0``): their squared lengths change by ``alpha^2 |Dd_b|^2`` along q + alpha dq,
    and by O(alpha^3) along q + alpha dq + alpha^2 c. The projection of a trial point then
    starts nearer the bar lengths (11 chord iterations a trial on the towers before)."""
    c = np.zeros_like(q)
    if p.rigid and p.mats.nba:
        dd = p.mats.differences(dq)[p.structure.n_strings:][p.mats.bar_active]
        c[p.free] = _gram(p, q).min_norm_step(-0.5 * np.einsum("ij,ij->i", dd, dd))
    return c


def _interpolate(change: float, slope: float, alpha: float) -> float:
    """The factor (in [0.1, 0.5]) that takes a rejected step length alpha to the minimum of
    the quadratic with value 0 and slope `slope` (< 0) at 0 and `change` at alpha: a
    safeguarded backtracking that cuts a far too long step in one or two trials, not ten."""
    curvature = change - slope * alpha
    if not (slope < 0 and curvature > 0):
        return 0.5
    return float(np.clip(-slope * alpha / (2.0 * curvature), 0.1, 0.5))


def _newton(p: _Problem, q, t, offset, tol, max_iterations, log: _Log, energy=False):
    """Newton at load factor t from q; returns (converged, q).

    The line search's merit is |r|. With `energy`, once _CUTS step(s) in a row were cut short
    (|r| is a poor guide: soft slender towers), it is the total potential (conservative
    structures: rigid bars or none), and the Levenberg shift is raised until the step
    descends it, so that only a minimum, a stable equilibrium, is found. Newton's easy cases
    keep their |r| path.
    """
    state = _forces(p, q, offset)
    mu, cuts = 0.0, 0
    for _ in range(max_iterations):
        r, _, gamma, psi = state
        res = np.abs(r).max(initial=0.0)
        if res <= tol:
            log.rows.append((t, res, 0.0, 0.0, 0, 0))  # the converged iterate: no step
            return True, q
        K = _tangent(p, q, gamma, psi)
        mu_scale = max(np.abs(p.mats.diagonal(*K)).max(initial=0.0), 1e-12 * p.stiffness)
        trials = p.counts["trials"]
        found = _step(p, q, K, r, mu, mu_scale, offset, energy and cuts >= _CUTS)
        if found is None:
            log.rows.append((t, res, 0.0, mu, 0, p.counts["trials"] - trials))
            return False, q
        alpha, q_new, new, mu = found
        cuts = cuts + 1 if alpha < 1.0 else 0
        switches = int(np.sum((gamma > 0) != (new[2] > 0)))
        log.rows.append((t, res, alpha, mu, switches, p.counts["trials"] - trials))
        q, state = q_new, new
        mu = 0.0 if mu <= _KEEP_SHIFT * mu_scale else 0.1 * mu
        if np.abs(q - p.structure.nodes.reshape(-1)).max() > _RUNAWAY * p.size:
            return False, q  # runs away: nothing holds it
    r = state[0]
    return bool(np.abs(r).max(initial=0.0) <= tol), q


def _solve(p: _Problem, q, t, offset, tol, max_iterations, log: _Log):
    """Newton with the potential as merit where the structure is conservative (rigid bars or
    none: the loads are constant), and, if that fails (an unstable equilibrium is no
    minimum), Newton with the |r| merit from the same start; returns (converged, q)."""
    if p.rigid or not p.structure.n_bars:
        ok, q_new = _newton(p, q, t, offset, tol, max_iterations, log, energy=True)
        if ok:
            return ok, q_new
    return _newton(p, q, t, offset, tol, max_iterations, log)


def _step(p, q, K, r, mu, mu_scale, offset, energy):
    """(alpha, q_new, state, mu) of an accepted step, raising the Levenberg shift mu until
    the line search accepts one (and, with `energy`, until the step descends Pi); None when
    mu passes 1e8 times the largest diagonal stiffness."""
    merit = total_potential(p.structure, q, p.load, p.free, offset) if energy else None
    while True:
        dq = _kkt_step(p, q, K, r, mu)
        slope = -float(r @ dq[p.free])  # dPi along dq: dq^T (K + mu) dq > 0 on descent
        if not energy or slope < 0:
            found = _line_search(p, q, dq, r, offset, None if merit is None
                                 else (*merit, slope))
            if found is not None:
                return (*found, mu)
        mu = _FIRST_SHIFT * mu_scale if mu == 0.0 else 10.0 * mu
        if mu > _MAX_SHIFT * mu_scale:
            return None


def _scale(p: _Problem, q, members: bool = False) -> float:
    """The load scale: largest free nodal load, else the largest member force, else the
    structure's force scale E / L.

    With `members`, the larger of the two: the rounding error of the residual grows with the
    member forces, so a convergence test against a light load alone could never be met.
    """
    load = np.abs(p.load[p.free]).max(initial=0.0)
    if load > 0 and not members:
        return float(load)
    gamma = _law_gamma(p.structure, q)
    d = p.mats.differences(q)
    member = np.abs(p.mats.forces(d, np.concatenate([gamma, np.zeros(p.structure.n_bars)]))
                    ).max(initial=0.0)
    return float(max(member, load)) if max(member, load) > 0 else p.force


def _rounding_floor(p: _Problem) -> float:
    """The residual's rounding error [N] (:func:`~tenscontrol.mechanics.scales.force_rounding`,
    the floor linearize's equilibrium test shares): a law k (1 - l0/l) l loses eps k l, which
    for stiff compressible bars (k ~ 1e7 N/m) is far above 1e-12 of the loads, and a
    coordinate is known to eps |q| only, which the stiffest member turns into eps k |q|."""
    return force_rounding(p.structure, p.bars)


def _mechanism(p: _Problem, q, r, log=None) -> MechanismError | None:
    """A MechanismError if a zero-stiffness admissible motion at q is loaded by r, else None."""
    _, _, gamma, psi = _forces(p, q, np.zeros(p.free.size))
    # the rigid fields outside the gauge are rotations that the loads stiffen somewhere
    Rt = rigid_fields(p.structure, q, bars=p.bars)[p.free]
    modes = None
    if p.free.size >= spectrum.SPARSE_MIN_FREE:
        K, X = _sparse_tangent(p, q, gamma, psi)
        gauge = scipy.sparse.csc_matrix(p.gauge)
        zero = spectrum.admissible_zero_modes(
            K, gauge if X is None else scipy.sparse.hstack([X, gauge]), r, _ZERO_STIFFNESS)
        modes = None if zero is None else working_modes(zero, r, Rt)
        p.counts["dense_eigen"] += modes is None
    if modes is None:
        K = static_tangent(p.structure, q, psi, p.bars)[np.ix_(p.free, p.free)]
        modes = loaded_zero_modes(K, _admissible(p, q), r, rotations=Rt)
    if modes.shape[1] == 0:
        return None
    v = np.zeros(3 * p.structure.n_nodes)
    v[p.free] = modes[:, 0] * np.sign(modes[:, 0] @ r)
    text, nodes = describe_motion(v)
    return MechanismError(
        f"{p.structure.name}: a mechanism: the loads (gravity included) drive a motion no "
        f"member resists, so no configuration holds them: {text}. Fix those coordinates, add "
        "strings or bars that resist the motion, or prestress the structure "
        "(tenscontrol.equilibrium)", v.reshape(-1, 3), nodes, None if log is None else
        log.frozen())


def _admissible(p: _Problem, q) -> np.ndarray:
    """Orthonormal basis (nf, r) of the free-coordinate motions the constraints and gauge allow."""
    rows = [p.gauge.T]
    if p.rigid and p.structure.n_bars:
        rows.insert(0, member_columns(p.structure.bar_nodes, q)[p.free].T)
    C = np.vstack(rows)
    if C.shape[0] == 0:
        return np.eye(p.free.size)
    C = C[np.linalg.norm(C, axis=1) > 0]
    C = C / np.linalg.norm(C, axis=1, keepdims=True)
    return scipy.linalg.null_space(C, rcond=_NULL_RCOND)


def _path_tangent(p: _Problem, q, t, r0, scale: float, previous=None):
    """The unit tangent (dq (3n,), dt) of the equilibrium path at (q, t), q measured in units
    of `scale` [m], and the path's slope dq/dt (3n,) [m]: ``K_t dq/dt = r0`` on the bar
    lengths' tangent space (:func:`_kkt_solver`); oriented along `previous`, else towards
    larger t."""
    r, _, gamma, psi = _forces(p, q, (1.0 - t) * r0)
    # unguarded (as the corrector's): the predictor is judged by the correction after it
    slope = _kkt_solver(p, _tangent(p, q, gamma, psi), 0.0, guarded=False)(r0)
    dq, dt = slope / scale, 1.0
    norm = np.sqrt(dq @ dq + 1.0)
    dq, dt = dq / norm, dt / norm
    if previous is not None and dq @ previous[0] + dt * previous[1] < 0:
        dq, dt = -dq, -dt
    return (dq, dt), slope


def _corrector(p: _Problem, q, t, start, tangent, ds, r0, tol, scale, log: _Log):
    """Newton on the path and on the plane normal to `tangent` at distance ds from `start`
    (the pseudo-arclength condition, bordered onto the KKT solve: two right-hand sides of
    one factorization); returns (converged, q, t). Gives up when |r| grows twice in a row
    (once is common: a steel string's force takes a predictor's small length error up a
    thousandfold, and the first correction can overshoot)."""
    (qa, ta), (tq, tt) = start, tangent
    last, worse = np.inf, 0
    for _ in range(_CORRECTIONS):
        r, _, gamma, psi = _forces(p, q, (1.0 - t) * r0)
        res = np.abs(r).max(initial=0.0)
        if res <= tol:
            log.rows.append((t, res, 0.0, 0.0, 0, 0))
            return True, q, t
        worse = 0 if res < last else worse + 1
        if worse == 2:
            break
        last = res
        # unguarded: a step from an ill-conditioned system shows in the next residual
        solve = _kkt_solver(p, _tangent(p, q, gamma, psi), 0.0, guarded=False)
        a, b = solve(r), solve(r0)  # K dq = r + r0 dt: dq = a + dt b
        g = tq @ (q - qa) / scale + tt * (t - ta) - ds
        dt = -(g + tq @ a / scale) / (tq @ b / scale + tt)
        p.counts["trials"] += 1
        trial = _project(p, q + a + dt * b)
        log.rows.append((t, res, 1.0, 0.0, 0, 1))
        if not np.all(_members(p, trial)[1] > 0):
            break
        q, t = trial, t + dt
    return False, q, t


def _full_load(p: _Problem, q0, tol, max_iterations, log: _Log):
    """(converged, q, whether the start is stable or None if not tested, the stable unloaded
    start or None, whether Newton at the full load was tried).

    The route is decided from the start: a start out of equilibrium and unstable under the
    loads with a stable unloaded equilibrium near it (:func:`_loading_start`) goes to the path
    from there; a stable start whose linear response to the full load is far from linear
    (:func:`_far_from_linear`) to the path from the start; only the rest try :func:`_solve` at
    the full load, and from a stable start without the |r| Newton after the potential's has
    failed (the path from there finds the loaded equilibrium on the loading path)."""
    zero = np.zeros(p.free.size)
    if not (p.rigid or not p.structure.n_bars):
        ok, q = _newton(p, q0, 1.0, zero, tol, max_iterations, log)
        log.outcome(NEWTON, "answered" if ok else f"failed after {max_iterations} iterations")
        return ok, q, None, None, True
    start = _loading_start(p, q0, tol, max_iterations, log)
    if start is not None:
        log.outcome(NEWTON, "skipped (the start is unstable under the loads, stable without)")
        return False, q0, False, start, False
    far = _far_from_linear(p, q0, tol)
    if far and _path_stiffness(p, q0, 0.0, _forces(p, q0, zero)[0]) > 0:
        log.outcome(NEWTON, f"skipped ({far})")
        return False, q0, True, None, False
    ok, q = _newton(p, q0, 1.0, zero, tol, max_iterations, log, energy=True)
    if ok:
        log.outcome(NEWTON, "answered")
        return ok, q, None, None, True
    failed = f"failed after {max_iterations} iterations"
    stable = _path_stiffness(p, q0, 0.0, _forces(p, q0, zero)[0]) > 0
    if stable:
        log.outcome(NEWTON, failed)
        return False, q, stable, None, True
    ok, q = _newton(p, q0, 1.0, zero, tol, max_iterations, log)
    log.outcome(NEWTON, "answered (|r| merit)" if ok else failed + " (potential and |r|)")
    return ok, q, stable, None, True


def _far_from_linear(p: _Problem, q0, tol) -> str:
    """Why the start's linear response to the full load (one KKT solve, Newton's first step)
    is far from linear, or "" if it is not: it turns a member by more than _LINEAR_TURN."""
    r, _, gamma, psi = _forces(p, q0, np.zeros(p.free.size))
    if np.abs(r).max(initial=0.0) <= tol:
        return ""
    dq = _kkt_solver(p, _tangent(p, q0, gamma, psi), 0.0)(r)
    _, l = _members(p, q0)
    turn = float(np.max(np.linalg.norm(p.mats.differences(dq), axis=1) / l, initial=0.0))
    return (f"its linear response turns a member by {turn:.3g} rad" if turn > _LINEAR_TURN
            else "")


def _loading_start(p: _Problem, q0, tol, max_iterations, log: _Log):
    """The stable unloaded equilibrium near q0 (:func:`_unloaded_start`) where q0 is out of
    equilibrium and unstable under the loads, else None (a conservative structure). The path
    from there is the loading history, whose verdict Newton at the full load could only
    contradict: it reached an unstable equilibrium on the 30- and 96-bar nylon towers, and
    failed twice on the 768-bar one (19 of its 23 s). The search's counts and rows join p's
    and the log only when it succeeds: every other case runs as if it had not been made."""
    probe = replace(p, counts=Counter())
    r0 = _forces(probe, q0, np.zeros(p.free.size))[0]
    if np.abs(r0).max(initial=0.0) <= tol:
        return None
    count = _negative_count(probe, q0, r0)
    if count == 0 or (count is None and _path_stiffness(probe, q0, 0.0, r0) > 0):
        return None
    rows = _Log([], [], [])
    start = _unloaded_start(probe, q0, tol, max_iterations, rows)
    if start is not None:
        p.counts.update(probe.counts)
        log.rows.extend(rows.rows)
    return start


def _negative_count(p: _Problem, q0, r0) -> int | None:
    """The negative stiffnesses at the start by the sparse inertia count (one L D L^T; a
    positive one is taken as it is: the dense test that would confirm it took 1.8 of the
    768-bar nylon tower's 3 s), or None (untrusted, or a small problem: the reduced
    stiffness decides)."""
    if p.free.size < spectrum.SPARSE_MIN_FREE:
        return None
    _, _, gamma, psi = _forces(p, q0, r0)
    K, X = _sparse_tangent(p, q0, gamma, psi)
    C = _stability_constraints(p, q0, K, X, 0.0)
    return None if C is None else spectrum.admissible_negative_count(K, C)


def _continuation(p: _Problem, q0, tol, max_iterations, log: _Log, stable=None, start=None):
    """From t = 0 (q0 balanced by the offset) to t = 1; returns q at t = 1.

    From a stable start the path of equilibria is followed (:func:`_follow_path`); a path
    that loses stability (the structure buckles) or turns back at a limit point (it buckles
    or snaps) raises a StaticsError that says at which load. From a start that is not a stable
    equilibrium the homotopy's path is no loading history (the nylon towers' turns back at
    0.64 of the load, unstable all along): a conservative structure starts instead from its
    unloaded equilibrium near q0, if that is stable (:func:`_unloaded_start`), and the load
    is applied along the path from there; else, and where the path's steps fail, load steps
    by Newton at fixed t (:func:`_load_steps`). `stable`: whether the start is stable, if
    known; `start`: the stable unloaded start, if already found (:func:`_loading_start`)."""
    r0 = _forces(p, q0, np.zeros(p.free.size))[0]
    q, t, dt = q0, 0.0, 0.5  # the full step already failed
    stable = _path_stiffness(p, q0, 0.0, r0) > 0 if stable is None else stable
    if start is None and not stable:
        start = _unloaded_start(p, q0, tol, max_iterations, log)
    if start is not None:
        # the offset that holds back the loads and the residual left at the start: the
        # rigid bars' multipliers, least squares of the rest, then carry t times the loads,
        # so the path is the loading history and t the fraction of the loads
        q0 = q = start
        unloaded = replace(p, load=np.zeros_like(p.load))
        r0 = p.load[p.free] + _forces(unloaded, q0, np.zeros(p.free.size))[0]
        stable = True
    if stable:
        route = PATH if start is None else UNLOADED_PATH
        q, t, fold = _follow_path(p, q0, r0, tol, max_iterations, log)
        if log.unstable is not None:
            raise _buckling_error(p, r0, tol, max_iterations, log, route)
        if t == 1.0:
            log.outcome(route, "answered")
            return q
        if fold is not None:
            log.outcome(route, f"turns back at {t:.4g} of the load (limit point)")
            raise _limit_point(p, t, _path_stiffness(p, q, t, r0), log)
        log.outcome(route, f"steps failed at {t:.4g} of the load")
        dt = 1.0 - t
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


def _unloaded_start(p: _Problem, q0, tol, max_iterations, log: _Log):
    """The stable equilibrium near q0 without gravity and loads (a conservative structure:
    rigid bars or none), from which the path of equilibria is the loading history; None if
    there is none (not found, or unstable)."""
    if not (p.rigid or not p.structure.n_bars):
        return None
    unloaded = replace(p, load=np.zeros_like(p.load))
    zero = np.zeros(p.free.size)
    ok, q = _solve(unloaded, q0, 0.0, zero, max(tol, _STAGE_RTOL * _scale(p, q0, True)),
                   max_iterations, log)
    if not ok or not _path_stiffness(unloaded, q, 1.0, zero) > 0:
        return None
    return q


def _follow_path(p: _Problem, q0, r0, tol, max_iterations, log: _Log):
    """(q, t, fold): the path of equilibria followed from (q0, 0) to t = 1, or to where it
    turns back (fold: that point, (q, t)) or its steps fail (fold None).

    Each step predicts along the path's tangent and corrects by pseudo-arclength Newton
    (:func:`_corrector`), so it follows the path around a turning point in t; the arc length
    grows after a quick correction and halves after a failed one. The last step goes to
    t = 1 by Newton at that load (:func:`_solve`) from the tangent's prediction."""
    zero = np.zeros(p.free.size)
    slope = _path_tangent(p, q0, 0.0, r0, 1.0)[1]
    scale = max(float(np.abs(slope).max(initial=0.0)), 1e-9 * p.size)  # [m] per unit load
    tangent, slope = _path_tangent(p, q0, 0.0, r0, scale)
    q, t, ds, grow = q0, 0.0, 0.5, True  # the full step already failed
    stable, untested = (q0, 0.0), 0  # the last point tested stable, and steps since
    while ds >= _SMALLEST_ARC:
        if t + ds * tangent[1] >= 1.0:  # the full load is within reach: Newton at t = 1
            ok, q_end = _solve(p, _project(p, q + (1.0 - t) * slope), 1.0, zero, tol,
                               max_iterations, log)
            if ok and _unstable(p, q_end, 1.0, r0):
                # buckled between the last stable test and the full load
                log.unstable = (stable[::-1], (1.0, q_end))
                return stable[0], stable[1], None
            if ok:
                log.load_steps.append(1.0)
                return q_end, 1.0, None
            log.failed.append(1.0)
            ds, grow = 0.5 * (1.0 - t) / tangent[1], False
            continue
        stage = max(tol, _STAGE_RTOL * _scale(p, q, True))
        rows = len(log.rows)
        ok, q_new, t_new = _corrector(p, _project(p, q + ds * scale * tangent[0]),
                                      t + ds * tangent[1], (q, t), tangent, ds, r0, stage,
                                      scale, log)
        if not ok:
            # no mechanism test here (dense: 20 of the 32 s of the 768-bar tower's path): a
            # loaded mechanism fails every step, and the load steps after them test it
            log.failed.append(float(t + ds * tangent[1]))
            ds, grow = 0.5 * ds, False
            continue
        untested += 1
        new, new_slope = _path_tangent(p, q_new, t_new, r0, scale, tangent)
        # tested every _STABILITY_EVERY steps, and where the path turns back: a fold past
        # an untested loss of stability is the buckling's, not a limit point's
        if untested >= _STABILITY_EVERY or new[1] <= 0.0:
            if _unstable(p, q_new, t_new, r0):
                # from a stable start: buckled since the last stable test
                log.unstable = (stable[::-1], (float(t_new), q_new))
                return stable[0], stable[1], None
            stable, untested = (q_new, float(t_new)), 0
        if new[1] <= 0.0:
            return q_new, t_new, (q_new, t_new)
        q, t, tangent, slope = q_new, float(t_new), new, new_slope
        log.load_steps.append(t)
        ds *= 2.0 if grow and len(log.rows) - rows <= _QUICK else 1.0
        grow = True
    if untested and _unstable(p, q, t, r0):  # the steps failed past an untested instability
        log.unstable = (stable[::-1], (t, q))
        return stable[0], stable[1], None
    return q, t, None


def _load_steps(p: _Problem, q, t, dt, r0, tol, max_iterations, log: _Log):
    """(q at t = 1 or None, the load factor reached, the last step): Newton at fixed load
    factors from (q, t), the first step dt, halved when it fails and doubled when it works,
    given up below 2^-7 of the load reached (of the full load from t = 0)."""
    while t < 1.0:
        target = min(1.0, t + dt)
        ok, q_new = _solve(p, q, target, (1.0 - target) * r0,
                           tol if target == 1.0 else max(tol, _STAGE_RTOL * _scale(p, q, True)),
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


def _check_mechanism(p: _Problem, q, q_new, target, r0, log: _Log) -> None:
    """Raise the MechanismError of a zero-stiffness motion loaded (at load factor `target`)
    at both ends, q and q_new, of a failed step."""
    offset = (1.0 - target) * r0
    error = _mechanism(p, q_new, _forces(p, q_new, offset)[0], log)
    if error is not None and _mechanism(p, q, _forces(p, q, offset)[0]):
        raise error


def _path_stiffness(p: _Problem, q, t, r0) -> float:
    """The smallest reduced tangent stiffness [N/m] at (q, t) on the path (the stability
    test's, :func:`_min_stiffness`: sparse from SPARSE_MIN_FREE free coordinates)."""
    r, _, gamma, psi = _forces(p, q, (1.0 - t) * r0)
    return _min_stiffness(p, q, gamma, psi, float(np.abs(r).max(initial=0.0)))


def _unstable(p: _Problem, q, t, r0) -> bool:
    """Whether the path's point (q, t) is unstable: the sparse inertia count (one LDL^T, no
    eigenvalue; at every size, the dense test per path step was a quarter of the 96-bar
    tower's solve) rules it stable, and a negative or untrusted count is confirmed by the
    reduced stiffness (a nylon tower's 3e-5 N/m is 1e-10 of its strings' stiffness, at the
    rounding of the unpivoted factor)."""
    r, _, gamma, psi = _forces(p, q, (1.0 - t) * r0)
    K, X = _sparse_tangent(p, q, gamma, psi)
    C = _stability_constraints(p, q, K, X, float(np.abs(r).max(initial=0.0)))
    if C is not None and spectrum.admissible_negative_count(K, C) == 0:
        return False
    return _path_stiffness(p, q, t, r0) < 0.0


def _buckling_error(p: _Problem, r0, tol, max_iterations, log: _Log,
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


def _refine_buckling(p: _Problem, r0, tol, max_iterations, log: _Log):
    """(ta, tb, t*): the bracket of the load factor where the path's smallest reduced
    stiffness lambda(t) passes zero, narrowed to 0.5 % by at most _REFINEMENTS steps, and t*
    interpolated linearly in it. Each step is the secant through the last two points (lambda
    is nearly linear in t near t*, but not across a path step that overshot t* 30-fold: the
    nylon towers' then has several modes unstable), kept inside the bracket, else a
    bisection (geometric: the bracket can span decades). Its equilibrium at fixed t is found
    by the |r| Newton (the potential's would leave the unstable straight path for a buckled
    one) from the chord between the bracket's equilibria."""
    (ta, qa), (tb, qb) = log.unstable
    la, lb = _path_stiffness(p, qa, ta, r0), _path_stiffness(p, qb, tb, r0)
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
        guess = _project(p, qa + (qb - qa) * (t - ta) / (tb - ta))
        ok, q = _newton(p, guess, t, (1.0 - t) * r0,
                        max(tol, _STAGE_RTOL * _scale(p, guess, True)), max_iterations, log)
        if not ok:
            break
        lt = _path_stiffness(p, q, t, r0)
        last.append((t, lt))
        if lt > 0:
            ta, qa, la = t, q, lt
        else:
            tb, qb, lb = t, q, lt
    return ta, tb, (ta + (tb - ta) * la / (la - lb) if la > 0 > lb else tb)


def _limit_point(p: _Problem, t, stiffness, log: _Log) -> StaticsError:
    """The StaticsError of a path that turns back at load factor t (a fold: past it, no
    nearby equilibrium carries more load); `stiffness` the reduced stiffness there [N/m]."""
    peak = max([t, *log.load_steps])
    return StaticsError(
        f"{p.structure.name}: no equilibrium under the full load near the start: the path of "
        f"equilibria turns back at {peak:.4g} of the load (a limit point: the "
        f"structure buckles or snaps under it; the reduced tangent stiffness there is "
        f"{stiffness:.3g} N/m). Stiffen or prestress the structure, or give smaller loads",
        log.frozen())


def static_equilibrium(structure: Structure, *, loads=None, bars: str = "rigid", q=None,
                       rtol: float = 1e-12, max_iterations: int = 50) -> StaticEquilibrium:
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
    _check_arguments("static_equilibrium", structure, bars, loads=loads, q=q)
    p = _problem(structure, loads, bars)
    q0 = _project(p, nodal_vector(structure.n_nodes, "q", q, structure.nodes.reshape(-1)))
    # the gauge holds only the motions the loads leave rigid; the KKT pattern carries it
    gauge = loaded_rigid_fields(structure, q0, p.load, bars=bars)[p.free]
    p = replace(p, gauge=gauge, mats=MemberMatrices(structure.string_nodes, structure.bar_nodes,
                                                     p.index, gauge, p.rigid))
    _check_rigid_motion(p)
    log = _Log([], [], [])
    tol = max(rtol * _scale(p, q0, members=True), _rounding_floor(p))
    try:
        ok, q_end, stable, start, tried = _full_load(p, q0, tol, max_iterations, log)
        if ok:
            log.load_steps.append(1.0)
        else:
            if tried:
                log.failed.append(1.0)
            q_end = _continuation(p, q0, tol, max_iterations, log, stable, start)
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


def _overflow(p: _Problem) -> ValueError:
    """The error of loads whose Newton steps overflow (their squares leave the float range)."""
    load = float(np.abs(p.load[p.free]).max(initial=0.0))
    return ValueError(f"static_equilibrium: the loads on {p.structure.name} (largest "
                      f"{load:.3g} N on a free coordinate) make the Newton steps overflow "
                      f"(non-finite displacements): no equilibrium in the float range answers "
                      f"them; give the loads in N, many orders smaller")


def _check_arguments(who: str, structure, bars, **arrays) -> None:
    """TypeError/ValueError naming `who`'s argument: structure, bars, and real arrays (complex
    loads would lose their imaginary part in the float conversion, strings fail deep inside)."""
    if not isinstance(structure, Structure):
        raise TypeError(f"{who}: structure must be a tenscontrol.Structure, got "
                        f"{validation.describe(structure)}")
    validation.choice(f"{who}: bars", bars, _BAR_MODELS)
    units = {"loads": "N", "q": "m", "psi": "N/m", "bar_force_densities": "N/m"}
    for name, value in arrays.items():
        if value is not None:
            validation.real_array(f"{who}: {name}", value, units[name])
            if name in ("loads", "q"):
                nodal_vector(structure.n_nodes, f"{who}: {name}", value)


def _stability_basis(p: _Problem, q, K: np.ndarray, residual: float) -> np.ndarray:
    """Orthonormal basis (nf, r) of the admissible motions at q less the rigid fields that
    stay rigid under the load: those K does not couple to any admissible motion (a free
    rotation about the load axis, a translation). A rotation the load stiffens or softens
    (a pendulum's swing) stays, so its eigenvalue decides the stability."""
    Rt = rigid_fields(p.structure, q, bars=p.bars)[p.free]
    if Rt.shape[1] == 0:
        return _admissible(p, q)
    Za = _admissible(replace(p, gauge=Rt[:, :0]), q)  # Rt lies in span(Za)
    # K Rt is the loads' geometric stiffness; what is left at an equilibrium is rounding in
    # K's sums and the residual's moment
    tol = _RIGID_COUPLING * np.abs(K).max(initial=0.0) + _RESIDUAL_MOMENT * residual / p.size
    _, sv, Vt = np.linalg.svd(Za.T @ K @ Rt)
    rigid = Za.T @ (Rt @ Vt[int(np.sum(sv > tol)):].T)
    return Za @ scipy.linalg.null_space(rigid.T, rcond=_NULL_RCOND) if rigid.shape[1] else Za


def _sparse_tangent(p: _Problem, q, gamma, psi):
    """(K, X): the tangent stiffness on the free coordinates (nf, nf) and the active bar
    columns (nf, active bars; None without rigid bars), sparse: the Newton step's terms."""
    tangent = _tangent(p, q, gamma, psi)
    X = (p.mats.bar_columns(tangent[0][p.structure.n_strings:]).copy()
         if p.rigid and p.mats.nba else None)
    nf = p.free.size
    return p.mats.kkt(*tangent, 0.0, X)[:nf, :nf].tocsc(), X


def _stability_constraints(p: _Problem, q, K, X, residual: float):
    """The columns C (nf, m) whose null space is :func:`_stability_basis`' span, found without
    a basis: the bar columns X and the rigid fields K couples to no admissible motion (the
    singular vectors of ``P K R_t``, P the projector onto null(X^T), those of ``Z_a^T K R_t``).
    None where the bars are (nearly) dependent: the dense path decides."""
    Rt = rigid_fields(p.structure, q, bars=p.bars)[p.free]
    cols = [] if X is None else [X]
    if Rt.shape[1] == 0:
        return scipy.sparse.hstack(cols + [scipy.sparse.csc_matrix(p.gauge)], format="csc")
    Y = K @ Rt
    if X is not None:
        gram = p.mats.gram(X)
        if gram.dense is not None:
            return None
        Y = Y - X @ np.column_stack([gram.least_squares(y) for y in Y.T])
    tol = _RIGID_COUPLING * abs(K).max() + _RESIDUAL_MOMENT * residual / p.size
    _, sv, Vt = np.linalg.svd(Y)
    rigid = Rt @ Vt[int(np.sum(sv > tol)):].T
    return scipy.sparse.hstack(cols + [scipy.sparse.csc_matrix(rigid)], format="csc")


def _min_stiffness(p: _Problem, q, gamma, psi, residual: float) -> float:
    """The smallest eigenvalue [N/m] of K on :func:`_stability_basis`' motions: by Lanczos on
    the sparse KKT matrix (:mod:`tenscontrol.statics.spectrum`) from SPARSE_MIN_FREE free
    coordinates, else, or where that cannot vouch for it (counted), on the dense basis."""
    if p.free.size >= spectrum.SPARSE_MIN_FREE:
        K, X = _sparse_tangent(p, q, gamma, psi)
        C = _stability_constraints(p, q, K, X, residual)
        w = None if C is None else spectrum.smallest_admissible_eigenvalue(K, C)
        if w is not None:
            return _zero_within_rounding(w, abs(K).max() if K.nnz else 0.0)
        p.counts["dense_eigen"] += 1
    K = static_tangent(p.structure, q, psi, p.bars)[np.ix_(p.free, p.free)]
    Z = _stability_basis(p, q, K, residual)
    Kr = Z.T @ K @ Z
    w = np.linalg.eigvalsh(0.5 * (Kr + Kr.T)) if Kr.size else np.zeros(1)
    return _zero_within_rounding(float(w[0]), np.abs(K).max(initial=0.0))


def _zero_within_rounding(w: float, scale: float) -> float:
    """`w` [N/m], or 0 where it is rounding (below _ROUNDING_STIFFNESS of K's largest entry
    `scale`): a mechanism's zero eigenvalue comes out with either sign, and its sign must not
    decide whether the equilibrium is stable."""
    return 0.0 if abs(w) <= _ROUNDING_STIFFNESS * scale else float(w)


def _check_rigid_motion(p: _Problem) -> None:
    """MechanismError if the loads have a resultant along a rigid motion nothing holds (the
    gauge: translations, and rotations about the loads' axis, along which they do no work)."""
    if p.gauge.shape[1] == 0:
        return
    work = p.gauge.T @ p.load[p.free]
    if np.abs(work).max() <= _NO_RESULTANT * max(np.abs(p.load).max(), 1e-300):
        return
    v = np.zeros(3 * p.structure.n_nodes)
    v[p.free] = p.gauge @ work / np.linalg.norm(work)
    text, nodes = describe_motion(v)
    raise MechanismError(
        f"{p.structure.name}: a rigid-body mechanism: the fixed coordinates leave a rigid motion "
        f"free, and the loads (gravity included) have a resultant along it ({text}), so no "
        "configuration holds them. Fix coordinates (Structure.with_fixed) or give loads without "
        "resultant force", v.reshape(-1, 3), nodes)


def _result(p: _Problem, q, log: _Log) -> StaticEquilibrium:
    """Certify the residual at q (full load) and build the result."""
    s = p.structure
    r, R, gamma, psi = _forces(p, q, np.zeros(p.free.size))
    residual = float(np.abs(r).max(initial=0.0))
    reactions = np.zeros(3 * s.n_nodes)
    fixed = s.fixed_coordinates
    reactions[fixed] = -R[fixed]
    violation = (float(np.abs(_bar_lengths(s, q) - p.lengths).max(initial=0.0)) if p.rigid
                 else 0.0)
    min_stiffness = _min_stiffness(p, q, gamma, psi, residual)
    N = q.reshape(-1, 3)
    l = np.linalg.norm(N[s.string_nodes[:, 1]] - N[s.string_nodes[:, 0]], axis=1)
    slack = ~active_set(l, s.string_rest_lengths, s.string_is_spring)
    return StaticEquilibrium(
        structure=s.with_nodes(N), q=q, gamma=gamma, bar_force_densities=psi,
        reactions=reactions.reshape(-1, 3), loads=p.f.reshape(-1, 3), residual=residual,
        relative_residual=residual / _scale(p, q), constraint_violation=violation,
        displacement=float(np.linalg.norm(N - s.nodes, axis=1).max(initial=0.0)),
        min_stiffness=min_stiffness, slack=slack, bars=p.bars, history=log.frozen(),
        dense_bar_solves=p.counts["dense_bar"], dense_kkt_solves=p.counts["dense_kkt"],
        dense_eigensolves=p.counts["dense_eigen"])
