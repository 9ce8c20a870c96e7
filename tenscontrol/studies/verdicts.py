"""The verdict of a closed-loop check: is the loop worse than open loop, and what in the run
says why (:func:`tenscontrol.verify`, issue 32).

:func:`verdict` turns the evidence into words: the peak and rms against open loop, and the
causes it can see, each with its figures: strings that went slack or saturated, tension bounds
an MPC held, an estimator's error, a linear prediction that is off (the motion left the linear
range), a design that amplifies the load on the linear model too, a loop that settled away
from the operating point, modes the loop made less damped or left ringing, and a sampling
period too long for a weakly damped mode. The other functions gather that evidence from a run.
"""

from __future__ import annotations

import numpy as np

from tenscontrol.linear.modal import (DEFAULT_DAMPING, closed_loop_eigenvalues, damping_ratios,
                                      match_modes, modal_analysis)
from tenscontrol.simulation.trajectory import Trajectory, max_abs

__all__ = ["bound_time", "estimate_error", "settled_offset", "verdict", "weak_modes"]

#: A linear prediction off by more than this fraction of the closed-loop peak is named as a
#: cause: the loop did not behave as the design model said.
_PREDICTION_OFF = 0.25
#: An estimator whose predicted positions are off by more than this fraction of the motion
#: (RMS at the samples) is named as a cause: the feedback acted on a wrong state.
_ESTIMATE_OFF = 0.3
#: An applied force density within this fraction of the operating one (at least 1 N/m) of
#: a bound sits at it.
_BOUND_RTOL = 1e-6
#: The share of the run at its end where a loop that came back has settled, and the size
#: (over the peak) of deflection and command there that says it did not.
_SETTLE_FRACTION = 0.1
_OFFSET = 0.5
#: A noisy sensor loop whose RMS command is more than this many times the noiseless linear
#: prediction's is driven by the noise it feeds back (the 2 x 4-prism tower's and the
#: icosahedron's default LQGs: 16.5 and 6.8 times, measured; the ball's, which halves the open
#: loop's peak: 1.04).
_NOISE_FED = 3.0
#: A closed-loop mode below this fraction of its open-loop damping was lowered by the loop.
_LOWERED = 0.9
#: A sampled loop with fewer than 2 pi / 0.5 = 12.6 samples per period of a weakly damped mode
#: is named as a cause (the hold's phase lag at omega T = 0.5 rad is already 14 degrees).
_SAMPLES_PER_RADIAN = 0.5


def weak_modes(model, design) -> list:
    """(frequency [rad/s], closed-loop damping, open-loop damping) of the modes the loop
    leaves below :data:`tenscontrol.linear.modal.DEFAULT_DAMPING`, from the controller closed
    around the elastic model of `model` (empty when the loop cannot be formed there)."""
    # imported here: the reduction imports python-control, which `import tenscontrol` must not
    from tenscontrol.linear.reduction import elastic_model

    try:
        em = elastic_model(model)
        fig = modal_analysis(em)
        lam, V, _ = closed_loop_eigenvalues(em, design)
    except (ValueError, AttributeError, TypeError, np.linalg.LinAlgError):
        return []
    closed = match_modes(fig["lam"], fig["V"], lam, V, em.n_e, em.M_e)
    z = damping_ratios(closed, fig["static"])
    return [(float(w), float(zc), float(zo)) for w, zc, zo in zip(np.abs(closed), z,
                                                                   fig["damping"])
            if np.isfinite(w) and not zc >= DEFAULT_DAMPING]


def settled_offset(t, y, u) -> tuple:
    """(largest |deflection| [m], largest |command| [N/m]) over the last tenth of the run,
    each relative to its peak over the run: near 1 for both, the loop did not come back."""
    last = t >= t[0] + (1 - _SETTLE_FRACTION) * (t[-1] - t[0])
    peak_y, peak_u = max_abs(y), max_abs(u)
    return (max_abs(y[last]) / peak_y if peak_y > 0 else 0.0,
            max_abs(u[last]) / peak_u if peak_u > 0 else 0.0)


def bound_time(run: Trajectory, controller) -> dict:
    """{string: time [s]} the applied force density of each commanded string sat at a
    tension bound the controller itself enforces (an MPC's gamma_min and gamma_max), on the
    output grid; empty for a controller without bounds of its own."""
    lo = getattr(controller, "gamma_min", None)
    record = run.control
    if lo is None or record is None or run.t.size < 2:
        return {}
    hi = np.asarray(getattr(controller, "gamma_max", np.inf), dtype=float)
    lo = np.asarray(lo, dtype=float)
    applied = np.asarray(record.applied, dtype=float)
    tol = _BOUND_RTOL * np.maximum(np.abs(np.asarray(controller.gamma_ref, dtype=float)), 1.0)
    at = (applied <= lo + tol) | (applied >= hi - tol)
    dt = np.diff(run.t)
    held = ((at[1:] & at[:-1]) * dt[:, None]).sum(axis=0)     # both ends of an interval
    return {int(k): float(v) for k, v in zip(record.strings, held) if v > 0}


def estimate_error(run: Trajectory, controller, structure, q_ref) -> float:
    """RMS error of an estimator's predicted free positions at the samples over the RMS motion
    there (nan for a controller without an estimate): the discrete LQG's ``z_k|k-1`` through
    its basis, the extended LQG's ``x_k|k-1``."""
    record = run.control
    states = getattr(record, "sample_states", None)
    if states is None or not len(states):
        return np.nan
    nq, free = q_ref.size, structure.free_coordinates
    if hasattr(controller, "estimates"):
        estimate = controller.estimates(states)[:, :nq]
    elif hasattr(getattr(controller, "kalman", None), "basis"):
        r = controller.kalman.Phi.shape[0]
        estimate = states[:, :r] @ controller.kalman.basis[:nq, :r].T + q_ref
    else:
        return np.nan
    times = record.sample_times
    nodes = run.nodes.reshape(run.t.size, -1)
    truth = np.column_stack([np.interp(times, run.t, nodes[:, c]) for c in free])
    motion = float(np.sqrt(np.mean((truth - q_ref[free]) ** 2)))
    error = float(np.sqrt(np.mean((estimate[:, free] - truth) ** 2)))
    return error / motion if motion > 0 else np.nan


def _strings(times: dict) -> str:
    """"commanded string 5" or "3 commanded strings" of a {string: time} dict."""
    return (f"commanded string {next(iter(times))}" if len(times) == 1 else
            f"{len(times)} commanded strings")


def verdict(peak: float, rms: float, closed, linear_error: float,
            weak_modes: list, controller, t_final: float, estimate_error: float = np.nan,
            linear_reductions: tuple | None = None, bound_time: dict | None = None,
            settled: tuple = (0.0, 0.0), command_ratio: float = np.nan) -> tuple:
    """(verdict, causes) of a closed-loop check, in words.

    Parameters
    ----------
    peak, rms : float
        1 - closed / open loop peak and rms deflection (negative: worse).
    closed : ClosedLoopFigures
        The closed loop's figures (its ``slack_time`` and ``saturated_time`` are read).
    linear_error : float
        max |y_closed - y_linear| / max |y_closed| (nan without a prediction).
    weak_modes : list of (float, float, float)
        (closed-loop frequency [rad/s], closed-loop and open-loop damping ratio) of the modes
        below the damping target.
    controller
        The runtime controller (its ``period`` if sampled).
    t_final : float
        The simulated time [s].
    estimate_error : float
        An estimator's RMS prediction error over the RMS motion at the samples (nan: none).
    linear_reductions : (float, float), optional
        1 - linear closed / linear open loop, peak and rms: negative says the design itself
        amplifies this load, with no nonlinearity involved.
    bound_time : dict of int to float, optional
        Commanded strings held at a tension bound of the controller's own (an MPC's), with
        the time [s].
    settled : (float, float)
        Largest deflection and command over the last tenth of the run, each over its peak.
    command_ratio : float
        A noisy sensor loop's RMS command over its noiseless linear prediction's (nan: no
        noise or no prediction).

    Returns
    -------
    verdict : str
        "closed loop WORSE than open loop: ..." or "closed loop better than open loop: ...".
    causes : tuple of str
        What held the loop back, visible in the run: the likely causes when it is worse,
        notes when it is better (possibly none).
    """
    figures = f"peak {-100 * peak:+.1f} %, rms {-100 * rms:+.1f} % against open loop"
    worse = peak < 0 or rms < 0
    causes = []
    if closed.slack_time:
        worst = max(closed.slack_time.values())
        causes.append(f"slack strings: {_strings(closed.slack_time)} went slack "
                      f"(longest {worst:.3g} s): the command asked for tension below zero, so "
                      "the loop was not the designed one")
    if closed.saturated_time:
        worst = max(closed.saturated_time.values())
        causes.append(f"saturation: {_strings(closed.saturated_time)} held at a bound "
                      f"(longest {worst:.3g} s)")
    if bound_time:
        worst = max(bound_time, key=bound_time.get)
        causes.append(f"bounds: the controller held {_strings(bound_time)} at a "
                      f"tension bound (string {worst} for {bound_time[worst]:.3g} s): the "
                      "unconstrained law it was designed as did not act there")
    if min(settled) > _OFFSET:
        causes.append(f"the loop settled away from the operating point: over the last tenth "
                      f"of the run the deflection is still {100 * settled[0]:.0f} % and the "
                      f"command {100 * settled[1]:.0f} % of their peaks (a new equilibrium "
                      "that the commands hold, or a drift along a mechanism)")
    if np.isfinite(estimate_error) and estimate_error > _ESTIMATE_OFF:
        causes.append(f"estimate error: the estimator's predicted positions were off by "
                      f"{100 * estimate_error:.0f} % of the motion (RMS at the samples): more "
                      "or better sensors, or a model closer to the run")
    if np.isfinite(command_ratio) and command_ratio > _NOISE_FED:
        causes.append(f"sensor noise fed back: the RMS command is {command_ratio:.3g} times the "
                      "noiseless linear prediction's, so the noise drives the loop (the "
                      "design's 'full-state reach' row says what the load lets it gain): "
                      "quieter or other sensors, or a smaller expected_load")
    if np.isfinite(linear_error) and linear_error > _PREDICTION_OFF:
        causes.append(f"the linear prediction is off by {100 * linear_error:.0f} % of the peak: "
                      "the motion left the linear range (or an estimator's state drifted from "
                      "the true one)")
    if linear_reductions is not None and min(linear_reductions) < 0:
        lp, lr = linear_reductions
        causes.append(f"the design itself: on the linear model too the closed loop is worse "
                      f"than the open loop (peak {-100 * lp:+.1f} %, rms {-100 * lr:+.1f} %), "
                      "so no nonlinearity is needed; its weights do not ask for what this "
                      "load excites (outputs, frequencies)")
    # modes the loop made less damped first: they explain 'worse'; then the modes it left so
    # weakly damped that they still ring at the end of the run (decay rate zeta w below
    # 1 / t_final); a mode that decays within the run is not a cause
    lowered = [m for m in weak_modes if m[1] < _LOWERED * m[2]]
    ringing = [m for m in weak_modes if m not in lowered and m[1] * m[0] * t_final < 1]
    for w, z, z0 in (lowered + ringing)[:3]:
        ring = ("does not decay within the run" if z * w * t_final < 1 else
                "rings for many periods")
        what = ("the loop lowered the damping of the" if (w, z, z0) in lowered else
                "a weakly damped mode: the")
        causes.append(f"{what} {w:.4g} rad/s mode ({z0:.2g} open loop, {z:.2g} closed): it "
                      f"{ring} (tenscontrol.modes(model, design) shows what reaches it)")
    period = getattr(controller, "period", None)
    if period:
        # of the modes named above: a mode that decays within the run is no cause either
        fastest = max((w for w, _, _ in lowered + ringing), default=0.0)
        if fastest * period > _SAMPLES_PER_RADIAN:
            causes.append(f"sampling: the {period:g} s period gives "
                          f"{2 * np.pi / (fastest * period):.1f} samples per period of the "
                          f"{fastest:.4g} rad/s mode")
    if not worse:
        return f"closed loop better than open loop: {figures}", tuple(causes)
    if not causes:
        causes.append("no cause is visible in the run (slack, saturation, bounds, an estimate "
                      "error, sensor noise, a linear-prediction error, the design on the "
                      "linear model, an offset, a weakly damped mode, sampling): check the "
                      "weights and the disturbance")
    return f"closed loop WORSE than open loop: {figures}", tuple(causes)
