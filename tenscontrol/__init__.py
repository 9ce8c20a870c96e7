"""tenscontrol: simulation, linearization and control design for tensegrity structures."""

from .io import load_structure
from .materials import MATERIALS, Material
from .structure import Bar, PointMass, String, Structure

__all__ = [
    "Bar", "MATERIALS", "Material", "PointMass", "String", "Structure", "load_structure",
]
__version__ = "0.1.0"
