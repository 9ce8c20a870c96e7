"""Sampled-data closed loops: the held command in simulate(), ZOH models, discretize, dlqr."""

import control as ct
import numpy as np
import pytest
import scipy.integrate

import tenscontrol as tc
from tenscontrol.control.sampled import check_timing


@pytest.fixture(scope="module")
def tbar():
    """The README's T-bar, its passive model and LQR design (effort 1e-2)."""
    s = tc.equilibrium(tc.catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
    model = tc.linearize(s, kind="passive", outputs=tc.Selection(nodes=[2, 3], axes="xz"))
    return s, model, tc.lqr(model, effort=1e-2)


def _step_load(s, amplitude):
    f = np.zeros((s.n_nodes, 3))
    f[2, 2] = amplitude
    return f


def test_tiny_period_converges_to_continuous_loop(tbar):
    # the hold's error is first order in the period: halving it halves the gap
    s, _, design = tbar
    t = np.linspace(0.0, 0.5, 51)
    opts = dict(loads=_step_load(s, 10.0), t_eval=t, max_step=0.01)
    cont = tc.simulate(s, 0.5, controller=design.controller, **opts)
    peak = np.abs(cont.nodes - s.nodes).max()
    gaps = [np.abs(tc.simulate(s, 0.5, controller=tc.discretize(design.controller, T), **opts)
                   .nodes - cont.nodes).max() for T in (1e-3, 5e-4)]
    assert gaps[1] < 2e-3 * peak
    assert 1.6 < gaps[0] / gaps[1] < 2.4


@pytest.mark.parametrize("bars", ["rigid", "compressible"])
def test_held_command_is_piecewise_constant(tbar, bars):
    s, _, design = tbar
    T, delay = 0.02, 0.005
    run = tc.simulate(s, 0.2, loads=_step_load(s, 5.0), bars=bars,
                      controller=tc.discretize(design.controller, T, delay))
    c = run.control
    assert isinstance(c, tc.simulation.SampledControlRecord)
    np.testing.assert_allclose(c.sample_times, T * np.arange(10), rtol=0, atol=1e-15)
    switches = c.sample_times + delay
    # every switching instant is a step boundary of the recorded trajectory
    for ts in switches[switches < 0.2]:
        assert np.min(np.abs(c.t - ts)) < 1e-14
    # between switches u is exactly the held sample command (0 before the first)
    acting = np.searchsorted(switches, c.t + 1e-14, side="right") - 1
    expected = np.where(acting[:, None] >= 0, c.sample_u[np.maximum(acting, 0)], 0.0)
    np.testing.assert_array_equal(c.u, expected)
    assert np.all(c.u[c.t < delay - 1e-14] == 0)
    assert np.any(c.sample_u[1] != 0)
    # the command is the law at the sampled state
    q1 = run.nodes[np.argmin(np.abs(c.t - T))].reshape(-1)
    qd1 = run.velocities[np.argmin(np.abs(c.t - T))].reshape(-1)
    u1 = -design.controller.K @ np.concatenate([q1 - design.controller.q_ref, qd1])
    np.testing.assert_allclose(c.sample_u[1], u1, rtol=1e-9, atol=1e-12)


def test_zoh_with_delay_matches_integration():
    rng = np.random.default_rng(3)
    A, B = rng.normal(size=(4, 4)) - 2 * np.eye(4), rng.normal(size=(4, 2))
    T, delay = 0.1, 0.03
    m = tc.zoh(A, B, T, delay)
    x0, u_prev, u = rng.normal(size=4), rng.normal(size=2), rng.normal(size=2)
    f = lambda t, x: A @ x + B @ (u_prev if t < delay else u)   # noqa: E731
    ref = scipy.integrate.solve_ivp(f, (0, T), x0, rtol=1e-12, atol=1e-14,
                                    t_eval=[T], max_step=delay / 5).y[:, -1]
    np.testing.assert_allclose(m.Phi @ x0 + m.Gamma0 @ u + m.Gamma1 @ u_prev, ref, atol=1e-9)
    # without delay: python-control's c2d
    d = ct.c2d(ct.ss(A, B, np.eye(4), 0), T, method="zoh")
    m0 = tc.zoh(A, B, T)
    np.testing.assert_allclose(m0.Phi, d.A, atol=1e-13)
    np.testing.assert_allclose(m0.Gamma0, d.B, atol=1e-13)


def test_discrete_loop_matches_python_control(tbar):
    s, model, design = tbar
    T = 0.02
    law = tc.discretize(design.controller, T)
    mr = design.minimal
    nu = design.K.shape[0]
    cl = tc.discrete_closed_loop(mr, law)
    # reference: python-control's c2d of the plant [u; d] -> z, closed by ct.feedback
    A, B = np.asarray(mr.sys.A), np.asarray(mr.sys.B)
    Pd = ct.c2d(ct.ss(A, B, np.eye(A.shape[0]), 0), T, method="zoh")
    Kz = np.zeros((B.shape[1], A.shape[0]))
    Kz[:nu] = design.controller.K @ mr.basis
    ref = ct.feedback(Pd, ct.ss([], [], [], Kz, T))
    n_t = 120
    d = np.zeros((B.shape[1] - nu, n_t))
    d[list(mr.sys.input_labels[nu:]).index("fz2"), :50] = 1.0
    z_ref = ct.forced_response(ref, T * np.arange(n_t), np.vstack([np.zeros((nu, n_t)), d])).y
    y = ct.forced_response(cl, T * np.arange(n_t), d).y
    ny = mr.sys.C.shape[0]
    np.testing.assert_allclose(y[:ny], np.asarray(mr.sys.C) @ z_ref,
                               atol=1e-10 * np.abs(y[:ny]).max())
    # the nonlinear sampled loop at a small load follows the discrete loop at the samples
    load = lambda t, q=None, qd=None: _step_load(s, 0.1 * (t < 50 * T))   # noqa: E731
    run = tc.simulate(s, (n_t - 1) * T, loads=load, controller=law, t_eval=T * np.arange(n_t),
                      max_step=T)
    meas = tc.measurement(s, tc.Selection(nodes=[2, 3], axes="xz"))
    y_nl = np.array([meas(q) for q in run.nodes.reshape(n_t, -1)]).T
    scale = np.abs(y_nl).max()
    y_lin = 0.1 * y[:ny][[list(mr.sys.output_labels).index(n) for n in meas.names]]
    assert np.abs(y_nl - y_lin).max() < 2e-2 * scale


def test_dlqr_approaches_lqr_and_is_stable(tbar):
    _, model, design = tbar
    fast = tc.dlqr(model, 1e-4, effort=1e-2)
    rel = np.linalg.norm(fast.controller.DK - design.K) / np.linalg.norm(design.K)
    assert rel < 1e-2
    slow = tc.dlqr(model, 0.05, delay=0.02, effort=1e-2)
    assert slow.spectral_radius < 1
    assert slow.controller.n_states == design.K.shape[0]
    cl = tc.discrete_closed_loop(design.minimal, slow.controller)
    rho = np.abs(np.linalg.eigvals(np.asarray(cl.A))).max()
    assert rho == pytest.approx(slow.spectral_radius, rel=1e-8)


def test_verify_takes_a_sampled_controller(tbar):
    s, _, design = tbar
    load = tc.doublet(s, tc.Selection(2, "z"), 1.0, half_period=0.2)
    t = np.linspace(0, 0.8, 81)
    outs = tc.Selection(nodes=[2, 3], axes="xz")
    cont = tc.verify(s, design.controller, load, 0.8, outputs=outs, t_eval=t)
    samp = tc.verify(s, tc.discretize(design.controller, 0.02, 0.005), load, 0.8, outputs=outs,
                     t_eval=t)
    # the sampled-data linear prediction is as close to the nonlinear loop as the continuous one
    assert samp.linear_error < 2 * cont.linear_error + 1e-3
    assert samp.closed.peak == pytest.approx(cont.closed.peak, rel=0.1)


def test_bad_timing_and_controllers(tbar):
    s, _, design = tbar
    with pytest.raises(ValueError, match="delay must satisfy"):
        check_timing(0.01, 0.01, "x")
    with pytest.raises(ValueError, match="period must be a positive"):
        tc.discretize(design.controller, -1.0)
    with pytest.raises(TypeError, match="period must be a number"):
        tc.zoh(np.eye(2), np.ones((2, 1)), "fast")
    with pytest.raises(TypeError, match="StateFeedback or an OutputFeedback"):
        tc.discretize(object(), 0.01)

    class Broken(tc.SampledController):
        strings, gamma_ref, period, n_states = design.controller.strings, \
            design.controller.gamma_ref, 0.01, 0

        def update(self, k, t, q, qd, xk):
            return np.zeros(1), xk

    with pytest.raises(tc.SimulationError, match="must return"):
        tc.simulate(s, 0.05, controller=Broken())


def test_verify_predicts_a_discrete_lqg(tbar):
    from tenscontrol.mechanics.sensors import sensors
    from tenscontrol.studies.verification import _sampled_law

    s, _, _ = tbar
    model = tc.linearize(s)
    ss = (sensors(s, string_lengths=range(s.n_strings), std=1e-3, rate=200.0)
          + sensors(s, bar_rates=range(s.n_bars), std=1e-2, rate=200.0))
    lqg = tc.discrete_lqg(model, ss, 0.005, process_noise=4.0, delay=0.001, noise=False).controller
    # the closed-form law (AK, BK, CK, DK) is the controller's own update, to first order
    rng = np.random.default_rng(3)
    q0 = s.nodes.reshape(-1)
    x = np.zeros(2 * q0.size)
    x[s.free_coordinates] = 1e-7 * rng.normal(size=s.free_coordinates.size)
    x[q0.size + s.free_coordinates] = 1e-6 * rng.normal(size=s.free_coordinates.size)
    xc = 1e-7 * rng.normal(size=lqg.n_states)
    u, xn = _sampled_law(lqg, q0)(2, 0.01, x, xc)
    u_ref, xn_ref = lqg.update(2, 0.01, q0 + x[:q0.size], x[q0.size:], xc)
    np.testing.assert_allclose(u, u_ref, rtol=0, atol=1e-6 * np.abs(u_ref).max())
    np.testing.assert_allclose(xn, xn_ref, rtol=0, atol=1e-6 * np.abs(xn_ref).max())
    load = tc.doublet(s, tc.Selection(2, "z"), 1.0, half_period=0.2)
    t = np.linspace(0, 0.8, 81)
    r = tc.verify(s, lqg, load, 0.8, outputs=tc.Selection(nodes=[2, 3], axes="xz"), t_eval=t)
    assert np.isfinite(r.linear_error) and r.linear_error < 0.05
