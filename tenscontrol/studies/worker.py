"""What runs in a worker: one case of a study, with the once-per-process preparation.

:func:`run_case` is the function every executor calls (serially in the caller's process, or in
a process pool's or Dask worker's process). The first call in a process limits BLAS to one
thread (two workers on two cores must not each start a BLAS pool of two) and warms the
pipeline (its compiled kernels load or compile then, not inside a timed case); later calls in
the same process skip both.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import os
import signal
import socket
import time
import traceback

__all__ = ["BLAS_ENVIRONMENT", "blas_environment", "executor_failure", "future_record",
           "pipeline_definition",
           "pipeline_name", "pool_initializer", "prepare_worker", "run_case", "timed_out"]

# set in a process pool's environment before it spawns, so that numpy's BLAS starts with one
# thread (threadpoolctl then also limits it at run time, for executors we do not create)
BLAS_ENVIRONMENT = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

_PREPARED = {"blas": False, "warm": set()}


@contextlib.contextmanager
def blas_environment():
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


def pipeline_name(pipeline) -> str:
    """The pipeline's ``name`` attribute, else its module and qualified name."""
    name = getattr(pipeline, "name", None)
    if isinstance(name, str) and name:
        return name
    return f"{getattr(pipeline, '__module__', '?')}.{getattr(pipeline, '__qualname__', '?')}"


def pipeline_definition(pipeline):
    """The pipeline's settings as JSON data (``pipeline.definition()``), else None."""
    method = getattr(pipeline, "definition", None)
    return method() if callable(method) else None


def prepare_worker(pipeline=None) -> float:
    """Limit BLAS to one thread and warm `pipeline`, once per process; the seconds it took."""
    start = time.perf_counter()
    if not _PREPARED["blas"]:
        for key, value in BLAS_ENVIRONMENT.items():
            os.environ.setdefault(key, value)
        try:
            import threadpoolctl
        except ImportError:         # pragma: no cover - a core dependency
            pass
        else:
            threadpoolctl.threadpool_limits(1)
        _PREPARED["blas"] = True
    name = pipeline_name(pipeline) if pipeline is not None else None
    if name is not None and name not in _PREPARED["warm"]:
        warm = getattr(pipeline, "warm", None)
        if callable(warm):
            warm()
        _PREPARED["warm"].add(name)
    return time.perf_counter() - start


def pool_initializer() -> None:
    """The initializer of :func:`~tenscontrol.studies.process_pool`'s processes.

    They ignore SIGINT, so that Ctrl-C (sent to the whole process group) reaches only the
    caller, which cancels the pending cases and shuts the pool down; and they limit BLAS.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    prepare_worker()


def _checked_figures(figures) -> dict:
    """The pipeline's figures as plain JSON scalars, or a TypeError naming the bad entry."""
    if not isinstance(figures, dict):
        raise TypeError(f"the pipeline must return a dict of named figures, got "
                        f"{type(figures).__name__}")
    clean = {}
    for name, value in figures.items():
        if not isinstance(name, str):
            raise TypeError(f"figure names must be strings, got {name!r}")
        if isinstance(value, bool) or type(value).__name__ == "bool_":
            clean[name] = bool(value)
        elif isinstance(value, numbers.Integral):
            clean[name] = int(value)
        elif isinstance(value, numbers.Real):
            clean[name] = float(value)
        elif isinstance(value, str):
            clean[name] = value
        else:
            raise TypeError(f"figure {name!r} must be a float, int, bool or str, got "
                            f"{type(value).__name__}")
    return clean


def run_case(pipeline, case) -> dict:
    """Run `pipeline` on one case; the result dict written to the case's file.

    An exception of the pipeline or of its warm-up (any ``Exception``) is recorded with its
    type and message; ``KeyboardInterrupt`` (and other ``BaseException``) propagates: it stops
    the study.
    """
    record = {"index": case.index, "parameters": case.parameters}
    warm_time = 0.0
    start, cpu = time.perf_counter(), time.process_time()
    try:
        warm_time = prepare_worker(pipeline)
        start, cpu = time.perf_counter(), time.process_time()
        record["figures"] = _checked_figures(pipeline(dict(case.parameters)))
        record["status"] = "ok"
    except Exception as exc:        # recorded: one failing case does not stop the others
        record["status"] = "failed"
        record["error"] = {"type": type(exc).__name__, "message": str(exc),
                           "where": _where(exc)}
    record["wall_time"] = time.perf_counter() - start
    record["cpu_time"] = time.process_time() - cpu
    record["warm_time"] = warm_time
    record["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    return record


def executor_failure(case, exc: BaseException) -> dict:
    """The record of a case its executor could not run (not written: a rerun retries it)."""
    return {"index": case.index, "parameters": case.parameters, "status": "failed",
            "recorded": False, "cpu_time": 0.0,
            "error": {"type": type(exc).__name__, "message": str(exc) or repr(exc), "where": ""}}


def future_record(future, case) -> dict:
    """The record of a finished future of `case` (an executor failure if it raised)."""
    try:
        return future.result()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:     # the executor failed: crashed worker, pickling, cancelled
        return executor_failure(case, exc)


def timed_out(case, limit: float, how: str) -> dict:
    """The record of a case that ran past its time limit (written: a rerun keeps it, unless
    ``retry_failed``); `how` says what became of its worker."""
    return {"index": case.index, "parameters": case.parameters, "status": "failed",
            "wall_time": float(limit), "cpu_time": 0.0,
            "error": {"type": "CaseTimeout", "where": "",
                      "message": f"the case ran longer than case_timeout={limit:g} s; {how}"}}


def _where(exc: BaseException) -> str:
    """file:line of the innermost frame that raised `exc`."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    f = frames[-1]
    return f"{os.path.basename(f.filename)}:{f.lineno} in {f.name}"


def is_finite_number(value) -> bool:
    """True for a finite float or int (not a bool): what the plots can place on an axis."""
    return (isinstance(value, numbers.Real) and not isinstance(value, bool)
            and math.isfinite(value))
