"""Ready-made structures: the paper's benchmarks and Snelson prisms.

Every function returns a fresh, validated :class:`tenscontrol.Structure`. The benchmark
structures (T-bar, D-bar, robotic arm, ball with payload) carry the data of Hsu, Tadiparthi &
Bhattacharya, Computational Mechanics 67:139-165 (2021), and of its authors' reference MATLAB
code STEDY, with zero-based node and member indices (the paper's node N is node N-1 here); each
function's Notes give the provenance of its values. The prisms are parametric.
Load functions return callables ``force(t, q, qd) -> (n_nodes, 3)`` [N].
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from tenscontrol.model.form_finding import form_find
from tenscontrol.model.materials import material
from tenscontrol.model.structure import Structure

__all__ = [
    "arm", "arm_load", "ball", "ball_load", "ball_nodes", "dbar", "from_topology", "icosahedron",
    "prestressable_twist", "prism", "prism_tower", "tbar", "STRUCTURES",
]

#: The functions that build a whole structure by name (study files and the CLI offer these).
STRUCTURES = ("tbar", "dbar", "arm", "ball", "prism", "prism_tower", "icosahedron")

Force = Callable[[float, np.ndarray, np.ndarray], np.ndarray]

_GRAVITY = (0.0, 0.0, -9.806)
# the paper's one-sided nylon strings (E = 2e9 Pa, radius 1 mm): T-bar table2, arm and ball
_NYLON = {"kind": "string", "youngs_modulus": 2e9, "radius": 1e-3}
_TBAR_VARIANTS = {
    # variant: (fields shared by the four members, rest fractions m0..m3)
    "stedy": ({"kind": "string", "youngs_modulus": 7e7, "radius": 1e-3}, (1.0, 0.7, 1.0, 0.7)),
    "paper": ({"kind": "spring", "stiffness": 100.0}, (1.0, 0.9, 1.0, 0.9)),
    "table2": (_NYLON, (1.0, 1.0, 1.0, 1.0)),
}


def tbar(variant: str = "stedy", damping: float = 0.0, bar_material: str | None = None,
         clustered: bool = False) -> Structure:
    r"""The planar T-bar: two crossing bars pinned at the ground, held by four members.

    ::

           z
           ^
         3 o-------- m2 --------o 2     bars b0 = 0->2, b1 = 1->3 (length 5 m)
           |\                  /|     members m0 = 0->1, m1 = 1->2, m2 = 2->3,
           |  \ b1        b0 /  |             m3 = 3->0 (length c = 5 cos 45 deg)
           |    \          /    |
           |      \      /      |     nodes 0, 1 fixed in x, y, z;
        m3 |        \  /        | m1  nodes 2, 3 fixed in y
           |         /\         |
           |       /    \       |
           |     /        \     |
           |   /            \   |
           | /                \ |
         0 o-------- m0 --------o 1  --> x

    Parameters
    ----------
    variant : {"stedy", "paper", "table2"}
        ``"stedy"``: one-sided strings, E = 7e7 Pa, radius 1 mm, rest fractions
        [1, 0.7, 1, 0.7] (the reference code's example). ``"paper"``: two-sided springs,
        k = 100 N/m, rest fractions [1, 0.9, 1, 0.9] (the paper's Table 1). ``"table2"``:
        one-sided strings, E = 2e9 Pa, radius 1 mm, rest fraction 1 (no pretension: the
        configuration is an equilibrium), the soft-against-metallic study of the paper's
        Table 2 (and its Figs. 17-19, which use damping 100).
    damping : float
        Damper coefficient on all four members [N s/m]. The reference code's shipped example
        uses 1.0; the default 0.0 gives the conservative benchmark.
    bar_material : str, optional
        A preset of :data:`tenscontrol.materials.MATERIALS` (e.g. ``"hdpe"``,
        ``"aluminium"``) giving the bars' density, Young's modulus and Poisson's ratio, for
        the compressible-bar studies of the paper's Figs. 15-19 and Table 2. By default the bars have
        density 500 kg/m^3, E = 2e11 Pa and Poisson 0.3 (the reference code's T-bar).
    clustered : bool
        True: members m1, m2, m3 form one cable 1 -> 2 -> 3 -> 0 over the bar tips
        (:class:`~tenscontrol.model.cables.Cable`) with the members' material and damping and
        the sum of their rest lengths (2.4 c for ``"stedy"``); the name ends in
        ``"-clustered"``. Needs one-sided strings (not ``"paper"``).

    Returns
    -------
    Structure
        Named ``"tbar-<variant>"`` (``"tbar-stedy-hdpe"`` with a bar material); bars of
        radius 0.05 m; no gravity.

    Raises
    ------
    ValueError
        For an unknown `variant`.

    Notes
    -----
    The T-bar of Hsu et al. (2021), Fig. 1a and Figs. 2-9. c = 5 cos 45 deg = 3.5355339059 m;
    fixed q indices 0, 1, 2, 3, 4, 5, 7, 10, free q6 = x2, q8 = z2, q9 = x3, q11 = z3. Bars of
    density 500 kg/m^3 and radius 0.05 m weigh 19.634954 kg each. The bottom member joins two
    fixed nodes and is inert; the motion has two degrees of freedom (the bar angles), is
    symmetric (x3 = c - x2, z3 = z2), and does not start at an equilibrium.

    - ``"stedy"``: the T-bar example of the reference code STEDY: EA = 219.9115 N,
      l0 = [3.5355339, 2.4748737, 3.5355339, 2.4748737] m, k = EA/l0 =
      [62.2004, 88.8577, 62.2004, 88.8577] N/m, initial energy E0 = 99.964866 J. The top
      string sits exactly at its rest length at t = 0.
    - ``"paper"``: the paper's Table 1: l0 = [c, 0.9c, c, 0.9c], E0 = 12.5 J exactly.
    - ``"table2"``: strings of k = 1777.153 N/m; with HDPE bars (E = 1 GPa) k_b = 1.5708e6 N/m
      and the two bars weigh 75.398 kg, with aluminium (68 GPa, 2700 kg/m^3) 1.0681e8 N/m and
      212.058 kg (the paper's Table 2 truncates to 75.39 and 212.05).

    The two-angle model of the paper's Fig. 2 (pinned-bar inertia m L^2/3 = 163.624617 kg m^2)
    gives node 2 at t = 10 s as (4.4245370342, 2.3288349090) m for ``"stedy"`` without damping
    and (4.1781392090, 2.7464800655) m with damping 1; the reference code agrees to 1e-10.
    """
    if variant not in _TBAR_VARIANTS:
        raise ValueError(
            f"tbar: unknown variant {variant!r}; allowed: {', '.join(map(repr, _TBAR_VARIANTS))}"
        )
    fields_, fractions = _TBAR_VARIANTS[variant]
    c = 5.0 * np.cos(np.pi / 4)
    nodes = [[0.0, 0.0, 0.0], [c, 0.0, 0.0], [c, 0.0, c], [0.0, 0.0, c]]
    if bar_material is None:
        bar = {"density": 500.0, "radius": 0.05, "youngs_modulus": 2e11, "poisson": 0.3}
        name = f"tbar-{variant}"
    else:
        bar = {"material": bar_material, "radius": 0.05}
        name = f"tbar-{variant}-{bar_material}"
    bars = [dict(bar, nodes=pair) for pair in ((0, 2), (1, 3))]
    strings = [
        dict(fields_, nodes=pair, rest_fraction=f, damping=damping)
        for pair, f in zip(((0, 1), (1, 2), (2, 3), (3, 0)), fractions)
    ]
    if clustered and fields_["kind"] != "string":
        raise ValueError(f"tbar: variant {variant!r} has two-sided springs; a clustered T-bar "
                         "needs one-sided strings: use variant 'stedy' or 'table2'")
    return Structure(nodes, bars, strings, fixed={0: "xyz", 1: "xyz", 2: "y", 3: "y"},
                     name=name + "-clustered" * clustered,
                     cables=[{"strings": (1, 2, 3)}] if clustered else ())


def dbar(damping: float = 0.1) -> Structure:
    r"""The D-bar template: a square of four rigid bars braced by its two diagonal strings.

    ::

           z
           ^
         3 o======== b3 ========o 2     bars (= and H, length 1 m):
           H.                  .H         b0 = 3->0, b1 = 0->1, b2 = 1->2, b3 = 2->3
           H  . m0        m1 .  H     strings (., length sqrt 2):
           H    .          .    H         m0 = 1->3, m1 = 0->2
           H      .      .      H
        b0 H        .  .        H b2  node 0 fixed in x, y, z
           H         ..         H
           H       .    .       H
           H     .        .     H
           H   .            .   H
           H .                . H
         0 o======== b1 ========o 1  --> x

    Parameters
    ----------
    damping : float
        Damper coefficient on both strings [N s/m] (the template's value is 0.1).

    Returns
    -------
    Structure
        Named ``"dbar"``; bars of density 500 kg/m^3 and radius 0.01 m; one-sided strings with
        E = 7e7 Pa, radius 1 mm, rest fractions [1, 0.7]; no gravity.

    Notes
    -----
    The D-bar template of the reference code STEDY's user guide (not in the paper). Bars of
    0.15707963 kg; strings l0 = [1.41421356, 0.98994949] m, k = [155.500903, 222.144147] N/m;
    E0 = 19.99297322 J. The motion stays in the x-z plane, symmetric about x = z. End state at
    t = 10 s (damping 0.1), computed by an independent Cartesian implementation (DOP853,
    rtol = atol = 1e-12): node 1 = (0.9780824081, 0, -0.2082181620), node 2 =
    (0.7698642461, 0, 0.7698642461), w(10) = -13.5030039417 J; STEDY under GNU Octave agrees
    to 1.2e-9.
    """
    nodes = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 1.0], [0.0, 0.0, 1.0]]
    bars = [{"nodes": pair, "density": 500.0, "radius": 0.01}
            for pair in ((3, 0), (0, 1), (1, 2), (2, 3))]
    strings = [
        {"nodes": pair, "kind": "string", "youngs_modulus": 7e7, "radius": 1e-3,
         "rest_fraction": f, "damping": damping}
        for pair, f in (((1, 3), 1.0), ((0, 2), 0.7))
    ]
    return Structure(nodes, bars, strings, fixed={0: "xyz"}, name="dbar")


_ARM_XZ = [(0, 0), (0, -1), (1, -1), (2, -1), (2, 0), (3, -1), (4, -1), (4, 0),
           (5, -1), (6, 0), (5, 1), (4, 1), (3, 1), (2, 1), (1, 1), (0, 1)]  # units of v
_ARM_BARS = [(0, 2), (2, 4), (4, 3), (4, 5), (5, 7), (7, 6), (7, 8), (8, 9),
             (9, 10), (10, 7), (7, 11), (7, 12), (12, 4), (4, 13), (4, 14), (14, 0)]
_ARM_STRINGS = [(0, 1), (1, 2), (2, 3), (3, 5), (5, 6), (6, 8), (10, 11), (11, 12), (12, 13),
                (13, 14), (14, 15), (15, 0),   # length v
                (0, 4), (4, 7), (7, 9), (8, 10), (5, 12), (2, 14)]  # length sqrt 2


def _nylon_strings(pairs, rest_fraction: float, damping: float) -> list:
    """The member dicts of nylon strings between the node `pairs`, all alike."""
    return [dict(_NYLON, nodes=pair, rest_fraction=rest_fraction, damping=damping)
            for pair in pairs]


def arm(rest_fraction: float = 0.8, damping: float = 0.0) -> Structure:
    """The planar robotic arm of the paper's Fig. 1b (16 nodes in the x-z plane).

    Parameters
    ----------
    rest_fraction : float
        Rest length of every string as a fraction of its initial length [-]. The paper's 0.8
        is normally overwritten by a prestress design.
    damping : float
        Damper coefficient on every string [N s/m]; 0 (the reference model) by default. Give
        a positive value for linear analysis and control, where an undamped structure has
        no finite norms and no balanced truncation.

    Returns
    -------
    Structure
        Named ``"arm"``: nodes on a grid of pitch v = 1/sqrt 2 m, 16 bars (density
        1300 kg/m^3, radius 0.01 m; four short verticals b2, b5, b10, b13 of length v, the
        rest of length 1 m), 18 one-sided nylon strings (E = 2e9 Pa, radius 1 mm; m0..m11 of
        length v, m12..m17 of length sqrt 2), nodes 0, 1, 15 fixed in x, y, z, point masses of
        1 kg at nodes 1 and 15, gravity (0, 0, -9.806) m/s^2. The tip is node 9.

    Notes
    -----
    Hsu et al. (2021), Fig. 1b and Figs. 10-12 (the paper's node N is node N-1 here). Bars
    weigh 0.40840704 kg (length 1) and 0.28878739 kg (short); EA = 6283.1853 N. Under gravity
    with gamma_min = 1 N/m the self-stress space has dimension 8; the least-norm prestress (a
    QP, certified by its KKT conditions; SLSQP from another start agrees to 2e-9) has
    sum(gamma) = 658.672327 N/m, and HiGHS's least-sum LP returns the same vector to 1e-6. Some rigid bars come out in tension.
    """
    v = 1.0 / np.sqrt(2.0)
    nodes = [[v * x, 0.0, v * z] for x, z in _ARM_XZ]
    bars = [{"nodes": pair, "density": 1300.0, "radius": 0.01} for pair in _ARM_BARS]
    strings = _nylon_strings(_ARM_STRINGS, rest_fraction, damping)
    return Structure(nodes, bars, strings, fixed={0: "xyz", 1: "xyz", 15: "xyz"},
                     point_masses=[{"node": 1, "mass": 1.0}, {"node": 15, "mass": 1.0}],
                     gravity=_GRAVITY, name="arm")


def _sine_load(n_nodes: int, amplitude: float, entries) -> Force:
    """A force amplitude*sin(t) [N] on the given (node, axis) entries, zero elsewhere."""
    amplitude = float(amplitude)
    entries = tuple(entries)

    def force(t, q=None, qd=None):
        f = np.zeros((n_nodes, 3))
        for node, axis in entries:
            f[node, axis] = amplitude * np.sin(t)
        return f

    return force


def arm_load(amplitude: float = 100.0) -> Force:
    """The arm's tip load: f_z at node 9 equal to ``amplitude * sin(t)``.

    Parameters
    ----------
    amplitude : float
        Force amplitude [N]; positive is +z (the reference code's "downward" comment is wrong).

    Returns
    -------
    callable
        ``force(t, q, qd) -> ndarray, shape (16, 3)`` [N], with t [s]; `q` and `qd` (flat
        arrays of length 48) are ignored. Row 9, column 2 is q index 29.

    Notes
    -----
    The tip load of Hsu et al. (2021), Figs. 10-12 (the paper's tip node 10, state entry 30);
    the reference code STEDY's comment calls it downward, but its sign is +z.
    """
    return _sine_load(16, amplitude, [(9, 2)])


_BALL_STRINGS = [
    (0, 2), (0, 4), (0, 5), (0, 8), (1, 2), (1, 8), (1, 10), (1, 11), (2, 4), (2, 10), (3, 4),
    (3, 6), (3, 7), (3, 10), (4, 6), (5, 6), (5, 8), (5, 9), (6, 9), (7, 9), (7, 10), (7, 11),
    (8, 11), (9, 11),                                                    # outer, length 1/phi
    (12, 2), (12, 3), (12, 4), (12, 5), (12, 8), (12, 9), (12, 10), (12, 11),  # payload
]


def ball_nodes() -> tuple[np.ndarray, float]:
    """The ball's (13, 3) node positions [m] and the ground rotation angle alpha [rad].

    Built as for the paper's Fig. 1c: an icosahedron from golden-ratio points
    (edge 1/phi, so the six bars have length 1 m) plus the centre, reordered so that bar k
    joins node k to node k+6, translated to put node 0 at the origin, then rotated about y by
    the root alpha nearest 0 of ``sin(alpha) x_8 + cos(alpha) z_8 = 0``, which puts nodes 0, 1
    and 8 on the ground z = 0. alpha = -0.364863828 rad; the payload node 12 sits at
    (0.178411045, 0.309016994, 0.467086179) m.
    """
    phi = (1.0 + np.sqrt(5.0)) / 2.0
    t = np.array([[0, -1, phi], [0, -1, -phi], [0, 1, phi], [0, 1, -phi]]) / (2.0 * phi)
    # (x, y, z) -> (z, x, y), then (x, y, z) -> (y, z, x), then the payload at the centre.
    points = np.vstack([t, t[:, [2, 0, 1]], t[:, [1, 2, 0]], np.zeros((1, 3))])
    points = points[[1, 3, 5, 7, 9, 11, 0, 2, 4, 6, 8, 10, 12]]
    points = points - points[0]
    x8, z8 = points[8, 0], points[8, 2]
    # The roots are pi apart; arctan returns the one in (-pi/2, pi/2), the one nearest 0.
    alpha = float(np.arctan(-z8 / x8))
    ca, sa = np.cos(alpha), np.sin(alpha)
    rotation = np.array([[ca, 0.0, -sa], [0.0, 1.0, 0.0], [sa, 0.0, ca]])
    return points @ rotation.T, alpha


def ball(rest_fraction: float = 0.9, damping: float = 0.0) -> Structure:
    """The 3-D six-bar ball (an expanded octahedron) carrying a payload at its centre.

    Parameters
    ----------
    rest_fraction : float
        Rest length of every string as a fraction of its initial length [-]. The paper's 0.9
        is normally overwritten by a prestress design.
    damping : float
        Damper coefficient on every string [N s/m]; 0 (the reference model) by default. Give
        a positive value for linear analysis and control, where an undamped structure has
        no finite norms and no balanced truncation.

    Returns
    -------
    Structure
        Named ``"ball"``: 13 nodes from :func:`ball_nodes`, 6 bars k->k+6 of length 1 m
        (density 1300 kg/m^3, radius 0.01 m, E = 3.5e9 Pa, Poisson 0.36), 32 one-sided strings
        (E = 2e9 Pa, radius 1 mm): 24 outer ones of length 1/phi and 8 payload strings from
        node 12 of length 0.587785 m; nodes 0, 1, 8 (the ground triangle) fixed in x, y, z;
        a 1 kg point mass at the payload node 12; gravity (0, 0, -9.806) m/s^2.

    Notes
    -----
    Hsu et al. (2021), Fig. 1c and Figs. 13-14. Bars weigh 0.40840704 kg. Under gravity with
    gamma_min = 10 N/m the self-stress space has dimension 8; the least-norm prestress (a QP,
    certified by its KKT conditions; SLSQP from another start agrees to 2e-9) has
    sum(gamma) = 2579.922035 N/m, and HiGHS's least-sum LP returns the same vector.
    """
    nodes, _ = ball_nodes()
    bar = {"density": 1300.0, "radius": 0.01, "youngs_modulus": 3.5e9, "poisson": 0.36}
    bars = [dict(bar, nodes=(k, k + 6)) for k in range(6)]
    strings = _nylon_strings(_BALL_STRINGS, rest_fraction, damping)
    return Structure(nodes, bars, strings, fixed={0: "xyz", 1: "xyz", 8: "xyz"},
                     point_masses=[{"node": 12, "mass": 1.0}], gravity=_GRAVITY, name="ball")


def ball_load(amplitude: float = 30.0) -> Force:
    """The ball's load: ``amplitude * sin(t)`` on node 3 along x, node 6 along y, node 7 along z.

    Parameters
    ----------
    amplitude : float
        Force amplitude [N].

    Returns
    -------
    callable
        ``force(t, q, qd) -> ndarray, shape (13, 3)`` [N], with t [s]; `q` and `qd` (flat
        arrays of length 39) are ignored. The loaded entries are q indices 9, 19 and 23.

    Notes
    -----
    The load of Hsu et al. (2021), Figs. 13-14, on the three top nodes (the paper's nodes 4, 7
    and 8, state entries 10, 20 and 24).
    """
    return _sine_load(13, amplitude, [(3, 0), (6, 1), (7, 2)])


def prestressable_twist(n: int) -> float:
    """The twist pi/2 + pi/n [rad] at which the n-prism of :func:`prism` admits a self-stress."""
    return np.pi / 2 + np.pi / n


def prism(n: int = 3, *, radius: float = 0.5, height: float = 1.0, twist: float | None = None,
          bar_material: str = "aluminium", bar_radius: float = 0.01,
          string_material: str = "nylon", string_radius: float = 1e-3,
          rest_fraction: float = 0.95, base: str = "fixed",
          gravity=(0.0, 0.0, 0.0), damping: float = 0.0, clustered: bool = False) -> Structure:
    """A Snelson n-prism: the simplest class-1 tensegrity, n bars between two n-gon rings.

    Bottom node i (i = 0..n-1) sits at angle 2 pi i / n on a circle of radius `radius` at
    z = 0; top node n+i at angle 2 pi i / n + twist at z = `height`. Bar i joins bottom i to
    top n+i. Strings, in order: the bottom ring i -> (i+1) mod n, the top ring
    n+i -> n+(i+1) mod n, and the side strings bottom i -> top n+(i-1) mod n.

    Parameters
    ----------
    n : int
        Number of bars, >= 3.
    radius : float
        Radius of the two rings' circumscribed circles [m].
    height : float
        Distance between the rings [m].
    twist : float, optional
        Rotation of the top ring relative to the bottom one [rad]. The default,
        pi/2 + pi/n (150 deg for n = 3), is the only twist in [0, 2 pi) at which this prism
        admits a self-stress with all strings in tension and all bars in compression. At
        pi/2 + pi/n + pi the signs are reversed; at any other twist there is no self-stress
        (verified in tests/test_catalog.py from the null space of the equilibrium matrix).
    bar_material, string_material : str
        Presets of :data:`tenscontrol.materials.MATERIALS` for bars and strings.
    bar_radius, string_radius : float
        Cross-section radii [m].
    rest_fraction : float
        Rest length of every string as a fraction of its initial length [-].
    base : {"fixed", "free"}
        ``"fixed"`` fixes the bottom nodes in x, y, z; ``"free"`` fixes nothing.
    gravity : array_like, shape (3,)
        Gravitational acceleration [m/s^2].
    damping : float
        Damper coefficient on every string [N s/m]; 0 (the reference model) by default. Give
        a positive value for linear analysis and control, where an undamped structure has
        no finite norms and no balanced truncation.
    clustered : bool
        True: each ring is one closed cable (:class:`~tenscontrol.model.cables.Cable`: cable
        0 the bottom ring from node 0 around to node 0, cable 1 the top ring), with the
        strings' material, radius and damping and rest fraction `rest_fraction` of the whole
        ring. The ring's strings are equally long, so each cable starts with the tension its
        strings have as separate members: the same prestress. Named ``"prism-<n>-clustered"``.

    Returns
    -------
    Structure
        Named ``"prism-<n>"``, with 2n nodes, n bars and 3n one-sided strings.

    Raises
    ------
    ValueError
        If n < 3, `radius` or `height` is not positive, `base` or a material is unknown.
    """
    separate = _prism_stack(1, n, radius, height, twist, bar_material, bar_radius,
                            string_material, string_radius, rest_fraction, base, gravity,
                            damping, name=f"prism-{n}")
    if not clustered:
        return separate
    rings = [{"strings": tuple(range(r * n, (r + 1) * n)), "rest_fraction": rest_fraction}
             for r in range(2)]
    return dataclasses.replace(separate, cables=rings, name=f"prism-{n}-clustered")


def prism_tower(stages: int, n: int = 3, *, radius: float = 0.5, height: float = 1.0,
                twist: float | None = None, bar_material: str = "aluminium",
                bar_radius: float = 0.01, string_material: str = "nylon",
                string_radius: float = 1e-3, rest_fraction: float = 0.95, base: str = "fixed",
                gravity=(0.0, 0.0, 0.0), damping: float = 0.0) -> Structure:
    """A tower of `stages` n-prisms stacked with shared rings.

    Level L = 0..stages holds nodes L n .. L n + n - 1 at height L * height, rotated by
    L * twist. Stage s is the prism of :func:`prism` between levels s and s+1: bars level s
    node i -> level s+1 node i (so bars of adjacent stages meet at the intermediate levels)
    and side strings level s node i -> level s+1 node (i-1) mod n. Each level has one ring.
    The tower is prestressable at the prism's twist: the self-stresses of the stages add up.

    Parameters
    ----------
    stages : int
        Number of stacked prisms, >= 1.
    n : int
        Bars per stage, >= 3.
    radius, height, twist, bar_material, bar_radius, string_material, string_radius
        As for :func:`prism`; `height` and `twist` are per stage.
    rest_fraction, gravity, damping
        As for :func:`prism`.
    base : {"fixed", "free"}
        ``"fixed"`` fixes level 0 in x, y, z; ``"free"`` fixes nothing.

    Returns
    -------
    Structure
        Named ``"prism-tower-<stages>x<n>"``, with (stages+1) n nodes and stages n bars.
        Strings in order: the rings of levels 0..stages, then the side strings stage by stage.
    """
    return _prism_stack(stages, n, radius, height, twist, bar_material, bar_radius,
                        string_material, string_radius, rest_fraction, base, gravity, damping,
                        name=f"prism-tower-{stages}x{n}")


def _prism_stack(stages, n, radius, height, twist, bar_material, bar_radius, string_material,
                 string_radius, rest_fraction, base, gravity, damping, name) -> Structure:
    """The common builder of :func:`prism` (one stage) and :func:`prism_tower`."""
    for label, value, low in (("n", n, 3), ("stages", stages, 1)):
        if not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name}: {label} must be an integer >= {low}, got {value!r}")
    for label, value in (("radius", radius), ("height", height)):
        if not value > 0:
            raise ValueError(f"{name}: {label} must be > 0 [m], got {value!r}")
    if base not in ("fixed", "free"):
        raise ValueError(f"{name}: base must be 'fixed' or 'free', got {base!r}")
    twist = prestressable_twist(n) if twist is None else float(twist)
    i = np.arange(n)
    nodes = np.vstack([
        np.column_stack([radius * np.cos(2 * np.pi * i / n + L * twist),
                         radius * np.sin(2 * np.pi * i / n + L * twist),
                         np.full(n, L * height)])
        for L in range(stages + 1)
    ])
    bars = [{"nodes": (s * n + k, (s + 1) * n + k), "radius": bar_radius,
             "material": bar_material} for s in range(stages) for k in range(n)]
    rings = [(L * n + k, L * n + (k + 1) % n) for L in range(stages + 1) for k in range(n)]
    sides = [(s * n + k, (s + 1) * n + (k - 1) % n) for s in range(stages) for k in range(n)]
    strings = [{"nodes": pair, "kind": "string", "material": string_material,
                "radius": string_radius, "rest_fraction": rest_fraction, "damping": damping}
               for pair in rings + sides]
    fixed = {k: "xyz" for k in range(n)} if base == "fixed" else None
    return Structure(nodes, bars, strings, fixed=fixed, gravity=gravity, name=name)


#: The 6-bar tensegrity icosahedron (expanded octahedron): bar k joins nodes 2k and 2k+1, and
#: each node has four strings. Only this topology enters :func:`icosahedron`; the geometry comes
#: from form-finding.
ICOSAHEDRON_BARS = tuple((2 * k, 2 * k + 1) for k in range(6))
ICOSAHEDRON_STRINGS = (
    (0, 6), (0, 7), (0, 9), (0, 11), (1, 4), (1, 5), (1, 9), (1, 11), (2, 6), (2, 7), (2, 8),
    (2, 10), (3, 4), (3, 5), (3, 8), (3, 10), (4, 10), (4, 11), (5, 8), (5, 9), (6, 10),
    (6, 11), (7, 8), (7, 9),
)


def _rest_length(E: float, radius: float, length: float, density: float) -> float:
    """Rest length giving force density `density` at `length`: ``l0 = EA / (density + EA/l)``."""
    EA = E * np.pi * radius**2
    return EA / (density + EA / length)


def from_topology(n_nodes: int, bars, strings, *, string_force_densities=1.0,
                  bar_force_densities=-1.0, solve_for=None, bar_length: float = 1.0,
                  prestress: float = 20.0, bar_material: str = "aluminium",
                  bar_radius: float = 0.01, string_material: str = "nylon",
                  string_radius: float = 1e-3, gravity=(0.0, 0.0, 0.0), fixed=None,
                  damping: float = 0.0, name: str = "form-found") -> Structure:
    """A prestressed structure from its topology alone, by form-finding.

    The geometry is the free-standing one of :func:`tenscontrol.model.form_finding.form_find`
    (force density method; the densities of `solve_for`, by default all bars, are solved for
    so that the force density matrix has rank n - 4) in its standard frame, scaled so that the
    mean bar length is `bar_length` and centred at the origin. The strings' rest lengths realise the form-found
    self-stress scaled so that the largest string force density is `prestress` [N/m]; with
    compressible bars (``bars="compressible"`` in the mechanics) the bars' rest lengths do the
    same, so the structure starts in equilibrium without gravity under either bar model.

    Parameters
    ----------
    n_nodes : int
    bars, strings : array_like of int, shape (m, 2)
        Node pairs of bars and strings.
    string_force_densities, bar_force_densities, solve_for
        As for :func:`~tenscontrol.model.form_finding.form_find` (ratios; scaled by
        `prestress`).
    bar_length : float
        Mean bar length [m].
    prestress : float
        Largest string force density of the self-stress [N/m], > 0.
    bar_material, bar_radius, string_material, string_radius, gravity, fixed, damping
        As for :func:`prism`; `fixed` in any form :class:`~tenscontrol.Structure` takes.
    name : str

    Raises
    ------
    ValueError
        If form-finding fails (no free-standing geometry), or a string does not come out in
        tension or a bar in compression.
    """
    found = form_find(n_nodes, bars, strings, string_force_densities=string_force_densities,
                      bar_force_densities=bar_force_densities, solve_for=solve_for)
    nb = len(found.densities) - len(strings)
    N = found.nodes - found.nodes.mean(axis=0)
    b, s = np.asarray(bars).reshape(-1, 2), np.asarray(strings).reshape(-1, 2)
    N *= bar_length / np.linalg.norm(N[b[:, 1]] - N[b[:, 0]], axis=1).mean()
    w = found.densities * prestress / found.densities[nb:].max()
    if (w[nb:] <= 0).any() or (w[:nb] >= 0).any():
        raise ValueError(f"{name}: the form-found self-stress has strings in compression or "
                         "bars in tension; change the force density ratios")
    return _prestressed_structure(N, b, s, w, nb, bar_material, bar_radius, string_material,
                                  string_radius, gravity, fixed, damping, name)


def _prestressed_structure(N, b, s, w, nb, bar_material, bar_radius, string_material,
                           string_radius, gravity, fixed, damping, name) -> Structure:
    """Structure at nodes N whose members' rest lengths give the force densities w."""
    Eb, Es = material(bar_material).youngs_modulus, material(string_material).youngs_modulus
    bars = [{"nodes": tuple(int(v) for v in pair), "material": bar_material,
             "radius": bar_radius,
             "rest_length": _rest_length(Eb, bar_radius, np.linalg.norm(N[j] - N[i]), wk)}
            for pair, (i, j), wk in zip(b, b, w[:nb])]
    strings = [{"nodes": tuple(int(v) for v in pair), "kind": "string",
                "material": string_material, "radius": string_radius, "damping": damping,
                "rest_length": _rest_length(Es, string_radius, np.linalg.norm(N[j] - N[i]), wk)}
               for pair, (i, j), wk in zip(s, s, w[nb:])]
    return Structure(N, bars, strings, fixed=fixed, gravity=gravity, name=name)


def icosahedron(*, on_face: bool = False, bar_length: float = 1.0, prestress: float = 20.0,
                bar_material: str = "aluminium", bar_radius: float = 0.01,
                string_material: str = "nylon", string_radius: float = 1e-3,
                gravity=None, damping: float = 0.0) -> Structure:
    """The 6-bar tensegrity icosahedron (expanded octahedron), SUPERball-like, form-found.

    Built from its topology (:data:`ICOSAHEDRON_BARS`, :data:`ICOSAHEDRON_STRINGS`) alone by
    :func:`from_topology`: equal string force densities, the bars' solved for (they come out
    at -3/2 of the strings'), and a geometry with parallel bars `bar_length`/2 apart and all
    24 strings of length ``bar_length * sqrt(6) / 4``. Bars 0, 1 run along z, 2, 3 along x,
    4, 5 along y.

    Parameters
    ----------
    on_face : bool
        Rest it on a triangular face: the structure is turned so that the face of nodes
        0, 6, 11 (three nodes joined pairwise by strings) lies in z = 0 below the rest, and
        those three nodes are fixed in x, y, z. Otherwise it is free-standing, centred at the
        origin, nothing fixed.
    bar_length : float
        Bar length [m] (1 m: SUPERball's scale).
    prestress : float
        String force density of the self-stress the rest lengths realise [N/m].
    bar_material, bar_radius, string_material, string_radius, damping
        As for :func:`prism` (aluminium bars of radius 1 cm, nylon strings of radius 1 mm).
    gravity : array_like, shape (3,), optional
        Gravitational acceleration [m/s^2]; (0, 0, -9.806) on a face, none otherwise.

    Returns
    -------
    Structure
        Named ``"icosahedron"`` (``"icosahedron-on-face"``), 12 nodes, 6 bars, 24 strings.
    """
    s = from_topology(12, ICOSAHEDRON_BARS, ICOSAHEDRON_STRINGS, bar_length=bar_length,
                      prestress=prestress, bar_material=bar_material, bar_radius=bar_radius,
                      string_material=string_material, string_radius=string_radius,
                      damping=damping, name="icosahedron")
    N = s.nodes
    d = np.array([N[j] - N[i] for i, j in (ICOSAHEDRON_BARS[2], ICOSAHEDRON_BARS[4],
                                           ICOSAHEDRON_BARS[0])])
    U, _, Vt = np.linalg.svd(d)  # the rotation nearest to taking those bars to x, y, z
    N = N @ (U @ Vt).T
    name, fixed = "icosahedron", None
    if on_face:
        N, name, fixed = _on_face(N, (0, 6, 11)), "icosahedron-on-face", {0: "xyz", 6: "xyz",
                                                                           11: "xyz"}
    g = ((0.0, 0.0, -9.806) if on_face else (0.0, 0.0, 0.0)) if gravity is None else gravity
    return Structure(N, s.bars, s.strings, fixed=fixed, gravity=g, name=name)


def _on_face(N: np.ndarray, face) -> np.ndarray:
    """N turned so that the triangle `face` lies in z = 0 with the rest above it."""
    F = N[list(face)]
    normal = np.cross(F[1] - F[0], F[2] - F[0])
    normal /= np.linalg.norm(normal)
    if normal @ (N.mean(axis=0) - F.mean(axis=0)) > 0:
        normal = -normal  # outward
    # rotation taking the outward normal to -z (Rodrigues, about normal x (-z))
    target = np.array([0.0, 0.0, -1.0])
    v, c = np.cross(normal, target), float(normal @ target)
    V = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    R = np.eye(3) + V + V @ V / (1.0 + c)
    M = (N - F.mean(axis=0)) @ R.T
    M[:, 2] -= M[list(face), 2].mean()
    M[list(face), 2] = 0.0
    return M
