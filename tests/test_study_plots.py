"""The robustness plots: what they draw, with units in the labels, from a hand-made result."""

import matplotlib
import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.plotting.studies import plot_against, plot_distribution, plot_slack_fraction


CASES = [("hdpe", -0.02, 0.11, True), ("aluminium", -0.02, 0.19, False),
         ("hdpe", 0.01, 0.12, False), ("aluminium", 0.01, 0.2, False), ("hdpe", 0.03, 0.13, True)]


@pytest.fixture(scope="module")
def result():
    records = tuple(tc.studies.CaseResult(k, {"material": m, "rest_length_error": e},
                                  {"hinf": h, "peak": 0.1 + e, "slack": s}, 0.1, 0.1, "host:1")
                    for k, (m, e, h, s) in enumerate(CASES))
    return tc.studies.StudyResult("norms", records, (), 5, 0, 1.0, 0.5, None)


def test_distribution_per_material_has_the_unit(result):
    fig = plot_distribution(result, "hinf", by="material")
    ax = fig.axes[0]
    assert isinstance(fig, matplotlib.figure.Figure)
    assert ax.get_ylabel() == "hinf [m/N]" and ax.get_xlabel() == "material"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["hdpe", "aluminium"]
    points = [line.get_ydata() for line in ax.lines if line.get_marker() == "."]
    np.testing.assert_array_equal(sorted(np.concatenate(points)), [0.11, 0.12, 0.13, 0.19, 0.2])


def test_figure_against_a_parameter(result):
    ax = plot_against(result, "peak", "rest_length_error").axes[0]
    assert ax.get_xlabel() == "rest_length_error [-]" and ax.get_ylabel() == "peak [m]"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["hdpe", "aluminium"]


def test_counts_get_integer_ticks():
    # a figure that counts (the minimal order, 2..4) against a parameter that counts (stages,
    # 1..3): integer ticks on both axes; a real-valued figure keeps matplotlib's ticks
    records = tuple(tc.studies.CaseResult(k, {"stages": 1 + k % 3}, {"order": 2 + k % 3, "peak": 0.1 * k},
                                  0.1, 0.1, "host:1") for k in range(6))
    counts = tc.studies.StudyResult("norms", records, (), 6, 0, 1.0, 0.5, None)
    ax = plot_against(counts, "order", "stages", by=None).axes[0]
    for axis, (lo, hi) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        ticks = [v for v in axis.get_majorticklocs() if lo <= v <= hi]
        assert ticks and all(float(v).is_integer() for v in ticks), ticks
    ax = plot_distribution(counts, "order", by=None).axes[0]
    assert all(float(v).is_integer() for v in ax.get_yticks())
    ax = plot_against(counts, "peak", "stages", by=None).axes[0]
    assert not all(float(v).is_integer() for v in ax.get_yticks())


def test_slack_fraction_per_material_and_against_a_parameter(result):
    ax = plot_slack_fraction(result, by="material").axes[0]
    assert [p.get_height() for p in ax.patches] == pytest.approx([2 / 3, 0.0])
    assert "2 of 3" in [t.get_text() for t in ax.texts]
    ax = plot_slack_fraction(result, by=None, against="rest_length_error", bins=2).axes[0]
    assert ax.get_xlabel() == "rest_length_error [-]"
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [0.5, 1 / 3])


def test_the_result_methods_save_pngs(result, tmp_path):
    result.plot_distribution("hinf").savefig(tmp_path / "a.png")
    result.plot_against("peak", "rest_length_error").savefig(tmp_path / "b.png")
    result.plot_slack_fraction().savefig(tmp_path / "c.png")
    assert all((tmp_path / n).stat().st_size > 1000 for n in ("a.png", "b.png", "c.png"))


def test_unknown_names_and_empty_studies_are_refused(result):
    with pytest.raises(KeyError, match="'hinff' is neither a figure nor a parameter"):
        plot_distribution(result, "hinff")
    empty = tc.studies.StudyResult("norms", (), (), 1, 0, 0.0, 0.0, None)
    with pytest.raises(ValueError, match="no finished case"):
        plot_against(empty, "peak", "rest_length_error")
