"""Sensors (tenscontrol.mechanics.sensors): outputs, noise, and every analytic output matrix
against central finite differences of h, on the T-bar and a 3-prism, rigid and compressible."""

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.mechanics.sensors import sensors

H = 1e-6   # [m, m/s, N/m] central-difference step; errors O(H^2 h''') ~ 1e-10 relative


@pytest.fixture(scope="module")
def tbar():
    return tc.equilibrium(tc.catalog.tbar(damping=1.0), gamma_min=10.0).structure


@pytest.fixture(scope="module")
def prism():
    return tc.equilibrium(tc.catalog.prism(3, damping=0.5), gamma_min=5.0).structure


def every_sensor(s):
    return sensors(s, string_lengths=range(s.n_strings), string_tensions=range(s.n_strings),
                   node_positions=tc.Selection(), bar_directions=range(s.n_bars),
                   bar_rates=range(s.n_bars), std=1e-3)


def central(f, x):
    cols = [(f(x + H * e) - f(x - H * e)) / (2 * H) for e in np.eye(x.size)]
    return np.array(cols).T


def relative_error(analytic, fd):
    return np.abs(analytic - fd).max() / max(np.abs(fd).max(), 1e-300)


def moving_point(s, seed=0):
    rng = np.random.default_rng(seed)
    q = s.nodes.reshape(-1) + 0.01 * rng.standard_normal(3 * s.n_nodes)
    return q, rng.standard_normal(3 * s.n_nodes)


@pytest.mark.parametrize("name", ["tbar", "prism"])
def test_output_matrices_match_central_differences_at_a_moving_point(name, request):
    s = request.getfixturevalue(name)
    ss = every_sensor(s)
    q, qd = moving_point(s)
    gamma = np.linspace(5.0, 20.0, s.n_strings)
    held = [0, 2]
    Cq, Cv, D = ss.output_matrices(q, qd, gamma, held)
    assert relative_error(Cq, central(lambda x: ss.outputs(x, qd, gamma, held), q)) < 1e-8
    assert relative_error(Cv, central(lambda x: ss.outputs(q, x, gamma, held), qd)) < 1e-8
    fd = central(lambda g: ss.outputs(q, qd, g, held), gamma)
    assert relative_error(D[:, held], fd[:, held]) < 1e-8
    assert np.all(fd[:, [1]] == 0.0) and np.all(D[:, [1]] == 0.0)   # string 1 follows its law
    # every row is exercised: only the load cells of slack strings (zero tension) are zero
    y = ss.outputs(q, qd, gamma, held)
    idle = np.abs(np.hstack([Cq, Cv])).max(axis=1) == 0
    assert all(n.startswith("T") and y[r] == 0 for r, n in enumerate(ss.names) if idle[r])
    assert idle.sum() < s.n_strings


def test_values_of_each_kind(tbar):
    ss = every_sensor(tbar)
    q = tbar.nodes.reshape(-1)
    y = dict(zip(ss.names, ss.outputs(q)))
    np.testing.assert_allclose([y[f"l{k}"] for k in range(4)], tbar.string_lengths, rtol=1e-14)
    gamma = tc.force_densities(tbar, q)
    np.testing.assert_allclose([y[f"T{k}"] for k in range(4)], gamma * tbar.string_lengths,
                               rtol=1e-12)
    b = tbar.nodes[2] - tbar.nodes[0]
    np.testing.assert_allclose([y["ux0"], y["uy0"], y["uz0"]], b / np.linalg.norm(b))
    assert all(y[f"w{a}{k}"] == 0.0 for a in "xyz" for k in range(2))   # at rest
    assert "y2" not in y and y["z3"] == q[11]          # fixed coordinates are left out


def test_bar_rate_is_the_angular_velocity_of_a_rotation(tbar):
    ss = sensors(tbar, bar_rates=[0])
    N = tbar.nodes
    omega = np.array([0.3, -0.2, 0.5])
    qd = np.cross(omega, N - N[0]).reshape(-1)      # rigid rotation about node 0
    b = N[2] - N[0]
    perp = omega - (omega @ b) * b / (b @ b)        # the spin about the bar is not seen
    np.testing.assert_allclose(ss.outputs(N, qd), perp, atol=1e-15)


def test_noise_model_is_seeded_biased_and_quantized(tbar):
    ss = sensors(tbar, string_lengths=[0, 1], std=0.01, bias=[0.5, 0.0],
                 quantization=[0.0, 0.02])
    q = tbar.nodes
    a = ss.read(q, None, np.random.default_rng(3))
    b = ss.read(q, None, np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    Y = np.array([ss.read(q, None, np.random.default_rng(k)) for k in range(4000)])
    exact = ss.outputs(q)
    assert abs(Y[:, 0].mean() - exact[0] - 0.5) < 4 * 0.01 / np.sqrt(4000)
    assert abs(Y[:, 0].std() - 0.01) < 0.05 * 0.01
    np.testing.assert_allclose(Y[:, 1] / 0.02, np.round(Y[:, 1] / 0.02), atol=1e-9)


def test_linear_model_outputs_match_central_differences(tbar):
    ss = every_sensor(tbar)
    qs = tbar.nodes.reshape(-1)
    z = np.zeros_like(qs)
    passive = tc.linearize(tbar).with_sensors(ss)
    nq = qs.size
    assert passive.output_names == ss.names and passive.C.shape == (ss.n_signals, 2 * nq)
    # passive: every string on its law
    fdq = central(lambda x: ss.outputs(x, z), qs)
    fdv = central(lambda x: ss.outputs(qs, x), z)
    assert relative_error(passive.C, np.hstack([fdq, fdv])) < 1e-8
    # control model, strings 0 and 1 commanded: those held at gamma*, the others on the law
    control = tc.linearize(tbar, kind="control").actuated([0, 1]).with_sensors(ss)
    g = passive.gamma
    fdq = central(lambda x: ss.outputs(x, z, g, [0, 1]), qs)
    assert relative_error(control.C[:, :nq], fdq) < 1e-8
    fdD = central(lambda u: ss.outputs(qs, z, g + np.r_[u, 0, 0], [0, 1]), np.zeros(2))
    assert relative_error(control.D, fdD) < 1e-8
    # the same model reached the other way round, and the passive model from the control one
    other = tc.linearize(tbar, kind="control").with_sensors(ss).actuated([0, 1])
    np.testing.assert_allclose(other.C, control.C, atol=1e-12 * np.abs(control.C).max())
    np.testing.assert_allclose(tc.linearize(tbar, kind="control").with_sensors(ss).passive().C,
                               passive.C, atol=1e-12 * np.abs(passive.C).max())
    sys = passive.sys
    assert sys.D.shape == (ss.n_signals, passive.B.shape[1] + passive.E.shape[1])


@pytest.mark.filterwarnings("ignore:linearize.*not in equilibrium")  # bar rest lengths
def test_compressible_model_gets_zero_bar_feedthrough(prism):
    ss = every_sensor(prism)
    model = tc.linearize(prism, bars="compressible", kind="control").with_sensors(ss)
    ns = prism.n_strings
    assert model.D.shape == (ss.n_signals, ns + prism.n_bars)
    assert np.all(model.D[:, ns:] == 0)
    qs, z = prism.nodes.reshape(-1), np.zeros(3 * prism.n_nodes)
    fdq = central(lambda x: ss.outputs(x, z, model.gamma), qs)
    assert relative_error(model.C[:, :qs.size], fdq) < 1e-8
    rigid = tc.linearize(prism).with_sensors(ss)
    compressible = tc.linearize(prism, bars="compressible").with_sensors(ss)
    np.testing.assert_allclose(compressible.C, rigid.C, atol=1e-10 * np.abs(rigid.C).max())


def test_measure_a_trajectory(tbar):
    ss = sensors(tbar, string_lengths=[0, 3], bar_rates=[1])
    loads = np.zeros((4, 3))
    loads[2, 0] = 50.0
    traj = tc.simulate(tbar, 0.05, loads=loads, t_eval=np.linspace(0, 0.05, 6))
    Y = ss.measure(traj)
    assert Y.shape == (6, 5)
    np.testing.assert_allclose(Y[3], ss.outputs(traj.nodes[3], traj.velocities[3]))
    noisy = sensors(tbar, string_lengths=[0, 3], bar_rates=[1], std=1e-3).measure(
        traj, np.random.default_rng(1))
    assert 0 < np.abs(noisy - Y).max() < 1e-2


def test_sets_add_and_select(tbar):
    a = sensors(tbar, string_lengths=[0, 1], std=1e-3)
    b = sensors(tbar, bar_directions=[1], std=0.01, rate=100.0)
    both = a + b
    assert both.n_sensors == 3 and both.n_signals == 5
    assert both.names == ("l0", "l1", "ux1", "uy1", "uz1")
    np.testing.assert_array_equal(both.rate, [np.inf, np.inf, 100.0])
    assert both.select([2, 0]).names == ("ux1", "uy1", "uz1", "l0")
    assert len(repr(both)) < 200


def test_bad_arguments(tbar):
    with pytest.raises(ValueError, match="string 9 out of range"):
        sensors(tbar, string_lengths=[9])
    with pytest.raises(ValueError, match="no sensor selected"):
        sensors(tbar)
    with pytest.raises(ValueError, match="std must be >= 0"):
        sensors(tbar, string_lengths=[0], std=-1.0)
    with pytest.raises(TypeError, match="node_positions must be a tenscontrol.Selection"):
        sensors(tbar, node_positions=[(2, "x")])
    with pytest.raises(ValueError, match="lists a string twice"):
        sensors(tbar, string_tensions=[1, 1])
    ss = sensors(tbar, string_lengths=[0])
    with pytest.raises(ValueError, match="q must have 12 entries"):
        ss.outputs(np.zeros(5))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        ss.read(tbar.nodes, None, 3)
    with pytest.raises(TypeError, match="with_sensors: sensors must be"):
        tc.linearize(tbar).with_sensors(tc.Selection())
    with pytest.raises(ValueError, match="not on this model's structure"):
        tc.linearize(tbar).with_sensors(sensors(tc.catalog.prism(3), string_lengths=[0]))


def test_save_mat_carries_the_sensors_feedthrough(tbar, tmp_path):
    import scipy.io

    ss = sensors(tbar, string_tensions=[1, 2], bar_rates=[0])
    model = tc.linearize(tbar, kind="control").with_sensors(ss)
    tc.save_mat(model, tmp_path / "m.mat")
    data = scipy.io.loadmat(tmp_path / "m.mat")
    nu = model.B.shape[1]
    np.testing.assert_allclose(data["D"][:, :nu], model.D)
    np.testing.assert_allclose(data["C"], model.C)
    assert [str(u[0]) for u in data["OutputUnit"].ravel()][:3] == ["N", "N", "rad/s"]
