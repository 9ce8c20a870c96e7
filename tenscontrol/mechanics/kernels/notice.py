"""One line on stderr while numba compiles a kernel for more than a second, and the time it took.

numba compiles a kernel the first time it is called with new argument types and no on-disk
cache entry (the first run on a machine, or after an upgrade); a warm run loads the cache and
compiles nothing. A listener on numba's ``numba:compile`` event (which numba fires only when it
really compiles, never for a cache load) times each outermost compile: if one lasts longer than
:data:`DELAY` seconds of wall time, it prints "tenscontrol: compiling ..." to stderr, and when
it ends "tenscontrol: compiled ... in X s CPU". A warm run prints nothing.
:func:`compile_seconds` is the CPU time spent compiling in this process (the demo reports it).

Set ``TENSCONTROL_COMPILE_NOTICE=0`` in the environment, or :data:`ENABLED` to False, to keep
the lines quiet (the time is counted either way). :func:`install` runs once per process, from
:mod:`tenscontrol.simulation.cache_guard`.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from numba.core import event

__all__ = ["DELAY", "ENABLED", "compile_seconds", "install"]

#: Wall-clock seconds a compile runs before the line appears.
DELAY = 1.0
#: Whether the lines are printed.
ENABLED = os.environ.get("TENSCONTROL_COMPILE_NOTICE", "1") != "0"

_state = {"seconds": 0.0, "installed": False}


def compile_seconds() -> float:
    """CPU seconds numba has spent compiling kernels in this process (0 on a warm run)."""
    return _state["seconds"]


def _name(data) -> str:
    function = getattr(data.get("dispatcher"), "py_func", None)
    if function is None:
        return "a kernel"
    return f"{function.__module__}.{function.__qualname__}"


class _Notice(event.Listener):
    """Times the outermost compiles; announces those that outlast DELAY."""

    def __init__(self):
        self.depth = 0
        self.start = (0.0, 0.0)
        self.timer = None
        self.shown = False

    def on_start(self, ev) -> None:
        self.depth += 1
        if self.depth > 1:  # a kernel called by the one being compiled
            return
        self.start = (time.process_time(), time.perf_counter())
        self.shown = False
        if ENABLED:
            self.timer = threading.Timer(DELAY, self._announce, (_name(ev.data),))
            self.timer.daemon = True
            self.timer.start()

    def _announce(self, name: str) -> None:
        self.shown = True
        print(f"tenscontrol: compiling {name} with numba (first use on this machine; later "
              "runs load it from the disk cache) ...", file=sys.stderr, flush=True)

    def on_end(self, ev) -> None:
        self.depth -= 1
        if self.depth > 0:
            return
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        cpu = time.process_time() - self.start[0]
        _state["seconds"] += cpu
        if self.shown:
            wall = time.perf_counter() - self.start[1]
            print(f"tenscontrol: compiled {_name(ev.data)} in {cpu:.1f} s CPU ({wall:.1f} s "
                  "wall)", file=sys.stderr, flush=True)


def install() -> None:
    """Listen to numba's compile events (once per process)."""
    if not _state["installed"]:
        event.register("numba:compile", _Notice())
        _state["installed"] = True
