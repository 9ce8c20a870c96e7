"""Compile the kernels ahead of time: ``python -m tenscontrol.precompile [FOLDER]``.

``pip install`` runs this (``setup.py``) so that the first run on a machine does not wait for
numba: the first rigid ``simulate`` of the T-bar compiles for about 14 s of CPU on a cold numba
cache, the demo for 45 s. It runs the calls that :data:`CASES` lists (the T-bar: rigid bars
open and closed loop, compressible bars on the dense and the band path, and the demo) with
numba compiling every kernel afresh (in a temporary cache folder), finds the kernels they call
from Python (:func:`capture`), and compiles each of them, for every argument-type tuple it was
compiled for, again with numba's ahead-of-time compiler (:mod:`numba.pycc`) into the extension
module ``tenscontrol._aot``, for this machine's CPU, with the manifest that
:mod:`tenscontrol.mechanics.kernels.aot` checks before loading it (numba version, CPU, source
hash, argument types). Structures and runs with other argument types compile on first use, as
before.

It takes a minute or two of CPU and needs a C compiler (numba's AOT compiler links a small C
file). Without FOLDER it writes next to the package's own files (rebuilding an editable or
in-place install after its kernels changed). ``TENSCONTROL_AOT=0`` at install skips it.
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import sys
import tempfile
import time
import warnings

__all__ = ["CASES", "build", "capture"]


def _rigid():
    import tenscontrol as tc
    tc.simulate(tc.catalog.tbar("stedy", damping=1.0), 0.1, bars="rigid")


def _closed_loop():
    import numpy as np

    import tenscontrol as tc
    s = tc.equilibrium(tc.catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
    design = tc.lqr(tc.linearize(s, kind="passive", outputs=tc.Selection(nodes=[2, 3],
                                                                           axes="xz")),
                    effort=1e-2)
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


#: The runs whose kernels are compiled ahead of time: README's first runs, the band path of
#: larger compressible structures, and the demo.
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

    # each kernel under the name its module gives it (the one install() looks up), by its
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


def build(folder: str, cases=CASES) -> str:
    """Compile the kernels of `cases` ahead of time into `folder`; returns the manifest's path.

    Writes the extension module ``_aot`` (imported as ``tenscontrol._aot``) and its manifest
    ``_aot.json`` into `folder`, which must be the package's folder of the install that loads
    them.
    """
    from numba.pycc import CC

    from tenscontrol.mechanics.kernels import aot
    from tenscontrol.simulation import cache_guard

    start = time.process_time()
    # no manifest until the new module is complete: a build that fails half-way, or a process
    # started meanwhile, loads nothing rather than a manifest that does not match the module
    path = os.path.join(folder, aot.MANIFEST)
    if os.path.exists(path):
        os.remove(path)
    found = capture(cases)
    captured = time.process_time()
    cc = CC(aot.MODULE.rsplit(".", 1)[1])
    cc.output_dir = folder
    cc.target_cpu = "host"  # built where it runs (pip install), as numba's JIT does
    cc.verbose = False
    exports = []
    for i, (module_name, attr, dispatcher, args) in enumerate(found):
        name = f"k{i}_{attr.lstrip('_')}"
        cc.export(name, dispatcher.overloads[args].signature)(dispatcher.py_func)
        exports.append({"module": module_name, "qualname": attr, "name": name,
                        "args": base64.b64encode(pickle.dumps(args)).decode()})
    cc.compile()
    import numba
    manifest = {"module": aot.MODULE, "numba": numba.__version__, "machine": aot.machine(),
                "stamp": aot.source_stamp(cache_guard.kernel_sources()), "exports": exports,
                "seconds": {"capture": round(captured - start, 1),
                            "compile": round(time.process_time() - captured, 1)}}
    with open(path, "w") as f:
        json.dump(manifest, f, indent=1)
    return path


def main(argv=None) -> int:
    """Build into FOLDER (default: the package's folder); 0 on success."""
    argv = sys.argv[1:] if argv is None else argv
    folder = os.path.abspath(argv[0] if argv else os.path.dirname(os.path.abspath(__file__)))
    if not os.access(folder, os.W_OK):
        print(f"tenscontrol.precompile: cannot write to {folder}: run it as the user who "
              "installed tenscontrol, or reinstall tenscontrol (pip install compiles the "
              "kernels)", file=sys.stderr)
        return 2
    if os.environ.get("TENSCONTROL_PRECOMPILING") != "1":
        # `python -m` has imported the package already: its kernels were set up to load an
        # earlier build and the user's cache, which would hide calls from the capture. The
        # build runs in a fresh process where numba compiles everything afresh, in a temporary
        # cache folder, with nothing loaded ahead of time and no compile notices.
        import subprocess
        with tempfile.TemporaryDirectory(prefix="tenscontrol-precompile-") as cache:
            env = dict(os.environ, TENSCONTROL_PRECOMPILING="1", NUMBA_CACHE_DIR=cache,
                       TENSCONTROL_AOT="0", TENSCONTROL_COMPILE_NOTICE="0", MPLBACKEND="Agg")
            return subprocess.run([sys.executable, "-m", "tenscontrol.precompile", folder],
                                  env=env).returncode
    warnings.simplefilter("ignore")  # numba.pycc's pending-deprecation notice
    path = build(folder)
    with open(path) as f:
        manifest = json.load(f)
    print(f"tenscontrol: {len(manifest['exports'])} kernels compiled ahead of time into {folder} "
          f"in {sum(manifest['seconds'].values()):.0f} s CPU", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
