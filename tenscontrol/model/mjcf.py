"""A structure as a MuJoCo model (MJCF XML), for contact and for MuJoCo's tools.

:func:`to_mjcf` writes the structure as tenscontrol's rigid-bar model sees it, so that the two
move alike (tests/test_mjcf.py checks the free motion against :func:`tenscontrol.simulate`
with the ``mujoco`` package):

- each bar is a body (frame at the bar's centre, z along the bar) with the bar's mass and the
  transverse inertia of a thin rod, m l^2 / 12 (plus m r^2 / 4 with ``include_radius``, the
  solid cylinder of :func:`tenscontrol.mass_matrix`); point masses at its ends are folded into
  the body's mass, centre of mass and inertia. The nodal model has no spin about the bar's
  axis; in MuJoCo the spin is a degree of freedom, but nothing excites it: the members attach
  on the axis and gravity acts at the centre of mass, so their moments about the axis are zero,
  and for a body symmetric about the axis the spin rate stays zero (Euler's equations). The
  axial inertia, m r^2 / 2, therefore does not change the motion; it only has to be positive.
- joints: a free joint for a bar with no fixed coordinate; for a bar with a fixed coordinate
  at one end, slide joints along that end's free axes and a ball joint there; a bar fully fixed
  at both ends has no joint. A node no bar touches (a payload) is a body with the point mass
  and one slide joint per free axis.
- each string is a spatial tendon between the sites of its nodes with the string's stiffness
  and damping. A one-sided string (``kind="string"``) gets the dead band
  ``springlength="0 l0"``: no force from length 0 up to the rest length l0, ``k (l - l0)``
  pulling above it, so it never pushes. MuJoCo's tendon damper acts also while the string is
  slack, where tenscontrol switches it off: with damped one-sided strings that go slack the
  motions differ there. A spring (``kind="spring"``) has ``springlength="l0"``.
- fixed nodes are sites of the world body; gravity is the structure's.
- geoms (capsules along the bars, spheres at payload nodes) are for display and contact: they
  carry no mass (the inertia is explicit) and have ``contype="1" conaffinity="0"``, so bars
  never collide with one another but do collide with a floor of MuJoCo's default type
  (``contype="1" conaffinity="1"``) a user adds.

Only class-1 structures are written (no node shared by two bars), and a bar may have fixed
coordinates at one end only, unless both ends are fully fixed. The XML is written with
:mod:`xml.etree`; tenscontrol does not need MuJoCo to write it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from tenscontrol import fileio, validation
from tenscontrol.model.cables import reject_cables
from tenscontrol.model.structure import Structure

__all__ = ["to_mjcf"]

_AXES = "xyz"
# the inertia of a massless display body of a point node: positive, as MuJoCo requires of a
# moving body, and irrelevant, since such a body only slides
_POINT_INERTIA = 1e-9
_INTEGRATORS = ("RK4", "Euler", "implicit", "implicitfast")


def _num(values) -> str:
    """Numbers as MJCF text with all 17 significant digits (the model must match to 1e-6 m)."""
    return " ".join(repr(float(v)) for v in np.atleast_1d(values))


def _quat_z_to(d: np.ndarray) -> np.ndarray:
    """Unit quaternion (w, x, y, z) rotating the z axis onto the unit vector d."""
    z = np.array([0.0, 0.0, 1.0])
    c = float(z @ d)
    if c < -1.0 + 1e-12:  # opposite: half a turn about x
        return np.array([0.0, 1.0, 0.0, 0.0])
    q = np.concatenate([[1.0 + c], np.cross(z, d)])
    return q / np.linalg.norm(q)


def _rotation(q: np.ndarray) -> np.ndarray:
    w, x, y, z = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _check_class_one(structure: Structure) -> None:
    ends = structure.bar_nodes.reshape(-1)
    counts = np.bincount(ends, minlength=structure.n_nodes)
    shared = np.flatnonzero(counts > 1)
    if shared.size:
        node = int(shared[0])
        bars = [b for b, pair in enumerate(structure.bar_nodes) if node in pair]
        raise ValueError(f"to_mjcf: node {node} is an end of bars {bars}; only class-1 "
                         "structures (no node shared by two bars) can be written as MJCF")


def _bar_inertial(structure, b: int, length: float, point_mass: np.ndarray,
                  include_radius: bool) -> tuple[float, float, float, float]:
    """Mass [kg], centre of mass along the bar's axis from its centre [m], transverse and axial
    inertia about the centre of mass [kg m^2] of bar b with the point masses at its ends."""
    i, j = structure.bar_nodes[b]
    m, r = float(structure.bar_masses[b]), float(structure.bars[b].radius)
    mi, mj = float(point_mass[i]), float(point_mass[j])
    total = m + mi + mj
    zc = (mj - mi) * length / 2 / total
    rod = m * length**2 / 12 + (m * r**2 / 4 if include_radius else 0.0)
    transverse = (rod + m * zc**2 + mi * (length / 2 + zc) ** 2 + mj * (length / 2 - zc) ** 2)
    return total, zc, transverse, m * r**2 / 2


def _bar_joints(body, structure, b: int, rotation: np.ndarray, length: float) -> None:
    """The joints that let bar b move as tenscontrol lets it (see the module docstring)."""
    fixed = structure.fixed
    pair = structure.bar_nodes[b]
    held = [end for end in (0, 1) if fixed[pair[end]].any()]
    if not held:
        ET.SubElement(body, "joint", name=f"bar{b}_free", type="free")
        return
    if len(held) == 2:
        if fixed[pair].all():
            return  # welded to the world
        raise ValueError(f"to_mjcf: bar {b} (nodes {pair[0]}->{pair[1]}) has fixed coordinates "
                         "at both ends; MJCF export supports fixed coordinates at one end of a "
                         "bar (or both ends fully fixed)")
    end = held[0]
    node = int(pair[end])
    anchor = [0.0, 0.0, (length / 2) * (1 if end else -1)]
    for a in np.flatnonzero(~fixed[node]):
        # slide joints come before the ball joint, so their axes stay the world's
        ET.SubElement(body, "joint", name=f"node{node}_{_AXES[a]}", type="slide",
                      pos=_num(anchor), axis=_num(rotation.T[:, a]))
    ET.SubElement(body, "joint", name=f"bar{b}_ball", type="ball", pos=_num(anchor))


def _bar_body(parent, structure, b: int, point_mass, include_radius: bool) -> None:
    i, j = structure.bar_nodes[b]
    ni, nj = structure.nodes[i], structure.nodes[j]
    length = float(np.linalg.norm(nj - ni))
    quat = _quat_z_to((nj - ni) / length)
    body = ET.SubElement(parent, "body", name=f"bar{b}", pos=_num((ni + nj) / 2),
                         quat=_num(quat))
    mass, zc, transverse, axial = _bar_inertial(structure, b, length, point_mass, include_radius)
    ET.SubElement(body, "inertial", pos=_num([0.0, 0.0, zc]), mass=_num(mass),
                  diaginertia=_num([transverse, transverse, axial]))
    _bar_joints(body, structure, b, _rotation(quat), length)
    ET.SubElement(body, "geom", name=f"bar{b}", type="capsule",
                  size=_num(structure.bars[b].radius),
                  fromto=_num([0.0, 0.0, -length / 2, 0.0, 0.0, length / 2]),
                  contype="1", conaffinity="0", mass="0")
    for node, z in ((i, -length / 2), (j, length / 2)):
        ET.SubElement(body, "site", name=f"node{node}", pos=_num([0.0, 0.0, z]))


def _node_body(parent, structure, node: int, point_mass) -> None:
    """A node no bar touches: a world site if fully fixed, else a sliding point mass."""
    free = np.flatnonzero(~structure.fixed[node])
    pos = structure.nodes[node]
    if free.size == 0:
        ET.SubElement(parent, "site", name=f"node{node}", pos=_num(pos))
        return
    body = ET.SubElement(parent, "body", name=f"node{node}", pos=_num(pos))
    ET.SubElement(body, "inertial", pos="0 0 0", mass=_num(point_mass[node]),
                  diaginertia=_num([_POINT_INERTIA] * 3))
    for a in free:
        ET.SubElement(body, "joint", name=f"node{node}_{_AXES[a]}", type="slide",
                      axis=_num(np.eye(3)[a]))
    ET.SubElement(body, "geom", type="sphere", size="0.01", contype="1", conaffinity="0",
                  mass="0")
    ET.SubElement(body, "site", name=f"node{node}")


def _tendons(root, structure: Structure) -> None:
    tendon = ET.SubElement(root, "tendon")
    l0 = structure.string_rest_lengths
    for k, (i, j) in enumerate(structure.string_nodes):
        spring = bool(structure.string_is_spring[k])
        rest = _num(l0[k]) if spring else _num([0.0, l0[k]])
        spatial = ET.SubElement(tendon, "spatial", name=f"string{k}",
                                stiffness=_num(structure.string_stiffness[k]),
                                damping=_num(structure.string_damping[k]), springlength=rest,
                                width="0.002")
        ET.SubElement(spatial, "site", site=f"node{i}")
        ET.SubElement(spatial, "site", site=f"node{j}")


def to_mjcf(structure: Structure, path=None, *, include_radius: bool = False,
            timestep: float = 1e-4, integrator: str = "RK4") -> str:
    """The structure as a MuJoCo MJCF model; written to `path` if given.

    Bars are rigid bodies, strings tension-only spatial tendons, fixed nodes world sites
    (the module docstring :mod:`tenscontrol.model.mjcf` gives the details and the limits).
    Free of contact, the model moves as :func:`tenscontrol.simulate` with rigid bars does:
    on a 3-prism and on the ball with springs the node paths agree to 1e-6 m over 0.2 s
    (tests/test_mjcf.py).

    Parameters
    ----------
    structure : Structure
        A class-1 structure (no node shared by two bars); a bar may have fixed coordinates at
        one end only, unless both its ends are fully fixed.
    path : str or path-like, optional
        Where to write the XML (UTF-8).
    include_radius : bool
        Give the bars the transverse inertia of solid cylinders, as
        ``simulate(..., include_radius=True)``; thin rods by default.
    timestep : float
        MuJoCo's time step [s]. Stiff strings need a small one.
    integrator : {"RK4", "Euler", "implicit", "implicitfast"}
        MuJoCo's integrator.

    Returns
    -------
    str
        The XML text. Node k is the site ``node<k>`` (``data.site_xpos``), string k the
        tendon ``string<k>``, bar b the body ``bar<b>``.

    Raises
    ------
    ValueError
        For a structure MJCF cannot express this way (named), or a bad option.
    """
    reject_cables(structure, "to_mjcf")
    if not isinstance(structure, Structure):
        raise TypeError(f"to_mjcf: structure must be a Structure, got {type(structure).__name__}")
    timestep = validation.real("to_mjcf: timestep", timestep, what="a number > 0 [s]",
                               positive=True, expected="a number > 0 [s]", error=ValueError)
    validation.choice("to_mjcf: integrator", integrator, _INTEGRATORS)
    include_radius = validation.flag("to_mjcf: include_radius", include_radius)
    _check_class_one(structure)
    point_mass = np.zeros(structure.n_nodes)
    for pm in structure.point_masses:
        point_mass[pm.node] += pm.mass
    root = ET.Element("mujoco", model=structure.name)
    ET.SubElement(root, "compiler", angle="radian", inertiafromgeom="false")
    ET.SubElement(root, "option", timestep=_num(timestep), integrator=integrator,
                  gravity=_num(structure.gravity))
    world = ET.SubElement(root, "worldbody")
    for b in range(structure.n_bars):
        _bar_body(world, structure, b, point_mass, include_radius)
    on_bar = set(structure.bar_nodes.reshape(-1).tolist())
    for node in range(structure.n_nodes):
        if node not in on_bar:
            _node_body(world, structure, node, point_mass)
    _tendons(root, structure)
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode") + "\n"
    if path is not None:
        fileio.write_file(path, lambda f: f.write(text.encode("utf-8")))
    return text
