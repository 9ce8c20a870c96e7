"""Studies from TOML and JSON files: a run, its resume, and every key's error message."""

import json
import sys

import pytest

import tenscontrol as tc
from tenscontrol.studies.files import read_study_file

STUDY = {
    "pipeline": "norms",
    "out": "results",
    "structure": {"catalog": "tbar", "arguments": {"variant": "stedy", "damping": 5.0}},
    "settings": {"prestress": 10.0, "t_final": 0.2, "outputs": {"nodes": [2, 3], "axes": "xz"},
                 "disturbances": {"nodes": 2, "axes": "z"}},
    "parameters": {"samples": {"n": 2, "seed": 3, "designs": {"material": ["hdpe"]},
                               "distributions": {"rest_length_error": {"uniform": [-0.02, 0.02]},
                                                 "damping": 4.0}}},
    "executor": {"kind": "serial"},
}

TOML = """
pipeline = "norms"
out = "results"

[structure]
catalog = "tbar"
arguments = { variant = "stedy", damping = 5.0 }

[settings]
prestress = 10.0
t_final = 0.2
outputs = { nodes = [2, 3], axes = "xz" }
disturbances = { nodes = 2, axes = "z" }

[parameters.samples]
n = 2
seed = 3
designs = { material = ["hdpe"] }
distributions = { rest_length_error = { uniform = [-0.02, 0.02] }, damping = 4.0 }

[executor]
kind = "serial"
"""


def _write(tmp_path, data, name="study.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_a_json_study_runs_into_its_folder_and_resumes(tmp_path):
    path = _write(tmp_path, STUDY)
    result = tc.run_study_file(path, progress=False)
    assert result.complete and len(result.records) == 2 and result.out == tmp_path / "results"
    assert (tmp_path / "results" / "manifest.json").exists()
    assert {"h2", "hinf", "peak", "slack"} <= set(result.records[0].figures)
    assert result.records[0].parameters["damping"] == 4.0
    assert tc.run_study_file(path, progress=False).n_resumed == 2


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib")
def test_a_toml_study_gives_the_json_study(tmp_path):
    (tmp_path / "study.toml").write_text(TOML)
    from_toml = read_study_file(tmp_path / "study.toml")
    from_json = read_study_file(_write(tmp_path, STUDY))
    assert from_toml[1] == from_json[1] and from_toml[2] == from_json[2]
    assert from_toml[0].definition() == from_json[0].definition()


def _with(**changes):
    data = json.loads(json.dumps(STUDY))
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        table = data
        for p in parents:
            table = table[p]
        if value is None:
            del table[last]
        else:
            table[last] = value
    return data


@pytest.mark.parametrize("changes, match", [
    (dict(pipeline=None), "key 'pipeline': is missing"),
    (dict(pipeline="hinf"), "key 'pipeline': unknown pipeline 'hinf'"),
    (dict(colour="red"), "key 'colour': unknown key"),
    (dict(structure={"catalog": "tbar", "path": "x.json"}), "key 'structure': give one of"),
    (dict(structure={"catalog": "tower"}), "key 'structure.catalog': unknown structure"),
    (dict(structure__arguments={"variant": "big"}), "key 'structure.arguments'"),
    (dict(structure={"path": "missing.json"}), "key 'structure.path'"),
    (dict(settings__outputs=[2, 3]), "key 'settings.outputs': must be a table"),
    (dict(settings__t_final=-1.0), "key 'settings': .*t_final must be a positive"),
    (dict(parameters={}), "key 'parameters': give one of 'grid' or 'samples'"),
    (dict(parameters__samples__n="ten"), "key 'parameters.samples.n': must be int"),
    (dict(parameters__samples__seed=None), "key 'parameters.samples.seed': is missing"),
    (dict(parameters__samples__distributions={"e": {"gauss": [0, 1]}}),
     "key 'parameters.samples.distributions.e': must be one of"),
    (dict(parameters__samples__distributions={"e": {"uniform": [1, 0]}}),
     "key 'parameters.samples.distributions.e': Uniform: low must be < high"),
    (dict(executor={"kind": "gpu"}), "key 'executor.kind': must be 'serial'"),
    (dict(executor={"kind": "processes", "workers": 0}), "key 'executor.workers': must be >= 1"),
])
def test_a_wrong_key_is_named(tmp_path, changes, match):
    with pytest.raises(tc.StudyFileError, match=f"study.json: {match}"):
        tc.run_study_file(_write(tmp_path, _with(**changes)), progress=False)


def test_unreadable_files_are_named(tmp_path):
    with pytest.raises(tc.StudyFileError, match="none.json: no such file"):
        tc.run_study_file(tmp_path / "none.json")
    (tmp_path / "s.yaml").write_text("a: 1")
    with pytest.raises(tc.StudyFileError, match="expected a .toml or .json file"):
        tc.run_study_file(tmp_path / "s.yaml")
    (tmp_path / "s.json").write_text("{")
    with pytest.raises(tc.StudyFileError, match="s.json: not valid JSON"):
        tc.run_study_file(tmp_path / "s.json")
