"""The control effort that damps what can be damped, within the prestress (issue 32, item 3).

:func:`choose_effort` scales the control weight (an LQR's R, an H-infinity design's rho^2)
down from the one given, half a decade at a time (the damping verdict's sweep,
:data:`tenscontrol.design.verdict.SWEEP`, one Riccati solve per factor), until every dampable
mode (open-loop damping below the target, reachable from the commanded strings and seen by
the outputs: the modes the verdict would call "effort") reaches the target in closed loop,
then bisects the last half decade for the gentlest factor that does. Two things stop it first:

- the prestress: under a step load ``d_scale_j`` [N] on any one disturbance coordinate j the
  command ``|u_i|`` of some string would exceed its operating force density
  ``gamma_ref_i`` (its margin before slack, control-notes 5); the factor is then bisected to
  the largest command within the margin, and the choice names the mode left below the
  target with its damping. If the given weight already asks more, the factor is raised
  half a decade at a time until the command fits, then bisected back to the bound;
- the end of the sweep (R times 1e-6): the weights do not ask for the mode.

The command is estimated on the reduced closed loop ``x' = (A - B K) x + E d``, ``u = -K x``,
exactly discretized, over two periods of the slowest dampable mode (a lightly damped mode's
step response peaks in its first period). A doublet's command can be up to twice a step's
(the second half adds to a ringing mode): :func:`tenscontrol.verify` is the check.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tenscontrol.design.verdict import (SWEEP, closed_loop_damping, dampable_modes,
                                        redesigned_gain)
from tenscontrol.linear.modal import modal_analysis
from tenscontrol.linear.sampling import exact_hold
from tenscontrol.model.tables import Presentable, summary_table

__all__ = ["BISECTIONS", "EffortChoice", "choose_effort", "default_load", "lqr_gain",
           "peak_command"]

#: Bisection steps on log10 of the factor inside the last half decade: 0.5 / 2^6 = 0.008
#: decade, a 2 % step in R, finer than the damping target is worth.
BISECTIONS = 6
#: Time steps of the command estimate per period of the fastest closed-loop eigenvalue, and
#: their cap (a very cheap control has poles far above the structure's; beyond the cap the
#: grid is coarser, the estimate still an exact sampling of the response).
_STEPS_PER_PERIOD = 20
_MAX_STEPS = 20000
#: Periods of the slowest dampable mode the command estimate covers.
_PERIODS = 2.0


@dataclass(frozen=True)
class EffortChoice(Presentable):
    """How :func:`tenscontrol.lqr` chose its effort for a damping target.

    Attributes
    ----------
    target : float
        The damping ratio asked for [-].
    scale : float
        The factor chosen on the given R [-] (1: the given weights already met the target).
    effort : float or None
        The resulting effort ``effort * scale`` of the default R (None for a user R).
    least_damping : float
        The least closed-loop damping ratio of the dampable modes at the choice (nan: none).
    frequency : float
        That mode's natural frequency [rad/s] (nan: none).
    limited_by : str
        "" (every dampable mode reached the target), "bounds" (the prestress stopped the
        search) or "weights" (R times 1e-6 did not reach it).
    command_ratio : float
        Peak ``|u_i| / gamma_ref_i`` under the step load at the choice [-] (<= 1 keeps the
        strings taut).
    load : float
        The largest step load of the command estimate [N] (``d_scale``).
    weight : str
        The weight scaled: "effort" (an LQR's R) or "rho^2" (hinfsyn's control weight).
    """

    target: float
    scale: float
    effort: float | None
    least_damping: float
    frequency: float
    limited_by: str
    command_ratio: float
    load: float
    weight: str = "effort"

    def _weight(self) -> str:
        if self.effort is None:
            return f"R times {self.scale:.3g}"
        if self.weight == "rho^2":
            return f"rho {np.sqrt(self.effort):.3g}"
        return f"{self.weight} {self.effort:.3g}"

    def __repr__(self) -> str:
        return (f"EffortChoice(target={self.target:g}, {self._weight().replace(' ', '=', 1)}, "
                f"least_damping={self.least_damping:.2g}, limited_by={self.limited_by!r}, "
                f"command_ratio={self.command_ratio:.2g})")

    def summary(self) -> str:
        """The choice as a table (what ``print()`` shows)."""
        mode = ("none below the target" if np.isnan(self.least_damping) else
                f"{self.frequency:.4g} rad/s, zeta {self.least_damping:.2g}")
        return "EffortChoice\n" + summary_table([
            ("damping target", f"{self.target:g}"),
            ("weight chosen", self._weight()),
            ("least damped mode", mode),
            ("stopped by", {"": "nothing: target reached", "bounds": "the prestress",
                            "weights": "the end of the sweep"}[self.limited_by]),
            ("peak command", f"{self.command_ratio:.2g} of the prestress under a "
                             f"{self.load:.3g} N step")])

    def line(self) -> str:
        """One sentence: the effort chosen and why (the design's summary row)."""
        what = self._weight()
        cmd = (f"peak command {self.command_ratio:.2g} of the prestress under a "
               f"{self.load:.3g} N step")
        if np.isnan(self.least_damping):
            return f"{what}: no dampable mode below {self.target:g}; {cmd}"
        mode = f"the {self.frequency:.4g} rad/s mode"
        if self.limited_by == "bounds":
            return (f"{what}, stopped by the prestress: {mode} reaches zeta "
                    f"{self.least_damping:.2g} < {self.target:g} ({cmd}); a cheaper control "
                    "would slacken strings")
        if self.limited_by == "weights":
            return (f"{what}, the end of the sweep: {mode} reaches only zeta "
                    f"{self.least_damping:.2g} < {self.target:g}; its weights do not ask "
                    f"for it ({cmd})")
        return (f"{what}: the gentlest that damps every dampable mode to {self.target:g} "
                f"(least zeta {self.least_damping:.2g}, {mode}; {cmd})")


def default_load(structure, gamma_ref) -> float:
    """The structure's own scale of load [N]: the mean operating tension ``gamma l`` of the
    actuated strings (1 N without a structure or without tension)."""
    if structure is None:
        return 1.0
    strings = np.asarray(structure.actuated_strings, dtype=np.int64)
    tension = np.asarray(gamma_ref, dtype=float) * np.asarray(structure.string_lengths)[strings]
    return float(tension.mean()) if tension.size and tension.mean() > 0 else 1.0


def peak_command(minimal, K_reduced, u_ref, load, horizon: float) -> float:
    """Peak over time, strings and disturbance coordinates j of ``|u_i(t)| / u_ref_i`` [-] in
    the reduced closed loop's response to a step ``load_j`` [N] (a float: the same on every
    coordinate; else shape (nq,)) on coordinate j alone, over `horizon` [s]."""
    nu = K_reduced.shape[0]
    A, Bw = (np.asarray(X, dtype=float) for X in (minimal.sys.A, minimal.sys.B))
    B, E = Bw[:, :nu], Bw[:, nu:]
    Acl = A - B @ K_reduced
    fastest = float(np.abs(np.linalg.eigvals(Acl)).max(initial=0.0))
    steps = int(min(_MAX_STEPS, max(100, np.ceil(horizon * fastest * _STEPS_PER_PERIOD
                                                 / (2 * np.pi)))))
    Phi, G = exact_hold(Acl, E * np.broadcast_to(load, E.shape[1])[None, :], horizon / steps)
    X = np.zeros_like(G)
    scale = 1.0 / np.asarray(u_ref, dtype=float)[:, None]
    peak = 0.0
    for _ in range(steps):
        X = Phi @ X + G
        peak = max(peak, float(np.abs(scale * (K_reduced @ X)).max(initial=0.0)))
    return peak


def _evaluate(minimal, gain, scale, fig, idx, u_ref, load, horizon):
    """(least damping of the dampable modes, its index, command ratio) of ``gain(scale)``;
    None where the synthesis fails."""
    K = gain(scale)
    if K is None:
        return None
    z = closed_loop_damping(minimal, K, fig)[idx]
    worst = int(np.nanargmin(z)) if np.isfinite(z).any() else 0
    return float(z[worst]), int(idx[worst]), peak_command(minimal, K, u_ref, load, horizon)


def lqr_gain(minimal, Q, R):
    """``gain(scale)`` of :func:`choose_effort` for an LQR: the reduced gain with R times
    `scale` (:func:`tenscontrol.design.verdict.redesigned_gain`)."""
    R = np.asarray(R, dtype=float)
    return lambda scale: redesigned_gain(minimal, Q, R * scale)


def choose_effort(minimal, gain, u_ref, damping: float, load,
                  effort: float | None, weight: str = "effort") -> EffortChoice:
    """The factor on the control weight that damps every dampable mode of `minimal` to
    `damping` within the prestress (module docstring).

    Parameters
    ----------
    minimal : MinimalRealization
        The design model (inputs: the commanded strings, then the disturbances).
    gain : callable
        ``gain(scale) -> K_reduced`` (nu, r), ``u = -K_reduced x_r``, or None where the
        synthesis fails: the design with its control weight (R, or rho^2) times `scale`
        (:func:`lqr_gain`).
    u_ref : ndarray, shape (nu,)
        Each string's margin before slack, its operating force density [N/m], > 0.
    damping : float
        The target damping ratio, in (0, 1).
    load : ndarray, shape (nq,)
        Step load of the command estimate on each coordinate [N] (0 on fixed ones).
    effort : float or None
        The effort of a default R (reported times the factor), None for a user R; rho^2
        for hinfsyn.
    weight : str
        "effort" or "rho^2": what `effort` is.

    Returns
    -------
    EffortChoice
    """
    fig = modal_analysis(minimal.elastic)
    idx = dampable_modes(fig, damping)

    def choice(scale, z, i, ratio, limited):
        return EffortChoice(float(damping), float(scale),
                            None if effort is None else float(effort * scale), z,
                            float(fig["frequency"][i]) if idx.size else np.nan, limited,
                            ratio, float(np.max(load)), weight)

    if not idx.size:
        return choice(1.0, np.nan, 0, np.nan, "")
    horizon = _PERIODS * 2 * np.pi / max(float(fig["frequency"][idx].min()),
                                         np.finfo(float).tiny)

    def ok(res):   # (reaches the target, within the prestress)
        return res[0] >= damping, res[2] <= 1.0

    def evaluate(scale):
        return _evaluate(minimal, gain, scale, fig, idx, u_ref, load, horizon)

    first = evaluate(1.0)
    if first is not None and not ok(first)[1]:
        return _gentler(evaluate, first, damping, choice)
    last = None if first is None else (1.0, first)   # the last factor within the margin
    if last is not None and ok(first)[0]:
        return choice(1.0, *first, "")
    for scale in SWEEP:
        res = evaluate(scale)
        if res is None:
            continue
        reached, within = ok(res)
        if (reached or not within) and last is not None:
            return _bisect(evaluate, last, (scale, res), damping, choice)
        if not within:
            return choice(scale, *res, "bounds")
        if reached:
            return choice(scale, *res, "")
        last = (scale, res)
    if last is None:
        raise ValueError("no factor on the control weight gives a stabilizing design")
    return choice(last[0], *last[1], "weights")


def _gentler(evaluate, first, damping, choice):
    """The given weights already ask more than the prestress: raise the factor half a decade
    at a time to the first within the margin, then bisect back to the bound."""
    bad = (1.0, first)
    for scale in 1.0 / SWEEP:
        res = evaluate(scale)
        if res is None:
            continue
        if res[2] <= 1.0:
            if res[0] >= damping:             # gentler still reaches the target
                return choice(scale, *res, "")
            return _bisect(evaluate, (scale, res), bad, damping, choice)
        bad = (scale, res)
    return choice(bad[0], *bad[1], "bounds")


def _bisect(evaluate, good, bad, damping, choice):
    """Bisect log10 of the factor between `good` (below target, within the margin) and `bad`
    (reaches the target, or exceeds the margin): the gentlest factor reaching the target
    within the margin, or the cheapest within the margin."""
    for _ in range(BISECTIONS):
        scale = float(np.sqrt(good[0] * bad[0]))
        res = evaluate(scale)
        if res is None:
            break
        reached, within = res[0] >= damping, res[2] <= 1.0
        if reached and within or not within:
            bad = (scale, res)
        else:
            good = (scale, res)
    b_reached, b_within = bad[1][0] >= damping, bad[1][2] <= 1.0
    if b_reached and b_within:
        return choice(bad[0], *bad[1], "")
    return choice(good[0], *good[1], "bounds")
