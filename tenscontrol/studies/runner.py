"""Run a study: every case through a pipeline, serially or on an executor, resumable from disk.

:func:`run_study` sends each case to :func:`tenscontrol.studies.worker.run_case` on the chosen
engine: in this process (serial, the default), on any ``concurrent.futures.Executor`` (a
process pool from :func:`process_pool`), or on a Dask cluster through a
``distributed.Client`` (its concurrent.futures-compatible ``client.get_executor()``). Results
are written to the output folder as they arrive; the caller's process is the only writer.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import multiprocessing
import numbers
import os
import pickle
import time

from tenscontrol import validation
from tenscontrol.studies import store
from tenscontrol.studies.cases import Case
from tenscontrol.studies.results import StudyInterrupted, StudyResult, study_result
from tenscontrol.studies.worker import (BLAS_ENVIRONMENT, pipeline_definition, pipeline_name,
                                        pool_initializer, run_case)

__all__ = ["process_pool", "run_study"]


@contextlib.contextmanager
def _blas_environment():
    """The parent's environment with single-threaded BLAS while a pool spawns its processes."""
    saved = {k: os.environ.get(k) for k in BLAS_ENVIRONMENT}
    os.environ.update(BLAS_ENVIRONMENT)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def process_pool(workers: int) -> cf.ProcessPoolExecutor:
    """A process pool for :func:`run_study`: spawned processes with single-threaded BLAS.

    The processes are started here (``spawn``, the same on every platform), with
    ``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS`` set to 1 in their
    environment before numpy loads, and threadpoolctl's limit of one thread set by their
    initializer, which also makes them ignore SIGINT: Ctrl-C reaches only the caller, which
    cancels the pending cases. Use it as a context manager (``with process_pool(2) as pool: ...``) or shut it
    down yourself.

    Parameters
    ----------
    workers : int
        Number of processes, >= 1 (at most the number of cores is useful).
    """
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1:
        raise ValueError(f"process_pool: workers must be an int >= 1, got {workers!r}")
    with _blas_environment():
        pool = cf.ProcessPoolExecutor(int(workers), mp_context=multiprocessing.get_context("spawn"),
                                      initializer=pool_initializer)
        # start every process now, while the environment says one BLAS thread
        cf.wait([pool.submit(os.getpid) for _ in range(int(workers))])
    return pool


def _engine(executor):
    """`executor` as a concurrent.futures.Executor (None for serial)."""
    if executor is None or (isinstance(executor, str) and executor == "serial"):
        return None
    if isinstance(executor, cf.Executor):
        return executor
    if type(executor).__module__.split(".")[0] == "distributed" and hasattr(executor,
                                                                           "get_executor"):
        return executor.get_executor(pure=False)
    raise TypeError("run_study: executor must be None or 'serial', a concurrent.futures.Executor "
                    "(e.g. tenscontrol.studies.process_pool(2)) or a distributed.Client, got "
                    f"{executor!r}")


def _check_cases(cases) -> tuple:
    cases = tuple(cases) if not isinstance(cases, (str, bytes, dict)) else None
    if not cases or not all(isinstance(c, Case) for c in cases):
        raise TypeError("run_study: cases must be a non-empty sequence of tenscontrol.Case, from "
                        "tenscontrol.grid(...) or tenscontrol.samples(...)")
    indices = [c.index for c in cases]
    if len(set(indices)) != len(indices):
        dup = next(i for i in indices if indices.count(i) > 1)
        raise ValueError(f"run_study: case index {dup} appears twice; every case needs its own "
                         "index (grid and samples number them 0, 1, ...)")
    return cases


def _check_picklable(pipeline, engine) -> None:
    """A process pool pickles the pipeline with pickle: say so before any case runs."""
    if not isinstance(engine, cf.ProcessPoolExecutor):
        return
    try:
        pickle.dumps(pipeline)
    except Exception as exc:
        raise TypeError(f"run_study: a process pool needs a picklable pipeline (a function "
                        f"defined at module level, not a lambda or a local function); "
                        f"{pipeline_name(pipeline)} is not: {exc}") from None


def _manifest(name: str, definition, cases) -> dict:
    return {"format": store.FORMAT, "pipeline": name, "definition": definition,
            "hash": store.definition_hash(name, definition, cases),
            "cases": [{"index": c.index, "parameters": c.parameters} for c in cases]}


def _executor_failure(case, exc: BaseException) -> dict:
    """The record of a case its executor could not run (not written: a rerun retries it)."""
    return {"index": case.index, "parameters": case.parameters, "status": "failed",
            "recorded": False, "cpu_time": 0.0,
            "error": {"type": type(exc).__name__, "message": str(exc) or repr(exc), "where": ""}}


def _progress(enabled: bool, total: int, initial: int, name: str):
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, disable=not enabled, unit="case",
                desc=name if len(name) <= 30 else name[-30:], leave=False)


def run_study(pipeline, cases, *, out=None, executor=None, progress: bool = True,
              retry_failed: bool = False) -> StudyResult:
    """Run `pipeline` on every case; record failures; write each result as it arrives.

    Parameters
    ----------
    pipeline : callable
        ``pipeline(parameters: dict) -> dict`` of named figures (floats, ints, bools or
        strings): a plain function, or a ready-made pipeline (:class:`NormsPipeline`,
        :class:`LQRPipeline`). An exception it raises is recorded as the case's failure and the
        other cases go on. A process pool needs it picklable (defined at module level).
    cases : sequence of Case
        From :func:`grid` or :func:`samples`.
    out : str or path-like, optional
        Folder for the results: ``manifest.json`` (the study's definition and hash) and one
        ``cases/case-NNNNNN.json`` per case, written atomically as each case finishes. Rerun
        with the same folder, only the missing cases run; a folder holding a different study
        raises :class:`~tenscontrol.studies.store.StudyFolderError`. None: nothing is written.
    executor : None, "serial", concurrent.futures.Executor or distributed.Client
        Where the cases run: in this process (default), on the executor (e.g.
        ``tenscontrol.studies.process_pool(2)``; it is not shut down here), or on a Dask
        cluster. Each worker process limits BLAS to one thread and warms the pipeline once,
        before its first case.
    progress : bool
        Show a progress bar over the cases (tqdm, on stderr).
    retry_failed : bool
        With `out`: run again the cases whose pipeline failed before (default: keep them).

    Returns
    -------
    StudyResult

    Raises
    ------
    StudyInterrupted
        On Ctrl-C (or a ``KeyboardInterrupt`` from the pipeline): pending cases are cancelled,
        what finished is kept (on disk and in ``.result``).
    """
    if not callable(pipeline):
        raise TypeError(f"run_study: pipeline must be callable, got {type(pipeline).__name__}")
    cases = _check_cases(cases)
    progress = validation.flag("run_study: progress", progress)
    retry_failed = validation.flag("run_study: retry_failed", retry_failed)
    engine = _engine(executor)
    _check_picklable(pipeline, engine)
    name = pipeline_name(pipeline)
    done = {}
    if out is not None:
        folder = store.open_folder(out, _manifest(name, pipeline_definition(pipeline), cases))
        done = {k: {**d, "resumed": True} for k, d in store.finished_cases(folder, cases).items()
                if retry_failed is False or d.get("status") == "ok"}
    n_resumed = len(done)
    todo = [c for c in cases if c.index not in done]
    start = time.perf_counter()
    bar = _progress(progress, len(cases), n_resumed, name)

    def finished(data):
        if out is not None and data.get("recorded", True):
            store.write_case(folder, data)
        done[data["index"]] = data
        bar.update(1)

    try:
        if engine is None:
            for case in todo:
                finished(run_case(pipeline, case))
        else:
            _run_on(engine, pipeline, todo, finished)
    except KeyboardInterrupt:
        raise StudyInterrupted(study_result(name, len(cases), done, n_resumed,
                                            time.perf_counter() - start, out)) from None
    finally:
        bar.close()
    return study_result(name, len(cases), done, n_resumed, time.perf_counter() - start, out)


def _run_on(engine: cf.Executor, pipeline, todo, finished) -> None:
    """Submit every case to `engine` and hand each result to `finished` as it completes."""
    futures = {}
    try:
        for case in todo:
            futures[engine.submit(run_case, pipeline, case)] = case
        for future in cf.as_completed(futures):
            try:
                data = future.result()
            except KeyboardInterrupt:
                raise
            except BaseException as exc:     # the executor failed: crashed worker, pickling
                data = _executor_failure(futures[future], exc)
            finished(data)
    except KeyboardInterrupt:
        for future in futures:
            future.cancel()
        raise
