"""mpc(): the tension-bounded model predictive controller designed on a linear model.

The design model is the one :func:`tenscontrol.dlqr` uses (the minimal or design-order
realization of ``model.actuated()``, sampled exactly with a zero-order hold); the weights are
the LQR's; the terminal weight is the discrete Riccati solution, so that the MPC is the
discrete LQR wherever no bound is active. The QP and its solver live in
:class:`tenscontrol.control.mpc.PredictiveController`.
"""

from __future__ import annotations

import numpy as np

from tenscontrol import validation
from tenscontrol.control.controllers import measurement
from tenscontrol.control.mpc import PredictiveController, require_osqp
from tenscontrol.design.result import MPCDesign
from tenscontrol.design.discrete import dlqr, dlqr_gain
from tenscontrol.model.selection import Selection

__all__ = ["mpc"]


def _law_gradient(structure, q, strings, basis) -> tuple[np.ndarray, tuple]:
    """The elastic law's gradient on the reduced state, G (nu, r) [N/m per unit z], and the
    law's data (pairs, stiffness, rest length, spring) of the commanded strings."""
    meas = measurement(structure, Selection(nodes=[], strings=list(map(int, strings))), q)
    k = structure.string_stiffness[strings]
    l0 = structure.string_rest_lengths[strings]
    spring = structure.string_is_spring[strings]
    length = meas.lengths_ref
    slope = np.where(spring | (length > l0), k * l0 / length**2, 0.0)   # d gamma / d l
    law = (meas.string_nodes.copy(), k.astype(float), l0.astype(float), spring.astype(bool))
    return slope[:, None] * (meas.C @ basis), law


def mpc(model, period: float, *, horizon: int = 10, gamma_min=0.0, rate_limit=None, Q=None,
        R=None, outputs: Selection | None = None, order=None,
        effort=1.0) -> MPCDesign:
    """A tension-bounded model predictive controller (needs ``tenscontrol[mpc]``: OSQP).

    Parameters
    ----------
    model : LinearModel
        Linearization at an equilibrium, kind "passive" or "control" (as for :func:`lqr`).
    period : float
        Sample period [s] (the command acts at the sample: no computation delay).
    horizon : int
        Prediction horizon N [samples], >= 1.
    gamma_min : float or array_like (nu,)
        Least force density of each commanded string [N/m], at most its operating value; the
        largest is ``String.gamma_max`` (unbounded if None).
    rate_limit : float or array_like (nu,), optional
        Largest change of each command [N/m/s]; none by default.
    Q, R, outputs, order, effort
        The weights, outputs, design order and effort of :func:`tenscontrol.lqr` (same
        defaults).

    Returns
    -------
    MPCDesign
        Its ``controller`` is the :class:`PredictiveController`, a
        :class:`~tenscontrol.SampledController` (before issue 30 mpc returned it: its
        attributes are still reached through the design, with a DeprecationWarning); its
        control record's ``sample_info`` has
        each QP's OSQP ``status`` (1 solved, 2 solved inaccurate, 7 stopped at the iteration
        cap: its iterate's first move projected onto its bounds was used), ``iterations``,
        ``solve_time`` [s] and the update's ``cpu_time`` [s].

    Raises
    ------
    ImportError
        OSQP is not installed.
    ValueError
        Bad bounds (gamma_min above an operating force density), horizon or period.
    """
    require_osqp()
    horizon = int(validation.real("mpc: horizon", horizon, positive=True,
                                  expected="a positive whole number of samples"))
    # the rectangle-rule weights: the QP has no cross term between state and command (yet)
    design = dlqr(model, period, Q=Q, R=R, outputs=outputs, order=order, effort=effort,
                  cost="rectangle")
    law, cont, zoh = design.controller, design.continuous, design.model
    mr, nu = cont.minimal, law.strings.size
    lo = validation.per_item("mpc: gamma_min", gamma_min, nu, "N/m", items=" (one per string)")
    hi = model.structure.string_gamma_max[law.strings]
    bad = np.flatnonzero((lo > law.gamma_ref) | (lo < 0) & ~model.structure.string_is_spring[
        law.strings])
    if bad.size:
        a = bad[0]
        raise ValueError(f"mpc: gamma_min of string {int(law.strings[a])} must lie in [0, its "
                         f"operating force density {law.gamma_ref[a]:.6g} N/m], got {lo[a]:.6g}")
    rates = None if rate_limit is None else validation.per_item(
        "mpc: rate_limit", rate_limit, nu, "N/m/s", positive=True, items=" (one per string)")
    T = mr.basis
    Qr = T.T @ cont.Q @ T
    Qr = period * 0.5 * (Qr + Qr.T)
    Rd = period * cont.R
    _, P = dlqr_gain(zoh.Phi, zoh.Gamma0, Qr, Rd)   # scaled as dlqr's own solve
    if law.kind == "passive":
        G, data = _law_gradient(model.structure, np.asarray(model.q, float), law.strings, T)
    else:
        G, data = np.zeros((nu, T.shape[1])), None
    ctrl = PredictiveController(zoh.Phi, zoh.Gamma0, mr.left_inverse, Qr, Rd, P, G,
                                law.q_ref, law.strings, law.gamma_ref, law.kind, law.period,
                                lo, hi, horizon, rates, data, design.K_reduced)
    return MPCDesign(ctrl, design, P, Qr, Rd)
