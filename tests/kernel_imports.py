"""Which tenscontrol modules the compiled kernels depend on, read from the source (ast).

A module "has cached kernels" when it decorates a function with ``njit(cache=...)``. Its compiled
code includes every tenscontrol name its compiled functions use (called functions, constants,
record types), found by following the names in their bodies (and the module-level assignments
those names refer to) to the import they come from, and through re-exports to the module that
defines them; then, transitively, what the compiled functions of those modules include.
"""

from __future__ import annotations

import ast
import pathlib

import tenscontrol

PACKAGE = pathlib.Path(tenscontrol.__file__).resolve().parent  # the copy the tests import
ROOT = PACKAGE.parent


def module_path(name: str) -> pathlib.Path | None:
    """The file of module `name` (a package's __init__.py), None if there is none."""
    base = ROOT.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.exists():
            return path
    return None


def _tree(name: str) -> ast.Module:
    return ast.parse(module_path(name).read_text())


def _is_njit(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(target, ast.Name) and target.id == "njit") or (
        isinstance(target, ast.Attribute) and target.attr == "njit")


def _is_cached(decorator: ast.expr) -> bool:
    return _is_njit(decorator) and isinstance(decorator, ast.Call) and any(
        k.arg == "cache" and not (isinstance(k.value, ast.Constant) and not k.value.value)
        for k in decorator.keywords)


def compiled_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    return [node for node in tree.body if isinstance(node, ast.FunctionDef)
            and any(_is_njit(d) for d in node.decorator_list)]


def modules_with_cached_kernels() -> set[str]:
    """Every tenscontrol module that decorates a function with njit(cache=...)."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        if any(_is_cached(d) for node in compiled_functions(tree) for d in node.decorator_list):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def _imports(name: str, tree: ast.Module) -> dict[str, tuple[str, str | None]]:
    """Local name -> (module, attribute or None) for the module-level imports of tenscontrol."""
    found = {}
    package = name if module_path(name).name == "__init__.py" else name.rpartition(".")[0]
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                source = f"{base}.{source}" if source else base
            for alias in node.names:
                if module_path(f"{source}.{alias.name}"):  # a submodule
                    found[alias.asname or alias.name] = (f"{source}.{alias.name}", None)
                else:
                    found[alias.asname or alias.name] = (source, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.asname or alias.name.partition(".")[0]] = (
                    alias.name if alias.asname else alias.name.partition(".")[0], None)
    return {k: v for k, v in found.items() if v[0].partition(".")[0] == "tenscontrol"}


def _defining_module(module: str, attribute: str | None) -> str:
    """Follow `module.attribute` through re-exports to the module that defines it."""
    if attribute is None or module_path(module) is None:
        return module
    imported = _imports(module, _tree(module)).get(attribute)
    return _defining_module(*imported) if imported else module


def _names(nodes) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}


def direct_dependencies(name: str) -> set[str]:
    """The tenscontrol modules whose names the compiled functions of `name` use."""
    tree = _tree(name)
    used = _names(f for function in compiled_functions(tree) for f in function.body)
    used |= _names(f.args for f in compiled_functions(tree))  # default values
    assigned = {t.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                for t in node.targets if isinstance(t, ast.Name)}
    pending = set(used)
    while pending:  # module-level constants built from imported names
        value = assigned.get(pending.pop())
        if value is not None:
            new = _names([value]) - used
            used |= new
            pending |= new
    imports = _imports(name, tree)
    found = {_defining_module(*imports[n]) for n in used if n in imports}
    for node in ast.walk(tree):  # module.attribute: the module that defines the attribute
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in used and imports.get(node.value.id, ("", ""))[1] is None):
            found.add(_defining_module(imports[node.value.id][0], node.attr))
    # the cache switch is read when a function is decorated (njit(cache=CACHE)(f) included),
    # it is not compiled into any code
    return found - {name, "tenscontrol.mechanics.kernels.cache"}


def dependencies(name: str) -> set[str]:
    """direct_dependencies, closed over the modules with compiled functions among them."""
    found, pending = set(), [name]
    while pending:
        for module in direct_dependencies(pending.pop()):
            if module not in found:
                found.add(module)
                if compiled_functions(_tree(module)):
                    pending.append(module)
    return found - {name}
