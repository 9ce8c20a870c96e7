"""The presentation rule (issue 22): every public result or model object gives ``repr()`` on one
line naming its type, ``str()`` equal to ``summary()`` (a table), and ``_repr_html_`` the same
table in HTML, all through one base class (:class:`tenscontrol.model.tables.Presentable`). The
value types (members, materials, selections, distributions, cases, pipelines, errors) keep a
one-line repr and no table.

The instances come from tests/public_types.py (the T-bar, short runs)."""

import pytest

from public_types import available, build_all, public_classes
from tenscontrol.model.tables import Presentable, summary_html, summary_table, value_range

#: Results and models: one-line repr, str() == summary() (a table), an HTML table.
RESULTS = ["Structure", "FormFinding", "Equilibrium", "StaticEquilibrium", "NewtonHistory",
           "Compliance", "Trajectory", "SimulationStats", "ControlRecord", "LinearModel",
           "ElasticModel", "MinimalRealization", "RiccatiSolution", "LQRDesign", "HinfDesign",
           "EffortChoice",
           "Controller", "StateFeedback", "OutputFeedback", "Measurement", "ClosedLoopReport",
           "ClosedLoopFigures", "MaterialComparison", "MaterialFigures", "ClosedLoopComparison",
           "ClosedLoopMaterialFigures", "StudyResult",
           # sampled-data control, sensors and estimation, allocation, shape change (issue 23)
           "SampledController", "DiscreteFeedback", "SampledControlRecord", "DiscreteLQRDesign",
           "ZOHModel", "SensorSet", "SensorMeasurement", "LQGDesign", "DiscreteLQG",
           "DiscreteKalman", "Observability", "Placement", "ActuatorPlacement", "AllocatedController", "AllocatedSampled", "SelfStress",
           "Allocation", "ShapeChange", "ShapePath", "ShapeChangeReport", "ShapeTracking",
           "PredictiveController", "ExtendedKalman", "ExtendedLQG",
           # the designs (issue 30): Design, the base, is built as an LQRDesign
           "Design", "DiscreteLQGDesign", "ExtendedLQGDesign", "MPCDesign",
           # the modal view and the damping verdict (issue 32)
           "ModalView", "DampingVerdict"]
#: Values and errors: one-line repr only (an error's str() is its message).
VALUES = ["Bar", "String", "PointMass", "Material", "Selection", "PiecewiseConstantLoads",
          "Case", "Uniform", "LogUniform", "Normal", "Choice", "NormsPipeline", "LQRPipeline",
          "CaseResult", "CaseFailure", "ExpectedLoad", "NoiseTuning",
          "SimulationError", "SimulationInterrupted", "PrestressError", "StaticsError",
          "MechanismError", "StudyInterrupted", "StudyFolderError", "StudyFileError"]

@pytest.fixture(scope="module")
def instances():
    return build_all([n for n in RESULTS if n in available()]
                     + [n for n in VALUES if n in public_classes()])


def test_every_public_class_is_a_result_or_a_value():
    unclassified = sorted(set(public_classes()) - set(RESULTS) - set(VALUES))
    assert not unclassified, (f"{unclassified}: list the type in RESULTS (give it summary() "
                              "through Presentable) or in VALUES of tests/test_presentation.py")
    assert not set(RESULTS) & set(VALUES)


# PredictiveController is built where osqp is installed (public_types.OPTIONAL)
@pytest.mark.parametrize("name", [n for n in RESULTS if n in available()])
def test_results_follow_the_rule(instances, name):
    obj = instances[name]
    assert isinstance(obj, Presentable), f"{name} does not use the shared Presentable"
    text = repr(obj)
    assert "\n" not in text and text.startswith(f"{type(obj).__name__}("), text
    table = obj.summary()
    assert str(obj) == table and table.count("\n") >= 2, f"{name}: str() is not the table"
    html = obj._repr_html_()
    assert isinstance(html, str) and html.startswith("<table") and "<td" in html, html[:200]


@pytest.mark.parametrize("name", [n for n in VALUES if n in public_classes()])
def test_values_print_one_line(instances, name):
    obj = instances[name]
    assert not isinstance(obj, Presentable) and not hasattr(obj, "summary")
    assert "\n" not in repr(obj)
    if not isinstance(obj, BaseException):
        assert str(obj) == repr(obj)


def test_static_equilibrium_html_has_the_newton_table(instances):
    static = instances["StaticEquilibrium"]
    html = static._repr_html_()
    assert f"{static.residual:.3g} N" in html and "residual [N]" in html
    assert html.count("<tr>") == 1 + static.history.residual.size   # header + one per iterate


def test_value_range_and_summary_table():
    assert value_range([], "m") == "none"
    assert value_range([2.0, 2.0], "m") == "2 m"
    assert value_range([3.0, 1.0, 2.0], "N/m") == "1 .. 3 N/m"
    text = summary_table([("a", "1 .. 3 N/m"), ("long label", "x")])
    assert text.splitlines() == ["  a           1 .. 3 N/m", "  long label  x"]
    # summary_html reads back what summary_table writes
    assert "<td style=\"padding: 1px 8px; text-align: right\">1 .. 3 N/m</td>" in \
        summary_html("T\n" + text)
