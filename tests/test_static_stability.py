"""Stability of loaded equilibria (issue 20): rigid motions the load stiffens are modes, not
rigid-body motions to remove; and the statics surface's argument checks (issue 21).

Oracle: a point mass m on a rigid bar of length L pinned at its top swings with the stiffness
W / L [N/m] for a tip displacement (W = g (m + m_bar / 2): the lumped half of the bar's weight
at the tip; the rotational stiffness W L [N m/rad] over L^2), positive hanging, negative
upright; a free rotation about the load's axis has none and is removed.
"""

import warnings

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.statics import solve
from tenscontrol.statics.result import loaded_zero_modes
from tenscontrol.statics.solve import static_tangent, unbalanced_force
from tenscontrol.statics.stiffness import loaded_rigid_fields, rigid_fields

G = (0.0, 0.0, -9.806)


def pendulum(angle_deg, length=1.0, mass=2.0, planar=False):
    """A bar pinned at node 0 (a ball joint), its tip node 1 at `angle_deg` from hanging."""
    a = np.radians(angle_deg)
    tip = length * np.array([np.sin(a), 0.0, -np.cos(a)])
    return tc.Structure([[0.0, 0.0, 0.0], tip],
                        bars=[{"nodes": (0, 1), "density": 500.0, "radius": 0.01}],
                        fixed={0: "xyz", **({1: "y"} if planar else {})},
                        point_masses=[{"node": 1, "mass": mass}], gravity=G)


def swing_stiffness(s):
    """W / L [N/m] of the pendulum `s` (module docstring)."""
    weight = 9.806 * (s.point_masses[0].mass + 0.5 * s.bar_masses[0])
    return weight / s.bar_lengths[0]


@pytest.mark.parametrize("angle", [0.0, 30.0, 89.0])
@pytest.mark.parametrize("length", [1.0, 2.5])
@pytest.mark.parametrize("planar", [False, True])
def test_pendulum_hangs_stable_with_the_swing_stiffness(angle, length, planar):
    s = pendulum(angle, length, planar=planar)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "unstable" warning
        r = tc.static_equilibrium(s)
    assert r.q[3:6] == pytest.approx([0.0, 0.0, -length], abs=1e-12 * length)
    assert r.stable
    assert r.min_stiffness == pytest.approx(swing_stiffness(s), rel=1e-12)


def test_compressible_pendulum_keeps_its_swing():
    # 1.0 removed the swing and called the axial mode (2.1e7 N/m) the smallest stiffness; the
    # bar stretches by 1.1e-6 and its weight follows its length: 1.9e-7 off W / l
    a = np.radians(30.0)
    s = tc.Structure([[0.0, 0.0, 0.0], [np.sin(a), 0.0, -np.cos(a)]],
                     bars=[{"nodes": (0, 1), "material": "aluminium", "radius": 0.01}],
                     fixed={0: "xyz"}, point_masses=[{"node": 1, "mass": 2.0}], gravity=G)
    r = tc.static_equilibrium(s, bars="compressible")
    length = np.linalg.norm(r.q[3:6])
    assert r.stable and r.q[3:5] == pytest.approx([0.0, 0.0], abs=1e-12)
    assert r.min_stiffness == pytest.approx(swing_stiffness(s) / length, rel=2e-6)


@pytest.mark.parametrize("angle", [180.0, 150.0])
def test_inverted_pendulum_is_reported_unstable_with_its_eigenvalue(angle):
    s = pendulum(angle)
    # Newton's first step from 150 degrees reaches the nearer, upright equilibrium
    with pytest.warns(UserWarning, match=r"eigenvalue -20.4 N/m < 0"):
        r = tc.static_equilibrium(s)
    assert r.q[3:6] == pytest.approx([0.0, 0.0, 1.0], abs=1e-12)
    assert not r.stable
    assert r.min_stiffness == pytest.approx(-swing_stiffness(s), rel=1e-12)


def test_prism_hanging_from_one_node_swings_like_a_rigid_body():
    """A prestressed 3-prism pinned at node 0 under gravity, started with its centre of mass
    below the pin: its softest mode is the rigid swing, whose Rayleigh quotient W h / b_max
    (W its weight, h the drop of its centre of mass below the pin, b_max the largest
    eigenvalue of sum_k [e_i x d_k] . [e_j x d_k] over horizontal axes e) bounds the smallest
    eigenvalue from above; the elastic modes, far stiffer, lower it by 9.1e-4 of it."""
    from scipy.spatial.transform import Rotation
    built = tc.equilibrium(tc.catalog.prism(3), gamma_min=20.0).structure
    s = tc.Structure(built.nodes, bars=built.bars, strings=built.strings, fixed={0: "xyz"},
                     gravity=G)
    m, N = s.node_masses, s.nodes
    D = m @ N / m.sum() - N[0]
    axis = np.cross(D, [0.0, 0.0, -1.0])
    turn = Rotation.from_rotvec(axis / np.linalg.norm(axis) * np.arccos(-D[2] / np.linalg.norm(D)))
    r = tc.static_equilibrium(s, q=(N - N[0]) @ turn.as_matrix().T + N[0])
    Q = r.q.reshape(-1, 3)
    d = Q - Q[0]
    drop = -(m @ Q / m.sum() - Q[0])
    assert drop[:2] == pytest.approx([0.0, 0.0], abs=1e-12) and drop[2] > 0
    E = np.eye(3)[:2]
    B = np.array([[sum(np.cross(a, dk) @ np.cross(b, dk) for dk in d) for b in E] for a in E])
    rigid = 9.806 * m.sum() * drop[2] / np.linalg.eigvalsh(B).max()
    assert r.stable
    assert (1 - 9e-3) * rigid <= r.min_stiffness <= rigid * (1 + 1e-12)


def test_the_start_configuration_q_is_the_one_checked():
    # built horizontal, started hanging: the start is the equilibrium (no Newton step)
    s = pendulum(90.0)
    r = tc.static_equilibrium(s, q=[0.0, 0.0, 0.0, 0.0, 0.0, -1.0])
    assert r.history.iterations == 0 and r.stable
    assert r.min_stiffness == pytest.approx(swing_stiffness(s), rel=1e-12)


def test_loaded_rigid_fields_keep_only_what_the_load_leaves_rigid():
    s = pendulum(30.0)
    q = s.nodes.reshape(-1)
    load = np.kron(s.node_masses, G)
    assert rigid_fields(s).shape[1] == 2  # the swings about the pin (the bar axis moves nothing)
    R = loaded_rigid_fields(s, q, load)
    # only the rotation about the vertical through the pin: the tip moves along y
    assert R.shape[1] == 1 and np.abs(np.abs(R[:, 0]) - [0, 0, 0, 0, 1, 0]).max() <= 1e-12
    hanging = pendulum(0.0)
    assert loaded_rigid_fields(hanging, hanging.nodes.reshape(-1), load).shape[1] == 0
    # without a load: every rigid field
    ico = tc.catalog.icosahedron()
    assert loaded_rigid_fields(ico, ico.nodes.reshape(-1), np.zeros(36)).shape[1] == 6
    # gravity: the translations and the rotation about the vertical
    weight = np.kron(ico.node_masses, G)
    assert loaded_rigid_fields(ico, ico.nodes.reshape(-1), weight).shape[1] == 4


def free_icosahedron():
    s = tc.equilibrium(tc.catalog.icosahedron(), gamma_min=20.0).structure
    assert rigid_fields(s).shape[1] == 6
    return s


def test_free_structure_without_load_removes_all_six_rigid_motions():
    s = free_icosahedron()
    r = tc.static_equilibrium(s)
    C = tc.compliance(r.structure, at_rest="taut")  # removes every rigid field
    assert r.stable
    assert r.min_stiffness == pytest.approx(np.linalg.eigvalsh(C.stiffness)[0], rel=1e-9)


def test_free_structure_pulled_apart_is_stable_about_its_pull_axis():
    # two opposite pulls along x: the rotations about y and z are stiffened (they turn the
    # pulled nodes off the line of the pulls), the rotation about x stays rigid and is removed
    s = free_icosahedron()
    N = s.nodes
    a, b = int(np.argmin(N[:, 0])), int(np.argmax(N[:, 0]))
    f = np.zeros_like(N)
    d = (N[b] - N[a]) / np.linalg.norm(N[b] - N[a])
    f[a], f[b] = -5.0 * d, 5.0 * d
    r = tc.static_equilibrium(s, loads=f)
    assert r.stable and r.relative_residual <= 1e-10
    assert loaded_rigid_fields(s, r.q, f.reshape(-1)).shape[1] == 4


def test_horizontal_pendulum_is_no_mechanism():
    # at the horizontal the bar carries no force, so the swing has zero stiffness while the
    # weight works along it; a rigid rotation still has a configuration that holds it
    s = pendulum(90.0)
    p = solve._problem(s, None, "rigid")
    q = s.nodes.reshape(-1)
    r = solve._forces(p, q, np.zeros(p.free.size))[0]
    K = static_tangent(s, q, [0.0])[np.ix_(p.free, p.free)]  # the bar's force (~1e-17) is 0
    Z = np.array([[0.0, 0, 0], [0, 1, 0], [0, 0, 1]]).T[:, 1:]  # the bar keeps its length
    assert loaded_zero_modes(K, Z, r).shape[1] == 1  # without the rotations: "a mechanism"
    rot = rigid_fields(s)[p.free]
    assert loaded_zero_modes(K, Z, r, rotations=rot).shape[1] == 0


def test_sliding_node_is_still_a_mechanism():
    # a node free to slide along x under a load along x: no stiffness, no configuration
    s = tc.Structure([[0, 0, 0], [1, 0, 0], [2, 0, 0]],
                     bars=[{"nodes": (1, 2), "material": "aluminium", "radius": 0.01}],
                     strings=[], fixed={0: "xyz", 1: "yz", 2: "yz"},
                     point_masses=[{"node": 1, "mass": 1.0}])
    f = np.zeros((3, 3))
    f[2, 0] = 1.0
    with pytest.raises(tc.MechanismError):
        tc.static_equilibrium(s, loads=f)


# ---- bad arguments --------------------------------------------------------------------------

_N = 6  # nodes of the 3-prism


@pytest.mark.parametrize("call, error, match", [
    (lambda s: tc.static_equilibrium(s, loads=np.zeros((_N, 3)) + 1j), TypeError,
     r"static_equilibrium: loads must be an array of real numbers \[N\], got complex"),
    (lambda s: tc.static_equilibrium(s, q=s.nodes + 0j), TypeError,
     r"static_equilibrium: q must be an array of real numbers \[m\], got complex"),
    (lambda s: tc.static_equilibrium(s, loads="heavy"), TypeError, r"loads must be an array"),
    (lambda s: tc.static_equilibrium(s, q=np.ones((_N, 3), bool)), TypeError, r"q must be"),
    (lambda s: tc.static_equilibrium(s, loads=np.zeros((_N, 2))), ValueError,
     r"static_equilibrium: loads must have shape \(6, 3\) or \(18,\)"),
    (lambda s: tc.static_equilibrium(s, loads=np.full((_N, 3), np.nan)), ValueError,
     r"static_equilibrium: loads must be finite"),
    (lambda s: tc.static_equilibrium(s, bars="rigd"), ValueError,
     r"static_equilibrium: bars must be one of 'rigid', 'compressible', got 'rigd' "
     r"\(did you mean 'rigid'\?\)"),
    (lambda s: tc.static_equilibrium([1, 2]), TypeError,
     r"static_equilibrium: structure must be a tenscontrol.Structure, got list"),
    (lambda s: tc.static_equilibrium(s, rtol=True), TypeError,
     r"static_equilibrium: rtol must be a number, got bool True"),
    (lambda s: unbalanced_force(s, q=s.nodes + 1j), TypeError, r"unbalanced_force: q must be"),
    (lambda s: unbalanced_force(s, bar_force_densities=[1.0]), ValueError,
     r"unbalanced_force: bar_force_densities must be a finite number or 3 finite numbers"),
    (lambda s: unbalanced_force(s, bars=None), ValueError, r"unbalanced_force: bars must be"),
    (lambda s: static_tangent(s, s.nodes, None), TypeError, r"static_tangent: psi must be"),
    (lambda s: static_tangent(s, np.zeros(5), np.zeros(3)), ValueError,
     r"q must have shape \(6, 3\) or \(18,\)"),
    (lambda s: static_tangent("prism", s.nodes, np.zeros(3)), TypeError,
     r"static_tangent: structure must be a tenscontrol.Structure"),
    (lambda s: tc.tangent_stiffness(s, gamma=np.full(9, 1 + 1j)), TypeError,
     r"tangent_stiffness: gamma must be an array of real numbers \[N/m\], got complex"),
    (lambda s: tc.tangent_stiffness(s, gamma=np.full(9, np.nan)), ValueError,
     r"gamma must be 9 finite force densities \[N/m\]; entries \[0, 1, 2, 3, 4, 5\] are not"),
    (lambda s: tc.tangent_stiffness(s, bar_force_densities=["a", "b", "c"]), TypeError,
     r"tangent_stiffness: bar_force_densities must be an array of real numbers"),
    (lambda s: tc.compliance(s, bars=1), ValueError, r"compliance: bars must be one of"),
    (lambda s: tc.compliance(s, loads=np.zeros((_N, 3)) + 0j), TypeError,
     r"compliance: loads must be an array of real numbers"),
    (lambda s: rigid_fields("prism"), TypeError, r"rigid_fields: structure must be"),
    (lambda s: tc.compliance(s).displacement(np.zeros((_N, 3)) + 1j), TypeError,
     r"Compliance.displacement: loads must be an array of real numbers"),
    (lambda s: loaded_rigid_fields(s, s.nodes, np.zeros(5)), ValueError,
     r"loaded_rigid_fields: load must have shape \(18,\)"),
    (lambda s: tc.to_mjcf(tc.catalog.tbar(), timestep=True), ValueError,
     r"to_mjcf: timestep must be a number > 0 \[s\], got bool True"),
])
def test_statics_arguments_are_named(call, error, match):
    s = tc.equilibrium(tc.catalog.prism(3), gamma_min=20.0).structure
    with pytest.raises(error, match=match):
        call(s)
