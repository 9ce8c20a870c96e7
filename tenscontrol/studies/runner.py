"""Run a study: every case through a pipeline, serially or on an executor, resumable from disk.

:func:`run_study` sends each case to :func:`tenscontrol.studies.worker.run_case` on the chosen
engine: in this process (serial, the default), on any ``concurrent.futures.Executor`` (a
process pool from :func:`process_pool`), or on a Dask cluster through a
``distributed.Client`` (its concurrent.futures-compatible ``client.get_executor()``). Results
are written to the output folder as they arrive, each by an atomic rename of a part file of
its own, so two processes running the same study into one folder lose and corrupt nothing.

With ``case_timeout``, a case that runs longer is recorded as failed (``CaseTimeout``) and the
others go on: on the serial engine and on a process pool the cases run in supervised worker
processes (:mod:`tenscontrol.studies.supervised`) and the overrunning one is killed and
replaced; on Dask and other executors at most one case per worker slot is in flight, so a
case's clock starts when it starts, and an overrunning one is cancelled and its slot given up.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import itertools
import multiprocessing
import numbers
import os
import pickle
import time

from tenscontrol import validation
from tenscontrol.studies import store
from tenscontrol.studies.cases import MAX_CASES, Case
from tenscontrol.studies.results import StudyInterrupted, StudyResult, study_result
from tenscontrol.studies.supervised import run_on_dask, run_supervised
from tenscontrol.studies.worker import (blas_environment, executor_failure, future_record,
                                        pipeline_definition,
                                        pipeline_name, pool_initializer, run_case,
                                        timed_out)

__all__ = ["process_pool", "run_study"]


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
    with blas_environment():
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
    try:
        cases = (None if isinstance(cases, (str, bytes, dict))
                 else tuple(itertools.islice(cases, MAX_CASES + 1)))
    except TypeError:
        cases = None
    if not cases or not all(isinstance(c, Case) for c in cases):
        raise TypeError("run_study: cases must be a non-empty sequence of tenscontrol.Case, from "
                        "tenscontrol.grid(...) or tenscontrol.samples(...)")
    if len(cases) > MAX_CASES:
        raise ValueError(f"run_study: more than {MAX_CASES:,} cases, the bound of a study "
                         "(tenscontrol.studies.cases.MAX_CASES); split it into several studies")
    counts = collections.Counter(c.index for c in cases)
    if len(counts) != len(cases):
        dup = next(i for i, n in counts.items() if n > 1)
        raise ValueError(f"run_study: case index {dup} appears twice; every case needs its own "
                         "index (grid and samples number them 0, 1, ...)")
    return cases


def _check_timeout(case_timeout):
    """`case_timeout` as seconds > 0, or None."""
    if case_timeout is None:
        return None
    return validation.real("run_study: case_timeout", case_timeout, what="a number of seconds",
                           positive=True)


def _check_picklable(pipeline, engine, supervised: bool) -> None:
    """A process pool (or case_timeout's worker processes) pickles the pipeline: say so
    before any case runs."""
    if not (supervised or isinstance(engine, cf.ProcessPoolExecutor)):
        return
    what = "case_timeout (cases run in worker processes)" if supervised else "a process pool"
    try:
        pickle.dumps(pipeline)
    except Exception as exc:
        raise TypeError(f"run_study: {what} needs a picklable pipeline (a function "
                        f"defined at module level, not a lambda or a local function); "
                        f"{pipeline_name(pipeline)} is not: {exc}") from None


def _manifest(name: str, definition, cases) -> dict:
    return {"format": store.FORMAT, "pipeline": name, "definition": definition,
            "hash": store.definition_hash(name, definition, cases),
            "cases": [{"index": c.index, "parameters": c.parameters} for c in cases]}


class _NoProgress:
    """The progress bar of a study run without one: shows nothing, imports nothing."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(enabled: bool, total: int, initial: int, name: str):
    """tqdm's text bar on stderr over the cases, or a silent stand-in when not `enabled`.

    tqdm is imported only for a bar that shows, and its plain text bar (``tqdm.std``) rather
    than ``tqdm.auto``, which in a notebook without ipywidgets prints a warning on stderr
    ("IProgress not found") when it is imported.
    """
    if not enabled:
        return _NoProgress()
    from tqdm.std import tqdm

    return tqdm(total=total, initial=initial, unit="case",
                desc=name if len(name) <= 30 else name[-30:], leave=False)


def run_study(pipeline, cases, *, out=None, executor=None, progress: bool = True,
              retry_failed: bool = False, case_timeout: float | None = None) -> StudyResult:
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
        with the same folder, only the missing cases run (and those whose file is damaged or
        not a whole record); a folder holding a different study raises
        :class:`~tenscontrol.studies.store.StudyFolderError`. None: nothing is written. Two
        processes may run the same study into one folder at once: nothing is lost or
        corrupted (a case both ran is written whole by each; the serial engine skips a case
        the other process finished first).
    executor : None, "serial", concurrent.futures.Executor or distributed.Client
        Where the cases run: in this process (default), on the executor (e.g.
        ``tenscontrol.studies.process_pool(2)``; it is not shut down here), or on a Dask
        cluster. Each worker process limits BLAS to one thread and warms the pipeline once,
        before its first case.
    progress : bool
        Show a progress bar over the cases (tqdm, on stderr).
    retry_failed : bool
        With `out`: run again the cases whose pipeline failed before (default: keep them).
    case_timeout : float, optional
        The most seconds a case may run; one that runs longer is recorded as failed
        (``CaseTimeout``, kept on a resume unless `retry_failed`) and the others go on. Serial
        and on a process pool, the cases then run in worker processes of their own (one, or as
        many as the pool has; the pool itself stays idle) and the overrunning one is killed
        and replaced; the pipeline must be picklable, and a worker's one-time warm-up is not
        counted. On Dask, each case runs on a worker with a free thread, and an overrunning
        one is cancelled and its worker restarted (through its nanny; a worker that cannot be
        restarted is left out). On other executors (thread pools) at most one case per worker
        is in flight and an overrunning one is cancelled (a thread cannot be killed: its slot
        stays busy). None (default): no limit.

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
    limit = _check_timeout(case_timeout)
    engine = _engine(executor)
    supervised = limit is not None and (engine is None
                                        or isinstance(engine, cf.ProcessPoolExecutor))
    _check_picklable(pipeline, engine, supervised)
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
        if supervised:
            run_supervised(pipeline, todo, finished, limit=limit,
                           workers=1 if engine is None else _slots(executor, engine))
        elif engine is None:
            for case in todo:
                # another process running this study into the same folder may have done it
                data = store.read_case(folder, case) if out is not None else None
                if data is None:
                    finished(run_case(pipeline, case))
                else:
                    done[case.index] = {**data, "resumed": True}
                    bar.update(1)
        elif limit is not None and engine is not executor:     # a distributed.Client
            run_on_dask(executor, pipeline, todo, finished, limit=limit)
        elif limit is not None:
            _run_limited(engine, pipeline, todo, finished, limit, _slots(executor, engine))
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
            finished(future_record(future, futures[future]))
    except KeyboardInterrupt:
        for future in futures:
            future.cancel()
        raise


def _slots(executor, engine) -> int:
    """How many cases `engine` runs at once: a pool's workers (else the cores)."""
    return max(1, int(getattr(engine, "_max_workers", None) or os.cpu_count() or 1))


def _run_limited(engine: cf.Executor, pipeline, todo, finished, limit: float,
                 slots: int) -> None:
    """`todo` on `engine`, at most one case per free slot, each cancelled after `limit` s."""
    pending, running, stuck = collections.deque(todo), {}, 0
    try:
        while pending or running:
            while pending and len(running) + stuck < slots:
                case = pending.popleft()
                running[engine.submit(run_case, pipeline, case)] = (case,
                                                                    time.monotonic() + limit)
            if not running:         # every slot holds a case that never returned
                for case in pending:
                    finished(executor_failure(case, RuntimeError(
                        f"not run: all {slots} worker slots are held by cases that ran past "
                        "case_timeout; rerun the study to run it")))
                return
            nearest = min(deadline for _, deadline in running.values())
            done, _ = cf.wait(running, timeout=max(0.0, nearest - time.monotonic()),
                              return_when=cf.FIRST_COMPLETED)
            for future in done:
                finished(future_record(future, running.pop(future)[0]))
            now = time.monotonic()
            for future, (case, deadline) in list(running.items()):
                if deadline <= now:
                    del running[future]
                    future.cancel()
                    stuck += 1
                    finished(timed_out(case, limit, "it was cancelled (its worker thread "
                                                    "cannot be stopped and stays busy)"))
    except KeyboardInterrupt:
        for future in running:
            future.cancel()
        raise

