"""Structures at rest: prestress design at a configuration, static equilibrium under loads at
given rest lengths, and the tangent stiffness and compliance. Imports tenscontrol.model and
tenscontrol.mechanics; never python-control or matplotlib."""
