"""Studies: cases from grids and seeds, run_study on every engine, failures, resume, Ctrl-C.

The pipelines here are cheap module-level functions (a process pool imports them by name);
tests/test_study_pipelines.py checks the ready-made pipelines.
"""

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pandas
import pytest

import tenscontrol as tc
from tenscontrol.studies import store, worker

STOP = {"at": None}
CALLS = []


def square(params):
    """figures of one case: x^2, a flag, a label; a KeyboardInterrupt at x == STOP['at']."""
    if params["x"] == STOP["at"]:
        raise KeyboardInterrupt
    CALLS.append(params["x"])
    return {"x2": params["x"] ** 2, "big": params["x"] > 2, "label": f"x={params['x']}",
            "n": int(params["x"])}


def fragile(params):
    """Fails in several ways on chosen cases."""
    x = params["x"]
    if x == 1:
        raise tc.SimulationError(0.3, "step size collapsed", None)
    if x == 3:
        raise tc.PrestressError("no prestress: string 2 slack")
    if x == 4:
        raise ValueError("rest_length must be > 0, got -1.0")
    if x == 5:
        return {"bad": [1, 2]}
    return {"x2": x * x}


def test_grid_is_every_combination_last_fastest():
    cases = tc.grid({"material": ["hdpe", "aluminium"], "prestress": [5.0, 10.0, 20.0]})
    assert [c.index for c in cases] == list(range(6))
    assert cases[1].parameters == {"material": "hdpe", "prestress": 10.0}
    assert cases[3].parameters == {"material": "aluminium", "prestress": 5.0}
    assert tc.grid({"x": 3})[0].parameters == {"x": 3}


def test_samples_depend_only_on_seed_and_index():
    dists = {"e": tc.Uniform(-0.05, 0.05), "k": tc.Normal(1.0, 0.1), "m": tc.Choice(("a", "b")),
             "w": tc.LogUniform(1e-3, 1e3), "c": 7}
    ten, three = tc.samples(dists, 10, seed=4), tc.samples(dists, 3, seed=4)
    assert ten[:3] == three                                 # n does not change earlier cases
    assert tc.samples(dists, 10, seed=5) != ten
    e = np.array([c.parameters["e"] for c in ten])
    assert np.all((e >= -0.05) & (e < 0.05)) and len(set(e)) == 10
    assert all(c.parameters["c"] == 7 for c in ten)


def test_samples_with_designs_pair_each_sample_with_every_design():
    cases = tc.samples({"e": tc.Uniform(0, 1)}, 3, seed=1,
                       designs={"material": ["hdpe", "aluminium"]})
    assert len(cases) == 6
    assert [c.parameters["material"] for c in cases[:2]] == ["hdpe", "aluminium"]
    assert cases[0].parameters["e"] == cases[1].parameters["e"] != cases[2].parameters["e"]


@pytest.mark.parametrize("call, match", [
    (lambda: tc.grid({}), "non-empty dict"),
    (lambda: tc.grid({"x": []}), "'x' has no values"),
    (lambda: tc.grid({"x": [[1, 2]]}), "parameter 'x'"),
    (lambda: tc.samples({"e": tc.Uniform(0, 1)}, 0, seed=1), "n must be an int >= 1"),
    (lambda: tc.samples({"e": tc.Uniform(0, 1)}, 3, seed=-1), "seed must be an int >= 0"),
    (lambda: tc.samples({"e": tc.Uniform(0, 1)}, 3, seed=1, designs={"e": [1]}), "both"),
    (lambda: tc.Uniform(1, 0), "low must be < high"),
    (lambda: tc.Normal(0, 0), "std must be > 0"),
    (lambda: tc.LogUniform(0, 1), "0 < low"),
    (lambda: tc.Choice(()), "non-empty"),
    (lambda: tc.Case(-1, {}), "index must be an int >= 0"),
])
def test_bad_cases_are_refused_by_name(call, match):
    with pytest.raises((TypeError, ValueError), match=match):
        call()


def test_serial_study_records_every_case_and_its_timings():
    result = tc.run_study(square, tc.grid({"x": [0, 1, 2, 3]}), progress=False)
    assert result.complete and result.failures == () and result.n_cases == 4
    assert [r.figures["x2"] for r in result.records] == [0, 1, 4, 9]
    assert result.records[3].figures == {"x2": 9, "big": True, "label": "x=3", "n": 3}
    assert all(r.cpu_time >= 0 and r.worker.endswith(f":{os.getpid()}") for r in result.records)
    np.testing.assert_array_equal(result.figure("x2"), [0, 1, 4, 9])
    assert "4 cases, 4 finished, 0 failed" in str(result)


def _fake_notebook_without_ipywidgets(monkeypatch):
    """What tqdm.autonotebook takes for a Jupyter kernel that has no ipywidgets: importing
    tqdm.auto there warns "IProgress not found" (the docs build's notebooks)."""
    import types

    shell = type("ZMQInteractiveShell", (), {})()
    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: shell
    for name in ("tqdm.auto", "tqdm.autonotebook", "tqdm.notebook"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "ipykernel.zmqshell", types.ModuleType("ipykernel.zmqshell"))
    monkeypatch.setitem(sys.modules, "ipywidgets", None)


@pytest.mark.parametrize("progress", [False, True])
def test_a_study_in_a_notebook_without_ipywidgets_warns_nothing(monkeypatch, capsys, progress):
    import warnings

    _fake_notebook_without_ipywidgets(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = tc.run_study(square, tc.grid({"x": [1, 2]}), progress=progress)
    assert result.complete
    err = capsys.readouterr().err
    assert "IProgress" not in err
    # no bar at all without progress; with it, tqdm's text bar over the cases
    assert ("0/2" in err) is progress
    assert "tqdm.auto" not in sys.modules and "tqdm.notebook" not in sys.modules


def test_failing_cases_are_listed_and_the_others_finish(tmp_path):
    result = tc.run_study(fragile, tc.grid({"x": list(range(8))}), out=tmp_path, progress=False)
    assert [r.index for r in result.records] == [0, 2, 6, 7]
    failures = {f.index: f for f in result.failures}
    assert sorted(failures) == [1, 3, 4, 5]
    assert failures[1].error_type == "SimulationError" and "collapsed" in failures[1].message
    assert failures[3].error_type == "PrestressError"
    assert failures[4].error_type == "ValueError" and "rest_length" in failures[4].message
    assert failures[5].error_type == "TypeError" and "'bad'" in failures[5].message
    assert failures[4].parameters == {"x": 4} and "test_studies.py" in failures[4].where
    on_disk = json.loads(store.case_path(tmp_path, 4).read_text())
    assert on_disk["status"] == "failed" and on_disk["error"]["type"] == "ValueError"
    assert "case 4 {'x': 4}: ValueError: rest_length must be > 0" in result.summary()


def test_the_dataframe_has_one_row_per_case():
    frame = tc.run_study(fragile, tc.grid({"x": [0, 1, 2]}), progress=False).to_dataframe()
    assert isinstance(frame, pandas.DataFrame) and list(frame.index) == [0, 1, 2]
    assert list(frame["status"]) == ["ok", "failed", "ok"]
    assert frame.loc[2, "x2"] == 4 and np.isnan(frame.loc[1, "x2"])
    assert frame.loc[1, "error"].startswith("SimulationError: simulation failed at t = 0.3 s")


def test_without_pandas_the_dataframe_names_the_extra(monkeypatch):
    result = tc.run_study(square, tc.grid({"x": [1]}), progress=False)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"pip install 'pandas>=2.2.2' .*pip install '\.\[pandas\]'"):
        result.to_dataframe()


def test_an_interrupted_study_keeps_its_cases_and_resumes_only_the_missing(tmp_path):
    cases = tc.grid({"x": list(range(10))})
    CALLS.clear()
    STOP["at"] = 6
    try:
        with pytest.raises(tc.StudyInterrupted) as info:
            tc.run_study(square, cases, out=tmp_path, progress=False)
    finally:
        STOP["at"] = None
    assert isinstance(info.value, KeyboardInterrupt)
    partial = info.value.result
    assert [r.index for r in partial.records] == list(range(6)) and not partial.complete
    assert sorted(p.name for p in (tmp_path / "cases").iterdir()) == [
        f"case-{k:06d}.json" for k in range(6)]
    CALLS.clear()
    result = tc.run_study(square, cases, out=tmp_path, progress=False)
    assert CALLS == [6, 7, 8, 9]                     # only the missing cases ran
    assert result.complete and result.n_resumed == 6
    assert [r.figures["x2"] for r in result.records] == [k * k for k in range(10)]
    CALLS.clear()
    assert tc.run_study(square, cases, out=tmp_path, progress=False).n_resumed == 10
    assert CALLS == []


def test_a_folder_of_another_study_is_refused(tmp_path):
    tc.run_study(square, tc.grid({"x": [1, 2]}), out=tmp_path, progress=False)
    with pytest.raises(tc.StudyFolderError, match="holds a different study .*2 cases.*3 cases"
                                                  ".*another folder"):
        tc.run_study(square, tc.grid({"x": [1, 2, 3]}), out=tmp_path, progress=False)
    with pytest.raises(tc.StudyFolderError, match="pipeline 'test_studies.square'"):
        tc.run_study(fragile, tc.grid({"x": [1, 2]}), out=tmp_path, progress=False)


def test_a_partial_file_or_damaged_case_is_run_again(tmp_path):
    cases = tc.grid({"x": [1, 2, 3]})
    tc.run_study(square, cases, out=tmp_path, progress=False)
    store.case_path(tmp_path, 1).write_text("{not json")
    (tmp_path / "cases" / "case-000002.json.part").write_text("{")
    CALLS.clear()
    result = tc.run_study(square, cases, out=tmp_path, progress=False)
    assert CALLS == [2] and result.n_resumed == 2 and result.complete


def test_retry_failed_runs_the_failed_cases_again(tmp_path):
    cases = tc.grid({"x": [0, 1]})
    tc.run_study(fragile, cases, out=tmp_path, progress=False)
    assert tc.run_study(fragile, cases, out=tmp_path, progress=False).n_resumed == 2
    again = tc.run_study(fragile, cases, out=tmp_path, progress=False, retry_failed=True)
    assert again.n_resumed == 1 and len(again.failures) == 1


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(pipeline=3, cases=tc.grid({"x": [1]})), TypeError, "pipeline must be callable"),
    (dict(pipeline=square, cases=[]), TypeError, "non-empty sequence of tenscontrol.Case"),
    (dict(pipeline=square, cases=[tc.Case(0, {"x": 1}), tc.Case(0, {"x": 2})]), ValueError,
     "index 0 appears twice"),
    (dict(pipeline=square, cases=tc.grid({"x": [1]}), executor="processes"), TypeError,
     "executor must be None or 'serial'"),
])
def test_bad_study_arguments_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        tc.run_study(kwargs.pop("pipeline"), kwargs.pop("cases"), progress=False, **kwargs)


@pytest.mark.slow
def test_a_process_pool_gives_the_serial_figures_and_runs_in_other_processes(tmp_path):
    cases = tc.samples({"x": tc.Uniform(-3, 3)}, 12, seed=2)
    serial = tc.run_study(square, cases, progress=False)
    with tc.process_pool(2) as pool:
        with pytest.raises(TypeError, match="picklable pipeline"):
            tc.run_study(lambda p: {}, cases, executor=pool, progress=False)
        pooled = tc.run_study(square, cases, executor=pool, out=tmp_path, progress=False)
        blas = pool.submit(_blas_threads).result()
    assert [r.figures for r in pooled.records] == [r.figures for r in serial.records]
    assert {r.worker for r in pooled.records}.isdisjoint({f"{os.uname().nodename}:{os.getpid()}"})
    assert blas == 1


def _blas_threads():
    import threadpoolctl

    return max((p["num_threads"] for p in threadpoolctl.threadpool_info()
                if p["user_api"] == "blas"), default=1)


def test_the_worker_warms_a_pipeline_once_per_process():
    class Counting:
        name = "counting-test"
        warmed = 0

        def warm(self):
            Counting.warmed += 1

        def __call__(self, params):
            return {"y": 1.0}

    worker._PREPARED["warm"].discard("counting-test")
    tc.run_study(Counting(), tc.grid({"x": [1, 2, 3]}), progress=False)
    tc.run_study(Counting(), tc.grid({"x": [4, 5]}), progress=False)
    assert Counting.warmed == 1


INTERRUPTED_STUDY = """
import signal, sys, time
import tenscontrol as tc
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, sys.argv[2])
from test_studies import slow_square
with tc.process_pool(2) as pool:
    try:
        r = tc.run_study(slow_square, tc.grid({"x": list(range(40))}), out=sys.argv[1],
                         executor=pool, progress=False)
        print("finished", len(r.records), r.n_resumed)
    except tc.StudyInterrupted as exc:
        print("interrupted", len(exc.result.records), flush=True)
        pool.shutdown(wait=False, cancel_futures=True)
"""


def slow_square(params):
    time.sleep(0.1)
    return {"x2": params["x"] ** 2, "pid": os.getpid()}


@pytest.mark.slow
def test_ctrl_c_stops_a_process_pool_study_and_a_rerun_finishes_it(tmp_path):
    out = tmp_path / "out"
    here = str(pathlib.Path(__file__).parent)
    proc = subprocess.Popen([sys.executable, "-c", INTERRUPTED_STUDY, str(out), here],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and len(list((out / "cases").glob("*.json"))) < 6:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0 and stdout.startswith("interrupted"), stdout + stderr[-3000:]
    kept = len(list((out / "cases").glob("*.json")))
    assert 6 <= kept < 40 and int(stdout.split()[1]) == kept
    rerun = subprocess.run([sys.executable, "-c", INTERRUPTED_STUDY, str(out), here],
                           capture_output=True, text=True, timeout=300)
    assert rerun.stdout.split() == ["finished", "40", str(kept)], rerun.stdout + rerun.stderr


def hangs(params):
    """Never returns on x == 2 (a solver caught in a loop); x^2 otherwise."""
    if params["x"] == 2:
        while True:
            time.sleep(0.5)
    return {"x2": params["x"] ** 2}


def test_an_unknown_status_or_another_cases_file_is_run_again(tmp_path):
    cases = tc.grid({"x": [1, 2, 3, 4]})
    tc.run_study(square, cases, out=tmp_path, progress=False)
    for index, change in ((0, {"status": "weird"}), (1, {"status": "failed"}),
                          (2, {"index": 3})):
        data = json.loads(store.case_path(tmp_path, index).read_text())
        store.case_path(tmp_path, index).write_text(json.dumps({**data, **change}))
    CALLS.clear()
    result = tc.run_study(square, cases, out=tmp_path, progress=False)
    assert CALLS == [1, 2, 3] and result.n_resumed == 1 and result.complete
    assert json.loads(store.case_path(tmp_path, 0).read_text())["status"] == "ok"


def test_a_nan_parameter_resumes_instead_of_rerunning(tmp_path):
    cases = tc.grid({"x": [float("nan"), -0.0, 1.0]})
    tc.run_study(square, cases, out=tmp_path, progress=False)
    CALLS.clear()
    assert tc.run_study(square, cases, out=tmp_path, progress=False).n_resumed == 3
    assert CALLS == []
    assert not store.same_parameters({"x": 0.0}, {"x": -0.0})   # other bits: another case


def test_part_files_are_unique_and_none_is_left(tmp_path):
    path = tmp_path / "a.json"
    parts = {store._write_part(path, {"k": 1}).name for _ in range(50)}
    assert len(parts) == 50 and all(p.startswith(f"a.json.{os.getpid()}.") for p in parts)
    for p in parts:
        (tmp_path / p).unlink()
    store.write_json(path, {"k": 2})
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


CONCURRENT_STUDY = """
import sys
sys.path.insert(0, sys.argv[2])
import tenscontrol as tc
from test_studies import slow_square
r = tc.run_study(slow_square, tc.grid({"x": list(range(12))}), out=sys.argv[1], progress=False)
print(len(r.records), len(r.failures))
"""


@pytest.mark.slow
def test_two_processes_on_one_folder_lose_and_corrupt_nothing(tmp_path):
    here = str(pathlib.Path(__file__).parent)
    procs = [subprocess.Popen([sys.executable, "-c", CONCURRENT_STUDY, str(tmp_path), here],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert [o[0].split() for o in outputs] == [["12", "0"], ["12", "0"]]
    files = sorted(p.name for p in (tmp_path / "cases").iterdir())
    assert files == [f"case-{k:06d}.json" for k in range(12)]        # no part file left
    for k in range(12):
        data = json.loads(store.case_path(tmp_path, k).read_text())
        assert data["status"] == "ok" and data["figures"]["x2"] == k * k


def test_the_case_count_is_bounded_before_any_case_is_built(monkeypatch):
    with pytest.raises(ValueError, match=r"grid: 1,000,000,000,000 cases \(10 p0 x 10 p1 .*"
                                         r"exceeds the bound of 1,000,000"):
        tc.grid({f"p{k}": list(range(10)) for k in range(12)})
    with pytest.raises(ValueError, match=r"samples: 1,000,000,000 cases .* bound of 1,000,000"):
        tc.samples({"e": tc.Uniform(0, 1)}, 10**9, seed=1)
    with pytest.raises(ValueError, match="more than 1,000,000 values"):
        tc.grid({"x": iter(range(10**12))})
    from tenscontrol.studies import runner

    monkeypatch.setattr(runner, "MAX_CASES", 3)
    with pytest.raises(ValueError, match="more than 3 cases"):
        tc.run_study(square, (tc.Case(k, {"x": k}) for k in range(10**12)), progress=False)


@pytest.mark.parametrize("value, error, match", [
    (-1.0, ValueError, "case_timeout must be positive"),
    ("5", TypeError, "case_timeout must be a number of seconds"),
    (True, TypeError, "case_timeout must be a number of seconds"),
])
def test_a_bad_case_timeout_is_refused(value, error, match):
    with pytest.raises(error, match=match):
        tc.run_study(square, tc.grid({"x": [1]}), case_timeout=value, progress=False)


def test_case_timeout_needs_a_picklable_pipeline():
    with pytest.raises(TypeError, match="case_timeout .* needs a picklable pipeline"):
        tc.run_study(lambda p: {}, tc.grid({"x": [1]}), case_timeout=5.0, progress=False)


@pytest.mark.slow
def test_a_hung_case_is_recorded_and_the_others_finish_serially(tmp_path):
    cases = tc.grid({"x": [0, 1, 2, 3]})
    result = tc.run_study(hangs, cases, out=tmp_path, case_timeout=2.0, progress=False)
    assert [r.figures["x2"] for r in result.records] == [0, 1, 9]
    (failure,) = result.failures
    assert failure.index == 2 and failure.error_type == "CaseTimeout" and failure.recorded
    assert "case_timeout=2 s; its worker process was killed and replaced" in failure.message
    assert {r.worker for r in result.records}.isdisjoint({f"{os.uname().nodename}:{os.getpid()}"})
    assert json.loads(store.case_path(tmp_path, 2).read_text())["error"]["type"] == "CaseTimeout"
    again = tc.run_study(hangs, cases, out=tmp_path, case_timeout=2.0, progress=False)
    assert again.n_resumed == 4 and len(again.failures) == 1


@pytest.mark.slow
def test_a_hung_case_on_a_process_pool_is_killed_and_its_worker_replaced():
    with tc.process_pool(2) as pool:
        result = tc.run_study(hangs, tc.grid({"x": list(range(6))}), executor=pool,
                              case_timeout=2.0, progress=False)
    assert [r.index for r in result.records] == [0, 1, 3, 4, 5]
    assert [(f.index, f.error_type) for f in result.failures] == [(2, "CaseTimeout")]


def test_a_failing_warm_up_is_recorded_per_case():
    class BadWarm:
        name = "bad-warm-test"

        def warm(self):
            raise ValueError("gamma_min must be finite, got nan")

        def __call__(self, params):
            return {"y": 1.0}

    worker._PREPARED["warm"].discard("bad-warm-test")
    result = tc.run_study(BadWarm(), tc.grid({"x": [1, 2]}), progress=False)
    assert [(f.error_type, f.message) for f in result.failures] == [
        ("ValueError", "gamma_min must be finite, got nan")] * 2
