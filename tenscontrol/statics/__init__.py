"""Structures at rest: prestress design at a configuration, static equilibrium under loads at
given rest lengths, the tangent stiffness and compliance, and the commanded strings'
self-stresses. Imports tenscontrol.model and tenscontrol.mechanics; never python-control or
matplotlib."""

from tenscontrol.exports import lazy_exports

_EXPORTS = {
    "Equilibrium": "prestress", "PrestressError": "prestress", "equilibrium": "prestress",
    "static_equilibrium": "solve",
    "MechanismError": "result", "NewtonHistory": "result", "StaticEquilibrium": "result",
    "StaticsError": "result",
    "Compliance": "stiffness", "compliance": "stiffness", "tangent_stiffness": "stiffness",
    "Allocation": "self_stress", "SelfStress": "self_stress",
}
# self_stress names a module of this package: the function is tenscontrol.self_stress
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
