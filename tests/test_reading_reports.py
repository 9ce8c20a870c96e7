"""docs/tutorials/reading_reports.md explains every field its printouts show: its code cells
are run here and each printed row label (or table column) must appear in bold in its text."""

import contextlib
import io
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "docs" / "tutorials" / "reading_reports.md"


def _printed() -> str:
    """What the page's code cells print, run in order in one namespace (as myst-nb runs them)."""
    text = PAGE.read_text()
    cells = re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", text, re.M | re.S)
    out, namespace = io.StringIO(), {}
    with contextlib.redirect_stdout(out):
        for cell in cells:
            exec(compile(cell, str(PAGE), "exec"), namespace)
    return out.getvalue()


def _fields(printed: str) -> set:
    """Row labels of the titled tables (two-space indent) and of verify's table, the modal
    table's columns, and the verdict's line heads."""
    fields = set()
    for line in printed.splitlines():
        if re.match(r"^  \S", line):                       # a titled table's row
            head = re.split(r"\s{2,}", line.strip())[0]
            fields.add(re.sub(r":.*", "", head) if head.startswith(("likely cause", "note"))
                       else head)
        elif line.startswith("mode "):                     # the modal table's header
            fields |= set(re.split(r"\s{2,}", line.strip()))
        elif line.startswith("verdict:"):
            fields.add("verdict")
        elif re.match(r"^[a-z].*\S\s{2,}\S", line):        # verify's rows
            fields.add(re.split(r"\s{2,}", line.strip())[0])
    return fields


@pytest.mark.slow
def test_every_printed_field_is_explained_on_the_page():
    printed = _printed()
    fields = _fields(printed)
    assert {"||K||_F", "least damping", "full-state reach", "authority", "kept",
            "peak deflection [m]", "verdict"} <= fields       # the parser found the tables
    text = PAGE.read_text()
    missing = sorted(f for f in fields if f"**{f}**" not in text)
    assert not missing, f"reading_reports.md does not explain: {missing}"
