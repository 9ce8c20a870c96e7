"""Sensors as objects: what a tensegrity's instruments read, with noise, and its linearization.

:func:`sensors` builds a :class:`SensorSet` of

- ``string_lengths`` (draw-wire or stretch sensors): ``l_k = |n_j - n_i|`` [m];
- ``string_tensions`` (load cells in series with a string): the member force
  ``gamma_k l_k + c_k ldot_k`` [N], gamma from the member law of
  :mod:`tenscontrol.mechanics.laws` (slack rule included; the damper acts while the string
  does) unless the force density is held (a commanded string, see ``gamma``/``held``);
- ``node_positions`` (motion capture): node coordinates [m], a :class:`Selection`;
- ``bar_directions`` (an IMU's orientation on a bar): the unit vector ``b / |b|`` of
  ``b = n_j - n_i`` [-], 3 signals;
- ``bar_rates`` (an IMU's gyroscope on a bar): the bar's angular velocity
  ``w = b x bd / |b|^2`` [rad/s] in the world frame, 3 signals (the spin about the bar's own
  axis is not part of the model, so it is not measured).

Each sensor has a noise model (white noise of standard deviation ``std``, a constant ``bias``,
a ``quantization`` step, in the signal's unit) and a sample ``rate`` [Hz] (``inf``:
continuous). ``a + b`` concatenates two sets of one structure (e.g. load cells and IMUs of
different noise). :meth:`SensorSet.outputs` is the noiseless ``y = h(q, qd)``,
:meth:`SensorSet.read` adds the noise from a numpy Generator, :meth:`SensorSet.measure`
evaluates a Trajectory, and :meth:`SensorSet.output_matrices` gives the analytic Jacobians
``dh/dq``, ``dh/dqd`` and ``dh/dgamma`` (checked against central differences in
tests/test_sensors.py).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import numpy as np

from tenscontrol import validation
from tenscontrol.model.cables import reject_cables
from tenscontrol.mechanics import laws
from tenscontrol.model.selection import AXES, Selection, check_selection
from tenscontrol.model.structure import Structure
from tenscontrol.model.tables import Presentable, titled_table, value_range

__all__ = ["KINDS", "SensorSet", "sensors"]

#: The sensor kinds, in the order :func:`sensors` lists them.
KINDS = ("string_length", "string_tension", "node_position", "bar_direction", "bar_rate")
_WIDTH = {"string_length": 1, "string_tension": 1, "node_position": 1, "bar_direction": 3,
          "bar_rate": 3}
_PREFIX = {"string_length": "l", "string_tension": "T", "bar_direction": "u", "bar_rate": "w"}


def _cross(v: np.ndarray) -> np.ndarray:
    """The cross-product matrices [v]x of the rows of v (m, 3) -> (m, 3, 3)."""
    z = np.zeros(v.shape[0])
    return np.stack([np.stack([z, -v[:, 2], v[:, 1]], -1), np.stack([v[:, 2], z, -v[:, 0]], -1),
                     np.stack([-v[:, 1], v[:, 0], z], -1)], axis=1)


@dataclass(frozen=True, eq=False)
class SensorSet(Presentable):
    """Sensors on one structure, each with its noise model and sample rate.

    Attributes
    ----------
    structure : Structure
    kinds : tuple of str
        The kind of each sensor (:data:`KINDS`).
    items : ndarray of int, shape (n_sensors,)
        What each sensor reads: a string (lengths, tensions), a coordinate index into q (node
        positions) or a bar (directions, rates).
    std, bias, quantization : ndarray, shape (n_sensors,)
        White-noise standard deviation per sample, constant offset and quantization step (0:
        none), in the signal's unit (m, N, -, rad/s).
    rate : ndarray, shape (n_sensors,)
        Sample rate [Hz]; ``inf`` for a continuous signal.
    """

    structure: Structure
    kinds: tuple
    items: np.ndarray
    std: np.ndarray
    bias: np.ndarray
    quantization: np.ndarray
    rate: np.ndarray

    def __post_init__(self):
        for name in ("items", "std", "bias", "quantization", "rate"):
            value = np.array(getattr(self, name), dtype=np.int64 if name == "items" else float)
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "kinds", tuple(self.kinds))

    @property
    def n_sensors(self) -> int:
        return len(self.kinds)

    @property
    def signal_sensor(self) -> np.ndarray:
        """The sensor (int) each signal comes from, shape (n_signals,)."""
        return np.repeat(np.arange(self.n_sensors), [_WIDTH[k] for k in self.kinds])

    @property
    def n_signals(self) -> int:
        return int(sum(_WIDTH[k] for k in self.kinds))

    @property
    def names(self) -> tuple:
        """Signal names: ``"l5"`` (length of string 5), ``"T5"`` (its tension), ``"x2"``
        (node 2 along x), ``"ux1"`` (bar 1's direction, x), ``"wz1"`` (its rate about z)."""
        out = []
        for kind, item in zip(self.kinds, self.items):
            if kind == "node_position":
                out.append(f"{AXES[item % 3]}{item // 3}")
            elif _WIDTH[kind] == 3:
                out += [f"{_PREFIX[kind]}{a}{item}" for a in AXES]
            else:
                out.append(f"{_PREFIX[kind]}{item}")
        return tuple(out)

    def rows(self, sensor: int) -> np.ndarray:
        """The signal rows (int) of sensor `sensor`."""
        return np.flatnonzero(self.signal_sensor == sensor)

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}s={self.kinds.count(k)}" for k in KINDS if k in self.kinds)
        return (f"SensorSet(structure={self.structure.name!r}, sensors={self.n_sensors}, "
                f"signals={self.n_signals}" + (f", {counts}" if counts else "") + ")")

    def summary(self) -> str:
        """The sensors by kind, their noise and rates, and the signal names as a table."""
        rows = [("structure", self.structure.name), ("sensors", f"{self.n_sensors}"),
                ("signals", f"{self.n_signals}")]
        rows += [(f"{k}s", f"{self.kinds.count(k)}") for k in KINDS if k in self.kinds]
        finite = self.rate[np.isfinite(self.rate)]
        rows += [("std", value_range(self.std, "(signal units)")),
                 ("bias", value_range(self.bias, "(signal units)")),
                 ("rate", ", ".join(
                     ([value_range(finite, "Hz")] if finite.size else [])
                     + ([f"{self.n_sensors - finite.size} continuous"]
                        if finite.size < self.n_sensors else []))),
                 ("names", textwrap.shorten(" ".join(self.names), 70, placeholder=" ..."))]
        return titled_table("SensorSet", rows)

    def __add__(self, other):
        if not isinstance(other, SensorSet):
            return NotImplemented
        if other.structure is not self.structure:
            raise ValueError("SensorSet + SensorSet: both must be sensors of the same Structure "
                             "object")
        cat = lambda name: np.concatenate([getattr(self, name), getattr(other, name)])  # noqa
        return SensorSet(self.structure, self.kinds + other.kinds, cat("items"), cat("std"),
                         cat("bias"), cat("quantization"), cat("rate"))

    def select(self, sensors) -> SensorSet:
        """The sensors with indices `sensors` (a sequence of int), in that order."""
        idx = validation.indices("SensorSet.select: sensors", sensors, self.n_sensors,
                                 what="sensor")
        return SensorSet(self.structure, tuple(self.kinds[i] for i in idx), self.items[idx],
                         self.std[idx], self.bias[idx], self.quantization[idx], self.rate[idx])

    # ---- the nonlinear outputs ----------------------------------------------------------------

    def _state(self, q, qd, who: str):
        nq = 3 * self.structure.n_nodes
        q = validation.real_array(f"{who}: q", q, "m", finite=True).reshape(-1)
        qd = np.zeros(nq) if qd is None else validation.real_array(
            f"{who}: qd", qd, "m/s", finite=True).reshape(-1)
        for name, v in (("q", q), ("qd", qd)):
            if v.shape != (nq,):
                raise ValueError(f"{who}: {name} must have {nq} entries (3 per node), got "
                                 f"{v.size}")
        return q, qd

    def _held(self, gamma, held, who: str):
        """(gamma (ns,), held mask (ns,)) from the optional arguments."""
        ns = self.structure.n_strings
        if gamma is None:
            if held is not None:
                raise ValueError(f"{who}: held strings need their force densities gamma")
            return np.zeros(ns), np.zeros(ns, dtype=bool)
        gamma = validation.real_array(f"{who}: gamma", gamma, "N/m", shape=(ns,), finite=True)
        mask = np.zeros(ns, dtype=bool)
        mask[np.arange(ns) if held is None else
             validation.indices(f"{who}: held", held, ns, what="string")] = True
        return gamma, mask

    def outputs(self, q, qd=None, gamma=None, held=None) -> np.ndarray:
        """The noiseless signals ``y = h(q, qd)``, shape (n_signals,).

        Parameters
        ----------
        q, qd : array_like, shape (3n,) or (n, 3)
            Positions [m] and velocities [m/s] (at rest by default).
        gamma : array_like, shape (n_strings,), optional
            Force densities [N/m] of the strings in `held` (commanded strings); the others
            follow their member law. Without it every string follows its law.
        held : sequence of int, optional
            The strings at `gamma`; all of them if `gamma` is given alone.
        """
        q, qd = self._state(q, qd, "SensorSet.outputs")
        g, mask = self._held(gamma, held, "SensorSet.outputs")
        return _outputs(self, q, qd, g, mask)

    def read(self, q, qd, rng: np.random.Generator, gamma=None, held=None) -> np.ndarray:
        """One noisy reading: ``quantize(h(q, qd) + bias + std * N(0, 1))``, shape (n_signals,).

        `rng` is a ``numpy.random.Generator`` (``np.random.default_rng(seed)``); the other
        arguments are those of :meth:`outputs`.
        """
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"SensorSet.read: rng must be a numpy.random.Generator "
                            f"(np.random.default_rng(seed)), got {type(rng).__name__}")
        return self.noisy(self.outputs(q, qd, gamma, held), rng)

    def noisy(self, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Signals `y` (..., n_signals) with the noise model applied (white noise, bias,
        quantization), the noise drawn from `rng`."""
        s = self.signal_sensor
        y = y + self.bias[s] + self.std[s] * rng.standard_normal(np.shape(y))
        step = self.quantization[s]
        return np.where(step > 0, np.round(y / np.where(step > 0, step, 1.0)) * step, y)

    def measure(self, trajectory, rng: np.random.Generator | None = None) -> np.ndarray:
        """The signals at every sample of a :class:`tenscontrol.Trajectory`, (nt, n_signals).

        Noiseless without `rng`, else with the noise model. Tensions of the strings a
        controller commanded use the applied force densities (``trajectory.control``).
        Sample rates are not applied here: simulate with ``t_eval`` on the sensors' sample
        times to read them at their rate.
        """
        if trajectory.structure.n_nodes != self.structure.n_nodes:
            raise ValueError("SensorSet.measure: the trajectory is of another structure")
        ns, control = self.structure.n_strings, getattr(trajectory, "control", None)
        Q = trajectory.nodes.reshape(trajectory.t.size, -1)
        V = trajectory.velocities.reshape(trajectory.t.size, -1)
        Y = np.empty((Q.shape[0], self.n_signals))
        mask = np.zeros(ns, dtype=bool)
        if control is not None:
            mask[control.strings] = True
        for r in range(Q.shape[0]):
            g = np.zeros(ns)
            if control is not None:
                g[control.strings] = control.applied[r]
            Y[r] = _outputs(self, Q[r], V[r], g, mask)
        return Y if rng is None else self.noisy(Y, rng)

    # ---- the linearization --------------------------------------------------------------------

    def output_matrices(self, q, qd=None, gamma=None, held=None) -> tuple:
        """Analytic Jacobians of :meth:`outputs` at (q, qd): ``(dh/dq, dh/dqd, dh/dgamma)``.

        Shapes (n_signals, 3n), (n_signals, 3n), (n_signals, n_strings); the last is the
        feedthrough of the held force densities (``l_k`` for the tension of string k) and is
        zero on strings that follow their law. Arguments as for :meth:`outputs`: a string
        that follows its law contributes ``k`` (the law's ``d(gamma l)/dl``) to a tension
        row, a held one ``gamma_k``.
        """
        q, qd = self._state(q, qd, "SensorSet.output_matrices")
        g, mask = self._held(gamma, held, "SensorSet.output_matrices")
        return _jacobians(self, q, qd, g, mask)


def _string_data(structure: Structure, k: np.ndarray, q, qd, gamma, mask):
    """Per string k: unit vector e, length l, rate ldot, force density, active flag."""
    p = structure.string_nodes[k]
    N, V = q.reshape(-1, 3), qd.reshape(-1, 3)
    s, sd = N[p[:, 1]] - N[p[:, 0]], V[p[:, 1]] - V[p[:, 0]]
    l = np.linalg.norm(s, axis=1)
    e = s / l[:, None]
    k0, l0 = structure.string_stiffness[k], structure.string_rest_lengths[k]
    spring = structure.string_is_spring[k]
    active = laws.active_set(l, l0, spring)
    g = np.where(mask[k], gamma[k], laws.string_densities(k0, l0, l, spring))
    return p, e, l, np.einsum("ij,ij->i", e, sd), sd, g, active


def _bar_data(structure: Structure, b: np.ndarray, q, qd):
    p = structure.bar_nodes[b]
    N, V = q.reshape(-1, 3), qd.reshape(-1, 3)
    v, vd = N[p[:, 1]] - N[p[:, 0]], V[p[:, 1]] - V[p[:, 0]]
    return p, v, vd, np.einsum("ij,ij->i", v, v)


def _outputs(ss: SensorSet, q, qd, gamma, mask) -> np.ndarray:
    y, st = np.empty(ss.n_signals), ss.structure
    for kind in set(ss.kinds):
        sensors = np.array([i for i, kd in enumerate(ss.kinds) if kd == kind])
        rows = np.concatenate([ss.rows(i) for i in sensors])
        items = ss.items[sensors]
        if kind == "node_position":
            y[rows] = q[items]
        elif kind in ("string_length", "string_tension"):
            _, _, l, ldot, _, g, active = _string_data(st, items, q, qd, gamma, mask)
            c = st.string_damping[items] * active
            y[rows] = l if kind == "string_length" else g * l + c * ldot
        else:
            _, v, vd, l2 = _bar_data(st, items, q, qd)
            out = (v / np.sqrt(l2)[:, None] if kind == "bar_direction"
                   else np.cross(v, vd) / l2[:, None])
            y[rows] = out.reshape(-1)
    return y


def _jacobians(ss: SensorSet, q, qd, gamma, mask) -> tuple:
    st, nq = ss.structure, q.size
    Cq, Cv = np.zeros((ss.n_signals, nq)), np.zeros((ss.n_signals, nq))
    D = np.zeros((ss.n_signals, st.n_strings))
    for s, (kind, item) in enumerate(zip(ss.kinds, ss.items)):
        rows = ss.rows(s)
        if kind == "node_position":
            Cq[rows[0], item] = 1.0
        elif kind in ("string_length", "string_tension"):
            _string_rows(st, item, q, qd, gamma, mask, kind, Cq, Cv, D, rows[0])
        else:
            _bar_rows(st, item, q, qd, kind, Cq, Cv, rows)
    return Cq, Cv, D


def _string_rows(st, k, q, qd, gamma, mask, kind, Cq, Cv, D, r) -> None:
    (i, j), e, l, ldot, sd, g, active = (x[0] for x in _string_data(
        st, np.array([k]), q, qd, gamma, mask))
    dl = e                                       # d l / d n_j (minus on n_i)
    if kind == "string_length":
        gq, gv = dl, np.zeros(3)
    else:
        c = st.string_damping[k] * active
        law = 0.0 if mask[k] or not active else laws.density_slopes(
            st.string_stiffness[k], st.string_rest_lengths[k], l)
        # d(gamma l)/dl = gamma + l dgamma/dl (= k on the law); d ldot / ds = (sd - ldot e)/l
        gq = (g + l * law) * dl + c * (sd - ldot * e) / l
        gv = c * e
        D[r, k] = l if mask[k] else 0.0
    Cq[r, 3 * j:3 * j + 3] += gq
    Cq[r, 3 * i:3 * i + 3] -= gq
    Cv[r, 3 * j:3 * j + 3] += gv
    Cv[r, 3 * i:3 * i + 3] -= gv


def _bar_rows(st, b, q, qd, kind, Cq, Cv, rows) -> None:
    p, v, vd, l2 = (x[0] for x in _bar_data(st, np.array([b]), q, qd))
    i, j = p
    if kind == "bar_direction":
        u = v / np.sqrt(l2)
        G, Gv = (np.eye(3) - np.outer(u, u)) / np.sqrt(l2), np.zeros((3, 3))
    else:
        w = np.cross(v, vd) / l2
        # w = [v]x vd / |v|^2: d/dvd = [v]x/|v|^2, d/dv = -[vd]x/|v|^2 - 2 w v^T/|v|^2
        G = -_cross(vd[None])[0] / l2 - 2.0 * np.outer(w, v) / l2
        Gv = _cross(v[None])[0] / l2
    for M, X in ((Cq, G), (Cv, Gv)):
        M[np.ix_(rows, range(3 * j, 3 * j + 3))] += X
        M[np.ix_(rows, range(3 * i, 3 * i + 3))] -= X


def _sensor_list(structure: Structure, string_lengths, string_tensions, node_positions,
                 bar_directions, bar_rates) -> tuple:
    """(kinds, items) of the requested sensors, checked."""
    kinds, items = [], []
    for kind, value, size, what in (
            ("string_length", string_lengths, structure.n_strings, "string"),
            ("string_tension", string_tensions, structure.n_strings, "string"),
            ("bar_direction", bar_directions, structure.n_bars, "bar"),
            ("bar_rate", bar_rates, structure.n_bars, "bar")):
        idx = validation.indices(f"sensors: {kind}s", value, size, what=what) \
            if np.size(value) else np.zeros(0, dtype=np.int64)
        if len(set(idx.tolist())) != idx.size:
            raise ValueError(f"sensors: {kind}s lists a {what} twice: {idx.tolist()}")
        kinds += [kind] * idx.size
        items += idx.tolist()
        if kind == "string_tension":
            sel = check_selection(node_positions, "sensors: node_positions")
            if sel is not None:
                coords = sel.coordinates(structure, "sensors: node_positions")
                kinds += ["node_position"] * coords.size
                items += coords.tolist()
    return tuple(kinds), np.array(items, dtype=np.int64)


def sensors(structure: Structure, *, string_lengths=(), string_tensions=(),
            node_positions: Selection | None = None, bar_directions=(), bar_rates=(),
            std=0.0, bias=0.0, quantization=0.0, rate=None) -> SensorSet:
    """A :class:`SensorSet` on `structure` (see the module docstring for what each reads).

    Parameters
    ----------
    structure : Structure
    string_lengths, string_tensions : sequence of int
        Strings whose length [m] / tension [N] are measured.
    node_positions : Selection, optional
        Node coordinates measured [m] (fixed ones are left out), e.g.
        ``Selection(nodes=[2, 3], axes="xz")``.
    bar_directions, bar_rates : sequence of int
        Bars carrying an IMU: unit direction [-] / world-frame angular velocity [rad/s], 3
        signals each.
    std, bias, quantization : float or array_like, shape (n_sensors,)
        Noise model of every sensor, in its signal's unit: white-noise standard deviation per
        sample (>= 0), constant offset, quantization step (>= 0, 0 for none). Sensors are
        ordered: string lengths, string tensions, node positions, bar directions, bar rates.
    rate : float or array_like, shape (n_sensors,), optional
        Sample rate [Hz] (> 0); continuous (``inf``) by default.

    Returns
    -------
    SensorSet
        Combine sets with different noise models with ``+``.
    """
    reject_cables(structure, "sensors")
    if not isinstance(structure, Structure):
        raise TypeError(f"sensors: structure must be a tenscontrol.Structure, got "
                        f"{type(structure).__name__}")
    kinds, items = _sensor_list(structure, string_lengths, string_tensions, node_positions,
                                bar_directions, bar_rates)
    n = len(kinds)
    if n == 0:
        raise ValueError("sensors: no sensor selected; give string_lengths, string_tensions, "
                         "node_positions, bar_directions or bar_rates")
    noise = {}
    for name, value, unit in (("std", std, "signal unit"), ("bias", bias, "signal unit"),
                              ("quantization", quantization, "signal unit")):
        noise[name] = validation.per_item(f"sensors: {name}", value, n, unit,
                                          items=" (one per sensor)")
        if name != "bias" and np.any(noise[name] < 0):
            raise ValueError(f"sensors: {name} must be >= 0, got {noise[name].min():g}")
    rates = np.full(n, np.inf) if rate is None else validation.per_item(
        "sensors: rate", rate, n, "Hz", positive=True, items=" (one per sensor)")
    return SensorSet(structure, kinds, items, noise["std"], noise["bias"],
                     noise["quantization"], rates)
