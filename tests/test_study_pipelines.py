"""The ready-made pipelines against the public API they chain, and settle against a damped run."""

import pickle
import warnings

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.studies.pipelines import as_built, settle

OUT = tc.Selection(nodes=[2, 3], axes="xz")


@pytest.fixture(scope="module")
def tbar():
    return tc.catalog.tbar("stedy", damping=5.0)


@pytest.fixture(scope="module")
def design(tbar):
    return tc.equilibrium(tbar.with_bars(material="hdpe"), gamma_min=10.0,
                          bars="compressible").structure


def test_settle_keeps_an_equilibrium(design):
    assert np.abs(settle(design, "compressible").nodes - design.nodes).max() < 1e-12


@pytest.mark.parametrize("bars", ["rigid", "compressible"])
def test_settle_finds_the_equilibrium_a_damped_run_reaches(design, bars):
    built = as_built(design, {"rest_length_error_1": -0.05, "string_stiffness_error": 0.1})
    settled = settle(built, bars)
    qdd, _ = tc.accelerations(settled, bars=bars)
    assert np.abs(qdd).max() < 1e-9                                      # [m/s^2]
    assert np.abs(settled.nodes - design.nodes).max() > 0.05             # it did move
    # oracle: the nonlinear model, heavily damped, comes to rest at the same place
    run = tc.simulate(built.with_strings(damping=200.0), 60.0, bars=bars, t_eval=[0.0, 60.0])
    assert np.abs(run.nodes[-1] - settled.nodes).max() < 1e-6           # [m]


def test_settle_names_the_slack_strings_when_there_is_no_equilibrium(design):
    loose = as_built(design, {"rest_length_error_1": 0.5, "rest_length_error_3": 0.5})
    with pytest.raises(ValueError, match=r"settle: .* not stable .*a mechanism.*slack "
                                         r"strings there: \[1, 2, 3\]"):
        settle(loose, "compressible")
    # nothing fixed under gravity: the static solve's error, in settle's words
    falling = design.with_fixed([]).with_gravity([0.0, 0.0, -9.81])
    with pytest.raises(ValueError, match=r"settle: tbar-stedy: no static equilibrium near the "
                                         r"design \(tbar-stedy: a rigid-body mechanism.*\); "
                                         r"slack strings at the start: none"):
        settle(falling, "rigid")
    with pytest.raises(ValueError, match=r"settle: bars must be one of 'rigid', "
                                         r"'compressible', got 'elastic'"):
        settle(design, "elastic")


# T-bar cases of benchmarks/bench_pipelines.py (draws 0 and 2) that failed before the
# pipelines settled with static_equilibrium: the private Newton left |qdd| = 4.0e-8 to
# 6.2e-8 m/s^2, and minimal_realization refused the model (not at an equilibrium)
_FAILED_BEFORE = [
    {"rest_length_error_0": 0.012509546660466692, "rest_length_error_1": 0.039721380096957554,
     "rest_length_error_2": 0.02756856902451936, "rest_length_error_3": -0.027479281000940815,
     "string_stiffness_error": 0.0},
    {"rest_length_error_0": -0.0222029717806419, "rest_length_error_1": -0.005484687603245095,
     "rest_length_error_2": 0.043373840568325925, "rest_length_error_3": 0.01828411581325566,
     "string_stiffness_error": -0.3}]


@pytest.mark.parametrize("case", _FAILED_BEFORE)
def test_settled_cases_are_equilibria_for_the_linear_model(tbar, case):
    pipeline = tc.NormsPipeline(tbar, prestress=5.0, outputs=OUT, bars="compressible")
    design, settled = pipeline._built(case)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)     # linearize warns when not at rest
        model = tc.linearize(settled, bars="compressible", kind="passive", at_rest="taut",
                             outputs=OUT)
    assert model.at_equilibrium
    assert tc.minimal_realization(model).order == 8     # the T-bar's 4 free coordinates


def test_as_built_applies_relative_errors(design):
    built = as_built(design, {"rest_length_error": 0.01, "rest_length_error_2": 0.02,
                              "bar_youngs_modulus_error": -0.1})
    np.testing.assert_allclose(built.string_rest_lengths / design.string_rest_lengths,
                               [1.01, 1.01, 1.03, 1.01], rtol=1e-14)
    np.testing.assert_allclose(built.bar_stiffness / design.bar_stiffness, 0.9, rtol=1e-14)


def test_norms_pipeline_without_errors_matches_compare_materials(tbar, design):
    pipeline = tc.NormsPipeline(tbar, prestress=10.0, outputs=OUT, t_final=1.0,
                                bars="compressible")
    figures = pipeline({"material": "hdpe"})
    table = tc.compare_materials(design, ("hdpe",), outputs=OUT, t_final=1.0, at_rest="taut")
    row = table.rows[0]
    assert figures["offset"] < 1e-12 and figures["order"] == row.order
    np.testing.assert_allclose([figures["h2"], figures["hinf"], figures["bar_mass"]],
                               [row.h2, row.hinf, row.bar_mass], rtol=1e-9)
    np.testing.assert_allclose(figures["frequency"], row.natural_frequencies[0], rtol=1e-9)
    assert figures["min_tension"] > 0 and figures["slack"] is False


def test_a_payload_lowers_the_frequency_and_needs_its_node(tbar):
    pipeline = tc.NormsPipeline(tbar, prestress=10.0, outputs=OUT, t_final=0.5, payload_node=2)
    light, heavy = pipeline({"material": "hdpe"}), pipeline({"material": "hdpe",
                                                               "payload_mass": 20.0})
    assert heavy["frequency"] < light["frequency"]
    no_node = tc.NormsPipeline(tbar, prestress=10.0, t_final=0.5)
    with pytest.raises(ValueError, match="'payload_mass' needs the pipeline's payload_node"):
        no_node({"payload_mass": 1.0})


def test_an_unknown_parameter_is_named(tbar):
    pipeline = tc.NormsPipeline(tbar, prestress=10.0)
    with pytest.raises(ValueError, match="unknown parameter 'rest_lenght_error'"):
        pipeline({"rest_lenght_error": 0.01})
    with pytest.raises(ValueError, match="unknown parameter 'rest_length_error_4'"):
        pipeline({"rest_length_error_4": 0.01})
    with pytest.raises(TypeError, match="parameter 'damping' must be a number"):
        pipeline({"damping": "high"})


def test_a_pipeline_travels_as_structure_json_not_arrays(tbar):
    pipeline = tc.NormsPipeline(tbar, prestress=10.0, outputs=OUT)
    data = pickle.dumps(pipeline)
    assert b"tenscontrol.structure/1" in data and b"numpy" not in data
    back = pickle.loads(data)
    assert back.definition() == pipeline.definition()
    assert np.array_equal(back.structure.nodes, tbar.nodes)
    assert repr(pipeline).startswith("NormsPipeline(structure='tbar-stedy'")


def test_rigid_and_compressible_pipelines_agree_for_stiff_bars(tbar):
    # the T-bar's steel bars (k_b = 3.1e8 N/m) shorten by ~1e-7 of their length under the
    # prestress: the two bar models differ by 5.6e-7 at most in these figures (measured)
    case = {"string_stiffness_error": 0.1, "rest_length_error_1": -0.02}
    rigid, compressible = (tc.NormsPipeline(tbar, prestress=10.0, outputs=OUT, t_final=1.0,
                                            bars=bars)(case)
                           for bars in ("rigid", "compressible"))
    assert rigid["order"] == 4 and compressible["order"] == 8   # 2 against 4 free motions
    for name in ("offset", "h2", "hinf", "frequency", "peak", "min_tension"):
        assert rigid[name] == pytest.approx(compressible[name], rel=5e-6), name


def test_the_bar_model_and_configuration_are_checked_and_defined(tbar):
    with pytest.raises(ValueError, match=r"NormsPipeline: bars must be one of 'rigid', "
                                         r"'compressible', got 'elastic'"):
        tc.NormsPipeline(tbar, bars="elastic")
    with pytest.raises(ValueError, match=r"LQRPipeline: configuration must be one of 'fixed', "
                                         r"'free', got 'sagged'"):
        tc.LQRPipeline(tbar, configuration="sagged")
    rigid = tc.NormsPipeline(tbar, prestress=10.0)
    compressible = tc.NormsPipeline(tbar, prestress=10.0, bars="compressible")
    assert rigid.definition()["bars"] == "rigid" and rigid.definition()["configuration"] == "fixed"
    assert compressible.definition() != rigid.definition()     # a study hashes the bar model
    assert "bars='compressible'" in repr(compressible)
    with pytest.raises(ValueError, match="'bar_youngs_modulus_error' changes nothing with rigid "
                                         "bars: give the pipeline bars='compressible'"):
        rigid({"bar_youngs_modulus_error": 0.1})


def test_configuration_free_prestresses_a_structure_built_without_its_sag():
    prism = tc.catalog.prism(3, damping=1.0, gravity=(0.0, 0.0, -9.81))  # the base fixed
    settings = dict(prestress=10.0, disturbances=tc.Selection(4, "x"), t_final=0.2)
    with pytest.raises(tc.PrestressError, match="no prestress is in equilibrium"):
        tc.NormsPipeline(prism, **settings)({})
    figures = tc.NormsPipeline(prism, configuration="free", **settings)({})
    assert figures["offset"] < 1e-9            # the design is the sagged equilibrium [m]
    assert figures["min_tension"] > 0 and figures["order"] == 12   # 6 free motions


@pytest.mark.parametrize("bars", ["rigid", pytest.param("compressible",
                                                        marks=pytest.mark.slow)])
def test_lqr_pipeline_without_errors_matches_verify(tbar, bars):
    pipeline = tc.LQRPipeline(tbar, prestress=10.0, outputs=OUT, t_final=1.0, effort=1e-2,
                              bars=bars)
    figures = pipeline({"material": "hdpe"})
    design = tc.equilibrium(tbar.with_bars(material="hdpe"), gamma_min=10.0, bars=bars).structure
    model = tc.linearize(design, bars=bars, kind="passive", outputs=OUT)
    controller = tc.lqr(model, effort=1e-2).controller
    report = tc.verify(design, controller, tc.doublet(design, tc.Selection(2, "z"), 10.0, 0.5),
                       1.0, outputs=OUT, t_eval=np.linspace(0, 1.0, 101), bars=bars)
    np.testing.assert_allclose([figures["open_peak"], figures["closed_peak"],
                                figures["peak_reduction"]],
                               [report.open.peak, report.closed.peak, report.peak_reduction],
                               rtol=1e-6)
    assert 0 < figures["peak_reduction"] < 1 and figures["slack"] is False


def test_lqr_pipeline_samples_the_lqr_and_records_the_period(tbar):
    pipeline = tc.LQRPipeline(tbar, prestress=10.0, outputs=OUT, t_final=0.6, effort=1e-2,
                              period=0.02)
    sampled = pipeline({})
    continuous = tc.LQRPipeline(tbar, prestress=10.0, outputs=OUT, t_final=0.6,
                                effort=1e-2)({})
    # what the pipeline ran: the continuous LQR discretized exactly, in the sampled loop
    design = tc.equilibrium(tbar, gamma_min=10.0).structure
    lqr = tc.lqr(tc.linearize(design, kind="passive", outputs=OUT), effort=1e-2)
    controller = tc.discretize(lqr.controller, 0.02)
    report = tc.verify(design, controller, tc.doublet(design, tc.Selection(2, "z"), 10.0, 0.5),
                       0.6, outputs=OUT, t_eval=np.linspace(0, 0.6, 61))
    assert sampled["closed_peak"] == pytest.approx(report.closed.peak, rel=1e-6)
    assert sampled["linear_error"] == pytest.approx(report.linear_error, rel=1e-6)
    assert sampled["closed_peak"] != continuous["closed_peak"]
    assert (sampled["period"], sampled["delay"]) == (0.02, 0.0)
    assert np.isnan(continuous["period"]) and continuous["delay"] == 0.0
    assert np.isnan(continuous["gain_margin"]) and np.isnan(continuous["spectral_radius"])
    assert sampled["gain_margin"] == pytest.approx(tc.gain_margin(lqr.minimal, controller))
    assert 1.0 < sampled["gain_margin"] < 100.0 and 0 < sampled["spectral_radius"] < 1
    # a case's period and delay win over the pipeline's
    faster = pipeline({"period": 0.005, "delay": 0.001})
    assert (faster["period"], faster["delay"]) == (0.005, 0.001)
    assert faster["gain_margin"] > sampled["gain_margin"]


def test_the_period_and_delay_are_checked(tbar):
    for period in (-1.0, 0.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match=r"LQRPipeline: period must be a positive, finite "
                                             r"number of seconds, got"):
            tc.LQRPipeline(tbar, period=period)
    with pytest.raises(TypeError, match=r"LQRPipeline: period must be a number of seconds "
                                        r"\(None: the continuous LQR\), got str"):
        tc.LQRPipeline(tbar, period="fast")
    with pytest.raises(ValueError, match=r"LQRPipeline: delay is a computation delay of the "
                                         r"sampled LQR: give a period too"):
        tc.LQRPipeline(tbar, delay=0.001)
    with pytest.raises(ValueError, match=r"LQRPipeline: delay must be less than the period "
                                         r"0.01 s, got 0.01 s"):
        tc.LQRPipeline(tbar, period=0.01, delay=0.01)
    with pytest.raises(ValueError, match=r"LQRPipeline: delay must be >= 0"):
        tc.LQRPipeline(tbar, period=0.01, delay=-0.001)
    pipeline = tc.LQRPipeline(tbar, t_final=0.1)
    with pytest.raises(ValueError, match=r"parameter 'period' must be a positive, finite number "
                                         r"of seconds, got 0"):
        pipeline({"period": 0})
    with pytest.raises(ValueError, match=r"unknown parameter 'period'"):
        tc.NormsPipeline(tbar, t_final=0.1)({"period": 0.01})


# the keys of LQRPipeline.definition() before it took a period (commit 4293008): a continuous
# pipeline keeps them, so the folders of its studies keep their hash and resume
DEFINITION_KEYS = {"structure", "bars", "configuration", "disturbances", "outputs", "prestress",
                   "payload_node", "amplitude", "half_period", "t_final", "effort"}


def test_the_period_is_part_of_the_study_hash_and_old_folders_resume(tbar, tmp_path):
    from tenscontrol.studies.store import StudyFolderError

    continuous = tc.LQRPipeline(tbar, outputs=OUT, t_final=0.1)
    assert set(continuous.definition()) == DEFINITION_KEYS
    sampled = tc.LQRPipeline(tbar, outputs=OUT, t_final=0.1, period=0.01)
    delayed = tc.LQRPipeline(tbar, outputs=OUT, t_final=0.1, period=0.01, delay=0.002)
    assert sampled.definition()["period"] == 0.01 and delayed.definition()["delay"] == 0.002
    assert "period=0.01 s, delay=0.002 s" in repr(delayed)
    cases = tc.grid({"effort": [1e-2]})
    first = tc.run_study(continuous, cases, out=tmp_path / "study", progress=False)
    assert first.complete and first.n_resumed == 0
    again = tc.run_study(tc.LQRPipeline(tbar, outputs=OUT, t_final=0.1), cases,
                         out=tmp_path / "study", progress=False)
    assert again.n_resumed == 1
    for other in (sampled, delayed):
        with pytest.raises(StudyFolderError, match="holds a different study"):
            tc.run_study(other, cases, out=tmp_path / "study", progress=False)
