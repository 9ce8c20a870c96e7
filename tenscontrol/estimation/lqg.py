"""Kalman filters and LQG controllers from sensors (docs/theory.md, "Control on force
densities"; control-notes 5).

Both designs work on the reduced coordinates z of the LQR design's minimal realization
(``x - x* ~= basis @ z``): the LQR gain is :func:`tenscontrol.lqr`'s, the filter is designed on
``z' = A_r z + B_r u + E_r d``, ``y_m = C basis z + v`` with C the sensors' output matrix
(:meth:`tenscontrol.LinearModel.with_sensors`), white nodal-force noise d of spectral density
``process_noise`` on every free coordinate and white sensor noise v from the sensors' noise
model. The separation principle makes the loop's H2 norm

    ||T_zw||_2^2 = trace(S_r E_r W E_r^T) + trace(P K_r^T R K_r)

with S_r the LQR Riccati solution, P the filter's error covariance, w = [d; v] normalized by
``W^1/2``, ``V^1/2`` and z = [Q_r^1/2 z; R^1/2 u] (:func:`loop_h2`).

- :func:`lqg`: a continuous :class:`tenscontrol.OutputFeedback` (python-control's ``lqe``),
  measuring the sensors' noiseless ``h(q, qd)`` through a
  :class:`tenscontrol.control.estimators.SensorMeasurement`; sensor noise enters the filter as
  spectral density ``std^2 / rate`` (``std^2`` [unit^2 s] for a continuous sensor).
- :func:`discrete_lqg`: a :class:`tenscontrol.design.result.DiscreteLQGDesign` whose controller
  is a :class:`tenscontrol.control.estimators.DiscreteLQG` for the sampled loop (zero-order
  hold, computation delay; ``dlqe`` and ``dlqr`` on the exact discretization, process noise by
  Van Loan's integral).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import control as ct
import numpy as np
import scipy.linalg

from tenscontrol.control.controllers import OutputFeedback
from tenscontrol.control.estimators import DiscreteKalman, DiscreteLQG, SensorMeasurement
from tenscontrol.control.sampled import check_resolution, check_timing
from tenscontrol.design.result import Design, DiscreteLQGDesign, sorted_eigenvalues
from tenscontrol.design.discrete import COSTS, dlqr_gain
from tenscontrol.estimation.rank import warn_unobservable
from tenscontrol.estimation.tuning import NoiseTuning, check_noise, load_reach, noise_tuning
from tenscontrol.linear.norms import h2_norm
from tenscontrol.linear.sampling import exact_hold, sampled_cost, van_loan
from tenscontrol.design.synthesis import LQRDesign, lqr
from tenscontrol.mechanics.sensors import SensorSet
from tenscontrol.model.tables import titled_table

__all__ = ["LQGDesign", "closed_loop", "discrete_lqg", "kalman_gain", "lqg", "loop_h2",
           "loop_h2_direct", "noise_density", "reduced_model", "sensor_measurement", "with_reach"]


def _sqrtm(X: np.ndarray) -> np.ndarray:
    w, V = np.linalg.eigh(0.5 * (X + X.T))
    return (V * np.sqrt(np.clip(w, 0.0, None))) @ V.T


def _check(model, sensors, who: str) -> None:
    if not isinstance(sensors, SensorSet):
        raise TypeError(f"{who}: sensors must be a tenscontrol SensorSet "
                        f"(tenscontrol.sensors(structure, ...)), got {type(sensors).__name__}")
    if not hasattr(model, "with_sensors"):
        raise TypeError(f"{who}: model must be a tenscontrol LinearModel, got "
                        f"{type(model).__name__}")


def sensor_measurement(model, sensors: SensorSet) -> SensorMeasurement:
    """The measurement ``y_m = h(q, qd) - h(q*, 0)`` of `sensors` about `model`'s operating
    point (the commanded strings of a control model held at their force densities).

    Parameters
    ----------
    model : LinearModel
        Its actuated strings (``model.actuated()``) are the controller's commands.
    sensors : SensorSet
    """
    _check(model, sensors, "sensor_measurement")
    model = model.actuated()
    inputs = np.array([int(n[5:]) for n in model.input_names if n.startswith("gamma")],
                      dtype=np.int64)
    held = inputs if model.kind == "control" else np.zeros(0, dtype=np.int64)
    gamma = np.asarray(model.gamma, dtype=float)
    y_ref = (sensors.outputs(model.q, model.qd, gamma, held) if held.size
             else sensors.outputs(model.q, model.qd))
    return SensorMeasurement(sensors, model.with_sensors(sensors).C, model.q, y_ref, held,
                             gamma)


def noise_density(sensors: SensorSet, who: str) -> np.ndarray:
    """Spectral density of each signal's white noise [unit^2 s]: std^2 / rate."""
    s = sensors.signal_sensor
    std, rate = sensors.std[s], sensors.rate[s]
    if np.any(std <= 0):
        bad = sensors.names[int(np.flatnonzero(std <= 0)[0])]
        raise ValueError(f"{who}: every sensor needs a noise std > 0 for a Kalman filter; "
                         f"signal {bad} has 0 (give sensors(..., std=...))")
    return std**2 / np.where(np.isfinite(rate), rate, 1.0)


@dataclass(frozen=True, eq=False)
class LQGDesign(Design):
    """Result of :func:`lqg`.

    Attributes
    ----------
    controller : OutputFeedback
        ``xc' = (A_r - B_r K_r - L C_r) xc + L y_m``, ``u = -K_r xc``.
    lqr : LQRDesign
        The state-feedback half (its ``minimal`` holds the reduced model).
    L : ndarray, shape (r, ny)
        Kalman gain.
    P : ndarray, shape (r, r)
        Steady estimation-error covariance of z.
    Cr : ndarray, shape (ny, r)
        ``C @ basis``: the sensors on the reduced coordinates.
    W, V : ndarray
        Process-noise (nq, nq) [N^2 s] and sensor-noise (ny, ny) [unit^2 s] spectral densities.
    h2 : float
        H2 norm of the loop (module docstring).
    tuning : NoiseTuning
        The process noise W and where it came from (given, from ``expected_load`` or the
        default load).
    K, S, minimal
        The state-feedback half's (``lqr.K``, ``lqr.S``, ``lqr.minimal``).
    E : ndarray
        Closed-loop eigenvalues [1/s] (separation principle): the regulator's ``A_r - B_r
        K_r`` (``lqr.E``), then the filter error's ``A_r - L C_r``, each sorted by real part.
    """

    controller: OutputFeedback
    lqr: LQRDesign
    L: np.ndarray
    P: np.ndarray
    Cr: np.ndarray
    W: np.ndarray
    V: np.ndarray
    h2: float
    tuning: NoiseTuning | None = None

    @property
    def K(self) -> np.ndarray:
        return self.lqr.K

    @property
    def S(self) -> np.ndarray:
        return self.lqr.S

    @property
    def minimal(self):
        return self.lqr.minimal

    @property
    def E(self) -> np.ndarray:
        A = np.asarray(self.lqr.minimal.sys.A, dtype=float)
        error = np.linalg.eigvals(A - self.L @ self.Cr)
        return np.concatenate([self.lqr.E, sorted_eigenvalues(error, discrete=False)])

    def __repr__(self) -> str:
        return (f"LQGDesign(states={self.L.shape[0]}, signals={self.L.shape[1]}, "
                f"inputs={self.lqr.K.shape[0]}, h2={self.h2:.6g})")

    def summary(self) -> str:
        """Sizes, the loop's H2 norm and the two gains' sizes as a table."""
        r, ny = self.L.shape
        return titled_table("LQGDesign", [
            ("estimator states", f"{r}"), ("measured signals", f"{ny}"),
            ("inputs", f"{self.lqr.K.shape[0]}"), ("H2 norm of the loop", f"{self.h2:.6g}"),
            ("||K||_F (LQR)", f"{np.linalg.norm(self.lqr.K):.6g}"),
            ("||L||_F (Kalman)", f"{np.linalg.norm(self.L):.6g}"),
            ("trace P", f"{np.trace(self.P):.4g}")]
            + self._verdict_rows()
            + ([] if self.tuning is None else self.tuning.rows()))


def with_reach(tuning: NoiseTuning, design: LQRDesign, Cr, sensors: SensorSet) -> NoiseTuning:
    """`tuning` with its :class:`tenscontrol.estimation.tuning.LoadReach`: what its load lets
    `design`'s full-state gain gain, and its signal in the sensors (Cr on the reduced
    coordinates); unchanged without a load."""
    if tuning.load is None:
        return tuning
    A, B, E = reduced_model(design)
    Qr, _ = _weights(design)
    std = sensors.std[sensors.signal_sensor]
    r = Cr.shape[1]
    return replace(tuning, reach=load_reach(A, B, design.K_reduced, _sqrtm(Qr), Cr[:, :r],
                                            std, tuning.load, E))


def reduced_model(design: LQRDesign):
    """(A_r, B_r, E_r) of an LQR design's minimal realization [1/s, ...]."""
    sys, nu = design.minimal.sys, design.K.shape[0]
    A, B = np.asarray(sys.A, dtype=float), np.asarray(sys.B, dtype=float)
    return A, B[:, :nu], B[:, nu:]


def _weights(design: LQRDesign):
    T = design.minimal.basis
    return T.T @ design.Q @ T, design.R


def loop_h2(design: LQRDesign, Cr, P, W) -> float:
    """H2 norm of the LQG loop by the separation formula (module docstring)."""
    _, _, E = reduced_model(design)
    S, K, R = np.asarray(design.riccati.X), design.K_reduced, design.R
    J = np.trace(S @ E @ W @ E.T) + np.trace(P @ K.T @ R @ K)
    return float(np.sqrt(max(J, 0.0)))


def kalman_gain(A, E, Cr, W, V):
    """(L, P) of the continuous Kalman filter (python-control's ``lqe``) for process noise
    ``E W E^T`` and sensor noise V (spectral densities)."""
    G = E @ W @ E.T
    d, v = _units(G), np.sqrt(np.diag(V))    # solved in scaled units, as in _scaled_dlqe
    L, P, _ = ct.lqe(A * d[None, :] / d[:, None], np.eye(d.size), Cr * d[None, :] / v[:, None],
                     0.5 * (G + G.T) / np.outer(d, d), V / np.outer(v, v))   # symmetric to the bit
    return np.asarray(L, dtype=float) * d[:, None] / v[None, :], np.asarray(P) * np.outer(d, d)


def lqg(model, sensors: SensorSet, *, process_noise=None, expected_load=None, Q=None, R=None,
        effort=1.0, order=None, damping=None, d_scale=None) -> LQGDesign:
    """Continuous LQG: :func:`tenscontrol.lqr` and a Kalman filter on the sensors.

    Parameters
    ----------
    model : LinearModel
        Linearization at an equilibrium (as for :func:`tenscontrol.lqr`).
    sensors : SensorSet
        The measured signals; every sensor needs ``std > 0``.
    process_noise : float, optional
        Spectral density of the white force on every free coordinate [N^2 s]. Default: from
        `expected_load`, ``W = F^2 / (n_d w)`` for a load of amplitude F [N] at w [rad/s] (its
        power over its band, spread over the n_d force directions that move the reduced
        model; :mod:`tenscontrol.estimation.tuning`).
    expected_load : ExpectedLoad, optional
        The load the filter is tuned for. Default:
        :func:`tenscontrol.estimation.tuning.default_load`, the largest load that keeps every
        string taut [N] at a tenth of the lowest natural frequency (quasi-static). The
        design's ``tuning`` says which was used, and its ``reach`` what that load lets the
        loop gain.
    Q, R, effort, order, damping, d_scale
        As for :func:`tenscontrol.lqr` (the damping target sets the state-feedback gain; the
        filter's poles can still lower the loop's damping).

    Returns
    -------
    LQGDesign
    """
    _check(model, sensors, "lqg")
    w, _, load = check_noise("lqg", process_noise, None, expected_load)
    warn_unobservable(model, sensors, "lqg")
    design = lqr(model, Q=Q, R=R, effort=effort, order=order, damping=damping, d_scale=d_scale)
    meas = sensor_measurement(model, sensors)
    A, B, E = reduced_model(design)
    tuning = noise_tuning(model, A, E, design.minimal.basis, process_noise=w, expected_load=load,
                          load_states=False)
    Cr = meas.C @ design.minimal.basis
    tuning = with_reach(tuning, design, Cr, sensors)
    W = tuning.process_noise * np.eye(E.shape[1])
    V = np.diag(noise_density(sensors, "lqg"))
    L, P = kalman_gain(A, E, Cr, W, V)
    K = design.K_reduced
    ctrl = OutputFeedback(AK=A - B @ K - L @ Cr, BK=L, CK=K, DK=np.zeros((K.shape[0], Cr.shape[0])),
                          measurement=meas, strings=design.controller.strings,
                          gamma_ref=design.controller.gamma_ref, kind=design.controller.kind)
    return LQGDesign(ctrl, design, L, P, Cr, W, V, loop_h2(design, Cr, P, W), tuning)


def closed_loop(design: LQGDesign) -> ct.StateSpace:
    """The LQG loop on [z; z_hat] from w = [d W^-1/2; v V^-1/2] to [Q_r^1/2 z; R^1/2 u]
    (the system whose H2 norm is ``design.h2``)."""
    A, B, E = reduced_model(design.lqr)
    K, L, Cr = design.lqr.K_reduced, design.L, design.Cr
    Qr, R = _weights(design.lqr)
    n, ny = A.shape[0], Cr.shape[0]
    Acl = np.block([[A, -B @ K], [L @ Cr, A - B @ K - L @ Cr]])
    Bcl = np.block([[E @ _sqrtm(design.W), np.zeros((n, ny))],
                    [np.zeros((n, E.shape[1])), L @ _sqrtm(design.V)]])
    Ccl = np.block([[_sqrtm(Qr), np.zeros((n, n))], [np.zeros((K.shape[0], n)), -_sqrtm(R) @ K]])
    return ct.ss(Acl, Bcl, Ccl, 0)


def loop_h2_direct(design: LQGDesign) -> float:
    """``design.h2`` computed on :func:`closed_loop` by :func:`tenscontrol.h2_norm`."""
    return h2_norm(closed_loop(design))


# ---- sampled ---------------------------------------------------------------------------------


def _load_directions(A, E, C, basis) -> np.ndarray:
    """E times the orthonormal nodal-force directions that move the reduced coordinates and
    that the sensors (C on the Cartesian state) see at rest (``C basis (-A)^-1 E f != 0``),
    shape (r, nf)."""
    Cr = C @ basis
    _, sv, Vt = np.linalg.svd(E, full_matrices=False)
    Ef = E @ Vt[sv > 1e-9 * sv[0]].T
    # a constant load the sensors cannot see at rest is an unobservable mode at 1 of the
    # sampled filter (no stabilizing dlqe: e.g. 24 load directions and 16 lengths on the ball)
    static = np.linalg.lstsq(-A, Ef, rcond=None)[0]
    _, sv, Vt = np.linalg.svd(Cr @ static, full_matrices=False)
    # relative to the sensors' Cartesian gradients: a length blind to every elastic motion
    # (a string along a fixed direction) sees nothing, though its Cr is all round-off
    scale = np.linalg.norm(C, 2) * np.linalg.norm(basis, 2) * np.linalg.norm(static, 2)
    return Ef @ Vt[sv > 1e-9 * scale].T


def _load_states(A, B, E, T, d, w, drift, C, basis):
    """The hold model and process noise of ``[z; f]``: a load f on E's channels that walks
    randomly (``df/dt`` white, density `drift` [N^2/s]) besides the white force (density w).
    Returns (Phi, Gamma0, Gamma1, Qd, nf)."""
    n = A.shape[0]
    # only the forces that move the reduced coordinates and that the sensors see (an isotropic
    # walk of the nodal forces projected on them); the rest would be unobservable constant modes
    Ef = np.zeros((n, 0)) if drift is None else _load_directions(A, E, C, basis)
    nf = Ef.shape[1]
    Aa = np.block([[A, Ef], [np.zeros((nf, n + nf))]])
    Ba = np.vstack([B, np.zeros((nf, B.shape[1]))])
    Phi, Gamma0 = exact_hold(Aa, Ba, T - d)
    Phi_d, G_d = exact_hold(Aa, Ba, d)
    Gamma1 = Phi @ G_d
    G = scipy.linalg.block_diag(E * np.sqrt(w), np.sqrt(drift) * np.eye(nf) if nf else
                                np.zeros((0, 0)))
    return Phi @ Phi_d, Gamma0, Gamma1, van_loan(Aa, G @ G.T, T), nf


def _lqr_weights(A, B, Qr, R, T: float, d: float, cost: str) -> tuple:
    """(Qd, Rd, Nd) of the continuous cost on ``[z; u_prev]`` (n + nu), the state the sampled
    LQG's LQR acts on (with or without a delay): :func:`sampled_cost` (``"exact"``), padded
    with the held command's zero weight when there is no delay, or the rectangle rule."""
    n, nu = B.shape
    if cost == "rectangle":
        return (scipy.linalg.block_diag(Qr, np.zeros((nu, nu))) * T, R * T,
                np.zeros((n + nu, nu)))
    Qd, Rd, Nd = sampled_cost(A, B, 0.5 * (Qr + Qr.T), R, T, d)
    if d == 0:      # u_prev does not act within the period: no weight on it
        Qd = scipy.linalg.block_diag(Qd, np.zeros((nu, nu)))
        Nd = np.vstack([Nd, np.zeros((nu, nu))])
    return Qd, Rd, Nd


def _load_feedforward(Acl, Ga, G, S, Rd) -> np.ndarray:
    """The optimal gain on a constant load f entering ``x+ = Pa x + Ga u + G f`` (the load
    states are uncontrollable, so dlqr cannot give it): with the value function
    ``x^T S x + 2 x^T N f + ...``, ``N = Acl^T (S G + N)`` and
    ``K_f = (Rd + Ga^T S Ga)^-1 Ga^T (S G + N)``, Acl = Pa - Ga K stable. Shape (nu, nf)."""
    if G.shape[1] == 0:
        return np.zeros((Ga.shape[1], 0))
    N = np.linalg.solve(np.eye(Acl.shape[0]) - Acl.T, Acl.T @ S @ G)
    return np.linalg.solve(Rd + Ga.T @ S @ Ga, Ga.T @ (S @ G + N))


def _units(G) -> np.ndarray:
    """The states' units for a filter Riccati equation: sqrt(G_ii) of the process noise G."""
    d = np.sqrt(np.diag(G))
    top = d.max(initial=0.0)
    # an unforced state (its noise zero, or round-off of the reduced basis: 1e-17 on the
    # undamped prism's positions, whose 1e17 ratio of units Slycot's ordering fails on): any
    # unit
    return np.where(d > 1e-8 * top, d, top or 1.0)


def _scaled_dlqe(Phi, Cr, Qd, V) -> tuple[np.ndarray, tuple]:
    """python-control's dlqe a-priori covariance P, solved with each state scaled by
    sqrt(Qd_ii) and each signal by its noise std (V diagonal): the reduced states, the loads
    [N] and the signals [m, N, rad/s] span 14 decades at a 1e-3 length scale, where slycot's
    sg02ad called the pencil singular.

    Returns P and the solvers that refused the equation, each with its reason (empty: slycot
    answered), so that the design can say it was solved by the fallback."""
    d, v = _units(Qd), np.sqrt(np.diag(V))
    scaled = (Phi * d[None, :] / d[:, None], np.eye(d.size), Cr * d[None, :] / v[:, None],
              Qd / np.outer(d, d), V / np.outer(v, v))
    refused = ()
    try:
        _, Pn, _ = ct.dlqe(*scaled)
    except ArithmeticError as error:
        # slycot's sg02ad refused its reordered Schur form (the 2 x 4-prism tower, a mode at
        # damping ratio 5e-9, 0.87 N of expected load: spectral radius 0.99990 by SciPy's)
        refused = (f"slycot (filter Riccati): {str(error).strip().splitlines()[0]}",)
        _, Pn, _ = ct.dlqe(*scaled, method="scipy")
    return np.asarray(Pn, dtype=float) * np.outer(d, d), refused


def discrete_lqg(model, sensors: SensorSet, period, *, process_noise=None, delay=0.0, Q=None,
                 R=None, effort=1.0, order=None, seed=0, noise=True,
                 load_drift=None, cost: str = "exact", expected_load=None, damping=None,
                 d_scale=None) -> DiscreteLQGDesign:
    """A sampled LQG controller: Kalman filter and LQR on the exact zero-order-hold model.

    With no noise argument the filter is tuned from the structure and the sensors alone: the
    sensor noise is the SensorSet's std per sample, the load is a filter state (`load_drift`)
    and both densities follow the load the structure can take
    (:func:`tenscontrol.estimation.tuning.default_load`); ``expected_load=`` states the load
    instead (:mod:`tenscontrol.estimation.tuning` has the rule). The design's ``tuning`` says
    which densities were used and where they came from.

    Parameters
    ----------
    model, sensors, Q, R, effort, order, damping, d_scale
        As for :func:`lqg`; the sensors are read once per period with their noise std per
        sample (a sensor whose rate is below ``1 / period`` is refused).
    process_noise : float, optional
        Spectral density of the white force on every free coordinate [N^2 s]. Default: from
        `expected_load`, ``F^2 w / (n_d Omega^2)`` (F [N], w [rad/s], ``Omega = max(w, w_1)``,
        w_1 the lowest natural frequency, n_d the force directions that move the reduced
        model). Given alone (no `load_drift`, no `expected_load`), the
        filter has no load states, as in 1.0.
    expected_load : ExpectedLoad, optional
        The load the derived densities follow: its amplitude is the magnitude of the
        nodal-force vector, so 30 sin t N on three coordinates is
        ``ExpectedLoad(30 * 3**0.5, 1.0)``. Default: the largest load that keeps every
        string taut at ``w_1 / 10`` (quasi-static).
    period : float
        Sample period [s].
    delay : float
        Computation delay, 0 <= delay < period [s]: u_k acts from ``t_k + delay``.
    seed : int
        Seed of the readings' noise (``default_rng([seed, k])`` at sample k).
    noise : bool
        Read with the sensors' noise model (True) or noiseless.
    load_drift : float, optional
        Add the load as filter states: a force on every disturbance channel of the model
        (the directions that move the structure and that the sensors see at rest) that
        drifts as a random walk, ``df/dt`` white of spectral density `load_drift` [N^2/s] (a
        slowly varying payload load; a load of amplitude F and angular frequency w spread
        over the n_d force directions calls for ``F^2 w / n_d``). The estimated load is fed
        forward with the gain that is optimal for a constant load (its steady state is the
        least of ``z^T Q z + u^T R u`` over the equilibria under that load; the load states
        are uncontrollable, so dlqr cannot give it). None (default): ``F^2 w / n_d`` of
        `expected_load`, unless `process_noise` alone is given (then white forces only).
    cost : {"exact", "rectangle"}
        The sampled-data cost the LQR gain minimizes, as for :func:`tenscontrol.dlqr`:
        ``"exact"`` (default) the continuous cost integrated over each period under the hold
        (Van Loan), ``"rectangle"`` ``Q_r period``, ``R period`` (the only cost before 1.1).

    Returns
    -------
    DiscreteLQGDesign
        Its ``controller`` is the :class:`tenscontrol.control.estimators.DiscreteLQG` the
        sampled loop runs (before issue 30 discrete_lqg returned that controller: its
        attributes are still reached through the design, with a DeprecationWarning).

    Notes
    -----
    With ``Phi, Gamma0, Gamma1`` the hold of u_k and u_k-1 over one period, the LQR gain is
    the discrete LQR (:func:`tenscontrol.design.discrete.dlqr_gain`) on ``[z; u_prev]`` with the
    sampled-data weights of `cost`, the filter gain from ``dlqe`` with the process
    noise ``int e^{As} E W E^T e^{A^T s} ds``. ``K`` acts on ``[z; f; u_prev]``.
    """
    _check(model, sensors, "discrete_lqg")
    T, d = check_timing(period, delay, "discrete_lqg")
    if cost not in COSTS:
        raise ValueError(f"discrete_lqg: cost must be 'exact' (the sampled-data cost, Van "
                         f"Loan) or 'rectangle' (Q T, R T), got {cost!r}")
    slow = sensors.rate * T < 1.0 - 1e-9
    if np.any(slow):
        raise ValueError(f"discrete_lqg: sensor {int(np.flatnonzero(slow)[0])} samples at "
                         f"{sensors.rate[slow][0]:g} Hz, slower than the controller "
                         f"(1/period = {1 / T:g} Hz); raise its rate or the period")
    w, drift, load = check_noise("discrete_lqg", process_noise, load_drift, expected_load)
    if np.any(sensors.std <= 0):
        noise_density(sensors, "discrete_lqg")
    warn_unobservable(model, sensors, "discrete_lqg")
    design = lqr(model, Q=Q, R=R, effort=effort, order=order, damping=damping, d_scale=d_scale)
    meas = sensor_measurement(model, sensors)
    A, B, E = reduced_model(design)
    check_resolution(T, A, "discrete_lqg")
    tuning = noise_tuning(model, A, E, design.minimal.basis, process_noise=w, load_drift=drift,
                          expected_load=load, load_states=True)
    n, nu = B.shape
    Phi, Gamma0, Gamma1, Qd, nf = _load_states(A, B, E, T, d, tuning.process_noise,
                                               tuning.load_drift, meas.C, design.minimal.basis)
    basis = np.hstack([design.minimal.basis, np.zeros((design.minimal.basis.shape[0], nf))])
    Cr = meas.C @ basis
    V = np.diag(sensors.std[sensors.signal_sensor] ** 2)
    P, refused = _scaled_dlqe(Phi, Cr, Qd, V)
    M = P @ Cr.T @ np.linalg.inv(Cr @ P @ Cr.T + V)
    Qr, R = _weights(design)
    # the LQR on [z; u_prev], and the load states' feedforward (uncontrollable, so not dlqr's)
    Pa = np.block([[Phi[:n, :n], Gamma1[:n]], [np.zeros((nu, n + nu))]])
    Ga = np.vstack([Gamma0[:n], np.eye(nu)])
    Qw, Rw, Nw = _lqr_weights(A, B, Qr, R, T, d, cost)
    K, S = dlqr_gain(Pa, Ga, Qw, Rw, nu, N=Nw)
    K = np.asarray(K, float)
    # the cross term Nw leaves the load's gain as it is without one (its x-f terms cancel at
    # the optimal K), so only Rw enters
    Kf = _load_feedforward(Pa - Ga @ K, Ga, np.vstack([Phi[:n, n:], np.zeros((nu, nf))]),
                           np.asarray(S, float), Rw)
    K = np.hstack([K[:, :n], Kf, K[:, n:]])
    kalman = DiscreteKalman(Phi, Gamma0, Gamma1, Cr, M, P, basis, meas, T, d)
    ctrl = design.controller
    law = DiscreteLQG(ctrl.strings, ctrl.gamma_ref, ctrl.kind, T, d, K, kalman, int(seed),
                      bool(noise))
    tuning = with_reach(tuning, design, meas.C @ design.minimal.basis, sensors)
    return DiscreteLQGDesign(law, design, np.asarray(S, dtype=float), tuning, refused)

