"""Cases with a time limit: run in worker processes that are killed when a case overruns.

A pipeline that never returns (a solver caught in a loop, a C routine that blocks) cannot be
stopped from inside its own process without signals, which do not reach compiled code. So
:func:`run_supervised` runs the cases in spawned worker processes of its own, one case at a
time per process, each sent the pipeline once. The clock of a case starts when it is sent to a
warmed, idle worker (the worker's one-time warm-up is not counted); when it passes the limit the
process is killed, the case is recorded as failed (``CaseTimeout``) and a fresh process takes
its place for the remaining cases. This is what :func:`~tenscontrol.run_study` does with a
``case_timeout`` on the serial engine (one worker) and on a process pool (as many workers as
the pool has).
"""

from __future__ import annotations

import collections
import multiprocessing
import time
from multiprocessing.connection import wait

from tenscontrol.studies.worker import (blas_environment, executor_failure, pool_initializer,
                                        prepare_worker, run_case, timed_out)

__all__ = ["run_supervised"]

_READY = "ready"


def _serve(conn, pipeline) -> None:
    """A worker process: warm the pipeline, say so, then run each case it is sent."""
    pool_initializer()
    try:
        prepare_worker(pipeline)
    except Exception:       # recorded by run_case, case by case, with the error
        pass
    conn.send(_READY)
    while True:
        try:
            case = conn.recv()
        except EOFError:
            return
        if case is None:
            return
        conn.send(run_case(pipeline, case))


class _Worker:
    """One worker process, its pipe, and the case it runs with that case's deadline."""

    def __init__(self, context, pipeline):
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, pipeline), daemon=True)
        self.process.start()
        child.close()
        self.ready, self.case, self.deadline = False, None, None

    def give(self, case, limit: float) -> None:
        self.conn.send(case)
        self.case, self.deadline = case, time.monotonic() + limit

    def receive(self):
        """The next message, or None if the process died."""
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            return None

    def stop(self) -> None:
        """Kill the process (idle or not: nothing of it is kept) and close the pipe."""
        self.process.kill()
        self.process.join()
        self.conn.close()


def _handle(worker: _Worker, finished, limit: float, now: float):
    """Act on `worker` after a wait: its result, its death or its overrun. True to replace it."""
    if worker.conn.poll():
        message = worker.receive()
        if message == _READY:
            worker.ready = True
            return False
        if message is not None:
            worker.case = None
            finished(message)
            return False
    elif worker.process.is_alive():
        if worker.case is None or now < worker.deadline:
            return False
        finished(timed_out(worker.case, limit, "its worker process was killed and replaced"))
        worker.stop()
        return True
    worker.stop()
    code = worker.process.exitcode
    if not worker.ready:            # it could not even load the pipeline: so will the next
        raise RuntimeError(f"run_study: a worker process for case_timeout could not start "
                           f"(exit code {code}); the pipeline must be importable in a fresh "
                           "process: define it in a module, not in a notebook or `python -c`")
    if worker.case is not None:     # the process died under the case (a crash, an OOM kill)
        finished(executor_failure(worker.case, RuntimeError(
            f"the worker process running the case died (exit code {code})")))
    return True


def run_supervised(pipeline, todo, finished, *, workers: int, limit: float) -> None:
    """Run the cases `todo` on `workers` supervised processes, at most `limit` seconds each;
    hand every record (result, failure, timeout) to `finished` as it comes."""
    context = multiprocessing.get_context("spawn")
    pending = collections.deque(todo)
    pool = []
    try:
        with blas_environment():
            pool = [_Worker(context, pipeline) for _ in range(min(workers, len(pending)))]
        while pending or any(w.case is not None for w in pool):
            for w in pool:
                if w.ready and w.case is None and pending:
                    w.give(pending.popleft(), limit)
            deadlines = [w.deadline for w in pool if w.case is not None]
            wait_for = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
            wait([w.conn for w in pool] + [w.process.sentinel for w in pool], timeout=wait_for)
            now = time.monotonic()
            for k, w in enumerate(pool):
                if _handle(w, finished, limit, now):
                    with blas_environment():
                        pool[k] = _Worker(context, pipeline)
    finally:
        for w in pool:
            w.stop()
