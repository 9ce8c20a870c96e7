"""ODE integrators (Dormand-Prince 5(4), Radau IIA): knows nothing of tensegrity."""
