"""The LQG designs tuned from what the user gives (issue 32, item 4): ExpectedLoad, the rule
that turns it into spectral densities, the defaults and their report."""

import control as ct
import numpy as np
import pytest
import scipy.linalg

import tenscontrol as tc
from tenscontrol.estimation import lqg as est
from tenscontrol.estimation import tuning
from tenscontrol.estimation.tuning import ExpectedLoad, default_load
from tenscontrol.mechanics.sensors import sensors


@pytest.fixture(scope="module")
def tbar():
    s = tc.equilibrium(tc.catalog.tbar(damping=1.0), gamma_min=10.0).structure
    return s, tc.linearize(s), sensors(s, string_lengths=range(s.n_strings), std=1e-3,
                                       rate=200.0)


def lowest_mode(model) -> float:
    """The lowest natural frequency [rad/s] from the elastic model's (K_e, M_e), not from the
    reduced A the rule reads (an independent oracle)."""
    em = tc.lqr(model).minimal.elastic
    return float(np.sqrt(scipy.linalg.eigvalsh(0.5 * (em.K_e + em.K_e.T), em.M_e).min()))


def elastic_dofs(model) -> int:
    """n_e, the elastic degrees of freedom: every one is moved by some nodal force, so the
    rule's n_d (the rank of the reduced E) must equal it (2 on the T-bar)."""
    return tc.lqr(model).minimal.elastic.n_e


def test_derived_densities_follow_the_rule_in_their_units(tbar):
    s, model, ss = tbar
    w1, n = lowest_mode(model), elastic_dofs(model)    # 2.506 rad/s (measured), 2
    F, w = 10.0, 1.0                            # a slow load: the band is the lowest mode
    t = est.discrete_lqg(model, ss, 0.005, expected_load=ExpectedLoad(F, w)).tuning
    assert t.band == pytest.approx(w1, rel=1e-6) and t.directions == n
    assert t.load_drift == pytest.approx(F**2 * w / n, rel=1e-12)           # [N^2/s]
    assert t.process_noise == pytest.approx(F**2 * w / (n * w1**2), rel=1e-6)  # [N^2 s]
    assert t.sources == ("expected_load", "expected_load")
    # a load above the modes is its own band: W = F^2 / w, drift / W = w^2 [1/s^2], whatever
    # the structure
    fast = est.discrete_lqg(model, ss, 0.005, expected_load=ExpectedLoad(F, 100.0)).tuning
    assert fast.band == 100.0
    assert fast.process_noise == pytest.approx(F**2 / (n * 100.0), rel=1e-12)
    assert fast.load_drift / fast.process_noise == pytest.approx(100.0**2, rel=1e-12)
    # the densities are in N^2: the same load in kN is 1e6 times smaller
    kilo = est.discrete_lqg(model, ss, 0.005, expected_load=ExpectedLoad(F / 1e3, w)).tuning
    assert kilo.load_drift == pytest.approx(1e-6 * t.load_drift, rel=1e-12)
    # a filter without load states: the load's power over its band, F^2 / w
    white = est.lqg(model, ss, expected_load=ExpectedLoad(F, w))
    assert white.tuning.load_drift is None
    np.testing.assert_allclose(white.W, F**2 / (n * w) * np.eye(white.W.shape[0]), rtol=1e-12)
    ext = tc.extended_lqg(model, ss, 0.005, expected_load=ExpectedLoad(F, w))
    assert ext.linear.tuning.process_noise == pytest.approx(F**2 / (n * w), rel=1e-12)


def slackening_oracle(s, model, design):
    """(least slackening load [N], worst direction's force on the reduced model's channels)
    from tenscontrol.sensors' string-length rows (their own length Jacobian on the Cartesian
    state) and the reduced model's quasi-static response: the tension change k dl of the
    limiting string at that load, in that direction, is its whole tension."""
    A, _, E = est.reduced_model(design)
    ss = sensors(s, string_lengths=range(s.n_strings), std=1e-3, rate=200.0)
    C = model.with_sensors(ss).C @ design.minimal.basis
    G = C @ np.linalg.pinv(-A) @ E                        # [m/N]
    tension = s.string_lengths * tc.force_densities(s, s.nodes)[:s.n_strings]
    pull = s.string_stiffness[:, None] * G               # [N/N]
    ratio = np.full(s.n_strings, np.inf)
    moved = (tension > 0) & (np.linalg.norm(pull, axis=1) > 0)
    ratio[moved] = tension[moved] / np.linalg.norm(pull[moved], axis=1)
    i = int(np.argmin(ratio))
    f = pull[i] / np.linalg.norm(pull[i]) * ratio[i]      # the worst direction, that load
    assert pull[i] @ f == pytest.approx(tension[i], rel=1e-9)
    return ratio[i], tension


def test_default_load_keeps_every_string_taut_a_decade_below_the_lowest_mode(tbar):
    s, model, ss = tbar
    d = est.discrete_lqg(model, ss, 0.005)
    slack, tension = slackening_oracle(s, model, d.lqr)
    A, _, E = est.reduced_model(d.lqr)
    assert tuning.slackening_load(model, A, E, d.lqr.minimal.basis) == pytest.approx(
        slack, rel=1e-6)
    assert d.tuning.sources == ("default", "default")
    assert d.tuning.load.amplitude == pytest.approx(min(slack, tension[tension > 0].min()),
                                                    rel=1e-6)
    assert d.tuning.load.frequency == pytest.approx(lowest_mode(model) / 10.0, rel=1e-6)
    # the filter carries the load states (one per force direction the sensors see at rest)
    n = d.lqr.minimal.order
    assert d.controller.kalman.Phi.shape[0] > n
    text = d.summary()
    assert "default" in text and "load drift" in text and "N^2/s" in text
    assert default_load(model, A, E, d.lqr.minimal.basis) == d.tuning.load


def test_the_tower_default_load_is_what_slackens_a_string_not_the_weakest_tension():
    # the soft 2 x 4-prism tower: 0.5 N on its top ring moves it 5.8 mm; the weakest tension
    # (7.07 N, 1.1's default) made its default LQG diverge in the nonlinear loop
    s = tc.equilibrium(tc.catalog.prism_tower(2, 4, damping=1.0), gamma_min=10.0).structure
    model = tc.linearize(s)
    ss = sensors(s, string_lengths=range(s.n_strings), std=1e-3, rate=200.0)
    d = est.discrete_lqg(model, ss, 0.005, effort=0.01)
    slack, tension = slackening_oracle(s, model, d.lqr)
    assert slack < 0.5 * tension[tension > 0].min()        # 1.95 N against 7.07 N (measured)
    assert d.tuning.load.amplitude == pytest.approx(slack, rel=1e-6)
    # full-state control barely moves the tower's response: the summary says so
    assert d.tuning.reach.little and "little or nothing" in d.summary()


def test_load_reach_is_the_full_state_loops_frequency_response(tbar):
    s, model, ss = tbar
    F, w = 10.0, 2.0
    d = est.discrete_lqg(model, ss, 0.005, effort=1e-2, expected_load=ExpectedLoad(F, w))
    reach = d.tuning.reach
    A, B, E = est.reduced_model(d.lqr)
    T = d.lqr.minimal.basis
    Qr = T.T @ d.lqr.Q @ T
    lam, V = np.linalg.eigh(0.5 * (Qr + Qr.T))
    Cz = np.sqrt(np.clip(lam, 0.0, None))[:, None] * V.T          # Cz^T Cz = Qr
    # python-control's frequency responses of the open and the full-state closed loop: the
    # largest singular value of Q^1/2 H E (Cz^T Cz = Qr: any square root gives it)
    K = d.lqr.K_reduced
    open_ = ct.ss(A, E, Cz, 0)(1j * w)
    closed = ct.ss(A - B @ K, E, Cz, 0)(1j * w)
    expected = 1 - np.linalg.norm(closed, 2) / np.linalg.norm(open_, 2)
    assert reach.reduction == pytest.approx(expected, rel=1e-8)
    assert reach.frequency == w and not reach.little                # 0.54 at 2 rad/s
    lengths = ct.ss(A, E, model.with_sensors(ss).C @ T, 0)(1j * w)
    assert reach.signal_to_noise == pytest.approx(
        F * np.linalg.norm(lengths, axis=1).max() / 1e-3, rel=1e-8)
    assert "full-state reach" in d.summary() and "little or nothing" not in d.summary()
    # given densities carry no load, so no reach
    assert est.discrete_lqg(model, ss, 0.005, process_noise=4.0).tuning.reach is None


def test_given_densities_override_and_the_1_0_filter_is_unchanged(tbar):
    s, model, ss = tbar
    plain = est.discrete_lqg(model, ss, 0.005, process_noise=4.0)
    # process_noise alone: the white-force filter of 1.0 (no load states), said as given
    assert plain.controller.kalman.Phi.shape[0] == plain.lqr.minimal.order
    assert (plain.tuning.process_noise, plain.tuning.load_drift) == (4.0, None)
    assert plain.tuning.sources == ("given", "none") and plain.tuning.load is None
    assert "(given)" in plain.summary() and "white forces only" in plain.summary()
    both = est.discrete_lqg(model, ss, 0.005, process_noise=4.0, load_drift=10.0)
    assert both.tuning.sources == ("given", "given")
    # one given, the other from the load
    mixed = est.discrete_lqg(model, ss, 0.005, process_noise=4.0,
                             expected_load=ExpectedLoad(10.0, 1.0))
    assert mixed.tuning.process_noise == 4.0
    assert mixed.tuning.load_drift == pytest.approx(100.0 / elastic_dofs(model), rel=1e-12)
    assert mixed.tuning.sources == ("given", "expected_load")
    # the derived numbers give the same design as the same numbers given
    derived = est.discrete_lqg(model, ss, 0.005, expected_load=ExpectedLoad(10.0, 1.0))
    same = est.discrete_lqg(model, ss, 0.005, process_noise=derived.tuning.process_noise,
                            load_drift=derived.tuning.load_drift)
    np.testing.assert_array_equal(derived.K, same.K)
    np.testing.assert_array_equal(derived.L, same.L)


def test_defaults_beat_the_open_loop_on_the_tbar(tbar):
    # 10 sin t N at the T-bar's tip read by its 4 string lengths (1 mm, 200 Hz): measured
    # open 116 mm, sampled full-state LQR 59.7 mm (0.51), LQG with defaults 43.9 mm (0.38;
    # the load estimate is fed forward), white W = 4 N^2 s 65.7 mm (0.57)
    s, model, ss = tbar

    def load(t, q=None, qd=None):
        f = np.zeros((s.n_nodes, 3))
        f[2, 0] = 10.0 * np.sin(t)
        return f
    out = tc.Selection(nodes=[2, 3], axes="xz")
    r = tc.verify(s, est.discrete_lqg(model, ss, 0.005, effort=1e-2).controller, load, 6.0,
                  outputs=out)
    full = tc.verify(s, tc.dlqr(model, 0.005, effort=1e-2).controller, load, 6.0, outputs=out)
    assert r.closed.peak < 0.5 * r.open.peak
    assert r.closed.peak < 1.25 * full.closed.peak
    assert not r.closed.slack_time


@pytest.mark.slow
def test_ball_defaults_beat_the_open_loop_and_stay_near_full_state_lqr():
    """Issue 32's case (benchmarks/bench_estimator_defaults.py): the ball's 32 lengths at
    1 mm, 200 Hz, 30 sin t N, effort 0.01."""
    s = tc.equilibrium(tc.catalog.ball(damping=1.0), gamma_min=40.0).structure
    model = tc.linearize(s)
    ss = sensors(s, string_lengths=range(32), std=1e-3, rate=200.0)
    out = tc.Selection(nodes=[12])
    load = tc.catalog.ball_load(30.0)
    r = tc.verify(s, est.discrete_lqg(model, ss, 0.005, effort=0.01).controller, load, 10.0,
                  outputs=out)
    full = tc.verify(s, tc.dlqr(model, 0.005, effort=0.01).controller, load, 10.0, outputs=out)
    assert r.closed.peak < r.open.peak
    assert r.closed.peak < 1.25 * full.closed.peak


def test_bad_expected_loads_name_the_field_and_the_fix(tbar):
    s, model, ss = tbar
    with pytest.raises(ValueError, match=r"ExpectedLoad: amplitude must be a positive force "
                                         r"\[N\].*e\.g\. 30\.0 for 30 sin t N on one"):
        ExpectedLoad(-1.0, 1.0)
    with pytest.raises(ValueError, match=r"ExpectedLoad: frequency must be a positive angular "
                                         r"frequency \[rad/s\] \(1\.0 for sin t; 2 pi f"):
        ExpectedLoad(30.0, 0.0)
    with pytest.raises(ValueError, match="ExpectedLoad: frequency must be"):
        ExpectedLoad(30.0, float("nan"))
    with pytest.raises(TypeError, match="ExpectedLoad: amplitude must be"):
        ExpectedLoad("30", 1.0)
    for who, call in (("discrete_lqg", lambda **k: est.discrete_lqg(model, ss, 0.005, **k)),
                      ("lqg", lambda **k: est.lqg(model, ss, **k)),
                      ("extended_lqg", lambda **k: tc.extended_lqg(model, ss, 0.005, **k))):
        with pytest.raises(TypeError, match=rf"{who}: expected_load must be a "
                                            r"tenscontrol.ExpectedLoad\(amplitude=N, "
                                            r"frequency=rad/s\).*got tuple"):
            call(expected_load=(30.0, 1.0))
        with pytest.raises(ValueError, match=rf"{who}: process_noise must be a positive "
                                             r"spectral density \[N\^2 s\], or None to derive"):
            call(process_noise=-1.0)
    with pytest.raises(ValueError, match=r"discrete_lqg: load_drift must be a positive spectral "
                                         r"density \[N\^2/s\], or None"):
        est.discrete_lqg(model, ss, 0.005, load_drift=0.0)


def test_a_filter_slycot_refuses_is_solved_by_scipy():
    # the 2 x 4-prism tower (a mode at damping ratio 5e-9) with 0.87 N expected: slycot's
    # sg02ad refuses its reordered Schur form (SlycotArithmeticError); SciPy's DARE answers
    s = tc.equilibrium(tc.catalog.prism_tower(2, 4, damping=1.0), gamma_min=10.0).structure
    ss = sensors(s, string_lengths=range(s.n_strings), std=1e-3, rate=200.0)
    d = est.discrete_lqg(tc.linearize(s), ss, 0.005, effort=0.01,
                         expected_load=ExpectedLoad(0.5 * np.sqrt(3.0), 1.0))
    k = d.controller.kalman
    error = k.Phi @ (np.eye(k.Phi.shape[0]) - k.M @ k.Cr)
    assert np.abs(np.linalg.eigvals(error)).max() < 1.0
    # the a-priori covariance solves the filter's Riccati equation
    P, C, V = k.P, k.Cr, np.diag(ss.std[ss.signal_sensor] ** 2)
    Qd = P - k.Phi @ (P - P @ C.T @ np.linalg.solve(C @ P @ C.T + V, C @ P)) @ k.Phi.T
    assert np.allclose(Qd, Qd.T, atol=1e-9 * np.abs(P).max())
    assert np.linalg.eigvalsh(0.5 * (Qd + Qd.T)).min() > -1e-8 * np.abs(P).max()


@pytest.mark.slow
def test_the_icosahedron_lqg_says_it_cannot_help_and_verify_names_the_noise():
    """The icosahedron on a face (bench_estimator_defaults.py): 3 sin t N on its three top
    nodes, 24 lengths at 1 mm, 200 Hz. Full-state control gains 1.2 % on the default load, so
    the design says to expect little; the nonlinear loop is worse than the open loop (2.84
    against 2.16 mm, measured) and verify names the noise fed back."""
    s = tc.equilibrium(tc.catalog.icosahedron(on_face=True, damping=1.0), gamma_min=20.0,
                       configuration="free").structure
    top = [int(i) for i in np.argsort(s.nodes[:, 2])[-3:]]

    def load(t, q=None, qd=None):
        f = np.zeros((s.n_nodes, 3))
        for axis, node in enumerate(top):
            f[node, axis] = 3.0 * np.sin(t)
        return f
    ss = sensors(s, string_lengths=range(s.n_strings), std=1e-3, rate=200.0)
    d = est.discrete_lqg(tc.linearize(s), ss, 0.005, effort=0.01)
    assert d.tuning.reach.little and "little or nothing" in d.summary()
    r = tc.verify(s, d, load, 10.0, outputs=tc.Selection(nodes=[top[0]]))
    assert r.worse
    assert any(c.startswith("sensor noise fed back") for c in r.causes)
