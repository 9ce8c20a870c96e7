"""The immutable, validated description of a tensegrity structure.

A :class:`Structure` holds nodes, bars, tension members (one-sided strings or two-sided
springs), point masses, fixed coordinates and gravity. Everything else (connectivity matrices,
member lengths, stiffnesses, rest lengths, masses) is derived from these fields and never stored
twice. All validation happens once, on construction, and every error names the node, member or
field at fault and says what to do.
"""

from __future__ import annotations

import difflib
from dataclasses import MISSING, dataclass, fields
from functools import cached_property
from typing import Any, Mapping, Sequence

import numpy as np

from tenscontrol.model.materials import material as _material

__all__ = ["Bar", "String", "PointMass", "Structure"]

_AXES = "xyz"


def _member_repr(member) -> str:
    """One line with the fields that differ from their defaults, numbers to 6 digits."""
    parts = []
    for f in fields(member):
        value = getattr(member, f.name)
        if f.default is not MISSING and value == f.default:
            continue
        text = f"{value:.6g}" if isinstance(value, float) else repr(value)
        parts.append(f"{f.name}={text}")
    return f"{type(member).__name__}({', '.join(parts)})"


def reject_unknown_keys(where: str, given: Mapping[str, Any], allowed: Sequence[str]) -> None:
    for key in given:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(
                f"{where}: unknown key {key!r}{hint}; allowed keys: {', '.join(allowed)}"
            )


def _from_mapping(cls, where: str, value):
    """Build a member dataclass from an instance of it or from a dict (unknown keys rejected)."""
    if isinstance(value, cls):
        return value
    if not isinstance(value, Mapping):
        raise ValueError(
            f"{where}: expected a {cls.__name__} or a dict of its fields, got {type(value).__name__}"
        )
    allowed = [f.name for f in fields(cls)]
    reject_unknown_keys(where, value, allowed)
    if "nodes" not in value and "nodes" in allowed:
        raise ValueError(f"{where}: missing key 'nodes' (the two node indices it joins)")
    missing = [f.name for f in fields(cls)
               if f.default is MISSING and f.default_factory is MISSING and f.name not in value]
    if missing:
        raise ValueError(f"{where}: missing key {missing[0]!r}")
    try:
        return cls(**value)
    except TypeError as exc:  # a required field is missing
        raise ValueError(f"{where}: {exc}") from None


def _number(where: str, name: str, value, *, positive=False, nonnegative=False) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: {name} must be a number, got {value!r}") from None
    if not np.isfinite(x):
        raise ValueError(f"{where}: {name} must be finite, got {x}")
    if positive and x <= 0:
        raise ValueError(f"{where}: {name} must be > 0, got {x:g}")
    if nonnegative and x < 0:
        raise ValueError(f"{where}: {name} must be >= 0, got {x:g}")
    return x


def _node_pair(where: str, nodes, n_nodes: int) -> tuple[int, int]:
    try:
        i, j = (int(v) for v in nodes)
        if any(float(v) != int(v) for v in nodes):
            raise ValueError
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{where}: nodes must be two node indices, got {nodes!r}") from None
    for v in (i, j):
        if not 0 <= v < n_nodes:
            raise ValueError(
                f"{where}: node index {v} out of range; the structure has {n_nodes} nodes "
                f"(indices 0 to {n_nodes - 1})"
            )
    if i == j:
        raise ValueError(f"{where}: joins node {i} to itself; a member needs two different nodes")
    return i, j


@dataclass(frozen=True)
class Bar:
    """A bar (strut) between two nodes.

    Parameters
    ----------
    nodes : (int, int)
        Start and end node; the bar vector points from ``nodes[0]`` to ``nodes[1]``.
    radius : float
        Cross-section radius [m].
    density : float, optional
        Mass density [kg/m^3]; taken from `material` if omitted.
    youngs_modulus : float, optional
        Young's modulus [Pa], used by the compressible-bar model; from `material` if omitted.
    poisson : float, optional
        Poisson's ratio [-], used by the compressible-bar model; from `material` if omitted.
    material : str, optional
        Name of a preset in :data:`tenscontrol.materials.MATERIALS`. Values given explicitly
        override the preset's.
    rest_length : float, optional
        Rest length l0 [m] of a compressible bar; by default its length in the given
        configuration (no bar prestress). `radius` is the radius at the rest length. Rigid
        bars ignore it: their length is the configured one. The bar's mass stays
        rho pi r^2 l with l the configured length, so that a prestress design, which only
        changes rest lengths, leaves the gravity loads it balanced unchanged (the difference
        from rho pi r^2 l0 is of the order of the bar strain).
    """

    nodes: tuple[int, int]
    radius: float
    density: float | None = None
    youngs_modulus: float | None = None
    poisson: float | None = None
    material: str | None = None
    rest_length: float | None = None

    __repr__ = _member_repr


@dataclass(frozen=True)
class String:
    """A tension member: a one-sided string or a two-sided spring, with an optional damper.

    Parameters
    ----------
    nodes : (int, int)
        Start and end node; the member vector points from ``nodes[0]`` to ``nodes[1]``.
    kind : {"string", "spring"}
        ``"string"`` pulls only and goes slack when shorter than its rest length;
        ``"spring"`` pulls and pushes.
    stiffness : float, optional
        Axial stiffness k [N/m]. Give this, or `youngs_modulus` (or `material`) and `radius`,
        from which k = E pi r^2 / rest_length.
    youngs_modulus : float, optional
        Young's modulus [Pa].
    radius : float, optional
        Cross-section radius [m].
    material : str, optional
        Preset supplying the Young's modulus when `youngs_modulus` is not given.
    rest_length : float, optional
        Rest length l0 [m]. Give this or `rest_fraction`.
    rest_fraction : float, optional
        Rest length as a fraction of the member's initial length (default 1.0 when neither is
        given: the member starts exactly at its rest length).
    damping : float
        Damper coefficient c >= 0 [N s/m], acting along the member.
    actuated : bool
        Whether a controller commands this member's force density (the control inputs are
        the force-density changes of the actuated members; all are actuated by default).
    gamma_max : float, optional
        Largest force density the actuator can apply [N/m]; a commanded value above it is
        clipped (and recorded as saturation) by the closed-loop simulator. No limit by default.
    """

    nodes: tuple[int, int]
    kind: str = "string"
    stiffness: float | None = None
    youngs_modulus: float | None = None
    radius: float | None = None
    material: str | None = None
    rest_length: float | None = None
    rest_fraction: float | None = None
    damping: float = 0.0
    actuated: bool = True
    gamma_max: float | None = None

    __repr__ = _member_repr


@dataclass(frozen=True)
class PointMass:
    """A point mass [kg] attached to a node."""

    node: int
    mass: float


def _preset(where: str, name):
    """The material preset `name`, with `where` prefixed to the error if there is none."""
    try:
        return _material(name)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def _resolve_bar(k: int, bar: Bar, n_nodes: int) -> Bar:
    where = f"bar {k}"
    i, j = _node_pair(where, bar.nodes, n_nodes)
    where = f"bar {k} (nodes {i}->{j})"
    preset = _preset(where, bar.material) if bar.material is not None else None
    values = {}
    for name in ("density", "youngs_modulus", "poisson"):
        v = getattr(bar, name)
        if v is None and preset is not None:
            v = getattr(preset, name)
        values[name] = v
    if values["density"] is None:
        raise ValueError(f"{where}: density is missing; give density [kg/m^3] or a material")
    density = _number(where, "density", values["density"], positive=True)
    radius = _number(where, "radius", bar.radius, positive=True)
    E = values["youngs_modulus"]
    E = None if E is None else _number(where, "youngs_modulus", E, positive=True)
    nu = values["poisson"]
    if nu is not None:
        nu = _number(where, "poisson", nu)
        if not -1.0 < nu < 0.5:
            raise ValueError(f"{where}: poisson must lie in (-1, 0.5), got {nu:g}")
    rest = None if bar.rest_length is None else _number(where, "rest_length", bar.rest_length,
                                                        positive=True)
    return Bar((i, j), radius, density, E, nu, bar.material, rest)


def _resolve_string(k: int, s: String, n_nodes: int) -> String:
    i, j = _node_pair(f"string {k}", s.nodes, n_nodes)
    where = f"string {k} (nodes {i}->{j})"
    if s.kind not in ("string", "spring"):
        raise ValueError(f"{where}: kind must be 'string' or 'spring', got {s.kind!r}")
    E = s.youngs_modulus
    if E is None and s.material is not None:
        E = _preset(where, s.material).youngs_modulus
    if s.stiffness is not None:
        if E is not None:
            raise ValueError(
                f"{where}: give stiffness, or youngs_modulus (or material) with radius, not both"
            )
        stiffness = _number(where, "stiffness", s.stiffness, positive=True)
    else:
        if E is None or s.radius is None:
            raise ValueError(
                f"{where}: stiffness is missing; give stiffness [N/m], or youngs_modulus "
                "(or material) and radius"
            )
        stiffness = None
        E = _number(where, "youngs_modulus", E, positive=True)
    radius = None if s.radius is None else _number(where, "radius", s.radius, positive=True)
    if s.rest_length is not None and s.rest_fraction is not None:
        raise ValueError(f"{where}: give rest_length or rest_fraction, not both")
    rest_length = rest_fraction = None
    if s.rest_length is not None:
        rest_length = _number(where, "rest_length", s.rest_length, positive=True)
    else:
        rest_fraction = 1.0 if s.rest_fraction is None else s.rest_fraction
        rest_fraction = _number(where, "rest_fraction", rest_fraction, positive=True)
    damping = _number(where, "damping", s.damping, nonnegative=True)
    if not isinstance(s.actuated, (bool, np.bool_)):
        raise ValueError(f"{where}: actuated must be True or False, got {s.actuated!r}")
    gamma_max = None if s.gamma_max is None else _number(where, "gamma_max", s.gamma_max,
                                                         positive=True)
    return String((i, j), s.kind, stiffness, E if stiffness is None else None, radius,
                  s.material, rest_length, rest_fraction, damping, bool(s.actuated), gamma_max)


def _fixed_mask(fixed, n_nodes: int) -> np.ndarray:
    """Normalize the accepted forms of `fixed` to an (n_nodes, 3) boolean array."""
    mask = np.zeros((n_nodes, 3), dtype=bool)
    if fixed is None:
        return mask
    if isinstance(fixed, np.ndarray) and fixed.dtype == bool:
        if fixed.shape != (n_nodes, 3):
            raise ValueError(f"fixed: a boolean mask must have shape ({n_nodes}, 3), got {fixed.shape}")
        return fixed.copy()
    if isinstance(fixed, Mapping):
        entries = [{"node": node, "axes": axes} for node, axes in fixed.items()]
    elif isinstance(fixed, (str, bytes)) or not hasattr(fixed, "__iter__"):
        raise ValueError("fixed must be {node: 'xyz'}, a list of {'node': i, 'axes': 'xyz'} "
                         f"or an (n_nodes, 3) boolean array, got {type(fixed).__name__}")
    else:
        entries = list(fixed)
    for e, entry in enumerate(entries):
        where = f"fixed entry {e}"
        if not isinstance(entry, Mapping):
            raise ValueError(f"{where}: expected {{'node': i, 'axes': 'xyz'}}, got {entry!r}")
        reject_unknown_keys(where, entry, ["node", "axes"])
        if "node" not in entry:
            raise ValueError(f"{where}: missing key 'node'")
        node, axes = entry["node"], entry.get("axes", "xyz")
        if not isinstance(node, (int, np.integer)):
            raise ValueError(f"{where}: node must be an integer node index, got {node!r}")
        if not 0 <= node < n_nodes:
            raise ValueError(
                f"{where}: node index {node!r} out of range; the structure has {n_nodes} nodes "
                f"(indices 0 to {n_nodes - 1})"
            )
        if not isinstance(axes, str) or not axes or any(a not in _AXES for a in axes):
            raise ValueError(f"{where} (node {node}): axes must be letters from 'xyz', got {axes!r}")
        for a in axes:
            mask[node, _AXES.index(a)] = True
    return mask


def _members(name: str, value) -> tuple:
    """A member list as a tuple; None means none."""
    if value is None:
        return ()
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise ValueError(f"{name} must be a list of members, got {type(value).__name__}")
    return tuple(value)


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Structure:
    """A tensegrity structure: nodes, bars, tension members, point masses and fixed coordinates.

    Parameters
    ----------
    nodes : array_like, shape (n_nodes, 3)
        Initial node positions [m]. Bar lengths are taken from them.
    bars : sequence of Bar or dict
        The bars; dicts take :class:`Bar`'s fields as keys.
    strings : sequence of String or dict
        The tension members (strings and springs); dicts take :class:`String`'s fields.
    fixed : mapping, sequence or bool array, optional
        Fixed coordinates: ``{node: "xyz"}``, a list of ``{"node": i, "axes": "y"}``, or an
        (n_nodes, 3) boolean mask.
    point_masses : sequence of PointMass or dict, optional
        Extra masses [kg] at nodes.
    gravity : array_like, shape (3,)
        Gravitational acceleration [m/s^2], e.g. ``(0, 0, -9.806)``.
    name : str
        A label for plots and files.

    Notes
    -----
    A node that no bar touches, that carries no point mass and is not fully fixed has no
    inertia; such a structure is rejected rather than given a guessed mass.
    """

    nodes: np.ndarray
    bars: tuple[Bar, ...] = ()
    strings: tuple[String, ...] = ()
    fixed: Any = None
    point_masses: tuple[PointMass, ...] = ()
    gravity: Any = (0.0, 0.0, 0.0)
    name: str = "structure"

    def __post_init__(self):
        nodes = self._validated_nodes(self.nodes)
        n = len(nodes)
        bars = tuple(
            _resolve_bar(k, _from_mapping(Bar, f"bar {k}", b), n) for k, b in enumerate(_members('bars', self.bars))
        )
        strings = tuple(
            _resolve_string(k, _from_mapping(String, f"string {k}", s), n)
            for k, s in enumerate(_members('strings', self.strings))
        )
        pms = tuple(self._resolve_point_mass(p, pm, n) for p, pm in enumerate(_members('point_masses', self.point_masses)))
        try:
            gravity = np.array(self.gravity, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            gravity = np.full(1, np.nan)  # not numbers: reported just below
        if gravity.shape != (3,) or not np.all(np.isfinite(gravity)):
            raise ValueError(f"gravity must be three finite numbers [m/s^2], got {self.gravity!r}")
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731 (frozen dataclass)
        set_("nodes", _readonly(nodes))
        set_("bars", bars)
        set_("strings", strings)
        set_("point_masses", pms)
        set_("fixed", _readonly(_fixed_mask(self.fixed, n)))
        set_("gravity", _readonly(gravity))
        set_("name", str(self.name))
        self._check_lengths()
        self._check_inertia()

    @staticmethod
    def _validated_nodes(nodes) -> np.ndarray:
        try:
            arr = np.array(nodes, dtype=float)
        except (TypeError, ValueError):
            raise ValueError("nodes must be an (n_nodes, 3) array of coordinates [m]") from None
        if arr.ndim != 2 or arr.shape[1] != 3 or arr.shape[0] == 0:
            raise ValueError(
                f"nodes must be an (n_nodes, 3) array of coordinates [m], got shape {arr.shape}"
            )
        bad = np.flatnonzero(~np.all(np.isfinite(arr), axis=1))
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"node {i}: coordinates must be finite, got {arr[i].tolist()}")
        return arr

    @staticmethod
    def _resolve_point_mass(p: int, pm, n: int) -> PointMass:
        pm = _from_mapping(PointMass, f"point mass {p}", pm)
        node = pm.node
        if not isinstance(node, (int, np.integer)):
            raise ValueError(f"point mass {p}: node must be an integer node index, got {node!r}")
        if not 0 <= node < n:
            raise ValueError(
                f"point mass {p}: node index {node!r} out of range; the structure has {n} nodes "
                f"(indices 0 to {n - 1})"
            )
        mass = _number(f"point mass {p} (node {node})", "mass", pm.mass, positive=True)
        return PointMass(int(node), mass)

    def _check_lengths(self):
        for kind, members, lengths in (("bar", self.bars, self.bar_lengths),
                                       ("string", self.strings, self.string_lengths)):
            for k, (m, length) in enumerate(zip(members, lengths)):
                if length <= 1e-12 * max(1.0, float(np.abs(self.nodes).max())):
                    i, j = m.nodes
                    raise ValueError(
                        f"{kind} {k} (nodes {i}->{j}): zero length; nodes {i} and {j} coincide "
                        f"at {self.nodes[i].tolist()}"
                    )

    def _check_inertia(self):
        node_mass = self.node_masses
        for i in range(self.n_nodes):
            if node_mass[i] <= 0.0 and not self.fixed[i].all():
                raise ValueError(
                    f"node {i} has no mass (no bar touches it and it carries no point mass) but "
                    "is not fully fixed: add a point mass at it or fix its x, y and z"
                )

    # ---- derived quantities ------------------------------------------------------------------

    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return self.nodes.shape[0]

    @property
    def n_bars(self) -> int:
        """Number of bars."""
        return len(self.bars)

    @property
    def n_strings(self) -> int:
        """Number of tension members (strings and springs)."""
        return len(self.strings)

    @cached_property
    def bar_nodes(self) -> np.ndarray:
        """(n_bars, 2) int: start and end node of each bar."""
        return _readonly(np.array([b.nodes for b in self.bars], dtype=np.int64).reshape(-1, 2))

    @cached_property
    def string_nodes(self) -> np.ndarray:
        """(n_strings, 2) int: start and end node of each tension member."""
        return _readonly(np.array([s.nodes for s in self.strings], dtype=np.int64).reshape(-1, 2))

    @staticmethod
    def _connectivity(pairs: np.ndarray, n: int) -> np.ndarray:
        C = np.zeros((len(pairs), n))
        C[np.arange(len(pairs)), pairs[:, 0]] = -1.0
        C[np.arange(len(pairs)), pairs[:, 1]] = 1.0
        return _readonly(C)

    @cached_property
    def bar_connectivity(self) -> np.ndarray:
        """(n_bars, n_nodes) connectivity C_b: -1 at the start node, +1 at the end node."""
        return self._connectivity(self.bar_nodes, self.n_nodes)

    @cached_property
    def string_connectivity(self) -> np.ndarray:
        """(n_strings, n_nodes) connectivity C_s: -1 at the start node, +1 at the end node."""
        return self._connectivity(self.string_nodes, self.n_nodes)

    @cached_property
    def bar_lengths(self) -> np.ndarray:
        """(n_bars,) bar lengths [m] in the initial configuration (the rigid-bar lengths)."""
        p = self.bar_nodes
        return _readonly(np.linalg.norm(self.nodes[p[:, 1]] - self.nodes[p[:, 0]], axis=1))

    @cached_property
    def string_lengths(self) -> np.ndarray:
        """(n_strings,) tension-member lengths [m] in the initial configuration."""
        p = self.string_nodes
        return _readonly(np.linalg.norm(self.nodes[p[:, 1]] - self.nodes[p[:, 0]], axis=1))

    @cached_property
    def bar_masses(self) -> np.ndarray:
        """(n_bars,) bar masses rho pi r^2 l [kg]."""
        return _readonly(np.array(
            [b.density * np.pi * b.radius**2 * l for b, l in zip(self.bars, self.bar_lengths)]
        ))

    @cached_property
    def bar_rest_lengths(self) -> np.ndarray:
        """(n_bars,) rest lengths l0 [m] of the bars as compressible members."""
        return _readonly(np.array([
            b.rest_length if b.rest_length is not None else l
            for b, l in zip(self.bars, self.bar_lengths)
        ]))

    def _bar_property(self, name: str, what: str) -> np.ndarray:
        values = []
        for k, b in enumerate(self.bars):
            v = getattr(b, name)
            if v is None:
                i, j = b.nodes
                raise ValueError(f"bar {k} (nodes {i}->{j}): {name} is missing; the compressible-bar "
                                 f"model needs {what}: give {name} or a material")
            values.append(v)
        return _readonly(np.array(values, dtype=float))

    @cached_property
    def bar_stiffness(self) -> np.ndarray:
        """(n_bars,) axial stiffness k_b = E pi r^2 / l0 [N/m] (theory.md section 12.5).

        Raises ValueError naming the bar if a bar has no Young's modulus.
        """
        E = self._bar_property("youngs_modulus", "Young's modulus [Pa]")
        r = np.array([b.radius for b in self.bars])
        return _readonly(E * np.pi * r**2 / self.bar_rest_lengths)

    @cached_property
    def bar_poisson(self) -> np.ndarray:
        """(n_bars,) Poisson's ratios; raises ValueError naming the bar if one is missing."""
        return self._bar_property("poisson", "Poisson's ratio")

    @cached_property
    def node_masses(self) -> np.ndarray:
        """(n_nodes,) mass lumped at each node for bookkeeping: half of each bar plus point masses.

        Used for validation and reporting only; the dynamics use the consistent mass matrix.
        """
        m = np.zeros(self.n_nodes)
        for (i, j), mb in zip(self.bar_nodes, self.bar_masses):
            m[i] += mb / 2
            m[j] += mb / 2
        for pm in self.point_masses:
            m[pm.node] += pm.mass
        return _readonly(m)

    @property
    def total_mass(self) -> float:
        """Total mass of bars and point masses [kg]."""
        return float(self.bar_masses.sum() + sum(pm.mass for pm in self.point_masses))

    @cached_property
    def string_rest_lengths(self) -> np.ndarray:
        """(n_strings,) rest lengths l0 [m]."""
        return _readonly(np.array([
            s.rest_length if s.rest_length is not None else s.rest_fraction * l
            for s, l in zip(self.strings, self.string_lengths)
        ]))

    @cached_property
    def string_stiffness(self) -> np.ndarray:
        """(n_strings,) axial stiffness k [N/m]: as given, or E pi r^2 / l0."""
        return _readonly(np.array([
            s.stiffness if s.stiffness is not None else s.youngs_modulus * np.pi * s.radius**2 / l0
            for s, l0 in zip(self.strings, self.string_rest_lengths)
        ]))

    @cached_property
    def string_damping(self) -> np.ndarray:
        """(n_strings,) damper coefficients c [N s/m]."""
        return _readonly(np.array([s.damping for s in self.strings], dtype=float))

    @cached_property
    def string_is_spring(self) -> np.ndarray:
        """(n_strings,) bool: True for two-sided springs, False for one-sided strings."""
        return _readonly(np.array([s.kind == "spring" for s in self.strings], dtype=bool))

    @cached_property
    def actuated_strings(self) -> np.ndarray:
        """Indices (int) of the strings a controller commands (``String.actuated``)."""
        return _readonly(np.flatnonzero([s.actuated for s in self.strings]).astype(np.int64))

    @cached_property
    def string_gamma_max(self) -> np.ndarray:
        """(n_strings,) actuator limits on the force density [N/m]; inf where none is set."""
        return _readonly(np.array([np.inf if s.gamma_max is None else s.gamma_max
                                   for s in self.strings], dtype=float))

    @cached_property
    def fixed_coordinates(self) -> np.ndarray:
        """Indices into q = vec(N) (node by node: x0, y0, z0, x1, ...) of the fixed coordinates."""
        return _readonly(np.flatnonzero(self.fixed.reshape(-1)))

    @cached_property
    def free_coordinates(self) -> np.ndarray:
        """Indices into q = vec(N) of the free coordinates."""
        return _readonly(np.flatnonzero(~self.fixed.reshape(-1)))

    def __repr__(self) -> str:
        return (
            f"Structure(name={self.name!r}, n_nodes={self.n_nodes}, n_bars={self.n_bars}, "
            f"n_strings={self.n_strings}, fixed_coordinates={len(self.fixed_coordinates)}, "
            f"point_masses={len(self.point_masses)}, gravity={self.gravity.tolist()})"
        )
