"""Studies on a Dask LocalCluster and from files on process pools: the serial figures exactly."""

import distributed
import pytest

import tenscontrol as tc

pytestmark = pytest.mark.slow
OUT = tc.Selection(nodes=[2, 3], axes="xz")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        yield c


@pytest.mark.slow
def test_dask_gives_the_serial_figures_of_the_norms_pipeline(client, tmp_path):
    pipeline = tc.NormsPipeline(tc.catalog.tbar("stedy", damping=5.0), prestress=10.0,
                                outputs=OUT, t_final=0.3)
    cases = tc.samples({"rest_length_error": tc.Uniform(-0.02, 0.02)}, 3, seed=7,
                       designs={"material": ["hdpe", "aluminium"]})
    serial = tc.run_study(pipeline, cases, progress=False)
    on_dask = tc.run_study(pipeline, cases, executor=client, out=tmp_path, progress=False)
    assert on_dask.complete and not on_dask.failures
    assert [(r.index, r.figures) for r in on_dask.records] == [
        (r.index, r.figures) for r in serial.records]
    workers = {r.worker for r in on_dask.records}
    assert len(workers) >= 1 and all(":" in w for w in workers)
    # each worker process limits BLAS to one thread
    threads = client.run(_blas_threads)
    assert set(threads.values()) == {1}


def _blas_threads():
    import threadpoolctl

    return max((p["num_threads"] for p in threadpoolctl.threadpool_info()
                if p["user_api"] == "blas"), default=1)


def test_failures_on_dask_are_recorded(client):
    from test_studies import fragile

    result = tc.run_study(fragile, tc.grid({"x": list(range(6))}), executor=client,
                          progress=False)
    assert [f.index for f in result.failures] == [1, 3, 4, 5]
    assert result.failures[0].error_type == "SimulationError"


@pytest.mark.slow
def test_a_hung_case_on_dask_is_cancelled_and_the_others_finish():
    from test_studies import hangs

    # a cluster of its own: the hung case's worker is restarted
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        result = tc.run_study(hangs, tc.grid({"x": list(range(6))}), executor=client,
                              case_timeout=3.0, progress=False)
    assert [r.index for r in result.records] == [0, 1, 3, 4, 5]
    (failure,) = result.failures
    assert failure.index == 2 and failure.error_type == "CaseTimeout"
    assert "its Dask worker was restarted" in failure.message


@pytest.mark.slow
@pytest.mark.parametrize("executor", [{"kind": "processes", "workers": 2},
                                      {"kind": "dask", "address": "local", "workers": 2}])
def test_a_study_file_runs_on_its_executor(tmp_path, executor):
    import json

    from test_study_files import STUDY

    path = tmp_path / "study.json"
    path.write_text(json.dumps(STUDY))
    serial = tc.run_study_file(path, out=tmp_path / "serial", progress=False)
    other = tc.run_study_file(path, out=tmp_path / executor["kind"], executor=executor,
                              progress=False)
    assert [r.figures for r in other.records] == [r.figures for r in serial.records]
    assert {r.worker for r in other.records}.isdisjoint({r.worker for r in serial.records})
