"""LQR and H-infinity design for tensegrity linear models.

See docs/theory.md, "Minimal realization" and "Control on force densities".

Both designs work on the structurally reduced minimal realization of the model
(:func:`tenscontrol.minimal_realization`): a Riccati equation on the Cartesian model fails,
because every constraint and rigid-body mode is an uncontrollable eigenvalue on the imaginary
axis (docs/theory.md, "Control on force densities"). Weights and results are Cartesian: a weight on
``x - x* = [dq; dqd]`` is projected with ``basis``, and a reduced gain is mapped back with
``left_inverse``, so the returned gain annihilates rigid motion and does not depend on the
reduced coordinates chosen.

The functions read arrays (A, B, E, C, mass and stiffness data) and, when present, the
``structure`` and ``gamma`` of a :class:`tenscontrol.LinearModel` (actuated strings, bar
lengths, prestress, measurement definitions); a duck-typed model without them gets strings
``0..nu-1`` and reference force densities 1 N/m. The returned controllers are the
:mod:`tenscontrol.control.controllers` objects the closed-loop simulator calls.
"""

from __future__ import annotations

import dataclasses
import time
import types
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
import control as ct

from tenscontrol.design import hinf as _hinf
from tenscontrol.design import riccati
from tenscontrol.design.riccati import RiccatiSolution
from tenscontrol.control.controllers import Measurement, OutputFeedback, StateFeedback, measurement
from tenscontrol.design.result import Design, sorted_eigenvalues
from tenscontrol.design.effort import EffortChoice, choose_effort, default_load, lqr_gain
from tenscontrol.design.verdict import unreachable_modes
from tenscontrol.design.hinf import HinfDesign
from tenscontrol.linear.norms import h2_norm, hinf_norm, is_hurwitz
from tenscontrol.linear.reduction import MinimalRealization, minimal_realization
from tenscontrol import validation
from tenscontrol.mechanics.checks import check_finite
from tenscontrol.model.tables import summary_table
from tenscontrol.model.selection import Selection, check_selection
from tenscontrol.linear.threads import sized_by

__all__ = ["HinfDesign", "LQRDesign", "hinfsyn", "lqr"]

_MODEL_FIELDS = ("A", "B", "E", "C", "q", "qd", "at_equilibrium", "constraint_jacobian",
                 "mass_matrix", "stiffness", "damping", "force_input", "input_names",
                 "disturbance_names", "output_names")
_NUMERIC_FIELDS = ("A", "B", "E", "C", "q", "qd", "constraint_jacobian", "mass_matrix",
                   "stiffness", "damping", "force_input")


# ---- the model layer: actuated inputs, outputs, reduction, prestress ------------------------


@dataclass(frozen=True, eq=False)
class _Plant:
    model: object                  # after actuated() / with_outputs()
    mr: MinimalRealization
    A: np.ndarray                  # reduced (r, r), physical units
    B: np.ndarray                  # (r, nu)
    E: np.ndarray                  # (r, nq)
    C: np.ndarray                  # (ny, r): the model's outputs
    strings: np.ndarray
    gamma_ref: np.ndarray
    u_ref: np.ndarray              # prestress scale per input [N/m; a cable's N], > 0
    kind: str
    # commanded cables (inputs after the strings) and their operating tensions [N]
    cables: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    tension_ref: np.ndarray = field(default_factory=lambda: np.zeros(0))


def _prepare(model, who: str, outputs, order, extra_rows=None) -> _Plant:
    """Actuated inputs, requested outputs, equilibrium check and minimal realization."""
    missing = [f for f in _MODEL_FIELDS if not hasattr(model, f)]
    if missing:
        raise TypeError(f"{who}: expected a tenscontrol LinearModel, got {type(model).__name__} "
                        f"without fields {missing}")
    # NaN or inf reach scipy's Cholesky and slycot's ab09ax / sb10fd otherwise (which hang)
    check_finite(who, **{f: getattr(model, f) for f in _NUMERIC_FIELDS + ("gamma",)
                         if hasattr(model, f)})
    if np.any(np.asarray(model.qd) != 0) or not model.at_equilibrium:
        raise ValueError(f"{who}: the model must be linearized at an equilibrium (qd = 0, "
                         "at_equilibrium=True); find one with tenscontrol.equilibrium(structure) "
                         "and linearize its .structure")
    structure = getattr(model, "structure", None)
    if getattr(structure, "cables", None) and who != "lqr":
        raise ValueError(
            f"{who}: structure {structure.name!r} has {len(structure.cables)} clustered "
            f"cable(s); of the designs only lqr runs on such a structure yet (its StateFeedback "
            "commands cables in simulate). Design on the structure without cables "
            "(dataclasses.replace(structure, cables=())) to treat their segments as separate "
            "strings")
    # a model with cable inputs was actuated by the caller (actuated(cables=...))
    cable_inputs = any(str(n).startswith("cable") for n in getattr(model, "input_names", ()))
    if structure is not None and hasattr(model, "actuated") and not cable_inputs:
        model = model.actuated()
    outputs = check_selection(outputs, f"{who}: outputs")
    if outputs is not None:
        if not hasattr(model, "with_outputs"):
            raise TypeError(f"{who}: outputs need a tenscontrol LinearModel (with_outputs), got "
                            f"{type(model).__name__}; set its C yourself instead")
        model = model.with_outputs(outputs)
    nu, ny = model.B.shape[1], model.C.shape[0]
    if nu == 0:
        raise ValueError(f"{who}: the model has no actuated strings (every String.actuated is "
                         "False); mark the strings the controller may command actuated")
    reduced_from = model
    if extra_rows is not None:              # keep the modes the measurements see, too
        view = {f: getattr(model, f) for f in _MODEL_FIELDS}
        view["C"] = np.vstack([model.C, extra_rows])
        view["output_names"] = tuple(model.output_names) + tuple(
            f"m{i}" for i in range(extra_rows.shape[0]))
        reduced_from = types.SimpleNamespace(**view)
    mr = minimal_realization(reduced_from, order=order)
    A, Bw, Cr = (np.asarray(X, dtype=float) for X in (mr.sys.A, mr.sys.B, mr.sys.C))
    cables, tension_ref = np.zeros(0, dtype=np.int64), np.zeros(0)
    if structure is not None and hasattr(model, "gamma") and getattr(structure, "cables", None):
        strings, cables, tension_ref = _inputs_with_cables(model)
        gamma_ref = np.asarray(model.gamma, dtype=float)[strings]
    elif structure is not None and hasattr(model, "gamma"):
        strings = np.asarray(structure.actuated_strings, dtype=np.int64)
        gamma_ref = np.asarray(model.gamma, dtype=float)[strings]
    else:
        strings, gamma_ref = np.arange(nu), np.ones(nu)
    if gamma_ref.size + cables.size != nu:
        raise ValueError(f"{who}: the model has {nu} inputs but {gamma_ref.size} actuated "
                         "strings; inputs other than string force densities are not supported")
    refs = np.concatenate([gamma_ref, tension_ref])   # a cable's scale is its tension [N]
    pos = refs[refs > 0]
    u_ref = np.where(refs > 0, refs, pos.mean() if pos.size else 1.0)
    return _Plant(model, mr, A, Bw[:, :nu], Bw[:, nu:], Cr[:ny], strings, gamma_ref, u_ref,
                  getattr(model, "kind", "passive"), cables, tension_ref)


def _inputs_with_cables(model) -> tuple:
    """(strings, cables, tension_ref [N]) of a model of a structure with cables, from its
    input names ``gamma<k>`` and ``cable<c>``; a cable's tension is gamma l of a segment."""
    names, st = model.input_names, model.structure
    strings = np.array([int(n[5:]) for n in names if n.startswith("gamma")], dtype=np.int64)
    cables = np.array([int(n[5:]) for n in names if n.startswith("cable")], dtype=np.int64)
    N = np.asarray(model.q, dtype=float).reshape(-1, 3)
    first = np.array([st.cables[c].strings[0] for c in cables], dtype=np.int64)
    pairs = st.string_nodes[first]
    lengths = np.linalg.norm(N[pairs[:, 1]] - N[pairs[:, 0]], axis=1) if first.size else []
    tension_ref = np.asarray(model.gamma, dtype=float)[first] * lengths
    return strings, cables, np.asarray(tension_ref, dtype=float)


def _matrix(value, name: str, n: int, who: str, definite: bool) -> np.ndarray:
    """A symmetric (n, n) weight, checked positive (semi)definite."""
    X = np.asarray(value, dtype=float)
    if X.shape != (n, n) or not np.all(np.isfinite(X)):
        raise ValueError(f"{who}: {name} must be a finite ({n}, {n}) matrix, got shape "
                         f"{X.shape}")
    scale = max(np.abs(X).max(), np.finfo(float).tiny)
    if not np.allclose(X, X.T, rtol=0, atol=1e-12 * scale):
        raise ValueError(f"{who}: {name} must be symmetric")
    ev = np.linalg.eigvalsh(0.5 * (X + X.T))
    if definite and ev.min() <= 1e-12 * scale:
        raise ValueError(f"{who}: {name} must be positive definite, smallest eigenvalue "
                         f"{ev.min():.3g}")
    if ev.min() < -1e-10 * scale:
        raise ValueError(f"{who}: {name} must be positive semidefinite, smallest eigenvalue "
                         f"{ev.min():.3g}")
    return 0.5 * (X + X.T)


def _length_scale(model) -> float:
    """Largest bar length, else the rms node distance from the centroid [m] (1 if zero)."""
    structure = getattr(model, "structure", None)
    if structure is not None and structure.n_bars:
        return float(np.max(structure.bar_lengths))
    N = np.asarray(model.q, dtype=float).reshape(-1, 3)
    return float(np.sqrt(np.mean(np.sum((N - N.mean(axis=0)) ** 2, axis=1)))) or 1.0


def _lowest_frequency(mr: MinimalRealization) -> float:
    """Lowest nonzero elastic natural frequency [rad/s] from (K_e, M_e); 1 without stiffness."""
    em = mr.elastic
    if em.n_e == 0:
        return 1.0
    w2 = np.abs(scipy.linalg.eigvalsh(0.5 * (em.K_e + em.K_e.T), em.M_e))
    w2 = w2[w2 > 1e-10 * w2.max()] if w2.max() > 0 else w2[:0]
    return float(np.sqrt(w2.min())) if w2.size else 1.0


# ---- LQR ------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LQRDesign(Design):
    """Result of :func:`lqr`.

    Attributes
    ----------
    controller : StateFeedback
        ``u = -K (x - x*)`` on the actuated strings [N/m].
    K : ndarray, shape (nu, 2nq)
        Cartesian gain ``K_reduced @ minimal.left_inverse`` [N/m per m, N/m per m/s].
    K_reduced : ndarray, shape (nu, r)
    S : ndarray, shape (2nq, 2nq)
        Cartesian cost matrix ``left_inverse^T S_r left_inverse``: the optimal cost from an
        elastic deviation x - x* is ``(x - x*)^T S (x - x*)``.
    E : ndarray, shape (r,)
        Closed-loop eigenvalues, of ``A_r - B_r K_r`` [1/s], sorted by real part (``poles``
        before issue 30: deprecated).
    Q : ndarray, shape (2nq, 2nq); R : ndarray, shape (nu, nu)
        The weights used (defaults filled in).
    minimal : MinimalRealization
    closed_loop : control.StateSpace
        From the disturbances d (``disturbance_names``) to ``[y; u]`` (output names, then the
        input names), reduced states.
    riccati : RiccatiSolution
        The reduced Riccati solution (``X = S_r``, ``K = K_reduced``, poles in 1/s) with the
        solver that produced it, its relative residual and the solvers refused before it
        (``fallbacks``).
    effort_choice : EffortChoice or None
        With ``lqr(..., damping=...)``: the factor chosen on R, the least damping reached and
        what stopped the search (:func:`tenscontrol.design.effort.choose_effort`).
    """

    controller: StateFeedback
    K: np.ndarray
    K_reduced: np.ndarray
    S: np.ndarray
    E: np.ndarray
    Q: np.ndarray
    R: np.ndarray
    minimal: MinimalRealization
    closed_loop: ct.StateSpace
    riccati: RiccatiSolution | None = None
    effort_choice: EffortChoice | None = None

    @property
    def poles(self) -> np.ndarray:
        """Deprecated spelling of :attr:`E` (the closed-loop eigenvalues)."""
        warnings.warn("LQRDesign.poles is deprecated: the closed-loop eigenvalues are "
                      "LQRDesign.E (python-control's name)", DeprecationWarning, stacklevel=2)
        return self.E

    def summary(self) -> str:
        """The design's figures as a table (what ``print(design)`` shows)."""
        slowest = self.E[np.argmax(self.E.real)]
        nu, nx = self.K.shape
        return "LQRDesign\n" + summary_table([
            ("inputs x states", f"{nu} x {nx} (reduced {self.minimal.order})"),
            ("||K||_F", f"{np.linalg.norm(self.K):.6g}"),
            ("slowest pole", f"{slowest:.6g} 1/s"),
            ("trace S", f"{np.trace(self.S):.6g}")] + _riccati_rows(self.riccati)
            + self._verdict_rows())

    def __repr__(self) -> str:
        slowest = self.E[np.argmax(self.E.real)]
        return (f"LQRDesign(inputs={self.K.shape[0]}, states={self.K.shape[1]}, "
                f"reduced_order={self.minimal.order}, ||K||_F={np.linalg.norm(self.K):.6g}, "
                f"slowest pole={slowest:.4g} 1/s)")


def _riccati_rows(sol) -> list:
    """Summary rows of the Riccati solver: method, residual, refused solvers."""
    if sol is None:
        return []
    rows = [("Riccati", f"{sol.method}, relative residual {sol.residual:.2g}")]
    return rows + [("  refused", f) for f in sol.fallbacks]


def _default_weights(p: _Plant, effort: float):
    nq = np.asarray(p.model.q).size
    Cq = np.asarray(p.model.C, dtype=float)[:, :nq]
    Qq = Cq.T @ Cq / _length_scale(p.model) ** 2
    Q = scipy.linalg.block_diag(Qq, Qq / _lowest_frequency(p.mr) ** 2)
    R = effort * np.diag(1.0 / p.u_ref**2)
    return Q, R


def _riccati_gain(A, B, Q, R) -> RiccatiSolution:
    """The checked stabilizing CARE solution (:func:`tenscontrol.design.riccati.care`), solved
    in time scaled by a reference frequency; X and K do not depend on the time unit, the poles
    are returned in 1/s.

    Doubling from 300 states on (a 192-bar tower at full order, 768 states: sb02md's gain does
    not stabilize the loop and SciPy's extended-pencil QZ takes 72 s), slycot's sb02md then
    SciPy below; each answer checked by its residual and the loop's stability.
    """
    w = _hinf.reference_frequency(A)        # time scaling (control-notes 3); K is invariant
    try:
        sol = riccati.care(A / w, B / w, Q / w, R / w)
    except np.linalg.LinAlgError as exc:
        raise ValueError(f"lqr: the Riccati equation has no stabilizing solution ({exc}); an "
                         "undamped mode is probably not weighted by Q: weight more outputs, or "
                         "add damping") from None
    return dataclasses.replace(sol, poles=w * sol.poles)


@sized_by
def lqr(model, *, Q=None, R=None, outputs: Selection | None = None, order=None,
        effort=1.0, damping=None, d_scale=None) -> LQRDesign:
    """Linear-quadratic regulator on the actuated strings (docs/theory.md, "Control on force
    densities").

    Minimizes ``int (x - x*)^T Q (x - x*) + u^T R u dt`` on the minimal realization of
    ``model.actuated()`` and maps the gain back to Cartesian states.

    Parameters
    ----------
    model : LinearModel
        Linearization at an equilibrium, kind "passive" or "control".
    Q : array_like, shape (2nq, 2nq), optional
        Symmetric positive semidefinite weight on ``[dq; dqd]`` [1/m^2, s^2/m^2]; projected as
        ``basis^T Q basis``. Default: ``blkdiag(Q_q, Q_q / w_ref^2)`` with
        ``Q_q = C_q^T C_q / L^2``: the model's position outputs (C_q = the position columns of
        C) relative to L, the largest bar length (rms node distance from the centroid without
        bars), and the same outputs' velocities relative to ``L w_ref``, w_ref the lowest
        nonzero elastic natural frequency (1 rad/s without stiffness). So an output excursion
        of one bar length, or a velocity of one bar length per slowest-mode radian, costs 1.
    R : array_like, shape (nu, nu), optional
        Symmetric positive definite weight on u [m^2/N^2]. Default:
        ``effort * diag(1 / gamma_ref^2)``, gamma_ref the actuated strings' operating force
        densities (strings at zero get the mean of the positive ones, 1 N/m if none): a change
        of one prestress costs ``effort``. Required for a model without ``gamma``.
    outputs : Selection, optional
        Output coordinates replacing the model's (``LinearModel.with_outputs``), and so the
        default Q; the model's outputs by default.
    order : int, optional
        Design order: the Riccati equation is solved on the order-r balanced truncation
        (marginal modes kept exactly, :func:`tenscontrol.minimal_realization`). Default:
        numerically minimal. A 192-bar tower (768 states) takes about 10 s of CPU at full
        order (half of it the minimal realization, the Riccati equation by doubling: see
        :func:`tenscontrol.design.riccati.care`) and under 1 s at r = 200.
    effort : float
        Scale of the default R (> 0); larger means gentler control. With `damping`, the
        effort the search starts from.
    damping : float, optional
        A least damping ratio, in (0, 1), for every lightly damped mode that a weight can
        damp (reachable from the strings, seen by the outputs). R is scaled down from the
        given one, half a decade at a time then by bisection, to the gentlest factor that
        reaches it, unless the prestress stops it first: under a step `d_scale` on any one
        disturbance coordinate no string's command may exceed its operating force density
        (:func:`tenscontrol.design.effort.choose_effort`). The choice, the least damping
        reached and what stopped it are in ``effort_choice`` and the summary. Default None:
        R as given, no search.
    d_scale : float or array_like, shape (n_d,), optional
        Expected load [N] (as for :func:`hinfsyn`), one or one per disturbance channel (the
        free coordinates): the step of the prestress check with `damping`. Default the mean
        operating tension ``gamma l`` of the actuated strings (1 N for a model without
        structure).

    Returns
    -------
    LQRDesign

    Raises
    ------
    ValueError
        Bad weight shapes or definiteness, no default R available, a model off equilibrium,
        or no stabilizing solution (an undamped mode invisible in Q); `damping` outside
        (0, 1), `d_scale` not positive or without `damping`.
    """
    who = "lqr"
    effort = validation.real("lqr: effort", effort, positive=True,
                             expected="a positive number")
    damping = _damping_target(damping, d_scale, "lqr")
    p = _prepare(model, who, outputs, _design_order(order, who))
    nq, nu = np.asarray(p.model.q).size, p.B.shape[1]
    Qd, Rd = _default_weights(p, effort)
    if R is None and not hasattr(p.model, "gamma"):
        raise ValueError(f"lqr: the model has no gamma (operating force densities), so the "
                         f"default R cannot be built; pass R, a ({nu}, {nu}) matrix")
    Q = Qd if Q is None else _matrix(Q, "Q (weight on x - x* = [dq; dqd])", 2 * nq, who, False)
    R = Rd if R is None else _matrix(R, "R (weight on u)", nu, who, True)
    choice = None
    if damping is not None:
        cols = _disturbance_columns(p.model, None)
        load = np.zeros(np.asarray(p.model.q).size)
        load[cols] = validation.per_item(
            "lqr: d_scale", default_load(getattr(p.model, "structure", None), p.u_ref)
            if d_scale is None else d_scale, cols.size, "N", positive=True)
        choice = choose_effort(p.mr, lqr_gain(p.mr, Q, R), p.u_ref, damping, load,
                               effort if R is Rd else None)
        R = R * choice.scale
    T, L = p.mr.basis, p.mr.left_inverse
    Qr = T.T @ Q @ T
    Qr = 0.5 * (Qr + Qr.T)                  # exactly symmetric: ct.lqr checks it strictly
    try:
        sol = _riccati_gain(p.A, p.B, Qr, R)
    except ValueError as exc:
        try:                                       # name the modes no feedback can reach
            why = unreachable_modes(p.mr.elastic)
        except (ValueError, np.linalg.LinAlgError):
            why = ""                               # the analysis must not hide the error
        if not why:
            raise
        raise ValueError(f"{exc}; here {why}") from None
    Kr, Sr = sol.K, sol.X
    poles = sorted_eigenvalues(sol.poles, discrete=False)
    K = Kr @ L
    m = p.model
    cl = ct.ss(p.A - p.B @ Kr, p.E, np.vstack([p.C, -Kr]), 0,
               inputs=list(m.disturbance_names),
               outputs=list(m.output_names) + list(m.input_names),
               states=[f"z{i}" for i in range(p.A.shape[0])])
    ctrl = StateFeedback(K=K, q_ref=np.asarray(m.q, dtype=float), strings=p.strings,
                         gamma_ref=p.gamma_ref, kind=p.kind, cables=p.cables,
                         tension_ref=p.tension_ref)
    return LQRDesign(ctrl, K, Kr, L.T @ np.asarray(Sr) @ L, poles, Q, R, p.mr, cl,
                     dataclasses.replace(sol, poles=poles), choice)


def _damping_target(damping, d_scale, who: str) -> float | None:
    """The damping target of :func:`lqr` or :func:`hinfsyn`, checked: a ratio in (0, 1) or
    None; lqr's `d_scale` only with it (its values are checked per channel later)."""
    if damping is not None:
        damping = validation.real(f"{who}: damping", damping, positive=True,
                                  expected="a damping ratio in (0, 1)")
        if damping >= 1:
            raise ValueError(f"{who}: damping must be a damping ratio in (0, 1), got "
                             f"{damping:g}")
    elif d_scale is not None:
        raise ValueError("lqr: d_scale only sets the prestress check of a damping target; "
                         "pass damping= too")
    return damping


# ---- H-infinity -----------------------------------------------------------------------------


def _per_channel(value, n: int, name: str, unit: str) -> np.ndarray:
    return validation.per_item(f"hinfsyn: {name}", value, n, unit, positive=True)


def _design_order(order, who: str) -> int | None:
    """The design order of lqr/hinfsyn: None or an integer >= 1 (minimal_realization checks
    the upper bound, the elastic order)."""
    return None if order is None else validation.integer(f"{who}: order", order, minimum=1)


def _disturbance_columns(model, disturbances) -> np.ndarray:
    """Indices into d (= q) of the disturbance channels."""
    structure = getattr(model, "structure", None)
    if disturbances is None:
        if structure is not None:
            return np.asarray(structure.free_coordinates, dtype=np.int64)
        nrm = np.linalg.norm(np.asarray(model.E, dtype=float), axis=0)
        return np.flatnonzero(nrm > 1e-12 * nrm.max())     # forces the constraints pass
    if structure is None:   # a duck-typed model: node i has q[3i:3i+3]; E's zero columns are fixed
        nrm = np.linalg.norm(np.asarray(model.E, dtype=float), axis=0)
        n = nrm.size // 3
        structure = types.SimpleNamespace(n_nodes=n, fixed=(nrm <= 1e-12 * nrm.max()).reshape(n, 3))
    return disturbances.coordinates(structure, "hinfsyn: disturbances")


def _measurement(model, measurements):
    if measurements is None or isinstance(measurements, Measurement):
        meas = measurements
    else:
        sel = check_selection(measurements, "hinfsyn: measurements", strings=True)
        if getattr(model, "structure", None) is None:
            raise TypeError("hinfsyn: measurements as a Selection need a LinearModel with a "
                            "structure; pass a tenscontrol.Measurement instead")
        meas = measurement(model.structure, sel, q_ref=model.q)
    nx = 2 * np.asarray(model.q).size
    if meas is not None and meas.C.shape[1] != nx:
        raise ValueError(f"hinfsyn: the measurement's C must have {nx} columns (2 nq), got "
                         f"shape {meas.C.shape}")
    return meas


def _generalized_plant(A, Bd, Bu, Cz, C2, rho, us, eps) -> tuple:
    """The H-inf generalized plant (A, B1, B2, C1, C2, D11, D12, D21) of :func:`hinfsyn`.

    ``w = [d; v]``, ``z = [Cz x; rho u / us]``, ``y = C2 x + eps v``; with `eps` None (state
    feedback) ``w = d`` and ``y = C2 x``. A (n, n), Bd (n, n_d) the scaled disturbance
    columns, Bu (n, nu), Cz (n_z, n) the scaled performance rows, C2 (n_y, n), us (nu,)
    [N/m]. The one construction for the design model and for the full-model check.
    """
    n, nu, nd, ny = A.shape[0], Bu.shape[1], Bd.shape[1], C2.shape[0]
    C1 = np.vstack([Cz, np.zeros((nu, n))])
    D12 = np.vstack([np.zeros((Cz.shape[0], nu)), rho * np.diag(1.0 / us)])    # u in N/m
    if eps is None:
        B1, D21 = Bd, np.zeros((ny, nd))
    else:
        B1 = np.hstack([Bd, np.zeros((n, ny))])
        D21 = np.hstack([np.zeros((ny, nd)), eps * np.eye(ny)])
    return (A, B1, Bu, C1, C2, np.zeros((C1.shape[0], B1.shape[1])), D12, D21)


def _ss(arrays, inputs, outputs) -> ct.StateSpace:
    A, B1, B2, C1, C2, D11, D12, D21 = arrays
    D = np.block([[D11, D12], [D21, np.zeros((C2.shape[0], B2.shape[1]))]])
    return ct.ss(A, np.hstack([B1, B2]), np.vstack([C1, C2]), D, inputs=inputs, outputs=outputs,
                 states=[f"z{i}" for i in range(A.shape[0])])


@sized_by
def hinfsyn(model, *, disturbances: Selection | None = None, outputs: Selection | None = None,
            measurements=None, d_scale=1.0, y_scale=1.0, u_scale=None, rho=0.1, eps=0.01,
            tol=1e-3, order=None, backoff=1.0, damping=None) -> HinfDesign:
    """H-infinity design on the actuated strings (docs/theory.md, "Control on force densities").

    Generalized plant on the minimal realization of ``model.actuated().with_outputs(outputs)``
    (reduced state x_r, ``x - x* ~= basis x_r``; it keeps the modes the measurements see):

        w = [d / d_scale; v],   z = [C_z x / y_scale; rho u / u_scale],
        y_m = C_m x + eps v      (state feedback: y = x_r and w = d / d_scale).

    Parameters
    ----------
    model : LinearModel
        Linearization at an equilibrium.
    disturbances : Selection, optional
        The coordinates whose nodal forces are the disturbance channels d, e.g.
        ``Selection(3, "x") + Selection(6, "y")`` for fx3, fy6; all free coordinates by
        default.
    outputs : Selection, optional
        The performance outputs C_z (``with_outputs``); the model's by default.
    measurements : Selection or Measurement, optional
        None (default): state feedback. Else the measured signals y_m [m]: node coordinates
        and string lengths as a Selection (``Selection(nodes=[2, 3], axes="xz")``,
        ``Selection(nodes=[], strings=[0, 1])``), taken at ``q_ref = model.q``
        (:func:`tenscontrol.measurement`), or a ready Measurement.
    d_scale : float or array_like, shape (n_d,)
        Expected load per channel [N].
    y_scale : float or array_like, shape (n_z,)
        Allowed excursion per performance output [m].
    u_scale : float or array_like, shape (nu,), optional
        Force-density scale [N/m]; default the prestress as for the R of :func:`lqr` (1 N/m
        for a model without gamma).
    rho, eps : float
        Control weight and measurement-noise level [m] (> 0: D12, D21 full rank).
    tol : float
        Relative width of the final gamma bracket.
    order : int, optional
        Design order of the minimal realization (default: numerically minimal). Below the
        elastic order, the controller designed on the truncated model is checked on the full
        elastic model: it must stabilize it (else RuntimeError), and the loop's norm there is
        ``full_closed_loop_norm``. For towers of 48 and 96 bars r = 80 and 160 keep gamma
        within 0.5 % and cut the synthesis from minutes to seconds.
    backoff : float
        Output feedback: return the central controller at ``backoff`` times the optimal gamma
        found (>= 1; see :func:`tenscontrol.hinf.hinf_output_feedback`). Near-optimal H-inf
        controllers have very fast poles; 1.1-1.5 gives much slower ones for a slightly
        larger gamma.
    damping : float, optional
        State feedback only: a least damping ratio, in (0, 1), for every lightly damped mode
        a weight can damp, reached by scaling ``rho^2`` as :func:`lqr` scales R (down from
        the given rho to the gentlest that reaches it), unless a step `d_scale` on one
        disturbance channel would ask a string for more than its operating force density
        (if the given rho already does, rho is raised until it does not). The choice is in
        ``effort_choice`` and the summary. Default None: rho as given.

    Returns
    -------
    HinfDesign
        Controller in physical units: u [N/m], y_m [m].

    Raises
    ------
    ValueError
        Bad arguments; an imaginary-axis mode not seen by z or y_m, not excited by d or not
        controllable (no controller exists: add outputs/measurements, or damping).
    RuntimeError
        If the final closed loop is not stable or its norm exceeds gamma.

    Notes
    -----
    Output feedback: :func:`tenscontrol.hinf.hinf_output_feedback`, gamma bisection on slycot
    sb10fd from ``1.01 ||F_l(P, K_H2)||_inf`` down to ``(hi - lo) <= tol hi``. The controller
    returned is the one synthesized at ``backoff`` times the final upper bound (no
    enlargement by default, where 1.05 is the customary margin): every accepted gamma
    already passed the Hurwitz test, the rcond floor and a norm check, and the loop norm is
    recomputed here. State feedback:
    :func:`tenscontrol.hinf.hinf_state_feedback`, ``K = u_scale F_r left_inverse``. Slycot
    and the Riccati solvers run in time scaled by a reference frequency, undone on the result.
    """
    rho, eps, tol = (validation.real(f"hinfsyn: {name}", val, positive=True,
                                     expected="a positive number")
                     for name, val in (("rho", rho), ("eps", eps), ("tol", tol)))
    backoff = validation.real("hinfsyn: backoff", backoff, low=1.0, expected="a number >= 1")
    order = _design_order(order, "hinfsyn")
    disturbances = check_selection(disturbances, "hinfsyn: disturbances")
    meas = _measurement(model, measurements)
    p = _prepare(model, "hinfsyn", outputs, order, None if meas is None else meas.C)
    m, nu, r = p.model, p.B.shape[1], p.A.shape[0]
    cols = _disturbance_columns(m, disturbances)
    ds = _per_channel(d_scale, cols.size, "d_scale", "N")
    ys = _per_channel(y_scale, p.C.shape[0], "y_scale", "m")
    us = p.u_ref if u_scale is None else _per_channel(u_scale, nu, "u_scale", "N/m")
    Bd, Cz = p.E[:, cols] * ds[None, :], p.C / ys[:, None]
    Cm = None if meas is None else meas.C @ p.mr.basis
    _hinf.check_axis_modes(p.A, Bd, p.B, Cz, Cm, "hinfsyn")
    C2 = np.eye(r) if Cm is None else Cm
    choice = None
    if damping is not None:
        choice = _hinf_damping(p, Bd, Cz, rho, us, tol, cols, ds, damping, meas)
        rho = rho * np.sqrt(choice.scale)
    arrays = _generalized_plant(p.A, Bd, p.B, Cz, C2, rho, us, None if Cm is None else eps)
    _, B1, _, C1, _, _, D12, _ = arrays
    w_names = [m.disturbance_names[c] for c in cols] + (
        [] if meas is None else [f"v_{s}" for s in meas.names])
    z_names = list(m.output_names) + [f"rho_{s}" for s in m.input_names]
    y_names = [f"z{i}" for i in range(r)] if meas is None else list(meas.names)
    plant = _ss(arrays, w_names + list(m.input_names), z_names + y_names)
    t0 = time.perf_counter()
    if meas is None:                        # synthesis in u' = u / u_scale
        res = _hinf.hinf_state_feedback(p.A, Bd, p.B * us, C1, D12 * us, tol=tol)
        F = us[:, None] * res.K[0]
        K = (np.zeros((0, 0)), np.zeros((0, r)), np.zeros((nu, 0)), F)     # u = -F x_r
        ctrl = StateFeedback(K=F @ p.mr.left_inverse, q_ref=np.asarray(m.q, dtype=float),
                             strings=p.strings, gamma_ref=p.gamma_ref, kind=p.kind)
    else:
        scaled = ct.ss(p.A, plant.B * np.concatenate([np.ones(B1.shape[1]), us]), plant.C,
                       plant.D * np.concatenate([np.ones(B1.shape[1]), us]))
        try:
            res = _hinf.hinf_output_feedback(scaled, C2.shape[0], nu, tol=tol, backoff=backoff)
        except ValueError as exc:
            raise ValueError(f"hinfsyn: {exc}; a lightly damped mode is probably barely seen "
                             "by z or y_m: add outputs or measurements, or damping") from None
        AK, BK, CK, DK = res.K              # u = -(CK xc + DK y_m), as OutputFeedback
        K = (AK, BK, us[:, None] * CK, us[:, None] * DK)
        ctrl = OutputFeedback(*K, measurement=meas, strings=p.strings, gamma_ref=p.gamma_ref,
                              kind=p.kind)
    elapsed = time.perf_counter() - t0
    closed, norm = _hinf.verified_loop(arrays, K, res, w_names, z_names, "hinfsyn")
    full = None
    if p.mr.order < p.mr.structural_order:  # designed on a truncated model: check the full one
        full = _full_loop_norm(p, cols, ds, ys, us, rho, eps, meas, K)
    h2 = None
    if res.h2_controller is not None:
        AK, BK, CK, DK = res.h2_controller
        h2 = h2_norm(ct.ss(*_hinf.closed_loop(arrays, (AK, BK, us[:, None] * CK,
                                                        us[:, None] * DK))))
    return HinfDesign(ctrl, res.gamma, res.gamma_lower, norm, closed, plant, res.iterations,
                      elapsed, res.rcond, h2, p.mr, full, res.method, choice)


def _hinf_damping(p: _Plant, Bd, Cz, rho, us, tol, cols, ds, damping, meas) -> EffortChoice:
    """The rho of a state-feedback :func:`hinfsyn` for a damping target: its control weight
    rho^2 scaled by :func:`tenscontrol.design.effort.choose_effort`, the step loads its
    d_scale."""
    damping = _damping_target(damping, None, "hinfsyn")
    if meas is not None:
        raise ValueError("hinfsyn: damping needs state feedback (measurements=None): the "
                         "search closes the loop without the controller's states")
    n = p.A.shape[0]

    def gain(scale):
        arrays = _generalized_plant(p.A, Bd, p.B, Cz, np.eye(n), rho * np.sqrt(scale), us,
                                    None)
        _, _, _, C1, _, _, D12, _ = arrays
        try:
            res = _hinf.hinf_state_feedback(p.A, Bd, p.B * us, C1, D12 * us, tol=tol)
        except (ValueError, RuntimeError, np.linalg.LinAlgError):
            return None
        return us[:, None] * res.K[0]

    load = np.zeros(np.asarray(p.model.q).size)
    load[cols] = ds
    return choose_effort(p.mr, gain, p.u_ref, damping, load, rho ** 2, weight="rho^2")


def _full_loop_norm(p: _Plant, cols, ds, ys, us, rho, eps, meas, K) -> float:
    """||F_l(P_elastic, K)||_inf of a controller designed on a truncated model.

    The generalized plant is rebuilt on the full elastic model (same weights); a state
    feedback ``u = -F z`` acts through ``z = left_inverse T x_e``. Raises if the loop is not
    stable there.
    """
    em = p.mr.elastic
    ny, n = p.C.shape[0], em.A.shape[0]
    C2 = p.mr.left_inverse @ em.T if meas is None else meas.C @ em.T
    arrays = _generalized_plant(em.A, em.E[:, cols] * ds[None, :], em.B,
                                em.C[:ny] / ys[:, None], C2, rho, us,
                                None if meas is None else eps)
    Acl, Bcl, Ccl, Dcl = _hinf.closed_loop(arrays, K)
    if not is_hurwitz(Acl):
        raise RuntimeError(f"hinfsyn: the controller designed on the order-{p.mr.order} model "
                           f"does not stabilize the full elastic model ({n} states); raise "
                           "order")
    return hinf_norm(ct.ss(Acl, Bcl, Ccl, Dcl))
