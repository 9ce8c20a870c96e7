"""Self-stress allocation (tenscontrol.statics.self_stress, and tenscontrol.control.allocation at
run time): same nodal forces, bounds kept."""

import numpy as np
import pytest
import scipy.optimize

import tenscontrol as tc
from tenscontrol.control.allocation import allocated
from tenscontrol.statics.self_stress import self_stress


@pytest.fixture(scope="module")
def tbar():
    return tc.equilibrium(tc.catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure


@pytest.fixture(scope="module")
def lqr_tbar(tbar):
    model = tc.linearize(tbar, kind="passive", outputs=tc.Selection(nodes=[2, 3], axes="xz"))
    return tc.lqr(model, effort=1e-2).controller


def test_tbar_self_stresses(tbar):
    # m0 joins two fixed nodes (inert); m1, m2, m3 drive two bar angles: one self-stress among
    # them, so r = 2; the second direction is (1, 1, 1) on m1..m3 up to sign and mixing
    stress = self_stress(tbar)
    assert stress.dimension == 2
    S = stress.basis
    np.testing.assert_allclose(S.T @ S, np.eye(2), atol=1e-14)
    inert = np.array([1.0, 0, 0, 0])
    uniform = np.array([0, 1.0, 1.0, 1.0]) / np.sqrt(3)
    np.testing.assert_allclose(np.linalg.norm(S.T @ inert), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(S.T @ uniform), 1.0, rtol=1e-12)


@pytest.mark.parametrize("name", ["tbar", "prism"])
def test_nodal_forces_unchanged(name, tbar):
    # The oracle: the linearization's input matrix B = -W P Yhat (its own projection of the
    # bar constraint forces), independent of the allocation's null-space basis.
    s = tbar if name == "tbar" else tc.equilibrium(tc.catalog.prism(3, damping=0.5),
                                                    gamma_min=5.0).structure
    gamma = tc.force_densities(s, s.nodes.reshape(-1))
    stress = self_stress(s, gamma_min=0.5 * gamma.min())
    assert stress.dimension == (2 if name == "tbar" else 4)   # the prism: 3 inert base strings
    B = tc.linearize(s, kind="control").actuated(stress.strings).B
    rng = np.random.default_rng(3)
    for _ in range(5):
        u = rng.normal(0.0, 3.0 * gamma.max(), stress.strings.size)
        a = stress.allocate(u, gamma)
        assert a.feasible
        assert np.all(gamma + a.command >= stress.gamma_min - 1e-9 * gamma.max())
        scale = np.abs(B @ u).max()
        np.testing.assert_allclose(B @ a.command, B @ u, rtol=0, atol=1e-12 * scale)


def test_least_change_against_a_general_solver(tbar):
    stress = self_stress(tbar, gamma_min=1.0, gamma_max=40.0)
    base = np.full(4, 10.0)
    u = np.array([-15.0, -12.0, 5.0, 20.0])
    a = stress.allocate(u, base)
    S = stress.basis
    v = base + u
    cons = [{"type": "ineq", "fun": lambda c: v + S @ c - 1.0},
            {"type": "ineq", "fun": lambda c: 40.0 - v - S @ c}]
    ref = scipy.optimize.minimize(lambda c: c @ c, np.zeros(2), constraints=cons,
                                  method="SLSQP", options={"ftol": 1e-14})
    assert ref.success
    np.testing.assert_allclose(a.change, S @ ref.x, atol=1e-6)
    assert a.feasible and a.margin >= -1e-9
    # a command within the bounds is left alone
    assert np.array_equal(stress.allocate(np.zeros(4), base).command, np.zeros(4))


def test_infeasible_keeps_the_best_margin(tbar):
    # m1..m3 share one self-stress (1, 1, 1): m1 at 1 N/m and m3 at 60 N/m cannot both be
    # moved into [5, 30]; the best is to miss both by the same (60 - 1 - 25) / 2 = 17 N/m
    stress = self_stress(tbar, gamma_min=5.0, gamma_max=30.0)
    a = stress.allocate(np.array([0.0, -9.0, 0.0, 50.0]), np.full(4, 10.0))
    assert not a.feasible
    np.testing.assert_allclose(a.margin, -17.0, rtol=1e-8)   # relaxed by 1e-9 x 60
    gamma = 10.0 + a.command
    np.testing.assert_allclose([gamma[1], gamma[3]], [5.0 - 17.0, 30.0 + 17.0], rtol=1e-8)


def test_no_self_stress_changes_nothing(tbar):
    stress = self_stress(tbar, strings=[1, 3], gamma_min=1.0)
    assert stress.dimension == 0
    a = stress.allocate(np.array([-20.0, 0.0]), np.array([10.0, 10.0]))
    assert np.array_equal(a.command, [-20.0, 0.0]) and not a.feasible


def test_allocated_wrapper_delegates(tbar, lqr_tbar):
    ctl = allocated(lqr_tbar, tbar, gamma_min=5.0)
    assert ctl.kind == "passive" and ctl.n_states == 0 and ctl.unallocated is lqr_tbar
    np.testing.assert_array_equal(ctl.q_ref, lqr_tbar.q_ref)
    assert "self_stress_dimension=2" in repr(ctl)
    q = tbar.nodes.reshape(-1).copy()
    q[8] -= 0.3                               # node 2 down: m1 shortens, the LQR lets go more
    u = lqr_tbar.force_densities(0.0, q, np.zeros_like(q), np.zeros(0))
    ua = ctl.force_densities(0.0, q, np.zeros_like(q), np.zeros(0))
    assert (ctl.base(q) + u).min() < 5.0 <= (ctl.base(q) + ua).min() + 1e-9


@pytest.mark.slow
def test_doublet_lqr_slack_allocated_taut(tbar, lqr_tbar):
    # The README's T-bar LQR (effort 1e-2) lets string 1 go slack under a 40 N doublet on z2
    # (none at 20 N); allocated with gamma_min = 1 N/m every string stays taut and the peak
    # deflection is no larger (the self-stress moves change no nodal force).
    outputs = tc.Selection(nodes=[2, 3], axes="xz")
    load = tc.doublet(tbar, tc.Selection(2, "z"), 40.0)
    t_eval = np.linspace(0.0, 6.0, 301)
    plain = tc.verify(tbar, lqr_tbar, load, 6.0, outputs=outputs, t_eval=t_eval)
    ctl = allocated(lqr_tbar, tbar, gamma_min=1.0)
    alloc = tc.verify(tbar, ctl, load, 6.0, outputs=outputs, t_eval=t_eval)
    assert plain.closed.slack_time and plain.closed_loop.control.applied.min() == 0.0
    assert not alloc.closed.slack_time
    assert alloc.closed_loop.control.applied.min() >= 1.0 - 1e-9
    assert alloc.closed.peak <= plain.closed.peak
    assert np.isfinite(alloc.linear_error)      # predicted by the wrapped LQR


def test_bad_input(tbar, lqr_tbar):
    with pytest.raises(ValueError, match="gamma_min of string 2 .* exceeds its gamma_max"):
        self_stress(tbar, gamma_min=[0, 0, 50.0, 0], gamma_max=40.0)
    with pytest.raises(ValueError, match="self_stress: strings: string 7 out of range"):
        self_stress(tbar, strings=[0, 7])
    with pytest.raises(ValueError, match="gamma_max must be a positive number"):
        self_stress(tbar, gamma_max=-1.0)
    with pytest.raises(TypeError, match="allocated: controller must be a Controller"):
        allocated(object(), tbar)


def test_allocation_is_continuous_in_the_command(tbar):
    # the least-distance solution is Lipschitz in the bounds' offsets (Hoffman's bound): on
    # the T-bar (rows of S of norm 1 and 0.577, so one active row moves it by up to 1.73 |du|)
    # a change du moves it by less than 2 |du| (measured up to 1.65 |du| on these draws), at
    # 1e-3 and at 1e-7 alike
    stress = self_stress(tbar, gamma_min=1.0, gamma_max=40.0)
    base = np.full(4, 10.0)
    rng = np.random.default_rng(7)
    for scale in (1e-3, 1e-7):
        for _ in range(20):
            u = rng.normal(0.0, 15.0, 4)
            du = rng.normal(0.0, scale, 4)
            a, b = stress.allocate(u, base), stress.allocate(u + du, base)
            if a.feasible and b.feasible:
                assert np.linalg.norm(b.change - a.change) <= 2.0 * np.linalg.norm(du) + 1e-12


def test_bvls_fallback_gives_the_nnls_answer(tbar, monkeypatch):
    # SciPy 1.12-1.13's NNLS can stop at its iteration limit (seen at the floor versions);
    # the bounded-variable least squares that replaces it then must give the same allocation
    stress = self_stress(tbar, gamma_min=1.0, gamma_max=40.0)
    base, rng = np.full(4, 10.0), np.random.default_rng(3)
    commands = [rng.normal(0.0, 15.0, 4) for _ in range(10)]
    expected = [stress.allocate(u, base) for u in commands]

    def failing(*args, **kwargs):
        raise RuntimeError("Maximum number of iterations reached.")
    monkeypatch.setattr(scipy.optimize, "nnls", failing)
    for u, e in zip(commands, expected):
        a = stress.allocate(u, base)
        assert a.feasible == e.feasible
        np.testing.assert_allclose(a.command, e.command, rtol=0,
                                   atol=1e-9 * np.abs(e.command).max())


def test_sampled_lqr_slack_allocated_taut(tbar):
    # The README's LQR discretized at 200 Hz lets a string go slack under a 40 N doublet on z2,
    # as the continuous one does; allocated, every sampled command keeps gamma_min = 1 N/m
    # (at the sample: between samples the held strings follow the motion), no string goes
    # slack, the peak is no larger, and verify predicts it by the wrapped sampled controller.
    outputs = tc.Selection(nodes=[2, 3], axes="xz")
    model = tc.linearize(tbar, kind="passive", outputs=outputs)
    sampled = tc.dlqr(model, 0.005, effort=1e-2).controller
    load = tc.doublet(tbar, tc.Selection(2, "z"), 40.0)
    t_eval = np.linspace(0.0, 6.0, 301)
    plain = tc.verify(tbar, sampled, load, 6.0, outputs=outputs, t_eval=t_eval)
    ctl = allocated(sampled, tbar, gamma_min=1.0)
    assert isinstance(ctl, tc.control.AllocatedSampled) and ctl.unallocated is sampled
    assert (ctl.period, ctl.delay, ctl.n_states) == (sampled.period, sampled.delay, 0)
    alloc = tc.verify(tbar, ctl, load, 6.0, outputs=outputs, t_eval=t_eval)
    assert plain.closed.slack_time and plain.closed_loop.control.applied.min() == 0.0
    assert not alloc.closed.slack_time
    assert alloc.closed.peak <= plain.closed.peak
    assert np.isfinite(alloc.linear_error)
    with pytest.raises(TypeError, match=r"SampledController \(it lacks gamma_ref\)"):
        class NoReference:
            strings, kind, period, delay = np.arange(4), "passive", 0.1, 0.0

            def update(self, k, t, q, qd, xk):
                return np.zeros(4), xk
        allocated(NoReference(), tbar)
