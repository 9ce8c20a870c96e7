"""Newton's method at a fixed load factor, globalized by a line search and a Levenberg shift.

At load factor t the unbalanced force less the homotopy's offset, ``r(q) = R(q)[free] -
offset``, is driven to zero by Newton steps on the KKT system ``[[K_t + mu I, C], [C^T, 0]]``
(:func:`~tenscontrol.statics.problem.kkt_solver`: C the active bar columns and the gauge).
Each trial point is put back on the bar lengths (after a second-order bend that keeps them to
O(alpha^3)). The line search judges a step by ``|r|`` until it has to cut one; then, for
conservative structures (rigid bars or none), by Armijo's decrease of the total potential
(:mod:`~tenscontrol.statics.merit`), the shift raised until the step descends it: ``|r|`` has
local minima that are no equilibrium on soft slender towers, the potential's only minima are
stable equilibria. Should that fail (an unstable equilibrium is no minimum), the ``|r|`` path
runs from the same start (:func:`equilibrium_at`).
"""

from __future__ import annotations

import numpy as np

from tenscontrol.statics.merit import total_potential
from tenscontrol.statics.problem import (Log, Problem, bar_gram, forces, kkt_step, members, project,
                                         tangent_terms)

__all__ = ["equilibrium_at", "newton"]

#: Steps cut short in a row after which the line search judges by the total potential: a
#: full Newton step keeps Newton's own path (and quadratic tail) wherever |r| accepts it.
_CUTS = 1
#: The shortest step the line search tries (twelve halvings of the Newton step).
_SMALLEST_STEP = 0.5 ** 11
#: Armijo's sufficient decrease (of |r| or of the potential) per unit step length: the usual
#: small value, so that nearly any descent is accepted.
_ARMIJO = 1e-4
#: The Levenberg shift starts at this fraction of the largest diagonal stiffness, grows
#: tenfold a rejection, and gives up past _MAX_SHIFT of it (the step is then a gradient step
#: too short to matter); after an accepted step it falls tenfold, to 0 below _KEEP_SHIFT.
_FIRST_SHIFT, _MAX_SHIFT, _KEEP_SHIFT = 1e-6, 1e8, 1e-4
#: A Newton iterate this many structure sizes from the start has run away (nothing holds it).
_RUNAWAY = 1e3


def equilibrium_at(p: Problem, q, t, offset, tol, max_iterations, log: Log):
    """Newton with the potential as merit where the structure is conservative (rigid bars or
    none: the loads are constant), and, if that fails (an unstable equilibrium is no
    minimum), Newton with the |r| merit from the same start; returns (converged, q)."""
    if p.rigid or not p.structure.n_bars:
        ok, q_new = newton(p, q, t, offset, tol, max_iterations, log, energy=True)
        if ok:
            return ok, q_new
    return newton(p, q, t, offset, tol, max_iterations, log)


def newton(p: Problem, q, t, offset, tol, max_iterations, log: Log, energy=False):
    """Newton at load factor t from q; returns (converged, q).

    The line search's merit is |r|. With `energy`, once _CUTS step(s) in a row were cut short
    (|r| is a poor guide: soft slender towers), it is the total potential (conservative
    structures: rigid bars or none), and the Levenberg shift is raised until the step
    descends it, so that only a minimum, a stable equilibrium, is found. Newton's easy cases
    keep their |r| path.
    """
    state = forces(p, q, offset)
    mu, cuts = 0.0, 0
    for _ in range(max_iterations):
        r, _, gamma, psi = state
        res = np.abs(r).max(initial=0.0)
        if res <= tol:
            log.rows.append((t, res, 0.0, 0.0, 0, 0))  # the converged iterate: no step
            return True, q
        p.budget.spend(p, t, log)
        K = tangent_terms(p, q, gamma, psi)
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


def _step(p, q, K, r, mu, mu_scale, offset, energy):
    """(alpha, q_new, state, mu) of an accepted step, raising the Levenberg shift mu until
    the line search accepts one (and, with `energy`, until the step descends Pi); None when
    mu passes 1e8 times the largest diagonal stiffness."""
    merit = total_potential(p.structure, q, p.load, p.free, offset) if energy else None
    while True:
        dq = kkt_step(p, q, K, r, mu)
        slope = -float(r @ dq[p.free])  # dPi along dq: dq^T (K + mu) dq > 0 on descent
        if not energy or slope < 0:
            found = _line_search(p, q, dq, r, offset, None if merit is None
                                 else (*merit, slope))
            if found is not None:
                return (*found, mu)
        mu = _FIRST_SHIFT * mu_scale if mu == 0.0 else 10.0 * mu
        if mu > _MAX_SHIFT * mu_scale:
            return None


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
        d, l = (a[ns:] for a in members(p, q))
        slope = np.einsum("ij,ij->i", d, p.mats.differences(dq)[ns:]) / l
    bend = _bend(p, q, dq)
    while alpha >= _SMALLEST_STEP:
        p.counts["trials"] += 1
        trial = project(p, q + alpha * dq + alpha ** 2 * bend,
                         None if l is None else l + alpha * slope)
        shrink = 0.5
        if np.all(members(p, trial)[1] > 0):
            state = forces(p, trial, offset)
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


def _bend(p: Problem, q, dq) -> np.ndarray:
    """The second-order correction c (3n,) of a step dq that keeps the rigid bars' lengths
    (``X^T dq = 0``): their squared lengths change by ``alpha^2 |Dd_b|^2`` along q + alpha dq,
    and by O(alpha^3) along q + alpha dq + alpha^2 c. The projection of a trial point then
    starts nearer the bar lengths (without it, 11 chord iterations a trial on the towers)."""
    c = np.zeros_like(q)
    if p.rigid and p.mats.nba:
        dd = p.mats.differences(dq)[p.structure.n_strings:][p.mats.bar_active]
        c[p.free] = bar_gram(p, q).min_norm_step(-0.5 * np.einsum("ij,ij->i", dd, dd))
    return c


def _interpolate(change: float, slope: float, alpha: float) -> float:
    """The factor (in [0.1, 0.5]) that takes a rejected step length alpha to the minimum of
    the quadratic with value 0 and slope `slope` (< 0) at 0 and `change` at alpha: a
    safeguarded backtracking that cuts a far too long step in one or two trials, not ten."""
    curvature = change - slope * alpha
    if not (slope < 0 and curvature > 0):
        return 0.5
    return float(np.clip(-slope * alpha / (2.0 * curvature), 0.1, 0.5))
