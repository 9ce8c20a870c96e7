"""mpc(): the tension-bounded model predictive controller designed on a linear model.

The design model is the one :func:`tenscontrol.dlqr` uses (the minimal or design-order
realization of ``model.actuated()``, sampled exactly with a zero-order hold); the weights are
the LQR's; the terminal weight is the discrete Riccati solution, so that the MPC is the
discrete LQR wherever no bound is active. The QP and its solver live in
:class:`tenscontrol.control.mpc.PredictiveController`.

The load margin (``expected_load``, ``kind="passive"``). The MPC has no model of the
disturbance, so a nodal-force vector f [N] acting over the hold moves the elastic law away from
the QP's prediction. Take f constant from the sample on, with ``||f||_2 <= F``
(``ExpectedLoad.amplitude``). On the design model ``zdot = A z + B u + E_z f`` (``E_z =
left_inverse E``, E the linearization's map of every nodal force, fixed coordinates' columns
zero) the state at ``t`` after the sample differs from the predicted one by ``Gamma_f(t) f``,
``Gamma_f(t) = int_0^t e^{A s} ds E_z`` (the exact hold, linear in f), and string i's law,
``gamma_i = gamma_i(z)`` with gradient ``c_i^T`` (row i of G), by ``c_i^T Gamma_f(t) f`` to
first order in the motion. Its largest fall over the ball is, by Cauchy-Schwarz (attained at
``f = -F Gamma_f(t)^T c_i / ||Gamma_f(t)^T c_i||``),

    m_i(t) = F ||c_i^T Gamma_f(t)||_2,

and the QP's floor at each point of the first hold, ``t = delay + tau_j``, and at its start
``t = delay`` (zero without delay: the sampled state is measured), is raised by it: every load
within the bound then leaves the applied density at or above ``gamma_min`` at those points, to
first order (what is dropped: the law's and the plant's terms of second order in the load's
motion, and a load that changes inside the hold: for ``|f(s)| <= F`` varying, the bound is
``F int_0^t ||c_i^T e^{A s} E_z|| ds``, larger). With ``kind="control"`` the applied density
is the command, which no load moves: no margin. A floor raised above what a command can
reach makes the QP infeasible; the soft rows and the held last command then apply
(:mod:`tenscontrol.control.mpc`).
"""

from __future__ import annotations

import numpy as np

from tenscontrol import validation
from tenscontrol.control.controllers import measurement
from tenscontrol.control.mpc import PredictiveController, require_osqp
from tenscontrol.control.sampled import check_timing
from tenscontrol.design.result import MPCDesign
from tenscontrol.design.discrete import dlqr, dlqr_gain
from tenscontrol.linear.sampling import exact_hold
from tenscontrol.mechanics import dynamics
from tenscontrol.model.loads import ExpectedLoad
from tenscontrol.model.selection import Selection

__all__ = ["HOLD_POINTS", "MAX_HORIZON", "MAX_QP_BYTES", "load_margin", "mpc"]

#: The longest prediction horizon :func:`mpc` accepts [samples]: its condensed QP has
#: horizon x commanded strings variables, dense, and is solved at every sample.
MAX_HORIZON = 1000
#: The most memory the condensed QP of :func:`mpc` may take [bytes], estimated before any
#: is allocated (1 GiB).
MAX_QP_BYTES = 2**30
#: The points inside each period (``j T / HOLD_POINTS``, j = 1..HOLD_POINTS, the period's end
#: included) at which :func:`mpc` bounds the first move's applied force density for
#: ``kind="passive"``, besides the sample itself.
HOLD_POINTS = 4


def _qp_bytes(horizon: int, r: int, nu: int) -> int:
    """Estimated bytes of the condensed QP: the prediction matrices (horizon + 1) x r x
    (horizon nu) and about eight dense (horizon nu)^2 matrices (cost, tension rows, their
    whitening, OSQP's KKT factor)."""
    return 8 * ((horizon + 1) * r * horizon * nu + 8 * (horizon * nu) ** 2)


def check_horizon(model, horizon) -> int:
    """`horizon` as an int in [1, MAX_HORIZON] whose QP fits in MAX_QP_BYTES, with the
    design's size bounded from above by the model's (2 x free coordinates, every string)."""
    horizon = validation.integer("mpc: horizon", horizon, minimum=1, maximum=MAX_HORIZON)
    r = 2 * np.size(getattr(model.structure, "free_coordinates", model.A.shape[0] // 2))
    nu = model.B.shape[1]
    need = _qp_bytes(horizon, r, nu)
    if need > MAX_QP_BYTES:
        fits = next(n for n in range(horizon, 0, -1) if _qp_bytes(n, r, nu) <= MAX_QP_BYTES)
        raise ValueError(f"mpc: horizon = {horizon} samples would make a QP of about "
                         f"{need / 2**30:.3g} GiB ({horizon} x {nu} commands, {r} states), "
                         f"more than {MAX_QP_BYTES / 2**30:g} GiB; use a horizon <= {fits} "
                         "(or a longer period for the same time ahead)")
    return horizon


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


def _plant(model, A, B, G, basis, left_inverse, taus, delay) -> tuple:
    """What the MPC needs of the nonlinear plant to correct its design model's curvature
    inside the hold: ``accelerations(q, qd, f) -> qdd`` (3n,) [m/s^2] of the model's structure
    and bar model at loads f (3n,) [N]; the operating loads (3n,) [N]; the design model's
    accelerations on ``[z; u]``, (3n, r + nu); and the law's response at the first hold's
    start and at `taus` [s] to an acceleration held from the sample, (M + 1, nu, 3n)."""
    structure, bars, nq = model.structure, model.bars, model.q.size

    def accelerations(q, qd, f):
        return dynamics.accelerations(structure, q, qd, loads=f, bars=bars)[0]
    design = (basis @ np.hstack([A, B]))[nq:]
    forcing = left_inverse[:, nq:]          # an acceleration a moves z as left_inverse [0; a]
    response = np.array([G @ exact_hold(A, forcing, t)[1] for t in (delay, *taus)])
    return accelerations, np.asarray(model.loads, float), design, response


def load_margin(G, A, forcing, times, amplitude: float) -> np.ndarray:
    """The floor's margin for an unknown constant nodal force of 2-norm at most `amplitude`
    [N] held from the sample: ``amplitude ||G_i Gamma_f(t)||_2`` per commanded string i and
    time t, shape (len(times), nu) [N/m], to first order (module docstring).

    Parameters
    ----------
    G : ndarray, shape (nu, r)
        The law's gradient on the reduced state z [N/m per unit z].
    A : ndarray, shape (r, r)
        The continuous design model [1/s].
    forcing : ndarray, shape (r, nq)
        The reduced model's nodal-force input, ``left_inverse E`` [per N].
    times : sequence of float
        The instants after the sample [s] at which the rows bound the law.
    amplitude : float
        The bound on the force vector's 2-norm [N].
    """
    return amplitude * np.array([np.linalg.norm(G @ exact_hold(A, forcing, t)[1], axis=1)
                                 for t in times]).reshape(len(times), G.shape[0])


def _check_expected_load(expected_load):
    """`expected_load` as an ExpectedLoad or None, or a TypeError saying what to pass."""
    if expected_load is None or isinstance(expected_load, ExpectedLoad):
        return expected_load
    raise TypeError("mpc: expected_load must be a tenscontrol.ExpectedLoad(amplitude=N, "
                    "frequency=rad/s), the 2-norm bound of the unknown nodal-force vector "
                    "the floor must withstand inside each hold (e.g. ExpectedLoad(18.75, "
                    f"1.0)), or None; got {validation.describe(expected_load)}")


def mpc(model, period: float, *, horizon: int = 10, gamma_min=0.0, rate_limit=None, Q=None,
        R=None, outputs: Selection | None = None, order=None,
        effort=1.0, delay: float = 0.0, time_limit: float | None = None, damping=None,
        d_scale=None, expected_load: ExpectedLoad | None = None) -> MPCDesign:
    """A tension-bounded model predictive controller (needs ``tenscontrol[mpc]``: OSQP).

    Parameters
    ----------
    model : LinearModel
        Linearization at an equilibrium, kind "passive" or "control" (as for :func:`lqr`).
    period : float
        Sample period [s].
    horizon : int
        Prediction horizon N [samples], an integer from 1 to :data:`MAX_HORIZON` (1000)
        whose condensed QP (N x commanded strings variables, dense) is estimated to fit in
        :data:`MAX_QP_BYTES` (1 GiB).
    gamma_min : float or array_like (nu,)
        Least force density of each commanded string [N/m], at most its operating value; the
        largest is ``String.gamma_max`` (unbounded if None).
    rate_limit : float or array_like (nu,), optional
        Largest change of each command [N/m/s]; none by default.
    Q, R, outputs, order, effort, damping, d_scale
        The weights, outputs, design order, effort and damping target of
        :func:`tenscontrol.lqr` (same defaults); the tension bounds then hold the commands
        the target asks for within ``[gamma_min, gamma_max]``.
    delay : float
        Computation delay [s], ``0 <= delay < period``: the command computed from the sample
        at t_k acts from ``t_k + delay`` to ``t_{k+1} + delay`` (the last one until then), in
        the prediction as in :func:`tenscontrol.dlqr` (state ``[z; u_prev]``, terminal
        weight the delayed loop's Riccati solution). Default 0: the command acts at the
        sample, as if the QP took no time. Measured on the ball's 200 N doublet
        (``benchmarks/bench_mpc.py``): any delay from 0.1 ms (2 % of its 5 ms period) lets
        its MPC run away (peak 2-7 m, where ``dlqr`` with the same delay keeps 0.14 m), while
        1e-5 s keeps 0.103 m. It is the loop's timing, not the delayed model: the design
        without delay run with its commands 1 ms late runs away too (3.7 m; ``dlqr``: 0.14 m),
        as does the 1 ms design run without the delay (2.9 m), and so did the MPC before
        issue 30's item 3 with its commands 0.1 ms late (3.1 m). The T-bar's and 3-prism's
        loops keep their floors with half a period.
    expected_load : ExpectedLoad, optional
        The unknown load the floor must withstand inside each hold (``kind="passive"``):
        every constant nodal-force vector of 2-norm at most ``expected_load.amplitude`` [N]
        (the frequency is not used); the floor at the hold's points is raised by the most
        such a load moves each string's law there, to first order (module docstring;
        ``PredictiveController.load_margin``). Default None: no margin, the floor between
        samples holds for the design model only.
    time_limit : float, optional
        OSQP's run-time limit per QP [s], at most the period (a real-time loop would use the
        time its command has). Wall clock: a loaded machine reaches it sooner, so the
        commands then depend on the machine; None (default): no limit, the iteration cap
        alone bounds the work and runs repeat bit for bit.

    Returns
    -------
    MPCDesign
        Its ``controller`` is the :class:`PredictiveController`, a
        :class:`~tenscontrol.SampledController` (before issue 30 mpc returned it: its
        attributes are still reached through the design, with a DeprecationWarning); its
        control record's ``sample_info`` has each QP's ``status`` code
        (:data:`tenscontrol.control.mpc.STATUS_NAMES`, counted by name by
        :func:`~tenscontrol.control.mpc.status_counts`: solved, solved inaccurate, or stopped
        at the iteration cap or the time limit: its iterate's first move projected onto its
        bounds was used; failed, or "first move infeasible": the last command was held,
        projected onto the first move's bounds, ``held_last`` 1), ``iterations``,
        ``solve_time`` [s], ``soft_active`` (the relaxed rows of moves 2..N: those rows are
        soft with an exact penalty, the first move's hard) and the update's ``cpu_time`` [s]. A
        non-finite sampled state is refused (ValueError; in a simulation a ControllerError),
        never commanded as NaN.

    Raises
    ------
    ImportError
        OSQP is not installed.
    TypeError
        A horizon that is not an integer (2.5, "10", True); an expected_load that is not an
        ExpectedLoad.
    ValueError
        Bad bounds (gamma_min above an operating force density), horizon (below 1, above
        MAX_HORIZON, or a QP above MAX_QP_BYTES: the message gives the largest that fits),
        period or time limit (not positive, or above the period).
    """
    require_osqp()
    expected_load = _check_expected_load(expected_load)
    check_timing(period, delay, "mpc")
    horizon = check_horizon(model, horizon)
    # the rectangle-rule weights: the QP has no cross term between state and command (yet)
    design = dlqr(model, period, delay=delay, Q=Q, R=R, outputs=outputs, order=order,
                  effort=effort, damping=damping, d_scale=d_scale, cost="rectangle")
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
    # the prediction's state w = z, or [z; u_prev] with the delay (held = nu), as dlqr's
    Aw, Bw = zoh.augmented()
    r, held = Qr.shape[0], Aw.shape[0] - Qr.shape[0]
    Qw = np.zeros_like(Aw)
    Qw[:r, :r] = Qr
    _, P = dlqr_gain(Aw, Bw, Qw, Rd, held=held)      # scaled as dlqr's own solve
    A, B = np.asarray(mr.sys.A), np.asarray(mr.sys.B)[:, :nu]
    start = None if zoh.delay == 0 else np.hstack(exact_hold(A, B, zoh.delay))
    if law.kind == "passive":
        G, data = _law_gradient(model.structure, np.asarray(model.q, float), law.strings, T)
        taus = period * np.arange(1, HOLD_POINTS + 1) / HOLD_POINTS
        hold = [(tau, *exact_hold(A, B, tau)) for tau in taus]
        rate = G @ A            # the law's rate on z in the design model (G B = 0)
        plant = _plant(model, A, B, G, T, mr.left_inverse, zoh.delay + taus, zoh.delay)
        margin = None if expected_load is None else load_margin(
            G, A, mr.left_inverse @ np.asarray(model.E, float), (zoh.delay, *(zoh.delay + taus)),
            expected_load.amplitude)
    else:
        # the applied density gamma_ref + u is the command: no load moves it
        G, data, hold, rate, plant = np.zeros((nu, T.shape[1])), None, (), None, None
        margin = None
    ctrl = PredictiveController(Aw, Bw, mr.left_inverse, Qw, Rd, P, G,
                                law.q_ref, law.strings, law.gamma_ref, law.kind, law.period,
                                lo, hi, horizon, rates, data, time_limit, hold, rate,
                                zoh.delay, start, plant, margin)
    return MPCDesign(ctrl, design, P, Qw, Rd)
