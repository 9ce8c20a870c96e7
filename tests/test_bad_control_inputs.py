"""Bad inputs on the control surfaces (issue 30, item 6): saved controllers checked on load,
controllers checked against the structure they run on, horizons and sample counts bounded,
unobservable sensor sets warned of. benchmarks/fuzz_control_inputs.py tries the same kinds of
input and counts the outcomes."""

import json
import re

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.mechanics.sensors import sensors

T = 0.005


def _law(x):
    return getattr(x, "controller", x)


@pytest.fixture(scope="module")
def tbar():
    s = tc.equilibrium(tc.catalog.tbar(damping=1.0), gamma_min=10.0).structure
    model = tc.linearize(s)
    ss = (sensors(s, string_lengths=range(s.n_strings), std=1e-3, rate=200.0)
          + sensors(s, bar_rates=range(s.n_bars), std=1e-2, rate=200.0))
    return {"s": s, "model": model, "ss": ss, "sf": _law(tc.lqr(model)),
            "df": _law(tc.dlqr(model, T)),
            "dlqg": _law(tc.discrete_lqg(model, ss, T, process_noise=4.0)),
            "lqg": _law(tc.lqg(model, ss, process_noise=4.0))}


def _edited(controller, path, key, value):
    """`controller` saved to `path` with entry `key` (``header.<name>`` for a header field)
    set to `value`, or to value(array) if callable."""
    tc.save_controller(controller, path)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    header = json.loads(str(arrays["header"]))
    if key.startswith("header."):
        header[key[len("header."):]] = value
    else:
        x = np.array(arrays[key], dtype=float if arrays[key].dtype.kind == "f" else None)
        if callable(value):
            x = value(x)
        else:
            x.flat[0] = value
        arrays[key] = x
    arrays["header"] = np.array(json.dumps(header))
    np.savez(path, **arrays)
    return path


def _negative_diagonal(P):
    P = P.copy()
    P[0, 0] = -1.0
    return P


def _asymmetric(P):
    P = P.copy()
    P[0, 1] += 1.0
    return P


EDITS = [  # (controller, entry, value, what the message says)
    ("dlqg", "K", np.nan, r"entry 'K' must be finite, got nan at index \(0, 0\)"),
    ("dlqg", "kalman_M", np.inf, r"entry 'kalman_M' must be finite, got inf"),
    ("dlqg", "header.kalman_period", 0.0, r"gives kalman_period = 0.0, but the controller's "
                                          r"period is 0.005"),
    ("dlqg", "header.period", 0.01, r"gives kalman_period = 0.005, but the controller's "
                                    r"period is 0.01"),
    ("dlqg", "header.kalman_delay", 0.001, r"gives kalman_delay = 0.001"),
    ("dlqg", "header.period", float("nan"), r"entry 'header': period must be a positive "),
    ("dlqg", "header.delay", 0.05, r"entry 'header': delay must satisfy 0 <= delay < period"),
    ("dlqg", "sensors_std", -1.0, r"entry 'sensors_std' must be >= 0 for every sensor, got "
                                  r"-1.0 for sensor 0"),
    ("dlqg", "sensors_std", 0.0, r"entry 'sensors_std' must be > 0"),
    ("dlqg", "sensors_rate", 0.0, r"entry 'sensors_rate' must be > 0"),
    ("dlqg", "sensors_rate", 10.0, r"sensor 0 10 Hz, slower than the controller's "
                                   r"1/period = 200 Hz"),
    ("dlqg", "sensors_quantization", -1.0, r"entry 'sensors_quantization' must be >= 0"),
    ("dlqg", "kalman_P", _negative_diagonal, r"entry 'kalman_P' must be positive "
                                             r"semidefinite"),
    ("dlqg", "kalman_P", _asymmetric, r"entry 'kalman_P' must be a symmetric covariance"),
    ("dlqg", "strings", 1, r"entry 'strings' must hold distinct string indices >= 0"),
    ("df", "header.period", 0.0, r"entry 'header': period must be a positive number"),
    ("df", "DK", np.nan, r"entry 'DK' must be finite"),
    ("sf", "K", np.inf, r"entry 'K' must be finite"),
    ("sf", "gamma_ref", np.nan, r"entry 'gamma_ref' must be finite"),
    ("lqg", "AK", np.nan, r"entry 'AK' must be finite"),
    ("lqg", "sensors_std", -1.0, r"entry 'sensors_std' must be >= 0"),
]


@pytest.mark.parametrize("which, key, value, message", EDITS,
                         ids=[f"{w}-{k}-{v if not callable(v) else v.__name__}"
                              for w, k, v, _ in EDITS])
def test_an_edited_controller_file_is_refused_naming_the_entry(tbar, tmp_path, which, key,
                                                               value, message):
    # each of these loaded and ran before (or failed in the simulation with "non-finite
    # values at sample 0"); every message names the file, the entry and the fix
    path = _edited(tbar[which], tmp_path / "bad.npz", key, value)
    with pytest.raises(ValueError, match=r"bad.npz: .*" + message + r".*"):
        tc.load_controller(path)
    if not key.startswith("header."):
        with pytest.raises(ValueError, match="save the controller again from its design"):
            tc.load_controller(path)


@pytest.mark.parametrize("which", ["sf", "df", "dlqg", "lqg"])
def test_an_unedited_file_still_loads(tbar, tmp_path, which):
    path = tc.save_controller(tbar[which], tmp_path / "good.npz")
    assert type(tc.load_controller(path)) is type(tbar[which])


def test_a_controller_with_a_nan_gain_is_not_saved(tbar, tmp_path):
    # a DiscreteLQG takes its matrices as given (StateFeedback refuses NaN itself)
    import dataclasses
    c = tbar["dlqg"]
    K = c.K.copy()
    K[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"save_controller: entry 'K' must be finite, got nan "
                                         r"at index \(1, 2\)"):
        tc.save_controller(dataclasses.replace(c, K=K), tmp_path / "k.npz")
    assert not (tmp_path / "k.npz").exists()


@pytest.fixture(scope="module")
def prism():
    return tc.equilibrium(tc.catalog.prism(3), gamma_min=10.0).structure


@pytest.mark.parametrize("which, where", [("sf", "q_ref"), ("df", "q_ref"),
                                          ("lqg", "measurement.q_ref"),
                                          ("dlqg", "kalman.measurement.q_ref")])
def test_a_controller_of_another_structure_is_refused_naming_both_sizes(tbar, prism, which,
                                                                        where):
    # before: "operands could not be broadcast together with shapes (18,) (12,)" from inside
    # the first command (StateFeedback, DiscreteFeedback)
    with pytest.raises(ValueError, match=rf"controller: {type(tbar[which]).__name__} was "
                                         rf"designed for a structure of 4 nodes \({where} has "
                                         r"12 coordinates\), the structure simulated has 6 "
                                         r"nodes \(18\); design it on this structure"):
        tc.simulate(prism, 0.01, controller=tbar[which])


def test_verify_refuses_a_controller_of_another_structure(tbar, prism):
    with pytest.raises(ValueError, match=r"verify: the controller was designed for 4 nodes, "
                                         r"the structure has 6"):
        tc.verify(prism, tbar["sf"], None, 0.01)


@pytest.mark.parametrize("period, t_final, samples", [(1e-7, 1.0, "10,000,001"),
                                                      (1e-9, 0.01, "10,000,001")])
def test_a_sample_count_above_max_steps_is_refused_before_the_run(tbar, period, t_final,
                                                                  samples):
    # before: discretize(K, 1e-7) then simulate for 1 s built the list of 10 million sample
    # events and stepped through them (about 3000 samples per second: an hour)
    c = tc.discretize(tbar["sf"], period)
    with pytest.raises(ValueError, match=rf"controller: period = {period:g} s over t_final = "
                                         rf"{t_final:g} s is {samples} samples, each at least "
                                         r"one integration step: more than max_steps = "
                                         r"1,000,000; raise the period"):
        tc.simulate(tbar["s"], t_final, controller=c)
    with pytest.raises(ValueError, match=r"more than max_steps = 1,000"):
        tc.simulate(tbar["s"], 0.02, controller=tc.discretize(tbar["sf"], 1e-5), max_steps=1000)


@pytest.mark.parametrize("horizon, error, message", [
    (2.5, TypeError, r"mpc: horizon must be an integer >= 1 and <= 1000, got float 2.5"),
    (True, TypeError, r"got bool True"),
    (0, ValueError, r"must be an integer >= 1 and <= 1000, got 0"),
    (10**9, ValueError, r"must be an integer >= 1 and <= 1000, got 1000000000")])
def test_mpc_horizon_is_a_bounded_integer(tbar, horizon, error, message):
    # before: 2.5 became 2, 10**9 asked numpy for 119 GiB
    pytest.importorskip("osqp")
    with pytest.raises(error, match=message):
        tc.mpc(tbar["model"], T, horizon=horizon)


def test_mpc_horizon_whose_qp_would_not_fit_names_the_largest_that_does():
    from types import SimpleNamespace

    from tenscontrol.design.predictive import MAX_QP_BYTES, _qp_bytes, check_horizon
    # a model of 30 free coordinates and 40 strings (the sizes only): 1000 x 40 commands,
    # 8 (1001 60 40000 + 8 40000^2) bytes = 113 GiB
    model = SimpleNamespace(structure=SimpleNamespace(free_coordinates=np.arange(30)),
                            A=np.zeros((2, 2)), B=np.zeros((2, 40)))
    with pytest.raises(ValueError, match=r"mpc: horizon = 1000 samples would make a QP of "
                                         r"about 113 GiB \(1000 x 40 commands, 60 states\), "
                                         r"more than 1 GiB; use a horizon <= (\d+)") as info:
        check_horizon(model, 1000)
    fits = int(info.value.args[0].rsplit("<= ", 1)[1].split()[0])
    assert _qp_bytes(fits, 60, 40) <= MAX_QP_BYTES < _qp_bytes(fits + 1, 60, 40)
    assert check_horizon(model, fits) == fits


@pytest.mark.parametrize("design", ["lqg", "discrete_lqg", "extended_lqg"])
def test_an_unobservable_sensor_set_is_warned_of_with_the_rank(tbar, design):
    # string 0's length does not change to first order on the T-bar's elastic modes
    # (test_estimation.py): tenscontrol.observability gives rank 0 of 4. Before: no word
    one = sensors(tbar["s"], string_lengths=[0], std=1e-3, rate=1000.0)
    args = (tbar["model"], one) if design == "lqg" else (tbar["model"], one, T)
    who = "lqg" if design == "lqg" else "discrete_lqg"
    with pytest.warns(UserWarning, match=rf"{who}: the sensors observe 0 of the 4 modes of the "
                                         r"elastic model \(observability rank 0 < 4\).*add "
                                         r"sensors \(tenscontrol.place_sensors"):
        getattr(tc, design)(*args, process_noise=4.0)
    assert tc.observability(tbar["model"], one).rank == 0


def test_an_observable_sensor_set_gives_no_warning(tbar):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tc.lqg(tbar["model"], tbar["ss"], process_noise=4.0)
    assert tc.observability(tbar["model"], tbar["ss"]).observable


def _load_on_free(s, force):
    loads = np.zeros(3 * s.n_nodes)
    loads[s.free_coordinates[0]] = force
    return loads.reshape(-1, 3)


def test_a_load_of_1e308_names_the_overflowing_energy_scale(tbar):
    # before: ZeroDivisionError: float division by zero (mechanics/scales.py, V = L / T with
    # T = L sqrt(M / inf) = 0)
    match = (r"tbar-stedy: the energy scale E .* overflows: prestress .* J \+ gravity 0 J \+ "
             r"loads inf J \(largest load 1e\+308 N.*\); the loads term is near the float limit")
    with pytest.raises(ValueError, match=match):
        tc.simulate(tbar["s"], 0.01, loads=_load_on_free(tbar["s"], 1e308))
    with pytest.raises(ValueError, match=match):
        tc.static_equilibrium(tbar["s"], loads=_load_on_free(tbar["s"], 1e308))


def test_loads_whose_newton_steps_overflow_are_named(tbar):
    # before: SciPy's "array must not contain infs or NaNs"; 1e100 N still answers (residual
    # 1e-17 of the load scale)
    with pytest.raises(ValueError, match=r"static_equilibrium: the loads on tbar-stedy \(largest "
                                         r"1e\+300 N on a free coordinate\) make the Newton "
                                         r"steps overflow"):
        tc.static_equilibrium(tbar["s"], loads=_load_on_free(tbar["s"], 1e300))


def test_the_load_sum_of_the_energy_scale_does_not_overflow_below_1e308():
    from tenscontrol.mechanics.scales import _load_sum
    # |(3e200, 4e200, 0)| = 5e200: the squares (1e401) would overflow
    assert _load_sum(np.array([[3e200, 4e200, 0.0], [0.0, 0.0, 1.0]])) == pytest.approx(5e200)
    assert _load_sum(np.zeros((2, 3))) == 0.0


def _double(p):
    return {"b": 2 * p["a"]}


def test_a_resumed_study_removes_stale_part_files_only(tmp_path):
    import os
    import time

    from tenscontrol.studies.store import STALE_PART_SECONDS
    cases = tc.grid({"a": [1.0, 2.0]})
    out = tmp_path / "study"
    tc.run_study(_double, cases, out=out, progress=False)
    (out / "cases" / "case-000001.json").unlink()
    stale = out / "cases" / "case-000001.json.4194303.0a1b2c3d.part"   # killed an hour ago
    fresh = out / "cases" / "case-000000.json.77.0a1b2c3e.part"        # being written now
    for part in (stale, fresh):
        part.write_text('{"trunc')
    old = time.time() - 3600
    os.utime(stale, (old, old))
    assert STALE_PART_SECONDS < 3600
    result = tc.run_study(_double, cases, out=out, progress=False)
    assert not stale.exists() and fresh.exists()   # another process's live part is left
    assert (out / "cases" / "case-000001.json").exists()
    assert [r.figures["b"] for r in result.records] == [2.0, 4.0]


def _reference_pairs(bars, free, rank):
    """The bar pairs of normal_pattern as the loop of tenscontrol 1.0 formed them."""
    at_node = {}
    for k, (i, j) in enumerate(bars):
        for node, sign in ((int(i), -1.0), (int(j), 1.0)):
            if free[3 * node:3 * node + 3].any():
                at_node.setdefault(node, []).append((k, sign))
    out = [(k, m, node, sk * sm) for node, members in at_node.items()
           for k, sk in members for m, sm in members if rank[k] >= rank[m]]
    return [np.array(c) for c in zip(*out)] if out else [np.zeros(0)] * 4


@pytest.mark.parametrize("make", [lambda: tc.catalog.tbar(), lambda: tc.catalog.ball(),
                                  lambda: tc.catalog.prism_tower(6, 4),
                                  lambda: tc.catalog.icosahedron(on_face=True)])
def test_the_vectorized_normal_pattern_pairs_are_the_loops_in_its_order(make):
    # the kernels sum the pairs in this order: the same order keeps the results to the bit
    from tenscontrol.mechanics.rigid.sparse import _node_pairs
    s = make()
    free = np.zeros(3 * s.n_nodes, dtype=bool)
    free[s.free_coordinates] = True
    rank = np.random.default_rng(1).permutation(s.n_bars)
    for got, want in zip(_node_pairs(s.bar_nodes, free, rank),
                         _reference_pairs(s.bar_nodes, free, rank)):
        np.testing.assert_array_equal(got, want)


def test_a_large_structure_with_a_fully_fixed_bar_skips_the_dense_rank_test(monkeypatch):
    # 3003 nodes, bar 0 with both ends fixed: the dense SVD of 3000 bars x 9000 free
    # coordinates took 56 s; the bars with no free coordinate are found directly
    import dataclasses

    from tenscontrol.mechanics.rigid import model as rigid
    s = tc.catalog.prism_tower(1000, 3)
    fixed = np.array(s.fixed, dtype=bool).copy()
    fixed[list(s.bar_nodes[0])] = True
    s = dataclasses.replace(s, fixed=fixed)

    def dense(structure):
        raise AssertionError("the dense rank test ran")
    monkeypatch.setattr(rigid, "_independent_bars", dense)
    with pytest.warns(UserWarning, match=r"the length constraints of bar 0 \(nodes 0->3\) are "
                                         r"redundant"):
        model = rigid.rigid_model(s)
    assert model.dropped_bars == (0,)
    assert model.constrained_bars.tolist() == list(range(1, s.n_bars))


def test_a_dense_rank_test_too_long_to_run_is_refused_naming_the_sizes(monkeypatch):
    from tenscontrol.mechanics.rigid import model as rigid
    monkeypatch.setattr(rigid, "DENSE_RANK_LIMIT", 10.0)
    with pytest.raises(ValueError, match=r"tbar-stedy: the KKT factorization at the start has "
                                         r"a pivot below 1e-8: .* \(2 bars x 4 free coordinates, "
                                         r"about 1.6e\+01 flops, more than 1e\+01\) would not "
                                         r"end in reasonable time"):
        rigid._independent_bars(tc.catalog.tbar())


@pytest.mark.parametrize("key, value, message", [
    ("K", np.nan, r"--controller .*bad.npz: entry 'K' must be finite"),
    ("header.kalman_period", 0.01, r"gives kalman_period = 0.01, but the controller's period "
                                   r"is 0.005"),
    ("sensors_std", -1.0, r"entry 'sensors_std' must be >= 0"),
])
def test_the_cli_exits_2_with_the_message(tbar, tmp_path, capsys, key, value, message):
    from tenscontrol.cli import main
    structure = tmp_path / "s.json"
    tc.save_structure(tbar["s"], structure)
    bad = _edited(tbar["dlqg"], tmp_path / "bad.npz", key, value)
    status = main(["simulate", str(structure), "--t-final", "0.01", "--controller", str(bad),
                   "--out", str(tmp_path / "t.npz")])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    assert re.search(r"tenscontrol: error: .*" + message, err), err


def test_the_cli_refuses_a_sample_count_above_max_steps_with_exit_2(tbar, tmp_path, capsys):
    from tenscontrol.cli import main
    structure = tmp_path / "s.json"
    tc.save_structure(tbar["s"], structure)
    fast = tc.save_controller(tc.discretize(tbar["sf"], 1e-8), tmp_path / "fast.npz")
    status = main(["simulate", str(structure), "--t-final", "10", "--controller", str(fast),
                   "--out", str(tmp_path / "t.npz")])
    err = capsys.readouterr().err
    assert status == 2 and re.search(r"tenscontrol: error: controller: period = 1e-08 s over "
                                     r"t_final = 10 s is [\d,]+ samples", err), err


@pytest.mark.parametrize("design", ["dlqr", "discrete_lqg"])
@pytest.mark.parametrize("period", [1e-9, 1e-11, 1e-300])
def test_a_period_too_short_for_the_design_model_is_refused(tbar, design, period):
    # the T-bar's fastest mode: |lambda| = 3.97 rad/s. Before: 1e-9 s lost 4 digits of the
    # gain (relative error 4.7e-5 against 4.5e-9 from the sampling), 1e-11 s raised SciPy's
    # "symplectic pencil has eigenvalues too close to the unit circle", 1e-300 s "Failed to
    # find a finite solution" (dlqr) or Slycot's "dimension of the solution" (discrete_lqg)
    args = (tbar["model"], period) if design == "dlqr" else (tbar["model"], tbar["ss"], period)
    kw = {} if design == "dlqr" else {"process_noise": 4.0}
    if design == "discrete_lqg":   # continuous sensors: the rate check would answer first
        args = (tbar["model"], sensors(tbar["s"], string_lengths=range(4), std=1e-3), period)
    with pytest.raises(ValueError, match=rf"{design}: period = {period:g} s is too short for "
                                         r"the design model: its fastest mode \(\|lambda\| = "
                                         r"3.97 rad/s\) turns .* rad per sample.*use a period "
                                         r">= 2.52e-07 s"):
        getattr(tc, design)(*args, **kw)


def test_lqg_on_an_undamped_structure_gives_the_unscaled_filter_gain():
    # the prism's reduced positions get round-off process noise (1e-17 against 0.18 for the
    # velocities): the units of the scaled Riccati solve spread over 1e17 and Slycot failed
    # ("The real Schur form of the Hamiltonian ... cannot be appropriately ordered"); such a
    # state takes the unit of an unforced one. Reference: python-control's lqe unscaled
    import control as ct

    from tenscontrol.estimation.lqg import reduced_model, sensor_measurement
    p = tc.equilibrium(tc.catalog.prism(3), gamma_min=10.0).structure
    model = tc.linearize(p)
    ss = sensors(p, string_lengths=range(9), std=1e-3)
    design = tc.lqg(model, ss, process_noise=4.0)
    lq = tc.lqr(model)
    A, _, E = reduced_model(lq)
    Cr = sensor_measurement(model, ss).C @ lq.minimal.basis
    L = np.asarray(ct.lqe(A, E, Cr, 4.0 * np.eye(E.shape[1]), 1e-6 * np.eye(9))[0])
    np.testing.assert_allclose(design.L, L, rtol=1e-6, atol=1e-9 * np.abs(L).max())
    assert np.linalg.eigvals(A - design.L @ Cr).real.max() < 0


def test_the_cli_design_refuses_a_period_too_short_for_the_model(tbar, tmp_path, capsys):
    # before: --period 1e-300 wrote the file and printed "spectral radius of the discrete
    # loop 1 (UNSTABLE: a shorter --period), gain margin 0"
    from tenscontrol.cli import main
    structure = tmp_path / "s.json"
    tc.save_structure(tbar["s"], structure)
    status = main(["design", str(structure), "--period", "1e-300", "--out",
                   str(tmp_path / "K.npz")])
    err = capsys.readouterr().err
    assert status == 2 and not (tmp_path / "K.npz").exists()
    assert re.search(r"tenscontrol: error: discrete_closed_loop: period = 1e-300 s is too short "
                     r"for the design model.*use a period >= 2.52e-07 s", err), err
