"""Analytic linearization of the tensegrity dynamics about an operating point.

See docs/theory.md, "Linearization: force densities in, nodal forces as disturbances".

:func:`linearize` returns a :class:`LinearModel`

    delta xdot = A delta x + B delta u + E delta d,    y = C delta x,

with the state x = [q; qd] (3n positions node by node, then 3n velocities), u the member force
densities (strings; for compressible bars also the bars) and d the 3n nodal forces. Rigid bars
use Hsu et al. (2021), eqs. (49)-(52), at any operating point, moving or not; compressible bars
use eqs. (58)-(59) through :func:`tenscontrol.jacobians` (``bars="compressible"``).

Two models (same section): the "control" model holds the force densities at their
operating-point values inside A (geometric stiffness only, u = the commanded force density);
the "passive" model lets the members follow their elastic law with u an additive increment,
``A_p = A + B [du_law/dq, 0]``. :meth:`LinearModel.passive` turns one into the other.

This module is the one bridge from the mechanics to python-control; it imports python-control
only when :attr:`LinearModel.sys` is asked for.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, fields, replace

import numpy as np
import scipy.linalg

from tenscontrol import validation
from tenscontrol.model.cables import reject_cables
from tenscontrol.linear.clustered import cable_input_columns, cable_terms, tension_gradients
from tenscontrol.mechanics.checks import check_members
from tenscontrol.mechanics.rigid.model import gravity_vector, rigid_model
from tenscontrol.mechanics.geometry import member_columns, nodal_vector, weighted_laplacian
from tenscontrol.mechanics.laws import active_set, elastic_densities, material_coefficients
from tenscontrol.mechanics.scales import force_rounding
from tenscontrol.mechanics.sensors import SensorSet
from tenscontrol.statics.stiffness import string_activity
from tenscontrol.model.selection import AXES as _AXES, Selection, check_selection
from tenscontrol.model.structure import Structure
from tenscontrol.linear.threads import sized_by
from tenscontrol.model.tables import Presentable, titled_table

__all__ = ["LinearModel", "linearize"]

_EQUILIBRIUM_RTOL = 1e-8
#: The forces at the point are computed here again, with a rounding error as large as the one
#: the static solve stops at (mechanics.scales.force_rounding): an equilibrium it found is
#: accepted to twice that.
_ROUNDING_FACTOR = 2.0
#: A fixed coordinate's velocity up to this times max(1 m/s, max |qd|) is round-off (another
#: integrator's output at rest: qd = 9.8e-15 on z0) and is set to zero; above, it is an error.
_FIXED_VELOCITY_RTOL = 1e-9
#: A cable's segments share one tension: gamma_k l_k may differ by this (relative) round-off
#: of the user's division T / l_k, and no more.
_CABLE_TENSION_RTOL = 1e-9
_KINETIC = ("consistent", "paper")  # tenscontrol.mechanics.compressible.model's kinetic-energy modes


@dataclass(frozen=True, eq=False)
class LinearModel(Presentable):
    """A linear model ``delta xdot = A delta x + B delta u + E delta d``, ``y = C delta x``.

    n is the number of nodes, nq = 3n; x = [q; qd] node by node (x0, y0, z0, x1, ...).

    Attributes
    ----------
    A : ndarray, shape (2nq, 2nq)
        State matrix [[0, I], [dqdd/dq, dqdd/dqd]] [1/s^2, 1/s].
    B : ndarray, shape (2nq, nu)
        Input matrix [m/(kg s^2) per N/m]: u = string force densities (n_strings), then, for
        compressible bars, bar force densities (n_bars) [N/m]. Columns of slack strings are zero.
    E : ndarray, shape (2nq, nq)
        Disturbance matrix [1/kg]: d = nodal forces, 3 per node [N]. Fixed coordinates' columns
        are zero (the constraints absorb those forces).
    C : ndarray, shape (ny, 2nq)
        Output selection: all nq positions by default (fixed ones included, y = delta q); see
        :meth:`with_outputs`.
    q, qd, loads : ndarray, shape (nq,)
        Operating point: positions [m], velocities [m/s], external nodal forces [N].
    gamma : ndarray, shape (n_strings,)
        String force densities at the operating point [N/m] (0 for slack strings).
    bar_force_densities : ndarray, shape (n_bars,)
        Rigid: -2 lambda_b (0 for redundant bars); compressible: psi [N/m]. Negative = compression.
    bars : {"rigid", "compressible"}
    kind : {"control", "passive"}
        Which model of docs/theory.md, "Linearization: force densities in, nodal forces as
        disturbances" this is.
    at_equilibrium : bool
        qd = 0 and |qdd| <= 1e-8 times the acceleration scale of the forces at the point, or
        at most twice the acceleration of their rounding error
        (:func:`tenscontrol.mechanics.scales.force_rounding`): every configuration
        :func:`tenscontrol.static_equilibrium` returns (``rtol <= 1e-8``) is one.
    constraint_jacobian : ndarray, shape (c, nq)
        Rigid: fixed-coordinate rows, then the rows 2 q^T H_k of the independent bars
        (``rigid_model(structure).constrained_bars``); compressible: fixed rows only.
    mass_matrix : ndarray, shape (nq, nq)
        M (rigid) or M_qdd(q) (compressible) at the operating point [kg].
    stiffness : ndarray, shape (nq, nq)
        K [N/m] with ``M ddq = -K dq - D dqd + F_u du + dd`` on the constraint tangent space at
        an equilibrium. Control: geometric only, K(gamma) - 2 sum lambda_b H_b (rigid) or
        K(gamma) + K_b(psi) (compressible); passive: plus the material stiffness of the active
        strings (and compressible bars). At a moving point A has further velocity and
        constraint-curvature terms that are not part of K.
    damping : ndarray, shape (nq, nq)
        D = -d f_d/d qd [N s/m] of the active dampers.
    force_input : ndarray, shape (nq, nu)
        F_u = -[Yhat(q) (, Xhat(q))]: nodal forces per unit force density [m].
    force_density_gradient : ndarray, shape (nu, nq)
        d u_law/dq [N/m^2]: gradient of the members' elastic laws, (k l0/l^3) s^T on the
        member's nodes (zero for slack strings). The passive model is
        ``A + B [force_density_gradient, 0]``.
    structure : Structure
    state_names, input_names, disturbance_names, output_names : tuple of str
        ``"x2"``/``"vx2"`` (position/velocity of node 2 along x), ``"gamma3"`` (string 3),
        ``"cable1"`` (the tension of clustered cable 1 [N], :meth:`actuated`),
        ``"psi1"`` (bar 1), ``"fz2"`` (force on node 2 along z); outputs as the states, or
        the sensors' signal names (:meth:`with_sensors`).
    D : ndarray, shape (ny, nu), or None
        Feedthrough ``y = C dx + D du`` of sensor outputs (:meth:`with_sensors`: a load cell
        reads the commanded force density times the length); None means zero.
    """

    A: np.ndarray
    B: np.ndarray
    E: np.ndarray
    C: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    loads: np.ndarray
    gamma: np.ndarray
    bar_force_densities: np.ndarray
    bars: str
    kind: str
    at_equilibrium: bool
    constraint_jacobian: np.ndarray
    mass_matrix: np.ndarray
    stiffness: np.ndarray
    damping: np.ndarray
    force_input: np.ndarray
    force_density_gradient: np.ndarray
    structure: Structure
    state_names: tuple
    input_names: tuple
    disturbance_names: tuple
    output_names: tuple
    D: np.ndarray | None = None

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                value = np.array(value, dtype=float)
                value.setflags(write=False)
                object.__setattr__(self, f.name, value)
            elif f.name.endswith("_names"):
                object.__setattr__(self, f.name, tuple(value))

    def __repr__(self) -> str:
        return (f"LinearModel(structure={self.structure.name!r}, kind={self.kind!r}, "
                f"bars={self.bars!r}, states={self.A.shape[0]}, inputs={self.B.shape[1]}, "
                f"disturbances={self.E.shape[1]}, outputs={self.C.shape[0]}, "
                f"at_equilibrium={self.at_equilibrium})")

    def summary(self) -> str:
        """The kind, the bar model and the signals (sizes and first names) as a table."""
        def names(values):
            text = ", ".join(values)
            return text if len(text) <= 60 else text[:56] + " ..."
        rows = [("structure", self.structure.name), ("kind", self.kind), ("bars", self.bars),
                ("states", self.A.shape[0]),
                ("inputs [N/m]" if not any(n.startswith("cable") for n in self.input_names)
                 else "inputs [N/m; cables N]", f"{self.B.shape[1]}: {names(self.input_names)}"),
                ("disturbances [N]", f"{self.E.shape[1]}: {names(self.disturbance_names)}"),
                ("outputs [m]", f"{self.C.shape[0]}: {names(self.output_names)}"),
                ("at equilibrium", self.at_equilibrium)]
        return titled_table("LinearModel", rows)

    @property
    def sys(self):
        """The model as ``control.StateSpace(A, [B E], C, 0)`` with named signals.

        Inputs are ``input_names + disturbance_names``; the system is named after the structure.
        """
        import control  # only here: importing tenscontrol must not import python-control

        m = self.B.shape[1] + self.E.shape[1]
        D = np.zeros((self.C.shape[0], m))
        if self.D is not None:
            D[:, :self.B.shape[1]] = self.D
        return control.ss(self.A, np.hstack([self.B, self.E]), self.C,
                          D, states=list(self.state_names),
                          inputs=list(self.input_names + self.disturbance_names),
                          outputs=list(self.output_names), name=self.structure.name)

    @property
    def free_states(self) -> np.ndarray:
        """Indices (int) of the states not on fixed coordinates: free positions, then velocities."""
        free = self.structure.free_coordinates
        return np.concatenate([free, self.q.size + free]).astype(np.int64)

    def passive(self) -> LinearModel:
        """The passive model: members follow their elastic law, u adds to it.

        See docs/theory.md, "Linearization: force densities in, nodal forces as disturbances".

        ``A_p = A + B [du_law/dq, 0]``; B, E unchanged; the stiffness gains the material terms
        ``(k l0 / l^3) Yhat_k q q^T Yhat_k``. A passive model returns itself.
        """
        if self.kind == "passive":
            return self
        grad = self.force_density_gradient
        gain = np.hstack([grad, np.zeros_like(grad)])
        C = self.C if self.D is None else self.C + self.D @ gain  # sensors on the law, too
        return replace(self, A=self.A + self.B @ gain, C=C,
                       stiffness=self.stiffness - self.force_input @ grad, kind="passive")

    def actuated(self, strings=None, cables=None) -> LinearModel:
        """The model whose inputs are the commanded strings' force densities and cables' tensions.

        Parameters
        ----------
        strings : sequence of int, optional
            The commanded strings, in input order (inputs ``"gamma<k>"`` [N/m]);
            ``structure.actuated_strings`` (``String.actuated``, all by default) that are not
            segments of a clustered cable if omitted. A cable segment cannot be commanded on
            its own: its cable carries one tension.
        cables : sequence of int, optional
            The commanded clustered cables, in input order after the strings (inputs
            ``"cable<c>"``, the cable tension T_c [N]); none if omitted (the cables follow
            their law), as ``actuated(controller.strings)`` of a controller that commands no
            cable expects. :func:`tenscontrol.lqr` on such a model returns a
            :class:`~tenscontrol.StateFeedback` commanding these cables.

        Notes
        -----
        Members that are not commanded follow their elastic law: in the control model their
        material stiffness moves into A, ``A + B_k [du_law/dq, 0]_k`` for each such string k
        (a segment of a cable that is not commanded included) and, with compressible bars, for
        every bar; in the passive model it is there already. A commanded cable c has the
        column ``B S_c`` (S_c: ``1 / l_k`` on its segments, so ``dF/dT_c = -g_c``); in the
        control model its tension is held (the segments' force densities ``T_c / l_k`` move
        with their lengths), in the passive model the input adds to the cable law's tension
        and its law gradient is ``k_c g_c^T`` (docs/theory.md, "Clustered cables"). B,
        ``force_input`` and ``force_density_gradient`` keep the commanded inputs' columns and
        rows. Call it on the model as linearized (inputs: every string).
        """
        st = self.structure
        keep = self._commanded_strings(strings)
        cab = self._commanded_cables(cables)
        names = tuple(f"gamma{k}" for k in keep) + tuple(f"cable{c}" for c in cab)
        if self.input_names == names:
            return self
        full = tuple(f"gamma{k}" for k in range(st.n_strings))
        if self.input_names[:len(full)] != full:
            raise ValueError("actuated: call it on the model as linearized (one input per "
                             f"string), not on one with inputs {list(self.input_names)}")
        held = [k for c in cab for k in st.cables[c].strings]
        drop = np.setdiff1d(np.arange(self.B.shape[1]), np.concatenate([keep, held]))
        model = self
        if self.kind == "control" and drop.size:
            model = model._follow_law(drop, self.force_density_gradient[drop])
        if not cab.size:
            return replace(model, B=self.B[:, keep], force_input=self.force_input[:, keep],
                           D=None if self.D is None else self.D[:, keep],
                           force_density_gradient=self.force_density_gradient[keep],
                           input_names=names)
        if self.D is not None:  # tenscontrol.sensors refuses cables: a hand-built D only
            raise ValueError("actuated: cable inputs on a model with sensor outputs (D) are not "
                             "modelled; set the outputs with with_outputs first")
        return model._with_cables(keep, cab, held, names)

    def _commanded_strings(self, strings) -> np.ndarray:
        """The checked string indices of :meth:`actuated` (int64)."""
        st = self.structure
        if strings is None:
            keep = np.asarray(st.actuated_strings, dtype=np.int64)
            return keep[st.string_cable[keep] < 0] if st.cables else keep
        keep = np.asarray(strings).reshape(-1)
        if keep.size and (not np.issubdtype(keep.dtype, np.integer)
                          or keep.min() < 0 or keep.max() >= st.n_strings):
            raise ValueError(f"actuated: strings must be string indices below "
                             f"{st.n_strings}, got {list(keep)}")
        for k in keep:
            if st.cables and st.string_cable[k] >= 0:
                c = int(st.string_cable[k])
                raise ValueError(f"actuated: string {int(k)} is a segment of cable {c}, which "
                                 "carries one tension along all its segments; command the "
                                 f"cable instead (cables=[{c}]) and leave string {int(k)} out")
        return keep.astype(np.int64)

    def _commanded_cables(self, cables) -> np.ndarray:
        """The checked cable indices of :meth:`actuated` (int64)."""
        st = self.structure
        if cables is None:
            return np.zeros(0, dtype=np.int64)
        cab = np.asarray(cables).reshape(-1)
        if cab.size and (not np.issubdtype(cab.dtype, np.integer) or cab.min() < 0
                         or cab.max() >= st.n_cables):
            raise ValueError(f"actuated: cables must be cable indices below {st.n_cables} "
                             f"(structure {st.name!r} has {st.n_cables} cables), got {list(cab)}")
        if np.unique(cab).size != cab.size:
            raise ValueError(f"actuated: a cable appears twice in cables={list(cab)}")
        return cab.astype(np.int64)

    def _follow_law(self, drop, grad) -> LinearModel:
        """The control model with the inputs `drop` following the law rows `grad` (n_drop, nq)."""
        gain = np.hstack([grad, np.zeros_like(grad)])
        model = replace(self, A=self.A + self.B[:, drop] @ gain,
                        stiffness=self.stiffness - self.force_input[:, drop] @ grad)
        if self.D is not None:
            model = replace(model, C=self.C + self.D[:, drop] @ gain)
        return model

    def _with_cables(self, keep, cab, held, names) -> LinearModel:
        """:meth:`actuated` with cable inputs `cab` (their segments `held`), strings `keep`."""
        st, q = self.structure, self.q
        S = cable_input_columns(st, q, cab)                       # (ns, nc): 1/l_k
        model = self
        if self.kind == "control":
            # hold T_c instead of the segments' force densities: d(T_c / l_k)/dq at fixed T_c
            Yh = member_columns(st.string_nodes, q)
            l2 = np.einsum("ik,ik->k", Yh, Yh) / 2.0
            segs = np.asarray(held, dtype=np.int64)
            geometric = -((self.gamma[segs] / l2[segs])[:, None] * Yh[:, segs].T)
            model = model._follow_law(segs, geometric)
        # a slack cable's segments have zero columns (linearize's at_rest rule): no law either
        taut = np.array([self.force_input[:, list(st.cables[c].strings)].any() for c in cab])
        Bc, Fc = self.B[:, :st.n_strings] @ S, self.force_input[:, :st.n_strings] @ S
        grad = np.vstack([self.force_density_gradient[keep],
                          tension_gradients(st, q, cab) * taut[:, None]])
        return replace(model, B=np.hstack([self.B[:, keep], Bc]),
                       force_input=np.hstack([self.force_input[:, keep], Fc]),
                       force_density_gradient=grad, input_names=names, D=None)

    def with_outputs(self, outputs: Selection, velocities: bool = False) -> LinearModel:
        """The same model with outputs y = the chosen coordinates' deviations.

        Parameters
        ----------
        outputs : Selection
            The output coordinates, in order, e.g. ``Selection(nodes=[2, 3], axes="xz")``.
        velocities : bool
            Also output the velocities of the chosen coordinates, after all the positions.

        Notes
        -----
        Fixed coordinates are left out: their outputs are identically zero. Build ``C``
        yourself to keep them. The default ``C`` of :func:`linearize` is all positions,
        fixed ones included.
        """
        outputs = check_selection(outputs, "with_outputs: outputs")
        if outputs is None:
            raise TypeError("with_outputs: outputs must be a tenscontrol.Selection, e.g. "
                            "Selection(nodes=[2, 3], axes='xz'); got None")
        rows = outputs.coordinates(self.structure, "outputs")
        if velocities:
            rows = np.concatenate([rows, self.q.size + rows])
        return replace(self, C=np.eye(self.A.shape[0])[rows], D=None,
                       output_names=tuple(self.state_names[r] for r in rows))

    def with_sensors(self, sensors: SensorSet) -> LinearModel:
        """The same model with outputs y = the sensors' signals: ``y = C dx + D du``.

        Parameters
        ----------
        sensors : SensorSet
            Sensors of this model's structure (:func:`tenscontrol.sensors`).

        Notes
        -----
        ``C = [dh/dq, dh/dqd]`` and ``D = dh/du`` are the sensors' analytic Jacobians
        (:meth:`tenscontrol.mechanics.sensors.SensorSet.output_matrices`) at the operating
        point: the strings that follow their law (every string in the passive model, the
        strings that are not inputs in the control model) add their law's slope to a tension
        row, the inputs' force densities are held at ``gamma`` and feed through ``D`` (the
        length ``l_k`` for the load cell of commanded string k; zero on bar inputs).
        :meth:`passive` and :meth:`actuated` keep C and D consistent.
        """
        if not isinstance(sensors, SensorSet):
            raise TypeError(f"with_sensors: sensors must be a tenscontrol SensorSet "
                            f"(tenscontrol.sensors(structure, ...)), got {type(sensors).__name__}")
        st = self.structure
        if sensors.structure.n_nodes != st.n_nodes or sensors.structure.n_strings != st.n_strings:
            raise ValueError(f"with_sensors: the sensors are on {sensors.structure.name!r}, not on "
                             f"this model's structure {st.name!r}")
        inputs = np.array([int(n[5:]) for n in self.input_names if n.startswith("gamma")],
                          dtype=np.int64)
        Cq, Cv, Dall = sensors.output_matrices(self.q, self.qd, self.gamma, held=np.arange(
            st.n_strings))
        follow = (np.ones(st.n_strings, dtype=bool) if self.kind == "passive" else
                  ~np.isin(np.arange(st.n_strings), inputs))
        pairs, l = st.string_nodes, _string_lengths(st, self.q)
        live = active_set(l, st.string_rest_lengths, st.string_is_spring) & follow
        grad = (material_coefficients(st.string_stiffness, st.string_rest_lengths, l)
                * live)[:, None] * member_columns(pairs, self.q).T
        D = np.zeros((sensors.n_signals, self.B.shape[1]))
        D[:, :inputs.size] = Dall[:, inputs]
        return replace(self, C=np.hstack([Cq + Dall @ grad, Cv]), D=D,
                       output_names=sensors.names)


# ---- member data ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Members:
    Yh: np.ndarray        # (nq, ns) Yhat(q)
    active: np.ndarray    # (ns,) bool: force, damper and input column on
    law: np.ndarray       # (ns,) elastic-law gamma, 0 unless active
    grad: np.ndarray      # (ns, nq) d gamma_law / dq
    Dq: np.ndarray        # (nq, nq) d f_d / dq
    Dqd: np.ndarray       # (nq, nq) d f_d / dqd
    fd: np.ndarray        # (nq,) damper forces


def _string_lengths(structure: Structure, q: np.ndarray) -> np.ndarray:
    N, p = q.reshape(-1, 3), structure.string_nodes
    return np.linalg.norm(N[p[:, 1]] - N[p[:, 0]], axis=1)


def _dampers(structure: Structure, q, qd, c) -> tuple:
    """(d f_d/dq, d f_d/dqd, f_d) of dampers with coefficients `c`.

    See docs/theory.md, "Linearization: force densities in, nodal forces as disturbances".
    """
    pairs = structure.string_nodes
    Yh, Yd = member_columns(pairs, q), member_columns(pairs, qd)
    ell = _string_lengths(structure, q) ** 2
    rho = 0.5 * np.einsum("ik,ik->k", Yh, Yd) / ell    # q^T Yhat_k qd / l^2 (s.sd on 2 nodes)
    cl = (c / ell)[None, :] * Yh
    Dq = (-weighted_laplacian(structure.string_connectivity, c * rho)
          - cl @ (Yd - 2.0 * rho[None, :] * Yh).T)
    return Dq, -cl @ Yh.T, -Yh @ (c * rho)


def _members(structure: Structure, q, qd, at_rest: str) -> _Members:
    """Tension-member data at (q, qd) with the slack rule and the `at_rest` choice."""
    pairs = structure.string_nodes
    Yh, l = member_columns(pairs, q), _string_lengths(structure, q)
    l0, k = structure.string_rest_lengths, structure.string_stiffness
    active, rest = string_activity(structure, l, at_rest)
    cables = cable_terms(structure, q, qd, at_rest) if structure.cables else None
    if cables is not None:  # a segment's own law is replaced by its cable's
        rest = rest & ~cables.segment
        active = np.where(cables.segment, cables.active, active)
    if at_rest == "slack" and rest.any():
        names = ", ".join(f"string {i} (nodes {a}->{b})" for i, (a, b) in
                          zip(np.flatnonzero(rest), pairs[rest]))
        warnings.warn(f"linearize: {names} of {structure.name} sit exactly at their rest length "
                      "and are treated as slack (gamma 0, no material stiffness, no damper, zero "
                      "input column); pass at_rest='taut' for the tension-side derivative",
                      stacklevel=4)  # caller, past the thread-policy wrapper
    law = np.where(active & ~rest, elastic_densities(k, l0, l), 0.0)
    grad = np.where(active, material_coefficients(k, l0, l), 0.0)[:, None] * Yh.T
    own = active if cables is None else active & ~cables.segment
    Dq, Dqd, fd = _dampers(structure, q, qd, np.where(own, structure.string_damping, 0.0))
    if cables is not None:
        law = np.where(cables.segment, cables.law, law)
        grad = np.where(cables.segment[:, None], cables.grad, grad)
        Dq, Dqd, fd = Dq + cables.Dq, Dqd + cables.Dqd, fd + cables.fd
    return _Members(Yh, active, law, grad, Dq, Dqd, fd)


def _held_gamma(structure: Structure, members: _Members, gamma) -> np.ndarray:
    """The operating-point string force densities: the law's, or `gamma` checked."""
    if gamma is None:
        return members.law
    g = np.asarray(gamma, dtype=float).reshape(-1)
    if g.shape != (structure.n_strings,) or not np.all(np.isfinite(g)):
        raise ValueError(f"gamma must be {structure.n_strings} finite force densities [N/m] "
                         f"(one per string), got shape {np.shape(gamma)}")
    for i, (a, b) in enumerate(structure.string_nodes):
        where = f"gamma: string {i} (nodes {a}->{b})"
        if not members.active[i] and g[i] != 0.0:
            raise ValueError(f"{where} is slack at q (not longer than its rest length), so its "
                             f"force density must be 0, got {g[i]:g}; give the structure rest "
                             "lengths that make it taut, or at_rest='taut' if it is at rest")
        if not structure.string_is_spring[i] and g[i] < 0.0:
            raise ValueError(f"{where} is a one-sided string and cannot push; got {g[i]:g} < 0")
    for c, cable in enumerate(structure.cables):
        segs = list(cable.strings)
        T = g[segs] * np.linalg.norm(members.Yh[:, segs], axis=0) / np.sqrt(2.0)  # gamma l
        if np.ptp(T) > _CABLE_TENSION_RTOL * np.abs(T).max():
            raise ValueError(f"gamma: cable {c} (strings {segs}) carries one tension, but the "
                             f"given force densities times the segments' lengths differ "
                             f"({', '.join(f'{t:.6g}' for t in T)} N); give its segments "
                             "gamma_k = T / l_k with one tension T")
    return g


# ---- operating point -----------------------------------------------------------------------


def _operating_point(structure: Structure, q, qd, loads, bars: str):
    nq = 3 * structure.n_nodes
    q = nodal_vector(structure.n_nodes, "q", q, structure.nodes.reshape(-1))
    qd = nodal_vector(structure.n_nodes, "qd", qd, np.zeros(nq))
    f = nodal_vector(structure.n_nodes, "loads", loads, np.zeros(nq))
    fixed = structure.fixed_coordinates
    roundoff = _FIXED_VELOCITY_RTOL * max(1.0, float(np.abs(qd).max(initial=0.0)))
    moving = np.flatnonzero(np.abs(qd[fixed]) > roundoff)
    if moving.size:
        c = int(fixed[moving[0]])
        raise ValueError(f"qd: the fixed coordinate {_AXES[c % 3]}{c // 3} (q index {c}) must "
                         f"have zero velocity, got {qd[c]:g} (round-off up to {roundoff:.2g} "
                         "m/s is accepted and set to zero)")
    qd[fixed] = 0.0
    if bars == "rigid" and structure.n_bars:
        p = structure.bar_nodes
        N, V = q.reshape(-1, 3), qd.reshape(-1, 3)
        b, bd = N[p[:, 1]] - N[p[:, 0]], V[p[:, 1]] - V[p[:, 0]]
        lb = structure.bar_lengths
        err = np.abs(np.linalg.norm(b, axis=1) - lb) / lb
        verr = np.abs(np.einsum("ij,ij->i", b, bd)) / lb**2
        if err.max() > 1e-6 or verr.max() > 1e-6 * max(1.0, np.abs(bd).max() / lb.min()):
            warnings.warn(f"linearize: the operating point of {structure.name} violates the rigid "
                          f"bar constraints (relative length error {err.max():.2g}, velocity "
                          f"error {verr.max():.2g} 1/s); the model is taken there as given",
                          stacklevel=4)  # caller, past the thread-policy wrapper
    return q, qd, f


def _names(structure: Structure):
    pos = tuple(f"{a}{i}" for i in range(structure.n_nodes) for a in _AXES)
    states = pos + tuple(f"v{p}" for p in pos)
    return states, tuple(f"f{p}" for p in pos)


# ---- the partial derivatives of qdd ---------------------------------------------------------


def _inverse_spd(S: np.ndarray) -> np.ndarray:
    """S^{-1} for the constraint Schur complement; pseudo-inverse if S is (near-)singular."""
    if S.shape[0] == 0:
        return np.zeros((0, 0))
    try:
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(S), np.eye(S.shape[0]))
    except np.linalg.LinAlgError:
        return np.linalg.pinv(S, rcond=1e-12, hermitian=True)


def _rigid(structure, q, qd, f, gamma, m: _Members, include_radius: bool) -> dict:
    """Hsu et al. (2021), eqs. (49)-(52) in closed form, vectorized over the coordinates."""
    model = rigid_model(structure, include_radius)
    W, n = model.W, structure.n_nodes
    cb = model.constrained_bars
    pairs, Cb = structure.bar_nodes[cb], structure.bar_connectivity[cb]
    Jb = 2.0 * member_columns(pairs, q).T              # bar rows of J_Phi
    Xd = member_columns(pairs, qd)                     # H_k qd
    xi = -m.Yh @ gamma + model.G + f + m.fd
    WJt = W @ Jb.T
    Mt = _inverse_spd(Jb @ WJt)
    h = np.sum(Xd * Xd, axis=0)                         # 2 qd^T H_k qd = 2 |bd_k|^2
    lam = -Mt @ (Jb @ (W @ xi) + h)
    qdd = W @ (xi + Jb.T @ lam)
    WP = W - WJt @ Mt @ WJt.T
    K = weighted_laplacian(structure.string_connectivity, gamma)
    H_lam = weighted_laplacian(Cb, 2.0 * lam)          # 2 sum lambda_k H_k
    # d qdd = W P (d xi + dJ^T lam) - W J^T Mt dJ qdd, with dJ qdd = 2 [H_k qdd]^T dq
    dq = WP @ (-K + m.Dq + H_lam) - WJt @ Mt @ (2.0 * member_columns(pairs, qdd).T)
    dqd = WP @ m.Dqd - WJt @ Mt @ (4.0 * Xd.T)
    Fu = -m.Yh * m.active[None, :]
    psi = np.zeros(structure.n_bars)
    psi[cb] = -2.0 * lam
    forces = (np.abs(model.G) + np.abs(f) + np.abs(m.Yh) @ np.abs(gamma) + np.abs(m.fd)
              + np.abs(Jb.T) @ np.abs(lam))
    return dict(qdd=qdd, dq=dq, dqd=dqd, B=WP @ Fu, E=WP, Fu=Fu, grad=m.grad,
                K=K - H_lam, psi=psi, M=model.M, scale=np.abs(W) @ forces,
                reach=np.abs(WP).sum(axis=1),     # at rest qdd = W P xi
                J=np.vstack([np.eye(3 * n)[structure.fixed_coordinates], Jb]))


def _compressible(structure, q, qd, f, gamma, m: _Members, kinetic, include_radius) -> dict:
    """Hsu et al. (2021), eqs. (58)-(59) from tenscontrol.mechanics.compressible.model, gamma and psi
    held."""
    from tenscontrol.mechanics import dynamics  # imported only when asked for
    from tenscontrol.mechanics.compressible import model as compressible

    n, p = structure.n_nodes, structure.bar_nodes
    psi = np.asarray(compressible.bar_force_densities(structure, q), dtype=float)
    opts = dict(bars="compressible", kinetic=kinetic, include_radius=bool(include_radius))
    jac = dynamics.jacobians(structure, q, qd, loads=f, gamma=gamma, bar_force_densities=psi,
                             **opts)
    Wc = np.asarray(jac["dloads"], dtype=float)
    # jacobians runs the dampers of springs and strings with l > l0; put the
    # at_rest rule's set in instead (exact at qd = 0, where those damper forces vanish, and
    # whenever M_qdd is constant)
    l = _string_lengths(structure, q)
    theirs = active_set(l, structure.string_rest_lengths, structure.string_is_spring)
    c = structure.string_damping * (m.active.astype(float) - theirs)
    Dq, Dqd, _ = _dampers(structure, q, qd, c)
    N = q.reshape(-1, 3)
    lb = np.linalg.norm(N[p[:, 1]] - N[p[:, 0]], axis=1)
    Xh = member_columns(p, q)
    Fu = np.hstack([-m.Yh * m.active[None, :], -Xh])
    kb, l0b = structure.bar_stiffness, structure.bar_rest_lengths
    K = (weighted_laplacian(structure.string_connectivity, gamma)
         + weighted_laplacian(structure.bar_connectivity, psi))
    forces = (np.abs(gravity_vector(structure)) + np.abs(f) + np.abs(m.Yh) @ np.abs(gamma)
              + np.abs(Xh) @ np.abs(psi) + np.abs(m.fd))
    M = dynamics.mass_matrix(structure, q, **opts)
    return dict(qdd=np.asarray(jac["qdd"], dtype=float), dq=jac["dq"] + Wc @ Dq,
                dqd=jac["dqd"] + Wc @ Dqd, B=Wc @ Fu, E=Wc, Fu=Fu,
                grad=np.vstack([m.grad, material_coefficients(kb, l0b, lb)[:, None] * Xh.T]),
                K=K, psi=psi, M=M, scale=np.abs(Wc) @ forces, reach=np.abs(Wc).sum(axis=1),
                J=np.eye(3 * n)[structure.fixed_coordinates])


# ---- the public entry point ----------------------------------------------------------------


def _check_options(structure, bars, kind, at_rest, kinetic, include_radius):
    if not isinstance(structure, Structure):
        raise TypeError(f"linearize: expected a tenscontrol.Structure, got "
                        f"{type(structure).__name__}")
    for name, value, allowed in (("bars", bars, ("rigid", "compressible")),
                                 ("kind", kind, ("control", "passive")),
                                 ("at_rest", at_rest, ("slack", "taut")),
                                 ("kinetic", kinetic, _KINETIC)):
        validation.choice(f"linearize: {name}", value, allowed)
    validation.flag("linearize: include_radius", include_radius)


def _scales(structure: Structure, bars: str, loads) -> str:
    """The extreme derived quantities of `structure`, for a message about an overflow."""
    parts = [f"loads up to {np.abs(loads).max():.3g} N"] if np.any(loads) else []
    if structure.n_strings:
        parts.append(f"string stiffness up to {structure.string_stiffness.max():.3g} N/m")
    if bars == "compressible" and structure.n_bars:
        parts.append(f"bar stiffness up to {structure.bar_stiffness.max():.3g} N/m")
    free = ~structure.fixed.all(axis=1)
    if free.any():
        parts.append(f"node masses down to {structure.node_masses[free].min():.3g} kg")
    lengths = np.concatenate([structure.bar_lengths, structure.string_lengths])
    if lengths.size:
        parts.append(f"member lengths {lengths.min():.3g} to {lengths.max():.3g} m")
    return ", ".join(parts)


def _check_finite_result(structure, bars, loads, named) -> None:
    """Raise ValueError naming the first non-finite entry of A, B or E (rows, columns named)."""
    for name, M, rows, cols in named:
        bad = ~np.isfinite(M)
        if bad.any():
            i, j = (int(k) for k in np.argwhere(bad)[0])
            entry = (f"{name}[{i}] = {M[i, j]} (the acceleration of {rows[i]})" if cols is None else
                     f"{name}[{i}, {j}] = {M[i, j]} (row {rows[i]}, column {cols[j]})")
            raise ValueError(
                f"linearize: {structure.name}: {name} has {int(bad.sum())} non-finite entries, "
                f"the first {entry}: "
                f"every member is finite but their products and ratios overflow "
                f"({_scales(structure, bars, loads)}). Bring loads, stiffness, masses and "
                "lengths to usable sizes (or change units)")


def _warn_if_not_at_rest(structure, bars, qdd, parts) -> bool:
    """True at an equilibrium; warn (suggesting tenscontrol.equilibrium) otherwise.

    The test: |qdd| at most 1e-8 of the acceleration scale of the forces at the point, or of
    the acceleration of the forces' rounding error (static_equilibrium's own floor), so that
    every configuration static_equilibrium calls converged (rtol <= 1e-8) passes."""
    size, ref = float(np.abs(qdd).max(initial=0.0)), float(np.max(parts["scale"], initial=0.0))
    floor = _ROUNDING_FACTOR * force_rounding(structure, bars) * parts["reach"]
    if size == 0.0 or size <= max(_EQUILIBRIUM_RTOL * ref, float(floor.max(initial=0.0))):
        return True
    rel = f"{size / ref:.2g}" if ref > 0 else "all"
    warnings.warn(f"linearize: {structure.name} is at rest but not in equilibrium at the operating "
                  f"point (max |qdd| = {size:.3g} m/s^2, {rel} of the force scale); "
                  "the model is still returned (at_equilibrium=False). Use "
                  "tenscontrol.equilibrium(...) to find a prestressed equilibrium first, or "
                  "tenscontrol.static_equilibrium(...) for the configuration its rest lengths "
                  "hold", stacklevel=4)  # caller, past the thread-policy wrapper
    return False


@sized_by
def linearize(structure: Structure, *, q=None, qd=None, gamma=None, loads=None, bars="rigid",
              kind="passive", kinetic="consistent", include_radius=False, at_rest="slack",
              outputs: Selection | None = None) -> LinearModel:
    """Linearize the dynamics of `structure` about an operating point.

    See docs/theory.md, "Linearization: force densities in, nodal forces as disturbances".

    Parameters
    ----------
    structure : Structure
    q, qd : array_like, shape (3n,) or (n, 3), optional
        Operating point [m], [m/s]; the structure's configuration at rest by default. qd must
        vanish on fixed coordinates; with rigid bars it should satisfy the bar constraints.
    gamma : array_like, shape (n_strings,), optional
        String force densities at the operating point [N/m], held in the control model; in
        the passive model the operating input is u* = gamma - gamma_law. By default the
        members' elastic laws at q (structure's rest lengths). Slack strings must get 0 and
        one-sided strings may not be negative.
    loads : array_like, shape (3n,) or (n, 3), optional
        External nodal forces at the operating point [N]; zero by default.
    bars : {"rigid", "compressible"}
        Rigid bars (`kinetic` is ignored) or compressible bars (docs/theory.md, "Compressible
        bars"; psi from the bar law at q, held in the control model).
    kind : {"passive", "control"}
        The model (see the section above): ``"passive"`` (default), the members follow their elastic
        laws and u adds to them; ``"control"``, the force densities are the commands (see
        :meth:`LinearModel.passive`).
    kinetic : {"consistent", "paper"}
        Kinetic-energy form of the compressible bars (docs/theory.md, "Compressible bars"; see
        :mod:`tenscontrol.mechanics.compressible.model`).
    include_radius : bool
        Solid-cylinder bar inertia (see :func:`tenscontrol.mass_matrix`).
    at_rest : {"slack", "taut"}
        A string with l == l0 (to 1e-12 relative) sits on the kink of its one-sided law.
        ``"slack"`` (default, the strict l > l0 rule of the string law, with a warning listing the
        strings): gamma 0, no damper, zero input column, zero law gradient, so neither model
        gets its material stiffness. ``"taut"``: the tension-side limit: gamma 0, damper on,
        input column -Yhat_k q, law gradient (k/l^2) s^T, so the passive model gets its
        material stiffness k s s^T / l^2.
    outputs : Selection, optional
        The output coordinates (:meth:`LinearModel.with_outputs`), e.g.
        ``Selection(nodes=[2, 3], axes="xz")``; all 3n positions by default.

    Returns
    -------
    LinearModel

    Notes
    -----
    Rigid bars: the closed form ``d qdd = W P (d xi + dJ^T lambda) - W J^T Mt dJ qdd`` of
    Hsu et al. (2021), eq. (49), dense and vectorized; the constraints are the fixed coordinates
    (through W) and the independent bars of ``rigid_model(structure).constrained_bars``.
    Compressible bars: A from ``tenscontrol.jacobians`` with gamma and psi held; B, E from its
    W_c. Under ``at_rest="taut"`` the dampers of strings at rest are added as ``W_c d f_d``,
    exact at qd = 0 and whenever M_qdd is constant (``kinetic="consistent"`` without radius).

    Warns
    -----
    UserWarning
        If qd = 0 but the point is not an equilibrium (|qdd| > 1e-8 times the acceleration scale
        of the forces, and more than twice the acceleration of their rounding error); if
        strings sit at their rest length under ``at_rest="slack"``.
    """
    _check_options(structure, bars, kind, at_rest, kinetic, include_radius)
    if bars == "compressible":
        reject_cables(structure, "linearize(bars='compressible')")
    outputs = check_selection(outputs, "linearize: outputs")
    q, qd, f = _operating_point(structure, q, qd, loads, bars)
    check_members(structure, "linearize", q, bars=bars)
    m = _members(structure, q, qd, at_rest)
    gamma = _held_gamma(structure, m, gamma)
    if bars == "rigid":
        parts = _rigid(structure, q, qd, f, gamma, m, bool(include_radius))
        inputs = tuple(f"gamma{k}" for k in range(structure.n_strings))
    else:
        parts = _compressible(structure, q, qd, f, gamma, m, kinetic, bool(include_radius))
        inputs = (tuple(f"gamma{k}" for k in range(structure.n_strings))
                  + tuple(f"psi{k}" for k in range(structure.n_bars)))
    nq = q.size
    states, disturbances = _names(structure)
    zeros, eye = np.zeros((nq, nq)), np.eye(nq)
    A = np.block([[zeros, eye], [parts["dq"], parts["dqd"]]])
    B = np.vstack([np.zeros_like(parts["B"]), parts["B"]])
    E = np.vstack([zeros, parts["E"]])
    _check_finite_result(structure, bars, f, (("qdd", parts["qdd"][:, None], states[:nq],
                                                None),))
    at_eq = not np.any(qd) and _warn_if_not_at_rest(structure, bars, parts["qdd"], parts)
    model = LinearModel(
        A=A, B=B, E=E, C=np.hstack([eye, zeros]), q=q, qd=qd, loads=f,
        gamma=gamma, bar_force_densities=parts["psi"], bars=bars, kind="control",
        at_equilibrium=bool(at_eq), constraint_jacobian=parts["J"], mass_matrix=parts["M"],
        stiffness=parts["K"], damping=-m.Dqd, force_input=parts["Fu"],
        force_density_gradient=parts["grad"], structure=structure, state_names=states,
        input_names=inputs, disturbance_names=disturbances, output_names=states[:nq])
    if outputs is not None:
        model = model.with_outputs(outputs)
    if kind == "passive":
        model = model.passive()
    _check_finite_result(structure, bars, f, (("A", model.A, states, states),
                                           ("B", model.B, states, inputs),
                                           ("E", model.E, states, disturbances)))
    return model
