"""The ready-made pipelines against the public API they chain, and settle against a damped run."""

import pickle

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
    assert np.abs(settle(design).nodes - design.nodes).max() < 1e-12


def test_settle_finds_the_equilibrium_a_damped_run_reaches(design):
    built = as_built(design, {"rest_length_error_1": -0.05, "string_stiffness_error": 0.1})
    settled = settle(built)
    qdd, _ = tc.accelerations(settled, bars="compressible")
    assert np.abs(qdd).max() < 1e-9                                      # [m/s^2]
    assert np.abs(settled.nodes - design.nodes).max() > 0.05             # it did move
    # oracle: the nonlinear model, heavily damped, comes to rest at the same place
    run = tc.simulate(built.with_strings(damping=200.0), 60.0, bars="compressible",
                      t_eval=[0.0, 60.0])
    assert np.abs(run.nodes[-1] - settled.nodes).max() < 1e-6           # [m]


def test_settle_names_the_slack_strings_when_there_is_no_equilibrium(design):
    loose = as_built(design, {"rest_length_error_1": 0.5, "rest_length_error_3": 0.5})
    with pytest.raises(ValueError, match=r"settle: .* not stable .*a mechanism.*slack "
                                         r"strings there: \[1, 2, 3\]"):
        settle(loose)


def test_as_built_applies_relative_errors(design):
    built = as_built(design, {"rest_length_error": 0.01, "rest_length_error_2": 0.02,
                              "bar_youngs_modulus_error": -0.1})
    np.testing.assert_allclose(built.string_rest_lengths / design.string_rest_lengths,
                               [1.01, 1.01, 1.03, 1.01], rtol=1e-14)
    np.testing.assert_allclose(built.bar_stiffness / design.bar_stiffness, 0.9, rtol=1e-14)


def test_norms_pipeline_without_errors_matches_compare_materials(tbar, design):
    pipeline = tc.NormsPipeline(tbar, prestress=10.0, outputs=OUT, t_final=1.0)
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


@pytest.mark.slow
def test_lqr_pipeline_without_errors_matches_verify(tbar, design):
    pipeline = tc.LQRPipeline(tbar, prestress=10.0, outputs=OUT, t_final=1.0, effort=1e-2)
    figures = pipeline({"material": "hdpe"})
    model = tc.linearize(design, bars="compressible", kind="passive", outputs=OUT)
    controller = tc.lqr(model, effort=1e-2).controller
    report = tc.verify(design, controller, tc.doublet(design, tc.Selection(2, "z"), 10.0, 0.5),
                       1.0, outputs=OUT, t_eval=np.linspace(0, 1.0, 101), bars="compressible")
    np.testing.assert_allclose([figures["open_peak"], figures["closed_peak"],
                                figures["peak_reduction"]],
                               [report.open.peak, report.closed.peak, report.peak_reduction],
                               rtol=1e-6)
    assert 0 < figures["peak_reduction"] < 1 and figures["slack"] is False
