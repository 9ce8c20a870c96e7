"""Where numba's compile time goes: the exclusive CPU of each function numba compiles during a
run (the demo by default, or a Python statement), from numba's ``numba:compile`` events.

Run with an empty numba cache and without the kernels compiled at install, so that every
kernel compiles (issue 31: the JIT route costs the demo 46 s of CPU, 41 s of it compiling)::

    TENSCONTROL_AOT=0 TENSCONTROL_COMPILE_NOTICE=0 NUMBA_CACHE_DIR=$(mktemp -d) \\
        python benchmarks/bench_compile_profile.py [demo | "PYTHON STATEMENT"]

Prints the total compile CPU, the process's CPU, and the 40 functions with the most exclusive
compile CPU (callees' compiles subtracted) with how many times each compiled.
"""

from __future__ import annotations

import collections
import sys
import tempfile
import time

from numba.core import event

_exclusive: collections.Counter = collections.Counter()
_count: collections.Counter = collections.Counter()
_stack: list = []     # [name, CPU time the current stretch started]


class _Listener(event.Listener):
    """Charges each stretch of compile CPU to the innermost function compiling."""

    def on_start(self, ev):
        function = getattr(ev.data.get("dispatcher"), "py_func", None)
        name = f"{function.__module__}.{function.__qualname__}" if function else "?"
        now = time.process_time()
        if _stack:
            _exclusive[_stack[-1][0]] += now - _stack[-1][1]
        _stack.append([name, now])

    def on_end(self, ev):
        now = time.process_time()
        name, start = _stack.pop()
        _exclusive[name] += now - start
        _count[name] += 1
        if _stack:
            _stack[-1][1] = now


def main(what: str) -> None:
    event.register("numba:compile", _Listener())
    if what == "demo":
        from tenscontrol.demo import run_demo
        with tempfile.TemporaryDirectory() as out:
            run_demo(out)
    else:
        exec(what, {"__name__": "__profiled__"})
    total = sum(_exclusive.values())
    print(f"compile CPU {total:.1f} s of the process's {time.process_time():.1f} s")
    for name, seconds in _exclusive.most_common(40):
        print(f"{seconds:7.2f} s {_count[name]:3d} x  {name}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "demo")
