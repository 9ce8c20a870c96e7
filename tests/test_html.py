"""Notebook manners: the reports and results show as HTML tables (``_repr_html_``) holding the
same figures as their text form, escaped."""

import re

import pytest

from public_types import available, build_all
from tenscontrol.model.tables import html_table, summary_html

# every type whose text form is a table (summary(): tests/test_presentation.py)
WITH_SUMMARY = ["Structure", "FormFinding", "Equilibrium", "StaticEquilibrium", "NewtonHistory",
                "Compliance", "Trajectory", "SimulationStats", "ControlRecord", "LinearModel",
                "ElasticModel", "MinimalRealization", "RiccatiSolution", "LQRDesign",
                "HinfDesign", "Controller", "StateFeedback", "OutputFeedback", "Measurement",
                "ClosedLoopReport", "ClosedLoopFigures", "MaterialComparison", "MaterialFigures",
                "ClosedLoopComparison", "ClosedLoopMaterialFigures", "StudyResult",
                "SampledController", "DiscreteFeedback", "SampledControlRecord",
                "DiscreteLQRDesign", "ZOHModel", "SensorSet", "SensorMeasurement", "LQGDesign",
                "DiscreteLQG", "DiscreteKalman", "Observability", "Placement", "ActuatorPlacement",
                "AllocatedController", "AllocatedSampled", "SelfStress", "Allocation", "ShapeChange", "ShapePath",
                "ShapeChangeReport", "ShapeTracking", "ExtendedKalman",
                "ExtendedLQG", "DiscreteLQGDesign", "ExtendedLQGDesign"]
# built where osqp is installed (tests/public_types.py: OPTIONAL)
WITH_SUMMARY += [n for n in ("PredictiveController", "MPCDesign") if n in available()]
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]\d+)?")


@pytest.fixture(scope="module")
def instances():
    return build_all(WITH_SUMMARY)


def cells(table: str) -> list:
    return re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", table)


@pytest.mark.parametrize("name", WITH_SUMMARY)
def test_html_table_has_the_figures_of_the_summary(instances, name):
    obj = instances[name]
    table = obj._repr_html_()
    assert table.startswith("<table") and table.rstrip().endswith("</table>")
    assert len(cells(table)) >= 4
    text_numbers = NUMBER.findall(obj.summary())
    html_numbers = set(NUMBER.findall(table))
    missing = [n for n in text_numbers if n not in html_numbers]
    assert not missing, f"{name}: figures of summary() not in the HTML table: {missing[:10]}"


def test_simulation_stats_and_linear_model_tables(instances):
    stats = instances["SimulationStats"]
    table = stats._repr_html_()
    assert f"{stats.accepted_steps} accepted, {stats.rejected_steps} rejected" in table
    assert str(stats.rhs_evaluations) in cells(table)
    model = instances["LinearModel"]
    table = model._repr_html_()
    assert str(model.A.shape[0]) in cells(table) and model.kind in cells(table)
    assert any(c.startswith(f"{model.C.shape[0]}: ") for c in cells(table))


def test_cells_and_captions_are_escaped():
    table = html_table([("<b>bold</b>", "a & b")], header=["x<y", ""], caption="<script>")
    assert "<b>" not in table and "<script>" not in table
    assert "&lt;b&gt;bold&lt;/b&gt;" in table and "a &amp; b" in table and "x&lt;y" in table


def test_summary_html_splits_label_and_value():
    table = summary_html("Design\n  gamma      1.5 (infeasible below 1.2)\n  rcond  0.01")
    assert cells(table) == ["gamma", "1.5 (infeasible below 1.2)", "rcond", "0.01"]
    assert "<caption" in table and "Design" in table
