"""The documentation site builds from the docs extra alone (.ci/run builds it in a virtual
environment with nothing else), and its install page lists every extra of pyproject.toml."""

import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
tomllib = pytest.importorskip("tomllib", reason="tomllib is new in Python 3.11")


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _names(requirements) -> set[str]:
    """Distribution names of requirements, with the extras they pull in by name
    (``dask[distributed]`` installs ``distributed``)."""
    names = set()
    for text in requirements:
        requirement = Requirement(text)
        names |= {canonicalize_name(requirement.name)} | {canonicalize_name(e)
                                                           for e in requirement.extras}
    return names


def _imports(text: str) -> set[str]:
    """Top-level modules the code cells of a MyST notebook import."""
    cells = re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", text, re.M | re.S)
    found = set()
    for cell in cells:
        found |= set(re.findall(r"^\s*(?:import|from)\s+([A-Za-z_]\w*)", cell, re.M))
    return found


def test_the_docs_extra_installs_what_every_executed_page_imports():
    project = _project()
    allowed = _names(project["dependencies"] + project["optional-dependencies"]["docs"])
    allowed.add("ipython")  # the notebooks' kernel is IPython's (ipykernel depends on it)
    distributions = importlib.metadata.packages_distributions()
    pages = [p for p in DOCS.rglob("*.md") if "_build" not in p.parts and "{code-cell}" in
             p.read_text()]
    assert len(pages) >= 6
    missing = {}
    for page in pages:
        for module in _imports(page.read_text()):
            if module in sys.stdlib_module_names or module == "tenscontrol":
                continue
            provided = {canonicalize_name(d) for d in distributions.get(module, [module])}
            if not provided & allowed:
                missing.setdefault(str(page.relative_to(ROOT)), []).append(module)
    assert not missing, f"add to pyproject.toml's docs extra what these pages import: {missing}"


def test_the_install_page_lists_every_extra_and_what_it_installs():
    text = (DOCS / "install.md").read_text()
    rows = dict(re.findall(r"^\| `([\w-]+)` \| ([^|]+) \|", text, re.M))
    extras = _project()["optional-dependencies"]
    assert set(rows) == set(extras), "docs/install.md's table of extras must list exactly " \
                                     f"pyproject.toml's: {sorted(extras)}"
    for extra, requirements in extras.items():
        listed = {canonicalize_name(n.strip()) for n in re.sub(r"\[\w+\]", "",
                                                                 rows[extra]).split(",")}
        wanted = {canonicalize_name(Requirement(r).name) for r in requirements}
        assert listed == wanted, f"docs/install.md, extra {extra}: lists {sorted(listed)}, " \
                                 f"pyproject.toml installs {sorted(wanted)}"


def test_ci_builds_the_docs_in_a_venv_with_only_the_docs_extra():
    script = (ROOT / ".ci" / "run").read_text()
    assert "python3 -m venv .venv-docs && .venv-docs/bin/pip install '.[docs]'\n" in script
    assert ".venv-docs/bin/sphinx-build -W --keep-going -b html docs docs/_build/html\n" in script
    # contracts, tests, slow tests, docs, floors: in that order
    steps = [script.index(s) for s in ("lint-imports", "-m pytest\n", "-m slow --runslow",
                                       "sphinx-build -W", ".ci/floors\n")]
    assert steps == sorted(steps)


def test_ci_runs_every_step_and_fails_when_one_failed(tmp_path):
    # .ci/run's own step() and closing table, on steps that pass and fail: a failed step does
    # not stop the ones after it, and the script's status is the failure
    script = (ROOT / ".ci" / "run").read_text()
    step = script[script.index("step() {"):]
    step = step[:step.index("\n}\n") + 3]
    closing = script[script.index('echo "=== CI steps"'):]
    harness = tmp_path / "harness.sh"
    harness.write_text("set -uo pipefail\nRESULTS=()\nFAILED=0\n" + step
                       + "step first true\nstep second false\nstep third true\n" + closing)
    run = subprocess.run(["bash", str(harness)], capture_output=True, text=True, timeout=30)
    assert run.returncode == 1
    table = run.stdout[run.stdout.index("=== CI steps"):].splitlines()[1:]
    assert [line.split()[0] for line in table] == ["passed", "FAILED", "passed"]
    assert "second (exit 1)" in table[1]
