"""The BLAS thread policy of the linear tools: small dense problems run single-threaded.

OpenBLAS starts one thread per core for every level-3 call, whatever the matrix size. On a
busy machine a thread that waits for a core costs far more than the small call it helps with:
measured on a loaded 2-core machine, the ball's ``hinfsyn`` (48 states) took 13-30 s with the
default threads against 0.45-0.72 s single-threaded, and a 96 x 96 ``eigvals`` 0.22 s against
0.0024 s. Large problems do profit from the cores. So the public functions of
:mod:`tenscontrol.linear` run under :func:`blas_threads`, which limits every BLAS library
loaded in the process (numpy's, SciPy's and slycot's own OpenBLAS copies) to one thread while
the problem has fewer than :data:`SMALL_ORDER` states, and leaves the user's setting alone
above it. ``benchmarks/bench_scaling_linear.py --threads`` measures both sides.

The limit is set through threadpoolctl (one controller built at first use, about 20 us per
switch) and restored on exit, also after an exception. Set ``SMALL_ORDER = 0`` to switch the
policy off (an environment variable such as ``OPENBLAS_NUM_THREADS=1`` then rules alone).
"""

from __future__ import annotations

import contextlib
import functools

import threadpoolctl

__all__ = ["SMALL_ORDER", "blas_threads", "sized_by"]

#: Problems with fewer states than this (matrix order; a LinearModel counts 2 nq) run with one
#: BLAS thread. Measured on a loaded 2-core machine (bench_scaling_linear.py --threads, table
#: 3): the default threads lost at every order up to 800 (schur 19x slower at 96, 5x at 400,
#: 11x at 800) except a CARE of order 800 (0.88x). 400 is a choice: below it one thread is
#: never much slower, above it the user's setting rules, so a large problem on an idle
#: many-core machine keeps its threads.
SMALL_ORDER = 400

_controller = None


def _get_controller() -> threadpoolctl.ThreadpoolController:
    global _controller
    if _controller is None:     # after numpy, scipy and slycot are loaded (linear imports them)
        _controller = threadpoolctl.ThreadpoolController()
    return _controller


@contextlib.contextmanager
def blas_threads(order: int):
    """Context manager: one BLAS thread inside if ``order < SMALL_ORDER``, else no change.

    Parameters
    ----------
    order : int
        Size of the problem (number of states, or the order of the largest dense matrix).
    """
    if order >= SMALL_ORDER:
        yield
        return
    with _get_controller().limit(limits=1, user_api="blas"):
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
    """Decorator: run ``func(obj, ...)`` under :func:`blas_threads` sized by its first argument.

    The size is the state count of the first argument (``A.shape[0]`` of a LinearModel or a
    StateSpace, ``sys.nstates`` of a MinimalRealization, ``6 n_nodes`` of a Structure).
    """
    @functools.wraps(func)
    def wrapper(obj, *args, **kwargs):
        with blas_threads(_order_of(obj)):
            return func(obj, *args, **kwargs)
    return wrapper
