"""Kernels compiled ahead of time, at install: loaded into numba's dispatchers on import.

A cold numba cache makes the first run on a machine compile its kernels (about 15 s of CPU for
the first rigid ``simulate`` of the T-bar, 45 s for the demo). ``pip install`` therefore
compiles the kernels that the common runs call from Python (:mod:`tenscontrol.precompile`,
run by ``setup.py``) into an extension module, ``tenscontrol._aot``, with numba's ahead-of-time
compiler, and writes next to it a manifest, ``_aot.json``: the numba version, a hash of the
kernels' sources and, for each exported function, the kernel it was compiled from and its
argument types.

:func:`install` (run once per process by :mod:`tenscontrol.simulation.cache_guard`) checks the
manifest and hands each exported function to its kernel's dispatcher as the machine code for
those argument types, as numba does with a function it has compiled or loaded from its cache.
numba's own dispatch then calls it for arguments of those types (or types it converts to them
safely, as for its own compiled code); other types compile as before. Nothing is loaded (and
every kernel compiles on first use, as without it) when:

- the environment sets ``TENSCONTROL_AOT=0``;
- the module was not built (no C compiler at install, ``TENSCONTROL_AOT=0`` at install);
- the numba version differs from the build's (the argument types are numba objects, and the
  machine code shares numba's runtime structures);
- the CPU differs from the build's (the code uses its instructions: an install shared by
  machines of several kinds, as on a cluster), compared as numba compares its cache entries;
- a kernel's source changed since the build (an editable install being worked on): the hash
  is over the same files that :mod:`tenscontrol.simulation.cache_guard` watches.

:data:`STATUS` says which, in one line (``tenscontrol demo`` prints it).
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import json
import os
import pickle
import warnings
from collections.abc import Sequence

import numba

__all__ = ["MANIFEST", "MODULE", "STATUS", "install", "machine", "manifest_path",
           "source_stamp"]

#: The extension module the build writes, and its manifest's file name (in the package folder).
MODULE, MANIFEST = "tenscontrol._aot", "_aot.json"

#: One line on what :func:`install` did (or why it loaded nothing).
STATUS = "not checked"

# The argument types of the loaded functions, kept alive: numba interns its types weakly and
# its dispatch matches integer codes that a type gets when it is created, so a type dropped
# here would come back, at the call, as a new object with another code that matches nothing
# (numba's own dispatcher keeps them in its overloads)
_TYPES: list[tuple] = []


def manifest_path() -> str:
    """Where the manifest of the installed package is (it may not exist)."""
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(package, MANIFEST)


def source_stamp(files: Sequence[str]) -> str:
    """The hash of the kernels' source files (sha256 over their base names and contents)."""
    stamp = hashlib.sha256()
    for path in sorted(set(files)):
        with open(path, "rb") as f:
            stamp.update(os.path.basename(path).encode() + hashlib.sha256(f.read()).digest())
    return stamp.hexdigest()


def machine() -> list[str]:
    """The target triple, CPU name and CPU features numba compiles for (what it keys its
    cache entries on)."""
    from numba.core.registry import cpu_target
    return list(cpu_target.target_context.codegen().magic_tuple())


def _dispatcher(module: str, qualname: str):
    """The kernel `qualname` of `module` (a numba dispatcher), or None if it is gone."""
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return obj if hasattr(obj, "_insert") else None


def install(stamp: str, path: str | None = None) -> int:
    """Load the ahead-of-time kernels into their dispatchers; returns how many were loaded.

    Parameters
    ----------
    stamp : str
        :func:`source_stamp` of the kernels' sources as they are now.
    path : str, optional
        The manifest (default :func:`manifest_path`).

    Notes
    -----
    Sets :data:`STATUS`. A manifest that cannot be read, or an extension module that cannot be
    imported, loads nothing and says why: the kernels then compile as they would without it.
    """
    global STATUS
    n = 0
    try:
        if os.environ.get("TENSCONTROL_AOT", "1") == "0":
            STATUS = "off (TENSCONTROL_AOT=0): kernels compile on first use"
            return 0
        path = manifest_path() if path is None else path
        if not os.path.exists(path):
            STATUS = ("not built at install (no C compiler, or TENSCONTROL_AOT=0 then): "
                      "kernels compile on first use")
            return 0
        with open(path) as f:
            manifest = json.load(f)
        if manifest["numba"] != numba.__version__:
            # pip builds in an isolated environment with the newest numba it finds: an install
            # that pins an older one gets here (python -m tenscontrol.precompile rebuilds with
            # the numba that runs)
            STATUS = (f"built with numba {manifest['numba']}, this is {numba.__version__}: "
                      "kernels compile on first use (python -m tenscontrol.precompile rebuilds "
                      "them with this numba)")
            return 0
        if manifest["machine"] != machine():
            STATUS = (f"built for another CPU ({manifest['machine'][1]}, this is "
                      f"{machine()[1]}): kernels compile on first use")
            return 0
        if manifest["stamp"] != stamp:
            STATUS = ("the kernels' sources changed since the build: they compile on first use "
                      "(reinstall tenscontrol, or run python -m tenscontrol.precompile, to "
                      "rebuild them)")
            return 0
        module = importlib.import_module(manifest.get("module", MODULE))
        for entry in manifest["exports"]:
            dispatcher = _dispatcher(entry["module"], entry["qualname"])
            if dispatcher is None:
                continue
            args = pickle.loads(base64.b64decode(entry["args"]))
            _TYPES.append(args)
            # numba's own registration of compiled machine code (Dispatcher.add_overload)
            # without a compile result: the C dispatcher calls the function for these
            # argument types (and those it converts safely to them, as it does for code it
            # compiled); a kernel compiled later that calls this one links its own code
            dispatcher._insert([a._code for a in args], getattr(module, entry["name"]), False)
            n += 1
        STATUS = f"{n} kernel signatures compiled ahead of time (at install), loaded"
    except Exception as error:  # anything wrong with the build's files: compile as before
        STATUS = f"not loaded ({type(error).__name__}: {error}): kernels compile on first use"
        warnings.warn(f"tenscontrol: the kernels compiled at install were {STATUS}; reinstall "
                      "tenscontrol, or run python -m tenscontrol.precompile, to rebuild them",
                      RuntimeWarning, stacklevel=2)
    return n
