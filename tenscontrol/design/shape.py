"""Shape change: a path of static equilibria and the tracking controller designed along it.

:func:`shape_path` plans the path: at each of `points` values of s in [0, 1] the configuration
``geometry(s)`` (the user's path of node positions, which must keep the bar lengths and the
fixed coordinates) gets its prestress from :func:`tenscontrol.equilibrium` (``objective=
"min_norm"`` by default: the least-norm force densities, continuous along the path, with every
string at or above gamma_min, certified by its residual). :func:`shape_change` adds the feedback:
LQR designs (``kind="control"``) about `designs` of these equilibria, scheduled by
:class:`tenscontrol.control.shape.ShapeTracking` with the quintic time law over `duration`.
docs/theory.md has no new equations here: every point is the prestress design of "Prestress",
every design the LQR of "Control on force densities".
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from tenscontrol import validation
from tenscontrol.statics.self_stress import equilibrium_matrix, self_stress
from tenscontrol.control.shape import ShapeTracking
from tenscontrol.design.result import Design
from tenscontrol.linear.linearization import linearize
from tenscontrol.mechanics.dynamics import mass_matrix
from tenscontrol.mechanics.geometry import nodal_vector
from tenscontrol.model.structure import Structure
from tenscontrol.model.tables import Presentable, titled_table, value_range
from tenscontrol.statics.prestress import PrestressError, equilibrium

__all__ = ["ShapeChange", "ShapePath", "shape_change", "shape_path"]

#: Relative tolerance on the bar lengths and fixed coordinates of a planned configuration.
GEOMETRY_RTOL = 1e-9


@dataclass(frozen=True, eq=False)
class ShapePath(Presentable):
    """A path of certified static equilibria (the result of :func:`shape_path`).

    Attributes
    ----------
    s : ndarray, shape (m,)
        Path parameters, 0 to 1.
    nodes : ndarray, shape (m, 3n)
        Configurations q(s) [m].
    gamma : ndarray, shape (m, n_strings)
        Their string force densities [N/m], each >= gamma_min.
    bar_force_densities : ndarray, shape (m, n_bars)
        Their bar force densities [N/m] (negative in compression).
    residual : ndarray, shape (m,)
        Max abs equilibrium residual of each point [N] (:attr:`Equilibrium.residual`).
    structures : tuple of Structure
        At each point, the structure whose rest lengths realise gamma there.
    gamma_min : float
        The least force density asked of every string [N/m].
    """

    s: np.ndarray
    nodes: np.ndarray
    gamma: np.ndarray
    bar_force_densities: np.ndarray
    residual: np.ndarray
    structures: tuple
    gamma_min: float

    def __repr__(self) -> str:
        move = float(np.abs(self.nodes[-1] - self.nodes[0]).max())
        return (f"ShapePath(structure={self.structures[0].name!r}, points={self.s.size}, "
                f"largest node move={move:.4g} m, least gamma={self.gamma.min():.4g} N/m, "
                f"max residual={self.residual.max():.3g} N)")

    def summary(self) -> str:
        """The path's size, its force densities and how well each point is in equilibrium."""
        move = float(np.abs(self.nodes[-1] - self.nodes[0]).max())
        return titled_table("ShapePath", [
            ("structure", self.structures[0].name), ("points", f"{self.s.size}"),
            ("largest node move", f"{move:.4g} m"),
            ("string gamma", value_range(self.gamma, "N/m")
             + f" (gamma_min {self.gamma_min:.4g})"),
            ("bar force densities", value_range(self.bar_force_densities, "N/m")),
            ("max residual", f"{self.residual.max():.3g} N")])


@dataclass(frozen=True, eq=False)
class ShapeChange(Design):
    """A planned shape change and its tracking controller (the result of :func:`shape_change`).

    Attributes
    ----------
    controller : ShapeTracking
        Feedforward gamma(s) plus the LQR gains interpolated in s; start the run from
        ``path.structures[0]`` at rest.
    path : ShapePath
    designs : tuple of LQRDesign
        The LQR designs (``kind="control"``) at the scheduled path points: their gains K,
        Riccati solutions S and design models.
    E : tuple of ndarray
        The closed-loop eigenvalues of each design [1/s] (their real parts bound the
        settling; ``poles`` before issue 30: deprecated).
    """

    path: ShapePath
    designs: tuple

    @property
    def E(self) -> tuple:
        return tuple(d.E for d in self.designs)

    @property
    def poles(self) -> tuple:
        """Deprecated spelling of :attr:`E` (the designs' closed-loop eigenvalues)."""
        warnings.warn("ShapeChange.poles is deprecated: the designs' closed-loop eigenvalues "
                      "are ShapeChange.E (python-control's name)", DeprecationWarning,
                      stacklevel=2)
        return self.E

    def __repr__(self) -> str:
        slowest = max(float(np.max(p.real)) for p in self.E)
        return (f"ShapeChange(structure={self.path.structures[0].name!r}, "
                f"points={self.path.s.size}, designs={len(self.designs)}, "
                f"duration={self.controller.duration:.4g} s, slowest pole real part="
                f"{slowest:.3g} 1/s)")

    def summary(self) -> str:
        """The path, the motion and the designs' slowest pole as a table."""
        slowest = max(float(np.max(p.real)) for p in self.E)
        move = float(np.abs(self.path.nodes[-1] - self.path.nodes[0]).max())
        return titled_table("ShapeChange", [
            ("structure", self.path.structures[0].name), ("points", f"{self.path.s.size}"),
            ("largest node move", f"{move:.4g} m"),
            ("commanded strings", f"{self.controller.strings.size}"),
            ("duration", f"{self.controller.duration:.4g} s"),
            ("designs", f"{len(self.designs)}"),
            ("slowest pole real part", f"{slowest:.3g} 1/s"),
            ("max path residual", f"{self.path.residual.max():.3g} N")])


def _configuration(structure: Structure, geometry, s: float) -> np.ndarray:
    """geometry(s) as (3n,), checked to keep the fixed coordinates and the bar lengths."""
    try:
        value = geometry(s)
    except Exception as exc:
        raise ValueError(f"shape_path: geometry({s:g}) raised {type(exc).__name__}: {exc}") \
            from exc
    q = nodal_vector(structure.n_nodes, f"shape_path: geometry({s:g})", value)
    q0 = structure.nodes.reshape(-1)
    L = float(np.mean(structure.bar_lengths)) if structure.n_bars else 1.0
    fixed = structure.fixed_coordinates
    off = np.abs(q[fixed] - q0[fixed])
    if off.size and off.max() > GEOMETRY_RTOL * max(L, np.abs(q0).max()):
        k = int(fixed[np.argmax(off)])
        raise ValueError(f"shape_path: geometry({s:g}) moves fixed coordinate {k} (node "
                         f"{k // 3}, {'xyz'[k % 3]}) by {off.max():.3g} m; keep it at "
                         f"{q0[k]:.6g} m")
    N = q.reshape(-1, 3)
    pairs = structure.bar_nodes
    lengths = np.linalg.norm(N[pairs[:, 1]] - N[pairs[:, 0]], axis=1)
    error = np.abs(lengths - structure.bar_lengths)
    if error.size and error.max() > GEOMETRY_RTOL * L:
        b = int(np.argmax(error))
        raise ValueError(f"shape_path: geometry({s:g}) changes the length of bar {b} (nodes "
                         f"{pairs[b, 0]}->{pairs[b, 1]}) from {structure.bar_lengths[b]:.9g} m "
                         f"to {lengths[b]:.9g} m; rigid bars keep their lengths")
    return q


def shape_path(structure: Structure, geometry, *, points: int = 21, gamma_min=0.0,
               objective: str = "min_norm") -> ShapePath:
    """Plan a path of static equilibria through the configurations ``geometry(s)``.

    Parameters
    ----------
    structure : Structure
        The structure (rigid bars; gravity as it has it). Its rest lengths do not matter: the
        prestress of every point is designed.
    geometry : callable ``geometry(s) -> (n, 3) or (3n,)``
        Node positions [m] along the path, s in [0, 1]; ``geometry(0)`` is the start. They
        must keep every bar's length and every fixed coordinate (to 1e-9 relative).
    points : int
        Number of planned points, equally spaced in s (>= 2).
    gamma_min : float or array_like, shape (n_strings,)
        Least force density of every string at every point [N/m].
    objective : {"min_norm", "min_sum"}
        The prestress objective of :func:`tenscontrol.equilibrium`; the least norm is unique
        and continuous along the path, the least sum may jump between vertices.

    Returns
    -------
    ShapePath

    Raises
    ------
    ValueError
        When a configuration breaks a bar length or a fixed coordinate.
    PrestressError
        When some point admits no prestress with every string >= gamma_min (the message
        names s).
    """
    validation.callable_value("shape_path: geometry", geometry, "geometry(s) -> (n, 3) nodes")
    points = validation.integer("shape_path: points", points, minimum=2)
    s = np.linspace(0.0, 1.0, points)
    nodes, gamma, psi, residual, structures = [], [], [], [], []
    for sk in s:
        q = _configuration(structure, geometry, float(sk))
        try:
            eq = equilibrium(structure.with_nodes(q.reshape(-1, 3)), gamma_min=gamma_min,
                             objective=objective)
        except PrestressError as exc:
            raise PrestressError(f"shape_path: at s = {sk:.4g} no prestress keeps every string "
                                 f">= gamma_min: {exc}") from exc
        nodes.append(q)
        gamma.append(eq.gamma)
        psi.append(eq.bar_force_densities)
        residual.append(eq.residual)
        structures.append(eq.structure)
    arrays = [np.array(a) for a in (s, nodes, gamma, psi, residual)]
    for a in arrays:
        a.setflags(write=False)
    g_min = float(np.min(gamma_min))
    return ShapePath(*arrays, tuple(structures), g_min)


def shape_change(structure: Structure, geometry, duration: float, *, points: int = 21,
                 designs: int = 3, gamma_min=0.0, effort: float = 1e-2,
                 objective: str = "min_norm", allocation: bool = True,
                 inertia: bool = True) -> ShapeChange:
    """Plan a shape change and design its tracking controller.

    Parameters
    ----------
    structure, geometry, points, gamma_min, objective
        As for :func:`shape_path`. Every string the path loads must be commanded
        (``String.actuated``); strings between two fixed nodes may be left out.
    duration : float
        Time of the motion [s] (the quintic time law's T). Long against the slowest
        closed-loop mode, the motion is nearly static and the feedforward nearly exact.
    designs : int
        Number of LQR designs, at equally spaced path points (1: one design at the start).
    effort : float
        The LQR's effort weight (:func:`tenscontrol.lqr`).
    allocation : bool
        Move the feedback's commands along the self-stresses of the path points
        (:func:`tenscontrol.allocated`'s least move) to keep every commanded string at or above
        gamma_min (and its gamma_max) where a self-stress can; the nodal forces change only
        by the difference of self-stresses within one path step.
    inertia : bool
        Add the dynamic feedforward: at each path point the least force densities whose
        nodal forces (net of the bar and support forces) give the reference's accelerations,
        less the commanded strings' damper force densities along the reference.

    Returns
    -------
    ShapeChange
    """
    from tenscontrol.design.synthesis import lqr   # python-control loads on first use

    duration = validation.real("shape_change: duration", duration, positive=True)
    designs = validation.integer("shape_change: designs", designs, minimum=1)
    allocation = validation.flag("shape_change: allocation", allocation)
    inertia = validation.flag("shape_change: inertia", inertia)
    path = shape_path(structure, geometry, points=points, gamma_min=gamma_min,
                      objective=objective)
    _check_commanded(structure, path)
    index = np.unique(np.round(np.linspace(0, path.s.size - 1, designs)).astype(int))
    lqr_designs = tuple(lqr(linearize(path.structures[k], kind="control").actuated(),
                            effort=effort) for k in index)
    strings = lqr_designs[-1].controller.strings
    gains = [design.controller.K for design in lqr_designs]
    lower = validation.per_item("shape_change: gamma_min", gamma_min, structure.n_strings,
                                "N/m", items=" (one per string)")[strings]
    stresses = tuple(self_stress(at, strings, q, gamma_min=lower)
                     for at, q in zip(path.structures, path.nodes)) if allocation else ()
    forces = (np.array([_inertia(at, strings, q) for at, q in zip(path.structures, path.nodes)])
              if inertia else np.zeros(0))
    controller = ShapeTracking(path.s, path.nodes, path.gamma[:, strings], path.s[index],
                               np.array(gains), duration, strings, stresses, forces,
                               structure.string_nodes[strings],
                               structure.string_damping[strings] if inertia else np.zeros(0))
    return ShapeChange(controller, path, lqr_designs)


def _inertia(structure: Structure, strings: np.ndarray, q: np.ndarray) -> np.ndarray:
    """F (nu, 3n): the least force densities u = F qdd whose nodal forces -Yhat_c u accelerate
    the masses by qdd on the allowed motions, ``Z^T (-Yhat_c u) = Z^T M qdd``."""
    Z, E = equilibrium_matrix(structure, strings, q)
    return -np.linalg.pinv(E, rcond=1e-10) @ Z.T @ mass_matrix(structure, q)


def _check_commanded(structure: Structure, path: ShapePath) -> None:
    """Refuse a string that is not commanded although its force density must change."""
    commanded = set(int(k) for k in structure.actuated_strings)
    fixed = structure.fixed
    for k, (i, j) in enumerate(structure.string_nodes):
        inert = bool(fixed[i].all() and fixed[j].all())
        moves = np.ptp(path.gamma[:, k]) > 1e-9 * np.abs(path.gamma).max()   # [N/m]: relative
        if k not in commanded and moves and not inert:
            raise ValueError(f"shape_change: string {k} (nodes {i}->{j}) is not actuated but "
                             "its force density changes along the path; mark it actuated")
