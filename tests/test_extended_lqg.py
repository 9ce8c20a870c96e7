"""The extended Kalman filter in the sampled closed loop (tenscontrol.estimation.extended_lqg):
ExtendedLQG against DiscreteLQG on the nonlinear T-bar."""

import dataclasses

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.mechanics.sensors import sensors

T = 0.005


@pytest.fixture(scope="module")
def tbar():
    s = tc.equilibrium(tc.catalog.tbar(damping=1.0), gamma_min=10.0).structure
    ss = (sensors(s, string_lengths=range(s.n_strings), std=1e-3, rate=200.0)
          + sensors(s, bar_rates=range(s.n_bars), std=1e-2, rate=200.0))
    model = tc.linearize(s)
    return (s, model, ss, tc.discrete_lqg(model, ss, T, process_noise=4.0).controller,
            tc.extended_lqg(model, ss, T, process_noise=4.0).controller)


@pytest.mark.parametrize("kind", ["passive", "control"])
def test_first_command_is_the_discrete_lqgs(tbar, kind):
    # at the operating point the EKF's gain from P0 (the linear filter's steady covariance)
    # is the linear filter's and Kx = Kz left_inverse acts on basis z as Kz: the same readings
    # (same seed) give the same first command. "control": load cells on the commanded strings
    # (read at the held force densities) and a 1 ms delay
    s, _, ss, lin, ext = tbar
    if kind == "control":
        ss = (sensors(s, string_tensions=range(s.n_strings), std=1e-2, rate=200.0)
              + sensors(s, bar_rates=range(s.n_bars), std=1e-2, rate=200.0))
        model = tc.linearize(s, kind="control")
        lin, ext = (design(model, ss, T, process_noise=4.0, delay=0.001).controller
                    for design in (tc.discrete_lqg, tc.extended_lqg))
        assert ext.kalman.held.tolist() == [0, 1, 2, 3]
    nq = 3 * s.n_nodes
    q = s.nodes.reshape(-1).copy()
    q[s.free_coordinates] += 1e-4 * np.array([1.0, -2.0, 0.5, 1.0])
    qd = np.zeros(nq)
    u_lin, _ = lin.update(0, 0.0, q, qd, lin.initial_state())
    u_ext, xk = ext.update(0, 0.0, q, qd, ext.initial_state())
    np.testing.assert_allclose(u_ext, u_lin, rtol=1e-8, atol=1e-10 * np.abs(u_lin).max())
    # the recorded state: [x_1|0; diag P_1|0; u_0], the covariance kept by the controller
    assert xk.shape == (ext.n_states,) == (2 * nq + 8 + 4,)
    x, variances, u_prev = ext.unpack(xk)
    np.testing.assert_array_equal(u_prev, u_ext)
    np.testing.assert_array_equal(variances, np.diag(ext.covariance()))
    np.testing.assert_array_equal(ext.pack(x, variances, u_prev), xk)


def _by_hand(s, ext, run):
    """The filter run by hand with its full covariance (the controller state before issue
    30) on the recorded run's sampled states: (x_k|k-1 (ns, 2nq), diag P_k|k-1 (ns, 2nf))."""
    f, nq = ext.kalman, 3 * s.n_nodes
    x = np.concatenate([ext.q_ref, np.zeros(nq)])
    P, u_prev, xs, vs = ext.P0, np.zeros(ext.strings.size), [], []
    for k, Y in enumerate(np.hstack([run.nodes.reshape(run.t.size, -1),
                                     run.velocities.reshape(run.t.size, -1)])):
        xs.append(x)
        vs.append(np.diag(P))
        y = f.sensors.noisy(f.outputs(Y), np.random.default_rng([ext.seed, k]))
        xc, Pc = f.correct(x, P, y)
        u = -ext.Kx @ (xc - np.concatenate([ext.q_ref, np.zeros(nq)])) - ext.Ku @ u_prev
        x, P = f.predict(xc, Pc, u_prev, u)
        u_prev = u
    return np.array(xs), np.array(vs)


def test_the_record_holds_the_variances_and_runs_repeat(tbar):
    # issue 30, item 4: the covariance lives in the controller between samples; the record
    # holds x_k|k-1 and diag P_k|k-1, equal to a filter run by hand with the full covariance
    s, _, _, _, ext = tbar
    nq, free = 3 * s.n_nodes, s.free_coordinates
    qd0 = np.zeros(nq)
    qd0[free] = 0.3 * np.array([1.0, -1.0, 1.0, 1.0])
    t = np.arange(40) * T                   # output at the samples: the states the loop read
    runs = [tc.simulate(s, 0.2, qd=qd0, t_eval=t, controller=ext) for _ in range(2)]
    X = runs[0].control.sample_states
    assert X.shape == (40, 2 * nq + 2 * free.size + 4)
    np.testing.assert_array_equal(X, runs[1].control.sample_states)   # repeatable
    np.testing.assert_array_equal(runs[0].nodes, runs[1].nodes)
    xs, vs = _by_hand(s, ext, runs[0])
    np.testing.assert_allclose(ext.estimates(X), xs, rtol=0, atol=1e-9 * np.abs(xs).max())
    np.testing.assert_allclose(ext.variances(X), vs, rtol=1e-8, atol=0)


def test_samples_out_of_order_are_refused(tbar):
    s, _, _, _, ext = tbar
    q, qd = s.nodes.reshape(-1), np.zeros(3 * s.n_nodes)
    x0 = ext.initial_state()
    _, x1 = ext.update(0, 0.0, q, qd, x0)
    _, x2 = ext.update(1, T, q, qd, x1)
    with pytest.raises(ValueError, match="sample 1 does not follow"):
        ext.update(1, T, q, qd, x1)                 # the runtime is at sample 2 now
    with pytest.raises(ValueError, match="call initial_state"):
        ext.update(5, 5 * T, q, qd, x2)
    u_again, x1_again = ext.update(0, 0.0, q, qd, ext.initial_state())
    np.testing.assert_array_equal(x1_again, x1)     # a new run starts from P0


def _run(s, controller, a, t_final):
    """The T-bar kicked (free velocities a * [1, -1, 1, 1] m/s) under `controller`: the RMS
    error of the predicted free positions over the run, relative to the bar length."""
    nq, free = 3 * s.n_nodes, s.free_coordinates
    qd0 = np.zeros(nq)
    qd0[free] = a * np.array([1.0, -1.0, 1.0, 1.0])
    t = np.arange(0.0, t_final - T / 2, T)
    run = tc.simulate(s, t_final, qd=qd0, t_eval=t, controller=controller)
    X = run.control.sample_states
    if isinstance(controller, tc.estimation.ExtendedLQG):
        est = controller.estimates(X)[:, :nq]
    else:
        r = controller.kalman.Phi.shape[0]
        est = X[:, :r] @ controller.kalman.basis[:nq, :r].T + s.nodes.reshape(-1)
    Q = run.nodes.reshape(t.size, -1)
    err = np.sqrt(np.mean((est - Q)[:, free] ** 2)) / s.bar_lengths.max()
    return err, np.abs(Q - s.nodes.reshape(-1))[:, free].max()


def test_small_motion_both_filters_agree(tbar):
    # a kick of 0.03 m/s (peak 0.2 % of the bar length): measured 1.044e-4 (linear) and
    # 1.046e-4 (EKF) over 0.5 s, peaks equal to 4 digits
    s, _, _, lin, ext = tbar
    e_lin, peak_lin = _run(s, lin, 0.03, 0.5)
    e_ext, peak_ext = _run(s, ext, 0.03, 0.5)
    assert e_ext == pytest.approx(e_lin, rel=0.02)
    assert peak_ext == pytest.approx(peak_lin, rel=0.01)


def test_large_motion_the_ekf_keeps_its_estimate(tbar):
    # a kick of 3 m/s (peak 25 % of the bar length): over 0.5 s measured 2.0e-2 (linear) and
    # 2.4e-4 (EKF) relative to the bar length (over 2 s: benchmarks/bench_ekf.py)
    s, _, _, lin, ext = tbar
    e_lin, _ = _run(s, lin, 3.0, 0.5)
    e_ext, peak = _run(s, ext, 3.0, 0.5)
    assert peak > 0.2 * s.bar_lengths.max()
    assert e_lin > 0.01
    assert e_ext < 0.05 * e_lin


def test_verify_runs_the_extended_controller(tbar):
    s, _, ss, _, ext = tbar
    noiseless = dataclasses.replace(ext, noise=False)
    loads = tc.doublet(s, tc.Selection(2, "x"), amplitude=5.0, half_period=0.05)
    report = tc.verify(s, noiseless, loads, 0.2, t_eval=np.linspace(0.0, 0.2, 41))
    # the linear prediction runs the same filter on the linear plant: near the operating
    # point both loops follow each other closely
    assert report.closed.peak > 0
    assert report.linear_error < 0.05
    assert report.closed_loop.control.sample_times.size == 40


def test_bad_arguments(tbar):
    s, model, ss, _, ext = tbar
    with pytest.raises(ValueError, match="substeps must be an integer >= 1"):
        tc.extended_lqg(model, ss, T, process_noise=4.0, substeps=0)
    with pytest.warns(UserWarning, match="not in equilibrium"):   # the bars' own law
        compressible = tc.linearize(s, bars="compressible")
    with pytest.raises(ValueError, match="rigid-bar LinearModel"):
        tc.extended_lqg(compressible, ss, T, process_noise=4.0)
    with pytest.raises(ValueError, match="delay must satisfy 0 <= delay < period"):
        tc.extended_lqg(model, ss, T, process_noise=4.0, delay=T)
    with pytest.raises(ValueError, match="kalman must have this controller's period"):
        dataclasses.replace(ext, kalman=dataclasses.replace(ext.kalman, delay=0.001))
