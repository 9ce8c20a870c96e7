"""Sampled-data design: exact zero-order-hold models, discretized and discrete controllers.

- :func:`zoh`: the exact discretization of ``x' = A x + B u`` with u held over each period,
  with an optional computation delay (the command of sample k acts from ``t_k + delay``):
  ``x_{k+1} = Phi x_k + Gamma0 u_k + Gamma1 u_{k-1}`` (Franklin, Powell & Workman, *Digital
  Control of Dynamic Systems*, 3rd ed., section 4.3.3, "fractional delay").
- :func:`discretize`: a continuous :class:`~tenscontrol.StateFeedback` sampled and held
  (``u_k = -K (x_k - x*)``) or an :class:`~tenscontrol.OutputFeedback` discretized exactly
  by python-control's ``c2d`` (ZOH on the measurement), as a
  :class:`~tenscontrol.control.DiscreteFeedback`.
- :func:`dlqr`: the discrete LQR on the ZOH model of the minimal (or design-order) model,
  delay included in the model, minimizing the continuous cost exactly over each period (or by
  the rectangle rule); :func:`dlqr_gain` is the package's one scaled discrete Riccati solve.
- :func:`discrete_closed_loop`: a sampled controller around the ZOH model of a minimal
  realization, the discrete loop whose spectral radius is its stability figure.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import control as ct
import numpy as np
import scipy.linalg

from tenscontrol import validation
from tenscontrol.control.controllers import OutputFeedback, StateFeedback
from tenscontrol.control.sampled import DiscreteFeedback, check_resolution, check_timing
from tenscontrol.design.result import Design, sorted_eigenvalues
from tenscontrol.linear.reduction import MinimalRealization
from tenscontrol.linear.sampling import exact_hold, sampled_cost
from tenscontrol.design.synthesis import LQRDesign, lqr
from tenscontrol.model.selection import Selection
from tenscontrol.model.tables import Presentable, titled_table

__all__ = ["COSTS", "DiscreteLQRDesign", "ZOHModel", "discrete_closed_loop", "discretize",
           "dlqr", "dlqr_gain", "gain_margin", "sampled_weights", "zoh"]


@dataclass(frozen=True, eq=False)
class ZOHModel(Presentable):
    """``x_{k+1} = Phi x_k + Gamma0 u_k + Gamma1 u_{k-1}``: the exact sampled model.

    Attributes
    ----------
    Phi : ndarray, shape (n, n)
        ``expm(A T)``.
    Gamma0 : ndarray, shape (n, m)
        The effect of u_k, held from ``t_k + delay`` to ``t_{k+1}``.
    Gamma1 : ndarray, shape (n, m)
        The effect of u_{k-1}, still held from ``t_k`` to ``t_k + delay`` (zero without delay).
    period, delay : float
        [s].
    """

    Phi: np.ndarray
    Gamma0: np.ndarray
    Gamma1: np.ndarray
    period: float
    delay: float

    def __repr__(self) -> str:
        n, m = self.Gamma0.shape
        rho = float(np.abs(np.linalg.eigvals(self.Phi)).max()) if n else 0.0
        return (f"ZOHModel(states={n}, inputs={m}, period={self.period:g} s, "
                f"delay={self.delay:g} s, spectral radius of Phi={rho:.6g})")

    def summary(self) -> str:
        """Sizes, timing, the spectral radius of Phi and the input matrices' sizes as a table."""
        n, m = self.Gamma0.shape
        rho = float(np.abs(np.linalg.eigvals(self.Phi)).max()) if n else 0.0
        return titled_table("ZOHModel", [
            ("states x inputs", f"{n} x {m}"), ("period", f"{self.period:g} s"),
            ("delay", f"{self.delay:g} s"), ("spectral radius of Phi", f"{rho:.6g}"),
            ("||Gamma0||_F", f"{np.linalg.norm(self.Gamma0):.4g}"),
            ("||Gamma1||_F", f"{np.linalg.norm(self.Gamma1):.4g}")])

    def augmented(self) -> tuple[np.ndarray, np.ndarray]:
        """(A, B) on the state ``[x_k; u_{k-1}]``: ``[[Phi, Gamma1], [0, 0]]``, ``[Gamma0; I]``
        (without delay, just (Phi, Gamma0))."""
        if self.delay == 0:
            return self.Phi, self.Gamma0
        n, m = self.Gamma0.shape
        A = np.block([[self.Phi, self.Gamma1], [np.zeros((m, n)), np.zeros((m, m))]])
        return A, np.vstack([self.Gamma0, np.eye(m)])


def zoh(A, B, period: float, delay: float = 0.0) -> ZOHModel:
    """The exact zero-order-hold discretization of ``x' = A x + B u``.

    Parameters
    ----------
    A : array_like, shape (n, n)
    B : array_like, shape (n, m)
    period : float
        Sample period T [s].
    delay : float
        Computation delay [s], ``0 <= delay < period``.

    Returns
    -------
    ZOHModel
    """
    period, delay = check_timing(period, delay, "zoh")
    A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or B.ndim != 2 or B.shape[0] != A.shape[0]:
        raise ValueError(f"zoh: A must be square (n, n) and B (n, m), got {A.shape} and {B.shape}")
    Phi, _ = exact_hold(A, B, period)
    late, Gamma0 = exact_hold(A, B, period - delay)
    if delay == 0:
        return ZOHModel(Phi, Gamma0, np.zeros_like(Gamma0), period, delay)
    _, early = exact_hold(A, B, delay)
    return ZOHModel(Phi, Gamma0, late @ early, period, delay)


def dlqr_gain(A, B, Q, R, held: int = 0, N=None) -> tuple[np.ndarray, np.ndarray]:
    """(K, X): the gain ``u = -K x`` and Riccati solution of the discrete LQR on
    ``x+ = A x + B u`` with the cost ``sum x^T Q x + 2 x^T N u + u^T R u`` (SciPy's DARE
    solver; N zero by default). The one discrete Riccati solve of the package: :func:`dlqr`,
    :func:`tenscontrol.discrete_lqg` and :func:`tenscontrol.mpc`'s terminal weight use it.

    Solved with the inputs, and the last `held` states (the held commands u_{k-1} of a
    delayed loop), in units of ``1 / sqrt(R_ii)``: R on force densities is about
    ``1 / gamma_ref^2``, 1e-10 at a 1e-3 length scale, where the unscaled equation lost
    six digits of the delayed LQG loop's spectral radius (slycot), and at 1e-6 SciPy's
    reordering failed.
    """
    s = 1.0 / np.sqrt(np.diag(R))
    d = np.concatenate([np.ones(A.shape[0] - held), s[:held]])
    At, Bt = A * d[None, :] / d[:, None], B * s[None, :] / d[:, None]
    Qt, Rt = Q * np.outer(d, d), R * np.outer(s, s)
    # no cross term: the solve without one (the rectangle rule's design, to the bit as before)
    Nt = None if N is None or not np.any(N) else np.asarray(N, dtype=float) * np.outer(d, s)
    X = scipy.linalg.solve_discrete_are(At, Bt, Qt, Rt, s=Nt)
    cross = Bt.T @ X @ At if Nt is None else Bt.T @ X @ At + Nt.T
    Kt = np.linalg.solve(Rt + Bt.T @ X @ Bt, cross)
    return Kt * s[:, None] / d[None, :], X / np.outer(d, d)


def discretize(controller, period: float, delay: float = 0.0) -> DiscreteFeedback:
    """A continuous controller as a sampled one at `period`, held, with a computation delay.

    A :class:`~tenscontrol.StateFeedback` becomes ``u_k = -K (x_k - x*)``; an
    :class:`~tenscontrol.OutputFeedback` ``K(s)`` is discretized exactly with its input held
    over each period (python-control's ``c2d``, method ``"zoh"``).

    Parameters
    ----------
    controller : StateFeedback or OutputFeedback, or the design holding one (lqr, hinfsyn)
    period : float
        Sample period [s].
    delay : float
        Computation delay [s], ``0 <= delay < period``.

    Returns
    -------
    DiscreteFeedback
    """
    period, delay = check_timing(period, delay, "discretize")
    if isinstance(controller, Design):              # lqr(...) or hinfsyn(...) itself
        controller = controller.controller
    common = dict(strings=controller.strings if hasattr(controller, "strings") else None,
                  gamma_ref=getattr(controller, "gamma_ref", None),
                  kind=getattr(controller, "kind", None), period=period, delay=delay)
    if isinstance(controller, StateFeedback):
        nu, ns = controller.K.shape
        return DiscreteFeedback(np.zeros((0, 0)), np.zeros((0, ns)), np.zeros((nu, 0)),
                                controller.K, controller.q_ref, **common)
    if isinstance(controller, OutputFeedback):
        nk = controller.n_states
        if nk:
            sysd = ct.c2d(ct.ss(controller.AK, controller.BK, controller.CK, controller.DK),
                          period, method="zoh")
            AK, BK = np.asarray(sysd.A), np.asarray(sysd.B)
        else:
            AK, BK = controller.AK, controller.BK
        return DiscreteFeedback(AK, BK, controller.CK, controller.DK,
                                controller.measurement.q_ref, measurement=controller.measurement,
                                **common)
    raise TypeError(f"discretize: controller must be a StateFeedback or an OutputFeedback (what "
                    f"lqr and hinfsyn return), got {type(controller).__name__}")


@dataclass(frozen=True, eq=False)
class DiscreteLQRDesign(Design):
    """Result of :func:`dlqr`.

    Attributes
    ----------
    controller : DiscreteFeedback
        ``u_k = -K (x_k - x*)`` (no delay), or with delay the law on ``[x_k; u_{k-1}]``.
    K_reduced : ndarray, shape (nu, r) or (nu, r + nu)
        Gain on the reduced state (and the previous command, with delay).
    E : ndarray
        Eigenvalues of the discrete closed loop (``|z| < 1``), sorted by modulus (``poles``
        before issue 30: deprecated).
    spectral_radius : float
        Their largest modulus.
    model : ZOHModel
        The sampled reduced model.
    continuous : LQRDesign
        The continuous design whose weights and minimal realization were used.
    K : ndarray, shape (nu, 2nq)
        The gain on the Cartesian state, ``u_k = -K (x_k - x*)`` (with delay, ``- Ku u_k-1``
        too, Ku the last nu columns of K_reduced).
    S : ndarray, shape (r, r) or (r + nu, r + nu)
        Solution of the discrete Riccati equation on the reduced state (and u_k-1).
    minimal : MinimalRealization
        The design model's minimal realization (``continuous.minimal``).
    """

    controller: DiscreteFeedback
    K_reduced: np.ndarray
    E: np.ndarray
    spectral_radius: float
    model: ZOHModel
    continuous: LQRDesign
    K: np.ndarray | None = None
    S: np.ndarray | None = None

    @property
    def poles(self) -> np.ndarray:
        """Deprecated spelling of :attr:`E` (the closed-loop eigenvalues)."""
        warnings.warn("DiscreteLQRDesign.poles is deprecated: the closed-loop eigenvalues are "
                      "DiscreteLQRDesign.E (python-control's name)", DeprecationWarning,
                      stacklevel=2)
        return self.E

    @property
    def minimal(self) -> MinimalRealization:
        return self.continuous.minimal

    def __repr__(self) -> str:
        return (f"DiscreteLQRDesign(inputs={self.K_reduced.shape[0]}, period="
                f"{self.model.period:g} s, delay={self.model.delay:g} s, spectral radius="
                f"{self.spectral_radius:.6g})")

    def summary(self) -> str:
        """Sizes, timing, the gain's size and the closed loop's spectral radius as a table."""
        nu, nk = self.K_reduced.shape
        return titled_table("DiscreteLQRDesign", [
            ("inputs x gain columns", f"{nu} x {nk} (reduced order "
                                      f"{self.continuous.minimal.order})"),
            ("period", f"{self.model.period:g} s"), ("delay", f"{self.model.delay:g} s"),
            ("||K_reduced||_F", f"{np.linalg.norm(self.K_reduced):.6g}"),
            ("spectral radius", f"{self.spectral_radius:.6g}"),
            ("continuous ||K||_F", f"{np.linalg.norm(self.continuous.K):.6g}")]
            + self._verdict_rows())


#: The sampled-data costs :func:`dlqr` can minimize.
COSTS = ("exact", "rectangle")


def sampled_weights(A, B, Q, R, model: ZOHModel, cost: str) -> tuple:
    """(Qd, Rd, Nd) of the continuous cost ``int z^T Q z + u^T R u dt`` per period on the state
    of ``model.augmented()``: exactly under the hold (``"exact"``,
    :func:`tenscontrol.linear.sampling.sampled_cost`) or by the rectangle rule (``"rectangle"``:
    ``Q T``, ``R T``, no cross term, the held command unweighted)."""
    Q = 0.5 * (Q + Q.T)
    if cost == "exact":
        return sampled_cost(A, B, Q, R, model.period, model.delay)
    extra = model.Gamma1.shape[1] if model.delay else 0
    Qd = scipy.linalg.block_diag(Q, np.zeros((extra, extra))) * model.period
    return Qd, R * model.period, np.zeros((Qd.shape[0], B.shape[1]))


def dlqr(model, period: float, *, delay: float = 0.0, Q=None, R=None,
         outputs: Selection | None = None, order=None, effort=1.0, damping=None,
         d_scale=None, cost: str = "exact") -> DiscreteLQRDesign:
    """Discrete LQR on the zero-order-hold model of the minimal realization.

    Minimizes the continuous cost of :func:`lqr`, ``int z^T Q_r z + u^T R u dt``, over the
    sampled loop: subject to the exact ZOH model of ``model.actuated()``'s minimal (or
    order-`order`) realization, with the computation delay in the model.

    Parameters
    ----------
    model : LinearModel
    period : float
        Sample period [s].
    delay : float
        Computation delay [s], ``0 <= delay < period``.
    Q, R, outputs, order, effort, damping, d_scale
        As for :func:`tenscontrol.lqr` (same defaults): with `damping` the effort is chosen
        on the continuous LQR (``continuous.effort_choice``); the sampled loop's damping can
        fall short of it near the Nyquist frequency (its damping verdict says "sampling").
    cost : {"exact", "rectangle"}
        ``"exact"`` (default): the continuous cost integrated exactly over each period under
        the hold (Van Loan's integrals, :func:`tenscontrol.linear.sampling.sampled_cost`:
        weights Qd, Rd and the cross term Nd between state and command), so that the gain
        minimizes the true cost of the sampled loop at any period. ``"rectangle"``: the
        rectangle rule ``sum_k T (z_k^T Q_r z_k + u_k^T R u_k)`` (the only cost of 1.0), close
        at short periods only (on the T-bar its gain is 18 % off the exact one at 0.5 s; the
        script ``benchmarks/bench_dlqr_cost.py`` measures it).

    Returns
    -------
    DiscreteLQRDesign
    """
    period, delay = check_timing(period, delay, "dlqr")
    if cost not in COSTS:
        raise ValueError(f"dlqr: cost must be 'exact' (the sampled-data cost, Van Loan) or "
                         f"'rectangle' (Q T, R T), got {cost!r}")
    cont = lqr(model, Q=Q, R=R, outputs=outputs, order=order, effort=effort, damping=damping,
               d_scale=d_scale)
    mr, ctrl = cont.minimal, cont.controller
    nu = ctrl.strings.size
    A, B = np.asarray(mr.sys.A), np.asarray(mr.sys.B)[:, :nu]
    check_resolution(period, A, "dlqr")
    T, L = mr.basis, mr.left_inverse
    disc = zoh(A, B, period, delay)
    Ad, Bd = disc.augmented()
    Qd, Rd, Nd = sampled_weights(A, B, T.T @ cont.Q @ T, cont.R, disc, cost)
    Ka, S = dlqr_gain(Ad, Bd, Qd, Rd, held=Ad.shape[0] - A.shape[0], N=Nd)
    poles = sorted_eigenvalues(np.linalg.eigvals(Ad - Bd @ Ka), discrete=True)
    Kx = Ka[:, :A.shape[0]] @ L
    if delay == 0:
        law = DiscreteFeedback(np.zeros((0, 0)), np.zeros((0, Kx.shape[1])), np.zeros((nu, 0)),
                               Kx, ctrl.q_ref, ctrl.strings, ctrl.gamma_ref, ctrl.kind, period)
    else:   # the state is the previous command: xc_{k+1} = u_k = -(Ku xc_k + Kx s_k)
        Ku = Ka[:, A.shape[0]:]
        law = DiscreteFeedback(-Ku, -Kx, Ku, Kx, ctrl.q_ref, ctrl.strings, ctrl.gamma_ref,
                               ctrl.kind, period, delay)
    return DiscreteLQRDesign(law, Ka, poles, float(np.abs(poles).max()), disc, cont, K=Kx,
                             S=np.asarray(S, dtype=float))


def discrete_closed_loop(minimal: MinimalRealization, controller,
                         gain: float = 1.0) -> ct.StateSpace:
    """The sampled controller around the exact ZOH model of a minimal realization.

    States ``[z_k; xc_k; u_{k-1}]`` (reduced plant, controller, the command still held during
    the delay), inputs the disturbances d held over each period, outputs ``[y; u]``.

    Parameters
    ----------
    minimal : MinimalRealization
        E.g. ``lqr(...).minimal``; its inputs are the controller's strings first, then d.
    controller : DiscreteFeedback or DiscreteLQRDesign
    gain : float
        Loop gain multiplying the controller's output (1: the design; see :func:`gain_margin`).

    Returns
    -------
    control.StateSpace
        Discrete time, ``dt = controller.period``.
    """
    if isinstance(controller, Design):
        controller = controller.controller
    if not isinstance(controller, DiscreteFeedback):
        raise TypeError(f"discrete_closed_loop: controller must be a DiscreteFeedback (from "
                        f"discretize or dlqr), got {type(controller).__name__}")
    gain = validation.real("discrete_closed_loop: gain", gain, positive=True,
                           expected="a positive number")
    nu = controller.strings.size
    A, Bfull = np.asarray(minimal.sys.A), np.asarray(minimal.sys.B)
    check_resolution(controller.period, A, "discrete_closed_loop")
    C = np.asarray(minimal.sys.C)
    nd = Bfull.shape[1] - nu
    plant = zoh(A, Bfull, controller.period, controller.delay)
    P0u, P1u = plant.Gamma0[:, :nu], plant.Gamma1[:, :nu]
    Ed = plant.Gamma0[:, nu:] + plant.Gamma1[:, nu:]           # d held over the whole period
    Cs = minimal.basis if controller.measurement is None else \
        controller.measurement.C @ minimal.basis               # s_k = Cs z_k
    DKs, CK, nk = gain * controller.DK @ Cs, gain * controller.CK, controller.n_states
    # u_k = -(CK xc_k + DKs z_k)
    Acl = np.block([
        [plant.Phi - P0u @ DKs, -P0u @ CK, P1u],
        [controller.BK @ Cs, controller.AK, np.zeros((nk, nu))],
        [-DKs, -CK, np.zeros((nu, nu))]])
    Bcl = np.vstack([Ed, np.zeros((nk + nu, nd))])
    Ccl = np.block([[C, np.zeros((C.shape[0], nk + nu))], [-DKs, -CK, np.zeros((nu, nu))]])
    return ct.ss(Acl, Bcl, Ccl, 0, controller.period)


def gain_margin(minimal: MinimalRealization, controller, upper: float = 100.0) -> float:
    """The gain margin of a sampled loop: the largest loop gain ``g <= upper`` with the
    discrete closed loop (:func:`discrete_closed_loop`) stable for every gain in ``[1, g]``.

    A scan of 40 gains from 1 to `upper` brackets the first unstable gain, then bisection on
    the spectral radius < 1 to 1e-3 relative.

    Parameters
    ----------
    minimal : MinimalRealization
        E.g. ``dlqr(...).minimal``.
    controller : DiscreteFeedback or DiscreteLQRDesign
        The sampled controller (a design's ``.controller`` is taken).
    upper : float
        Largest gain tried, > 1.

    Returns
    -------
    float
        The margin in ``[1, upper]`` (`upper` if no instability was found below it), or 0.0
        when the loop is unstable at the design gain 1 itself: no gain margin.

    Raises
    ------
    ValueError
        If `upper` is not a number > 1.
    """
    upper = validation.real("gain_margin: upper", upper, low=1.0, open_low=True,
                            expected="a loop gain > 1 (the margin is sought in [1, upper])")
    if isinstance(controller, Design):
        controller = controller.controller

    def stable(g):
        sys = discrete_closed_loop(minimal, controller, g)
        return np.abs(np.linalg.eigvals(np.asarray(sys.A))).max() < 1.0
    if not stable(1.0):
        return 0.0
    grid = np.geomspace(1.0, upper, 40)
    bad = [g for g in grid[1:] if not stable(g)]
    if not bad:
        return float(upper)
    hi = bad[0]
    lo = grid[np.searchsorted(grid, hi) - 1]
    while hi / lo > 1 + 1e-3:
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if stable(mid) else (lo, mid)
    return float(lo)
