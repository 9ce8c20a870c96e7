"""Compressible bars: the model (bar force densities, its kernel record), its compiled
right-hand side, Jacobian and energy, and the same in band storage for large structures."""
