"""How commanded force densities act on the structure: clipping, nodal forces and records.

The simulator's mechanics kernels apply every string's elastic law. A controller's command
(:mod:`tenscontrol.control.controllers`) changes the force density of the strings it commands to

    gamma_applied = clip(gamma_cmd, lower, gamma_max),
    gamma_cmd = law(q) + u          (kind "passive")   or   gamma_ref + u   (kind "control"),

with lower = 0 for one-sided strings (they cannot push) and -inf for two-sided springs. The
difference ``gamma_applied - law(q)`` enters as an extra nodal force ``-(gamma_applied - law)
Yhat_k q``, the same force the kernels would apply for that force density, so the rigid-bar
correction and the energy balance see it as external work (docs/theory.md, "Rigid bars: constraints
and multipliers").

The arithmetic is compiled once, in :func:`tenscontrol.mechanics.actuation.actuated_forces` on an
:class:`~tenscontrol.mechanics.actuation.ActuatorRecord` (re-exported here): the Python step loop
calls it through :meth:`Actuators.apply`, the compiled loop of
:mod:`tenscontrol.simulation.rigid_feedback` directly, and the extended Kalman filter predicts
with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tenscontrol.control.controllers import check_kind
# the law itself lives in the mechanics, where the extended Kalman filter predicts with it too
from tenscontrol.mechanics.actuation import (ActuatorRecord, actuated_forces, actuator_record,
                                             member_laws)
from tenscontrol.model.tables import Presentable, html_table

__all__ = ["ActuatorRecord", "Actuators", "ControlRecord", "actuated_forces", "member_laws"]


class Actuators:
    """The actuated strings of a structure and the map from commands to nodal forces.

    Parameters
    ----------
    structure : Structure
    strings : array_like of int
        The commanded strings, in command order; each must be ``String.actuated``.
    gamma_ref : array_like, shape (nu,)
        Operating-point force densities [N/m] (used by ``kind="control"``).
    kind : {"passive", "control"}
    cables : array_like of int, optional
        Commanded clustered cables (rigid bars), their commands after the strings': a cable's
        tension [N] is ``clip(law(q) + u, 0, inf)`` (passive) or ``clip(T_ref + u, 0, inf)``
        (control), applied as the extra nodal force ``-(T_applied - T_law) g_c``, g_c = dL_c/dq
        (docs/theory.md, "Clustered cables"); its damper acts while it pulls.
    tension_ref : array_like, shape (n_cables,), optional
        The cables' operating-point tensions T_ref [N].
    """

    def __init__(self, structure, strings, gamma_ref, kind: str, cables=(), tension_ref=()):
        strings = np.asarray(strings, dtype=np.int64).reshape(-1)
        actuated = set(int(k) for k in structure.actuated_strings)
        for k in strings:
            if not 0 <= k < structure.n_strings:
                raise ValueError(f"controller: string {int(k)} does not exist; the structure "
                                 f"has {structure.n_strings} strings")
            if int(k) not in actuated:
                a, b = structure.string_nodes[k]
                raise ValueError(f"controller: string {int(k)} (nodes {a}->{b}) is not actuated "
                                 "(String.actuated is False); design the controller on "
                                 "model.actuated() or mark the string actuated")
            if structure.string_cable[k] >= 0:
                raise ValueError(f"controller: string {int(k)} is a segment of cable "
                                 f"{int(structure.string_cable[k])}; commanding a cable (one "
                                 "input per motor) is not modelled yet: command strings that "
                                 "are not cable segments")
        if len(set(strings.tolist())) != strings.size:
            raise ValueError("controller: a string appears twice in controller.strings")
        check_kind(kind)
        gamma_ref = np.asarray(gamma_ref, dtype=float).reshape(-1)
        if gamma_ref.shape != strings.shape:
            raise ValueError(f"controller.gamma_ref must have one entry per commanded string "
                             f"({strings.size}), got shape {gamma_ref.shape}")
        self.strings, self.gamma_ref, self.kind = strings, gamma_ref, kind
        self.n = strings.size
        pairs = structure.string_nodes[strings]
        self.i, self.j = pairs[:, 0], pairs[:, 1]
        self.k = structure.string_stiffness[strings]
        self.l0 = structure.string_rest_lengths[strings]
        self.spring = structure.string_is_spring[strings]
        self.c = structure.string_damping[strings]
        self.lower = np.where(self.spring, -np.inf, 0.0)
        self.upper = structure.string_gamma_max[strings]
        self.n_nodes = structure.n_nodes
        self.record = actuator_record(structure, strings, gamma_ref, kind)
        self._set_cables(structure, cables, tension_ref)

    def _set_cables(self, structure, cables, tension_ref) -> None:
        """Check and store the commanded cables; extend n, spring and upper by them."""
        cables = np.asarray(cables, dtype=np.int64).reshape(-1)
        for c in cables:
            if not 0 <= c < structure.n_cables:
                raise ValueError(f"controller: cable {int(c)} does not exist; structure "
                                 f"{structure.name!r} has {structure.n_cables} cables")
        if np.unique(cables).size != cables.size:
            raise ValueError("controller: a cable appears twice in controller.cables")
        tension_ref = np.asarray(tension_ref, dtype=float).reshape(-1)
        if tension_ref.shape != cables.shape:
            raise ValueError(f"controller.tension_ref must have one tension per commanded cable "
                             f"({cables.size}), got shape {tension_ref.shape}")
        self.cables, self.tension_ref, self.n_strings = cables, tension_ref, self.n
        self.cable_nodes = [np.asarray(structure.cable_nodes[c], dtype=np.int64) for c in cables]
        self.cable_k = structure.cable_stiffness[cables]
        self.cable_l0 = structure.cable_rest_lengths[cables]
        self.cable_c = structure.cable_damping[cables]
        self.n = self.n_strings + cables.size
        self.spring = np.concatenate([self.spring, np.zeros(cables.size, dtype=bool)])
        self.upper = np.concatenate([self.upper, np.full(cables.size, np.inf)])

    def _cable_forces(self, q, qd, u, f, applied, cmd) -> None:
        """Add the commanded cables' extra nodal forces to f (3n,); their tensions [N] to
        applied and cmd (n_cables,)."""
        N = q.reshape(-1, 3)
        V = None if qd is None else qd.reshape(-1, 3)
        for a, nodes in enumerate(self.cable_nodes):
            s = N[nodes[1:]] - N[nodes[:-1]]
            l = np.linalg.norm(s, axis=1)
            g = np.zeros_like(N)
            np.add.at(g, nodes[1:], s / l[:, None])
            np.subtract.at(g, nodes[:-1], s / l[:, None])
            L = l.sum()
            taut = L > self.cable_l0[a]              # the kernels' slack rule for the cable
            law = self.cable_k[a] * (L - self.cable_l0[a]) if taut else 0.0
            cmd[a] = (law if self.kind == "passive" else self.tension_ref[a]) + u[a]
            applied[a] = max(cmd[a], 0.0)            # a cable pulls only
            extra = applied[a] - law
            if V is not None and self.cable_c[a] != 0.0:
                rate = self.cable_c[a] * float(np.sum(g * V))  # c dL/dt
                extra += (rate if applied[a] > 0.0 else 0.0) - (rate if taut else 0.0)
            f -= extra * g.reshape(-1)

    def law(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Member vectors s (nu, 3) [m], elastic-law force densities (nu,) [N/m] at q, and
        whether the kernels count each member active (bool (nu,): springs, or l > l0)."""
        n = self.n_strings
        s, law, active = np.empty((n, 3)), np.empty(n), np.empty(n, bool)
        member_laws(_flat(q), self.record, s, law, active)
        return s, law, active

    def apply(self, q: np.ndarray, u: np.ndarray, qd: np.ndarray | None = None):
        """Nodal forces (3n,) [N] of the command u (nu,) [N/m] at positions q and velocities
        qd (3n,), with the applied and commanded force densities (nu,) [N/m].

        A string's damper acts while the string pulls (docs/theory.md, "The Lagrangian model in
        Cartesian nodal coordinates"): the kernels switch it by length (l > l0), so it is taken out
        here for a string the command leaves slack, and put in for a string the command pulls
        although l <= l0.
        """
        u = _flat(u)
        if u.shape != (self.n,):
            raise ValueError(f"u must hold one force density per commanded string and one "
                             f"tension per commanded cable ({self.n}), got shape {u.shape}")
        f, applied, cmd = np.empty(3 * self.n_nodes), np.empty(self.n), np.empty(self.n)
        ns = self.n_strings
        actuated_forces(_flat(q), _NO_VELOCITIES if qd is None else _flat(qd), u[:ns],
                        self.record, f, applied[:ns], cmd[:ns])
        if self.cables.size:
            self._cable_forces(_flat(q), None if qd is None else _flat(qd), u[ns:], f,
                               applied[ns:], cmd[ns:])
        return f, applied, cmd


_NO_VELOCITIES = np.zeros(0)


def _flat(x) -> np.ndarray:
    """x as a flat C-contiguous float array (no copy when it is one already)."""
    return np.ascontiguousarray(x, dtype=float).reshape(-1)


@dataclass(frozen=True, eq=False)
class ControlRecord(Presentable):
    """What the actuators did along a closed-loop trajectory, at its output times.

    Attributes
    ----------
    t : ndarray, shape (nt,)
        Output times [s].
    strings : ndarray of int, shape (nu,)
        The commanded strings.
    u : ndarray, shape (nt, nu)
        The controller's command (change from the operating point) [N/m].
    commanded : ndarray, shape (nt, nu)
        The force density asked of each string before clipping [N/m].
    applied : ndarray, shape (nt, nu)
        The force density applied after clipping to [0, gamma_max] [N/m].
    slack, saturated : ndarray of bool, shape (nt, nu)
        Where the applied force density is 0 (a string that cannot pull: commanded <= 0, or
        slack and not commanded taut) and where the command exceeded gamma_max.
    controller_states : ndarray, shape (nt, n_states)
    cables : ndarray of int, shape (n_cables,)
        The commanded clustered cables: the last n_cables columns of u, commanded and applied
        are their tensions [N] (none by default).
    """

    t: np.ndarray
    strings: np.ndarray
    u: np.ndarray
    commanded: np.ndarray
    applied: np.ndarray
    slack: np.ndarray
    saturated: np.ndarray
    controller_states: np.ndarray
    cables: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def _duration(self, flags: np.ndarray) -> np.ndarray:
        # trapezoid over the output grid: an interval counts half for each flagged end
        if self.t.size < 2:
            return np.zeros(flags.shape[1])
        w = np.diff(self.t)[:, None]
        return (0.5 * w * (flags[1:].astype(float) + flags[:-1])).sum(axis=0)

    @property
    def slack_time(self) -> np.ndarray:
        """(nu,) time each string spent slack [s] (resolution: the output grid)."""
        return self._duration(self.slack)

    @property
    def saturated_time(self) -> np.ndarray:
        """(nu,) time each string spent saturated [s]."""
        return self._duration(self.saturated)

    def first_slack(self) -> np.ndarray:
        """(nu,) first output time at which each string was slack [s]; nan if never."""
        hit = self.slack.any(axis=0)
        first = np.argmax(self.slack, axis=0)
        return np.where(hit, self.t[first], np.nan)

    def __repr__(self) -> str:
        t = f"[{self.t[0]:g}, {self.t[-1]:g}] s" if self.t.size else "[]"
        u = float(np.abs(self.u).max(initial=0.0))
        return (f"ControlRecord(commanded_strings={self.strings.size}, samples={self.t.size}, "
                f"t={t}, max|u|={u:.4g} N/m, slack strings={int(self.slack.any(axis=0).sum())}, "
                f"saturated strings={int(self.saturated.any(axis=0).sum())}, "
                f"controller_states={self.controller_states.shape[1]})")

    def _labels(self) -> list:
        """The column labels: string indices, then "c<i>" for commanded cable i (u in N)."""
        return [str(int(k)) for k in self.strings] + [f"c{int(c)}" for c in self.cables]

    def summary(self) -> str:
        """One line per commanded string (then cable, ``c<i>``, in N): command range, slack and
        saturated time."""
        lines = ["string  u min [N/m]  u max [N/m]  applied min  applied max  slack [s]  "
                 "saturated [s]"]
        for c, k in enumerate(self._labels()):
            lines.append(f"{k:>6}  {self.u[:, c].min():>11.4g}  {self.u[:, c].max():>11.4g}"
                         f"  {self.applied[:, c].min():>11.4g}  {self.applied[:, c].max():>11.4g}"
                         f"  {self.slack_time[c]:>9.4g}  {self.saturated_time[c]:>13.4g}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = [(k, *(f"{v:.4g}" for v in (
            self.u[:, c].min(), self.u[:, c].max(), self.applied[:, c].min(),
            self.applied[:, c].max(), self.slack_time[c], self.saturated_time[c])))
            for c, k in enumerate(self._labels())]
        return html_table(rows, caption="ControlRecord", header=[
            "string", "u min [N/m]", "u max [N/m]", "applied min [N/m]", "applied max [N/m]",
            "slack [s]", "saturated [s]"])


def control_record(actuators: Actuators, controller, t, Q, QD, XC) -> ControlRecord:
    """Re-evaluate the controller at the output samples (it is a function of t, q, qd, xc)."""
    nt, nu = t.size, actuators.n
    u, cmd, applied = (np.empty((nt, nu)) for _ in range(3))
    for r in range(nt):
        u[r] = controller.force_densities(t[r], Q[r], QD[r], XC[r])
        _, applied[r], cmd[r] = actuators.apply(Q[r], u[r], QD[r])
    slack = (applied <= 0.0) & ~actuators.spring[None, :]
    saturated = cmd > actuators.upper[None, :]
    return ControlRecord(t, actuators.strings, u, cmd, applied, slack, saturated, XC,
                         actuators.cables)


class ControllerError(Exception):
    """The controller failed or returned a wrong value during a simulation."""


_NEEDED = ("strings", "gamma_ref", "kind", "n_states", "initial_state", "force_densities",
           "state_derivative")


class ClosedLoop:
    """A controller attached to the simulator's state ``y = [q, qd, w, xc]``.

    Parameters
    ----------
    structure : Structure
    controller : Controller
        Duck-typed (:class:`tenscontrol.controllers.Controller`).
    """

    def __init__(self, structure, controller):
        missing = [a for a in _NEEDED if not hasattr(controller, a)]
        if missing:
            raise TypeError(f"controller: {type(controller).__name__} lacks {', '.join(missing)}; "
                            "a controller needs the attributes strings, gamma_ref, kind, "
                            "n_states and the methods of tenscontrol.controllers.Controller")
        self.controller = controller
        self.actuators = Actuators(structure, controller.strings, controller.gamma_ref,
                                   controller.kind, getattr(controller, "cables", ()),
                                   getattr(controller, "tension_ref", ()))
        self.nq = 3 * structure.n_nodes
        self.nb = 2 * self.nq + 1                      # q, qd, w: the mechanics' own state
        self.n_states = int(controller.n_states)
        xc0 = np.asarray(controller.initial_state(), dtype=float).reshape(-1)
        if xc0.shape != (self.n_states,) or not np.all(np.isfinite(xc0)):
            raise ValueError(f"controller.initial_state() must return {self.n_states} finite "
                             f"values (controller.n_states), got shape {xc0.shape}")
        self.xc0 = xc0

    def _split(self, y):
        nq = self.nq
        return y[:nq].copy(), y[nq:2 * nq].copy(), y[self.nb:].copy()

    def _call(self, method: str, t: float, y: np.ndarray, n: int, what: str):
        """(q, qd, controller.<method>(t, q, qd, xc)) with its shape and values checked."""
        q, qd, xc = self._split(y)
        try:
            out = np.asarray(getattr(self.controller, method)(t, q, qd, xc), dtype=float)
        except Exception as exc:
            raise ControllerError(f"controller.{method} raised {type(exc).__name__}: "
                                  f"{exc}") from exc
        if out.shape != (n,):
            raise ControllerError(f"controller.{method} must return {n} {what}, got shape "
                                  f"{out.shape}")
        if not np.all(np.isfinite(out)):
            raise ControllerError(f"controller.{method} returned non-finite values at "
                                  f"t = {t:g} s")
        return q, qd, out

    def forces(self, t: float, y: np.ndarray) -> np.ndarray:
        """Nodal forces (3n,) [N] of the controller's command at (t, y)."""
        q, qd, u = self._call("force_densities", t, y, self.actuators.n,
                              "force densities [N/m] (one per controller.strings)")
        return self.actuators.apply(q, u, qd)[0]

    def derivative(self, t: float, y: np.ndarray) -> np.ndarray:
        """d xc / dt, shape (n_states,)."""
        if self.n_states == 0:
            return np.zeros(0)
        return self._call("state_derivative", t, y, self.n_states,
                          "values (controller.n_states)")[2]

    def record(self, t: np.ndarray, Y: np.ndarray) -> ControlRecord:
        """The :class:`ControlRecord` of the output samples Y (nt, nb + n_states)."""
        nq = self.nq
        return control_record(self.actuators, self.controller, t, Y[:, :nq], Y[:, nq:2 * nq],
                              Y[:, self.nb:])
