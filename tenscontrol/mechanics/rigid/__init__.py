"""Rigid bars: the model (mass matrix, gravity, constraint Jacobian, its kernel record), its
compiled forces, accelerations and energy, the direct correction and the sparse pattern."""
