"""Robust stability of an UncertainLoop: mu over frequency, the margin, the worst perturbation.

See docs/theory.md, "Structured uncertainty and mu". :func:`robust_stability` sweeps the mu
upper bound over a frequency grid refined near its peak, finds a destabilizing perturbation
(the lower bound) and returns both with the margin ``1 / max mu``: every scaling of the
parameters' ranges below the margin keeps the loop stable (certified), and the perturbation
``delta*`` at ``1 / mu_lower`` puts a closed-loop eigenvalue on the imaginary axis.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import control as ct
import numpy as np
import scipy.linalg
import scipy.optimize

from tenscontrol.linear.norms import hinf_norm
from tenscontrol.model.structure import Structure
from tenscontrol.model.tables import Presentable, titled_table
from tenscontrol.robust.lft import UncertainLoop
from tenscontrol.robust.mu import (crossing, mu_upper, polished_crossing, power_iteration,
                                  real_eigenvalue_mu, scaled_norm_bound)

__all__ = ["MonteCarlo", "RobustStability", "WorstCaseGain", "monte_carlo", "robust_stability",
           "worst_case_gain"]

#: Log grid: points per decade, and the decades below the slowest / above the fastest
#: closed-loop eigenvalue (mu of a stable strictly proper loop falls off outside).
GRID_PER_DECADE, GRID_MARGIN_DECADES = 12, 1.0
#: Eigenvalue frequencies |Im lambda| added to the grid (the lightest-damped first): mu peaks
#: near lightly damped modes.
GRID_MODES = 24
#: Golden-section evaluations of the upper bound between the peak's grid neighbours.
REFINE_EVALUATIONS = 14
#: Relative accuracy of the sampled H-infinity gains (slycot ab13dd through tc.hinf_norm).
GAIN_RTOL = 1e-6
#: Local peaks of the upper bound, and its highest grid points, where the power iteration
#: proposes directions, from POWER_STARTS random starts each (for real scalars it often cycles,
#: and different starts end in different directions); the number of smallest distinct crossings
#: polished. On the ball with its payload, one start at the three peaks and 3 polished gave
#: 1 / 0.63368; these (4 starts at the top 8 points, 24 polished) give 1 / 0.69584.
SEED_PEAKS, SEED_TOP, POWER_STARTS, POLISHED = 3, 8, 4, 24
#: Closed-loop eigenvalues whose sensitivity signs seed the lower bound (lightest damped).
SEED_MODES = 6
#: Default CPU budget of robust_stability [s]: a floor for the small problems, a cap so that
#: every default run ends in minutes (a 96-channel AB13MD call ran > 5 min), and AB13MD's cost
#: per frequency per channel^3 (measured: 1 to 1.4 s at 33 channels on the ball, 2 shared cores).
BUDGET_FLOOR, BUDGET_CAP, AB13MD_COST = 10.0, 300.0, 5e-5
#: Share of the budget for the upper bound; the lower bound gets the rest (and always tries
#: the +-1 directions, a few eigenvalue problems).
UPPER_SHARE = 0.7


@dataclass(frozen=True, eq=False)
class RobustStability(Presentable):
    """Result of :func:`robust_stability`.

    Attributes
    ----------
    frequencies : ndarray, shape (nw,)
        The frequency grid [rad/s], sorted, with the refinement points.
    mu_upper : ndarray, shape (nw,)
        Upper bound of mu at each frequency (D-G scalings, slycot.ab13md).
    mu_lower : ndarray, shape (nw,)
        Certified lower bound at each frequency: |real eigenvalue| of ``M(j w) Delta`` over the
        perturbations found, 0 where none is real there (real mu is discontinuous in frequency).
    peak_upper, peak_frequency : float
        max mu_upper and its frequency [rad/s].
    peak_lower : float
        ``1 / max|delta*|``: the destabilizing perturbation's lower bound of the peak.
    crossing_frequency : float
        |Im| of the eigenvalue delta* puts on the axis [rad/s].
    margin : float
        ``1 / peak_upper``: every delta with max|delta_i| < margin is stable (certified, on the
        grid and its refinement).
    margin_upper : float
        ``1 / peak_lower`` = max|delta*|: the ranges scaled by this are not all stable.
    delta : ndarray, shape (m,)
        delta* (in units of the ranges: p_i = p0 (1 + w_i delta_i)).
    eigenvalue : complex
        The closed-loop eigenvalue at delta* [1/s]; ``axis_residual`` = |Re| / ||A(delta*)||.
    axis_residual : float
    worst_structure : Structure or None
        ``loop.perturbed(delta*)``: runs in tc.simulate and tc.verify with the nominal
        controller. None when delta* is not a physical structure (a stiffness below the
        prestress, k <= gamma*, would need a negative rest length): then the loop is stable over
        every physical value of the parameters, and `unphysical` says why.
    unphysical : str
        Empty, or why delta* is no structure.
    loop : UncertainLoop
    cpu : dict
        CPU seconds of the parts: "upper" (sweep and refinement), "lower", "total".
    evaluated : ndarray of bool, shape (nw,)
        Where AB13MD's D-G bound was computed; elsewhere mu_upper is the balanced sigma_max
        bound (cheaper, looser), left where it is below the peak or the budget ran out.
    complete : bool
        False when the CPU budget ran out (see `note`); the margin is still certified.
    budget : float
        The CPU budget [s].
    note : str
        Empty, or what the budget cut and how to get more.
    """

    frequencies: np.ndarray
    mu_upper: np.ndarray
    mu_lower: np.ndarray
    peak_upper: float
    peak_frequency: float
    peak_lower: float
    crossing_frequency: float
    margin: float
    margin_upper: float
    delta: np.ndarray
    eigenvalue: complex
    axis_residual: float
    worst_structure: Structure | None
    unphysical: str
    loop: UncertainLoop
    cpu: dict
    evaluated: np.ndarray
    complete: bool
    budget: float
    note: str

    def __post_init__(self):
        flags = np.array(self.evaluated, dtype=bool)
        flags.setflags(write=False)
        object.__setattr__(self, "evaluated", flags)
        for name in ("frequencies", "mu_upper", "mu_lower", "delta"):
            value = np.array(getattr(self, name), dtype=float)
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    @property
    def gap(self) -> float:
        """Relative gap of the bounds at the peak, ``(upper - lower) / upper``."""
        return (self.peak_upper - self.peak_lower) / self.peak_upper

    def __repr__(self) -> str:
        return (f"RobustStability(structure={self.loop.structure.name!r}, "
                f"mu={self.peak_lower:.4g}..{self.peak_upper:.4g}, margin={self.margin:.4g}, "
                f"peak_frequency={self.peak_frequency:.4g} rad/s, gap={100 * self.gap:.2g} %"
                f"{'' if self.complete else ', partial'})")

    def summary(self) -> str:
        """The bounds, the margin and the worst perturbation as a table."""
        worst = ", ".join(f"{p.name} {d:+.3g}" for p, d in
                          sorted(zip(self.loop.parameters, self.delta),
                                 key=lambda pd: -abs(pd[1]))[:6])
        return titled_table("RobustStability", [
            ("structure", self.loop.structure.name),
            ("parameters", f"{self.loop.n_parameters} ({sum(self.loop.blocks)} channels)"),
            ("mu upper, lower (peak)", f"{self.peak_upper:.6g}, {self.peak_lower:.6g} "
                                       f"(gap {100 * self.gap:.3g} %)"),
            ("peak frequency", f"{self.peak_frequency:.6g} rad/s (crossing at "
                               f"{self.crossing_frequency:.6g})"),
            ("margin", f"{self.margin:.6g} of the ranges (unstable at {self.margin_upper:.6g})"),
            ("worst delta (largest)", worst),
            ("worst structure", "loop.perturbed(delta)" if self.worst_structure is not None
             else "none: " + self.unphysical),
            ("eigenvalue on the axis", f"{self.eigenvalue:.6g} 1/s (|Re|/||A|| "
                                       f"{self.axis_residual:.1e})"),
            ("frequencies", f"{self.frequencies.size}, {self.frequencies.min():.3g} to "
                            f"{self.frequencies.max():.3g} rad/s"),
            ("AB13MD frequencies", f"{int(self.evaluated.sum())} (balanced sigma_max bound "
                                   "elsewhere)"),
            ("CPU", ", ".join(f"{k} {v:.3g} s" for k, v in self.cpu.items())
             + f" (budget {self.budget:.3g} s)")]
            + ([("partial", self.note)] if not self.complete else []))


def frequency_grid(loop: UncertainLoop) -> np.ndarray:
    """0, a log grid around the closed-loop eigenvalues' magnitudes, and their |Im|."""
    lam = np.linalg.eigvals(loop.A)
    mag = np.abs(lam[np.abs(lam) > 0])
    lo = np.log10(mag.min()) - GRID_MARGIN_DECADES
    hi = np.log10(mag.max()) + GRID_MARGIN_DECADES
    grid = np.logspace(lo, hi, int(np.ceil((hi - lo) * GRID_PER_DECADE)) + 1)
    osc = lam[lam.imag > 0]
    modes = osc[np.argsort(-osc.imag / np.abs(osc))][:GRID_MODES].imag   # lightest damped
    return np.unique(np.r_[0.0, grid, modes])


class _OutOfTime(Exception):
    """The CPU budget ran out inside a scipy loop that cannot be stopped otherwise."""


def _sweep(loop, frequencies, deadline):
    """Upper bound at each frequency: the balanced sigma_max everywhere (one SVD each), then
    AB13MD's tighter bound in decreasing order of it while it could still raise the peak and
    CPU time is left. Returns (mu, evaluated, complete); every entry is an upper bound."""
    Ms = [loop.response(w) for w in frequencies]
    if len(loop.blocks) == 1:                   # exact, one eigenvalue problem each
        mu = np.array([real_eigenvalue_mu(M) for M in Ms])
        return mu, np.ones(mu.size, dtype=bool), True
    mu = np.array([scaled_norm_bound(M) for M in Ms])
    evaluated = np.zeros(mu.size, dtype=bool)
    peak = 0.0
    for k in np.argsort(-mu, kind="stable"):
        if mu[k] <= peak:           # sorted: no later frequency can raise the peak either
            return mu, evaluated, True
        if time.process_time() > deadline:
            return mu, evaluated, False
        mu[k] = min(mu[k], mu_upper(Ms[k], loop.blocks))
        evaluated[k] = True
        peak = max(peak, mu[k])
    return mu, evaluated, True


def _refine(loop, w, mu, deadline):
    """Golden-section search of the upper bound between the peak's grid neighbours, until
    the deadline; the (frequency, bound) pairs it evaluated."""
    k = int(np.argmax(mu))
    a, b = w[max(k - 1, 0)], w[min(k + 1, w.size - 1)]
    extra = []

    def neg(om):
        if time.process_time() > deadline:
            raise _OutOfTime
        v = mu_upper(loop.response(om), loop.blocks)
        extra.append((om, v))
        return -v

    if b > a:
        try:
            scipy.optimize.minimize_scalar(neg, bounds=(a, b), method="bounded", options=dict(
                maxiter=REFINE_EVALUATIONS, xatol=1e-6 * b))
        except _OutOfTime:
            return extra, False
    return extra, True


def _seeds(loop, w, mu):
    """Directions to start the destabilizing search from: the power iteration at the upper
    bound's highest local peaks, the sensitivity signs of the lightest-damped and the slowest
    eigenvalues, all +-1."""
    peaks = [k for k in range(w.size) if mu[k] >= mu[max(k - 1, 0)]
             and mu[k] >= mu[min(k + 1, w.size - 1)]]
    at = sorted(peaks, key=lambda k: -mu[k])[:SEED_PEAKS]
    at += [k for k in np.argsort(-mu, kind="stable")[:SEED_TOP] if k not in at]
    seeds = []
    for k in at:
        M = loop.response(w[k])
        for start in range(POWER_STARTS):
            q, _ = power_iteration(M, loop.blocks, seed=start)
            seeds += [np.sign(q), -np.sign(q)]
    lam, vl, vr = scipy.linalg.eig(loop.A, left=True, right=True)
    damping = -lam.real / np.maximum(np.abs(lam), np.finfo(float).tiny)
    order = list(np.argsort(damping)[:SEED_MODES]) + [int(np.argmin(np.abs(lam)))]
    edges = np.cumsum(np.r_[0, loop.blocks])
    for k in order:
        u, v = vr[:, k], vl[:, k]
        ch = (v.conj() @ loop.B_w) * (loop.C_z @ u) / (v.conj() @ u)
        g = np.array([ch[s:e].sum().real for s, e in zip(edges[:-1], edges[1:])])
        seeds.append(np.sign(g))
    m = loop.n_parameters
    seeds += [np.ones(m), -np.ones(m)]
    return [s for s in seeds if np.any(s)]


def _lower_on_grid(loop, frequencies, delta):
    """|real eigenvalues| of M(j w) diag(delta)/max|delta| at each frequency (0 if none)."""
    d = loop.expand(delta / np.abs(delta).max())
    out = np.zeros(frequencies.size)
    for i, w in enumerate(frequencies):
        lam = np.linalg.eigvals(loop.response(w) * d)
        real = lam[np.abs(lam.imag) <= 1e-8 * np.maximum(np.abs(lam), 1e-300)]
        out[i] = np.abs(real).max(initial=0.0)
    return out


def default_budget(loop: UncertainLoop, n_frequencies: int) -> float:
    """The default CPU budget [s] of :func:`robust_stability`: a floor, plus AB13MD's estimated
    cost on the grid and its refinement (``AB13MD_COST r^3`` per frequency, r channels), capped."""
    r = sum(loop.blocks)
    per_call = 0.0 if len(loop.blocks) == 1 else AB13MD_COST * r ** 3
    return float(min(BUDGET_CAP, BUDGET_FLOOR + (n_frequencies + REFINE_EVALUATIONS) * per_call))


def _check_budget(budget, caller):
    if budget is None:
        return None
    if not isinstance(budget, (int, float, np.integer, np.floating)) or not np.isfinite(
            budget) or budget <= 0:
        raise ValueError(f"{caller}: budget must be a positive number of CPU seconds (or None "
                         f"for the default), got {budget!r}")
    return float(budget)


def _upper_bound(loop, w, deadline):
    """The sweep and its refinement near the peak: (w, mu, evaluated, complete), sorted."""
    mu, evaluated, complete = _sweep(loop, w, deadline)
    extra, refined = _refine(loop, w, mu, deadline) if complete else ([], False)
    if extra:
        w, mu = np.r_[w, [e[0] for e in extra]], np.r_[mu, [e[1] for e in extra]]
        evaluated = np.r_[evaluated, np.ones(len(extra), dtype=bool)]
        order = np.argsort(w)
        w, mu, evaluated = w[order], mu[order], evaluated[order]
    return w, mu, evaluated, complete and refined


def _lower_bound(loop, w, mu, start, deadline):
    """The smallest destabilizing perturbation found: crossings along the seeds, the best few
    polished, while CPU time is left (the +-1 directions always). (Crossing or None, complete)."""
    m = loop.n_parameters
    # one parameter: the directions are +-1 and the crossing scan is the exact margin
    seeds = _seeds(loop, w, mu) if m > 1 else []
    seeds = [np.ones(m), -np.ones(m)] + seeds
    found, complete = [], True
    for i, seed in enumerate(seeds):
        if i >= 2 and time.process_time() > deadline:
            complete = False
            break
        c = crossing(loop, seed, 0.999 * start)
        if c is not None:
            found.append(c)
    if not found:
        return None, complete
    best = min(found, key=lambda c: c.size)
    if m > 1:    # polish the best few distinct ones: they may end at different crossings
        distinct = {}
        for c in sorted(found, key=lambda c: c.size):
            distinct.setdefault(tuple(np.round(c.delta / c.size, 12)), c)
        for c in list(distinct.values())[:POLISHED]:
            if time.process_time() > deadline:
                complete = False
                break
            best = min(best, polished_crossing(loop, c, 0.999 * start, deadline),
                       key=lambda c: c.size)
    return best, complete


def robust_stability(loop: UncertainLoop, *, frequencies=None,
                     budget: float | None = None) -> RobustStability:
    """Mu bounds over frequency, the robust stability margin and the worst perturbation.

    Parameters
    ----------
    loop : UncertainLoop
        From :func:`tenscontrol.robust.uncertain_loop`; its nominal A must be stable.
    frequencies : array_like, optional
        Frequency grid [rad/s]; default: 0, a log grid a decade beyond the closed-loop
        eigenvalues' magnitudes (12 per decade) and the lightest-damped |Im lambda|. The grid
        is refined near the peak in any case.
    budget : float, optional
        CPU seconds for the analysis; default :func:`default_budget` (10 s plus AB13MD's
        estimated cost, at most 300 s). The upper bound gets ``UPPER_SHARE`` of it. When it runs
        out the result keeps everything computed and says so (``complete`` False, ``note``):
        frequencies without AB13MD keep the balanced sigma_max bound, so the margin stays
        certified, only more conservative. One AB13MD call is not interrupted.

    Returns
    -------
    RobustStability

    Raises
    ------
    ValueError
        If the nominal loop is unstable, the budget is not a positive number, or no
        destabilizing perturbation is found (the message gives the upper bound).
    """
    if not isinstance(loop, UncertainLoop):
        raise TypeError(f"robust_stability: expected an UncertainLoop (tc.robust.uncertain_loop), "
                        f"got {type(loop).__name__}")
    top = np.linalg.eigvals(loop.A).real.max()
    if top >= 0:
        raise ValueError(f"robust_stability: the nominal loop is unstable (max Re(eig) = "
                         f"{top:.3g} 1/s); mu measures the distance to instability of a "
                         "stable loop")
    budget = _check_budget(budget, "robust_stability")
    t0 = time.process_time()
    w = frequency_grid(loop) if frequencies is None else np.unique(np.abs(np.asarray(
        frequencies, dtype=float)))
    budget = default_budget(loop, w.size) if budget is None else budget
    w, mu, evaluated, upper_done = _upper_bound(loop, w, t0 + UPPER_SHARE * budget)
    t1 = time.process_time()
    peak = float(mu.max())
    start = 1.0 / peak if peak > 0 else 0.0       # every smaller perturbation is stable
    best, lower_done = _lower_bound(loop, w, mu, start, t0 + budget)
    if best is None:
        raise ValueError(f"robust_stability: no destabilizing perturbation found (mu upper bound "
                         f"{peak:.4g} at {w[int(np.argmax(mu))]:.4g} rad/s): the loop may be "
                         "stable far beyond the ranges; widen the spreads to find where it fails")
    wc = abs(best.eigenvalue.imag)
    # the crossing frequency belongs on the grid: the upper bound there must cover the lower
    if not np.any(np.isclose(w, wc, rtol=1e-12, atol=0.0)):
        wu = (real_eigenvalue_mu if len(loop.blocks) == 1 else
              lambda M: mu_upper(M, loop.blocks))(loop.response(wc))
        w, mu, evaluated = np.r_[w, wc], np.r_[mu, wu], np.r_[evaluated, True]
        order = np.argsort(w)
        w, mu, evaluated = w[order], mu[order], evaluated[order]
    lower = _lower_on_grid(loop, w, best.delta)
    t2 = time.process_time()
    k = int(np.argmax(mu))
    try:
        worst, why = loop.perturbed(best.delta), ""
    except ValueError as exc:
        worst, why = None, str(exc)
    note = _note(upper_done, lower_done, evaluated, budget)
    return RobustStability(
        frequencies=w, mu_upper=mu, mu_lower=lower, peak_upper=float(mu[k]),
        peak_frequency=float(w[k]), peak_lower=1.0 / best.size, crossing_frequency=wc,
        margin=1.0 / float(mu[k]), margin_upper=best.size, delta=best.delta,
        eigenvalue=best.eigenvalue, axis_residual=best.residual,
        worst_structure=worst, unphysical=why, loop=loop,
        cpu=dict(upper=t1 - t0, lower=t2 - t1, total=t2 - t0), evaluated=evaluated,
        complete=upper_done and lower_done, budget=budget, note=note)


def _note(upper_done, lower_done, evaluated, budget):
    parts = []
    if not upper_done:
        parts.append(f"upper bound: AB13MD at {int(evaluated.sum())} of {evaluated.size} "
                     "frequencies, the balanced sigma_max bound elsewhere (certified but looser)")
    if not lower_done:
        parts.append("lower bound: not every seed searched or polished")
    if not parts:
        return ""
    return (f"CPU budget {budget:.3g} s ran out; " + "; ".join(parts)
            + f"; pass budget= above {budget:.3g} s for tighter bounds")


@dataclass(frozen=True, eq=False)
class MonteCarlo(Presentable):
    """Result of :func:`monte_carlo`.

    Attributes
    ----------
    deltas : ndarray, shape (n, m)
        The samples, uniform in the box ``|delta_i| <= scale``.
    abscissa : ndarray, shape (n,)
        max Re(eig) of each sample's closed loop [1/s].
    gains : ndarray, shape (n,)
        H-infinity gain d -> y of each stable sample (inf for unstable ones) [m/N].
    scale : float
    unstable : int
        Number of samples with max Re(eig) >= 0.
    cpu : float
        CPU seconds.
    requested : int
        Samples asked for; n < requested when the CPU budget ran out (``complete`` False).
    complete : bool
    budget : float
        The CPU budget [s].
    """

    deltas: np.ndarray
    abscissa: np.ndarray
    gains: np.ndarray
    scale: float
    unstable: int
    cpu: float
    requested: int
    complete: bool
    budget: float

    def __repr__(self) -> str:
        return (f"MonteCarlo(samples={self.abscissa.size}, scale={self.scale:.4g}, "
                f"unstable={self.unstable}, worst gain={self.gains.max():.4g}"
                f"{'' if self.complete else f', partial of {self.requested}'})")

    def summary(self) -> str:
        """Counts, the slowest eigenvalue and the gains as a table."""
        return titled_table("MonteCarlo", [
            ("samples", f"{self.abscissa.size} of {self.requested}" + (
                "" if self.complete else f" (CPU budget {self.budget:.3g} s ran out: pass a "
                                         "larger budget= for the rest)")),
            ("box", f"|delta| <= {self.scale:.6g}"),
            ("unstable", self.unstable),
            ("max Re(eig)", f"{self.abscissa.max():.6g} 1/s"),
            ("H-inf gain d -> y", f"{np.min(self.gains):.6g} to {np.max(self.gains):.6g}"),
            ("CPU", f"{self.cpu:.3g} s")])


def hinf_gain(A, B, C) -> float:
    """H-infinity norm [m/N] of the stable loop (A, B, C); inf if A is not Hurwitz."""
    if np.linalg.eigvals(A).real.max() >= 0:
        return np.inf
    return hinf_norm(ct.ss(A, B, C, 0), tol=GAIN_RTOL)


def _sample_cost(loop: UncertainLoop, gains: bool) -> float:
    """Estimated CPU seconds of one sample (an eigenvalue problem, and an H-inf norm)."""
    n3 = float(loop.A.shape[0]) ** 3
    return EIG_COST * n3 + (GAIN_COST * n3 if gains else 0.0)


def monte_carlo(loop: UncertainLoop, samples: int = 1000, *, scale: float = 1.0,
                seed: int = 0, gains: bool = True, budget: float | None = None) -> MonteCarlo:
    """Closed-loop stability (and H-inf gain d -> y) of random perturbations in a box.

    Parameters
    ----------
    loop : UncertainLoop
    samples : int
        Number of samples (> 0).
    scale : float
        Half-width of the box in units of the ranges (> 0): delta uniform in [-scale, scale]^m;
        below ``RobustStability.margin`` none may be unstable.
    seed : int
        Seed of numpy's default generator.
    gains : bool
        Also compute each sample's H-infinity gain (costs a frequency sweep per sample).
    budget : float, optional
        CPU seconds; default ``BUDGET_FLOOR`` plus the estimated cost of the samples, at most
        ``BUDGET_CAP``. When it runs out the samples done are returned (``complete`` False);
        the same seed draws the same samples, so a larger budget continues the same sequence.

    Returns
    -------
    MonteCarlo
    """
    if not isinstance(samples, (int, np.integer)) or samples <= 0:
        raise ValueError(f"monte_carlo: samples must be a positive integer, got {samples!r}")
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"monte_carlo: scale must be a positive number (half-width of the box "
                         f"in units of the ranges), got {scale!r}")
    budget = _check_budget(budget, "monte_carlo")
    if budget is None:
        budget = min(BUDGET_CAP, BUDGET_FLOOR + samples * _sample_cost(loop, gains))
    t0 = time.process_time()
    rng = np.random.default_rng(seed)
    deltas = rng.uniform(-scale, scale, (samples, loop.n_parameters))
    absc, g = np.empty(samples), np.full(samples, np.nan)
    done = samples
    for i, d in enumerate(deltas):
        if i and time.process_time() > t0 + budget:
            done = i
            break
        A, B, C = loop.performance(d)
        absc[i] = np.linalg.eigvals(A).real.max()
        if gains:
            g[i] = hinf_gain(A, B, C)
    absc = absc[:done]
    return MonteCarlo(deltas[:done], absc, g[:done], float(scale), int(np.sum(absc >= 0)),
                      time.process_time() - t0, samples, done == samples, budget)


#: Vertex-ascent steps of :func:`worst_case_gain` and the relative step of its finite
#: differences (the gain is smooth in delta away from its peak frequency switching).
ASCENT_STEPS, GRADIENT_STEP = 12, 1e-4
#: Estimated CPU seconds per state^3 of an eigenvalue problem and of an H-inf norm (the default
#: budgets' cost model; generous: a 48-state loop measured about 1 ms and 30 ms).
EIG_COST, GAIN_COST = 2e-8, 6e-7


@dataclass(frozen=True, eq=False)
class WorstCaseGain(Presentable):
    """Result of :func:`worst_case_gain`.

    Attributes
    ----------
    gain : float
        The largest H-infinity gain d -> y found in the box [m/N] (a lower bound of the worst
        case: attained at `delta`).
    delta : ndarray, shape (m,)
        Where it is attained, ``|delta_i| <= scale``.
    nominal : float
        The gain at delta = 0 [m/N].
    scale : float
    evaluations : int
        H-infinity norms computed.
    cpu : float
        CPU seconds.
    complete : bool
        False when the CPU budget ran out before every ascent ended (the gain found stands).
    budget : float
        The CPU budget [s].
    """

    gain: float
    delta: np.ndarray
    nominal: float
    scale: float
    evaluations: int
    cpu: float
    complete: bool
    budget: float

    def __repr__(self) -> str:
        return (f"WorstCaseGain(gain={self.gain:.6g}, nominal={self.nominal:.6g}, "
                f"scale={self.scale:.4g}{'' if self.complete else ', partial'})")

    def summary(self) -> str:
        """The worst gain found against the nominal as a table."""
        return titled_table("WorstCaseGain", [
            ("box", f"|delta| <= {self.scale:.6g}"),
            ("worst gain found", f"{self.gain:.6g} ({self.gain / self.nominal:.4g} x nominal)"),
            ("nominal gain", f"{self.nominal:.6g}"),
            ("evaluations, CPU", f"{self.evaluations}, {self.cpu:.3g} s (budget "
                                 f"{self.budget:.3g} s)"),
            ("complete", "yes" if self.complete else "no: the budget ran out; pass a larger "
                                                     "budget= to continue the ascent")])


def worst_case_gain(loop: UncertainLoop, scale: float, *, starts=None,
                    budget: float | None = None) -> WorstCaseGain:
    """The largest H-infinity gain d -> y over the box ``|delta_i| <= scale``, by vertex ascent.

    From delta = 0 (and each row of `starts`), step to the vertex ``scale * sign(g)`` that the
    gain's gradient g (central differences) points at, while the gain grows: the real-block
    step of the power iteration, applied to the performance loop. The answer is attained (a
    lower bound of the worst case); below the margin every gain is finite.

    Parameters
    ----------
    loop : UncertainLoop
    scale : float
        Half-width of the box in units of the ranges; below ``RobustStability.margin``.
    starts : array_like, shape (k, m), optional
        Further starting points, e.g. the worst Monte Carlo samples.
    budget : float, optional
        CPU seconds; default ``BUDGET_FLOOR`` plus the estimated cost of every ascent, at most
        ``BUDGET_CAP``. When it runs out the largest gain found so far is returned
        (``complete`` False).

    Returns
    -------
    WorstCaseGain
    """
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"worst_case_gain: scale must be a positive number, got {scale!r}")
    budget = _check_budget(budget, "worst_case_gain")
    m = loop.n_parameters
    points = [np.zeros(m)] + [np.clip(np.asarray(s, dtype=float), -scale, scale)
                              for s in (starts if starts is not None else [])]
    if budget is None:
        calls = 1 + len(points) * (1 + ASCENT_STEPS * (2 * m + 1))
        budget = min(BUDGET_CAP, BUDGET_FLOOR + calls * _sample_cost(loop, True))
    t0 = time.process_time()
    count = [0]

    def gain(d):
        count[0] += 1
        return hinf_gain(*loop.performance(d))

    nominal = gain(np.zeros(m))
    best_g, best_d = nominal, np.zeros(m)
    complete = True
    for d in points:
        if time.process_time() > t0 + budget:
            complete = False
            break
        g_d = gain(d)
        for _ in range(ASCENT_STEPS):
            if time.process_time() > t0 + budget:
                complete = False
                break
            h = GRADIENT_STEP * scale
            grad = np.array([gain(d + h * e) - gain(d - h * e) for e in np.eye(m)])
            if not np.all(np.isfinite(grad)) or not np.any(grad):
                break
            trial = scale * np.sign(grad)
            g_t = gain(trial)
            if not g_t > g_d * (1 + 1e-9):
                break
            d, g_d = trial, g_t
        if g_d > best_g:
            best_g, best_d = g_d, d
    return WorstCaseGain(float(best_g), best_d, float(nominal), float(scale), count[0],
                         time.process_time() - t0, complete, budget)
