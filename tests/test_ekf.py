"""The extended Kalman filter on the rigid-bar model (tenscontrol.estimation.ekf)."""

import dataclasses

import numpy as np
import pytest
import scipy.linalg

import tenscontrol as tc
from tenscontrol.estimation import lqg as est
from tenscontrol.estimation.ekf import extended_kalman
from tenscontrol.mechanics.rigid.model import constraint_jacobian
from tenscontrol.mechanics.sensors import sensors

T = 0.005


@pytest.fixture(scope="module")
def tbar():
    s = tc.equilibrium(tc.catalog.tbar(damping=1.0), gamma_min=10.0).structure
    ss = (sensors(s, string_lengths=range(s.n_strings), std=1e-3, rate=200.0)
          + sensors(s, bar_rates=range(s.n_bars), std=1e-2, rate=200.0))
    return s, ss, extended_kalman(ss, T, process_noise=4.0)


def test_prediction_jacobian_is_the_linearization_at_the_equilibrium(tbar):
    # on the constraints' tangent space (the minimal basis of linearize's model), the central
    # differences of the one-period map equal the exact zero-order hold e^{A_r T}
    s, _, ekf = tbar
    design = tc.lqr(tc.linearize(s))
    A, _, _ = est.reduced_model(design)
    basis = design.minimal.basis[ekf.free]
    x = np.concatenate([s.nodes.reshape(-1), np.zeros(3 * s.n_nodes)])
    np.testing.assert_allclose(ekf.propagate(x), x, atol=1e-12)       # an equilibrium
    Fx = ekf.transition(x)
    ref = basis @ scipy.linalg.expm(A * T)
    assert np.abs(Fx @ basis - ref).max() < 1e-6 * np.abs(ref).max()


def test_output_jacobian_against_central_differences(tbar):
    s, ss, ekf = tbar
    rng = np.random.default_rng(1)
    nq = 3 * s.n_nodes
    x = np.concatenate([s.nodes.reshape(-1), np.zeros(nq)])
    x[ekf.free] += np.r_[0.1 * rng.standard_normal(ekf.free.size // 2),
                         rng.standard_normal(ekf.free.size // 2)]
    H, h = ekf.output_jacobian(x), 1e-6
    fd = []
    for i in ekf.free:
        e = np.zeros(2 * nq)
        e[i] = h
        fd.append((ss.outputs((x + e)[:nq], (x + e)[nq:])
                   - ss.outputs((x - e)[:nq], (x - e)[nq:])) / (2 * h))
    fd = np.array(fd).T
    assert np.abs(H - fd).max() < 1e-7 * np.abs(fd).max()


def test_projection_restores_bar_lengths_and_tangent_velocity(tbar):
    s, _, ekf = tbar
    rng = np.random.default_rng(2)
    nq = 3 * s.n_nodes
    x = np.concatenate([s.nodes.reshape(-1), np.zeros(nq)])
    x[ekf.free] += np.r_[0.2 * rng.standard_normal(ekf.free.size // 2),
                         rng.standard_normal(ekf.free.size // 2)]
    p = ekf.project(x)
    n, v = p[:nq].reshape(-1, 3), p[nq:].reshape(-1, 3)
    for bar, length in zip(s.bars, s.bar_lengths):
        i, j = bar.nodes
        assert np.linalg.norm(n[j] - n[i]) == pytest.approx(length, rel=1e-12)
        assert abs((n[j] - n[i]) @ (v[j] - v[i])) < 1e-10 * np.abs(v).max()
    fixed = s.fixed_coordinates
    np.testing.assert_array_equal(p[fixed], x[fixed])


def test_ekf_tracks_a_large_swing_the_linear_filter_does_not(tbar):
    """The T-bar kicked (free velocities +-3 m/s) swings by 20 degrees (measured 20.2): RMS
    position error over 2 s, EKF 3.8e-4 m against 0.155 m of the linear DiscreteKalman
    (measured; the finite-difference EKF of 1.0 with lumped-mass process noise had 7.2e-3 m)."""
    s, ss, ekf = tbar
    nq, free = 3 * s.n_nodes, s.free_coordinates
    qd0 = np.zeros(nq)
    qd0[free] = 3.0 * np.array([1.0, -1.0, 1.0, 1.0])
    t = np.arange(0.0, 2.0 + T / 2, T)
    traj = tc.simulate(s, 2.0, qd=qd0, t_eval=t)
    Q, V = traj.nodes.reshape(t.size, -1), traj.velocities.reshape(t.size, -1)
    Y = np.array([ss.read(Q[i], V[i], np.random.default_rng([0, i])) for i in range(t.size)])
    k = est.discrete_lqg(tc.linearize(s), ss, T, process_noise=4.0).controller.kalman
    lin = k.states(k.filter(Y - k.measurement.y_ref))[:, :nq] + s.nodes.reshape(-1)
    x0 = np.concatenate([s.nodes.reshape(-1), np.zeros(nq)])
    P0 = np.diag(np.r_[np.full(free.size, 1e-4), np.full(free.size, 1.0)])
    ext = ekf.filter(Y, x0, P0)[:, :nq]
    rms = lambda X: np.sqrt(np.mean((X - Q)[:, free] ** 2))  # noqa: E731
    assert rms(lin) > 0.1
    assert rms(ext) < 2e-3
    assert rms(ext) < 0.01 * rms(lin)


def _moving_state(ekf, seed):
    """A state on the bar lengths with O(0.3 m) displacements and O(2 m/s) velocities."""
    s = ekf.structure
    rng = np.random.default_rng(seed)
    nq = 3 * s.n_nodes
    x = np.concatenate([s.nodes.reshape(-1), np.zeros(nq)])
    x[ekf.free] += np.r_[0.3 * rng.standard_normal(ekf.free.size // 2),
                         2.0 * rng.standard_normal(ekf.free.size // 2)]
    return ekf.project(x), rng


def _central_differences(f, x, free, rel=1e-6):
    cols = []
    for i in free:
        h = rel * max(1.0, abs(x[i]))
        e = np.zeros_like(x)
        e[i] = h
        cols.append((f(x + e) - f(x - e))[free] / (2 * h))
    return np.array(cols).T


@pytest.mark.parametrize("kind", ["passive", "control"])
def test_transition_with_commands_against_central_differences(tbar, kind):
    # the analytic derivative of the Runge-Kutta map (linearize's A at every stage, the
    # commands' force derivative added), two held pieces (a delay), two steps each; measured
    # 7e-10 / 5e-10 relative
    _, _, ekf = tbar
    ekf = dataclasses.replace(ekf, strings=np.arange(4), gamma_ref=np.full(4, 10.0), kind=kind,
                              delay=0.002, substeps=2)
    x, rng = _moving_state(ekf, 3)
    u_prev, u = 5.0 * rng.standard_normal(4), 5.0 * rng.standard_normal(4)
    F, Fx = ekf.propagate(x, u_prev, u, tangent=True)
    np.testing.assert_array_equal(F, ekf.propagate(x, u_prev, u))
    fd = _central_differences(lambda v: ekf.propagate(v, u_prev, u), x, ekf.free)
    assert np.abs(Fx - fd).max() < 1e-8 * np.abs(fd).max()


def test_command_forces_are_the_simulators_and_their_derivative(tbar):
    # the filter's model of a command is the simulator's (tenscontrol.mechanics.actuation),
    # one string clipped at 0 and one at gamma_max
    from tenscontrol.simulation.actuation import Actuators

    s = tc.equilibrium(tc.catalog.tbar(), gamma_min=10.0).structure
    s = dataclasses.replace(s, strings=tuple(dataclasses.replace(m, gamma_max=50.0)
                                             for m in s.strings))
    ss = sensors(s, string_lengths=range(s.n_strings), std=1e-3)
    for kind in ("passive", "control"):
        ekf = dataclasses.replace(extended_kalman(ss, T, process_noise=1.0),
                                  strings=np.arange(4), gamma_ref=np.full(4, 10.0), kind=kind)
        x, _ = _moving_state(ekf, 4)
        q = x[:x.size // 2]
        u = np.array([-1e3, 3.0, 1e9, -2.0])
        f, dfdq = ekf.command_forces(q, u)
        ref, applied, _ = Actuators(s, np.arange(4), np.full(4, 10.0), kind).apply(q, u)
        assert applied[0] == 0.0 and applied[2] == s.string_gamma_max[2]
        np.testing.assert_allclose(f, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
        fd = _central_differences(lambda v: np.r_[ekf.command_forces(v, u)[0], v * 0], q,
                                  np.arange(q.size))
        assert np.abs(dfdq - fd).max() < 1e-7 * np.abs(fd).max()


def test_projection_jacobian_against_central_differences(tbar):
    # measured 3e-10 relative
    _, _, ekf = tbar
    x, _ = _moving_state(ekf, 5)
    fd = _central_differences(ekf.project, x, ekf.free)
    assert np.abs(ekf.projection_jacobian(x) - fd).max() < 1e-8 * np.abs(fd).max()


def test_prediction_keeps_the_covariance_on_the_tangent_space(tbar):
    s, _, ekf = tbar
    x, _ = _moving_state(ekf, 6)
    x_next, P = ekf.predict(x, np.eye(ekf.free.size))
    nq, f, nfix = x.size // 2, s.free_coordinates, s.fixed_coordinates.size
    J = constraint_jacobian(s, x_next[:nq])[nfix:][:, f]
    X = constraint_jacobian(s, x_next[nq:])[nfix:][:, f]       # d(J qd)/dq: J is linear in q
    # position and velocity constraints linearized at x_next: [J 0] and [X J] annihilate P
    C = np.block([[J, np.zeros_like(J)], [X, J]])
    assert np.abs(C @ P).max() < 1e-10 * np.abs(P).max()
    np.testing.assert_allclose(ekf.project(x_next), x_next, atol=1e-12)


def test_bad_arguments(tbar):
    s, ss, _ = tbar
    with pytest.raises(TypeError, match="sensors must be"):
        extended_kalman(tc.Selection(), T, process_noise=1.0)
    with pytest.raises(ValueError, match="noise std > 0"):
        extended_kalman(sensors(s, string_lengths=[0]), T, process_noise=1.0)
    with pytest.raises(ValueError, match="period must be a positive"):
        extended_kalman(ss, -T, process_noise=1.0)
    with pytest.raises(ValueError, match="process_noise must be a positive"):
        extended_kalman(ss, T, process_noise=0.0)
    with pytest.raises(ValueError, match="substeps must be an integer >= 1"):
        extended_kalman(ss, T, process_noise=1.0, substeps=0)
    ekf = extended_kalman(ss, T, process_noise=1.0)
    with pytest.raises(ValueError, match="delay must satisfy 0 <= delay < period"):
        dataclasses.replace(ekf, delay=T)
    with pytest.raises(ValueError, match="kind"):
        dataclasses.replace(ekf, kind="active")
    with pytest.raises(ValueError, match=r"Qd must be \(8, 8\)"):
        dataclasses.replace(ekf, Qd=np.eye(3))


class _HeldCommand(tc.Controller):
    """A continuous controller commanding the constant u: one period's hold (the base class
    gives a static law's initial state and state derivative)."""

    def __init__(self, strings, gamma_ref, kind, u):
        self.strings, self.gamma_ref, self.kind, self.u = strings, gamma_ref, kind, u

    def force_densities(self, t, q, qd, xc):
        return self.u


@pytest.mark.parametrize("kind", ["passive", "control"])
def test_prediction_is_the_simulators_on_a_damped_structure(tbar, kind):
    """Issue 30: the EKF predicts with the simulator's actuation law, damper switching
    included. The damped T-bar (c = 1 N s/m) moving (O(2 m/s)), string 1 commanded slack
    (its damper must go out), string 2 hard: one period of the EKF (20 RK4 steps) against
    simulate (rtol = atol = 1e-12). Measured (benchmarks/bench_ekf_prediction.py, seed 0):
    4e-15 m and 1.3e-14 m/s; before, with the EKF's own copy of the law (no damper
    switching), 8.8e-7 m and 3.6e-4 m/s."""
    s, ss, _ = tbar
    strings, gamma_ref = np.arange(4), np.full(4, 10.0)
    ekf = dataclasses.replace(extended_kalman(ss, T, process_noise=1.0), strings=strings,
                              gamma_ref=gamma_ref, kind=kind, substeps=20)
    x, _ = _moving_state(ekf, 0)
    u = np.array([3.0, -1e3, 40.0, -2.0])
    nq = x.size // 2
    # the premise: string 1's damper is switched off by the command (a force of the order of N)
    assert np.abs(ekf.command_forces(x[:nq], u, x[nq:])[0]
                  - ekf.command_forces(x[:nq], u)[0]).max() > 0.1
    traj = tc.simulate(s.with_nodes(x[:nq].reshape(-1, 3)), T, t_eval=[0.0, T], qd=x[nq:],
                       rtol=1e-12, atol=1e-12,
                       controller=_HeldCommand(strings, gamma_ref, kind, u))
    predicted = ekf.propagate(x, u, u)
    assert np.abs(predicted[:nq] - traj.nodes[-1].reshape(-1)).max() < 1e-12
    assert np.abs(predicted[nq:] - traj.velocities[-1].reshape(-1)).max() < 1e-11
