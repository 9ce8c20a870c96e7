"""Sampled controllers and sensor-based LQG controllers in the controller file (format 3)."""

import json

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.control.storage import controller_arrays
from tenscontrol.mechanics.sensors import sensors


@pytest.fixture(scope="module")
def tbar():
    s = tc.equilibrium(tc.catalog.tbar(damping=1.0), gamma_min=10.0).structure
    return s, tc.linearize(s), tc.linearize(s, kind="control")


def _sensors(s):
    """Every noise feature: string lengths with bias and quantization, load cells, bar rates."""
    return (sensors(s, string_lengths=range(s.n_strings), std=1e-3, bias=2e-4,
                    quantization=1e-5, rate=200.0)
            + sensors(s, string_tensions=[0, 2], std=0.05, rate=500.0)
            + sensors(s, bar_rates=range(s.n_bars), std=1e-2, rate=200.0))


def _replay(controller, states):
    """Commands and next states of `controller` run through the sampled states (q, qd)."""
    xk, out = controller.initial_state(), []
    for k, (q, qd) in enumerate(states):
        u, xk = controller.update(k, k * controller.period, q, qd, xk)
        out.append(np.concatenate([u, xk]))
    return np.array(out)


def test_discrete_lqg_round_trip_gives_identical_commands(tbar, tmp_path):
    s, _, control_model = tbar
    # kind "control": the load cells on commanded strings read held force densities
    c = tc.discrete_lqg(control_model, _sensors(s), 0.005, process_noise=4.0, delay=0.001,
                        seed=11).controller
    loaded = tc.load_controller(tc.save_controller(c, tmp_path / "lqg.npz"))
    assert type(loaded) is tc.control.DiscreteLQG and loaded.kind == "control"
    assert (loaded.period, loaded.delay, loaded.seed, loaded.noise) == (0.005, 0.001, 11, True)
    f = np.zeros((s.n_nodes, 3))
    f[2, 2] = 20.0
    # the states the controller sampled in the nonlinear loop (noise on)
    run = tc.simulate(s, 0.1, controller=c, loads=f, t_eval=0.005 * np.arange(21), rtol=1e-8,
                      atol=1e-10)
    states = list(zip(run.nodes.reshape(21, -1), run.velocities.reshape(21, -1)))[:20]
    recorded = _replay(c, states)
    np.testing.assert_allclose(recorded[:, :4], run.control.sample_u, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(_replay(loaded, states), recorded)
    assert np.abs(recorded[:, :4]).max() > 0.1           # the commands are not all zero


def test_discrete_feedback_round_trips(tbar, tmp_path):
    s, model, _ = tbar
    lqr = tc.lqr(model, effort=1e-2).controller
    lqg = tc.lqg(model, _sensors(s), process_noise=4.0).controller
    hinf = tc.hinfsyn(model, measurements=tc.Selection(nodes=[2], axes="xz", strings=[1]),
                      disturbances=tc.Selection(2, "z")).controller
    rng = np.random.default_rng(4)
    states = [(s.nodes.reshape(-1) + 1e-3 * rng.standard_normal(12),
               1e-2 * rng.standard_normal(12)) for _ in range(15)]
    for name, c in (("state", tc.discretize(lqr, 0.004, 0.001)),
                    ("coordinates", tc.discretize(hinf, 0.002)),
                    ("sensors", tc.discretize(lqg, 0.005, 0.002))):
        loaded = tc.load_controller(tc.save_controller(c, tmp_path / f"{name}.npz"))
        assert type(loaded) is tc.control.DiscreteFeedback, name
        assert (loaded.period, loaded.delay) == (c.period, c.delay), name
        for field in ("AK", "BK", "CK", "DK", "q_ref", "strings", "gamma_ref"):
            np.testing.assert_array_equal(getattr(loaded, field), getattr(c, field))
        np.testing.assert_array_equal(_replay(loaded, states), _replay(c, states))
    # the continuous LQG (an OutputFeedback on a sensor set) is saved too
    loaded = tc.load_controller(tc.save_controller(lqg, tmp_path / "lqg.npz"))
    q, qd = states[0]
    xc = rng.standard_normal(lqg.n_states)
    np.testing.assert_array_equal(loaded.force_densities(0.0, q, qd, xc),
                                  lqg.force_densities(0.0, q, qd, xc))
    np.testing.assert_array_equal(loaded.state_derivative(0.0, q, qd, xc),
                                  lqg.state_derivative(0.0, q, qd, xc))


def test_formats_two_and_three(tbar):
    s, model, _ = tbar
    lqr = tc.lqr(model, effort=1e-2).controller
    header = lambda c: json.loads(str(controller_arrays(c)["header"]))   # noqa: E731
    # what version 1.1 read stays format 2, its header unchanged
    assert header(lqr) == {"format": "tenscontrol.controller/2", "type": "StateFeedback",
                           "kind": "passive"}
    assert header(tc.discretize(lqr, 0.01, 0.002)) == {
        "format": "tenscontrol.controller/3", "type": "DiscreteFeedback", "kind": "passive",
        "period": 0.01, "delay": 0.002, "measurement": None}


def test_mpc_and_other_controllers_are_refused(tbar, tmp_path):
    s, model, _ = tbar
    with pytest.raises(TypeError, match="expected a StateFeedback, OutputFeedback, "
                                        "DiscreteFeedback or DiscreteLQG, got dict"):
        tc.save_controller({}, tmp_path / "x.npz")
    pytest.importorskip("osqp")
    m = tc.mpc(model, 0.01, gamma_min=1.0, effort=1e-2).controller
    with pytest.raises(TypeError, match=r"PredictiveController \(tenscontrol.mpc\) holds an "
                                        r"OSQP solver.*tenscontrol.dlqr\(model, period\)"):
        tc.save_controller(m, tmp_path / "mpc.npz")
    assert not (tmp_path / "mpc.npz").exists()


def _rewritten(path, out, **changes):
    """The file at `path` with entries replaced (None: removed), written to `out`."""
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    for key, value in changes.items():
        if value is None:
            arrays.pop(key)
        else:
            arrays[key] = value
    np.savez(out, **arrays)
    return out


def test_damaged_sampled_files_name_the_entry(tbar, tmp_path):
    s, _, control_model = tbar
    c = tc.discrete_lqg(control_model, _sensors(s), 0.005, process_noise=4.0).controller
    good = tc.save_controller(c, tmp_path / "lqg.npz")
    header = json.loads(str(controller_arrays(c)["header"]))
    bad = {
        "kalman_M": (dict(kalman_M=np.zeros((3, 3))), r"entry 'kalman_M' \(shape \(3, 3\)\) "
                                                       r"does not fit"),
        "K missing": (dict(K=None), r"entry 'K' is missing"),
        "seed": (dict(header=np.array(json.dumps({**header, "seed": "x"}))),
                 r"entry 'header' must give 'seed' as int, got 'x'"),
        "kind": (dict(header=np.array(json.dumps({**header, "kind": "pid"}))),
                 r"controller kind must be 'passive' or 'control'"),
        "measurement": (dict(header=np.array(json.dumps({**header, "measurement": "Laser"}))),
                        r"entry 'header' gives the measurement 'Laser'"),
        "sensor kind": (dict(sensors_kinds=np.array(["string_length"] * 7 + ["sonar"])),
                        r"entry 'sensors_kinds'"),
        "sensor item": (dict(sensors_items=np.array([0, 1, 2, 99, 0, 2, 0, 1])),
                        r"entry 'sensors_items'"),
        "structure": (dict(sensors_structure=np.array('{"nodes": 3}')),
                      r"entry 'sensors_structure'"),
        "y_ref": (dict(measurement_y_ref=np.zeros(2)), r"entry 'measurement_y_ref'"),
    }
    for name, (changes, message) in bad.items():
        path = _rewritten(good, tmp_path / "bad.npz", **changes)
        with pytest.raises(ValueError, match=r"bad.npz: " + message):
            tc.load_controller(path)
    d = tc.discretize(tc.lqr(tc.linearize(s), effort=1e-2).controller, 0.01)
    header = json.loads(str(controller_arrays(d)["header"]))
    path = _rewritten(tc.save_controller(d, tmp_path / "d.npz"), tmp_path / "bad.npz",
                      header=np.array(json.dumps({**header, "period": -1.0})))
    with pytest.raises(ValueError, match=r"bad.npz: entry 'header': period must be a "
                                         r"positive number of seconds, got -1.0"):
        tc.load_controller(path)
