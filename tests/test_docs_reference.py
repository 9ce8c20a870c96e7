"""The documentation site's API reference lists every public name (docs/reference/index.rst)."""

import re
from pathlib import Path

import tenscontrol as tc

REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "index.rst"
MODULES = {"catalog", "materials", "plotting"}  # modules, documented on pages of their own


def test_every_public_name_has_a_reference_page():
    listed = set(re.findall(r"^   (\w+)\s*$", REFERENCE.read_text(), re.M))
    missing = [name for name in tc.__all__ if name not in listed and name not in MODULES]
    assert not missing, f"add these to an autosummary list in {REFERENCE.name}: {missing}"
    unknown = sorted(listed - set(tc.__all__) - MODULES)
    assert not unknown, f"{REFERENCE.name} lists names tenscontrol does not export: {unknown}"
