"""Tension-bounded MPC: the QP's answer, the bounds in the nonlinear loop, the optional OSQP."""

import subprocess
import sys

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.control import mpc as mpc_module

pytest.importorskip("osqp")


@pytest.fixture(scope="module")
def tbar():
    """The README's T-bar and its passive model (outputs x, z of nodes 2 and 3)."""
    s = tc.equilibrium(tc.catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
    return s, tc.linearize(s, kind="passive", outputs=tc.Selection(nodes=[2, 3], axes="xz"))


def test_without_active_bounds_the_first_move_is_the_discrete_lqr(tbar):
    s, model = tbar
    T = 0.005
    m = tc.mpc(model, T, horizon=15, gamma_min=0.0, effort=1e-2, time_limit=np.inf).controller
    d = tc.dlqr(model, T, effort=1e-2, cost="rectangle")   # the MPC's weights
    rng = np.random.default_rng(1)
    free = s.free_coordinates
    for _ in range(3):
        dq = np.zeros(s.nodes.size)
        dq[free] = 1e-4 * rng.normal(size=free.size)
        q = s.nodes.reshape(-1) + dq
        qd = np.zeros_like(q)
        qd[free] = 1e-3 * rng.normal(size=free.size)
        u, x_next = m.update(0, 0.0, q, qd, m.initial_state())
        u_lqr, _ = d.controller.update(0, 0.0, q, qd, np.zeros(0))
        assert m.sample_info()["status"] == "solved"
        np.testing.assert_allclose(u, u_lqr, rtol=0, atol=1e-3 * np.abs(u_lqr).max())
        np.testing.assert_array_equal(x_next, u)      # the state is the last command


def test_doublet_that_slackens_lqr_keeps_every_string_taut(tbar):
    s, model = tbar
    load = tc.doublet(s, tc.Selection(2, "z"), 40.0)
    lqr = tc.simulate(s, 2.5, loads=load, controller=tc.lqr(model, effort=1e-2).controller,
                      t_eval=np.linspace(0.0, 2.5, 501), max_step=5e-3)
    assert lqr.control.slack_time.max() > 0.1            # the README's LQR lets a string go
    m = tc.mpc(model, 0.005, gamma_min=1.0, effort=1e-2, time_limit=np.inf).controller
    t = np.linspace(0.0, 2.5, 5001)                      # 10 points per period: between samples
    run = tc.simulate(s, 2.5, loads=load, controller=m, t_eval=t, max_step=5e-3)
    c = run.control
    assert c.slack_time.max() == 0
    # the floor over the whole run, between the samples too (the integrator's dense output):
    # measured 1.00034 N/m; before the bound was imposed within the hold, 0.942 (at the
    # samples only, the law moved 6 % of the floor within a period)
    assert c.applied.min() >= 1.0
    law = np.array([m.elastic_law(q) for q in run.nodes.reshape(t.size, -1)])
    at_samples = np.isin(np.round(t / 0.005, 6) % 1, 0)
    assert (law + c.u)[at_samples].min() >= 1.0 - 1e-9   # exact at the samples
    info = c.sample_info
    assert set(info["status"].tolist()) <= {"solved", "solved inaccurate",
                                            "maximum iterations reached"}
    assert info["solve_time"].size == c.sample_times.size == 500
    assert info["held_last"].sum() == 0
    peak = lambda r: np.abs(r.nodes - s.nodes).max()                        # noqa: E731
    assert peak(run) < 1.2 * peak(lqr)
    assert "solved" in c.summary()                       # statuses by name, counted


def test_verify_predicts_the_mpc_on_the_linear_plant(tbar):
    s, model = tbar
    m = tc.mpc(model, 0.005, gamma_min=1.0, effort=1e-2).controller
    t = np.linspace(0.0, 0.8, 161)
    outs = tc.Selection(nodes=[2, 3], axes="xz")
    # a small doublet (no bound active): the MPC is the discrete LQR, on the linear plant too
    small = tc.verify(s, m, tc.doublet(s, tc.Selection(2, "z"), 1.0, 0.2), 0.8, outputs=outs,
                      t_eval=t)
    # (the MPC weighs a period by the rectangle rule: its QP has no state-command cross term)
    lqr = tc.verify(s, tc.dlqr(model, 0.005, effort=1e-2, cost="rectangle").controller,
                    tc.doublet(s, tc.Selection(2, "z"), 1.0, 0.2), 0.8, outputs=outs, t_eval=t)
    # measured 3.5e-4 (both) and 6e-7 (with no bound active OSQP's answer is the unconstrained
    # one to its tolerance, 1e-6 of the whitened cost and of gamma_ref on the constraint rows)
    assert np.isfinite(small.linear_error) and small.linear_error < 2 * lqr.linear_error + 1e-4
    np.testing.assert_allclose(small.y_linear, lqr.y_linear, rtol=0,
                               atol=5e-6 * np.abs(lqr.y_linear).max())



def test_a_run_does_not_depend_on_the_runs_before_it(tbar):
    # verify's linear prediction runs the controller's update; OSQP keeps its last solution
    # and its adapted rho, so without a fresh solver at initial_state the next simulation
    # starts from the prediction's warm start (before: the first QP took 75 iterations
    # instead of 25 and the commands moved by 8e-9 N/m)
    s, model = tbar
    # gamma_ref 10: bounds active; no time limit (OSQP's clock would make the runs differ)
    m = tc.mpc(model, 0.005, gamma_min=9.0, effort=1e-2, time_limit=np.inf).controller
    load = tc.doublet(s, tc.Selection(2, "z"), 10.0, 0.2)
    run = lambda: tc.simulate(s, 0.4, loads=load, controller=m, max_step=5e-3).control  # noqa
    before = run()
    tc.verify(s, m, tc.doublet(s, tc.Selection(2, "z"), 10.0, 1.0), 0.5,
              outputs=tc.Selection(nodes=[2, 3], axes="xz"))
    after = run()
    np.testing.assert_array_equal(after.sample_u, before.sample_u)
    np.testing.assert_array_equal(after.sample_info["iterations"],
                                  before.sample_info["iterations"])


def test_iteration_cap_uses_the_projected_iterate(tbar, monkeypatch):
    # a QP stopped early (status 7) is in the record, and its command keeps the bounds
    s, model = tbar
    monkeypatch.setattr(mpc_module, "_MAX_ITER", 1)
    m = tc.mpc(model, 0.005, gamma_min=1.0, effort=1e-2, time_limit=np.inf).controller
    run = tc.simulate(s, 1.0, loads=tc.doublet(s, tc.Selection(2, "z"), 40.0, 0.5),
                      controller=m, max_step=5e-3)
    c = run.control
    status = c.sample_info["status"]
    capped = status == "maximum iterations reached"
    assert set(status.tolist()) <= {"solved", "maximum iterations reached"}
    assert capped.mean() > 0.5                          # solved: x = 0 exact
    law = np.array([m.elastic_law(q) for q in run.nodes.reshape(run.t.size, -1)])
    at_samples = np.isin(np.round(run.t / 0.005, 6) % 1, 0)
    assert (law + c.u)[at_samples].min() >= 1.0 - 1e-9
    assert np.abs(c.sample_u).max() > 0                  # not the zero move


def test_rate_limit(tbar):
    s, model = tbar
    rate = 20.0
    m = tc.mpc(model, 0.01, gamma_min=1.0, rate_limit=rate, effort=1e-2).controller
    run = tc.simulate(s, 1.0, loads=tc.doublet(s, tc.Selection(2, "z"), 40.0, 0.5),
                      controller=m, max_step=5e-3)
    steps = np.abs(np.diff(np.vstack([np.zeros(4), run.control.sample_u]), axis=0))
    assert steps.max() <= rate * 0.01 * (1 + 1e-4)
    assert steps.max() > 0.5 * rate * 0.01          # the limit was active


def test_bad_bounds(tbar):
    _, model = tbar
    with pytest.raises(ValueError, match="gamma_min of string 0 must lie in"):
        tc.mpc(model, 0.01, gamma_min=[20.0, 1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="gamma_min"):
        tc.mpc(model, 0.01, gamma_min=[1.0, 1.0])


def test_missing_osqp_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "osqp", None)
    with pytest.raises(ImportError, match=r"tenscontrol\[mpc\]"):
        mpc_module.require_osqp()


def test_import_does_not_load_osqp():
    code = "import sys, tenscontrol; print('osqp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"


def _state(s, seed, size=1e-4):
    """A perturbed state (q, qd) of the T-bar's free coordinates."""
    rng = np.random.default_rng(seed)
    free = s.free_coordinates
    q, qd = s.nodes.reshape(-1).copy(), np.zeros(s.nodes.size)
    q[free] += size * rng.normal(size=free.size)
    qd[free] = 10 * size * rng.normal(size=free.size)
    return q, qd


def test_with_delay_and_no_active_bound_the_first_move_is_the_delayed_dlqr(tbar):
    # the command of sample k acts from t_k + delay: the prediction's state is [z; u_prev]
    # and its terminal weight the delayed discrete Riccati solution, so with no bound active
    # the first move is dlqr's with the same delay (whose state is the previous command)
    s, model = tbar
    T, delay = 0.005, 0.002
    m = tc.mpc(model, T, horizon=15, gamma_min=0.0, effort=1e-2, delay=delay,
               time_limit=np.inf).controller
    d = tc.dlqr(model, T, delay=delay, effort=1e-2, cost="rectangle")
    assert m.delay == delay and m.time_limit == np.inf
    rng = np.random.default_rng(4)
    for seed in range(3):
        m.initial_state()
        q, qd = _state(s, seed)
        u_prev = 0.05 * rng.normal(size=4)
        u, _ = m.update(0, 0.0, q, qd, u_prev)
        u_lqr, _ = d.controller.update(0, 0.0, q, qd, u_prev)
        assert m.sample_info()["status"] == "solved"
        np.testing.assert_allclose(u, u_lqr, rtol=0, atol=1e-3 * np.abs(u_lqr).max())
    # and without the delay in the model the answer is another one (the delay matters here)
    m0 = tc.mpc(model, T, horizon=15, gamma_min=0.0, effort=1e-2, time_limit=np.inf).controller
    m0.initial_state()
    assert np.abs(m0.update(0, 0.0, q, qd, u_prev)[0] - u_lqr).max() > 1e-2 * np.abs(
        u_lqr).max()


def test_soft_rows_have_an_exact_penalty(tbar):
    # bounds active on the later moves (gamma_min 9.9 of gamma_ref 10): the soft QP's first
    # move is the hard QP's, solved here independently (SciPy's SLSQP on U)
    scipy_optimize = pytest.importorskip("scipy.optimize")
    s, model = tbar
    m = tc.mpc(model, 0.005, horizon=4, gamma_min=9.9, effort=1e-2, time_limit=np.inf).controller
    qp, nu = m._condensed, 4
    checked = 0
    for seed in range(6):
        m.initial_state()
        q, qd = _state(s, seed, 1e-3)
        z0 = m.L @ np.concatenate([q - m.q_ref, qd])
        lo, hi = m.bounds(q, z0, np.zeros(nu))
        u, _ = m.update(0, 0.0, q, qd, np.zeros(nu))
        H, f = qp.H / np.mean(np.diag(qp.H)), qp.F @ z0 / np.mean(np.diag(qp.H))
        hard = scipy_optimize.minimize(
            lambda U: U @ H @ U + 2 * f @ U, np.zeros(H.shape[0]),
            jac=lambda U: 2 * H @ U + 2 * f, method="SLSQP", options=dict(
                ftol=1e-14, maxiter=500),
            constraints=[dict(type="ineq", fun=lambda U: qp.rows @ U - lo,
                              jac=lambda U: qp.rows)])
        assert hard.success
        active = (qp.rows @ hard.x - lo)[qp.move > 0] < 1e-6 * 10
        checked += active.any()
        assert m.sample_info()["soft_active"] == 0
        # measured 3e-5 N/m (OSQP's tolerance, 1e-6 of gamma_ref in the whitened units)
        np.testing.assert_allclose(u, np.maximum(hard.x[:nu], lo[:nu]), rtol=0, atol=1e-3)
    assert checked >= 2                               # later moves' bounds were active


def test_infeasible_first_move_holds_the_last_command(tbar):
    # a rate limit of 1e-3 N/m/s cannot lift a string that the state put below gamma_min:
    # no first move meets both (found before OSQP runs: OSQP took its 250 iterations without
    # a certificate); the last command is held, moved onto the floor (which wins over the rate
    # limit), and the record says so
    s, model = tbar
    m = tc.mpc(model, 0.005, gamma_min=9.9, rate_limit=1e-3, effort=1e-2, time_limit=np.inf).controller
    m.initial_state()
    q, qd = _state(s, 1, 1e-2)          # string 3's law at 9.77 N/m
    u_prev = np.full(4, 0.01)
    u, x_next = m.update(0, 0.0, q, qd, u_prev)
    info = m.sample_info()
    assert info["status"] == "first move infeasible" and info["held_last"] == 1
    law = m.elastic_law(q)
    below = law + u_prev < 9.9
    assert below.any() and (~below).any()
    np.testing.assert_allclose((law + u)[below], 9.9, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(u[~below], u_prev[~below])
    np.testing.assert_array_equal(x_next, u)


def test_failed_qp_holds_the_last_command(tbar, monkeypatch):
    # any OSQP status whose iterate is not usable (here a made-up "primal infeasible")
    s, model = tbar
    m = tc.mpc(model, 0.005, gamma_min=9.9, effort=1e-2, time_limit=np.inf).controller
    m.initial_state()
    q, qd = _state(s, 1, 1e-2)
    solve = m._solver.solve

    def failing(**options):
        res = solve(**options)
        res.info.status = "primal infeasible"
        return res
    monkeypatch.setattr(m._solver, "solve", failing)
    u_prev = np.full(4, 0.01)
    u, _ = m.update(5, 0.025, q, qd, u_prev)
    info = m.sample_info()
    assert info["status"] == "primal infeasible" and info["held_last"] == 1
    np.testing.assert_array_equal(u, np.maximum(u_prev, 9.9 - m.elastic_law(q)))


def test_non_finite_state_is_refused_with_its_sample(tbar):
    s, model = tbar
    m = tc.mpc(model, 0.005, gamma_min=1.0, effort=1e-2).controller
    m.initial_state()
    q, qd = _state(s, 0)
    q[7] = np.nan
    with pytest.raises(ValueError, match=r"positions q at sample 3 \(t = 0.015 s\) is not "
                                         r"finite \(entry 7"):
        m.update(3, 0.015, q, qd, np.zeros(4))
    with pytest.raises(ValueError, match="last command at sample 4"):
        m.update(4, 0.02, *_state(s, 0), np.array([0.0, np.inf, 0.0, 0.0]))


def test_time_limit(tbar):
    s, model = tbar
    # by default the time the command has: the period, or the delay when there is one
    assert tc.mpc(model, 0.005, effort=1e-2).controller.time_limit == 0.005
    assert tc.mpc(model, 0.005, effort=1e-2, delay=0.001).controller.time_limit == 0.001
    m = tc.mpc(model, 0.005, gamma_min=9.5, effort=1e-2, time_limit=1e-9).controller
    m.initial_state()
    q, qd = _state(s, 2, 1e-3)
    u, _ = m.update(0, 0.0, q, qd, np.zeros(4))
    assert m.sample_info()["status"] == "run time limit reached"
    assert (m.elastic_law(q) + u).min() >= 9.5 - 1e-12      # the stopped iterate, projected
    with pytest.raises(ValueError, match="time_limit must be a positive number of seconds"):
        tc.mpc(model, 0.005, time_limit=0.0)
    with pytest.raises(TypeError, match="time_limit"):
        tc.mpc(model, 0.005, time_limit="fast")


def test_control_kind_needs_one_point_per_hold(tbar):
    # kind="control": the applied force density gamma_ref + u is constant over the hold,
    # so the bound at the hold's start is the bound over the whole hold
    s, _ = tbar
    model = tc.linearize(s, kind="control", outputs=tc.Selection(nodes=[2, 3], axes="xz"))
    assert tc.mpc(model, 0.005, gamma_min=1.0, effort=1e-2).controller.hold_points == 1
    assert tc.mpc(tbar[1], 0.005, gamma_min=1.0, effort=1e-2).controller.hold_points == 5


def test_delayed_mpc_keeps_the_floor_between_samples(tbar):
    s, model = tbar
    m = tc.mpc(model, 0.005, gamma_min=1.0, effort=1e-2, delay=0.0025,
               time_limit=np.inf).controller
    t = np.linspace(0.0, 2.5, 5001)
    run = tc.simulate(s, 2.5, loads=tc.doublet(s, tc.Selection(2, "z"), 40.0), controller=m,
                      t_eval=t, max_step=5e-3)
    c = run.control
    assert c.delay == 0.0025 and c.slack_time.max() == 0
    # with delay no row is exact: the hold starts at a predicted state, which the margin
    # (the law's over-prediction over the last period) covers to measured 0.99968 N/m
    assert c.applied.min() >= 1.0 - 1e-3


def test_prism_keeps_the_floor_between_samples():
    # the 3-prism under twice the doublet that slackens its LQR (benchmarks/bench_mpc_floor.py):
    # the MPC that bounded the samples only let a string go slack (least 0 N/m between the
    # samples); this one measured 5.000 N/m (the floor reached) on 20 points per period, with
    # the margin capped at 3 prestresses (the default cap of 1, which keeps the ball's loop
    # stable, leaves 1.12 N/m here)
    s = tc.equilibrium(tc.catalog.prism(3, damping=1.0), gamma_min=10.0).structure
    model = tc.linearize(s, kind="passive", outputs=tc.Selection(nodes=[3, 4, 5]))
    m = tc.mpc(model, 0.005, gamma_min=5.0, effort=1e-2, time_limit=np.inf,
               margin_cap=3.0).controller
    t = np.linspace(0.0, 2.5, 5001)
    run = tc.simulate(s, 2.5, loads=tc.doublet(s, tc.Selection(3, "x"), 18.8), controller=m,
                      t_eval=t, max_step=5e-3)
    c = run.control
    assert c.applied.min() >= 5.0 - 1e-6           # measured 5.0000024 (at t = 1.195 s)
    assert (c.sample_info["soft_active"] > 0).mean() < 0.05
    assert c.sample_info["held_last"].sum() == 0
