"""The immutable, validated description of a tensegrity structure.

A :class:`Structure` holds nodes, bars, tension members (one-sided strings or two-sided
springs), point masses, fixed coordinates and gravity. Everything else (connectivity matrices,
member lengths, stiffnesses, rest lengths, masses) is derived from these fields and never stored
twice. All validation happens once, on construction, and every error names the node, member or
field at fault and says what to do.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from functools import cached_property
from collections.abc import Mapping
from typing import Any

import numpy as np

from tenscontrol.model.checks import (LARGEST, SHORTEST_RELATIVE, SMALLEST, first_out_of_range,
                                      paused_gc, real, show)
from tenscontrol.model import editing
from tenscontrol.model.cables import Cable, cable_node_sequence, resolve_cables
from tenscontrol.model.editing import KEEP
from tenscontrol.model.members import (Bar, PointMass, String, fixed_mask, resolve_bars,
                                       resolve_point_masses, resolve_strings)
from tenscontrol.model.tables import Presentable, titled_table, value_range

__all__ = ["Bar", "Cable", "String", "PointMass", "Structure"]

_AXES = "xyz"


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


_NODES = "nodes must be an (n_nodes, 3) array of coordinates [m]"


def _check_coordinate_types(nodes) -> None:
    """ValueError naming the first coordinate that is not a real number (a string, a bool...).

    np.array(..., dtype=float) would read "0.05" and True as numbers and drop the imaginary
    part of a complex one; shapes are checked afterwards.
    """
    if isinstance(nodes, np.ndarray):
        if nodes.dtype.kind in "iuf":
            return
        if nodes.dtype.kind != "O":
            raise ValueError(f"{_NODES}, got an array of {nodes.dtype} values")
    elif isinstance(nodes, (list, tuple)) and all(type(row) in (list, tuple) for row in nodes):
        # the common case (a JSON list of lists): one pass over the types at C speed
        if {type(v) for v in itertools.chain.from_iterable(nodes)} <= {float, int}:
            return
    if isinstance(nodes, (str, bytes, Mapping)) or not np.iterable(nodes):
        raise ValueError(f"{_NODES}, got {show(nodes)}")
    for i, row in enumerate(nodes):
        if np.iterable(row) and not isinstance(row, (str, bytes, Mapping)):
            for axis, v in zip(_AXES, row):
                real(f"node {i}", f"coordinate {axis}", v, finite=False)


def _validated_nodes(nodes) -> np.ndarray:
    """`nodes` as a new (n_nodes, 3) float array of finite coordinates within +-LARGEST."""
    _check_coordinate_types(nodes)
    try:
        arr = np.array(nodes, dtype=float)
    except OverflowError:  # an integer beyond the floats
        arr = None
    except (TypeError, ValueError):
        raise ValueError(_NODES) from None
    if arr is None:
        for i, row in enumerate(nodes):
            for axis, v in zip(_AXES, row):
                real(f"node {i}", f"coordinate {axis}", v)
        raise ValueError(_NODES)  # pragma: no cover - the loop above names the integer
    if arr.ndim != 2 or arr.shape[1] != 3 or arr.shape[0] == 0:
        raise ValueError(f"{_NODES}, got shape {arr.shape}")
    bad = np.flatnonzero(~np.all(np.isfinite(arr), axis=1))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"node {i}: coordinates must be finite, got {arr[i].tolist()}")
    bad = np.flatnonzero(np.abs(arr).max(axis=1) > LARGEST)
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"node {i}: coordinates must lie within +-{LARGEST:g} m, got "
                         f"{arr[i].tolist()}: check the units")
    return arr


def _validated_gravity(gravity) -> np.ndarray:
    """Gravity as a (3,) float array of numbers within +-LARGEST [m/s^2]."""
    what = "gravity must be three finite numbers [m/s^2]"
    g = gravity.reshape(-1) if isinstance(gravity, np.ndarray) else gravity
    if isinstance(g, (str, bytes, Mapping)) or not hasattr(g, "__len__") or len(g) != 3:
        raise ValueError(f"{what}, got {show(gravity)}")
    values = []
    for axis, v in zip(_AXES, g):
        try:
            values.append(real("gravity", axis, v))
        except ValueError as exc:
            raise ValueError(f"{what}; {str(exc).split(': ', 1)[1]}") from None
    out = np.array(values)
    if np.abs(out).max() > LARGEST:
        raise ValueError(f"{what} within +-{LARGEST:g}, got {out.tolist()}: check the units")
    return out


@dataclass(frozen=True, eq=False)
class Structure(Presentable):
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
    cables : sequence of Cable or dict, optional
        Clustered strings: each groups an ordered chain of strings into one cable with one
        tension (:class:`~tenscontrol.model.cables.Cable`; dicts take its fields).

    Notes
    -----
    A node that no bar touches, that carries no point mass and is not fully fixed has no
    inertia; such a structure is rejected rather than given a guessed mass.

    Validation is strict and runs in time linear in the size of the structure:

    - Numbers are Python or numpy integers and floats: a string ("0.05"), a bool or a
      complex number is an error naming the field, and so is an integer too large for a
      float. Node indices are integers (not bools or strings; 2.0 is read as 2).
    - Every given number is finite; radii, densities, moduli, stiffnesses, rest lengths,
      rest fractions and masses are > 0, damping >= 0, Poisson's ratio in (-1, 0.5).
    - Coordinates and gravity components lie within +-1e30 (:data:`~tenscontrol.model.checks.
      LARGEST`). Member lengths, radii, rest lengths, stiffnesses (given or E pi r^2 / l0,
      also of bars with a Young's modulus), bar masses rho pi r^2 l and point masses lie in
      [1e-30, 1e30] in SI units, and so do actuator limits (gamma_max); damping lies in
      [0, 1e30]. Within this window the products the mechanics forms (k l^2, k/m and its
      square, m g l, l^4) stay far from overflow and underflow, and it holds every physical
      structure with many orders of magnitude to spare.
    - Every member is at least 1e-6 of the structure's size (its span or its largest
      coordinate, whichever is larger) long
      (:data:`~tenscontrol.model.checks.SHORTEST_RELATIVE`): a shorter one has a direction
      known to few digits, which the rank test of the bar constraints and the tangent
      stiffness cannot use. Coincident nodes are reported as such.

    Every error is a one-line ValueError naming the node, member or field, the value and
    the accepted range.
    """

    nodes: np.ndarray
    bars: tuple[Bar, ...] = ()
    strings: tuple[String, ...] = ()
    fixed: Any = None
    point_masses: tuple[PointMass, ...] = ()
    gravity: Any = (0.0, 0.0, 0.0)
    name: str = "structure"
    cables: tuple[Cable, ...] = ()

    def __post_init__(self):
        with paused_gc():
            self._validate()

    def _validate(self):
        nodes = _validated_nodes(self.nodes)
        n = len(nodes)
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731 (frozen dataclass)
        set_("nodes", _readonly(nodes))
        set_("bars", resolve_bars(self.bars, n))
        set_("strings", resolve_strings(self.strings, n))
        set_("point_masses", resolve_point_masses(self.point_masses, n))
        set_("fixed", _readonly(fixed_mask(self.fixed, n)))
        set_("gravity", _readonly(_validated_gravity(self.gravity)))
        if not isinstance(self.name, str):
            raise ValueError(f"name must be a string, got {show(self.name)}")
        set_("name", str(self.name))
        # the derived quantities overflow or underflow quietly; the checks below name the member
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            self._check_lengths()
            self._check_bars()
            self._check_strings()
        set_("cables", resolve_cables(self.cables, self.strings, self.string_nodes,
                                      self.string_rest_lengths))
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            self._check_cables()
        self._check_inertia()

    def _member_error(self, kind: str, k: int, text: str) -> ValueError:
        """A ValueError about member `k` of `kind` ("bar" or "string"), named with its nodes."""
        i, j = (self.bar_nodes if kind == "bar" else self.string_nodes)[k]
        return ValueError(f"{kind} {k} (nodes {i}->{j}): {text}")

    def _check_window(self, kind: str, values, what: str, unit: str, detail) -> None:
        """ValueError naming the first member whose `what` is outside [SMALLEST, LARGEST]."""
        k = first_out_of_range(np.asarray(values, dtype=float))
        if k is not None:
            raise self._member_error(
                kind, k, f"{what} {values[k]:.3g} {unit} ({detail(k)}) is out of range; it must "
                f"lie in [{SMALLEST:g}, {LARGEST:g}] {unit}: check the units and magnitudes")

    def _check_lengths(self):
        """Every member longer than SHORTEST_RELATIVE of the structure's size, and in range."""
        span = float(np.linalg.norm(self.nodes.max(axis=0) - self.nodes.min(axis=0)))
        size = max(span, float(np.abs(self.nodes).max()))
        for kind, lengths in (("bar", self.bar_lengths), ("string", self.string_lengths)):
            short = np.flatnonzero(lengths < SHORTEST_RELATIVE * size)
            if short.size:
                k = int(short[0])
                i, j = (self.bar_nodes if kind == "bar" else self.string_nodes)[k]
                if lengths[k] == 0:
                    raise self._member_error(kind, k, f"zero length; nodes {i} and {j} coincide "
                                             f"at {self.nodes[i].tolist()}")
                raise self._member_error(
                    kind, k, f"length {lengths[k]:.3g} m is too short for a structure of size "
                    f"{size:.3g} m (its span or largest coordinate; a member needs "
                    f"{SHORTEST_RELATIVE:g} of it, {SHORTEST_RELATIVE * size:.3g} m, for an "
                    f"accurate direction); merge nodes {i} and {j} or move them apart")
            self._check_window(kind, lengths, "length", "m", lambda k: "node distance")

    def _check_bars(self):
        """Radii, masses, rest lengths and (where E is given) stiffnesses of the bars in range."""
        r = np.array([b.radius for b in self.bars], dtype=float)
        self._check_window("bar", r, "radius", "m", lambda k: "as given")
        self._check_window("bar", self.bar_masses, "mass rho pi r^2 l", "kg", lambda k: (
            f"density {self.bars[k].density:g}, radius {r[k]:g}, "
            f"length {self.bar_lengths[k]:.3g} m"))
        self._check_window("bar", self.bar_rest_lengths, "rest length", "m",
                           lambda k: "as given")
        elastic = np.array([b.youngs_modulus is not None for b in self.bars], dtype=bool)
        if elastic.any():
            E = np.array([b.youngs_modulus or np.nan for b in self.bars], dtype=float)
            k_b = np.where(elastic, E * np.pi * r**2 / self.bar_rest_lengths, 1.0)
            self._check_window("bar", k_b, "stiffness E pi r^2 / l0", "N/m", lambda k: (
                f"youngs_modulus {E[k]:g}, radius {r[k]:g}, "
                f"rest length {self.bar_rest_lengths[k]:.3g} m"))

    def _check_strings(self):
        """Radii, rest lengths, stiffnesses, actuator limits and damping of the strings in range."""
        r = np.array([1.0 if s.radius is None else s.radius for s in self.strings], dtype=float)
        self._check_window("string", r, "radius", "m", lambda k: "as given")
        l0 = self.string_rest_lengths
        self._check_window("string", l0, "rest length", "m", lambda k: (
            "as given" if self.strings[k].rest_fraction is None else
            f"rest_fraction {self.strings[k].rest_fraction:g} of the length "
            f"{self.string_lengths[k]:.3g} m"))
        self._check_window("string", self.string_stiffness, "stiffness", "N/m", lambda k: (
            "as given" if self.strings[k].stiffness is not None else
            f"E pi r^2 / l0 with youngs_modulus {self.strings[k].youngs_modulus:g}, "
            f"radius {r[k]:g}, rest length {l0[k]:.3g} m"))
        limits = self.string_gamma_max
        k = first_out_of_range(np.where(np.isinf(limits), 1.0, limits))  # inf: no limit given
        if k is not None:
            raise self._member_error("string", k, f"gamma_max {limits[k]:g} N/m is out of "
                                     f"range; it must lie in [{SMALLEST:g}, {LARGEST:g}] N/m")
        c = self.string_damping
        k = first_out_of_range(c, 0.0, LARGEST)
        if k is not None:
            raise self._member_error("string", k, f"damping {c[k]:g} N s/m is out of range; it "
                                     f"must lie in [0, {LARGEST:g}] N s/m")

    def _check_cables(self):
        """Rest lengths and stiffnesses of the cables in range (named by cable)."""
        for values, what, unit in ((self.cable_rest_lengths, "rest length", "m"),
                                   (self.cable_stiffness, "stiffness", "N/m")):
            c = first_out_of_range(values)
            if c is not None:
                raise ValueError(f"cable {c} (strings {list(self.cables[c].strings)}): {what} "
                                 f"{values[c]:.3g} {unit} is out of range; it must lie in "
                                 f"[{SMALLEST:g}, {LARGEST:g}] {unit}: check the units")

    def _check_inertia(self):
        for p, pm in enumerate(self.point_masses):
            if not SMALLEST <= pm.mass <= LARGEST:
                raise ValueError(f"point mass {p} (node {pm.node}): mass {pm.mass:g} kg is out "
                                 f"of range; it must lie in [{SMALLEST:g}, {LARGEST:g}] kg")
        massless = np.flatnonzero((self.node_masses <= 0.0) & ~self.fixed.all(axis=1))
        if massless.size:
            raise ValueError(
                f"node {int(massless[0])} has no mass (no bar touches it and it carries no point "
                "mass) but is not fully fixed: add a point mass at it or fix its x, y and z"
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
        rho = np.array([b.density for b in self.bars], dtype=float)
        r = np.array([b.radius for b in self.bars], dtype=float)
        with np.errstate(over="ignore", under="ignore"):  # out of range: Structure names the bar
            return _readonly(rho * np.pi * r**2 * self.bar_lengths)

    @cached_property
    def bar_rest_lengths(self) -> np.ndarray:
        """(n_bars,) rest lengths l0 [m] of the bars as compressible members."""
        given = np.array([np.nan if b.rest_length is None else b.rest_length for b in self.bars],
                         dtype=float)
        return _readonly(np.where(np.isnan(given), self.bar_lengths, given))

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
        """(n_bars,) axial stiffness k_b = E pi r^2 / l0 [N/m] (docs/theory.md, "Compressible
        bars").

        Raises ValueError naming the bar if a bar has no Young's modulus.
        """
        E = self._bar_property("youngs_modulus", "Young's modulus [Pa]")
        r = np.array([b.radius for b in self.bars], dtype=float)
        with np.errstate(over="ignore", under="ignore"):  # in range: checked on construction
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
        # bincount adds in input order: i0, j0, i1, j1, ... as a loop over the bars would
        m = np.bincount(self.bar_nodes.reshape(-1), weights=np.repeat(self.bar_masses / 2, 2),
                        minlength=self.n_nodes).astype(float)
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
        given = np.array([np.nan if s.rest_length is None else s.rest_length
                          for s in self.strings], dtype=float)
        fraction = np.array([np.nan if s.rest_fraction is None else s.rest_fraction
                             for s in self.strings], dtype=float)
        with np.errstate(over="ignore", under="ignore"):  # out of range: Structure names it
            return _readonly(np.where(np.isnan(given), fraction * self.string_lengths, given))

    @cached_property
    def string_stiffness(self) -> np.ndarray:
        """(n_strings,) axial stiffness k [N/m]: as given, or E pi r^2 / l0."""
        k = np.array([np.nan if s.stiffness is None else s.stiffness for s in self.strings],
                     dtype=float)
        E = np.array([np.nan if s.youngs_modulus is None else s.youngs_modulus
                      for s in self.strings], dtype=float)
        r = np.array([np.nan if s.radius is None else s.radius for s in self.strings], dtype=float)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            return _readonly(np.where(np.isnan(k), E * np.pi * r**2 / self.string_rest_lengths, k))

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

    @property
    def n_cables(self) -> int:
        """Number of clustered cables."""
        return len(self.cables)

    @cached_property
    def string_cable(self) -> np.ndarray:
        """(n_strings,) int: the cable each string is a segment of, -1 for a string on its own."""
        out = np.full(self.n_strings, -1, dtype=np.int64)
        for c, cable in enumerate(self.cables):
            out[list(cable.strings)] = c
        return _readonly(out)

    @cached_property
    def cable_nodes(self) -> tuple[tuple[int, ...], ...]:
        """The node sequence n_0, ..., n_m each cable runs through, in order."""
        return tuple(cable_node_sequence(c.strings, self.string_nodes) for c in self.cables)

    @cached_property
    def cable_lengths(self) -> np.ndarray:
        """(n_cables,) cable lengths L [m] in the initial configuration: sums of segment
        lengths."""
        return _readonly(np.array([self.string_lengths[list(c.strings)].sum()
                                   for c in self.cables], dtype=float))

    @cached_property
    def cable_rest_lengths(self) -> np.ndarray:
        """(n_cables,) cable rest lengths L0 [m]."""
        return _readonly(np.array([
            c.rest_length if c.rest_length is not None else c.rest_fraction * L
            for c, L in zip(self.cables, self.cable_lengths)], dtype=float))

    @cached_property
    def cable_stiffness(self) -> np.ndarray:
        """(n_cables,) cable stiffness k = E pi r^2 / L0 [N/m] (or as given)."""
        return _readonly(np.array([
            c.stiffness if c.stiffness is not None else c.youngs_modulus * np.pi * c.radius**2 / L0
            for c, L0 in zip(self.cables, self.cable_rest_lengths)], dtype=float))

    @cached_property
    def cable_damping(self) -> np.ndarray:
        """(n_cables,) damper coefficients c [N s/m] on the cables' length rates."""
        return _readonly(np.array([c.damping for c in self.cables], dtype=float))

    @cached_property
    def fixed_coordinates(self) -> np.ndarray:
        """Indices into q = vec(N) (node by node: x0, y0, z0, x1, ...) of the fixed coordinates."""
        return _readonly(np.flatnonzero(self.fixed.reshape(-1)))

    @cached_property
    def free_coordinates(self) -> np.ndarray:
        """Indices into q = vec(N) of the free coordinates."""
        return _readonly(np.flatnonzero(~self.fixed.reshape(-1)))

    # -- editing: each method returns a new, validated Structure (model/editing.py) --------------

    def with_nodes(self, nodes, *, keep_rest_lengths: bool = True) -> Structure:
        """The same members with the nodes at new positions.

        Parameters
        ----------
        nodes : array_like, shape (n_nodes, 3)
            The new node positions [m], e.g. a settled configuration ``traj.nodes[-1]`` or
            ``StaticEquilibrium.q``.
        keep_rest_lengths : bool
            True (default): the same physical structure in a new configuration. Every rest
            length is frozen at its current value (rest fractions become rest lengths, and bars
            keep their rest length as compressible members), so strings that were at rest
            length and are now stretched pull. False: members given by a rest fraction, and bars
            without a rest length, take theirs from the new geometry (a new design).
        """
        return editing.with_nodes(self, nodes, keep_rest_lengths)

    def with_gravity(self, gravity) -> Structure:
        """The same structure under the gravitational acceleration `gravity` (3,) [m/s^2]."""
        return dataclasses.replace(self, gravity=gravity)

    def with_fixed(self, fixed) -> Structure:
        """The same structure with the fixed coordinates `fixed` (any form ``Structure`` takes)."""
        return dataclasses.replace(self, fixed=fixed)

    def with_point_masses(self, point_masses) -> Structure:
        """The same structure with the point masses `point_masses` in place of the current ones."""
        return dataclasses.replace(self, point_masses=point_masses)

    def with_bars(self, which=None, *, material=KEEP, radius=KEEP, density=KEEP,
                  youngs_modulus=KEEP, poisson=KEEP, rest_length=KEEP) -> Structure:
        """The same structure with fields of some bars replaced.

        Parameters
        ----------
        which : int or sequence of int, optional
            The bars to change; all by default.
        material, radius, density, youngs_modulus, poisson, rest_length
            A :class:`Bar` field's new value for every selected bar, or a sequence with one
            value per selected bar. A new `material` resets the density, Young's modulus and
            Poisson's ratio to the preset's unless they are given in the same call. Fields not
            given keep their values.

        Examples
        --------
        >>> soft = tbar.with_bars(material="hdpe")              # doctest: +SKIP
        >>> thick = tbar.with_bars([0], radius=0.02)             # doctest: +SKIP
        """
        return editing.with_members(self, "bar", which, dict(
            material=material, radius=radius, density=density, youngs_modulus=youngs_modulus,
            poisson=poisson, rest_length=rest_length))

    def with_strings(self, which=None, *, material=KEEP, radius=KEEP, youngs_modulus=KEEP,
                     stiffness=KEEP, rest_length=KEEP, rest_fraction=KEEP, damping=KEEP,
                     kind=KEEP, actuated=KEEP, gamma_max=KEEP) -> Structure:
        """The same structure with fields of some tension members replaced.

        Parameters
        ----------
        which : int or sequence of int, optional
            The strings to change; all by default.
        material, radius, youngs_modulus, stiffness, rest_length, rest_fraction, damping, kind, \
actuated, gamma_max
            A :class:`String` field's new value for every selected string, or a sequence with
            one value per selected string. The member stays one consistent description: a new
            `rest_length` replaces a rest fraction and the other way round; a new `stiffness`
            replaces the Young's modulus and material, and a new `youngs_modulus` or
            `material` replaces a given stiffness. Fields not given keep their values.

        Examples
        --------
        >>> damped = tbar.with_strings(damping=2.0)                           # doctest: +SKIP
        >>> off = tbar.with_strings(rest_length=tbar.string_rest_lengths * 0.95)  # doctest: +SKIP
        """
        return editing.with_members(self, "string", which, dict(
            material=material, radius=radius, youngs_modulus=youngs_modulus,
            stiffness=stiffness, rest_length=rest_length, rest_fraction=rest_fraction,
            damping=damping, kind=kind, actuated=actuated, gamma_max=gamma_max))

    def with_base(self, nodes) -> Structure:
        """The same structure turned to stand on the nodes `nodes` (a face) in the plane z = 0.

        A rigid motion, no reflection: the plane of the base nodes becomes z = 0 with every
        other node above it (z > 0), the base's centroid goes to the origin and the first base
        node off that centroid onto the +x axis. Members, rest lengths, fixed coordinates (the
        same world axes), point masses and gravity are kept; nothing is fixed here: add
        ``.with_fixed({k: "xyz" for k in nodes})`` to pin the base.

        Parameters
        ----------
        nodes : sequence of int
            At least three node indices in one plane (to 1e-6 of the structure's size), not on
            one line, with no other node on the far side of their plane: a face on the outside,
            e.g. a prism's ring or one of the icosahedron's string triangles.

        Raises
        ------
        TypeError
            If an index is not an integer.
        ValueError
            If an index is out of range, fewer than three distinct nodes are given, they are on
            one line or not in one plane, or nodes lie on both sides of their plane.

        Examples
        --------
        >>> ico = tc.catalog.icosahedron()                               # doctest: +SKIP
        >>> standing = ico.with_base([0, 6, 11])   # on a string triangle  # doctest: +SKIP
        """
        return editing.with_base(self, nodes)

    def with_scale(self, factor) -> Structure:
        """The same structure with every length times `factor`.

        The nodes (about the origin) and the rest lengths given as lengths are multiplied by
        `factor`; rest fractions, cross-sections, materials, damping, point masses and gravity
        are kept. Strains and member forces stay the same, so force densities divide by
        `factor`, and bar masses grow with their length.

        Parameters
        ----------
        factor : float
            The scale, > 0 (e.g. ``1 / mean bar length`` for bars of 1 m on average).
        """
        return editing.with_scale(self, factor)

    def __repr__(self) -> str:
        return (
            f"Structure(name={self.name!r}, n_nodes={self.n_nodes}, n_bars={self.n_bars}, "
            f"n_strings={self.n_strings}, fixed_coordinates={len(self.fixed_coordinates)}, "
            f"point_masses={len(self.point_masses)}, gravity={self.gravity.tolist()}"
            + (f", n_cables={self.n_cables})" if self.cables else ")")
        )

    def summary(self) -> str:
        """The members, the mass, the supports and the length ranges as a table (``tenscontrol
        info`` prints the full description)."""
        springs = int(self.string_is_spring.sum())
        return titled_table(f"Structure {self.name!r}", [
            ("nodes, bars, strings", f"{self.n_nodes}, {self.n_bars}, {self.n_strings} "
                                     f"({springs} springs)"),
            ("actuated strings", f"{self.actuated_strings.size}"),
            ("point masses", f"{len(self.point_masses)}"),
            ("total mass", f"{self.total_mass:.6g} kg"),
            ("fixed coordinates", f"{self.fixed_coordinates.size}"),
            ("gravity", f"({', '.join(f'{g:g}' for g in self.gravity)}) m/s^2"),
            ("bar lengths", value_range(self.bar_lengths, "m")),
            ("string rest lengths", value_range(self.string_rest_lengths, "m"))]
            + [(f"cable {c}", f"strings {list(cable.strings)}, nodes "
                f"{'->'.join(map(str, nodes))}, L0 {L0:.6g} m, k {k:.6g} N/m")
               for c, (cable, nodes, L0, k) in enumerate(zip(
                   self.cables, self.cable_nodes, self.cable_rest_lengths, self.cable_stiffness))])
