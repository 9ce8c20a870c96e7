"""Kernels compiled ahead of time, at install: loaded into numba's dispatchers on import.

A cold numba cache makes the first run on a machine compile its kernels (about 15 s of CPU for
the first rigid ``simulate`` of the T-bar, 45 s for the demo). ``pip install`` therefore
compiles the kernels that the common runs call from Python (:mod:`tenscontrol.precompile`, run
by ``setup.py``, from the committed ``signatures.json`` of this folder) into an extension
module, ``tenscontrol._aot``, with numba's ahead-of-time compiler, for a baseline CPU, and
writes next to it a manifest, ``_aot.json`` (JSON, no pickle): the binary's file name and
sha256, the Python ABI (``sys.implementation.cache_tag``, the extension suffix), the numba
version, the target (triple, CPU, the CPU features the code assumes), a hash of the kernels'
sources and, for each exported function, the kernel it was compiled from and its argument types
(:mod:`tenscontrol.mechanics.kernels.typejson`).

:func:`install` (run once per process by :mod:`tenscontrol.simulation.cache_guard`) checks all
of that before it imports the binary, then resolves every kernel, argument type and compiled
function, and only then hands each function to its kernel's dispatcher as the machine code for
those argument types, as numba does with a function it has compiled or loaded from its cache
(all or nothing: a failure part-way takes back what it inserted). numba's own dispatch then
calls it for arguments of those types (or types it converts to them safely, as for its own
compiled code); other types compile as before. Nothing is loaded (and every kernel compiles on
first use, as without it) when:

- the environment sets ``TENSCONTROL_AOT=0``;
- the module was not built (no C compiler at install, ``TENSCONTROL_AOT=0`` at install);
- the binary is not the one the manifest describes, or was built for another Python;
- the numba version differs from the build's (the machine code shares numba's runtime);
- the CPU lacks a feature the build's target assumes (the code would use its instructions);
- a kernel's source changed since the build (an editable install being worked on): the hash
  is over the same files that :mod:`tenscontrol.simulation.cache_guard` watches.

It never warns (an import must stay silent, also under ``-W error``): :data:`STATUS` says what
happened in one line (``tenscontrol demo`` and ``tenscontrol info`` print it).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import sys
import sysconfig
from collections.abc import Sequence

import numba

__all__ = ["MANIFEST", "MODULE", "STATUS", "file_sha256", "install", "machine", "manifest_path",
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

_AFTER = "kernels compile on first use"
_REBUILD = "reinstall tenscontrol, or run python -m tenscontrol.precompile, to rebuild them"


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


def machine() -> tuple[str, str, list[str]]:
    """This machine's target triple, CPU name and the CPU features it has (LLVM's names)."""
    import llvmlite.binding as llvm
    features = sorted(k for k, on in llvm.get_host_cpu_features().items() if on)
    return llvm.get_process_triple(), llvm.get_host_cpu_name(), features


def file_sha256(path: str) -> str:
    """The sha256 of a file's bytes (hex): what the manifest records of the built binary."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _mismatch(manifest: dict, stamp: str) -> str | None:
    """Why the build described by `manifest` does not fit this process, or None."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    if (manifest["cache_tag"], manifest["ext_suffix"]) != (sys.implementation.cache_tag,
                                                            suffix):
        return (f"built for another Python ({manifest['cache_tag']}, this is "
                f"{sys.implementation.cache_tag}): {_AFTER} ({_REBUILD})")
    if manifest["numba"] != numba.__version__:
        # an older numba pinned after the install, or numba upgraded since
        return (f"built with numba {manifest['numba']}, this is {numba.__version__}: {_AFTER} "
                "(python -m tenscontrol.precompile rebuilds them with this numba)")
    triple, cpu, features = machine()
    target = manifest["target"]
    if target["triple"].split("-")[0] != triple.split("-")[0]:
        return f"built for {target['triple']}, this is {triple}: {_AFTER}"
    missing = sorted(set(target["features"]) - set(features))
    if missing:
        return (f"built for {target['cpu']}, whose features this CPU ({cpu}) lacks: "
                f"{', '.join(missing)}: {_AFTER}")
    if manifest["stamp"] != stamp:
        return f"the kernels' sources changed since the build: {_AFTER} ({_REBUILD})"
    return None


def _dispatcher(module: str, qualname: str):
    """The kernel `qualname` of `module` (a numba dispatcher)."""
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not hasattr(obj, "_insert"):
        raise TypeError(f"{module}.{qualname} is not a numba kernel")
    return obj


def _import_binary(path: str):
    """The extension module at `path` (that file, not another tenscontrol._aot on the path)."""
    spec = importlib.util.spec_from_file_location(MODULE, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _resolve(manifest: dict, folder: str) -> list[tuple]:
    """(dispatcher, argument types, compiled function) for every export: all or an error."""
    from tenscontrol.mechanics.kernels.typejson import from_json
    kernels = [(_dispatcher(e["module"], e["qualname"]), tuple(from_json(t) for t in e["args"]))
               for e in manifest["exports"]]
    module = _import_binary(os.path.join(folder, manifest["file"]))
    return [(d, args, getattr(module, e["name"]))
            for (d, args), e in zip(kernels, manifest["exports"])]


def _insert_all(found: list[tuple]) -> None:
    """Hand every compiled function to its dispatcher; on a failure, take them all back."""
    done = []
    try:
        for dispatcher, args, function in found:
            # numba's own registration of compiled machine code (Dispatcher.add_overload)
            # without a compile result: the C dispatcher calls the function for these
            # argument types (and those it converts safely to them, as it does for code it
            # compiled); a kernel compiled later that calls this one links its own code
            dispatcher._insert([a._code for a in args], function, False)
            done.append(dispatcher)
    except BaseException:
        for dispatcher in set(done):
            # back to what numba itself compiled or loaded (its overloads)
            dispatcher._clear()
            for args, cres in dispatcher.overloads.items():
                dispatcher._insert([a._code for a in args], cres.entry_point, cres.objectmode)
        raise
    _TYPES.extend(args for _, args, _ in found)


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
    Sets :data:`STATUS` and never raises or warns: a build that does not fit, a manifest that
    cannot be read or a binary that cannot be imported loads nothing and STATUS says why; the
    kernels then compile as they would without it.
    """
    global STATUS
    try:
        if os.environ.get("TENSCONTROL_AOT", "1") == "0":
            STATUS = f"off (TENSCONTROL_AOT=0): {_AFTER}"
            return 0
        path = manifest_path() if path is None else path
        if not os.path.exists(path):
            STATUS = f"not built at install (no C compiler, or TENSCONTROL_AOT=0 then): {_AFTER}"
            return 0
        with open(path) as f:
            manifest = json.load(f)
        folder = os.path.dirname(os.path.abspath(path))
        why = _mismatch(manifest, stamp)
        binary = os.path.join(folder, manifest["file"])
        if why is None and (not os.path.exists(binary) or file_sha256(binary) != manifest["sha256"]):
            why = f"the binary {manifest['file']} is not the one the manifest describes: {_AFTER}"
        if why is not None:
            STATUS = why
            return 0
        found = _resolve(manifest, folder)
        _insert_all(found)
        STATUS = (f"{len(found)} kernel signatures compiled ahead of time for "
                  f"{manifest['target']['cpu']} (at install), loaded")
        return len(found)
    except Exception as error:  # anything wrong with the build's files: compile as before
        STATUS = f"not loaded ({type(error).__name__}: {error}): {_AFTER} ({_REBUILD})"
        return 0
