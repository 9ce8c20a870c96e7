"""Feedback laws on string force densities: the objects the closed-loop simulator calls.

A controller commands the force densities of the actuated strings
(``structure.actuated_strings``). Its output u [N/m] is the change from the operating point
(docs/theory.md, "Linearization: force densities in, nodal forces as disturbances"), read in one of
two ways, named like the linear model it was designed on:

- ``kind="passive"``: the strings keep their elastic law and u adds to it,
  ``gamma_k = k_k (1 - l0_k / l_k)+ + u_k`` (an actuator in series with an elastic string);
- ``kind="control"``: u moves the commanded force density away from the prestress,
  ``gamma_k = gamma*_k + u_k`` (the string is a pure force-density actuator).

Either way a string can only pull: the simulator clips each applied force density of a
one-sided string to ``[0, gamma_max]`` (``String.gamma_max``; a two-sided spring to
``(-inf, gamma_max]``) and records when it did.

Any object with the attributes and methods of :class:`Controller` works; subclass it and
write :meth:`Controller.force_densities` for a static law of your own. :class:`StateFeedback`
and :class:`OutputFeedback` (a linear dynamic controller fed by a :class:`Measurement`) are
what :func:`tenscontrol.lqr` and :func:`tenscontrol.hinfsyn` return. Both are negative
feedback, as control engineers write them: ``u = -K (x - x*)`` and ``u = -K(s) y_m`` with
``K(s) = CK (sI - AK)^-1 BK + DK`` (version 1.0's OutputFeedback was positive feedback,
``u = +K(s) y_m``; its saved files are converted on load, see
:mod:`tenscontrol.control.storage`).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, fields

import numpy as np

from tenscontrol.mechanics.geometry import member_columns
from tenscontrol.model.selection import check_selection
from tenscontrol.model.tables import Presentable, titled_table, value_range

__all__ = ["Controller", "Measurement", "OutputFeedback", "StateFeedback", "measurement"]

_AXES = "xyz"
_KINDS = ("control", "passive")
_INDEX_FIELDS = ("strings", "coordinates", "string_nodes", "cables")   # integers, not floats


def _frozen_arrays(obj) -> None:
    """Store the array fields of a frozen dataclass (lists accepted) as read-only float copies."""
    for f in fields(obj):
        if f.type not in ("np.ndarray", np.ndarray) or f.name in _INDEX_FIELDS:
            continue
        value = getattr(obj, f.name)
        try:
            value = np.array(value, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{type(obj).__name__}: {f.name} must be an array of numbers, got "
                             f"{type(value).__name__}") from None
        if not np.all(np.isfinite(value)):
            raise ValueError(f"{type(obj).__name__}: {f.name} must be finite")
        value.setflags(write=False)
        object.__setattr__(obj, f.name, value)


def controller_repr(controller, *figures: str, law: str | None = None) -> str:
    """One line: the class, its feedback law, how u is applied, its sizes, then `figures`."""
    parts = ([f"law={law!r}"] if law else []) + [
             f"kind={getattr(controller, 'kind', None)!r}",
             f"commanded_strings={np.size(getattr(controller, 'strings', ()))}",
             *([f"commanded_cables={np.size(controller.cables)}"]
               if np.size(getattr(controller, "cables", ())) else []),
             f"states={getattr(controller, 'n_states', 0)}", *figures]
    return f"{type(controller).__name__}({', '.join(parts)})"


def controller_table(controller, *rows: tuple, law: str | None = None) -> str:
    """The summary table: the class, its law, how u is applied, its sizes, then `rows`."""
    strings = np.asarray(getattr(controller, "strings", ()))
    head = ([("law", law)] if law else []) + [
        ("kind", f"{getattr(controller, 'kind', None)}"),
        ("commanded strings", textwrap.shorten(
            f"{strings.size}: {', '.join(str(int(k)) for k in strings)}", 70, placeholder=" ...")),
        ("gamma_ref", value_range(getattr(controller, "gamma_ref", ()), "N/m"))]
    cables = np.asarray(getattr(controller, "cables", ()))
    if cables.size:
        head += [("commanded cables", ", ".join(str(int(c)) for c in cables)),
                 ("tension_ref", value_range(getattr(controller, "tension_ref", ()), "N"))]
    head += [("states", f"{getattr(controller, 'n_states', 0)}")]
    return titled_table(type(controller).__name__, head + list(rows))


class Controller(Presentable):
    """What the closed-loop simulator needs from a controller (subclass it for your own).

    Attributes
    ----------
    strings : ndarray of int, shape (nu,)
        The strings it commands, in the order of its output.
    gamma_ref : ndarray, shape (nu,)
        Their force densities at the operating point [N/m] (``kind="control"`` adds u to it).
    kind : {"passive", "control"}
        How u is applied (see the module docstring).
    n_states : int
        Number of internal states (0 for a static law).
    """

    strings: np.ndarray
    gamma_ref: np.ndarray
    kind: str = "passive"
    n_states: int = 0

    def __repr__(self) -> str:
        return controller_repr(self)

    def summary(self) -> str:
        """How u is applied, the commanded strings and the internal states as a table."""
        return controller_table(self)

    def initial_state(self) -> np.ndarray:
        """Internal state at t = 0, shape (n_states,)."""
        return np.zeros(self.n_states)

    def force_densities(self, t: float, q: np.ndarray, qd: np.ndarray,
                        xc: np.ndarray) -> np.ndarray:
        """The command u (nu,) [N/m] at time t [s], positions q (3n,) [m], velocities qd (3n,)
        [m/s] and internal state xc (n_states,)."""
        raise NotImplementedError("a Controller subclass must define force_densities")

    def state_derivative(self, t: float, q: np.ndarray, qd: np.ndarray,
                         xc: np.ndarray) -> np.ndarray:
        """d xc / dt, shape (n_states,)."""
        return np.zeros(0)


@dataclass(frozen=True, eq=False)
class Measurement(Presentable):
    """Measured signals ``y_m = h(q) - h(q*)``: node coordinates and string lengths.

    Attributes
    ----------
    C : ndarray, shape (ny, 2nq)
        The linearization of h on the state x = [q; qd] [1 for positions; m/m for lengths].
    q_ref : ndarray, shape (nq,)
        The operating point q* [m].
    coordinates : ndarray of int, shape (nc,)
        Measured coordinates (indices into q), the first nc signals.
    strings : ndarray of int, shape (nl,)
        Strings whose lengths are measured, the last nl signals.
    string_nodes : ndarray of int, shape (nl, 2)
        Their end nodes.
    lengths_ref : ndarray, shape (nl,)
        Their lengths at q* [m].
    names : tuple of str
        ``"x2"`` (node 2 along x), ``"l5"`` (length of string 5).
    """

    C: np.ndarray
    q_ref: np.ndarray
    coordinates: np.ndarray
    strings: np.ndarray
    string_nodes: np.ndarray
    lengths_ref: np.ndarray
    names: tuple

    def __post_init__(self):
        _frozen_arrays(self)
        for name in ("coordinates", "strings", "string_nodes"):
            value = np.array(getattr(self, name), dtype=np.int64)
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    @property
    def n_signals(self) -> int:
        return self.C.shape[0]

    def __repr__(self) -> str:
        names = textwrap.shorten(" ".join(self.names), 80, placeholder=" ...")
        return (f"Measurement(signals={self.n_signals}, coordinates={self.coordinates.size}, "
                f"string_lengths={self.strings.size}: {names})")

    def summary(self) -> str:
        """The measured signals as a table."""
        return titled_table("Measurement", [
            ("signals", f"{self.n_signals}"),
            ("coordinates", f"{self.coordinates.size}"), ("string lengths", f"{self.strings.size}"),
            ("names", textwrap.shorten(" ".join(self.names), 70, placeholder=" ..."))])

    def __call__(self, q: np.ndarray, qd: np.ndarray | None = None) -> np.ndarray:
        """The measured deviations at positions q (3n,), shape (ny,) [m] (velocities qd are
        not measured here; the argument is the measurements' common signature)."""
        pos = q[self.coordinates] - self.q_ref[self.coordinates]
        if self.strings.size == 0:
            return pos
        N = q.reshape(-1, 3)
        p = self.string_nodes
        lengths = np.sqrt(((N[p[:, 1]] - N[p[:, 0]]) ** 2).sum(axis=1))
        return np.concatenate([pos, lengths - self.lengths_ref])


def measurement(structure, measurements, q_ref=None) -> Measurement:
    """The :class:`Measurement` of chosen node coordinates and string lengths.

    Parameters
    ----------
    structure : Structure
    measurements : Selection
        The measured node coordinates (fixed ones are left out) and, through ``strings=``,
        string lengths, e.g. ``Selection(nodes=[2, 3], axes="xz")`` or
        ``Selection(nodes=[], strings=[0, 1])`` (lengths only).
    q_ref : array_like, shape (3n,) or (n, 3), optional
        Operating point [m]; the structure's nodes by default.

    Returns
    -------
    Measurement
    """
    sel = check_selection(measurements, "measurement: measurements", strings=True)
    if sel is None:
        raise TypeError("measurement: measurements must be a tenscontrol.Selection, e.g. "
                        "Selection(nodes=[2, 3], axes='xz'); got None")
    n = structure.n_nodes
    q_ref = (structure.nodes if q_ref is None else np.asarray(q_ref, dtype=float)).reshape(-1)
    if q_ref.shape != (3 * n,) or not np.all(np.isfinite(q_ref)):
        raise ValueError(f"measurement: q_ref must be {3 * n} finite positions [m] (an "
                         f"({n}, 3) array), got shape {np.shape(q_ref)}")
    strings = np.array(sel.all_strings, dtype=np.int64)
    bad = [int(k) for k in strings if not 0 <= k < structure.n_strings]
    if bad:
        raise ValueError(f"measurement: string {bad[0]} does not exist; the structure has "
                         f"{structure.n_strings} strings (indices 0 to {structure.n_strings - 1})")
    coords = sel.coordinates(structure, "measurement")
    nq = 3 * n
    C = np.zeros((coords.size + strings.size, 2 * nq))
    C[np.arange(coords.size), coords] = 1.0
    pairs = structure.string_nodes[strings]
    N = q_ref.reshape(-1, 3)
    lengths = np.linalg.norm(N[pairs[:, 1]] - N[pairs[:, 0]], axis=1)
    if np.any(lengths == 0):
        raise ValueError("measurement: a measured string has zero length at q_ref")
    # d l_k = s_k^T (dq_j - dq_i) / l_k = (Yhat_k q)^T dq / l_k  (Yhat_k q = s on j, -s on i)
    C[coords.size:, :nq] = member_columns(pairs, q_ref).T / lengths[:, None]
    names = (tuple(f"{_AXES[c % 3]}{c // 3}" for c in coords)
             + tuple(f"l{int(k)}" for k in strings))
    return Measurement(C, q_ref, coords, strings, pairs.reshape(-1, 2), lengths, names)


def runtime_controller(value):
    """The controller a simulation runs: `value` itself, or the ``.controller`` of a design.

    Every synthesis function (``lqr``, ``dlqr``, ``hinfsyn``, ``lqg``, ``discrete_lqg``,
    ``extended_lqg``, ``mpc``, ``shape_change``) returns a design holding its controller; a
    design is recognized as a dataclass with a ``controller`` field and no law of its own
    (neither ``force_densities`` nor ``update`` on its class).
    """
    kind = type(value)
    if ("controller" in getattr(value, "__dataclass_fields__", {})
            and not hasattr(kind, "force_densities") and not hasattr(kind, "update")):
        return value.controller
    return value


def check_kind(kind: str) -> None:
    """Reject a kind other than "passive" and "control"."""
    if kind not in _KINDS:
        raise ValueError(f"controller kind must be 'passive' or 'control', got {kind!r}")


def check_controller_fields(obj) -> None:
    """Store the array fields of a controller dataclass (StateFeedback, OutputFeedback,
    DiscreteFeedback) as read-only float copies and its strings as int64; check the kind and
    that gamma_ref has one force density per string."""
    _frozen_arrays(obj)
    strings = np.asarray(obj.strings).reshape(-1)
    if strings.size and not np.issubdtype(strings.dtype, np.integer):
        raise ValueError(f"{type(obj).__name__}: strings must be string indices (integers), "
                         f"got {strings.tolist()}")
    object.__setattr__(obj, "strings", strings.astype(np.int64))
    check_kind(obj.kind)
    if obj.gamma_ref.shape != (strings.size,):
        raise ValueError(f"{type(obj).__name__}: gamma_ref must have one force density per "
                         f"string ({strings.size}), got shape {obj.gamma_ref.shape}")


@dataclass(frozen=True, eq=False)
class StateFeedback(Controller):
    """Static state feedback ``u = -K (x - x*)`` with x = [q; qd] (negative feedback).

    Attributes
    ----------
    K : ndarray, shape (nu, 2nq)
        Gain [N/m per m, N/m per m/s; a cable's rows N per m, N per m/s].
    q_ref : ndarray, shape (nq,)
        Operating point q* [m] (qd* = 0).
    strings, gamma_ref, kind
        As for every :class:`Controller`.
    cables : ndarray of int, shape (nc,)
        Clustered cables it commands (rigid bars), their inputs after the strings': u is the
        change of the cable's tension [N] (docs/theory.md, "Clustered cables"); none by
        default.
    tension_ref : ndarray, shape (nc,)
        Their tensions at the operating point [N] (``kind="control"`` adds u to it).
    """

    K: np.ndarray
    q_ref: np.ndarray
    strings: np.ndarray
    gamma_ref: np.ndarray
    kind: str = "passive"
    cables: np.ndarray = ()
    tension_ref: np.ndarray = ()
    n_states = 0

    def __post_init__(self):
        check_controller_fields(self)
        cables = np.asarray(self.cables).reshape(-1)
        if cables.size and not np.issubdtype(cables.dtype, np.integer):
            raise ValueError(f"StateFeedback: cables must be cable indices (integers), got "
                             f"{cables.tolist()}")
        object.__setattr__(self, "cables", cables.astype(np.int64))
        if self.tension_ref.shape != (cables.size,):
            raise ValueError(f"StateFeedback: tension_ref must have one tension [N] per cable "
                             f"({cables.size}), got shape {self.tension_ref.shape}")
        nu, nx = self.K.shape if self.K.ndim == 2 else (-1, -1)
        if nx != 2 * self.q_ref.size or nu != self.strings.size + cables.size:
            raise ValueError(f"StateFeedback: K must be (n_strings + n_cables, 2 nq) = "
                             f"({self.strings.size + cables.size}, {2 * self.q_ref.size}), got "
                             f"{self.K.shape}")

    def __repr__(self) -> str:
        return controller_repr(self, f"|K|_F={np.linalg.norm(self.K):.4g}",
                                law="u = -K (x - x*)")

    def summary(self) -> str:
        """The law, the commanded strings and the gain's size as a table."""
        return controller_table(self, ("||K||_F", f"{np.linalg.norm(self.K):.4g}"),
                                 law="u = -K (x - x*)")

    def force_densities(self, t, q, qd, xc):
        nq = self.q_ref.size
        return -(self.K[:, :nq] @ (q - self.q_ref) + self.K[:, nq:] @ qd)


@dataclass(frozen=True, eq=False)
class OutputFeedback(Controller):
    """Linear dynamic output feedback from a :class:`Measurement` (negative feedback).

    ``xc' = AK xc + BK y_m``, ``u = -(CK xc + DK y_m)``, ``y_m = measurement(q)``: the
    controller ``K(s) = CK (sI - AK)^-1 BK + DK`` acts as ``u = -K(s) y_m``, the sign of
    :class:`StateFeedback`'s ``u = -K (x - x*)``. (Version 1.0 used ``u = +(CK xc + DK y_m)``,
    the convention of python-control's and MATLAB's hinfsyn; :func:`tenscontrol.hinfsyn` now
    returns CK and DK negated, so every closed loop is the one of 1.0.)

    Attributes
    ----------
    AK, BK, CK, DK : ndarray
        (nk, nk), (nk, ny), (nu, nk), (nu, ny).
    measurement : Measurement or SensorMeasurement
        ``y_m = measurement(q, qd)``: node coordinates and string lengths
        (:func:`measurement`) or a sensor set's signals
        (:class:`tenscontrol.control.estimators.SensorMeasurement`, from
        :func:`tenscontrol.lqg`); ``measurement.C`` is its linearization.
    strings, gamma_ref, kind
        As for every :class:`Controller`.
    """

    AK: np.ndarray
    BK: np.ndarray
    CK: np.ndarray
    DK: np.ndarray
    measurement: Measurement
    strings: np.ndarray
    gamma_ref: np.ndarray
    kind: str = "passive"

    def __post_init__(self):
        check_controller_fields(self)
        nk, ny, nu = self.AK.shape[0], self.measurement.n_signals, self.strings.size
        shapes = {"AK": (nk, nk), "BK": (nk, ny), "CK": (nu, nk), "DK": (nu, ny)}
        for name, shape in shapes.items():
            if getattr(self, name).shape != shape:
                raise ValueError(f"OutputFeedback: {name} must have shape {shape}, got "
                                 f"{getattr(self, name).shape}")

    @property
    def n_states(self) -> int:
        return self.AK.shape[0]

    def __repr__(self) -> str:
        return controller_repr(self, f"measured_signals={self.measurement.n_signals}",
                                law="u = -(CK xc + DK y_m)")

    def summary(self) -> str:
        """The law, the commanded strings, the states and the measurement as a table."""
        return controller_table(self, ("measured signals", f"{self.measurement.n_signals}"),
                                 law="u = -(CK xc + DK y_m)")

    def force_densities(self, t, q, qd, xc):
        return -(self.CK @ xc + self.DK @ self.measurement(q, qd))

    def state_derivative(self, t, q, qd, xc):
        return self.AK @ xc + self.BK @ self.measurement(q, qd)

    @property
    def sys(self):
        """The command map as a python-control StateSpace from y_m to u: ``u = sys(y_m)``, so
        ``sys = -K(s) = ss(AK, BK, -CK, -DK)`` (python-control's positive-feedback
        convention of ``hinfsyn`` and ``P.lft(sys)``; the same system as in version 1.0)."""
        import control

        return control.ss(self.AK, self.BK, -self.CK, -self.DK,
                          inputs=list(self.measurement.names),
                          outputs=[f"gamma{k}" for k in self.strings])
