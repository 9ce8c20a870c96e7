"""docs/studies.md against the code: its example study file runs, its tables list what the
pipelines take."""

import inspect
import json
import pathlib
import re
import sys

import pytest

import tenscontrol as tc
from tenscontrol.studies.files import read_study_file
from tenscontrol.studies.pipelines import PARAMETERS

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "study.toml"
PAGE = (ROOT / "docs" / "studies.md").read_text()


def _table(heading: str) -> list:
    """The first column of the first table after `heading`, backticks removed."""
    text = PAGE.split(heading, 1)[1]
    rows = re.findall(r"^\| `([^`]+)`(?:, `([^`]+)`)? \|", text.split("\n\n#", 1)[0], re.M)
    return [name for row in rows for name in row if name]


def test_the_parameter_table_is_the_pipelines_vocabulary():
    assert sorted(_table("### The parameters a case may vary")) == sorted(PARAMETERS)


def test_the_settings_table_is_the_pipelines_keywords():
    keywords = set()
    for cls in (tc.NormsPipeline, tc.LQRPipeline):
        keywords |= set(inspect.signature(cls).parameters) - {"structure"}
    assert sorted(_table("Their settings")) == sorted(keywords)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib")
def test_the_example_study_file_parses_and_runs_a_case(tmp_path):
    import tomllib

    pipeline, cases, out, executor = read_study_file(EXAMPLE)
    assert isinstance(pipeline, tc.NormsPipeline) and len(cases) == 100     # 50 x 2 payloads
    assert pipeline.definition()["bars"] == "rigid" and out == EXAMPLE.parent / \
        "tbar-payload-robustness"
    assert executor == {"kind": "processes", "workers": 2}
    # the same study as JSON (the docs' second format) reads to the same definition and cases
    (tmp_path / "study.json").write_text(json.dumps(tomllib.loads(EXAMPLE.read_text())))
    again = read_study_file(tmp_path / "study.json")
    assert again[0].definition() == pipeline.definition() and again[1] == cases
    result = tc.run_study(pipeline, cases[:1], progress=False)
    record = result.records[0]
    assert result.complete and record.figures["order"] == 4     # rigid bars: 2 free motions
    assert record.figures["h2"] > 0 and record.figures["hinf"] > 0
    assert record.parameters["payload_mass"] == 1.0 and record.parameters["material"] == "hdpe"


def test_a_study_file_names_a_wrong_bar_model(tmp_path):
    study = {"pipeline": "lqr", "structure": {"catalog": "tbar"},
             "settings": {"bars": "elastic"}, "parameters": {"grid": {"effort": [0.1]}}}
    (tmp_path / "study.json").write_text(json.dumps(study))
    with pytest.raises(tc.StudyFileError, match=r"study.json: key 'settings': LQRPipeline: bars "
                                                r"must be one of 'rigid', 'compressible'"):
        read_study_file(tmp_path / "study.json")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib")
def test_the_sample_rate_study_file_parses_and_runs_a_case():
    pipeline, cases, out, executor = read_study_file(ROOT / "examples" / "sample_rates.toml")
    assert isinstance(pipeline, tc.LQRPipeline) and pipeline.period is None
    assert [c.parameters["period"] for c in cases] == [0.001, 0.005, 0.02]
    assert out == ROOT / "examples" / "tbar-sample-rates" and executor == {"kind": "serial"}
    result = tc.run_study(pipeline, cases[2:], progress=False)
    figures = result.records[0].figures
    assert result.complete and figures["period"] == 0.02 and figures["slack"] is False
    assert 1 < figures["gain_margin"] < 100 and figures["spectral_radius"] < 1
