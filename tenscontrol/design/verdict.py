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
  Added damping of a lightly damped mode under LQR grows as ``1 / sqrt(effort)``, so the
  effort that would reach the target is estimated as
  ``effort * ((zeta_closed - zeta_open) / (target - zeta_open))^2``; for an LQR design the
  estimate is checked by solving the Riccati equation again with R scaled so (one solve on
  the reduced model) and the damping it gives is reported;
- ``"weights"``: reachable and seen, but the design added no damping to it, or the cheaper
  control of the estimate still leaves it below 3/4 of the target: the weights do not ask for
  this mode;
- ``"bounds"`` is not decided here: an MPC's verdict is its unconstrained law's, and active
  tension bounds only lower the damping further (:func:`tenscontrol.verify` shows them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from tenscontrol.linear.modal import (DEFAULT_DAMPING, closed_loop_eigenvalues, damping_ratios,
                                      match_modes, modal_analysis)
from tenscontrol.model.tables import Presentable, html_table

__all__ = ["DampingVerdict", "UNREACHABLE", "damping_verdict", "unreachable_modes"]

#: A mode whose authority (relative to the best-reached mode) is below this is unreachable from
#: the commanded strings: its generalized force is at the rounding level of the others'.
UNREACHABLE = 1e-10
#: An effort estimate whose redesign reaches less than this fraction of the target says that
#: effort is not what holds the mode back (the weights are).
_CHECK_FRACTION = 0.75
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
    """

    target: float
    frequency: np.ndarray
    open_damping: np.ndarray
    closed_damping: np.ndarray
    reasons: tuple
    details: tuple
    n_modes: int
    note: str

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


def _weights(design):
    """(the LQR design behind `design` or None, its R or None): the effort's handle."""
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


def _damping_at(lqr_design, scale: float, index: int, fig) -> float:
    """Damping of open-loop mode `index` under the LQR redesigned with R * scale (nan if the
    Riccati equation fails)."""
    mr = lqr_design.minimal
    A, Bw = (np.asarray(X, dtype=float) for X in (mr.sys.A, mr.sys.B))
    B = Bw[:, :lqr_design.K.shape[0]]
    Q = mr.basis.T @ lqr_design.Q @ mr.basis
    R = np.asarray(lqr_design.R, dtype=float) * scale
    w = max(float(np.abs(np.linalg.eigvals(A)).max(initial=0.0)), 1.0)   # time scaling
    try:
        X = scipy.linalg.solve_continuous_are(A / w, B / w, 0.5 * (Q + Q.T) / w, R / w)
    except (np.linalg.LinAlgError, ValueError):
        return np.nan
    K = np.linalg.solve(R, B.T @ X) @ mr.left_inverse
    em = mr.elastic
    lam, V = scipy.linalg.eig(em.A - em.B @ K @ em.T)
    closed = match_modes(fig["lam"], fig["V"], lam, V, em.n_e, em.M_e)
    return float(damping_ratios(closed[[index]], fig["static"])[0])


def _effort_reason(design, i: int, zo: float, zc: float, target: float, fig) -> tuple:
    """("effort" or "weights", detail) of a reachable, seen mode left below the target."""
    weak = fig["authority"][i]
    start = (f"reachable but weakly (authority {weak:.2g} of the best mode's); " if weak < 1e-3
             else "")
    if not zc > zo:
        return "weights", start + ("the design added no damping to it: its weights do not ask "
                                   "for this mode (weight the outputs it moves)")
    factor = ((zc - zo) / (target - zo)) ** 2     # effort scale: zeta_added ~ effort^-1/2
    lqr_design = _weights(design)
    if lqr_design is None:
        return "effort", start + (f"a control weight about {factor:.2g} times the present "
                                  f"would reach about {target:g}")
    now = _effort_now(lqr_design)
    what = (f"effort about {now * factor:.2g} (now {now:.2g})" if now is not None else
            f"R about {factor:.2g} times the present")
    check = _damping_at(lqr_design, factor, i, fig)
    if np.isnan(check):
        return "effort", start + f"{what} would damp it to about {target:g} (not checked)"
    if check < _CHECK_FRACTION * target:
        return "weights", start + (f"a cheaper control does not damp it: with {what} the LQR "
                                   f"gives zeta {check:.2g}; its weights do not ask for this "
                                   "mode (weight the outputs it moves)")
    return "effort", start + f"{what} damps it: the LQR redesigned so gives zeta {check:.2g}"


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
    em = design.minimal.elastic
    fig = modal_analysis(em)
    lam_c, V_c, note = closed_loop_eigenvalues(em, design)
    closed = match_modes(fig["lam"], fig["V"], lam_c, V_c, em.n_e, em.M_e)
    zc = damping_ratios(closed, fig["static"])
    zo = fig["damping"]
    controller = getattr(design, "controller", None)
    period = getattr(controller, "period", None)
    vis = fig["visibility"].max(axis=1) if fig["visibility"].size else np.zeros(zo.size)
    vis_ref = max(float(vis[np.isfinite(vis)].max(initial=0.0)), np.finfo(float).tiny)
    rows = []
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
            reason, detail = _effort_reason(design, i, zo[i], zc[i], damping, fig)
        if getattr(design, "dlqr", None) is not None:
            detail += "; active tension bounds lower it further"
        rows.append((w, zo[i], zc[i], reason, detail))
    cols = list(zip(*rows)) if rows else [(), (), (), (), ()]
    return DampingVerdict(float(damping), np.array(cols[0], dtype=float),
                          np.array(cols[1], dtype=float), np.array(cols[2], dtype=float),
                          tuple(cols[3]), tuple(cols[4]), int(zo.size), note)


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


def verdict_rows(design, damping: float = DEFAULT_DAMPING) -> list:
    """Summary rows of a design's damping verdict: ("modes below 2 %", ...) per mode; a row
    saying why it could not be formed if the analysis fails."""
    try:
        v = damping_verdict(design, damping)
    except (ValueError, np.linalg.LinAlgError, AttributeError) as exc:
        return [("damping verdict", f"not available ({exc})")]
    label = f"modes below {100 * damping:g} % damping"
    if not len(v):
        return [(label, f"none of {v.n_modes}")]
    lines = v.lines()
    return [(label, f"{len(v)} of {v.n_modes}")] + [("", line) for line in lines]
