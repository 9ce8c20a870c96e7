"""Compile the kernels ahead of time: ``python -m tenscontrol.precompile [FOLDER | --capture]``.

``pip install`` runs this (``setup.py``) so that the first run on a machine does not wait for
numba (the first rigid ``simulate`` of the T-bar compiles for about 14 s of CPU on a cold numba
cache, the demo for 45 s). It compiles, with numba's ahead-of-time compiler
(:mod:`numba.pycc`), every kernel and argument-type tuple that the committed file
``tenscontrol/mechanics/kernels/signatures.json`` lists into the extension module
``tenscontrol._aot``, with the manifest ``_aot.json`` that
:mod:`tenscontrol.mechanics.kernels.aot` checks before loading it. The build:

- checks for a C compiler (and Python's headers) first, and stops at once without one;
- imports only the kernels' own modules (numpy, numba and scipy, whose LAPACK numba's linear
  algebra calls), never ``tenscontrol/__init__.py``: each package of tenscontrol is put in
  ``sys.modules`` bare (its ``__init__`` not run) in a fresh process;
- compiles each kernel with its own ``@njit`` options (``error_model``, ``fastmath``,
  ``boundscheck``, ...), as numba's JIT does, so that both mean the same; a kernel with an
  option the build cannot carry (``parallel``, no Python wrapper) is refused;
- targets a baseline x86-64 CPU (:data:`BASELINE`, not this machine's), so that a wheel serves
  other machines that have the baseline's features (elsewhere than x86-64: this CPU).

``--capture`` (a developer command, when the kernels or their records change) rewrites the
signatures file from the runs that :data:`CASES` lists: it runs them, records each kernel they
call from Python with every argument-type tuple numba compiled it for, and writes them as JSON
(:mod:`tenscontrol.mechanics.kernels.typejson`). ``tests/test_aot.py`` fails, and says
this, when the committed file no longer matches.

Without FOLDER the build goes where the install put the package (an editable install or a
rebuild after a numba upgrade); a FOLDER that is not a folder is refused (exit status 2).
``FOLDER --cpu NAME`` builds for another baseline (``benchmarks/bench_aot_target.py``).
``TENSCONTROL_AOT=0`` at install skips it.
"""

from __future__ import annotations

# only the standard library here: setup.py loads this file before anything is importable
import json
import os
import platform
import subprocess
import sys
import sysconfig
import tempfile
import time

__all__ = ["BASELINE", "BASELINE_FEATURES", "CARRIED_OPTIONS", "CASES", "SIGNATURES", "capture",
           "compiler_problem", "main", "signatures_json", "target"]

PACKAGE = os.path.dirname(os.path.abspath(__file__))
#: The committed argument types of the kernels compiled ahead of time.
SIGNATURES = os.path.join(PACKAGE, "mechanics", "kernels", "signatures.json")

#: The CPU the x86-64 build targets (LLVM's name of the psABI level) and the LLVM features it
#: assumes, which the loader requires of the running CPU. x86-64-v3 (2013-2015 on: Haswell,
#: Excavator, Zen) keeps the warm speed of a build for this machine (docs/install.md).
BASELINE = "x86-64-v3"
BASELINE_FEATURES = {
    "x86-64-v2": ("cmov", "cx8", "fxsr", "sse", "sse2", "cx16", "sahf", "popcnt", "sse3",
                  "sse4.1", "sse4.2", "ssse3"),
}
BASELINE_FEATURES["x86-64-v3"] = BASELINE_FEATURES["x86-64-v2"] + (
    "avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave")

#: The @njit options an export carries into its compile (numba's target options, which become
#: its Flags as in the JIT); any other option set on an exported kernel (``parallel``, no
#: Python wrapper, ...) refuses the build
CARRIED_OPTIONS = frozenset({"nopython", "error_model", "fastmath", "boundscheck", "nogil",
                             "inline", "forceinline", "looplift", "_nrt", "debug"})

# Put every package of tenscontrol in sys.modules bare (no __init__ run), then build
_WORKER = """
import os, sys, types
root = sys.argv[1]
for folder, _, files in os.walk(root):
    if "__init__.py" in files:
        name = os.path.relpath(folder, os.path.dirname(root)).replace(os.sep, ".")
        package = types.ModuleType(name)
        package.__path__ = [folder]
        sys.modules[name] = package
from tenscontrol import aot_build
sys.exit(aot_build.build(*sys.argv[2:]))
"""


def compiler_problem() -> str | None:
    """Why this machine cannot build the extension module (no C compiler, no Python headers),
    or None if it can: a one-line C file that includes Python.h is compiled."""
    try:
        from setuptools._distutils.ccompiler import new_compiler
        from setuptools._distutils.sysconfig import customize_compiler
    except ImportError as error:
        return f"setuptools' compiler support is missing ({error})"
    compiler = new_compiler()
    customize_compiler(compiler)
    with tempfile.TemporaryDirectory(prefix="tenscontrol-cc-") as folder:
        source = os.path.join(folder, "check.c")
        with open(source, "w") as f:
            f.write("#include <Python.h>\nint check(void) { return 0; }\n")
        try:
            compiler.compile([source], output_dir=folder,
                             include_dirs=[sysconfig.get_paths()["include"]])
        except Exception as error:  # CompileError, or the compiler program missing
            first = str(error).strip().splitlines()
            return (f"no working C compiler with Python's headers "
                    f"({first[0] if first else type(error).__name__})")
    return None


def target() -> str:
    """The CPU the build compiles for: :data:`BASELINE` on x86-64, else this machine's."""
    arch = platform.machine().lower()
    return BASELINE if arch in ("x86_64", "amd64") else "host"


def _build_in_fresh_process(folder: str, cpu: str) -> int:
    """Run the build in a process with the bare packages, a temporary numba cache (nothing of
    the user's loaded) and nothing loaded ahead of time."""
    with tempfile.TemporaryDirectory(prefix="tenscontrol-precompile-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, TENSCONTROL_AOT="0",
                   TENSCONTROL_COMPILE_NOTICE="0")
        env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(PACKAGE)] + [
            p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        return subprocess.run([sys.executable, "-c", _WORKER, PACKAGE, folder, cpu],
                              env=env).returncode


def _rigid():
    import tenscontrol as tc
    tc.simulate(tc.catalog.tbar("stedy", damping=1.0), 0.1, bars="rigid")


def _closed_loop():
    import numpy as np

    import tenscontrol as tc
    s = tc.equilibrium(tc.catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
    outputs = tc.Selection(nodes=[2, 3], axes="xz")
    design = tc.lqr(tc.linearize(s, kind="passive", outputs=outputs), effort=1e-2)
    loads = np.zeros((s.n_nodes, 3))
    loads[2, 2] = 10.0
    tc.simulate(s, 0.1, controller=design.controller, loads=loads)


def _compressible():
    import tenscontrol as tc
    tc.simulate(tc.catalog.tbar("stedy", damping=1.0), 0.1, bars="compressible")


def _compressible_banded():
    # the band path that compressible runs take from BANDED_MIN_COORDINATES coordinates on
    # (its records' types do not depend on the size)
    import tenscontrol as tc
    tc.simulate(tc.catalog.tbar("stedy", damping=1.0), 0.1, bars="compressible",
                linear_algebra="banded")


def _demo():
    import contextlib
    import io

    from tenscontrol.demo import run_demo
    with tempfile.TemporaryDirectory() as out, contextlib.redirect_stdout(io.StringIO()):
        run_demo(out)


#: The runs whose kernels ``--capture`` records: README's first runs, the band path of larger
#: compressible structures, and the demo.
CASES = {"rigid": _rigid, "closed-loop": _closed_loop, "compressible": _compressible,
         "compressible-banded": _compressible_banded, "demo": _demo}

# kernels left to numba's JIT: the structure records' constructors return a numba object to
# Python, whose memory the extension module's own runtime would then own
_SKIP = ("tenscontrol.mechanics.kernels.records.",)


def capture(cases=CASES) -> list[tuple[str, str, object, tuple]]:
    """Run `cases` and return each kernel they call from Python with every argument-type tuple
    it was compiled for: a list of (module name, name in the module, dispatcher, tuple of
    numba types), sorted by name.

    The cases run twice: first numba compiles their kernels, then, with nothing left to
    compile, a Python profile hook sees the calls from Python (numba reports a kernel's call to
    it as a call of the kernel's Python function; the calls that compiled code makes are
    machine code, unseen). Profiling numba's compiler would make it several times slower.
    """
    from numba.core.dispatcher import Dispatcher

    # each kernel under the name its module gives it (the one the loader looks up), by its
    # Python function's code object: numba reports that code object for a call. By id: a code
    # object's hash can change once it has run (CPython rewrites its bytecode in place)
    kernels: dict[int, tuple[str, str, Dispatcher]] = {}
    for module_name, module in list(sys.modules.items()):
        if module_name.startswith("tenscontrol") and module is not None:
            for attr, f in list(vars(module).items()):
                if isinstance(f, Dispatcher) and (id(f.py_func.__code__) not in kernels
                                                  or f.py_func.__module__ == module_name):
                    kernels[id(f.py_func.__code__)] = (module_name, attr, f)
    called: set = set()

    def hook(frame, what, arg):
        if what == "call":
            kernel = kernels.get(id(frame.f_code))
            if kernel is not None:
                called.add(kernel)

    for case in cases.values():
        case()
    sys.setprofile(hook)
    try:
        for case in cases.values():
            case()
    finally:
        sys.setprofile(None)
    found = []
    for module_name, attr, kernel in sorted(called, key=lambda c: c[:2]):
        if not f"{module_name}.{attr}".startswith(_SKIP):
            found += [(module_name, attr, kernel, args) for args in kernel.overloads]
    return found


def signatures_json(found) -> str:
    """The text of the signatures file for `found` (:func:`capture`'s list): one kernel
    signature a line, in a stable order."""
    from tenscontrol.mechanics.kernels.typejson import to_json
    lines = [json.dumps({"module": module, "name": name, "args": [to_json(t) for t in args]})
             for module, name, _, args in found]
    lines.sort()
    return ('{"regenerate": "python -m tenscontrol.precompile --capture",\n "kernels": [\n  '
            + ",\n  ".join(lines) + "\n]}\n")


def _capture_main() -> int:
    """Run the cases in a fresh process with numba compiling everything afresh and rewrite
    :data:`SIGNATURES`."""
    if os.environ.get("TENSCONTROL_PRECOMPILING") != "1":
        with tempfile.TemporaryDirectory(prefix="tenscontrol-capture-") as cache:
            env = dict(os.environ, TENSCONTROL_PRECOMPILING="1", NUMBA_CACHE_DIR=cache,
                       TENSCONTROL_AOT="0", TENSCONTROL_COMPILE_NOTICE="0", MPLBACKEND="Agg")
            return subprocess.run([sys.executable, "-m", "tenscontrol.precompile", "--capture"],
                                  env=env).returncode
    found = capture()
    with open(SIGNATURES, "w") as f:
        f.write(signatures_json(found))
    print(f"tenscontrol: {len(found)} kernel signatures written to {SIGNATURES}",
          file=sys.stderr)
    return 0


def main(argv=None) -> int:
    """``python -m tenscontrol.precompile [FOLDER | --capture]``: 0 on success, 1 when the
    build failed, 2 for a usage error or a folder that cannot be written."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv == ["--capture"]:
        return _capture_main()
    cpu = target()
    if len(argv) == 3 and argv[1] == "--cpu":  # benchmarks/bench_aot_target.py compares CPUs
        cpu = argv.pop()
        argv.pop()
        if cpu not in BASELINE_FEATURES and cpu != "host":
            print(f"tenscontrol.precompile: --cpu must be one of {sorted(BASELINE_FEATURES)} "
                  f"or host, got {cpu!r}", file=sys.stderr)
            return 2
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        print("usage: python -m tenscontrol.precompile [FOLDER | --capture]", file=sys.stderr)
        return 2
    folder = os.path.abspath(argv[0]) if argv else PACKAGE
    if not os.path.isdir(folder):
        print(f"tenscontrol.precompile: {folder} is not a folder: give the package folder the "
              "kernels are built into (none: where tenscontrol is installed)", file=sys.stderr)
        return 2
    if not os.access(folder, os.W_OK):
        print(f"tenscontrol.precompile: cannot write to {folder}: run it as the user who "
              "installed tenscontrol, or reinstall tenscontrol", file=sys.stderr)
        return 2
    problem = compiler_problem()
    if problem is not None:
        print(f"tenscontrol: kernels not compiled ahead of time: {problem}; they compile on "
              "first use", file=sys.stderr)
        return 1
    start = time.time()
    code = _build_in_fresh_process(folder, cpu)
    if code == 0:
        with open(os.path.join(folder, "_aot.json")) as f:
            manifest = json.load(f)
        print(f"tenscontrol: {len(manifest['exports'])} kernel signatures compiled ahead of "
              f"time for {manifest['target']['cpu']} in {time.time() - start:.0f} s "
              f"({manifest['seconds']['cpu']:.0f} s CPU)", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
