"""The damping verdict of a design: the modes it left below a damping target, and why.

:func:`damping_verdict` closes the design's loop on the exact elastic model of its design model
(``design.minimal.elastic``, :func:`tenscontrol.linear.modal.closed_loop_eigenvalues`), matches
each open-loop mode to its closed-loop eigenvalue and, for each mode whose closed-loop damping
ratio stays below the target, names the reason it can see:

- ``"sampling"``: the mode lies above the Nyquist frequency pi / period of a sampled design;
- ``"unreachable"``: the commanded strings do not stretch in the mode (its authority, the
  damping a unit velocity feedback could add, relative to the best mode, is below
  :data:`UNREACHABLE`): no weight will damp it; command other strings;
- ``"unobserved"``: the design's outputs do not see the mode, so its weights do not ask for it;
- ``"effort"``: reachable and weighted, but the control weight makes damping it too costly.
  For a design built on an LQR (LQR, DLQR, LQG, discrete LQG, MPC: their continuous LQR) the
  Riccati equation is solved again with R scaled by half decades down to 1e-6
  (:data:`SWEEP`, one solve per factor on the reduced model, shared by the modes, done only
  when a mode needs it) and the first effort that damps the mode to the target is reported;
  for an H-infinity design, or a design model above :data:`SWEEP_MAX_ORDER` states, the
  weight is estimated from the LQR rule that added damping grows as ``1 / sqrt(effort)``:
  ``((zeta_closed - zeta_open) / (target - zeta_open))^2``;
- ``"weights"``: reachable and seen, but no effort of the sweep damps it (or the design added
  no damping to it): the weights do not ask for this mode;
- ``"bounds"`` is not decided here: an MPC's verdict is its unconstrained law's, and active
  tension bounds only lower the damping further (:func:`tenscontrol.verify` shows them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from tenscontrol import validation
from tenscontrol.linear.modal import (DEFAULT_DAMPING, closed_loop_eigenvalues, damping_ratios,
                                      match_modes, modal_analysis)
from tenscontrol.model.tables import Presentable, html_table

__all__ = ["DampingVerdict", "SUMMARY_MAX_STATES", "SWEEP", "SWEEP_MAX_ORDER", "UNREACHABLE",
           "closed_loop_damping", "damping_verdict", "dampable_modes", "lqr_behind",
           "redesigned_gain", "unreachable_modes"]

#: A mode whose authority (relative to the best-reached mode) is below this is unreachable from
#: the commanded strings: its generalized force is at the rounding level of the others'.
UNREACHABLE = 1e-10
#: The factors on R of the effort sweep (half decades down to 1e-6): the first that damps a
#: mode to the target is the effort reported; a mode none damps is held back by the weights.
SWEEP = 10.0 ** (-0.5 * np.arange(1, 13))
#: Above this design order the sweep's Riccati solves would take seconds: the effort is
#: estimated from the 1/sqrt(effort) rule instead (and said to be an estimate).
SWEEP_MAX_ORDER = 200
#: Above this many elastic states a design's summary does not compute the verdict (an
#: eigendecomposition of the closed loop and the modal norms): damping_verdict() does.
SUMMARY_MAX_STATES = 400
#: A mode whose modal H2 norm to the design outputs is below this fraction of the largest is
#: not seen by them.
UNOBSERVED = 1e-10


@dataclass(frozen=True, eq=False)
class DampingVerdict(Presentable):
    """The modes a design left below a damping target, with the reason (module docstring).

    Attributes
    ----------
    target : float
        The damping ratio asked for.
    frequency, open_damping, closed_damping : ndarray, shape (k,)
        Of each mode left below the target [rad/s], [-], [-] (nan: static mode).
    reasons : tuple of str
        "sampling", "unreachable", "unobserved", "weights" or "effort" per mode.
    details : tuple of str
        One sentence per mode: the figures behind the reason (the effort that would damp it).
    n_modes : int
        Elastic modes of the design model.
    note : str
        How the closed loop was formed.
    least_damping : float
        The least closed-loop damping ratio [-] over the modes a weight can damp (the
        commanded strings reach them and the outputs see them); nan if there is none.
    least_frequency : float
        That mode's natural frequency [rad/s] (nan if none).
    """

    target: float
    frequency: np.ndarray
    open_damping: np.ndarray
    closed_damping: np.ndarray
    reasons: tuple
    details: tuple
    n_modes: int
    note: str
    least_damping: float = float("nan")
    least_frequency: float = float("nan")

    def __len__(self) -> int:
        return self.frequency.size

    def __repr__(self) -> str:
        return (f"DampingVerdict(target={self.target:g}, below={len(self)} of {self.n_modes} "
                f"modes" + "".join(f", {w:.4g} rad/s: {r}" for w, r in
                                   zip(self.frequency[:3], self.reasons[:3]))
                + (" ..." if len(self) > 3 else "") + ")")

    def lines(self) -> list:
        """One line per mode left below the target (empty if none)."""
        return [f"{w:.4g} rad/s: zeta {_z(zo)} -> {_z(zc)}, {r}: {d}" for w, zo, zc, r, d in
                zip(self.frequency, self.open_damping, self.closed_damping, self.reasons,
                    self.details)]

    def summary(self) -> str:
        head = (f"DampingVerdict: {len(self)} of {self.n_modes} modes below {self.target:g} "
                "damping in closed loop")
        lines = self.lines() or ["every mode reaches the target"]
        return "\n".join([head] + [f"  {line}" for line in lines]
                         + [f"  closed loop: {self.note}"])

    def _repr_html_(self) -> str:
        rows = [(f"{w:.4g}", _z(zo), _z(zc), r, d) for w, zo, zc, r, d in
                zip(self.frequency, self.open_damping, self.closed_damping, self.reasons,
                    self.details)] or [("-", "", "", "", "every mode reaches the target")]
        return html_table(rows, header=["w [rad/s]", "zeta open", "zeta closed", "reason",
                                        "why"],
                          caption=f"DampingVerdict: {len(self)} of {self.n_modes} modes below "
                                  f"{self.target:g} damping ({self.note})")


def _z(z: float) -> str:
    return "-" if np.isnan(z) else f"{z:.2g}"


def lqr_behind(design):
    """The LQR design behind `design` (itself, its ``lqr``, ``continuous``,
    ``dlqr.continuous`` or ``linear.lqr``), or None: the effort's handle."""
    for path in ((), ("lqr",), ("continuous",), ("dlqr", "continuous"), ("linear", "lqr")):
        d = design
        for name in path:
            d = getattr(d, name, None)
        if d is not None and hasattr(d, "R") and hasattr(d, "K_reduced") and hasattr(d, "Q"):
            return d
    return None


def _effort_now(lqr_design):
    """The effort of a default R ``effort diag(1 / u_ref^2)``, or None for another R."""
    R = np.asarray(lqr_design.R, dtype=float)
    g = np.asarray(lqr_design.controller.gamma_ref, dtype=float)
    pos = g[g > 0]
    u_ref = np.where(g > 0, g, pos.mean() if pos.size else 1.0)
    if R.shape != (g.size, g.size) or np.any(R - np.diag(np.diag(R))):
        return None
    e = np.diag(R) * u_ref ** 2
    return float(e[0]) if np.allclose(e, e[0], rtol=1e-9) else None


def redesigned_gain(minimal, Q, R):
    """The reduced LQR gain (nu, r) of `minimal` with Cartesian weight `Q` (2nq, 2nq) and
    input weight `R` (nu, nu), or None where the Riccati equation fails: the one Riccati solve
    of the effort sweep and of :func:`tenscontrol.design.effort.choose_effort`."""
    A, Bw = (np.asarray(X, dtype=float) for X in (minimal.sys.A, minimal.sys.B))
    R = np.asarray(R, dtype=float)
    B = Bw[:, :R.shape[0]]
    Qr = minimal.basis.T @ Q @ minimal.basis
    Qr = 0.5 * (Qr + Qr.T)
    w = max(float(np.abs(np.linalg.eigvals(A)).max(initial=0.0)), 1.0)   # time scaling
    try:
        X = scipy.linalg.solve_continuous_are(A / w, B / w, Qr / w, R / w)
    except (np.linalg.LinAlgError, ValueError):
        return None
    return np.linalg.solve(R, B.T @ X)


def closed_loop_damping(minimal, K_reduced, fig) -> np.ndarray:
    """Closed-loop damping ratio (m,) of each open-loop mode of `fig` (modal_analysis of
    ``minimal.elastic``) under ``u = -K_reduced left_inverse (x - x*)``, the loop closed on
    the elastic model."""
    em = minimal.elastic
    lam, V = scipy.linalg.eig(em.A - em.B @ K_reduced @ minimal.left_inverse @ em.T)
    return damping_ratios(match_modes(fig["lam"], fig["V"], lam, V, em.n_e, em.M_e),
                          fig["static"])


def _damping_sweep(lqr_design, fig) -> np.ndarray:
    """Closed-loop damping (len(SWEEP), m) of every open-loop mode under the LQR redesigned
    with R times each of :data:`SWEEP` (nan where the Riccati equation fails): one Riccati
    solve on the reduced model per scale, the loop closed on the elastic model."""
    out = np.full((SWEEP.size, fig["lam"].size), np.nan)
    for k, scale in enumerate(SWEEP):
        K = redesigned_gain(lqr_design.minimal, lqr_design.Q,
                            np.asarray(lqr_design.R, dtype=float) * scale)
        if K is not None:
            out[k] = closed_loop_damping(lqr_design.minimal, K, fig)
    return out


def dampable_modes(fig, damping: float) -> np.ndarray:
    """Indices of the modes of `fig` (modal_analysis) below `damping` open loop that a
    weight can damp: reachable from the commanded strings (:data:`UNREACHABLE`) and seen by
    the outputs (:data:`UNOBSERVED`), the modes the verdict would call "effort"."""
    vis = fig["visibility"].max(axis=1) if fig["visibility"].size else np.zeros(
        fig["lam"].size)
    vis_ref = max(float(vis[np.isfinite(vis)].max(initial=0.0)), np.finfo(float).tiny)
    return np.flatnonzero(~(fig["damping"] >= damping) & (fig["authority"] >= UNREACHABLE)
                          & (vis >= UNOBSERVED * vis_ref))


class _Sweep:
    """The effort sweep of a design, computed on first use (only a mode that needs it pays)."""

    def __init__(self, design, fig):
        self.lqr = lqr_behind(design)
        self.fig = fig
        self._damping = None

    @property
    def damping(self) -> np.ndarray:
        if self._damping is None:
            self._damping = _damping_sweep(self.lqr, self.fig)
        return self._damping

    @property
    def affordable(self) -> bool:
        """An LQR behind the design, small enough for the sweep's Riccati solves."""
        return self.lqr is not None and self.lqr.minimal.order <= SWEEP_MAX_ORDER


def _effort_reason(sweep: _Sweep, i: int, zo: float, zc: float, target: float) -> tuple:
    """("effort" or "weights", detail) of a reachable, seen mode left below the target."""
    weak = sweep.fig["authority"][i]
    start = (f"reachable but weakly (authority {weak:.2g} of the best mode's); " if weak < 1e-3
             else "")
    if not sweep.affordable:
        if not zc > zo:
            return "weights", start + ("the design added no damping to it: its weights do "
                                       "not ask for this mode (weight the outputs it moves)")
        factor = ((zc - zo) / (target - zo)) ** 2     # added damping ~ weight^-1/2 (LQR)
        return "effort", start + (f"a control weight about {factor:.2g} times the present "
                                  f"would reach about {target:g} (estimate, not checked)")
    now = _effort_now(sweep.lqr)

    def effort(scale):
        return (f"effort {now * scale:.2g} (now {now:.2g})" if now is not None else
                f"R times {scale:.2g}")

    z = sweep.damping[:, i]
    reached = np.flatnonzero(z >= target)
    if reached.size:
        k = int(reached[0])
        return "effort", start + (f"the LQR redesigned with {effort(SWEEP[k])} damps it "
                                  f"(zeta {z[k]:.2g})")
    best = np.nanmax(z) if np.isfinite(z).any() else np.nan
    return "weights", start + (f"a cheaper control does not damp it: down to "
                               f"{effort(SWEEP[-1])} the LQR gives at most zeta {best:.2g}; "
                               "its weights do not ask for this mode (weight the outputs it "
                               "moves)")


def damping_verdict(design, damping: float = DEFAULT_DAMPING) -> DampingVerdict:
    """The modes `design` leaves below `damping` in closed loop, with the reason.

    Parameters
    ----------
    design : Design
        A design with a minimal realization (``design.minimal``): LQR, DLQR, H-infinity, LQG,
        discrete LQG, MPC, extended LQG.
    damping : float
        The damping ratio target, in (0, 1).

    Returns
    -------
    DampingVerdict
    """
    damping = validation.real("damping_verdict: damping", damping, positive=True,
                              expected="a damping ratio in (0, 1)")
    if damping >= 1:
        raise ValueError(f"damping_verdict: damping must be a damping ratio in (0, 1), got "
                         f"{damping:g}")
    minimal = getattr(design, "minimal", None)
    if minimal is None:
        raise TypeError(f"damping_verdict: a {type(design).__name__} has no design model "
                        "(minimal); call it on each of its designs (a ShapeChange's "
                        "designs[k])")
    em = minimal.elastic
    fig = modal_analysis(em)
    lam_c, V_c, note = closed_loop_eigenvalues(em, design)
    closed = match_modes(fig["lam"], fig["V"], lam_c, V_c, em.n_e, em.M_e)
    zc = damping_ratios(closed, fig["static"])
    zo = fig["damping"]
    controller = getattr(design, "controller", None)
    period = getattr(controller, "period", None)
    vis = fig["visibility"].max(axis=1) if fig["visibility"].size else np.zeros(zo.size)
    vis_ref = max(float(vis[np.isfinite(vis)].max(initial=0.0)), np.finfo(float).tiny)
    rows, sweep = [], _Sweep(design, fig)
    for i in np.flatnonzero(~(zc >= damping)):
        w = fig["frequency"][i]
        if period and w >= np.pi / period:
            reason, detail = "sampling", (f"above the Nyquist frequency {np.pi / period:.4g} "
                                          f"rad/s of the {period:g} s period")
        elif fig["authority"][i] < UNREACHABLE:
            reason, detail = "unreachable", (
                f"the commanded strings do not stretch in it (authority "
                f"{fig['authority'][i]:.1e} of the best mode's): command other strings")
        elif vis[i] < UNOBSERVED * vis_ref:
            reason, detail = "unobserved", ("the design's outputs do not see it, so the "
                                            "weights do not ask for it: add outputs")
        else:
            reason, detail = _effort_reason(sweep, i, zo[i], zc[i], damping)
        if getattr(design, "dlqr", None) is not None:
            detail += "; active tension bounds lower it further"
        rows.append((w, zo[i], zc[i], reason, detail))
    cols = list(zip(*rows)) if rows else [(), (), (), (), ()]
    # the modes a weight can damp: reached, seen and not static
    able = np.flatnonzero((fig["authority"] >= UNREACHABLE) & (vis >= UNOBSERVED * vis_ref)
                          & np.isfinite(zc))
    least = able[np.argmin(zc[able])] if able.size else None
    return DampingVerdict(float(damping), np.array(cols[0], dtype=float),
                          np.array(cols[1], dtype=float), np.array(cols[2], dtype=float),
                          tuple(cols[3]), tuple(cols[4]), int(zo.size), note,
                          float("nan") if least is None else float(zc[least]),
                          float("nan") if least is None else float(fig["frequency"][least]))


def unreachable_modes(em, damping: float = DEFAULT_DAMPING) -> str:
    """The modes of the elastic model `em` below `damping` that its inputs cannot reach, as
    one sentence ("" if none): why no controller through these strings can damp them."""
    fig = modal_analysis(em)
    weak = [i for i in np.flatnonzero(~(fig["damping"] >= damping))
            if fig["authority"][i] < UNREACHABLE]
    if not weak:
        return ""
    modes = ", ".join(f"{fig['frequency'][i]:.4g} rad/s (damping {fig['damping'][i]:.2g}, "
                      f"authority {fig['authority'][i]:.1e})" for i in weak[:4])
    return (f"the commanded strings do not stretch in the mode{'s' if len(weak) > 1 else ''} "
            f"{modes}: no feedback through them can damp "
            f"{'them' if len(weak) > 1 else 'it'} (tenscontrol.modes(model) shows them); "
            "command other strings, or add damping")


def verdict_rows(design, verdict=None, damping: float = DEFAULT_DAMPING,
                 hint: bool = False) -> list:
    """Summary rows of a design's damping verdict: ("modes below 2 %", ...) per mode, then
    the least damping ratio reached; a row saying why it could not be formed if the analysis
    fails. `verdict` is the function that gives it (the design's cached ``damping_verdict``;
    :func:`damping_verdict` by default); `hint`: the design was given no damping target, so
    the last row names the one a user could set."""
    minimal = getattr(design, "minimal", None)
    states = getattr(getattr(minimal, "elastic", None), "A", np.zeros((0, 0))).shape[0]
    if states > SUMMARY_MAX_STATES and "_verdicts" not in vars(design):
        return [("damping verdict", f"call damping_verdict() ({states} elastic states: not "
                                    "computed for the summary)")]
    try:
        v = (verdict or (lambda d: damping_verdict(design, d)))(damping)
    except (ValueError, TypeError, np.linalg.LinAlgError, AttributeError) as exc:
        return [("damping verdict", f"not available ({exc})")]
    label = f"modes below {100 * damping:g} % damping"
    rows = ([(label, f"none of {v.n_modes}")] if not len(v) else
            [(label, f"{len(v)} of {v.n_modes}")] + [("", line) for line in v.lines()])
    if np.isnan(v.least_damping):
        return rows
    least = f"zeta {v.least_damping:.2g} at {v.least_frequency:.4g} rad/s (modes it can damp)"
    if hint and v.least_damping < damping:
        least += (f"; damping={damping:g} asks the design for {damping:g} on every one, "
                  "within the prestress")
    return rows + [("least damping", least)]
