"""The fixed data of a static solve and the evaluations every route shares.

:class:`Problem` holds what does not change during a solve (the structure, the bar model, the
free coordinates, the loads, the scales and the sparse matrices' patterns); the functions here
evaluate the unbalanced force ``R(q, psi)`` and the member terms of ``K_t = -dR/dq`` at a
configuration, put a configuration back on the rigid bar lengths, and factor the KKT system of
a Newton step (docs/theory.md, "Static equilibrium under loads and form-finding"). The routes
that use them: :mod:`~tenscontrol.statics.newton`, :mod:`~tenscontrol.statics.continuation`;
the stability tests: :mod:`~tenscontrol.statics.stability`; the driver:
:mod:`~tenscontrol.statics.solve`.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from tenscontrol import validation
from tenscontrol.mechanics.checks import check_members
from tenscontrol.mechanics.geometry import nodal_vector
from tenscontrol.mechanics.laws import elastic_densities, material_coefficients, string_densities
from tenscontrol.mechanics.rigid.model import gravity_vector
from tenscontrol.mechanics.scales import force_rounding, structure_scales
from tenscontrol.model.structure import Structure
from tenscontrol.statics.linalg import BarGram, MemberMatrices, kkt_factor
from tenscontrol.statics.result import NewtonHistory, StaticsError
from tenscontrol.statics.stiffness import rigid_fields, string_activity

__all__ = ["BAR_MODELS", "Budget", "LOAD_STEPS", "Log", "NEWTON", "PATH", "Problem",
           "UNLOADED_PATH", "bar_gram", "bar_lengths", "build_problem", "check_arguments",
           "default_limits", "forces", "kkt_solver", "kkt_step", "law_gamma", "load_at",
           "load_scale", "members", "project", "rounding_floor", "tangent_terms"]

BAR_MODELS = ("rigid", "compressible")

#: The routes, in the order the driver tries them (NewtonHistory.routes).
NEWTON, PATH, UNLOADED_PATH, LOAD_STEPS = "newton", "path", "unloaded start + path", "load steps"

# The projection onto the rigid bar lengths (:func:`project`).
#: Chord iterations before a far start gets a fresh factor (and the cap is twice this).
_PROJECTIONS = 16
#: Projected when every squared length is within this fraction of the largest (a few eps:
#: the rounding of |d|^2 itself) ...
_PROJECTED = 4e-16
#: ... or when a fresh factor's Newton iteration stalls within this fraction (its quadratic
#: phase has ended in rounding; a few hundred eps of the squared lengths).
_PROJECTION_ROUNDING = 1e-13

# The default budget of a solve (:func:`default_limits`), scaled by its free coordinates n:
# the path on the 768-bar steel tower (4,600 free coordinates) took about a thousand
# iterations and 10-13 s of CPU to its buckling load, so these leave room for several times
# that at every size, and stop a solve that runs away long before a user gives up on it.
#: Iterations (Newton and corrector steps, every route together): this plus n.
_BASE_ITERATIONS = 1000
#: CPU time [s]: this plus _CPU_PER_FREE times n.
_BASE_CPU, _CPU_PER_FREE = 30.0, 0.02


def default_limits(n_free: int) -> tuple[float, int]:
    """(CPU time [s], iterations) a solve with `n_free` free coordinates may spend by default."""
    return _BASE_CPU + _CPU_PER_FREE * n_free, _BASE_ITERATIONS + n_free


class Budget:
    """The CPU time and iterations a solve may spend, what it has spent, and the route that
    spends them (mutable, one per solve, shared by every route: :meth:`spend` before each
    Newton or corrector iteration)."""

    def __init__(self, time_limit: float = np.inf, iteration_limit: float = np.inf):
        self.time_limit, self.iteration_limit = time_limit, iteration_limit
        self.start, self.iterations, self.route = time.process_time(), 0, NEWTON

    def spend(self, p: Problem, t: float, log: Log) -> None:
        """Count one iteration at load factor t; raise a StaticsError naming the route and the
        limit when the iterations or the CPU time since the start exceed their limit."""
        self.iterations += 1
        cpu = time.process_time() - self.start
        if self.iterations > self.iteration_limit:
            reason = f"{self.iterations - 1} iterations reached iteration_limit"
        elif cpu > self.time_limit:
            reason = f"{cpu:.3g} s of CPU passed time_limit = {self.time_limit:.3g} s"
        else:
            return
        log.outcome(self.route, f"stopped at {t:.4g} of the load ({reason})")
        raise StaticsError(
            f"{p.structure.name}: static_equilibrium stopped on the route {self.route!r} at "
            f"{t:.4g} of the load: {reason} (time_limit={self.time_limit:.3g} s, "
            f"iteration_limit={self.iteration_limit}). Raise the limit to let it go on, or give "
            "a starting configuration q nearer the loaded shape", log.frozen())


@dataclass(frozen=True, eq=False)
class Problem:
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
    # what the solve may spend and has spent (unlimited outside static_equilibrium)
    budget: Budget = field(default_factory=Budget)

    @property
    def rigid(self) -> bool:
        return self.bars == "rigid"


def law_gamma(structure: Structure, q: np.ndarray) -> np.ndarray:
    """String force densities by the dynamics' law: k (1 - l0/l) when l > l0 (springs always)."""
    N = q.reshape(-1, 3)
    p = structure.string_nodes
    l = np.linalg.norm(N[p[:, 1]] - N[p[:, 0]], axis=1)
    return string_densities(structure.string_stiffness, structure.string_rest_lengths, l,
                            structure.string_is_spring)


def bar_lengths(structure: Structure, q: np.ndarray) -> np.ndarray:
    N = q.reshape(-1, 3)
    p = structure.bar_nodes
    return np.linalg.norm(N[p[:, 1]] - N[p[:, 0]], axis=1)


def load_at(p: Problem, q: np.ndarray) -> np.ndarray:
    """Gravity plus loads at q (3n,) [N]. A Structure's bar mass is its density times its
    length between the nodes, so a compressible bar's weight follows its length: the dynamics
    of ``structure.with_nodes(q)`` see the weight at q, and so must its equilibrium."""
    s = p.structure
    if p.rigid or not s.n_bars:
        return p.load
    extra = 0.5 * (s.bar_masses / s.bar_lengths) * (bar_lengths(s, q) - s.bar_lengths)
    dm = np.zeros(s.n_nodes)
    np.add.at(dm, s.bar_nodes[:, 0], extra)
    np.add.at(dm, s.bar_nodes[:, 1], extra)
    return p.load + np.kron(dm, s.gravity)


def members(p: Problem, q: np.ndarray):
    """(d (m, 3), l (m,)): n_j - n_i and the length of every member, strings then bars."""
    d = p.mats.differences(q)
    return d, np.sqrt(np.einsum("ij,ij->i", d, d))


def bar_gram(p: Problem, q: np.ndarray) -> BarGram:
    """The normal equations of the (active) bar columns at q, counting a dense (rank-revealing)
    one; the matrices are refilled on their fixed patterns."""
    ns = p.structure.n_strings
    gram = p.mats.gram(p.mats.bar_columns(p.mats.differences(q)[ns:]))
    if gram.dense is not None:
        p.counts["dense_bar"] += 1
    return gram


def forces(p: Problem, q: np.ndarray, offset: np.ndarray):
    """(r on the free coordinates, full R (3n,), gamma, psi) at q, minus the homotopy offset."""
    s = p.structure
    d, l = members(p, q)
    ns, psi = s.n_strings, np.zeros(s.n_bars)
    gamma = string_densities(s.string_stiffness, s.string_rest_lengths, l[:ns],
                             s.string_is_spring)
    F = load_at(p, q) + p.mats.forces(d, np.concatenate([gamma, psi]))
    if p.rigid and p.mats.nba:
        psi[p.mats.bar_active] = bar_gram(p, q).least_squares(F[p.free] - offset)
    elif not p.rigid:
        psi = elastic_densities(s.bar_stiffness, s.bar_rest_lengths, l[ns:])
    R = F + p.mats.forces(d, np.concatenate([np.zeros(ns), psi]))
    return R[p.free] - offset, R, gamma, psi


def tangent_terms(p: Problem, q: np.ndarray, gamma: np.ndarray, psi: np.ndarray):
    """(d, densities, material coefficients) of every member: the terms of ``K_t = -dR/dq``
    (:func:`static_tangent`, at_rest="taut"), for the sparse KKT matrix."""
    s = p.structure
    d, l = members(p, q)
    ns = s.n_strings
    active, _ = string_activity(s, l[:ns], "taut")
    material = [np.where(active, material_coefficients(s.string_stiffness,
                                                       s.string_rest_lengths, l[:ns]), 0.0),
                np.zeros(s.n_bars) if p.rigid else
                material_coefficients(s.bar_stiffness, s.bar_rest_lengths, l[ns:])]
    return d, np.concatenate([gamma, psi]), np.concatenate(material)


def build_problem(structure, loads, bars, check=True) -> Problem:
    if not isinstance(structure, Structure):
        raise TypeError(f"expected a tenscontrol.Structure, got {type(structure).__name__}")
    if bars not in BAR_MODELS:
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
    return Problem(structure, bars, free, f, gravity_vector(structure) + f,
                    structure.bar_lengths.copy(), R_t[free], index,
                    float(max(span.max(), scales.length)), scales.energy / scales.length,
                    scales.energy / scales.length ** 2, mats)


def check_arguments(who: str, structure, bars, **arrays) -> None:
    """TypeError/ValueError naming `who`'s argument: structure, bars, and real arrays (complex
    loads would lose their imaginary part in the float conversion, strings fail deep inside)."""
    if not isinstance(structure, Structure):
        raise TypeError(f"{who}: structure must be a tenscontrol.Structure, got "
                        f"{validation.describe(structure)}")
    validation.choice(f"{who}: bars", bars, BAR_MODELS)
    units = {"loads": "N", "q": "m", "psi": "N/m", "bar_force_densities": "N/m"}
    for name, value in arrays.items():
        if value is not None:
            validation.real_array(f"{who}: {name}", value, units[name])
            if name in ("loads", "q"):
                nodal_vector(structure.n_nodes, f"{who}: {name}", value)


def project(p: Problem, q: np.ndarray, lengths=None) -> np.ndarray:
    """q moved (min-norm, free coordinates only) onto bar lengths `lengths` (default: the
    rigid bars' lengths; compressible bars have none unless given)."""
    if lengths is None:
        if not (p.rigid and p.structure.n_bars):
            return q
        lengths = p.lengths
    q = q.copy()
    scale, last, gram, fresh = (lengths ** 2).max(), np.inf, None, False
    for iteration in range(2 * _PROJECTIONS):
        phi = bar_lengths(p.structure, q) ** 2 - lengths ** 2
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
        gram = bar_gram(p, q) if fresh else gram
        last = err
        q[p.free] += gram.min_norm_step(-0.5 * phi[p.mats.bar_active])
    return q


def kkt_solver(p: Problem, tangent, mu: float, guarded: bool = True):
    """A function r (nf,) -> dq (3n,) solving ``[[K + mu I, C], [C^T, 0]] [dq; y] = [r; 0]``
    with one factorization: C the active bar columns (rigid bars; bars fixed at both ends have
    none) and the gauge; `tangent` the member terms of K (:func:`tangent_terms`). `guarded`: with
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


def kkt_step(p: Problem, q: np.ndarray, tangent, r: np.ndarray, mu: float):
    """Newton step dq (3n,) of :func:`kkt_solver`."""
    return kkt_solver(p, tangent, mu)(r)


@dataclass
class Log:
    """Mutable record of the iterations, frozen into a NewtonHistory at the end."""

    rows: list
    load_steps: list
    failed: list
    # the path's points (t, q) from the last one tested stable to the first found unstable
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


def load_scale(p: Problem, q, members: bool = False) -> float:
    """The load scale: largest free nodal load, else the largest member force, else the
    structure's force scale E / L.

    With `members`, the larger of the two: the rounding error of the residual grows with the
    member forces, so a convergence test against a light load alone could never be met.
    """
    load = np.abs(p.load[p.free]).max(initial=0.0)
    if load > 0 and not members:
        return float(load)
    gamma = law_gamma(p.structure, q)
    d = p.mats.differences(q)
    member = np.abs(p.mats.forces(d, np.concatenate([gamma, np.zeros(p.structure.n_bars)]))
                    ).max(initial=0.0)
    return float(max(member, load)) if max(member, load) > 0 else p.force


def rounding_floor(p: Problem) -> float:
    """The residual's rounding error [N] (:func:`~tenscontrol.mechanics.scales.force_rounding`,
    the floor linearize's equilibrium test shares): a law k (1 - l0/l) l loses eps k l, which
    for stiff compressible bars (k ~ 1e7 N/m) is far above 1e-12 of the loads, and a
    coordinate is known to eps |q| only, which the stiffest member turns into eps k |q|."""
    return force_rounding(p.structure, p.bars)
