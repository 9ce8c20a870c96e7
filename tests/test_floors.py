"""The floor versions CI tests (.ci/floors.txt, installed by .ci/floors) are pyproject.toml's
">=" floors: every one of them, at the same version, and nothing else."""

import pathlib
import sys

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = pathlib.Path(__file__).resolve().parents[1]
# the extras the floors job installs ([test]) or that users install with the package; the
# documentation's are built in the main job only
EXTRAS = ("test", "pandas", "studies")


def _floors() -> dict[str, Version]:
    """Package -> floor, from pyproject's dependencies and EXTRAS (one floor per package)."""
    import tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    found: dict[str, Version] = {}
    for text in project["dependencies"] + [r for e in EXTRAS
                                           for r in project["optional-dependencies"][e]]:
        requirement = Requirement(text)
        (floor,) = [Version(s.version) for s in requirement.specifier if s.operator == ">="]
        name = canonicalize_name(requirement.name)
        assert found.setdefault(name, floor) == floor, \
            f"{name}: two floors in pyproject.toml ({found[name]}, {floor})"
    return found


def _pins() -> dict[str, Version]:
    """Package -> pinned version, from .ci/floors.txt."""
    pins = {}
    for line in (ROOT / ".ci" / "floors.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            requirement = Requirement(line)
            (pin,) = [Version(s.version) for s in requirement.specifier if s.operator == "=="]
            pins[canonicalize_name(requirement.name)] = pin
    return pins


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib")
def test_the_floors_job_pins_exactly_pyprojects_floors():
    assert _pins() == _floors()


def test_the_floors_job_installs_the_test_extra_with_the_pins_and_runs_the_tests():
    script = (ROOT / ".ci" / "floors").read_text()
    assert "PIP_CONSTRAINT=" in script and "'.[test]'" in script
    assert "pytest" in script
    assert ".ci/floors" in (ROOT / ".ci" / "run").read_text()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib")
def test_the_build_requires_only_what_the_kernels_import_at_the_runtime_floors():
    # setup.py compiles the kernels from the committed signatures, importing only their
    # modules (tenscontrol.precompile): numpy, numba and scipy (numba's LAPACK bindings), each
    # at its runtime floor, so that the floors job (PIP_CONSTRAINT) builds at the floors too
    import tomllib
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    build = {canonicalize_name(Requirement(r).name): r
             for r in pyproject["build-system"]["requires"]}
    assert set(build) == {"setuptools", "numpy", "numba", "scipy"}
    runtime = {canonicalize_name(Requirement(r).name): r
               for r in pyproject["project"]["dependencies"]}
    assert all(build[name] == runtime[name] for name in ("numpy", "numba", "scipy"))
