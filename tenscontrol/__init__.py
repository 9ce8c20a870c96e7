"""tenscontrol: simulation, linearization and control design for tensegrity structures.

Quick start::

    import tenscontrol as tc
    tbar = tc.catalog.tbar(variant="stedy", damping=1.0)
    traj = tc.simulate(tbar, 10.0)
    print(traj.stats, abs(traj.energy_violation).max())
"""

from tenscontrol.model import catalog
from tenscontrol.model import materials
from tenscontrol.simulation.actuation import ControlRecord
from tenscontrol.feedback.controllers import Controller, Measurement, OutputFeedback, StateFeedback, measurement
from tenscontrol.mechanics.compressible import bar_force_densities
from tenscontrol.mechanics.dynamics import accelerations, jacobians, mass_matrix, total_energy
from tenscontrol.mechanics.rigid import constraint_jacobian, force_densities, gravity_vector
from tenscontrol.model.loads import doublet
from tenscontrol.model.selection import Selection
from tenscontrol.model.io import load_structure, save_structure, structure_from_dict, structure_to_dict
from tenscontrol.linear.linearization import LinearModel, linearize
from tenscontrol.model.materials import MATERIALS, Material
from tenscontrol.simulation.simulator import SimulationError, SimulationStats, Trajectory, simulate
from tenscontrol.simulation.trajectory import SimulationInterrupted
from tenscontrol.mechanics.statics import Equilibrium, PrestressError, equilibrium
from tenscontrol.mechanics.stiffness import Compliance, compliance, tangent_stiffness
from tenscontrol.model.structure import Bar, PointMass, String, Structure
from tenscontrol.studies.verification import ClosedLoopReport, verify

__all__ = [
    "Bar", "ClosedLoopReport", "Compliance", "ControlRecord", "Controller", "HinfDesign",
    "LQRDesign", "Measurement", "OutputFeedback", "StateFeedback", "hinfsyn", "lqr",
    "measurement", "to_iosystem", "verify", "ClosedLoopComparison", "compare_closed_loop", "ElasticModel", "Equilibrium", "LinearModel", "MATERIALS", "Material",
    "MaterialComparison", "MaterialFigures", "MinimalRealization", "PointMass", "PrestressError",
    "Selection",
    "SimulationError", "SimulationInterrupted", "SimulationStats", "String", "Structure", "Trajectory", "accelerations",
    "bar_force_densities", "catalog", "compare_materials", "compliance",
    "constraint_jacobian", "doublet",
    "elastic_model", "equilibrium", "force_densities", "gravity_vector", "h2_norm", "hinf_norm",
    "jacobians", "linearize", "load_structure", "mass_matrix", "materials", "minimal_realization",
    "save_structure", "simulate", "structure_from_dict", "structure_to_dict", "tangent_stiffness", "total_energy",
]
__version__ = "0.3.0"

# The linear-systems tools import python-control (about 0.5 s); they load on first use so that
# `import tenscontrol` stays quick for simulation-only work (PEP 562).
_LAZY = {
    "MaterialComparison": "studies.comparison", "MaterialFigures": "studies.comparison",
    "compare_materials": "studies.comparison",
    "h2_norm": "linear.norms", "hinf_norm": "linear.norms",
    "ElasticModel": "linear.reduction", "MinimalRealization": "linear.reduction",
    "elastic_model": "linear.reduction", "minimal_realization": "linear.reduction",
    "HinfDesign": "linear.synthesis", "LQRDesign": "linear.synthesis", "hinfsyn": "linear.synthesis",
    "lqr": "linear.synthesis", "to_iosystem": "simulation.iosystem",
    "ClosedLoopComparison": "studies.closed_loop_materials",
    "compare_closed_loop": "studies.closed_loop_materials",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tenscontrol' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
