"""Where numba caches the compiled kernels, chosen once, before the first kernel is decorated.

numba caches a ``cache=True`` function next to its source (``__pycache__``), else in the user's
cache folder (``~/.cache/numba``); when neither is writable (a read-only ``site-packages`` and a
``HOME`` that is not writable, as in some containers and CI runners) decorating the function
raises ``RuntimeError: cannot cache function ...: no locator available``, and
``import tenscontrol`` failed. Here, on import (the first module of the package that compiles
anything imports this one), a probe function is decorated as the kernels are; if numba finds no
folder for it, its cache folder (``numba.config.CACHE_DIR``, which numba reads from
``NUMBA_CACHE_DIR`` only when numba itself is imported, hence set here directly) is pointed at
a private folder in the temporary directory; if even that is not writable, :data:`CACHE` is
False and the kernels compile on every import, with no error.

A ``NUMBA_CACHE_DIR`` set by the user is left alone. The setting is numba's, so it is process-
wide: it also serves the integrators' kernels (:mod:`tenscontrol.integrate`, which imports
nothing of ours and is always imported after this module, through ``tenscontrol/__init__``)
and any other library whose own folders are not writable either.

numba invalidates a cached function when its own file changes, not when a function it calls (or
a constant it reads) in another file changes: :func:`refresh` flushes the cache of a module
when a source its compiled code depends on has changed. The list of those sources, for every
module with cached kernels, lives with the module that knows every layer
(:mod:`tenscontrol.simulation.cache_guard`), which runs it once per process.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Mapping, Sequence
from types import ModuleType

from numba import njit
from numba.core import config
from numba.core.dispatcher import Dispatcher

__all__ = ["CACHE", "INTERNAL", "cache_folder", "cached_functions", "refresh"]

#: numba options of a kernel that only other kernels call (``@njit(cache=CACHE, **INTERNAL)``):
#: without the Python entry point and the C callback numba otherwise compiles for every kernel
#: (their code is compiled, optimized and cached with the kernel, a few hundredths of a second
#: of CPU each on a cold cache). Calling such a kernel from Python crashes the process: only
#: private helpers take them.
INTERNAL = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}


def _probe():
    return 0


def _cache_works() -> bool:
    """Whether numba finds a writable cache folder for a function of this package."""
    try:
        njit(cache=True)(_probe)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return False
    return True


def cache_folder() -> str:
    """The fallback cache folder: private to the user, in the temporary directory."""
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    return os.path.join(tempfile.gettempdir(), f"tenscontrol-numba-cache-{uid}")


def _choose() -> bool:
    if _cache_works():
        return True
    if not config.CACHE_DIR:  # the user's NUMBA_CACHE_DIR wins, even if unwritable
        try:
            folder = cache_folder()
            os.makedirs(folder, mode=0o700, exist_ok=True)
        except OSError:
            return False
        config.CACHE_DIR = folder
        if _cache_works():
            return True
        config.CACHE_DIR = ""
    return False


#: Whether the kernels are cached on disk (``njit(cache=CACHE)``); False only when no folder
#: at all is writable, in which case they compile on every import.
CACHE: bool = _choose()


def cached_functions(module: ModuleType) -> list[Dispatcher]:
    """The compiled functions defined in `module` that numba caches on disk (none if uncached)."""
    return [f for f in vars(module).values()
            if isinstance(f, Dispatcher) and f.py_func.__module__ == module.__name__
            and f._cache.cache_path is not None]


def refresh(sources: Mapping[ModuleType, Sequence[str]]) -> list[str]:
    """Flush the disk cache of each module whose dependencies' sources changed since last time.

    Parameters
    ----------
    sources : mapping of module to sequence of str
        For each module with cached kernels, the paths of the source files (of other modules)
        that its compiled code includes: the functions it calls and the constants it reads.

    Returns
    -------
    list of str
        The names of the modules whose cache was flushed (they compile afresh on first call).

    Notes
    -----
    A sha256 of the sources is kept next to the module's cache (``<module>.sources``); a
    missing or different one flushes every cached function of the module. Each file is read
    once per call, however many modules depend on it. Call it before any of the functions runs:
    a function already loaded keeps its machine code until the process ends.
    """
    digests: dict[str, bytes] = {}

    def digest(path: str) -> bytes:
        if path not in digests:
            with open(path, "rb") as source:
                digests[path] = hashlib.sha256(source.read()).digest()
        return digests[path]

    flushed = []
    for module, paths in sources.items():
        functions = cached_functions(module)
        if not functions:  # nothing cached on disk (no writable folder): nothing to go stale
            continue
        stamp = hashlib.sha256()
        for path in sorted(set(paths)):
            stamp.update(os.path.basename(path).encode() + digest(path))
        path = os.path.join(functions[0]._cache.cache_path, f"{module.__name__}.sources")
        if _read(path) != stamp.hexdigest():
            for function in functions:
                function._cache.flush()
            _write(path, stamp.hexdigest())
            flushed.append(module.__name__)
    return flushed


def _read(path: str) -> str | None:
    """The text of a stamp file, None if there is none."""
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _write(path: str, text: str) -> None:
    """Write a stamp file; a read-only cache folder is left alone (numba will not write there)."""
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError:
        pass
