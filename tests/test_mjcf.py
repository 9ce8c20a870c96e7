"""to_mjcf: the MuJoCo model moves as tenscontrol's rigid-bar model (checked with mujoco)."""

import xml.etree.ElementTree as ET
from dataclasses import replace

import mujoco
import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.model import catalog


def springs(s):
    """`s` with every string a two-sided spring, so the comparison does not hinge on slackness."""
    return tc.Structure(s.nodes, s.bars, [replace(m, kind="spring") for m in s.strings],
                        fixed=s.fixed, point_masses=s.point_masses, gravity=s.gravity,
                        name=s.name)


def mujoco_paths(structure, t_final, dt, every, include_radius=False):
    """Node positions (nt, n, 3) [m] of the MJCF model run in MuJoCo (RK4, step dt) every
    `every` steps, and the output times."""
    xml = tc.to_mjcf(structure, timestep=dt, include_radius=include_radius)
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    sites = [model.site(f"node{k}").id for k in range(structure.n_nodes)]
    steps = int(round(t_final / dt))
    mujoco.mj_forward(model, data)
    out = [data.site_xpos[sites].copy()]
    for n in range(1, steps + 1):
        mujoco.mj_step(model, data)
        if n % every == 0:
            out.append(data.site_xpos[sites].copy())
    return np.array(out), np.arange(0, steps + 1, every) * dt


@pytest.mark.slow
@pytest.mark.parametrize("name, structure, include_radius", [
    ("prism-3 with gravity", springs(catalog.prism(3, gravity=(0.0, 0.0, -9.806))), False),
    ("ball", springs(catalog.ball()), False),
    ("ball, solid-cylinder bars", springs(catalog.ball(damping=0.5)), True),
])
def test_free_motion_matches_tenscontrol(name, structure, include_radius):
    # RK4 at 1e-4 s: its own error is about 2e-7 m on the ball (1e-10 m at 1e-5 s)
    paths, t = mujoco_paths(structure, 0.2, 1e-4, 10, include_radius)
    traj = tc.simulate(structure, 0.2, t_eval=t, rtol=1e-12, atol=1e-12,
                       include_radius=include_radius)
    motion = np.linalg.norm(traj.nodes - traj.nodes[0], axis=2).max()
    assert motion > 0.01  # the structures really move (3 cm prism, 26 cm ball)
    assert np.linalg.norm(paths - traj.nodes, axis=2).max() < 1e-6


def test_xml_names_the_members_and_one_sided_strings_have_a_dead_band(tmp_path):
    s = catalog.ball()
    path = tmp_path / "ball.xml"
    text = tc.to_mjcf(s, path)
    assert path.read_text() == text
    root = ET.fromstring(text)
    tendons = root.findall("tendon/spatial")
    assert len(tendons) == s.n_strings
    low, high = map(float, tendons[0].get("springlength").split())
    assert low == 0.0 and high == s.string_rest_lengths[0]  # no force below l0: never pushes
    assert float(tendons[0].get("stiffness")) == s.string_stiffness[0]
    assert len(root.findall("worldbody/body")) == s.n_bars + 1  # 6 bars and the payload node
    spring = ET.fromstring(tc.to_mjcf(springs(s))).find("tendon/spatial")
    assert float(spring.get("springlength")) == s.string_rest_lengths[0]


def test_mujoco_loads_the_model_with_the_structure_mass():
    s = catalog.ball()
    model = mujoco.MjModel.from_xml_string(tc.to_mjcf(s))
    assert model.body_mass.sum() == pytest.approx(s.total_mass, rel=1e-12)
    assert model.ntendon == s.n_strings


def test_class_two_structures_are_refused():
    nodes = [[0, 0, 0], [1, 0, 0], [1, 1, 0]]
    s = tc.Structure(nodes, [{"nodes": (0, 1), "material": "steel", "radius": 0.01},
                             {"nodes": (1, 2), "material": "steel", "radius": 0.01}],
                     [{"nodes": (0, 2), "stiffness": 100.0}])
    with pytest.raises(ValueError, match=r"to_mjcf: node 1 is an end of bars \[0, 1\]"):
        tc.to_mjcf(s)


@pytest.mark.parametrize("options, match", [
    ({"timestep": 0}, "timestep must be a number > 0"),
    ({"timestep": "1e-4"}, "timestep must be a number > 0"),
    ({"integrator": "rk4"}, "integrator must be one of"),
])
def test_bad_options_are_refused(options, match):
    with pytest.raises(ValueError, match=match):
        tc.to_mjcf(catalog.prism(3), **options)


def test_structure_must_be_a_structure():
    with pytest.raises(TypeError, match="to_mjcf: structure must be a Structure"):
        tc.to_mjcf({"nodes": []})
