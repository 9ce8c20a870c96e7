"""Lazy public names of a package (PEP 562): each package's ``__init__`` names its public objects
and the module that defines them, and they are imported on first use.

So ``tenscontrol.design.LQRDesign`` works without ``tenscontrol.design`` importing every
synthesis module (and python-control) up front. This module imports nothing of tenscontrol.
"""

from __future__ import annotations

import importlib
import warnings

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: dict, moved: dict | None = None):
    """(``__getattr__``, ``__dir__``) for the package named `package`.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    exports : dict of str to str
        Public name -> the package's module that defines it (relative, e.g. ``"synthesis"``).
    moved : dict of str to str, optional
        Names that left this package: name -> the package that now holds it (e.g.
        ``"tenscontrol.design"``). Reaching one warns (DeprecationWarning) naming the new place
        and returns the object from there.
    """
    moved = dict(moved or {})

    def __getattr__(name):
        if name in exports:
            module = importlib.import_module(f"{package}.{exports[name]}")
            value = getattr(module, name)
            setattr(importlib.import_module(package), name, value)   # found once per process
            return value
        if name in moved:
            warnings.warn(f"{package}.{name} has moved to {moved[name]}.{name}; the old name "
                          f"will be removed", DeprecationWarning, stacklevel=2)
            return getattr(importlib.import_module(moved[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(vars(importlib.import_module(package))) | set(exports))

    return __getattr__, __dir__
