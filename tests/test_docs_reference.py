"""The documentation site's API reference lists every public name (docs/reference/index.rst):
the top level's under ``.. currentmodule:: tenscontrol``, the subpackages' own names (those
that left the top level) under their package."""

import importlib
import re
from pathlib import Path

import tenscontrol as tc

REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "index.rst"
MODULES = {"catalog", "materials", "plotting"}  # modules, documented on pages of their own
SUBPACKAGES = ("control", "design", "estimation", "linear", "robust", "simulation", "statics",
               "studies")


def listed_names(text: str) -> dict:
    """{module: set of names} listed in autosummary blocks, by the current module."""
    found, module = {}, None
    for line in text.splitlines():
        m = re.match(r"^\.\. currentmodule:: ([\w.]+)\s*$", line)
        if m:
            module = m.group(1)
            continue
        m = re.match(r"^   (\w+)\s*$", line)
        if m:
            found.setdefault(module, set()).add(m.group(1))
    return found


def test_every_public_name_has_a_reference_page():
    listed = listed_names(REFERENCE.read_text())
    top = listed.get("tenscontrol", set())
    public = set(tc.__all__) - MODULES - set(SUBPACKAGES)
    missing = sorted(public - top)
    assert not missing, f"add these to an autosummary list in {REFERENCE.name}: {missing}"
    unknown = sorted(top - public - MODULES)
    assert not unknown, f"{REFERENCE.name} lists names tenscontrol does not export: {unknown}"
    for name in SUBPACKAGES:
        package = importlib.import_module(f"tenscontrol.{name}")
        here = listed.get(package.__name__, set())
        # a subpackage's names that are not at the top level are listed under the subpackage
        missing = sorted(set(package.__all__) - public - here)
        assert not missing, f"list these under .. currentmodule:: {package.__name__}: {missing}"
        unknown = sorted(here - set(package.__all__))
        assert not unknown, f"{package.__name__} does not export {unknown}"
    assert set(listed) <= {"tenscontrol"} | {f"tenscontrol.{n}" for n in SUBPACKAGES}


def test_the_reference_check_can_fail():
    text = (".. currentmodule:: tenscontrol\n\n   lqr\n\n"
            ".. currentmodule:: tenscontrol.design\n\n   LQRDesign\n")
    assert listed_names(text) == {"tenscontrol": {"lqr"}, "tenscontrol.design": {"LQRDesign"}}
