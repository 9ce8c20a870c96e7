"""Kalman filters, LQG (continuous and sampled), observability and sensor placement
(tenscontrol.estimation.lqg, .observability, tenscontrol.control.estimators)."""

import control as ct
import numpy as np
import pytest
import scipy.linalg

import tenscontrol as tc
from tenscontrol.estimation import lqg as est
from tenscontrol.estimation.observability import observability, place_sensors
from tenscontrol.mechanics.sensors import sensors


@pytest.fixture(scope="module")
def tbar():
    s = tc.equilibrium(tc.catalog.tbar(damping=1.0), gamma_min=10.0).structure
    return s, tc.linearize(s)


def lengths_and_rates(s, std=1e-3):
    return (sensors(s, string_lengths=range(s.n_strings), std=std, rate=200.0)
            + sensors(s, bar_rates=range(s.n_bars), std=1e-2, rate=200.0))


def test_lqg_h2_separation_formula_matches_the_closed_loop_norm(tbar):
    s, model = tbar
    d = est.lqg(model, lengths_and_rates(s), process_noise=4.0)
    # trace(S E W E^T) + trace(P K^T R K) against h2_norm of the explicit loop
    assert d.h2 == pytest.approx(est.loop_h2_direct(d), rel=1e-8)
    assert np.linalg.eigvals(est.closed_loop(d).A).real.max() < 0
    # the Kalman gain solves the filter Riccati equation (python-control's lqe)
    A, _, E = est.reduced_model(d.lqr)
    res = A @ d.P + d.P @ A.T + E @ d.W @ E.T - d.P @ d.Cr.T @ np.linalg.solve(d.V, d.Cr @ d.P)
    assert np.abs(res).max() < 1e-9 * np.abs(E @ d.W @ E.T).max()
    np.testing.assert_allclose(d.L, d.P @ d.Cr.T @ np.linalg.inv(d.V), rtol=1e-9, atol=0)


def test_lqg_closes_the_nonlinear_loop_as_the_linear_prediction(tbar):
    s, model = tbar
    d = est.lqg(model, lengths_and_rates(s), process_noise=4.0)
    assert d.controller.measurement(s.nodes.reshape(-1), None) == pytest.approx(0.0, abs=1e-14)
    loads = tc.doublet(s, tc.Selection(2, "x"), amplitude=20.0, half_period=0.1)
    r = tc.verify(s, d.controller, loads, 2.0, outputs=tc.Selection(nodes=[2, 3], axes="xz"),
                  t_eval=np.linspace(0.0, 2.0, 201))
    assert r.closed.peak < r.open.peak
    assert r.linear_error < 0.05     # the sensors' C in verify's linear prediction


def test_discrete_model_is_the_zero_order_hold_and_splits_with_a_delay(tbar):
    s, model = tbar
    ss = lengths_and_rates(s)
    T = 0.005
    dl = est.discrete_lqg(model, ss, T, process_noise=4.0).controller
    A, B, _ = est.reduced_model(est.lqr(model))
    zoh = ct.c2d(ct.ss(A, B, np.eye(A.shape[0]), 0), T, method="zoh")
    np.testing.assert_allclose(dl.kalman.Phi, zoh.A, atol=1e-12)
    np.testing.assert_allclose(dl.kalman.Gamma0, zoh.B, atol=1e-12 * np.abs(zoh.B).max())
    assert np.all(dl.kalman.Gamma1 == 0)
    late = est.discrete_lqg(model, ss, T, process_noise=4.0, delay=0.4 * T).controller
    np.testing.assert_allclose(late.kalman.Phi, zoh.A, atol=1e-12)
    np.testing.assert_allclose(late.kalman.Gamma0 + late.kalman.Gamma1, zoh.B,
                               atol=1e-12 * np.abs(zoh.B).max())
    # the a-priori covariance solves the DARE, M is the current-estimate gain
    k = dl.kalman
    V = np.diag(ss.std[ss.signal_sensor] ** 2)
    Qd = k.P - k.Phi @ (k.P - k.P @ k.Cr.T @ np.linalg.solve(k.Cr @ k.P @ k.Cr.T + V,
                                                             k.Cr @ k.P)) @ k.Phi.T
    assert np.linalg.eigvalsh(0.5 * (Qd + Qd.T)).min() > -1e-9 * np.abs(k.P).max()
    # the augmented loop of a delayed LQG is stable
    n, nu = k.Phi.shape[0], k.Gamma0.shape[1]
    Pa = np.block([[late.kalman.Phi, late.kalman.Gamma1], [np.zeros((nu, n + nu))]])
    Ga = np.vstack([late.kalman.Gamma0, np.eye(nu)])
    assert np.abs(np.linalg.eigvals(Pa - Ga @ late.K)).max() < 1.0


def test_discrete_filter_converges_on_the_linear_model(tbar):
    s, model = tbar
    ss = lengths_and_rates(s)
    dl = est.discrete_lqg(model, ss, 0.005, process_noise=4.0).controller
    k = dl.kalman
    rng = np.random.default_rng(1)
    z = 1e-3 * rng.standard_normal(k.Phi.shape[0])
    Y, Z = [], []
    for _ in range(400):                # noiseless, open loop: the error dies out
        Z.append(z)
        Y.append(k.Cr @ z)
        z = k.Phi @ z
    est_z = k.filter(np.array(Y))
    err = np.abs(est_z - np.array(Z)).max(axis=1)
    assert err[-1] < 1e-6 * err[0]


def test_sampled_controller_protocol(tbar):
    s, model = tbar
    ss = lengths_and_rates(s)
    dl = est.discrete_lqg(model, ss, 0.005, process_noise=4.0, delay=0.001, seed=7).controller
    x0 = dl.initial_state()
    assert x0.shape == (dl.n_states,) and dl.n_states == dl.K.shape[1]
    q = s.nodes.reshape(-1) + 1e-3 * np.eye(12)[8]
    qd = np.zeros(12)
    u1, x1 = dl.update(3, 0.015, q, qd, x0)
    u2, x2 = dl.update(3, 0.015, q, qd, x0)
    np.testing.assert_array_equal(u1, u2)             # the reading of sample k is seeded by k
    u3, _ = dl.update(4, 0.020, q, qd, x0)
    assert not np.array_equal(u1, u3)
    assert u1.shape == (dl.strings.size,) and x1.shape == x0.shape
    np.testing.assert_array_equal(x1[-u1.size:], u1)   # u_k is kept for the delayed hold
    quiet = est.discrete_lqg(model, ss, 0.005, process_noise=4.0, noise=False).controller
    u, _ = quiet.update(0, 0.0, s.nodes.reshape(-1), qd, quiet.initial_state())
    assert np.abs(u).max() == 0.0
    assert dl.kind == "passive" and dl.period == 0.005 and dl.delay == 0.001


def test_observability_rank_and_gramian(tbar):
    s, model = tbar
    full = observability(model, lengths_and_rates(s))
    assert full.observable and full.min_eigenvalue > 0
    # string 0 joins the two pinned nodes: its length never changes
    blind = observability(model, sensors(s, string_lengths=[0], std=1e-3))
    assert blind.rank == 0 and blind.trace < 1e-12 * full.trace
    one = observability(model, sensors(s, string_lengths=[1], std=1e-3))
    assert 0 < one.rank <= one.order
    # the Gramian of a set is the sum of its sensors' (linear in C^T C)
    a = observability(model, sensors(s, string_lengths=[1, 2], std=1e-3))
    b = observability(model, sensors(s, string_lengths=[2], std=1e-3))
    np.testing.assert_allclose(a.gramian, one.gramian + b.gramian,
                               atol=1e-9 * np.abs(a.gramian).max())


def test_placement_by_gramian_and_h2(tbar):
    s, model = tbar
    cand = lengths_and_rates(s)
    tr = place_sensors(model, cand, 2, criterion="trace")
    single = [observability(model, cand.select([i])).trace for i in range(cand.n_sensors)]
    assert set(tr.indices) == set(np.argsort(single)[-2:].tolist())   # trace is modular
    ld = place_sensors(model, cand, 3, criterion="logdet")
    assert 0 not in ld.indices and ld.figure <= ld.full + 1e-9
    h2 = place_sensors(model, cand, 3, process_noise=4.0)
    assert h2.figure == pytest.approx(est.lqg(model, h2.sensors, process_noise=4.0).h2,
                                      rel=1e-9)
    assert h2.full <= h2.figure and list(h2.history) == sorted(h2.history, reverse=True)
    every = place_sensors(model, cand, cand.n_sensors, process_noise=4.0)
    assert every.figure == pytest.approx(every.full, rel=1e-12)


def test_bad_arguments(tbar):
    s, model = tbar
    exact = sensors(s, string_lengths=[1, 2])
    with pytest.raises(ValueError, match="noise std > 0"):
        est.lqg(model, exact, process_noise=1.0)
    ss = sensors(s, string_lengths=[1, 2], std=1e-3, rate=50.0)
    with pytest.raises(ValueError, match="slower than the controller"):
        est.discrete_lqg(model, ss, 0.005, process_noise=1.0)
    with pytest.raises(ValueError, match="delay must satisfy 0 <= delay < period"):
        est.discrete_lqg(model, ss, 0.05, process_noise=1.0, delay=0.05)
    with pytest.raises(TypeError, match="sensors must be a tenscontrol SensorSet"):
        est.lqg(model, tc.Selection(), process_noise=1.0)
    with pytest.raises(ValueError, match="needs process_noise"):
        place_sensors(model, ss, 1)
    with pytest.raises(ValueError, match="criterion"):
        place_sensors(model, ss, 1, criterion="best")
    with pytest.raises(ValueError, match="k"):
        place_sensors(model, ss, 3, criterion="trace")


def test_sampled_protocol_with_delay_predicts_the_exact_hold(tbar):
    """Run DiscreteLQG.update in a zero-order-hold loop on the reduced linear model, integrated
    exactly between t_k, t_k + delay and t_k+1 (u_k-1 held, then u_k): started from the true
    state, the noiseless filter's prediction z_k+1|k is the true z_k+1 (to the measurement's
    nonlinearity at a 1e-7 m amplitude)."""
    s, model = tbar
    T, delay = 0.005, 0.002
    dl = est.discrete_lqg(model, lengths_and_rates(s), T, process_noise=4.0, delay=delay,
                          noise=False, effort=1e-3).controller
    A, B, _ = est.reduced_model(est.lqr(model, effort=1e-3))
    n, nu = B.shape

    def flow(z, u, t):
        F = scipy.linalg.expm(np.block([[A, B], [np.zeros((nu, n + nu))]]) * t)
        return F[:n, :n] @ z + F[:n, n:] @ u

    basis, q0 = dl.kalman.basis, s.nodes.reshape(-1)
    nq = q0.size
    z = 1e-7 * np.linalg.lstsq(basis[:nq], np.eye(nq)[8], rcond=None)[0]
    xk = np.concatenate([z, np.zeros(nu)])
    u_prev, gaps, sizes = np.zeros(nu), [], []
    for k in range(400):
        x = basis @ z
        u, xk = dl.update(k, k * T, q0 + x[:nq], x[nq:], xk)
        z = flow(flow(z, u_prev, delay), u, T - delay)
        gaps.append(np.abs(xk[:n] - z).max())
        sizes.append(np.abs(z).max())
        u_prev = u
    assert max(gaps) < 1e-5 * max(sizes)
    assert max(sizes[-40:]) < 0.1 * max(sizes)    # and the loop settles (2 s)


@pytest.mark.slow
def test_ball_filter_and_placement():
    """The ball of benchmarks/bench_estimation.py: 200 Hz string-length readings with noise 1 %
    of the largest excursion leave an RMS position error of 1.5 % of the motion (measured);
    16 sensors placed by H2 keep 99 % of the full set's loop H2 (measured 99.2 %)."""
    s = tc.equilibrium(tc.catalog.ball(damping=1.0), gamma_min=40.0).structure
    model = tc.linearize(s)
    T = 0.005
    t = np.arange(0.0, 2.0 + T / 2, T)
    traj = tc.simulate(s, 2.0, loads=tc.catalog.ball_load(30.0), t_eval=t)
    Q, V = traj.nodes.reshape(t.size, -1), traj.velocities.reshape(t.size, -1)
    excursion = np.abs(sensors(s, string_lengths=range(32)).measure(traj)
                       - s.string_lengths).max()
    ss = sensors(s, string_lengths=range(32), std=0.01 * excursion, rate=200.0)
    k = est.discrete_lqg(model, ss, T, process_noise=100.0).controller.kalman
    Y = np.array([k.measurement.read(Q[i], V[i], np.random.default_rng([0, i]))
                  for i in range(t.size)])
    free = s.free_coordinates
    err = (k.states(k.filter(Y))[:, :Q.shape[1]] - (Q - s.nodes.reshape(-1)))[:, free]
    motion = (Q - s.nodes.reshape(-1))[:, free]
    assert np.sqrt(np.mean(err**2)) < 0.05 * np.sqrt(np.mean(motion**2))
    wide = sensors(s, string_lengths=range(32), std=0.01 * s.string_lengths, rate=200.0)
    p = place_sensors(model, wide, 16, process_noise=100.0)
    assert p.full / p.figure > 0.9


def test_lqg_controller_mat_files_refused_with_a_message(tbar, tmp_path):
    # (save_controller writes it: tests/test_controller_files.py)
    s, model = tbar
    d = est.lqg(model, lengths_and_rates(s), process_noise=4.0)
    with pytest.raises(TypeError, match="save_mat: the controller measures"):
        tc.save_mat(d.controller, tmp_path / "lqg.mat")


def test_sampled_lqg_runs_in_the_nonlinear_sampled_loop(tbar):
    # the discrete LQG (noisy string lengths and bar rates at 200 Hz, 1 ms computation delay)
    # closed on the nonlinear simulator: its command is held between samples and the loop damps
    # the doublet about as the continuous LQR does
    s, model = tbar
    dl = est.discrete_lqg(model, lengths_and_rates(s), 0.005, process_noise=4.0, delay=0.001,
                          effort=1e-2).controller
    assert isinstance(dl, tc.SampledController)
    loads = tc.doublet(s, tc.Selection(2, "x"), amplitude=20.0, half_period=0.1)
    out, t = tc.Selection(nodes=[2, 3], axes="xz"), np.linspace(0.0, 2.0, 201)
    r = tc.verify(s, dl, loads, 2.0, outputs=out, t_eval=t)
    full = tc.verify(s, tc.lqr(model, effort=1e-2).controller, loads, 2.0, outputs=out, t_eval=t)
    # measured: open 0.0142 m, full-state LQR 0.0098 m, sampled LQG 0.0107 m
    assert r.closed.peak < 0.85 * r.open.peak
    assert r.closed.peak < 1.2 * full.closed.peak
    record = r.closed_loop.control
    assert isinstance(record, tc.simulation.SampledControlRecord)
    # the samples are 5 ms apart and every command is applied from t_k + delay
    np.testing.assert_allclose(np.diff(record.sample_times), 0.005, rtol=1e-9)


def test_load_states_extend_the_filter_and_feed_the_load_forward(tbar):
    s, model = tbar
    ss = lengths_and_rates(s)
    plain = est.discrete_lqg(model, ss, 0.005, process_noise=4.0, delay=0.001).controller
    dl = est.discrete_lqg(model, ss, 0.005, process_noise=4.0, delay=0.001,
                          load_drift=10.0).controller
    n, nf = plain.kalman.Phi.shape[0], dl.kalman.Phi.shape[0] - plain.kalman.Phi.shape[0]
    assert nf > 0
    # the structure's hold model is unchanged; the load enters it and is constant over a
    # period without noise; the state-feedback part of the gain is the same, the load's is not 0
    np.testing.assert_allclose(dl.kalman.Phi[:n, :n], plain.kalman.Phi, atol=1e-12)
    np.testing.assert_allclose(dl.kalman.Phi[n:, n:], np.eye(nf), atol=1e-12)
    assert np.abs(dl.kalman.Phi[:n, n:]).max() > 0
    assert np.abs(dl.K[:, n:n + nf]).max() > 1e-3 * np.abs(plain.K).max()
    np.testing.assert_allclose(np.delete(dl.K, np.s_[n:n + nf], axis=1), plain.K, rtol=1e-9)
    assert np.all(dl.kalman.basis[:, n:] == 0) and dl.initial_state().size == dl.K.shape[1]
    # strings 0 and 1 see one load direction at rest (string 0's length does not change to
    # first order: its row on the reduced coordinates is round-off, 1e-18): only that one
    # becomes a state (more would be unobservable constant modes: dlqe found no stabilizing
    # solution), and string 0 alone sees none
    # (string 0 alone observes none of the elastic modes: a warning gives the rank)
    one = est.discrete_lqg(model, sensors(s, string_lengths=[0, 1], std=1e-3, rate=200.0),
                           0.005, process_noise=4.0, load_drift=10.0).controller
    with pytest.warns(UserWarning, match=r"discrete_lqg: the sensors observe 0 of the 4 modes"):
        none = est.discrete_lqg(model, sensors(s, string_lengths=[0], std=1e-3, rate=200.0),
                                0.005, process_noise=4.0, load_drift=10.0).controller
    assert none.kalman.Phi.shape[0] == n
    k = one.kalman
    assert k.Phi.shape[0] == n + 1 < n + nf
    error = k.Phi @ (np.eye(n + 1) - k.M @ k.Cr)
    assert np.abs(np.linalg.eigvals(error)).max() < 1.0
    with pytest.raises(ValueError, match="load_drift"):
        est.discrete_lqg(model, ss, 0.005, process_noise=4.0, load_drift=-1.0)


@pytest.mark.parametrize("effort", [1.0, 1e-2])
def test_lqg_is_below_the_open_loop_in_its_own_cost(tbar, effort):
    # the H2 norm of the LQG loop from the white forces and sensor noise it was designed for
    # is below the open loop's (u = 0, the sensors unused) from the same forces: the design is
    # right on its own model (on the ball, 0.156 against 0.348 at W = 1 N^2 s: what makes it
    # worse than open loop there is a load the white forces do not model)
    s, model = tbar
    d = est.lqg(model, lengths_and_rates(s), process_noise=4.0, effort=effort)
    A, _, E = est.reduced_model(d.lqr)
    basis = d.lqr.minimal.basis
    gramian = scipy.linalg.solve_continuous_lyapunov(A.T, -basis.T @ d.lqr.Q @ basis)
    open_h2 = np.sqrt(np.trace(gramian @ E @ d.W @ E.T))
    assert d.h2 < open_h2


def _sampled_loop_step(dl, Phi_d, x, d):
    """One period of the linear sampled loop: plant z, the filter's prediction, u_prev."""
    k = dl.kalman
    n, r, nu = Phi_d.shape[0], k.Phi.shape[0], k.Gamma0.shape[1]
    z, zp, u_prev = x[:n], x[n:n + r], x[n + r:]
    zf = k.correct(zp, k.Cr[:, :n] @ z)            # the sensors see the structure only
    u = -dl.K @ np.concatenate([zf, u_prev])
    z_next = k.Phi[:n, :n] @ z + k.Gamma0[:n] @ u + k.Gamma1[:n] @ u_prev + Phi_d @ d
    return np.concatenate([z_next, k.predict(zf, u, u_prev), u]), u


@pytest.mark.parametrize("effort", [1.0, 1e-2])
def test_sampled_lqg_under_a_constant_load_settles_at_the_least_cost_equilibrium(tbar, effort):
    # The LQG with load states, closed on the linear sampled plant under a constant nodal load
    # without noise, settles where z^T Q z + u^T R u is least among the plant's equilibria
    # under that load, so never above the open loop's. Before the load was fed forward (zero
    # gain on the estimated load) it settled 0.4 % (effort 1) and 19 % (effort 0.01) above
    # that least cost (measured).
    s, model = tbar
    T = 0.005
    dl = est.discrete_lqg(model, lengths_and_rates(s), T, process_noise=4.0, delay=0.001,
                          load_drift=10.0, effort=effort).controller
    design = tc.lqr(model, effort=effort)
    A, B, E = est.reduced_model(design)
    n, nu = B.shape
    F = scipy.linalg.expm(np.block([[A, E], [np.zeros((E.shape[1], n + E.shape[1]))]]) * T)
    Phi_d = F[:n, n:]                                # a constant load held over one period
    d = np.zeros(E.shape[1])
    d[s.free_coordinates[:2]] = [3.0, -2.0]
    size = n + dl.kalman.Phi.shape[0] + nu
    step = np.array([_sampled_loop_step(dl, Phi_d, e, 0 * d)[0] for e in np.eye(size)]).T
    assert np.abs(np.linalg.eigvals(step)).max() < 1.0
    x = np.linalg.solve(np.eye(size) - step, _sampled_loop_step(dl, Phi_d, np.zeros(size), d)[0])
    u = _sampled_loop_step(dl, Phi_d, x, d)[1]
    Qr, R = design.minimal.basis.T @ design.Q @ design.minimal.basis, design.R
    cost = x[:n] @ Qr @ x[:n] + u @ R @ u
    # the least cost over the equilibria z = Phi z + (Gamma0 + Gamma1) u + Phi_d d
    k = dl.kalman
    A0 = np.eye(n) - k.Phi[:n, :n]
    H, z0 = np.linalg.solve(A0, k.Gamma0[:n] + k.Gamma1[:n]), np.linalg.solve(A0, Phi_d @ d)
    u_opt = -np.linalg.solve(R + H.T @ Qr @ H, H.T @ Qr @ z0)
    z_opt = z0 + H @ u_opt
    least = z_opt @ Qr @ z_opt + u_opt @ R @ u_opt
    assert cost == pytest.approx(least, rel=1e-8)
    assert cost < z0 @ Qr @ z0


def test_ball_load_states_help_at_one_percent_of_length():
    """The ball of benchmarks/bench_estimation.py, 32 string lengths read at 200 Hz with noise
    1 % of each string's length (std ~6 mm against a 3.6 mm largest excursion): the filter of
    white forces does no better than estimating zero motion (measured 1.005 of the RMS motion,
    W = 0.01 N^2 s); with the load as random-walk states (10 N^2/s) 0.41 (measured)."""
    s = tc.equilibrium(tc.catalog.ball(damping=1.0), gamma_min=40.0).structure
    model = tc.linearize(s)
    T = 0.005
    t = np.arange(0.0, 5.0 + T / 2, T)
    traj = tc.simulate(s, 5.0, loads=tc.catalog.ball_load(30.0), t_eval=t)
    Q, V = traj.nodes.reshape(t.size, -1), traj.velocities.reshape(t.size, -1)
    ss = sensors(s, string_lengths=range(32), std=0.01 * s.string_lengths, rate=200.0)
    free = s.free_coordinates
    motion = np.sqrt(np.mean((Q - s.nodes.reshape(-1))[:, free] ** 2))
    ratios = []
    for drift in (None, 10.0):
        k = est.discrete_lqg(model, ss, T, process_noise=0.01, load_drift=drift).controller.kalman
        Y = np.array([k.measurement.read(Q[i], V[i], np.random.default_rng([0, i]))
                      for i in range(t.size)])
        err = (k.states(k.filter(Y))[:, :Q.shape[1]] - (Q - s.nodes.reshape(-1)))[:, free]
        ratios.append(np.sqrt(np.mean(err**2)) / motion)
    assert ratios[0] > 0.9
    assert ratios[1] < 0.5


@pytest.mark.parametrize("cost", ["exact", "rectangle"])
@pytest.mark.parametrize("delay", [0.0, 0.002])
def test_discrete_lqg_gain_is_dlqrs_on_the_same_sampled_cost(tbar, cost, delay):
    # the LQR part of the sampled LQG and dlqr minimize the same sampled-data cost on the same
    # ZOH model (dlqr assembles it through ZOHModel.augmented and sampled_weights): their
    # gains on [z; u_prev] agree; at 0.2 s the exact and rectangle gains differ (dlqr's 18 %
    # at 0.5 s on the T-bar, benchmarks/bench_dlqr_cost.py), so the cost is not ignored
    s, model = tbar
    T = 0.2
    lqg = est.discrete_lqg(model, lengths_and_rates(s), T, process_noise=4.0, delay=delay,
                           cost=cost).controller
    Ka = tc.dlqr(model, T, delay=delay, cost=cost).K_reduced
    r = est.lqr(model).minimal.order
    tol = 1e-9 * np.abs(Ka).max()
    np.testing.assert_allclose(lqg.K[:, :r], Ka[:, :r], rtol=1e-7, atol=tol)
    if delay:
        np.testing.assert_allclose(lqg.K[:, -(Ka.shape[1] - r):], Ka[:, r:], rtol=1e-7, atol=tol)
    other = est.discrete_lqg(model, lengths_and_rates(s), T, process_noise=4.0, delay=delay,
                             cost="rectangle" if cost == "exact" else "exact").controller
    assert np.abs(other.K[:, :r] - lqg.K[:, :r]).max() > 1e-3 * np.abs(lqg.K).max()


def test_discrete_lqg_refuses_an_unknown_cost(tbar):
    s, model = tbar
    with pytest.raises(ValueError, match=r"discrete_lqg: cost must be 'exact'.*got 'trapezoid'"):
        est.discrete_lqg(model, lengths_and_rates(s), 0.005, process_noise=4.0, cost="trapezoid")


def test_discrete_lqg_says_when_scipy_solved_the_filter_riccati_equation(tbar, monkeypatch):
    s, model = tbar
    ss = lengths_and_rates(s)
    plain = est.discrete_lqg(model, ss, 0.005, process_noise=4.0)
    assert plain.fallbacks == () and "refused" not in plain.summary()
    dlqe = ct.dlqe

    def refusing(*args, method=None):
        # slycot's sg02ad as it refuses a reordered Schur form (the 2 x 4-prism tower)
        if method is None:
            raise ArithmeticError("The reordering of the generalized Schur form failed")
        return dlqe(*args, method=method)

    monkeypatch.setattr(est.ct, "dlqe", refusing)
    fallback = est.discrete_lqg(model, ss, 0.005, process_noise=4.0)
    assert fallback.fallbacks == ("slycot (filter Riccati): The reordering of the generalized "
                                  "Schur form failed",)
    assert "refused" in fallback.summary() and "slycot (filter Riccati)" in fallback.summary()
    # SciPy's solution is the same filter (measured 1e-12 relative)
    np.testing.assert_allclose(fallback.L, plain.L, rtol=1e-8, atol=1e-10 * np.abs(plain.L).max())
