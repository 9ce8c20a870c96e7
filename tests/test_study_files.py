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
    (dict(parameters__samples__distributions={"damping": {"gauss": [0, 1]}}),
     "key 'parameters.samples.distributions.damping': must be one of"),
    (dict(parameters__samples__distributions={"damping": {"uniform": [1, 0]}}),
     "key 'parameters.samples.distributions.damping': Uniform: low must be < high"),
    (dict(executor={"kind": "gpu"}), "key 'executor.kind': must be 'serial'"),
    (dict(executor={"kind": "processes", "workers": 0}), "key 'executor.workers': must be >= 1"),
])
def test_a_wrong_key_is_named(tmp_path, changes, match):
    with pytest.raises(tc.StudyFileError, match=f"study.json: {match}"):
        tc.run_study_file(_write(tmp_path, _with(**changes)), progress=False)


@pytest.mark.parametrize("changes, match", [
    (dict(executor={"kind": "processes", "wrokers": 2}),
     r"key 'executor.wrokers': unknown key \(did you mean 'workers'\?\)"),
    (dict(executor={"kind": "procesess"}), r"key 'executor.kind': .* \(did you mean 'processes'"),
    (dict(executor={"case_timeout": -1}), "key 'executor.case_timeout': must be a positive"),
    (dict(executor={"case_timeout": "5"}), "key 'executor.case_timeout': must be int or float"),
    (dict(otu="x"), r"key 'otu': unknown key \(did you mean 'out'\?\)"),
    (dict(structure__argumnets={}), r"key 'structure.argumnets': unknown key \(did you mean "
                                    r"'arguments'"),
    (dict(structure__arguments={"dampin": 1.0}), r"key 'structure.arguments.dampin': unknown "
                                                 r"key \(did you mean 'damping'"),
    (dict(settings__t_finall=1.0), r"key 'settings.t_finall': unknown key \(did you mean "
                                   r"'t_final'"),
    (dict(settings__prestress="ten"), "key 'settings.prestress': must be a number, got str"),
    (dict(settings__prestress=float("nan")), "key 'settings.prestress': must be finite"),
    (dict(settings__payload_node=1.5), "key 'settings.payload_node': must be an integer"),
    (dict(settings__outputs={"node": 2}), r"key 'settings.outputs.node': unknown key \(did "
                                          r"you mean 'nodes'"),
    (dict(parameters__sample={}), r"key 'parameters.sample': unknown key \(did you mean "
                                  r"'samples'"),
    (dict(parameters__samples__seeds=3), r"key 'parameters.samples.seeds': unknown key \(did "
                                         r"you mean 'seed'"),
    (dict(parameters__samples__designs={"materal": ["hdpe"]}),
     r"key 'parameters.samples.designs.materal': unknown parameter \(did you mean 'material'"),
    (dict(parameters__samples__distributions={"damping": {"unifrom": [0, 1]}}),
     r"key 'parameters.samples.distributions.damping': .* \(did you mean 'uniform'"),
    (dict(parameters__samples__distributions={"damping": {"normal": ["a", 1]}}),
     "key 'parameters.samples.distributions.damping': normal takes a list of two numbers"),
    (dict(parameters={"grid": {"prestress": ["ten"]}}),
     "key 'parameters.grid.prestress': must be a number"),
    (dict(parameters={"grid": {"prestress": [5.0, float("nan")]}}),
     "key 'parameters.grid.prestress': must be finite, got nan"),
    (dict(parameters={"grid": {"damping": [1.0] * 2, "prestress": list(range(10**3)),
                               "amplitude": list(range(1, 10**3 + 1))}}),
     "key 'parameters': grid: 2,000,000 cases .* exceeds the bound of 1,000,000"),
])
def test_every_table_refuses_what_it_does_not_know(tmp_path, changes, match):
    with pytest.raises(tc.StudyFileError, match=f"study.json: {match}"):
        read_study_file(_write(tmp_path, _with(**changes)))


@pytest.mark.slow
def test_a_case_timeout_from_the_file_or_the_caller_fails_only_the_hung_case(tmp_path):
    path = _write(tmp_path, _with(executor={"kind": "serial", "case_timeout": 60.0}))
    result = tc.run_study_file(path, progress=False)
    assert result.complete and not result.failures        # a generous limit changes nothing
    with pytest.raises(ValueError, match="case_timeout must be positive"):
        tc.run_study_file(path, progress=False, case_timeout=0)


def test_unreadable_files_are_named(tmp_path):
    with pytest.raises(tc.StudyFileError, match="none.json: no such file"):
        tc.run_study_file(tmp_path / "none.json")
    (tmp_path / "s.yaml").write_text("a: 1")
    with pytest.raises(tc.StudyFileError, match="expected a .toml or .json file"):
        tc.run_study_file(tmp_path / "s.yaml")
    (tmp_path / "s.json").write_text("{")
    with pytest.raises(tc.StudyFileError, match="s.json: not valid JSON"):
        tc.run_study_file(tmp_path / "s.json")


def test_every_catalog_structure_can_be_named_in_a_study_file(tmp_path):
    # the study files and `tenscontrol catalog` offer the same structures (the icosahedron was
    # missing from the study files' own list)
    from tenscontrol.cli.model_commands import CATALOG
    assert set(tc.catalog.STRUCTURES) <= set(CATALOG)
    pipeline, *_ = read_study_file(_write(tmp_path, dict(STUDY, structure={"catalog": "icosahedron"})))
    assert pipeline.structure.n_nodes == 12


def test_without_distributed_a_dask_study_names_what_to_install(monkeypatch):
    from tenscontrol.studies import files

    monkeypatch.setitem(sys.modules, "distributed", None)
    # the bare package with its floor, and the extra as it installs from a checkout
    with pytest.raises(ImportError, match=r"pip install 'dask\[distributed\]>=2024.1' "
                                          r".*pip install '\.\[studies\]'"):
        files._run_on_dask(None, [], None, 1, "local", False, None)


SAMPLED = {
    "pipeline": "lqr",
    "structure": {"catalog": "tbar", "arguments": {"variant": "stedy", "damping": 1.0}},
    "settings": {"t_final": 0.2, "outputs": {"nodes": [2, 3], "axes": "xz"}, "period": 0.005,
                 "delay": 0.001},
    "parameters": {"grid": {"period": [0.002, 0.02], "delay": 0.0}},
}


def test_a_study_file_sweeps_sample_rates(tmp_path):
    pipeline, cases, _, _ = read_study_file(_write(tmp_path, SAMPLED))
    assert (pipeline.period, pipeline.delay) == (0.005, 0.001)
    assert [c.parameters for c in cases] == [{"period": 0.002, "delay": 0.0},
                                             {"period": 0.02, "delay": 0.0}]
    result = tc.run_study(pipeline, cases, progress=False)
    assert result.complete and list(result.figure("period")) == [0.002, 0.02]
    assert result.figure("gain_margin")[0] > result.figure("gain_margin")[1] > 1


@pytest.mark.parametrize("changes, match", [
    (dict(settings={"period": -0.01}), "key 'settings': LQRPipeline: period must be a "
                                       "positive, finite number of seconds, got -0.01"),
    (dict(settings={"period": "fast"}), "key 'settings.period': must be a number, got str"),
    (dict(settings={"delay": 0.001}), "key 'settings': LQRPipeline: delay is a computation "
                                      "delay of the sampled LQR: give a period too"),
    (dict(parameters={"grid": {"period": ["1 kHz"]}}),
     r"key 'parameters.grid.period': must be a number \(sample period"),
])
def test_a_wrong_period_is_named(tmp_path, changes, match):
    data = {**SAMPLED, **changes}
    with pytest.raises(tc.StudyFileError, match=f"study.json: {match}"):
        read_study_file(_write(tmp_path, data))
    with pytest.raises(tc.StudyFileError, match=r"study.json: key 'settings.period': unknown "
                                                r"key"):
        read_study_file(_write(tmp_path, _with(settings__period=0.01)))
