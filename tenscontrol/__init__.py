"""tenscontrol: simulation, linearization and control design for tensegrity structures.

Quick start::

    import tenscontrol as tc
    tbar = tc.catalog.tbar(variant="stedy", damping=1.0)
    traj = tc.simulate(tbar, 10.0)
    print(traj.stats, abs(traj.energy_violation).max())
"""

from . import catalog, materials
from .dynamics import (accelerations, constraint_jacobian, force_densities, gravity_vector,
                       mass_matrix, rigid_model, total_energy)
from .io import load_structure, save_structure
from .materials import MATERIALS, Material
from .simulation import SimulationError, SimulationStats, Trajectory, simulate
from .structure import Bar, PointMass, String, Structure

__all__ = [
    "Bar", "MATERIALS", "Material", "PointMass", "SimulationError", "SimulationStats", "String",
    "Structure", "Trajectory", "accelerations", "catalog", "constraint_jacobian",
    "force_densities", "gravity_vector", "load_structure", "mass_matrix", "materials",
    "rigid_model", "save_structure", "simulate", "total_energy",
]
__version__ = "0.1.0"
