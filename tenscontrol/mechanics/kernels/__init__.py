"""Infrastructure of the compiled kernels: where numba caches them, the named records they take,
and the envelope LDL^T both bar models solve with."""
