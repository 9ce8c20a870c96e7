"""The ahead-of-time build itself (:mod:`tenscontrol.precompile` runs it in a fresh process).

It runs with every package of tenscontrol bare in ``sys.modules`` (no ``__init__`` run), so it
imports only the kernels' modules and what they import, and with a temporary numba cache. It
reads the committed signatures, resolves every kernel and type, compiles them with
:mod:`numba.pycc` (each with its own ``@njit`` options) into ``_aot`` in the given folder and
writes the manifest last, with the binary's hash.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
import sysconfig
import time
import warnings

import numba
from numba.core.errors import NumbaPendingDeprecationWarning

from tenscontrol.mechanics.kernels import aot
from tenscontrol.mechanics.kernels.typejson import from_json, to_json
from tenscontrol.precompile import CARRIED_OPTIONS, BASELINE_FEATURES, SIGNATURES

__all__ = ["build", "exports", "kernel_flags"]


def exports(path: str = SIGNATURES) -> list[tuple[str, str, object, tuple]]:
    """The committed signatures, resolved: (module, name, dispatcher, argument types) each.

    Raises
    ------
    ValueError
        When a kernel is gone, or carries an option the build cannot reproduce (its compiled
        code would not mean what the JIT's does).
    """
    with open(path) as f:
        entries = json.load(f)["kernels"]
    found = []
    for entry in entries:
        module, name = entry["module"], entry["name"]
        dispatcher = getattr(importlib.import_module(module), name, None)
        if not hasattr(dispatcher, "targetoptions"):
            raise ValueError(f"{module}.{name} in {path} is not a numba kernel any more: "
                             "regenerate it with python -m tenscontrol.precompile --capture")
        refused = {k: v for k, v in dispatcher.targetoptions.items() if k not in CARRIED_OPTIONS}
        if refused:
            raise ValueError(f"{module}.{name}: the ahead-of-time build cannot carry its @njit "
                             f"options {refused}: drop them or the kernel from the capture")
        found.append((module, name, dispatcher, tuple(from_json(t) for t in entry["args"])))
    return found


def kernel_flags(dispatcher, pycc_flags):
    """numba's compile Flags for `dispatcher` as its JIT builds them (its @njit options),
    with what :mod:`numba.pycc` sets for an export (no own compile, the runtime)."""
    from numba.core.compiler import Flags
    flags = Flags()
    dispatcher.targetdescr.options.parse_as_flags(flags, dispatcher.targetoptions)
    flags.no_compile = pycc_flags.no_compile
    flags.nrt = pycc_flags.nrt
    return flags


@contextlib.contextmanager
def _own_options(dispatchers: dict):
    """While numba.pycc compiles: each exported function with its kernel's flags and locals.

    pycc compiles every export with one set of default Flags (its ``_cull_exports``), which
    would drop ``error_model="numpy"`` and the like; its module-level ``compile_extra`` is the
    one call that receives them, so it is wrapped for the duration of the build.
    """
    from numba.pycc import compiler as pycc_compiler
    original = pycc_compiler.compile_extra

    def compile_extra(typingctx, targetctx, func, args, return_type, flags, locals, **kw):
        dispatcher = dispatchers[func]
        return original(typingctx, targetctx, func, args, return_type,
                        kernel_flags(dispatcher, flags), dict(dispatcher.locals), **kw)

    pycc_compiler.compile_extra = compile_extra
    try:
        yield
    finally:
        pycc_compiler.compile_extra = original


def _target(cpu: str) -> dict:
    """The target triple, CPU and the features the code assumes (for the loader's check)."""
    import llvmlite.binding as llvm
    if cpu == "host":
        features = sorted(k for k, on in llvm.get_host_cpu_features().items() if on)
        cpu = llvm.get_host_cpu_name()
    else:
        features = sorted(BASELINE_FEATURES[cpu])
    return {"triple": llvm.get_process_triple(), "cpu": cpu, "features": features}


def build(folder: str, cpu: str) -> int:
    """Compile the committed signatures into `folder` for `cpu` (a key of BASELINE_FEATURES,
    or "host"); 0 on success."""
    start = time.process_time()
    path = os.path.join(folder, aot.MANIFEST)
    # no manifest until the new module is complete: a build that fails half-way, or a process
    # started meanwhile, loads nothing rather than a manifest that does not match the module
    if os.path.exists(path):
        os.remove(path)
    with warnings.catch_warnings():
        # only numba.pycc's own notice that it is pending deprecation (docs/install.md)
        warnings.filterwarnings("ignore", category=NumbaPendingDeprecationWarning,
                                message="The 'pycc' module is pending deprecation")
        from numba.pycc import CC
    from tenscontrol.simulation import cache_guard
    found = exports()
    cc = CC(aot.MODULE.rsplit(".", 1)[1])
    cc.output_dir = folder
    cc.target_cpu = cpu
    cc.verbose = False
    entries = []
    for i, (module, name, dispatcher, args) in enumerate(found):
        symbol = f"k{i}_{name.lstrip('_')}"
        # argument types only: the compile infers the return type, as the JIT does
        cc.export(symbol, args)(dispatcher.py_func)
        entries.append({"module": module, "qualname": name, "name": symbol,
                        "args": [to_json(t) for t in args]})
    with _own_options({d.py_func: d for _, _, d, _ in found}):
        cc.compile()
    binary = os.path.join(folder, cc.output_file)
    manifest = {
        "module": aot.MODULE, "file": cc.output_file, "sha256": aot.file_sha256(binary),
        "cache_tag": sys.implementation.cache_tag,
        "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX"),
        "numba": numba.__version__, "target": _target(cpu),
        "stamp": aot.source_stamp(cache_guard.kernel_sources()), "exports": entries,
        "seconds": {"cpu": round(time.process_time() - start, 1)}}
    with open(path, "w") as f:
        json.dump(manifest, f, indent=1)
    return 0
