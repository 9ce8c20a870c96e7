"""The line on stderr while numba compiles (mechanics/kernels/notice.py): shown for a compile
that outlasts the delay, with its time; nothing for a function already compiled."""

import time

from numba import njit

import tenscontrol  # noqa: F401  (installs the listener, through simulation.cache_guard)
from tenscontrol.mechanics.kernels import notice


def _slow_to_compile(x):
    return x + 1.0


def test_a_compile_is_announced_and_timed_and_a_compiled_call_is_silent(monkeypatch, capsys):
    monkeypatch.setattr(notice, "DELAY", 0.0)
    monkeypatch.setattr(notice, "ENABLED", True)
    f = njit(_slow_to_compile)   # not cached: compiles in this process
    before = notice.compile_seconds()
    assert f(1.0) == 2.0
    time.sleep(0.05)             # the announcing timer thread
    err = capsys.readouterr().err
    assert "tenscontrol: compiling" in err and "_slow_to_compile" in err
    assert "tenscontrol: compiled" in err and "s CPU" in err
    assert notice.compile_seconds() > before
    assert f(2.0) == 3.0         # compiled: no event, no line
    assert capsys.readouterr().err == ""


def test_disabled_it_prints_nothing_but_still_counts(monkeypatch, capsys):
    monkeypatch.setattr(notice, "DELAY", 0.0)
    monkeypatch.setattr(notice, "ENABLED", False)
    before = notice.compile_seconds()
    assert njit(_slow_to_compile)(1.0) == 2.0
    assert capsys.readouterr().err == ""
    assert notice.compile_seconds() > before
