"""Array copies for the kernels without numba's slice-assignment error message.

numba compiles ``a[:] = b`` (b an array) with a shape check whose error message formats both
shapes as strings; that formatting (str of integers, concatenation) is compiled once per
process and per pair of dimensions and costs about 3 s of CPU on a cold cache, most of the
T-bar's first derivative. The kernels' copies are between arrays whose sizes agree by
construction, so they loop instead. Only kernels call them: compiled without a Python entry
point (:data:`~tenscontrol.mechanics.kernels.cache.INTERNAL`).
"""

from __future__ import annotations

from numba import njit

from tenscontrol.mechanics.kernels.cache import CACHE, INTERNAL

__all__ = ["add_into", "copy_into", "copy_matrix"]


@njit(cache=CACHE, **INTERNAL)
def copy_into(dst, src):
    """dst[i] = src[i] for every i of the 1-D array dst (src at least as long)."""
    for i in range(dst.shape[0]):
        dst[i] = src[i]


@njit(cache=CACHE, **INTERNAL)
def add_into(dst, src):
    """dst[i] += src[i] for every i of the 1-D array dst (src at least as long)."""
    for i in range(dst.shape[0]):
        dst[i] += src[i]


@njit(cache=CACHE, **INTERNAL)
def copy_matrix(dst, src):
    """dst[i, j] = src[i, j] for every entry of the 2-D array dst (src at least as large)."""
    for i in range(dst.shape[0]):
        for j in range(dst.shape[1]):
            dst[i, j] = src[i, j]
