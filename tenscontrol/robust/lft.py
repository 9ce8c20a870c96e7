"""The closed loop with uncertain parameters as a linear fractional transformation (M-Delta).

See docs/theory.md, "Structured uncertainty and mu". On the elastic coordinates a (dq = Z a,
docs/theory.md "Minimal realization") the passive model closed by ``u = -K (x - x*)`` reads

    M_e a'' + (D_e + F K_v Z) a' + (K_e + F K_q Z) a = Z^T d,      F = Z^T F_u,

and each uncertain parameter i adds ``delta_i L_i R_i`` to K_e (string stiffness, acting on a) or
to M_e (point mass, acting on a''), L_i R_i its contribution over its whole range, factored to
its rank r_i (1 per string, 3 per point mass). Pulling the deltas out gives

    x' = A x + B_w w + B_d d,   z = C_z x + D_zw w + D_zd d,   y = C_y x,   w = Delta z,

with ``Delta = diag(delta_i I_{r_i})``, |delta_i| <= 1: the closed loop at Delta is
``A + B_w Delta (I - D_zw Delta)^-1 C_z``. The form is frozen at the nominal equilibrium (q* and
gamma* do not move), which is exact for the string stiffness at held prestress.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from tenscontrol.linear.reduction import elastic_model
from tenscontrol.mechanics.geometry import member_columns
from tenscontrol.model.selection import Selection, check_selection
from tenscontrol.model.structure import PointMass, Structure
from tenscontrol.model.tables import Presentable, titled_table
from tenscontrol.robust.parameters import resolve

__all__ = ["UncertainLoop", "uncertain_loop"]

#: Eigenvalues of a parameter's (projected) contribution below this times its largest are
#: round-off: they set the block's rank (repetition of its delta).
_RANK_RTOL = 1e-10


@dataclass(frozen=True, eq=False)
class UncertainLoop(Presentable):
    """A closed loop with real uncertain parameters, as an M-Delta form (see the module).

    n_x = 2 n_e elastic states, r = sum of the blocks' sizes, n_d disturbances, n_y outputs.

    Attributes
    ----------
    A : ndarray, shape (n_x, n_x)
        Nominal closed-loop state matrix [1/s] on x = [a; a'] (elastic coordinates [m], [m/s]).
    B_w, C_z, D_zw : ndarray, shapes (n_x, r), (r, n_x), (r, r)
        The uncertainty channels (scaled so that |delta_i| <= 1 is the parameters' range).
    B_d : ndarray, shape (n_x, n_d)
        Disturbances (nodal forces [N] on the selected free coordinates).
    D_zd : ndarray, shape (r, n_d)
        Disturbance feedthrough into the mass channels.
    C_y : ndarray, shape (n_y, n_x)
        Performance outputs: the model's outputs [m].
    blocks : tuple of int
        Size r_i of each parameter's repeated real scalar block, in the order of `parameters`.
    parameters : tuple of Uncertainty
    structure : Structure
        The nominal structure (its equilibrium q* is the operating point).
    gamma : ndarray, shape (n_strings,)
        Force densities at q* [N/m], held by every perturbed structure.
    T : ndarray, shape (2 nq, n_x)
        ``blkdiag(Z, Z)``: Cartesian deviation ``x - x* = T x``.
    disturbance_names, output_names : tuple of str
    ignored : tuple of str
        Parameters left out because they cannot move the elastic model (members on fixed
        nodes only).
    """

    A: np.ndarray
    B_w: np.ndarray
    C_z: np.ndarray
    D_zw: np.ndarray
    B_d: np.ndarray
    D_zd: np.ndarray
    C_y: np.ndarray
    blocks: tuple
    parameters: tuple
    structure: Structure
    gamma: np.ndarray
    T: np.ndarray
    disturbance_names: tuple
    output_names: tuple
    ignored: tuple = ()

    def __post_init__(self):
        for name in ("A", "B_w", "C_z", "D_zw", "B_d", "D_zd", "C_y", "gamma", "T"):
            value = np.array(getattr(self, name), dtype=float)
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        return (f"UncertainLoop(structure={self.structure.name!r}, states={self.A.shape[0]}, "
                f"parameters={len(self.parameters)}, block_size={sum(self.blocks)}, "
                f"disturbances={self.B_d.shape[1]}, outputs={self.C_y.shape[0]})")

    def summary(self) -> str:
        """Sizes, the parameters and their ranges as a table."""
        kinds = {}
        for p, r in zip(self.parameters, self.blocks):
            n, size, w = kinds.get(p.kind, (0, 0, set()))
            kinds[p.kind] = (n + 1, size + r, w | {p.spread})
        rows = [("structure", self.structure.name), ("states", self.A.shape[0]),
                ("nominal max Re(eig)", f"{np.linalg.eigvals(self.A).real.max():.4g} 1/s")]
        for kind, (n, size, w) in kinds.items():
            spreads = ", ".join(f"+-{100 * s:.3g} %" for s in sorted(w))
            rows.append((kind, f"{n} parameters, {size} channels, {spreads}"))
        if self.ignored:
            rows.append(("ignored (fixed nodes)", ", ".join(self.ignored)))
        rows += [("disturbances, outputs", f"{self.B_d.shape[1]}, {self.C_y.shape[0]}")]
        return titled_table("UncertainLoop", rows)

    @property
    def n_parameters(self) -> int:
        """The number of uncertain scalars."""
        return len(self.parameters)

    def expand(self, delta) -> np.ndarray:
        """The diagonal of Delta, shape (r,): each delta_i repeated r_i times."""
        delta = _check_delta(delta, self.n_parameters)
        return np.repeat(delta, self.blocks)

    def closed_loop(self, delta) -> np.ndarray:
        """Closed-loop state matrix at `delta` (n_parameters,): ``A + B_w D (I - D_zw D)^-1 C_z``
        with D = diag(expand(delta)) [1/s]."""
        d = self.expand(delta)
        return self.A + (self.B_w * d) @ np.linalg.solve(np.eye(d.size) - self.D_zw * d,
                                                          self.C_z)

    def performance(self, delta):
        """(A, B, C) of the loop from d to y at `delta`."""
        d = self.expand(delta)
        N = np.linalg.solve(np.eye(d.size) - self.D_zw * d, np.hstack([self.C_z, self.D_zd]))
        BD = self.B_w * d
        n = self.A.shape[0]
        return self.A + BD @ N[:, :n], self.B_d + BD @ N[:, n:], self.C_y

    def response(self, omega: float) -> np.ndarray:
        """M(j omega) = C_z (j omega I - A)^-1 B_w + D_zw, shape (r, r), omega in rad/s."""
        n = self.A.shape[0]
        return self.C_z @ np.linalg.solve(1j * omega * np.eye(n) - self.A, self.B_w) + self.D_zw

    def perturbed(self, delta) -> Structure:
        """The structure at `delta`: stiffness k0 (1 + w delta) at held prestress (rest lengths
        ``l* (1 - gamma*/k)``), point masses m0 (1 + w delta). Runs in simulate and verify."""
        delta = _check_delta(delta, self.n_parameters)
        st = self.structure
        k = np.array(st.string_stiffness, dtype=float)
        masses = [pm.mass for pm in st.point_masses]
        for p, dlt in zip(self.parameters, delta):
            for i in p.members:
                if p.kind == "string_stiffness":
                    k[i] *= 1.0 + p.spread * dlt
                else:
                    masses[i] *= 1.0 + p.spread * dlt
        moved = np.flatnonzero(k != st.string_stiffness)
        low = [int(i) for i in moved if k[i] <= self.gamma[i]]
        if low:
            raise ValueError(f"perturbed: strings {low} would have a stiffness at or below their "
                             "force density gamma* (k <= gamma*: a rest length <= 0), which no "
                             "string has; delta is outside the physical range")
        bad = [i for i, m in enumerate(masses) if m <= 0]
        if bad:
            raise ValueError(f"perturbed: point masses {bad} would be <= 0 kg; delta is outside "
                             "the physical range")
        if moved.size:
            l = st.string_lengths[moved]
            st = st.with_strings(moved.tolist(), stiffness=k[moved].tolist(), rest_length=(
                l * (1.0 - self.gamma[moved] / k[moved])).tolist())
        if st.point_masses:
            st = st.with_point_masses([PointMass(pm.node, m) for pm, m in
                                       zip(self.structure.point_masses, masses)])
        return st


def _check_delta(delta, n: int) -> np.ndarray:
    d = np.asarray(delta, dtype=float).reshape(-1)
    if d.shape != (n,) or not np.all(np.isfinite(d)):
        raise ValueError(f"delta must be {n} finite real numbers (one per uncertain parameter), "
                         f"got shape {np.shape(delta)}")
    return d


def _low_rank(S: np.ndarray, scale: float) -> tuple:
    """(L, R) with S = L R, L (n, r), R (r, n), r the rank of symmetric S relative to `scale`
    (the norm of the nominal matrix S perturbs: a string between fixed nodes has rank 0)."""
    lam, U = np.linalg.eigh(0.5 * (S + S.T))
    keep = np.abs(lam) > _RANK_RTOL * scale
    return U[:, keep] * lam[keep], U[:, keep].T


def contributions(structure: Structure, q: np.ndarray, gamma: np.ndarray, Z: np.ndarray,
                  parameters) -> list:
    """Each parameter's change of K_e or M_e over its range (delta = 1), projected on Z.

    Analytic: string i at held prestress has material stiffness ``(k_i - gamma_i)/l_i^2``, so
    ``dK/dk_i = y_i y_i^T / l_i^2`` with ``y_i = Yhat_i q`` (the member vector on its two nodes);
    point mass p at node j adds ``m_p P_j^T P_j`` to M.
    """
    Y = member_columns(structure.string_nodes, q)
    l2 = structure.string_lengths ** 2
    out = []
    for p in parameters:
        S = np.zeros((q.size, q.size))
        for i in p.members:
            if p.kind == "string_stiffness":
                S += (p.spread * structure.string_stiffness[i] / l2[i]) * np.outer(Y[:, i], Y[:, i])
            else:
                pm = structure.point_masses[i]
                j = 3 * pm.node
                S[j:j + 3, j:j + 3] += p.spread * pm.mass * np.eye(3)
        out.append(Z.T @ S @ Z)
    return out


def _controller(controller):
    ctrl = getattr(controller, "controller", controller)   # a design or its controller
    if not all(hasattr(ctrl, f) for f in ("K", "strings", "q_ref")):
        raise TypeError("uncertain_loop: controller must be a state feedback u = -K (x - x*) "
                        "(tc.lqr(model).controller, or the design), got "
                        f"{type(ctrl).__name__}")
    if getattr(ctrl, "kind", "passive") != "passive":
        raise ValueError("uncertain_loop: the controller was designed on the control model; "
                         "design it on the passive model (tc.linearize(..., kind='passive')), "
                         "where the strings follow their law and their stiffness matters")
    return ctrl


def uncertain_loop(model, controller, parameters, *,
                   disturbances: Selection | None = None) -> UncertainLoop:
    """The closed loop of `model` and `controller` with uncertain `parameters`, as M-Delta.

    Parameters
    ----------
    model : LinearModel
        Passive linearization at an equilibrium (``tc.linearize(structure, kind="passive",
        outputs=...)``); its outputs are the performance outputs y.
    controller : StateFeedback or LQRDesign
        ``u = -K (x - x*)`` on its strings' force densities [N/m], e.g. ``tc.lqr(model)``.
    parameters : sequence of Uncertainty
        From :func:`string_stiffness` and :func:`point_masses` (concatenate the tuples).
    disturbances : Selection, optional
        Nodal force channels d of the performance loop; all free coordinates by default.

    Returns
    -------
    UncertainLoop

    Raises
    ------
    ValueError
        A control (not passive) model or controller, a model off equilibrium, a slack or
        out-of-range string, a structure without point masses for point_masses(...).
    """
    if getattr(model, "kind", None) != "passive":
        raise ValueError("uncertain_loop: model must be a passive LinearModel "
                         "(tc.linearize(structure, kind='passive')), where the strings follow "
                         "their elastic law")
    ctrl = _controller(controller)
    st = model.structure
    strings = np.asarray(ctrl.strings, dtype=np.int64)
    if ctrl.K.shape != (strings.size, 2 * model.q.size):
        raise ValueError(f"uncertain_loop: the controller's K has shape {ctrl.K.shape}, but "
                         f"the model needs ({strings.size}, {2 * model.q.size})")
    em = elastic_model(model.actuated(strings))
    params = resolve(parameters, st, np.asarray(model.force_density_gradient).any(axis=1))
    Z, n_e = em.Z, em.n_e
    rows = (Selection(nodes=range(st.n_nodes)) if disturbances is None else
            check_selection(disturbances, "uncertain_loop: disturbances")).coordinates(
                st, "uncertain_loop: disturbances")
    Mq = em.M_e
    Fu = Z.T @ np.asarray(model.actuated(strings).force_input)
    Kq, Kv = ctrl.K[:, :model.q.size] @ Z, ctrl.K[:, model.q.size:] @ Z
    Gq, Gv = -(em.K_e + Fu @ Kq), -(em.D_e + Fu @ Kv)
    Fd = Z.T[:, rows]
    scale = {"string_stiffness": np.linalg.norm(em.K_e, 2), "point_mass": np.linalg.norm(Mq, 2)}
    parts = [_low_rank(S, scale[p.kind]) for p, S in
             zip(params, contributions(st, model.q, model.gamma, Z, params))]
    # a parameter that cannot move the elastic model (a string between fixed nodes, a mass on a
    # fixed node) has an empty block: it is left out, and named in `ignored`
    ignored = tuple(p.name for p, (L, _) in zip(params, parts) if L.shape[1] == 0)
    params = tuple(p for p, (L, _) in zip(params, parts) if L.shape[1])
    parts = [lr for lr in parts if lr[0].shape[1]]
    if not params:
        raise ValueError(f"uncertain_loop: none of the parameters moves the elastic model of "
                         f"{st.name} ({', '.join(ignored)}: members on fixed nodes only)")
    blocks = tuple(L.shape[1] for L, _ in parts)
    L = np.hstack([L for L, _ in parts])
    cho = scipy.linalg.cho_factor(Mq)
    inv = lambda X: scipy.linalg.cho_solve(cho, X)       # noqa: E731  M_e^-1 X
    zero, eye = np.zeros((n_e, n_e)), np.eye(n_e)
    A = np.block([[zero, eye], [inv(Gq), inv(Gv)]])
    B_w = np.vstack([np.zeros_like(L), -inv(L)])
    B_d = np.vstack([np.zeros_like(Fd), inv(Fd)])
    C_z, D_zw, D_zd = [], [], []
    for p, (_, R) in zip(params, parts):
        if p.kind == "string_stiffness":      # z = R a
            C_z.append(np.hstack([R, np.zeros_like(R)]))
            D_zw.append(np.zeros((R.shape[0], L.shape[1])))
            D_zd.append(np.zeros((R.shape[0], Fd.shape[1])))
        else:                                 # z = R a''
            C_z.append(R @ A[n_e:])
            D_zw.append(R @ B_w[n_e:])
            D_zd.append(R @ B_d[n_e:])
    return UncertainLoop(A, B_w, np.vstack(C_z), np.vstack(D_zw), B_d, np.vstack(D_zd),
                         np.asarray(model.C) @ em.T, blocks, params, st, np.asarray(model.gamma),
                         em.T, tuple(model.disturbance_names[r] for r in rows),
                         tuple(model.output_names), ignored)
