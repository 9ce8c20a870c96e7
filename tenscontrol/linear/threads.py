"""The BLAS thread policy of the linear tools: small dense problems run single-threaded.

OpenBLAS starts one thread per core for every level-3 call, whatever the matrix size. On a
busy machine a thread that waits for a core costs far more than the small call it helps with:
measured on a loaded 2-core machine, the ball's ``hinfsyn`` (48 states) took 13-30 s with the
default threads against 0.45-0.72 s single-threaded, and a 96 x 96 ``eigvals`` 0.22 s against
0.0024 s. Large problems do profit from the cores. So the public functions of
:mod:`tenscontrol.linear` and :mod:`tenscontrol.design` run under :func:`sized`, which limits
every BLAS library loaded in the process (numpy's, SciPy's and slycot's own OpenBLAS copies) to
one thread while the problem has fewer than :data:`SMALL_ORDER` states, and leaves the user's
setting alone above it. ``benchmarks/bench_scaling_linear.py --threads`` measures both sides.

:func:`blas_threads` is the public switch: ``with tenscontrol.blas_threads(None):`` turns the
policy off for the calling thread (its tenscontrol calls leave the BLAS threads alone), and
``with tenscontrol.blas_threads(k):`` runs the block with at most k BLAS threads.

What is guaranteed. A BLAS library has one thread setting for the whole process (OpenBLAS's
``openblas_set_num_threads``, MKL's likewise): a limit cannot belong to one Python thread.
Every limit taken here therefore goes through one holder, a lock with a count of the threads
inside:

- the first thread in records the limits in force and sets its own; threads entering while
  the limit is held (nested in the same thread, or concurrently in others) run under it and
  change nothing, whatever limit they ask for (the first one's rules);
- the last thread out restores the recorded limits, unless they were changed meanwhile by
  something else (threadpoolctl, the user's own calls): then they stay as that set them;
- so no exit restores a limit while another thread is still inside, none restores a stale
  one, and once no thread is inside the limits are those before the first entry (or those
  set by someone else since);
- what cannot be helped: while any thread is inside, BLAS calls of every thread of the
  process run with the limit (for one thread that is a call of a linear tool below
  :data:`SMALL_ORDER` states, well under a second). A program that must not be throttled
  wraps its calls in ``blas_threads(None)`` (that thread's), or sets ``SMALL_ORDER = 0``
  (every thread's).

The limit is set through threadpoolctl (one controller built at first use, about 20 us per
switch) and restored on exit, also after an exception.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import threading

import threadpoolctl

__all__ = ["SMALL_ORDER", "blas_threads", "sized", "sized_by"]

#: Problems with fewer states than this (matrix order; a LinearModel counts 2 nq) run with one
#: BLAS thread. Measured on a loaded 2-core machine (bench_scaling_linear.py --threads, table
#: 3): the default threads lost at every order up to 800 (schur 19x slower at 96, 5x at 400,
#: 11x at 800) except a CARE of order 800 (0.88x). 400 is a choice: below it one thread is
#: never much slower, above it the user's setting rules, so a large problem on an idle
#: many-core machine keeps its threads. 0 switches the policy off in every thread.
SMALL_ORDER = 400

_controller = None
# the calling context's policy: "auto" (SMALL_ORDER), "off" (blas_threads(None)) or "held"
# (inside blas_threads(k): the limit is already taken)
_policy = contextvars.ContextVar("tenscontrol_blas_policy", default="auto")


def _get_controller() -> threadpoolctl.ThreadpoolController:
    global _controller
    if _controller is None:     # after numpy, scipy and slycot are loaded (linear imports them)
        _controller = threadpoolctl.ThreadpoolController()
    return _controller


class _Holder:
    """The process-wide BLAS limit, shared by every thread: a lock and a count of those
    inside (the module docstring says what it guarantees)."""

    def __init__(self):
        self._lock = threading.Lock()
        self.inside = 0
        self._limiter = None
        self._limit = 0

    def enter(self, limit: int) -> None:
        with self._lock:
            if self.inside == 0:
                self._limiter = _get_controller().limit(limits=limit, user_api="blas")
                self._limit = limit
            self.inside += 1

    def exit(self) -> None:
        with self._lock:
            self.inside -= 1
            if self.inside:
                return
            limiter, self._limiter = self._limiter, None
            now = [lib["num_threads"] for lib in _get_controller().select(user_api="blas").info()]
            if all(n == self._limit for n in now):    # still ours: nobody changed them since
                limiter.restore_original_limits()


_holder = _Holder()


@contextlib.contextmanager
def _held(limit: int):
    _holder.enter(limit)
    try:
        yield
    finally:
        _holder.exit()


@contextlib.contextmanager
def blas_threads(limit: int | None = 1):
    """Context manager: the BLAS thread policy of tenscontrol's linear tools.

    Parameters
    ----------
    limit : int or None
        ``None``: inside, the linear tools called by this thread leave the BLAS threads alone
        (the policy off; other threads keep theirs). An integer >= 1: the block runs with at
        most `limit` BLAS threads, and the linear tools inside change nothing further.

    Notes
    -----
    BLAS libraries have one thread setting per process, so a limit applies to every thread's
    BLAS calls while any thread is inside; nested and concurrent uses share one limit, taken by
    the first in and restored by the last out, never earlier and never stale (the module
    :mod:`tenscontrol.linear.threads` says exactly what is guaranteed). Outside any block the
    linear tools run with one thread below :data:`SMALL_ORDER` states.

    Examples
    --------
    >>> import tenscontrol as tc
    >>> with tc.blas_threads(None):          # this thread's calls: OpenBLAS's own threads
    ...     pass
    """
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                              or limit < 1):
        raise ValueError(f"limit must be None or an integer >= 1, got {limit!r}")
    token = _policy.set("off" if limit is None else "held")
    try:
        if limit is None:
            yield
        else:
            with _held(limit):
                yield
    finally:
        _policy.reset(token)


@contextlib.contextmanager
def sized(order: int):
    """Context manager: one BLAS thread inside if ``order < SMALL_ORDER`` and the calling
    context has not chosen otherwise (:func:`blas_threads`), else no change.

    Parameters
    ----------
    order : int
        Size of the problem (number of states, or the order of the largest dense matrix).
    """
    if order >= SMALL_ORDER or _policy.get() != "auto":
        yield
        return
    with _held(1):
        yield


def _order_of(obj) -> int:
    """State count of a LinearModel, StateSpace, MinimalRealization or Structure (0 if unknown)."""
    A = getattr(obj, "A", None)
    if A is not None and len(getattr(A, "shape", ())) == 2:
        return int(A.shape[0])
    sys = getattr(obj, "sys", None)
    if sys is not None and hasattr(sys, "nstates"):
        return int(sys.nstates)
    n_nodes = getattr(obj, "n_nodes", None)
    return 6 * int(n_nodes) if n_nodes is not None else 0


def sized_by(func):
    """Decorator: run ``func(obj, ...)`` under :func:`sized` by its first argument.

    The size is the state count of the first argument (``A.shape[0]`` of a LinearModel or a
    StateSpace, ``sys.nstates`` of a MinimalRealization, ``6 n_nodes`` of a Structure).
    """
    @functools.wraps(func)
    def wrapper(obj, *args, **kwargs):
        with sized(_order_of(obj)):
            return func(obj, *args, **kwargs)
    return wrapper
