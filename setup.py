"""The build step that compiles the kernels ahead of time (the metadata is in pyproject.toml).

After setuptools has copied the package, tenscontrol/precompile.py compiles the kernels that
``tenscontrol/mechanics/kernels/signatures.json`` lists into ``tenscontrol/_aot`` with numba's
ahead-of-time compiler (see that module), so that the first run on the machine does not wait
for numba's JIT. It imports only the kernels' modules (numpy, numba, scipy: pyproject.toml's
build requirements) and needs a C compiler, which it checks first. If there is none, the build
fails, or ``TENSCONTROL_AOT=0`` is set, the install goes on without it and the kernels compile
on first use, as numba does by default: a line says so (pip shows it with ``-v``).
"""

import importlib.util
import os
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))


def _precompile():
    """tenscontrol/precompile.py, loaded from its file: importing the package would import its
    runtime dependencies, which the build environment does not have."""
    spec = importlib.util.spec_from_file_location(
        "tenscontrol_precompile", os.path.join(HERE, "tenscontrol", "precompile.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildWithKernels(build_py):
    """build_py, then the kernels compiled into the package's built folder (or, for an
    editable install, its source folder)."""

    def run(self):
        super().run()
        if os.environ.get("TENSCONTROL_AOT", "1") == "0":
            print("tenscontrol: TENSCONTROL_AOT=0: kernels not compiled ahead of time (they "
                  "compile on first use)", file=sys.stderr)
            return
        folder = os.path.join(HERE if self.editable_mode else self.build_lib, "tenscontrol")
        try:
            code = _precompile().main([folder])
        except Exception as error:  # the install goes on: the kernels compile on first use
            code = f"{type(error).__name__}: {error}"
        if code != 0:
            print(f"tenscontrol: WARNING: the kernels were not compiled ahead of time ({code}); "
                  "tenscontrol works, its kernels compile on first use (about 15 s of CPU for "
                  "the first simulate); python -m tenscontrol.precompile retries with the "
                  "error shown", file=sys.stderr)


class WithCompiledModule(Distribution):
    """A platform wheel: it holds a compiled module for the wheel's Python and x86-64 baseline
    (tenscontrol.precompile.BASELINE)."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithKernels}, distclass=WithCompiledModule)
