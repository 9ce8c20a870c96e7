"""tenscontrol: simulation, linearization and control design for tensegrity structures.

Quick start::

    import tenscontrol as tc
    tbar = tc.catalog.tbar(variant="stedy", damping=1.0)
    traj = tc.simulate(tbar, 10.0)
    print(traj.stats, abs(traj.energy_violation).max())
"""

from . import catalog, materials
from .actuation import ControlRecord
from .controllers import Controller, Measurement, OutputFeedback, StateFeedback, measurement
from .compressible import (bar_force_densities, compressible_accelerations, compressible_energy,
                           compressible_jacobians, compressible_mass_matrix, compressible_model)
from .dynamics import (accelerations, constraint_jacobian, force_densities, gravity_vector,
                       mass_matrix, rigid_model, total_energy)
from .io import load_structure, save_structure
from .linearization import LinearModel, linearize
from .materials import MATERIALS, Material
from .simulation import SimulationError, SimulationStats, Trajectory, simulate
from .statics import Equilibrium, PrestressError, equilibrium
from .stiffness import Compliance, compliance, tangent_stiffness
from .structure import Bar, PointMass, String, Structure
from .verify import ClosedLoopReport, verify

__all__ = [
    "Bar", "ClosedLoopReport", "Compliance", "ControlRecord", "Controller", "HinfDesign",
    "LQRDesign", "Measurement", "OutputFeedback", "StateFeedback", "hinfsyn", "lqr",
    "measurement", "to_iosystem", "verify", "ClosedLoopComparison", "compare_closed_loop", "ElasticModel", "Equilibrium", "LinearModel", "MATERIALS", "Material",
    "MaterialComparison", "MaterialFigures", "MinimalRealization", "PointMass", "PrestressError",
    "SimulationError", "SimulationStats", "String", "Structure", "Trajectory", "accelerations",
    "bar_force_densities", "catalog", "compare_materials", "compliance",
    "compressible_accelerations", "compressible_energy", "compressible_jacobians",
    "compressible_mass_matrix", "compressible_model", "constraint_jacobian", "doublet",
    "elastic_model", "equilibrium", "force_densities", "gravity_vector", "h2_norm", "hinf_norm",
    "linearize", "load_structure", "mass_matrix", "materials", "minimal_realization",
    "rigid_model", "save_structure", "simulate", "tangent_stiffness", "total_energy",
]
__version__ = "0.3.0"

# The linear-systems tools import python-control (about 0.5 s); they load on first use so that
# `import tenscontrol` stays quick for simulation-only work (PEP 562).
_LAZY = {
    "MaterialComparison": "comparison", "MaterialFigures": "comparison",
    "compare_materials": "comparison", "doublet": "comparison",
    "h2_norm": "norms", "hinf_norm": "norms",
    "ElasticModel": "reduction", "MinimalRealization": "reduction",
    "elastic_model": "reduction", "minimal_realization": "reduction",
    "HinfDesign": "synthesis", "LQRDesign": "synthesis", "hinfsyn": "synthesis",
    "lqr": "synthesis", "to_iosystem": "iosystem",
    "ClosedLoopComparison": "closed_loop_materials",
    "compare_closed_loop": "closed_loop_materials",
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
