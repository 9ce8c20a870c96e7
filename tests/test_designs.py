"""One result shape for every synthesis (issue 30, item 1): a Design holding the controller,
the design model, the Riccati solutions and the figures with python-control's names (K, S, E,
L, P), the old spellings deprecated; and gain_margin's edge cases."""

import dataclasses
import importlib.util
import warnings

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.control.sampled import DiscreteFeedback
from tenscontrol.design.discrete import sampled_weights
from tenscontrol.mechanics.sensors import sensors
from tenscontrol.studies.verification import _lqg_matrices

T = 0.005
HAS_OSQP = importlib.util.find_spec("osqp") is not None


@pytest.fixture(scope="module")
def tbar():
    s = tc.equilibrium(tc.catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
    ss = (sensors(s, string_lengths=range(s.n_strings), std=1e-3, rate=200.0)
          + sensors(s, bar_rates=range(s.n_bars), std=1e-2, rate=200.0))
    model = tc.linearize(s, outputs=tc.Selection(nodes=[2, 3], axes="xz"))
    return s, ss, model


@pytest.fixture(scope="module")
def designs(tbar):
    _, ss, model = tbar
    out = {"lqr": tc.lqr(model, effort=1e-2), "dlqr": tc.dlqr(model, T, effort=1e-2),
           "hinfsyn": tc.hinfsyn(model),
           "lqg": tc.lqg(model, ss, process_noise=4.0, effort=1e-2),
           "discrete_lqg": tc.discrete_lqg(model, ss, T, process_noise=4.0, delay=0.001,
                                           effort=1e-2),
           "extended_lqg": tc.extended_lqg(model, ss, T, process_noise=4.0, effort=1e-2)}
    if HAS_OSQP:
        out["mpc"] = tc.mpc(model, T, gamma_min=1.0, effort=1e-2)
    return out


def test_every_synthesis_returns_a_design_with_the_common_fields(designs):
    for name, d in designs.items():
        assert isinstance(d, tc.Design), name
        assert hasattr(d.controller, "strings"), name
        with warnings.catch_warnings():
            warnings.simplefilter("error")          # the new names warn about nothing
            assert d.E.ndim == 1 and d.E.size > 0, name
            assert d.minimal.order == 4, name       # the T-bar's elastic order
            if d.K is not None:
                assert d.K.shape[0] == d.controller.strings.size, name
        assert "\n" not in repr(d) and repr(d).startswith(type(d).__name__ + "(")
        assert str(d) == d.summary() and d.summary().count("\n") >= 3


def test_lqr_eigenvalues_are_those_of_the_reduced_loop(designs):
    d = designs["lqr"]
    A = np.asarray(d.minimal.sys.A)
    B = np.asarray(d.minimal.sys.B)[:, :d.K.shape[0]]
    ref = np.linalg.eigvals(A - B @ d.K_reduced)
    assert np.abs(np.sort_complex(d.E) - np.sort_complex(ref)).max() < 1e-9 * np.abs(ref).max()
    # S solves the Riccati equation: the cost-to-go of z is z^T S_r z, S = L^T S_r L
    assert np.allclose(d.S, d.S.T) and np.linalg.eigvalsh(d.S).min() > -1e-12 * np.abs(d.S).max()


def test_dlqr_keeps_its_riccati_solution_and_cartesian_gain(designs):
    d = designs["dlqr"]
    zoh = d.model
    # the exact sampled-data weights the default cost="exact" designs with (Van Loan), and the
    # gain from S (python-control's dlqr with a cross term: K = (R + B^T S B)^-1 (B^T S A + N^T))
    A, B = np.asarray(d.minimal.sys.A), np.asarray(d.minimal.sys.B)[:, :d.K.shape[0]]
    T_ = d.minimal.basis
    _, R, N = sampled_weights(A, B, T_.T @ d.continuous.Q @ T_, d.continuous.R, zoh, "exact")
    K = np.linalg.solve(R + zoh.Gamma0.T @ d.S @ zoh.Gamma0,
                        zoh.Gamma0.T @ d.S @ zoh.Phi + N.T)
    np.testing.assert_allclose(K, d.K_reduced, rtol=1e-8, atol=1e-10 * np.abs(K).max())
    np.testing.assert_allclose(d.K, d.K_reduced @ d.minimal.left_inverse, rtol=1e-12)
    np.testing.assert_allclose(d.controller.DK, d.K, rtol=1e-12)


def test_lqg_and_hinf_eigenvalues_are_their_loops(designs):
    # LQG: the loop on [z; z_hat] (tenscontrol.estimation.lqg.closed_loop)
    from tenscontrol.estimation.lqg import closed_loop
    d = designs["lqg"]
    ref = np.linalg.eigvals(np.asarray(closed_loop(d).A))
    assert np.abs(np.sort_complex(d.E) - np.sort_complex(ref)).max() < 1e-8 * np.abs(ref).max()
    h = designs["hinfsyn"]
    ref = np.linalg.eigvals(np.asarray(h.closed_loop.A))
    assert np.abs(np.sort_complex(h.E) - np.sort_complex(ref)).max() == 0.0
    assert h.E.real.max() < 0 and h.K is h.controller.K


def test_discrete_lqg_eigenvalues_are_the_sampled_loops(designs):
    # separation principle checked against the whole loop: the DiscreteLQG written as a
    # linear sampled controller (verify's closed form) around the ZOH plant
    d = designs["discrete_lqg"]
    c = d.controller
    AK, BK, CK, DK = _lqg_matrices(c)
    law = DiscreteFeedback(AK, BK, CK, DK, c.kalman.measurement.q_ref, c.strings, c.gamma_ref,
                           c.kind, c.period, c.delay, measurement=c.kalman.measurement)
    loop = np.linalg.eigvals(np.asarray(tc.discrete_closed_loop(d.minimal, law).A))
    assert d.spectral_radius == pytest.approx(np.abs(loop).max(), rel=1e-8)
    for z in d.E[np.abs(d.E) > 1e-6]:
        assert np.abs(loop - z).min() < 1e-7, z
    # L is the filter's correction gain, P its a-priori covariance
    np.testing.assert_array_equal(d.L, c.kalman.M)
    np.testing.assert_array_equal(d.P, c.kalman.P)


def test_extended_lqg_reuses_the_discrete_lqg_design(designs):
    d = designs["extended_lqg"]
    lin = d.linear
    assert isinstance(lin, tc.design.DiscreteLQGDesign)
    r = lin.minimal.order
    np.testing.assert_array_equal(d.K, lin.K[:, :r] @ lin.minimal.left_inverse)
    np.testing.assert_array_equal(d.controller.Ku, lin.K[:, -lin.controller.strings.size:])
    np.testing.assert_array_equal(d.E, lin.E)


@pytest.mark.skipif(not HAS_OSQP, reason="mpc needs OSQP")
def test_mpc_design_holds_the_unconstrained_design(designs):
    d = designs["mpc"]
    assert isinstance(d.dlqr, tc.design.DiscreteLQRDesign)
    # the terminal weight is the discrete Riccati solution of the same sampled model (mpc
    # solves it unscaled, dlqr scaled: measured 2.5e-15 apart, 2e-12 of the largest entry)
    np.testing.assert_allclose(d.S, d.dlqr.S, rtol=1e-8, atol=1e-9 * np.abs(d.S).max())
    with pytest.warns(DeprecationWarning, match="PredictiveController.left_inverse"):
        left = d.controller.L
    np.testing.assert_array_equal(left, d.minimal.left_inverse)


def test_old_spellings_warn_and_still_answer(designs, tbar):
    _, _, model = tbar
    lqr, lqg = designs["lqr"], designs["discrete_lqg"]
    with pytest.warns(DeprecationWarning, match=r"LQRDesign\.E"):
        poles = lqr.poles
    np.testing.assert_array_equal(poles, lqr.E)
    with pytest.warns(DeprecationWarning, match=r"discrete_lqg\(\.\.\.\)\.controller\.kalman"):
        kalman = lqg.kalman
    assert kalman is lqg.controller.kalman
    with pytest.warns(DeprecationWarning, match=r"extended_lqg\(\.\.\.\)\.controller\.P0"):
        P0 = designs["extended_lqg"].P0
    np.testing.assert_array_equal(P0, designs["extended_lqg"].P)
    with pytest.warns(DeprecationWarning, match="ElasticModel.left_inverse"):
        left = tc.elastic_model(model).L
    np.testing.assert_array_equal(left, tc.elastic_model(model).left_inverse)
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        lqg.nonsense
    with pytest.raises(AttributeError, match="no attribute 'kalman'"):
        lqr.kalman                          # only the designs that were controllers forward


def test_simulate_verify_and_save_take_a_design(designs, tbar, tmp_path):
    s, _, _ = tbar
    load = tc.doublet(s, tc.Selection(2, "z"), 1.0, half_period=0.02)
    for name in ("lqr", "dlqr", "discrete_lqg"):
        d = designs[name]
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)   # unwrapped, not forwarded
            a = tc.simulate(s, 0.04, loads=load, controller=d)
        b = tc.simulate(s, 0.04, loads=load, controller=d.controller)
        np.testing.assert_array_equal(a.nodes, b.nodes)
        tc.save_controller(d, tmp_path / f"{name}.npz")
        loaded = tc.load_controller(tmp_path / f"{name}.npz")
        assert type(loaded) is type(d.controller)
    np.testing.assert_array_equal(tc.load_controller(tmp_path / "lqr.npz").K,
                                  designs["lqr"].controller.K)
    law = tc.discretize(designs["lqr"], 0.01)          # discretize takes the design too
    np.testing.assert_array_equal(law.DK, designs["lqr"].K)
    wrapped = tc.allocated(designs["dlqr"], s, gamma_min=1.0)
    assert wrapped.controller is designs["dlqr"].controller
    t = np.linspace(0.0, 0.04, 9)
    report = tc.verify(s, designs["discrete_lqg"], load, 0.04, t_eval=t)
    assert report.closed_loop.control.sample_times.size == 8


def test_gain_margin_refuses_upper_at_most_one_and_is_zero_when_unstable(designs):
    d = designs["dlqr"]
    with pytest.raises(ValueError, match=r"upper must be a loop gain > 1.*got 0.5"):
        tc.gain_margin(d.minimal, d.controller, upper=0.5)
    with pytest.raises(ValueError, match="upper must be a loop gain > 1"):
        tc.gain_margin(d.minimal, d.controller, upper=1.0)
    # positive feedback of the LQR gain: unstable at the design gain (before: 1.0)
    flipped = dataclasses.replace(d.controller, DK=-d.controller.DK)
    rho = np.abs(np.linalg.eigvals(np.asarray(tc.discrete_closed_loop(d.minimal, flipped).A)))
    assert rho.max() > 1.0
    assert tc.gain_margin(d.minimal, flipped) == 0.0


def test_gain_margin_brackets_the_first_unstable_gain(designs, tbar):
    # a long period and delay: the loop goes unstable at a moderate gain
    _, _, model = tbar
    d = tc.dlqr(model, 0.05, delay=0.02, effort=1e-2)

    def radius(g):
        return np.abs(np.linalg.eigvals(np.asarray(
            tc.discrete_closed_loop(d.minimal, d.controller, g).A))).max()
    g = tc.gain_margin(d.minimal, d)        # a design: its controller
    assert 1.0 < g < 100.0
    assert radius(g) < 1.0 < radius(g * (1 + 2e-3))
    low = tc.gain_margin(d.minimal, d.controller, upper=0.5 * (1.0 + g))
    assert low == 0.5 * (1.0 + g)           # no instability below upper: upper
