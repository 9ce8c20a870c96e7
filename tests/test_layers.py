"""The architecture as tests: the import-linter layer contracts of pyproject.toml hold, every
package and module of tenscontrol is in the layers, and no module of the package imports another
module's private name."""

import ast
import pathlib
import subprocess
import sys
import tomllib

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "tenscontrol"


def _private_imports(path: pathlib.Path):
    """(line, text) of each `from tenscontrol... import _name` and `import tenscontrol._x` in path."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tenscontrol"):
            parts = node.module.split(".")
            names = [a.name for a in node.names]
            if any(p.startswith("_") for p in parts) or any(
                    n.startswith("_") and not n.startswith("__") for n in names):
                yield node.lineno, f"from {node.module} import {', '.join(names)}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("tenscontrol") and any(
                        p.startswith("_") for p in a.name.split(".")):
                    yield node.lineno, f"import {a.name}"


def test_no_module_imports_a_private_name():
    found = [f"{p.relative_to(PACKAGE.parent)}:{line}: {text}"
             for p in sorted(PACKAGE.rglob("*.py")) for line, text in _private_imports(p)]
    assert not found, "private names imported across modules:\n" + "\n".join(found)


def test_the_private_import_check_can_fail(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from tenscontrol.model.structure import _readonly\n")
    assert list(_private_imports(bad)) == [(1, "from tenscontrol.model.structure import _readonly")]


def test_layer_contracts_hold():
    exe = pathlib.Path(sys.executable).parent / "lint-imports"   # from the test extra
    run = subprocess.run([str(exe)], cwd=PACKAGE.parent, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "0 broken" in run.stdout


def _top_layers() -> set:
    """The packages and modules named in pyproject.toml's package-level layers contract."""
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())
    layers = next(c for c in config["tool"]["importlinter"]["contracts"]
                  if c["type"] == "layers" and "containers" not in c)["layers"]
    return {name.strip() for layer in layers for name in layer.split("|")}


def test_every_package_has_its_layer():
    # a new package (or a top-level module) is placed in the import direction, not left out of it
    found = {f"tenscontrol.{p.parent.name}" for p in PACKAGE.glob("*/__init__.py")}
    found |= {f"tenscontrol.{p.stem}" for p in PACKAGE.glob("*.py")
              if p.stem not in ("__init__", "__main__")}
    missing = sorted(found - _top_layers() - {"tenscontrol.integrate"})  # own forbidden contracts
    assert not missing, f"add these to the layers contract in pyproject.toml: {missing}"
    gone = sorted(_top_layers() - found)
    assert not gone, f"the layers contract names packages that do not exist: {gone}"


def test_the_runtime_laws_design_and_estimation_are_their_own_packages():
    # issue 30 item 5: design (synthesis), estimation (Kalman, LQG, EKF) and control (the
    # runtime laws) are packages named for what they hold; self-stress is statics
    for package, module in [("control", "controllers"), ("control", "sampled"),
                            ("design", "synthesis"), ("design", "discrete"),
                            ("estimation", "ekf"), ("estimation", "lqg"),
                            ("statics", "self_stress")]:
        assert (PACKAGE / package / f"{module}.py").is_file(), f"{package}/{module}.py"
    assert not (PACKAGE / "feedback").exists()
    assert not any((PACKAGE / "linear" / f"{m}.py").exists()
                   for m in ("synthesis", "ekf", "estimation", "extended_lqg", "predictive"))


def test_every_package_is_installed():
    # pyproject.toml lists the packages setuptools puts in the wheel; one left out installs
    # without it, and `import tenscontrol` fails outside the checkout (tenscontrol.robust did:
    # the tests passed from the source tree, the examples run by the installed package failed)
    listed = set(tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())
                 ["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(PACKAGE.parent).parts)
             for p in PACKAGE.rglob("__init__.py") if "__pycache__" not in p.parts}
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
