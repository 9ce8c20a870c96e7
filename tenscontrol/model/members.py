"""The members of a structure (bars, tension members, point masses) and their resolution.

:class:`Bar`, :class:`String` and :class:`PointMass` are what a user writes; the resolve
functions turn the given lists (instances or dicts) into validated instances with material
presets applied and node indices checked, as :class:`~tenscontrol.Structure` stores them. Field
values are checked once per distinct combination of fields, so a 100k-member structure whose
members share their materials validates in linear time with a small constant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields

import numpy as np

from tenscontrol.model.checks import node_index, node_pair, real, reject_unknown_keys, show
from tenscontrol.validation import flag
from tenscontrol.model.materials import material as _material

__all__ = ["Bar", "String", "PointMass", "member_repr", "resolve_bars", "resolve_strings",
           "resolve_point_masses", "fixed_mask", "member_list", "string_stiffness_fields"]

AXES = "xyz"


def member_repr(member) -> str:
    """One line with the fields that differ from their defaults, numbers to 6 digits."""
    parts = []
    for f in fields(member):
        value = getattr(member, f.name)
        if f.default is not MISSING and value == f.default:
            continue
        text = f"{value:.6g}" if isinstance(value, float) else repr(value)
        parts.append(f"{f.name}={text}")
    return f"{type(member).__name__}({', '.join(parts)})"


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

    __repr__ = member_repr


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

    __repr__ = member_repr


@dataclass(frozen=True)
class PointMass:
    """A point mass [kg] attached to a node."""

    node: int
    mass: float



_FIELD_NAMES = {cls: frozenset(f.name for f in fields(cls)) for cls in (Bar, String, PointMass)}
_REQUIRED_KEYS = {cls: frozenset(["nodes"] * ("nodes" in _FIELD_NAMES[cls]) + [
    f.name for f in fields(cls) if f.default is MISSING]) for cls in (Bar, String, PointMass)}
_REQUIRED = {cls: [f.name for f in fields(cls) if f.default is MISSING and f.name != "nodes"]
             for cls in (Bar, String, PointMass)}


def member_list(name: str, value) -> tuple:
    """A member list as a tuple; None means none."""
    if value is None:
        return ()
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise ValueError(f"{name} must be a list of members, got {type(value).__name__}")
    return tuple(value)


def _given(cls, where: str, value) -> Mapping:
    """The fields given for a member: a dict (unknown and missing keys rejected) or an instance's."""
    if isinstance(value, cls):
        return value.__dict__
    if type(value) is not dict and not isinstance(value, Mapping):
        raise ValueError(
            f"{where}: expected a {cls.__name__} or a dict of its fields, got {type(value).__name__}"
        )
    if not _FIELD_NAMES[cls].issuperset(value):
        reject_unknown_keys(where, value, [f.name for f in fields(cls)])
    if "nodes" in _FIELD_NAMES[cls] and "nodes" not in value:
        raise ValueError(f"{where}: missing key 'nodes' (the two node indices it joins)")
    for name in _REQUIRED[cls]:
        if name not in value:
            raise ValueError(f"{where}: missing key {name!r}")
    return value


def _preset(where: str, name):
    """The material preset `name`, with `where` prefixed to the error if there is none."""
    if not isinstance(name, str):
        raise ValueError(f"{where}: material must be a preset name (a string), got {show(name)}")
    try:
        return _material(name)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def _bar_fields(where: str, bar: Mapping) -> dict:
    """The validated fields of a bar (all but nodes), presets applied."""
    name = bar.get("material")
    preset = _preset(where, name) if name is not None else None
    values = {}
    for key in ("density", "youngs_modulus", "poisson"):
        v = bar.get(key)
        if v is None and preset is not None:
            v = getattr(preset, key)
        values[key] = v
    if values["density"] is None:
        raise ValueError(f"{where}: density is missing; give density [kg/m^3] or a material")
    density = real(where, "density", values["density"], positive=True)
    radius = real(where, "radius", bar["radius"], positive=True)
    E = values["youngs_modulus"]
    E = None if E is None else real(where, "youngs_modulus", E, positive=True)
    nu = values["poisson"]
    if nu is not None:
        nu = real(where, "poisson", nu)
        if not -1.0 < nu < 0.5:
            raise ValueError(f"{where}: poisson must lie in (-1, 0.5), got {nu:g}")
    rest = bar.get("rest_length")
    rest = None if rest is None else real(where, "rest_length", rest, positive=True)
    return dict(radius=radius, density=density, youngs_modulus=E, poisson=nu, material=name,
                rest_length=rest)


def string_stiffness_fields(where: str, s: Mapping) -> dict:
    """stiffness, youngs_modulus and radius of a tension member: one way of giving k."""
    E, name = s.get("youngs_modulus"), s.get("material")
    if E is None and name is not None:
        E = _preset(where, name).youngs_modulus
    elif name is not None:
        _preset(where, name)
    radius = s.get("radius")
    if s.get("stiffness") is not None:
        if E is not None:
            raise ValueError(
                f"{where}: give stiffness, or youngs_modulus (or material) with radius, not both"
            )
        stiffness, E = real(where, "stiffness", s["stiffness"], positive=True), None
    else:
        if E is None or radius is None:
            raise ValueError(
                f"{where}: stiffness is missing; give stiffness [N/m], or youngs_modulus "
                "(or material) and radius"
            )
        stiffness, E = None, real(where, "youngs_modulus", E, positive=True)
    radius = None if radius is None else real(where, "radius", radius, positive=True)
    return dict(stiffness=stiffness, youngs_modulus=E, radius=radius, material=name)


def _string_fields(where: str, s: Mapping) -> dict:
    """The validated fields of a tension member (all but nodes), presets applied."""
    kind = s.get("kind", "string")
    if not isinstance(kind, str) or kind not in ("string", "spring"):
        raise ValueError(f"{where}: kind must be 'string' or 'spring', got {show(kind)}")
    out = dict(kind=kind, **string_stiffness_fields(where, s))
    rest_length, rest_fraction = s.get("rest_length"), s.get("rest_fraction")
    if rest_length is not None and rest_fraction is not None:
        raise ValueError(f"{where}: give rest_length or rest_fraction, not both")
    if rest_length is not None:
        rest_length = real(where, "rest_length", rest_length, positive=True)
    else:
        rest_fraction = real(where, "rest_fraction", 1.0 if rest_fraction is None
                             else rest_fraction, positive=True)
    damping = real(where, "damping", s.get("damping", 0.0), nonnegative=True)
    actuated = flag(f"{where}: actuated", s.get("actuated", True), error=ValueError, typed=False)
    gamma_max = s.get("gamma_max")
    if gamma_max is not None:
        gamma_max = real(where, "gamma_max", gamma_max, positive=True)
    return dict(out, rest_length=rest_length, rest_fraction=rest_fraction, damping=damping,
                actuated=bool(actuated), gamma_max=gamma_max)


def _node_pairs(kind: str, given: list, n_nodes: int) -> list:
    """The (i, j) node pair of each member, checked all at once (the first error is raised)."""
    pairs = [g["nodes"] for g in given]
    for k, p in enumerate(pairs):
        # plain int pairs take the vectorized check below; anything else the strict one
        if type(p) not in (list, tuple) or len(p) != 2 or type(p[0]) is not int \
                or type(p[1]) is not int:
            pairs[k] = node_pair(f"{kind} {k}", p, n_nodes)
    try:
        a = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    except OverflowError:  # an index beyond int64: the strict check names it
        a = None
    if a is not None:
        bad = np.flatnonzero((a < 0).any(1) | (a >= n_nodes).any(1) | (a[:, 0] == a[:, 1]))
        if not bad.size:
            return list(map(tuple, a.tolist()))
    for k, p in enumerate(pairs):
        node_pair(f"{kind} {k}", p, n_nodes)
    raise AssertionError("unreachable: a bad node pair was not reported")  # pragma: no cover


def _resolve(cls, kind: str, resolve_fields, members, n_nodes: int) -> tuple:
    """Validated `cls` instances of `members`; fields checked once per distinct combination."""
    names = _FIELD_NAMES[cls]
    # a dict of known keys with nodes first (as save_structure writes it) skips _given
    given = [m if type(m) is dict and next(iter(m), None) == "nodes" and names.issuperset(m)
             and _REQUIRED_KEYS[cls] <= m.keys() else _given(cls, f"{kind} {k}", m)
             for k, m in enumerate(members)]
    pairs = _node_pairs(kind, given, n_nodes)
    seen, out = {}, []
    new, append = object.__new__, out.append
    for k, (g, pair) in enumerate(zip(given, pairs)):
        # the key holds the types too: True == 1 and 1 == 1.0, but only some pass the checks;
        # it leaves out the nodes (a list, unhashable), which come first from a file
        keys, given_values = tuple(g), tuple(g.values())
        if keys[0] == "nodes":
            key = (keys, given_values[1:], tuple(map(type, given_values)))
        else:
            key = tuple((name, type(v), v) for name, v in g.items() if name != "nodes")
        try:
            values = seen.get(key)
        except TypeError:  # an unhashable value (a list): checked on its own
            key, values = None, None
        if values is None:
            values = resolve_fields(f"{kind} {k} (nodes {pair[0]}->{pair[1]})", g)
            if key is not None:
                seen[key] = values
        # values checked: skip the dataclass __init__ (an object.__setattr__ per field), which
        # dominated loading a 100k-node file; the instance equals cls(nodes=pair, **values)
        obj = new(cls)
        fields_ = obj.__dict__
        fields_.update(values)
        fields_["nodes"] = pair
        append(obj)
    return tuple(out)


def resolve_bars(bars, n_nodes: int) -> tuple:
    """The bars (instances or dicts) as validated :class:`Bar` instances."""
    return _resolve(Bar, "bar", _bar_fields, member_list("bars", bars), n_nodes)


def resolve_strings(strings, n_nodes: int) -> tuple:
    """The tension members (instances or dicts) as validated :class:`String` instances."""
    return _resolve(String, "string", _string_fields, member_list("strings", strings), n_nodes)


def resolve_point_masses(point_masses, n_nodes: int) -> tuple:
    """The point masses (instances or dicts) as validated :class:`PointMass` instances."""
    out = []
    for p, pm in enumerate(member_list("point_masses", point_masses)):
        pm = _given(PointMass, f"point mass {p}", pm)
        node = node_index(f"point mass {p}", pm["node"], n_nodes)
        mass = real(f"point mass {p} (node {node})", "mass", pm["mass"], positive=True)
        out.append(PointMass(node, mass))
    return tuple(out)


def fixed_mask(fixed, n_nodes: int) -> np.ndarray:
    """Normalize the accepted forms of `fixed` to an (n_nodes, 3) boolean array."""
    mask = np.zeros((n_nodes, 3), dtype=bool)
    if fixed is None:
        return mask
    if isinstance(fixed, np.ndarray) and fixed.dtype == bool:
        if fixed.shape != (n_nodes, 3):
            raise ValueError(f"fixed: a boolean mask must have shape ({n_nodes}, 3), "
                             f"got {fixed.shape}")
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
            raise ValueError(f"{where}: expected {{'node': i, 'axes': 'xyz'}}, got {show(entry)}")
        reject_unknown_keys(where, entry, ["node", "axes"])
        if "node" not in entry:
            raise ValueError(f"{where}: missing key 'node'")
        node = node_index(where, entry["node"], n_nodes)
        axes = entry.get("axes", "xyz")
        if not isinstance(axes, str) or not axes or any(a not in AXES for a in axes):
            raise ValueError(f"{where} (node {node}): axes must be letters from 'xyz', "
                             f"got {show(axes)}")
        for a in axes:
            mask[node, AXES.index(a)] = True
    return mask
