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

On a Dask cluster (:func:`run_on_dask`) each case is pinned to a worker with a free thread, so
that its clock starts when it starts; an overrunning case is cancelled and its worker restarted
through its nanny (a Dask worker thread cannot be stopped otherwise), and warmed again.
"""

from __future__ import annotations

import collections
import math
import multiprocessing
import time
from multiprocessing.connection import wait

from tenscontrol.studies.worker import (blas_environment, executor_failure, future_record,
                                        pool_initializer, prepare_worker, run_case, timed_out)

__all__ = ["run_on_dask", "run_supervised"]

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


def _warm_on(client, pipeline, addresses) -> None:
    """Warm the pipeline on each Dask worker of `addresses`, so no case's clock counts it."""
    futures = [client.submit(prepare_worker, pipeline, workers=[a], allow_other_workers=False,
                             pure=False) for a in addresses]
    for future in futures:
        try:
            future.result()
        except Exception:
            pass        # each case then records the warm-up's error


class _DaskSlots:
    """Which Dask workers have a free thread: each case is pinned to one, so its clock starts
    when it starts. A worker is warmed before its first case (also after a restart, whatever
    its address); a worker whose case overran is restarted, or left out if it cannot be."""

    REJOIN = 300.0      # the longest wait [s] for restarted workers to join the scheduler again

    def __init__(self, client, pipeline):
        self.client, self.pipeline = client, pipeline
        self.busy, self.stuck, self.warmed = collections.Counter(), set(), set()
        self.expected, self.restarted = len(client.nthreads()), -math.inf

    def free(self):
        """The address of a warmed worker with a free thread, or None."""
        threads = self.client.nthreads()
        new = [a for a in threads if a not in self.warmed and a not in self.stuck]
        if new:
            _warm_on(self.client, self.pipeline, new)
            self.warmed.update(new)
        for address, n in threads.items():
            if address not in self.stuck and self.busy[address] < n:
                return address
        return None

    def rejoining(self) -> bool:
        """True while a restarted worker may still join the scheduler."""
        return (len(set(self.client.nthreads()) - self.stuck) < self.expected
                and time.monotonic() < self.restarted + self.REJOIN)

    def replace(self, address: str) -> str:
        """Restart the worker at `address` if it runs nothing else; what became of it."""
        if self.busy[address] == 0:
            try:
                status = self.client.restart_workers([address], raise_for_error=False)
            except Exception as exc:      # no nanny, or the scheduler refuses
                status = {address: str(exc)}
            self.warmed.discard(address)  # a nanny may give it the same address again
            if status.get(address) in ("OK", "timed out"):
                self.restarted = time.monotonic()
                return "its Dask worker was restarted"
        self.stuck.add(address)
        self.expected -= 1
        return "it was cancelled, and its Dask worker (which could not be restarted) is left out"


def run_on_dask(client, pipeline, todo, finished, *, limit: float) -> None:
    """Run the cases `todo` on a Dask cluster, at most `limit` seconds each: one case per free
    worker thread, an overrunning one cancelled and its worker restarted."""
    import distributed

    slots, pending, running = _DaskSlots(client, pipeline), collections.deque(todo), {}
    try:
        while pending or running:
            address = slots.free() if pending else None
            while address is not None:
                case = pending.popleft()
                future = client.submit(run_case, pipeline, case, workers=[address],
                                       allow_other_workers=False, pure=False)
                running[future] = (case, time.monotonic() + limit, address)
                slots.busy[address] += 1
                address = slots.free() if pending else None
            if not running and slots.rejoining():
                time.sleep(0.5)
                continue
            if not running:         # every worker is left out
                for case in pending:
                    finished(executor_failure(case, RuntimeError(
                        "not run: every Dask worker holds a case that ran past case_timeout "
                        "and could not be restarted; rerun the study to run it")))
                return
            nearest = min(deadline for _, deadline, _ in running.values())
            try:
                distributed.wait(list(running), timeout=max(0.01, nearest - time.monotonic()),
                                 return_when="FIRST_COMPLETED")
            except TimeoutError:
                pass
            for future in [f for f in running if f.done()]:
                case, _, address = running.pop(future)
                slots.busy[address] -= 1
                finished(future_record(future, case))
            for future, (case, deadline, address) in list(running.items()):
                if deadline <= time.monotonic():
                    del running[future]
                    future.cancel()
                    slots.busy[address] -= 1
                    finished(timed_out(case, limit, slots.replace(address)))
    except KeyboardInterrupt:
        client.cancel(list(running))
        raise

