"""The passive MPC's floor margin for an unknown load (mpc(expected_load=...), issue 30 item 3):
the margin against a brute-force oracle on the full Cartesian model, the QP's rows with and
without it, bad input, and (slow) the 3-prism's floor over the whole run under its doublet."""

import numpy as np
import pytest
import scipy.linalg

import tenscontrol as tc
from tenscontrol.estimation import tuning
from tenscontrol.model import loads

pytest.importorskip("osqp")

PERIOD, FLOOR, DOUBLET = 0.005, 5.0, 18.75
# the reduced model's margin against the full Cartesian model's (an independent expm of
# [[A, E], [0, 0]] t on all 2 nq states, the law's gradient from the linearization): the two
# agree to 4e-14 N/m of 5.3 measured (round-off of the expm and of the reduction's basis);
# 1e-9 relative still catches a wrong time, a wrong force map or a missing mode
REDUCTION = 1e-9
# the first-order margin against the plant's own nonlinear response to the worst force of
# 0.01 N: the error is second order in the motion, measured 4.4e-7 of the margin (growing
# with F: 4.4e-5 at 1 N, 8.2e-4 at the doublet's 18.75 N, where the plant's fall exceeds the
# margin by 4.4e-3 N/m); 1e-5 of it catches a sign, a missing factor or the wrong maximizer
FIRST_ORDER = 1e-5


@pytest.fixture(scope="module")
def prism():
    """The 3-prism of benchmarks/bench_mpc.py's floor table (outputs the top nodes 3-5), its
    passive model, and its MPC without and with the doublet's load as expected_load."""
    s = tc.equilibrium(tc.catalog.prism(3, damping=1.0), gamma_min=10.0).structure
    model = tc.linearize(s, kind="passive", outputs=tc.Selection(nodes=[3, 4, 5]))
    plain = tc.mpc(model, PERIOD, horizon=10, gamma_min=FLOOR, effort=1e-2).controller
    loaded = tc.mpc(model, PERIOD, horizon=10, gamma_min=FLOOR, effort=1e-2,
                    expected_load=tc.ExpectedLoad(DOUBLET, 1.0)).controller
    return s, model, plain, loaded


def _law_change_per_force(model, strings, t):
    """The commanded strings' law change per unit nodal force held for t [s], (nu, nq) [N/m
    per N], on the full Cartesian model: the state's response from one expm of the augmented
    matrix, then the linearization's law gradient."""
    n2, nq = model.A.shape[0], model.A.shape[0] // 2
    big = np.zeros((n2 + nq, n2 + nq))
    big[:n2, :n2], big[:n2, n2:] = model.A, model.E
    response = scipy.linalg.expm(big * t)[:n2, n2:]
    return model.force_density_gradient[strings] @ response[:nq]


@pytest.mark.parametrize("delay", [0.0, 0.5 * PERIOD])
def test_the_margin_is_the_worst_law_change_over_the_force_ball(prism, delay):
    s, model, _, _ = prism
    m = tc.mpc(model, PERIOD, horizon=10, gamma_min=FLOOR, effort=1e-2, delay=delay,
               expected_load=tc.ExpectedLoad(DOUBLET, 1.0)).controller
    times = delay + PERIOD * np.arange(0, m.hold_points + 1) / m.hold_points
    rng = np.random.default_rng(11)
    directions = rng.normal(size=(2000, model.E.shape[1]))
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    assert m.load_margin.shape == (m.hold_points + 1, m.strings.size)
    for j, t in enumerate(times):
        per_force = _law_change_per_force(model, m.strings, t)
        drawn = np.abs(DOUBLET * directions @ per_force.T).max(axis=0)      # (nu,)
        # the analytic maximizer of |c_i^T Gamma f| over |f| <= F: f along the row itself
        norms = np.linalg.norm(per_force, axis=1)
        best = np.array([DOUBLET * abs(row @ row) / n if n > 0 else 0.0
                         for row, n in zip(per_force, norms)])
        scale = max(np.abs(best).max(), 1.0)
        np.testing.assert_allclose(m.load_margin[j], best, atol=REDUCTION * scale)
        assert np.all(drawn <= m.load_margin[j] + REDUCTION * scale)
    # the hold's end: the random directions come near the worst (the margin is not loose;
    # the base strings, between fixed nodes, have none)
    assert np.all(drawn >= 0.5 * m.load_margin[-1] - REDUCTION * scale)
    if delay == 0.0:
        assert np.all(m.load_margin[0] == 0.0)        # the sampled state is measured
    assert np.any(m.load_margin[-1] > 1.0)            # the prism's verticals: 5.3 N/m


def test_the_margin_is_the_plants_first_order_response(prism):
    # the open structure (no command) from rest under the worst constant force for the most
    # loaded string: the simulated law's fall over one period is the margin, to second order
    s, model, _, m = prism
    i = int(np.argmax(m.load_margin[-1]))
    per_force = _law_change_per_force(model, m.strings, PERIOD)[i]
    small = 0.01
    f = -small * per_force / np.linalg.norm(per_force)
    run = tc.simulate(s, PERIOD, loads=lambda t, q, qd: f.reshape(-1, 3),
                      t_eval=np.array([0.0, PERIOD]), max_step=1e-4)
    a, b = s.string_nodes[m.strings[i]]
    length = np.linalg.norm(run.nodes[:, b] - run.nodes[:, a], axis=1)
    k, l0 = s.string_stiffness[m.strings[i]], s.string_rest_lengths[m.strings[i]]
    fall = k * (l0 / length[1] - l0 / length[0])
    expected = m.load_margin[-1, i] * small / DOUBLET
    assert abs(fall - expected) <= FIRST_ORDER * expected


@pytest.mark.parametrize("delay", [0.0, 0.5 * PERIOD])
def test_the_floor_rows_are_raised_by_the_margin_and_nothing_else(prism, delay):
    s, model, _, _ = prism
    plain, loaded = (tc.mpc(model, PERIOD, horizon=10, gamma_min=FLOOR, effort=1e-2,
                            delay=delay, expected_load=e).controller
                     for e in (None, tc.ExpectedLoad(DOUBLET, 1.0)))
    assert not np.any(plain.load_margin)
    rng = np.random.default_rng(2)
    free = s.free_coordinates
    q = s.nodes.reshape(-1).copy()
    q[free] += 0.01 * rng.normal(size=free.size)
    qd = np.zeros_like(q)
    qd[free] = 0.3 * rng.normal(size=free.size)
    u_prev = rng.uniform(-1.0, 1.0, plain.strings.size)
    lo0, hi0 = plain.bounds(q, qd, u_prev)
    lo1, hi1 = loaded.bounds(q, qd, u_prev)
    nu, N, M = plain.strings.size, plain.horizon, plain.hold_points
    np.testing.assert_array_equal(hi1, hi0)
    np.testing.assert_allclose(lo1[:nu] - lo0[:nu], loaded.load_margin[0], atol=1e-12)
    np.testing.assert_array_equal(lo1[nu:N * nu], lo0[nu:N * nu])     # later moves: unchanged
    np.testing.assert_allclose(lo1[N * nu:(N + M) * nu] - lo0[N * nu:(N + M) * nu],
                               loaded.load_margin[1:].reshape(-1), atol=1e-12)
    # the first move meets the raised rows: the hold prediction keeps the margin above the floor
    u = loaded.update(1, PERIOD, q, qd, u_prev)[0]
    _, predicted = loaded.hold_prediction(q, qd, u_prev, u)
    assert np.all(predicted - loaded.load_margin[1:] >= FLOOR - 1e-6 * 10.0)
    assert "load margin" in loaded.summary() and "load margin  none" not in loaded.summary()


def test_the_summary_names_the_strings_whose_margin_cannot_be_met(prism):
    # string 3 (gamma_ref 10 N/m, margin 5.34 N/m) with gamma_min 9 and gamma_max 12 N/m:
    # 9 + 5.34 > 12, no command meets its rows inside the hold
    s, _, _, loaded = prism
    assert not loaded.margin_unmet.any()
    capped = tc.model.editing.with_members(s, "string", [3], {"gamma_max": 12.0})
    model = tc.linearize(capped, kind="passive", outputs=tc.Selection(nodes=[3, 4, 5]))
    lo = np.full(9, FLOOR)
    lo[3] = 9.0
    m = tc.mpc(model, PERIOD, gamma_min=lo, effort=1e-2,
               expected_load=tc.ExpectedLoad(DOUBLET, 1.0)).controller
    assert np.flatnonzero(m.margin_unmet).tolist() == [3]
    assert "floor + load margin above gamma_max: string 3 (margin 5.34 N/m)" in m.summary()


def test_control_kind_has_no_margin(prism):
    s, _, _, _ = prism
    model = tc.linearize(s, kind="control", outputs=tc.Selection(nodes=[3, 4, 5]))
    m = tc.mpc(model, PERIOD, gamma_min=FLOOR, effort=1e-2,
               expected_load=tc.ExpectedLoad(DOUBLET, 1.0)).controller
    assert m.load_margin.shape == (0, m.strings.size)


def test_bad_expected_load(prism):
    _, model, _, _ = prism
    with pytest.raises(TypeError, match=r"mpc: expected_load must be a tenscontrol.ExpectedLoad"
                                        r"\(amplitude=N, frequency=rad/s\).*got float 18.75"):
        tc.mpc(model, PERIOD, gamma_min=FLOOR, expected_load=18.75)
    with pytest.raises(ValueError, match="ExpectedLoad: amplitude must be a positive force"):
        tc.ExpectedLoad(-18.75, 1.0)


def test_expected_load_lives_in_the_model_layer_and_is_still_where_it_was():
    assert tuning.ExpectedLoad is loads.ExpectedLoad is tc.ExpectedLoad
    assert tc.estimation.ExpectedLoad is loads.ExpectedLoad


# the 3-prism's passive MPC under its doublet (18.75 N: twice its LQR's slackening amplitude,
# bisection in benchmarks/bench_mpc.py) with that amplitude as expected_load: least applied
# force density over the whole run, from the simulated string lengths at every output time
# and just before every switch, measured 5.0000 N/m without delay (the base strings, between
# fixed nodes, held at the floor; 2.4273 without the margin) and 5.6334 with 2.5 ms (1.2138
# without). The tolerance is the first move's projection onto its rows (1e-9 of the largest
# gamma_ref, 17.3 N/m) and rounding; the margin's neglected second-order terms get none:
# the run shows they did not take any string below the floor
PRISM_MARGIN_TOLERANCE = 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.0, 0.5 * PERIOD])
def test_the_floor_over_the_whole_run_with_the_margin(prism, delay):
    s, model, _, _ = prism
    m = tc.mpc(model, PERIOD, horizon=10, gamma_min=FLOOR, effort=1e-2, delay=delay,
               expected_load=tc.ExpectedLoad(DOUBLET, 1.0)).controller
    dense = 20
    t = np.linspace(0.0, 2.5, 500 * dense + 1)
    run = tc.simulate(s, 2.5, loads=tc.doublet(s, tc.Selection(3, "x"), DOUBLET), controller=m,
                      t_eval=t, max_step=5e-3)
    c = run.control
    # the oracle, apart from the controller and the record: the law from the simulated
    # lengths plus the command acting at each output time, and the one acting just before
    i, j = s.string_nodes[m.strings].T
    length = np.linalg.norm(run.nodes[:, j] - run.nodes[:, i], axis=2)
    k, l0 = s.string_stiffness[m.strings], s.string_rest_lengths[m.strings]
    law = np.where(length > l0, k * (1.0 - l0 / length), 0.0)
    starts = c.sample_times + c.delay
    acting = np.searchsorted(starts, t + 1e-12, side="right") - 1
    before = np.searchsorted(starts, t - 1e-12, side="right") - 1
    now = np.where((acting >= 0)[:, None], c.sample_u[np.maximum(acting, 0)], 0.0)
    held = np.where((before >= 0)[:, None], c.sample_u[np.maximum(before, 0)], 0.0)
    applied, just_before = np.maximum(law + now, 0.0), np.maximum(law + held, 0.0)
    np.testing.assert_allclose(applied, c.applied, atol=1e-9)       # the record agrees
    assert min(applied.min(), just_before.min()) >= FLOOR - PRISM_MARGIN_TOLERANCE
