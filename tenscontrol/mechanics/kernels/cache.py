"""Where numba caches the compiled kernels, chosen once, before the first kernel is decorated.

numba caches a ``cache=True`` function next to its source (``__pycache__``), else in the user's
cache folder (``~/.cache/numba``); when neither is writable (a read-only ``site-packages`` and a
``HOME`` that is not writable, as in some containers and CI runners) decorating the function
raises ``RuntimeError: cannot cache function ...: no locator available``, and
``import tenscontrol`` failed. Here, on import (the first module of the package that compiles
anything imports this one), a probe function is decorated as the kernels are; if numba finds no
folder for it, its cache folder (``numba.config.CACHE_DIR``, which numba reads from
``NUMBA_CACHE_DIR`` only when numba itself is imported, hence set here directly) is pointed at
a private folder in the temporary directory; if even that is not writable, :data:`CACHE` is
False and the kernels compile on every import, with no error.

A ``NUMBA_CACHE_DIR`` set by the user is left alone. The setting is numba's, so it is process-
wide: it also serves the integrators' kernels (:mod:`tenscontrol.integrate`, which imports
nothing of ours and is always imported after this module, through ``tenscontrol/__init__``)
and any other library whose own folders are not writable either.
"""

from __future__ import annotations

import os
import tempfile

from numba import njit
from numba.core import config

__all__ = ["CACHE", "cache_folder"]


def _probe():
    return 0


def _cache_works() -> bool:
    """Whether numba finds a writable cache folder for a function of this package."""
    try:
        njit(cache=True)(_probe)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return False
    return True


def cache_folder() -> str:
    """The fallback cache folder: private to the user, in the temporary directory."""
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    return os.path.join(tempfile.gettempdir(), f"tenscontrol-numba-cache-{uid}")


def _choose() -> bool:
    if _cache_works():
        return True
    if not config.CACHE_DIR:  # the user's NUMBA_CACHE_DIR wins, even if unwritable
        try:
            folder = cache_folder()
            os.makedirs(folder, mode=0o700, exist_ok=True)
        except OSError:
            return False
        config.CACHE_DIR = folder
        if _cache_works():
            return True
        config.CACHE_DIR = ""
    return False


#: Whether the kernels are cached on disk (``njit(cache=CACHE)``); False only when no folder
#: at all is writable, in which case they compile on every import.
CACHE: bool = _choose()
