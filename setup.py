"""The build step that compiles the kernels ahead of time (the metadata is in pyproject.toml).

After setuptools has copied the package, ``python -m tenscontrol.precompile`` compiles the
kernels of the common first runs into ``tenscontrol/_aot`` with numba's ahead-of-time compiler
(see that module), so that the first run on the machine does not wait for numba's JIT. It needs
the runtime dependencies in the build environment (pyproject.toml's build requirements) and a C
compiler. If it fails, or ``TENSCONTROL_AOT=0`` is set, the install goes on without it and the
kernels compile on first use, as numba does by default: a line on stderr says so.
"""

import os
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))


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
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [HERE] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        try:
            code = subprocess.run([sys.executable, "-m", "tenscontrol.precompile", folder],
                                  cwd=HERE, env=env).returncode
        except OSError as error:
            code = str(error)
        if code != 0:
            print(f"tenscontrol: WARNING: the kernels were not compiled ahead of time ({code}); "
                  "tenscontrol works, its kernels compile on first use (about 15 s of CPU for "
                  "the first simulate); python -m tenscontrol.precompile retries with the "
                  "error shown", file=sys.stderr)


class WithCompiledModule(Distribution):
    """A platform wheel: it holds a compiled module for this machine."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithKernels}, distclass=WithCompiledModule)
