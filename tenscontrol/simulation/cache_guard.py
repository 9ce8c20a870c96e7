"""The numba cache guard: every module with cached kernels, and the sources compiled into them.

numba keys a cached function on its own file only: when a kernel it calls (or a constant it
reads, such as :mod:`tenscontrol.integrate.chunked`'s status codes) changes in another file,
it would keep loading the old machine code. :data:`SOURCES` lists, for each module that caches
kernels on disk, the modules and packages (walked recursively) whose code its compiled functions
include; :func:`refresh` hands them to :func:`tenscontrol.mechanics.kernels.cache.refresh`,
which flushes a module's cache when their hash changes. It runs once per process, when
:mod:`tenscontrol.simulation` is first imported (``import tenscontrol`` does), before any kernel
runs. The guard lives here because only the simulation layer may import both the mechanics and
the integrators. ``tests/test_cache_guard.py`` derives the real dependencies from the imports
of the compiled functions and checks that this list covers them.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

from tenscontrol.mechanics.kernels import aot, cache, notice

__all__ = ["SOURCES", "kernel_sources", "refresh", "source_files"]

_LAWS = ("tenscontrol.mechanics.laws",)
_RIGID = _LAWS + ("tenscontrol.mechanics.kernels", "tenscontrol.mechanics.rigid")
_COMPRESSIBLE = _RIGID + ("tenscontrol.mechanics.compressible",)
_DOPRI = ("tenscontrol.integrate.dopri", "tenscontrol.integrate.dopri_kernel",
          "tenscontrol.integrate.chunked")
_RADAU = ("tenscontrol.integrate.radau_kernel", "tenscontrol.integrate.chunked")
_ACTUATION = _LAWS + ("tenscontrol.mechanics.kernels", "tenscontrol.mechanics.actuation")

#: For each module with disk-cached kernels, the modules and packages (recursively) whose
#: source its compiled code includes, its own file aside (numba watches that one).
SOURCES: dict[str, tuple[str, ...]] = {
    "tenscontrol.mechanics.laws": (),
    "tenscontrol.mechanics.kernels.arrays": (),
    "tenscontrol.mechanics.kernels.banded": (),
    "tenscontrol.mechanics.kernels.records": (),
    "tenscontrol.mechanics.rigid.forces": _LAWS,
    "tenscontrol.mechanics.actuation": _LAWS + ("tenscontrol.mechanics.kernels",),
    "tenscontrol.mechanics.rigid.correction": _RIGID,
    "tenscontrol.mechanics.rigid.kernels": _RIGID,
    "tenscontrol.mechanics.compressible.kernels": _COMPRESSIBLE,
    "tenscontrol.mechanics.compressible.banded": _COMPRESSIBLE,
    "tenscontrol.integrate.dopri": (),
    "tenscontrol.integrate.dopri_kernel": ("tenscontrol.integrate.dopri",),
    "tenscontrol.integrate.radau_kernel": (),
    "tenscontrol.simulation.recording": (),
    "tenscontrol.simulation.rigid_feedback": _RIGID + _ACTUATION,
    "tenscontrol.simulation.rigid_loop": _RIGID + _DOPRI + _ACTUATION + (
        "tenscontrol.simulation.recording", "tenscontrol.simulation.rigid_feedback"),
    "tenscontrol.simulation.compressible_loop": _COMPRESSIBLE + _RADAU + (
        "tenscontrol.simulation.recording",),
}


def source_files(names: tuple[str, ...]) -> list[str]:
    """The .py files of modules and packages `names` (a package: every file below it)."""
    files = []
    for name in names:
        module = importlib.import_module(name)
        if hasattr(module, "__path__"):  # a package
            files += [os.path.join(root, f) for folder in module.__path__
                      for root, _, found in os.walk(folder) for f in found if f.endswith(".py")]
        else:
            files.append(module.__file__)
    return sorted(set(files))


def refresh() -> list[str]:
    """Flush the cache of every module of :data:`SOURCES` whose sources changed; their names."""
    modules: dict[ModuleType, list[str]] = {
        importlib.import_module(name): source_files(names) for name, names in SOURCES.items()}
    return cache.refresh(modules)


def kernel_sources() -> list[str]:
    """Every source file compiled into a cached kernel: the modules of :data:`SOURCES` and
    what they include (the files whose hash the ahead-of-time kernels are built against)."""
    return sorted({f for name, names in SOURCES.items() for f in source_files((name,) + names)})


refresh()
# the kernels compiled at install, where they match this numba and these sources
aot.install(aot.source_stamp(kernel_sources()))
notice.install()  # a line on stderr while a kernel compiles for more than a second
