"""The numba cache guard (simulation/cache_guard.py, mechanics/kernels/cache.refresh): it covers
every module with cached kernels and every source their compiled code includes (derived here
from the imports, tests/kernel_imports.py), and a changed source flushes the cache."""

import importlib
import subprocess
import sys

import pytest

from tenscontrol.mechanics.kernels import cache
from tenscontrol.simulation import cache_guard

import kernel_imports


def test_every_module_with_cached_kernels_is_guarded():
    assert set(cache_guard.SOURCES) == kernel_imports.modules_with_cached_kernels()


@pytest.mark.parametrize("name", sorted(cache_guard.SOURCES))
def test_the_guard_covers_every_source_compiled_into_the_module(name):
    listed = set(cache_guard.source_files(cache_guard.SOURCES[name]))
    needed = {str(kernel_imports.module_path(m)) for m in kernel_imports.dependencies(name)}
    assert needed - listed == set(), f"add them to cache_guard.SOURCES[{name!r}]"


def test_the_derivation_follows_constants_and_re_exports():
    # what the issue found missing: chunked's status codes are compiled into the loop, and
    # K.correct is rigid.correction's function re-exported by rigid.kernels
    found = kernel_imports.dependencies("tenscontrol.simulation.rigid_loop")
    assert {"tenscontrol.integrate.chunked", "tenscontrol.mechanics.rigid.correction",
            "tenscontrol.simulation.rigid_feedback"} <= found
    assert kernel_imports.dependencies("tenscontrol.mechanics.compressible.kernels") == {
        "tenscontrol.mechanics.rigid.forces", "tenscontrol.mechanics.kernels.records",
        "tenscontrol.mechanics.laws", "tenscontrol.mechanics.kernels.banded",
        "tenscontrol.mechanics.kernels.arrays"}


PROBE = """
from numba import njit


@njit(cache=True)
def plus_one(x):
    return x + 1
"""


def _load(name, dependency):
    """A fresh copy of the probe module (a new dispatcher, which loads from the disk cache),
    guarded with `dependency`; the modules flushed and the cache hits of its first call."""
    module = importlib.reload(sys.modules[name]) if name in sys.modules else (
        importlib.import_module(name))
    flushed = cache.refresh({module: [str(dependency)]})
    assert module.plus_one(1) == 2
    return flushed, sum(module.plus_one.stats.cache_hits.values())


def test_a_changed_dependency_flushes_the_cache(tmp_path, monkeypatch):
    (tmp_path / "guarded_probe.py").write_text(PROBE)
    dependency = tmp_path / "callee.py"
    dependency.write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert _load("guarded_probe", dependency) == (["guarded_probe"], 0)  # no stamp yet
        assert _load("guarded_probe", dependency) == ([], 1)  # unchanged: loaded from the cache
        dependency.write_text("X = 2\n")
        assert _load("guarded_probe", dependency) == (["guarded_probe"], 0)  # compiled afresh
        assert _load("guarded_probe", dependency) == ([], 1)
    finally:
        sys.modules.pop("guarded_probe", None)


def test_a_module_without_a_disk_cache_is_left_alone():
    assert cache.refresh({cache: ["no such file"]}) == []  # nothing cached: nothing read


def test_importing_runs_no_kernel_before_the_guard():
    # the guard must flush before a kernel is loaded: after `import tenscontrol` none is
    code = ("import sys, tenscontrol\n"
            "from numba.core.dispatcher import Dispatcher\n"
            "print(sorted(f'{m.__name__}.{k}' for m in list(sys.modules.values())\n"
            "      if m.__name__.startswith('tenscontrol') for k, f in vars(m).items()\n"
            "      if isinstance(f, Dispatcher) and f.signatures))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
