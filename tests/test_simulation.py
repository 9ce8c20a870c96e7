"""simulate(): oracles (minimal-coordinate T-bar, D-bar reference, free flight), invariants, errors."""

import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.mechanics.scales import structure_scales
from tenscontrol.model.io import structure_to_dict
from tenscontrol.model import catalog
from tenscontrol.simulation import recording
from tenscontrol.mechanics.rigid.model import rigid_model

from oracles import tbar_minimal

# Node 2 (x, z) at t = 1 s and 10 s, computed by the two-angle model of paper Fig. 2 (DOP853,
# rtol = atol = 1e-13); at 10 s the reference code STEDY agrees to 1e-10
REFERENCE = {
    ("stedy", 0.0): [(4.4188068000, 2.3396893947), (4.4245370342, 2.3288349090)],
    ("stedy", 1.0): [(4.3855805723, 2.4013918972), (4.1781392090, 2.7464800655)],
    ("paper", 0.0): [(3.6699303281, 3.3958226377), (3.7250158247, 3.3353046497)],
    ("paper", 1.0): [(3.6706738396, 3.3950189342), (3.6778859937, 3.3872045432)],
}


@pytest.mark.parametrize("variant,damping", list(REFERENCE))
def test_tbar_matches_minimal_coordinate_model(variant, damping):
    t_eval = np.arange(0, 1001) * 0.01
    n2_ref, n3_ref = tbar_minimal(variant, damping, t_eval)
    # the oracle itself reproduces the published reference values
    np.testing.assert_allclose(n2_ref[[100, 1000]], REFERENCE[(variant, damping)], atol=1e-9)
    traj = tc.simulate(catalog.tbar(variant, damping=damping), 10.0, t_eval=t_eval)
    np.testing.assert_array_equal(traj.t, t_eval)
    err = max(np.abs(traj.nodes[:, 2, [0, 2]] - n2_ref).max(),
              np.abs(traj.nodes[:, 3, [0, 2]] - n3_ref).max())
    assert err <= 1e-7
    # the motion stays in the x-z plane
    assert np.abs(traj.nodes[:, :, 1]).max() == 0.0


def test_tbar_with_solid_cylinder_inertia():
    # two-angle model of paper Fig. 2: with include_radius the pinned inertia is m L^2/3 + m r^2/4
    t_eval = np.linspace(0, 3, 31)
    n2_ref, _ = tbar_minimal("stedy", 0.0, t_eval, include_radius=True)
    slender, _ = tbar_minimal("stedy", 0.0, t_eval)
    traj = tc.simulate(catalog.tbar("stedy"), 3.0, t_eval=t_eval, include_radius=True)
    assert np.abs(traj.nodes[:, 2, [0, 2]] - n2_ref).max() <= 1e-7
    assert np.abs(n2_ref - slender).max() > 1e-5  # the radius term is visible


@pytest.mark.parametrize("damping", [0.0, 1.0])
def test_tbar_energy_balance_and_constraints(damping):
    traj = tc.simulate(catalog.tbar("stedy", damping=damping), 10.0)
    assert traj.E0 == pytest.approx(99.964866, abs=1e-6)  # catalog.tbar docstring
    assert np.abs(traj.energy_violation).max() <= 1e-9
    assert np.abs(traj.bar_violation).max() <= 1e-10
    if damping:
        # the dampers dissipate: w falls and so does the total energy, by the same amount
        assert traj.work[-1] < -1.0
        assert traj.energy[-1] == pytest.approx(traj.E0 + traj.work[-1], abs=1e-9)
    else:
        assert np.abs(traj.work).max() <= 1e-9
    s = traj.stats
    assert s.accepted_steps == len(traj.t) - 1
    assert s.correction_failures == 0
    assert s.rhs_evaluations >= 6 * s.accepted_steps


def test_correction_none_drifts_more_than_energy():
    tbar = catalog.tbar("stedy", damping=1.0)
    corrected = tc.simulate(tbar, 10.0)
    raw = tc.simulate(tbar, 10.0, correction="none")
    e_corr = np.abs(corrected.energy_violation).max()
    e_raw = np.abs(raw.energy_violation).max()
    b_corr = np.abs(corrected.bar_violation).max()
    b_raw = np.abs(raw.bar_violation).max()
    assert e_raw > 100 * e_corr
    assert b_raw > 100 * b_corr
    assert raw.stats.correction_iterations == 0


def test_geometric_correction_keeps_integrated_work():
    tbar = catalog.tbar("stedy", damping=1.0)
    energy = tc.simulate(tbar, 5.0)
    geo = tc.simulate(tbar, 5.0, correction="geometric")
    assert np.abs(geo.bar_violation).max() <= 1e-10
    # w is integrated, not reset: it agrees with the energy-corrected run's work
    assert geo.work[-1] == pytest.approx(energy.work[-1], abs=1e-6)
    assert geo.work[-1] < -1.0


def test_dbar_reference_end_state():
    # catalog.dbar docstring: computed by an independent Cartesian implementation (DOP853, 1e-12), t = 10 s
    traj = tc.simulate(catalog.dbar(), 10.0, t_eval=[0.0, 10.0])
    assert traj.E0 == pytest.approx(19.99297322, abs=1e-7)
    np.testing.assert_allclose(traj.nodes[-1, 1], [0.9780824081, 0, -0.2082181620], atol=1e-7)
    np.testing.assert_allclose(traj.nodes[-1, 2], [0.7698642461, 0, 0.7698642461], atol=1e-7)
    np.testing.assert_allclose(traj.nodes[-1, 3], [-0.2082181620, 0, 0.9780824081], atol=1e-7)
    assert traj.work[-1] == pytest.approx(-13.5030039417, abs=1e-6)


def hanging_mass(kind):
    """A 1 kg point mass on a 1 m member below a fixed node, with gravity."""
    return tc.Structure(
        nodes=[[0, 0, 0], [0, 0, -1.0]],
        strings=[tc.String((0, 1), kind=kind, stiffness=1000.0, rest_length=1.0)],
        point_masses=[tc.PointMass(1, 1.0)],
        fixed={0: "xyz"},
        gravity=(0, 0, -9.806),
    )


@pytest.mark.slow
def test_slack_string_lets_the_mass_fly_freely():
    v0, g = 2.0, 9.806
    t_land = 2 * v0 / g
    t_eval = np.linspace(0, 0.95 * t_land, 20)
    traj = tc.simulate(hanging_mass("string"), t_land, t_eval=t_eval,
                       qd=[[0, 0, 0], [0, 0, v0]])
    z = -1 + v0 * t_eval - g * t_eval**2 / 2
    np.testing.assert_allclose(traj.nodes[:, 1, 2], z, atol=1e-9)
    # a two-sided spring pushes back instead
    spring = tc.simulate(hanging_mass("spring"), t_land, t_eval=t_eval,
                         qd=[[0, 0, 0], [0, 0, v0]])
    assert np.abs(spring.nodes[:, 1, 2] - z).max() > 0.1
    for tr in (traj, spring):
        assert np.abs(tr.energy_violation).max() <= 1e-9


def test_slack_then_taut_conserves_energy():
    # the mass falls back onto the string and bounces: slack -> taut -> slack transitions
    traj = tc.simulate(hanging_mass("string"), 3.0, qd=[[0, 0, 0], [0, 0, 2.0]])
    stretch = -traj.nodes[:, 1, 2] - 1.0
    assert stretch.max() > 0.01 and stretch.min() < -0.1
    assert np.abs(traj.energy_violation).max() <= 1e-9


@pytest.mark.parametrize("name", ["ball", "arm"])
def test_ball_and_arm_with_gravity_and_loads(name):
    if name == "ball":
        structure, load = catalog.ball(rest_fraction=0.9), catalog.ball_load()
    else:
        structure, load = catalog.arm(rest_fraction=0.8), catalog.arm_load()
    traj = tc.simulate(structure, 1.0, loads=load)
    assert traj.t[-1] == 1.0
    assert np.abs(traj.bar_violation).max() <= 1e-10
    # the energy is held to correction_tol (1e-12) times the structure's energy scale
    # (docs/theory.md, "Scales"; the arm's is 2.7e3 J)
    energy = structure_scales(structure).energy
    assert np.abs(traj.energy_violation).max() <= 1e-11 * energy
    # the structure really moves and the load really works on it
    assert np.abs(traj.nodes[-1] - traj.nodes[0]).max() > 1e-4
    assert abs(traj.work[-1]) > 1e-6
    # fixed coordinates never move
    fixed = structure.fixed
    assert np.all(traj.nodes[:, fixed] == structure.nodes[fixed])


def test_dense_output_matches_step_points():
    tbar = catalog.tbar("paper")
    steps = tc.simulate(tbar, 2.0)
    t_eval = steps.t[1:-1:7]
    dense = tc.simulate(tbar, 2.0, t_eval=t_eval)
    np.testing.assert_allclose(dense.nodes, steps.nodes[1:-1:7], atol=1e-10)
    # between steps the interpolant is put back on the constraints as the steps are
    mid_t = 0.5 * (steps.t[1:] + steps.t[:-1])
    mid = tc.simulate(tbar, 2.0, t_eval=mid_t)
    assert np.abs(mid.bar_violation).max() <= 1e-10
    assert np.abs(mid.energy_violation).max() <= 1e-9
    raw = tc.simulate(tbar, 2.0, t_eval=mid_t, correction="none")
    assert np.abs(raw.energy_violation).max() > 10 * np.abs(mid.energy_violation).max()


def test_redundant_bar_is_dropped_with_a_warning():
    s = catalog.tbar("stedy")
    d = structure_to_dict(s)
    d["bars"].append({"nodes": [0, 1], "density": 500, "radius": 0.05})  # both ends fully fixed
    with pytest.warns(UserWarning, match=r"bar 2 \(nodes 0->1\).*redundant"):
        s2 = tc.structure_from_dict(d)
        model = rigid_model(s2)
    assert model.dropped_bars == (2,)
    traj = tc.simulate(s2, 1.0)
    ref = tc.simulate(s, 1.0)
    # the extra bar sits on fixed nodes: it changes nothing
    np.testing.assert_allclose(traj.nodes[-1], ref.nodes[-1], atol=1e-12)


def test_force_error_carries_the_trajectory():
    def force(t, q, qd):
        if t > 0.5:
            raise RuntimeError("sensor dropout")
        return np.zeros((4, 3))

    with pytest.raises(tc.SimulationError, match="sensor dropout") as info:
        tc.simulate(catalog.tbar("stedy"), 2.0, loads=force)
    err = info.value
    assert 0.3 < err.time <= 0.5
    assert err.trajectory.t[-1] == err.time
    assert len(err.trajectory.t) > 10
    assert isinstance(err.__cause__, RuntimeError)
    assert np.abs(err.trajectory.bar_violation).max() <= 1e-10


def test_non_finite_force_is_a_simulation_error():
    force = lambda t, q, qd: np.full((4, 3), np.nan if t > 0.2 else 0.0)  # noqa: E731
    with pytest.raises(tc.SimulationError, match="non-finite") as info:
        tc.simulate(catalog.tbar("stedy"), 1.0, loads=force)
    assert info.value.trajectory.t[-1] <= 0.2


def _interrupted_run(**options):
    """simulate() of the damped HDPE T-bar whose force function raises KeyboardInterrupt
    (Ctrl-C) past t = 0.3 s, called as in a user's parameter loop; the exception raised."""
    def force(t, q, qd):
        if t > 0.3:
            raise KeyboardInterrupt
        return np.zeros((4, 3))

    s = catalog.tbar("stedy", damping=1.0, bar_material="hdpe")
    with pytest.raises(KeyboardInterrupt) as info:
        try:
            tc.simulate(s, 1.0, loads=force, **options)
        except Exception:  # what a parameter loop writes: it must not swallow Ctrl-C
            pytest.fail("except Exception caught the interrupt")
    return info.value


@pytest.mark.parametrize("bars, tol", [("rigid", 1e-10), ("compressible", 1e-8)])
@pytest.mark.parametrize("grid", [False, True])
def test_interrupt_reaches_the_caller_with_a_consistent_trajectory(bars, tol, grid):
    t_eval = np.linspace(0.0, 1.0, 41) if grid else None
    err = _interrupted_run(bars=bars, rtol=tol, atol=tol, t_eval=t_eval)
    assert isinstance(err, tc.SimulationInterrupted) and not isinstance(err, Exception)
    assert 0.25 < err.time <= 0.3 and f"interrupted at t = {err.time:.6g} s" in str(err)
    traj = err.trajectory
    nt = len(traj.t)
    assert traj.bars == bars and nt > 5
    for name in ("nodes", "velocities", "energy", "work", "bar_violation", "energy_violation"):
        assert getattr(traj, name).shape[0] == nt, name
    assert np.all(np.isfinite(traj.nodes))
    assert traj.stats.accepted_steps > 5 and traj.stats.integrator in ("dopri54", "radau5")
    if grid:  # the grid up to the time reached
        np.testing.assert_array_equal(traj.t, t_eval[:nt])
        assert traj.t[-1] <= err.time < t_eval[nt]
    else:  # every accepted step, the last one at the time reached
        assert traj.t[-1] == err.time and traj.stats.accepted_steps == nt - 1
    if bars == "rigid":
        assert np.abs(traj.bar_violation).max() <= 1e-10


def test_recorder_keeps_times_and_states_together_when_interrupted():
    # an interrupt in the correction of the 2nd of 3 output states of a step (the old
    # Recorder had appended one state and no time: "cannot reshape array of size N")
    calls = []

    def project(t, y):
        calls.append(t)
        if len(calls) == 2:
            raise KeyboardInterrupt

    class Step:
        t0, h, y1 = 0.0, 1.0, np.ones(2)

        def dense(self, theta):
            return np.outer(theta, [1.0, 1.0])

    recorder = recording.Recorder(np.zeros(2), np.array([0.0, 0.25, 0.5, 1.0]), project)
    with pytest.raises(KeyboardInterrupt):
        recorder(Step())
    t, Y = recorder.arrays(2)
    assert t.tolist() == [0.0] and Y.shape == (1, 2) and recorder.t_reached == 0.0


def test_recorder_growth_changes_nothing_in_the_python_loop(monkeypatch):
    # a loads function keeps the Python loop; its step rows doubled from 1 hold the same steps
    s = catalog.tbar("stedy", damping=1.0)
    ref = tc.simulate(s, 1.0, loads=lambda t, q, qd: np.zeros((4, 3)))
    monkeypatch.setattr(recording, "FIRST_ROWS", 1)
    grown = tc.simulate(s, 1.0, loads=lambda t, q, qd: np.zeros((4, 3)))
    assert ref.stats.accepted_steps > 20
    np.testing.assert_array_equal(grown.t, ref.t)
    np.testing.assert_array_equal(grown.nodes, ref.nodes)
    np.testing.assert_array_equal(grown.work, ref.work)


def test_external_force_does_work():
    # a constant 1 N push on node 2 along x: the energy balance includes its work
    force = lambda t, q, qd: np.array([[0, 0, 0], [0, 0, 0], [1.0, 0, 0], [0, 0, 0]])  # noqa
    traj = tc.simulate(catalog.tbar("paper"), 2.0, loads=force)
    x2 = traj.nodes[:, 2, 0]
    np.testing.assert_allclose(traj.work, x2 - x2[0], atol=1e-9)
    assert np.abs(traj.energy_violation).max() <= 1e-9
    # constant loads may be given as the array itself
    constant = tc.simulate(catalog.tbar("paper"), 2.0, loads=force(0.0, None, None))
    np.testing.assert_array_equal(constant.nodes, traj.nodes)


@pytest.mark.parametrize("kwargs,match", [
    ({"rtol": -1}, "rtol must be positive"),
    ({"atol": 0}, "atol must be positive"),
    ({"correction": "full"}, "correction must be one of"),
    ({"t_eval": [0, 5, 20]}, r"t_eval must lie within"),
    ({"t_eval": [0, 2, 1]}, "strictly increasing"),
    ({"qd": np.ones((4, 3))}, "qd: node 0 moves along its fixed x axis"),
    ({"qd": [[0, 0, 0], [0, 0, 0], [1, 0, 1], [0, 0, 0]]}, r"qd: bar 0 \(nodes 0->2\) changes length"),
    ({"loads": lambda t, q, qd: np.zeros(5)}, r"loads\(t, q, qd\) must return an \(4, 3\) array"),
    ({"loads": "gravity"}, r"loads must be an \(4, 3\) array \[N\] or a callable"),
    ({"loads": np.zeros(5)}, r"loads must be an \(4, 3\) array \[N\] or a callable"),
])
def test_bad_options_are_reported(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        tc.simulate(catalog.tbar("stedy"), 10.0, **kwargs)


def test_bad_final_time():
    with pytest.raises(ValueError, match="t_final must be a positive"):
        tc.simulate(catalog.tbar("stedy"), -1.0)


def test_failure_time_is_the_last_accepted_step_with_t_eval():
    def force(t, q, qd):
        if t > 0.6:
            raise RuntimeError("actuator fault")
        return np.zeros((4, 3))

    with pytest.raises(tc.SimulationError, match="actuator fault") as info:
        tc.simulate(catalog.tbar("stedy"), 2.0, loads=force, t_eval=[0.25, 0.5, 1.0, 1.5])
    err = info.value
    assert 0.5 < err.time <= 0.6
    np.testing.assert_array_equal(err.trajectory.t, [0.25, 0.5])
    assert err.trajectory.E0 == pytest.approx(99.964866, abs=1e-6)


# --- issue 13: strict option types, bounded runs, nothing lost ------------------------------

@pytest.mark.parametrize("kwargs, error, match", [
    ({"t_final": "1.0"}, TypeError, "t_final must be a number of seconds, got str '1.0'"),
    ({"t_final": None}, TypeError, "t_final must be a number of seconds, got NoneType"),
    ({"t_final": np.array([1.0, 2.0])}, TypeError, "t_final must be a number of seconds"),
    ({"t_final": True}, TypeError, "t_final must be a number of seconds, got bool"),
    ({"rtol": "1e-6"}, TypeError, "rtol must be a number, got str '1e-6'"),
    ({"rtol": np.nan}, ValueError, "rtol must be positive, got nan"),
    ({"atol": [1e-8, 1e-8]}, TypeError, "atol must be a number, got list"),
    ({"t_eval": ["a"]}, TypeError, r"t_eval must be an array of real numbers \[s\]"),
    ({"t_eval": ["0.5"]}, TypeError, r"t_eval must be an array of real numbers \[s\]"),
    ({"t_eval": [0.5 + 1j]}, TypeError, r"t_eval must be .* got complex numbers"),
    ({"max_step": "0.1"}, TypeError, "max_step must be a number of seconds, got str '0.1'"),
    ({"max_step": -1.0}, ValueError, "max_step must be positive"),
    ({"correction_tol": -1}, ValueError, "correction_tol must be positive, got -1"),
    ({"correction_tol": np.nan}, ValueError, "correction_tol must be positive, got nan"),
    ({"correction_tol": "1e-10"}, TypeError, "correction_tol must be a number"),
    ({"max_correction_iterations": 0}, ValueError, "max_correction_iterations must be an "
                                                   "integer >= 1, got 0"),
    ({"max_correction_iterations": 2.5}, TypeError, "max_correction_iterations must be an "
                                                    "integer >= 1, got float 2.5"),
    ({"max_steps": 0}, ValueError, "max_steps must be an integer >= 1, got 0"),
    ({"max_steps": 1e6}, TypeError, "max_steps must be an integer >= 1, got float"),
    ({"include_radius": "no"}, TypeError, "include_radius must be True or False, got str 'no'"),
    ({"progress": 1}, TypeError, "progress must be True or False, got int 1"),
    ({"qd": [["0"] * 3] * 4}, TypeError, r"qd must be an array of real numbers \[m/s\]"),
    ({"loads": np.ones((4, 3)) * (1 + 1j)}, TypeError,
     r"loads must be an \(4, 3\) array .* of real numbers, got ndarray .* dtype complex128"),
    ({"loads": [["1"] * 3] * 4}, TypeError, r"loads must be .* of real numbers"),
    ({"loads": lambda t, q, qd: np.ones((4, 3)) * 1j}, ValueError,
     r"loads\(t, q, qd\) must return real numbers \[N\], got dtype complex128"),
    ({"loads": lambda t, q, qd: np.full((4, 3), np.nan)}, ValueError,
     r"loads\(t, q, qd\) returned non-finite values at t = 0 s"),
    ({"loads": lambda t, q, qd: np.zeros((3, 4, 1))}, ValueError,
     r"loads\(t, q, qd\) must return an \(4, 3\) array \[N\], got shape \(3, 4, 1\)"),
    ({"loads": lambda t, q, qd: np.zeros((3, 4))}, ValueError,
     r"loads\(t, q, qd\) must return an \(4, 3\) array \[N\], got shape \(3, 4\)"),
])
def test_wrong_option_types_name_the_option(kwargs, error, match):
    kwargs = {"t_final": 1.0, **kwargs}
    with pytest.raises(error, match=match):
        tc.simulate(catalog.tbar("stedy"), kwargs.pop("t_final"), **kwargs)


def test_loads_that_turn_complex_later_fail_with_the_partial_trajectory():
    def f(t, q, qd):
        return np.zeros((4, 3)) + (1j if t > 0.2 else 0)

    with pytest.raises(tc.SimulationError, match="must return real numbers") as info:
        tc.simulate(catalog.tbar("stedy"), 1.0, loads=f)
    assert 0.1 < info.value.time <= 0.2 and info.value.trajectory.t[-1] == info.value.time


@pytest.mark.parametrize("call, match", [
    (lambda s: tc.verify(s, None, None, "1.0"), "verify: t_final must be a number of seconds"),
    (lambda s: tc.verify(s, None, None, 1.0, t_eval=["a"]),
     r"verify: t_eval must be an array of real numbers"),
    (lambda s: tc.compare_materials(s, t_final="10"),
     "compare_materials: t_final must be a time"),
    (lambda s: tc.compare_closed_loop(s, t_final=None),
     "compare_closed_loop: t_final must be a number of seconds"),
])
def test_the_studies_name_the_option_too(call, match):
    with pytest.raises(TypeError, match=match):
        call(catalog.tbar("stedy", damping=1.0))


def test_a_huge_force_is_a_simulation_error_with_the_time_computed():
    # 1e300 N after 0.1 s: the rigid kernel's solve meets inf (a LinAlgError inside numba)
    def f(t, q, qd):
        out = np.zeros((4, 3))
        out[2, 0] = 1e300 if t > 0.1 else 0.0
        return out

    with pytest.raises(tc.SimulationError, match="a linear solve failed") as info:
        tc.simulate(catalog.tbar("stedy"), 1.0, loads=f)
    traj = info.value.trajectory
    assert 0.09 < info.value.time <= 0.1 and traj.t[-1] == info.value.time
    assert np.all(np.isfinite(traj.nodes))


def _light_node_on_stiff_springs():
    """A 1e-6 kg node held by two 1e8 N/m springs to the tip of a pinned bar."""
    return tc.Structure(
        nodes=[[0, 0, 0], [1, 0, 0], [1, 0.5, 0], [0, 0.5, 0]],
        bars=[tc.Bar((0, 1), radius=0.01, material="steel")],
        strings=[tc.String((1, 2), "spring", stiffness=1e8, rest_length=0.45),
                 tc.String((2, 3), "spring", stiffness=1e8, rest_length=0.95),
                 tc.String((3, 1), "spring", stiffness=100.0, rest_length=1.0)],
        point_masses=[tc.PointMass(2, 1e-6)], fixed={0: "xyz", 3: "xyz"}, name="light-node")


@pytest.mark.parametrize("case, match", [
    (lambda: tc.simulate(_light_node_on_stiff_springs(), 1.0),
     r"max_steps = \d+.*the fastest member is string [01] \(nodes .*\): sqrt\(k/m\)"),
    (lambda: tc.simulate(catalog.tbar("stedy", damping=1e12), 1.0),
     r"max_steps.*the fastest member is string \d \(nodes \d->\d\): c/m = 1e\+12 N s/m"),
])
def test_a_run_whose_steps_collapse_ends_naming_the_stiff_member(case, match):
    with pytest.raises(tc.SimulationError, match=match) as info:
        case()
    traj = info.value.trajectory
    assert len(traj.t) > 100 and traj.t[-1] == info.value.time < 1e-2
    assert traj.stats.accepted_steps + traj.stats.rejected_steps <= 20_000


def test_a_runaway_state_ends_naming_the_coordinate():
    def growing(t, q, qd):
        out = np.zeros((4, 3))
        out[2, 0] = np.exp(50 * t)
        return out

    with pytest.raises(tc.SimulationError, match=r"the largest displacement is node \d [xyz]"):
        tc.simulate(catalog.tbar("stedy"), 1.0, loads=growing)


def test_max_steps_is_the_simulate_option():
    with pytest.raises(tc.SimulationError, match="reached max_steps = 20") as info:
        tc.simulate(catalog.tbar("stedy"), 10.0, max_steps=20)
    assert info.value.trajectory.stats.accepted_steps <= 20
    tc.simulate(catalog.tbar("stedy"), 0.5, max_steps=10_000)  # room enough: no error


# --- interrupts and installs, in subprocesses ------------------------------------------------

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _python(code, env=None, **kwargs):
    full = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1", **(env or {})}
    return subprocess.Popen([sys.executable, "-c", code], env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


INTERRUPTED_RUN = """
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import tenscontrol as tc
# Python's own Ctrl-C handler, as in a terminal: a test run in the background (CI) starts its
# children with SIGINT ignored, and Python then installs no handler of its own
signal.signal(signal.SIGINT, signal.default_int_handler)
s = tc.catalog.tbar("stedy", damping=1.0, bar_material="hdpe")
tc.simulate(s, 0.01, bars="compressible")  # kernels loaded before the signal may come
zeros = np.zeros((s.n_nodes, 3))


def loads(t, q, qd):  # "ready" once the integration runs, so the signal lands inside it
    if t > 0 and not loads.started:
        loads.started = True
        print("ready", flush=True)
    return zeros


loads.started = False
try:
    tc.simulate(s, 1000.0, bars="compressible", t_eval=np.linspace(0, 1000.0, 200_001),
                max_steps=10**8, loads=loads)
    print("finished")
except tc.SimulationInterrupted as exc:
    tr = exc.trajectory
    n = len(tr.t)
    same = all(len(a) == n for a in (tr.nodes, tr.velocities, tr.energy, tr.work))
    print("interrupted", n, same, bool(np.all(np.diff(tr.t) > 0)), tr.t[-1] <= exc.time)
"""


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.05, 0.3, 0.7])
def test_ctrl_c_in_a_compressible_run_with_dense_output_keeps_a_consistent_trajectory(delay):
    # a real SIGINT, which may land inside a compiled Radau kernel (numba then raised
    # "SystemError: CPUDispatcher(_finish) returned a result with an exception set")
    proc = _python(INTERRUPTED_RUN)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-2000:]
    words = out.split()
    assert words[0] == "interrupted" and int(words[1]) > 0, out + err[-2000:]
    assert words[2:] == ["True", "True", "True"], out


READ_ONLY_INSTALL = """
import os, sys
allowed = os.environ["TMPDIR"]
if os.getuid() == 0:  # root writes anywhere: let numba find only the temporary folder writable
    from numba.core import caching
    ensure = caching._CacheLocator.ensure_cache_path
    def only_temporary(self):
        if not self.get_cache_path().startswith(allowed):
            raise PermissionError("read-only (simulated)")
        ensure(self)
    caching._CacheLocator.ensure_cache_path = only_temporary
import tenscontrol as tc
from numba.core import config
from tenscontrol.mechanics.kernels import cache as kernel_cache
traj = tc.simulate(tc.catalog.tbar(), 0.05)
print(tc.__file__.startswith(sys.argv[1]), kernel_cache.CACHE,
      config.CACHE_DIR == kernel_cache.cache_folder(), len(traj.t) > 1)
"""


@pytest.mark.slow
def test_a_read_only_install_caches_the_kernels_in_a_temporary_folder(tmp_path):
    # a fixed folder, so that the kernels compiled the first time are reused by later runs
    base = pathlib.Path(tempfile.gettempdir()) / "tenscontrol-read-only-install-test"
    site, home, tmp = base / "site", base / "home", base / "tmp"
    if site.exists():
        subprocess.run(["chmod", "-R", "u+w", str(site)], check=True)
        shutil.rmtree(site)
    shutil.copytree(ROOT / "tenscontrol", site / "tenscontrol",
                    ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(["chmod", "-R", "a-w", str(site)], check=True)
    home.mkdir(parents=True, exist_ok=True)
    home.chmod(0o500)
    tmp.mkdir(exist_ok=True)
    env = {"PYTHONPATH": str(site), "HOME": str(home), "TMPDIR": str(tmp),
           "XDG_CACHE_HOME": str(home / ".cache")}
    env_clean = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    proc = subprocess.run([sys.executable, "-c", READ_ONLY_INSTALL, str(site)], cwd=str(tmp),
                          env={**env_clean, **env, "OPENBLAS_NUM_THREADS": "1"},
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["True", "True", "True", "True"], proc.stdout
