"""tenscontrol: simulation, linearization and control design for tensegrity structures.

Quick start::

    import tenscontrol as tc
    tbar = tc.catalog.tbar(variant="stedy", damping=1.0)
    traj = tc.simulate(tbar, 10.0)
    print(traj)             # the run's figures as a table; repr(traj) is one line

Every public name is importable from here; docs/api.md lists them with one line each. The
subpackages are the layers (model, mechanics, statics, integrate, feedback, simulation, linear,
studies); pyproject.toml's import-linter contracts keep their import direction.
"""

# model: what a structure is
from tenscontrol.model import catalog, materials
from tenscontrol.model.io import (load_structure, save_structure, structure_from_dict,
                                  structure_to_dict)
from tenscontrol.model.form_finding import FormFinding, form_find
from tenscontrol.model.loads import PiecewiseConstantLoads, doublet
from tenscontrol.model.materials import MATERIALS, Material
from tenscontrol.model.mjcf import to_mjcf
from tenscontrol.model.selection import Selection
from tenscontrol.model.structure import Bar, PointMass, String, Structure
# mechanics: what it does physically
from tenscontrol.mechanics.compressible.model import bar_force_densities
from tenscontrol.mechanics.dynamics import accelerations, jacobians, mass_matrix, total_energy
from tenscontrol.mechanics.rigid.model import constraint_jacobian, force_densities, gravity_vector
from tenscontrol.mechanics.sensors import SensorSet, sensors
# statics: structures at rest
from tenscontrol.statics.prestress import Equilibrium, PrestressError, equilibrium
from tenscontrol.statics.result import (MechanismError, NewtonHistory, StaticEquilibrium,
                                        StaticsError)
from tenscontrol.statics.solve import static_equilibrium
from tenscontrol.statics.stiffness import Compliance, compliance, tangent_stiffness
# feedback laws, simulation
from tenscontrol.feedback.controllers import (Controller, Measurement, OutputFeedback,
                                              StateFeedback, measurement)
from tenscontrol.feedback.allocation import (AllocatedController, AllocatedSampled, Allocation,
                                             SelfStress, allocated, self_stress)
from tenscontrol.feedback.shape import ShapeTracking
from tenscontrol.feedback.mpc import PredictiveController
from tenscontrol.feedback.sampled import DiscreteFeedback, SampledController
from tenscontrol.feedback.estimators import DiscreteKalman, DiscreteLQG, SensorMeasurement
from tenscontrol.feedback.storage import load_controller, save_controller
from tenscontrol.simulation.actuation import ControlRecord
from tenscontrol.simulation.sampled_loop import SampledControlRecord
from tenscontrol.simulation.simulator import simulate
from tenscontrol.simulation.trajectory import (SimulationError, SimulationInterrupted,
                                               SimulationStats, Trajectory)
from tenscontrol.simulation.trajectory_io import load_trajectory
# linear models (python-control loads lazily, below), studies
from tenscontrol.linear.linearization import LinearModel, linearize
from tenscontrol.linear.threads import blas_threads
from tenscontrol.linear.shape import ShapeChange, ShapePath, shape_change, shape_path
from tenscontrol.studies.verification import ClosedLoopReport, verify
from tenscontrol.studies.shape_change import ShapeChangeReport, verify_shape_change
from tenscontrol.studies.cases import Case, Choice, LogUniform, Normal, Uniform, grid, samples
from tenscontrol.studies.results import CaseFailure, CaseResult, StudyInterrupted, StudyResult
from tenscontrol.studies.runner import process_pool, run_study
from tenscontrol.studies.store import StudyFolderError

__all__ = [
    # model
    "Bar", "MATERIALS", "Material", "PointMass", "Selection", "String", "Structure", "catalog",
    "doublet", "load_structure", "materials", "PiecewiseConstantLoads", "save_structure",
    "structure_from_dict",
    "structure_to_dict", "to_mjcf", "FormFinding", "form_find",
    # mechanics
    "Compliance", "Equilibrium", "PrestressError", "accelerations", "bar_force_densities",
    "compliance", "constraint_jacobian", "equilibrium", "force_densities", "gravity_vector",
    "jacobians", "mass_matrix", "tangent_stiffness", "total_energy", "SensorSet", "sensors",
    "MechanismError", "NewtonHistory", "StaticEquilibrium", "StaticsError",
    "static_equilibrium",
    # feedback and simulation
    "ControlRecord", "Controller", "Measurement", "OutputFeedback", "SimulationError",
    "SimulationInterrupted", "SimulationStats", "StateFeedback", "Trajectory", "measurement",
    "simulate", "to_iosystem", "load_trajectory", "load_controller", "save_controller",
    "AllocatedController", "AllocatedSampled", "Allocation", "SelfStress", "allocated", "self_stress",
    "ShapeTracking",
    "DiscreteFeedback", "PredictiveController", "SampledControlRecord", "SampledController",
    "DiscreteKalman", "DiscreteLQG", "SensorMeasurement",
    # linear
    "Design", "DiscreteLQGDesign", "ExtendedLQGDesign", "MPCDesign",
    "ElasticModel", "HinfDesign", "LQRDesign", "LinearModel", "MinimalRealization",
    "blas_threads", "elastic_model", "h2_norm", "hinf_norm", "hinfsyn", "linearize", "lqr",
    "minimal_realization", "save_mat",
    "ShapeChange", "ShapePath", "shape_change", "shape_path",
    "DiscreteLQRDesign", "ZOHModel", "discrete_closed_loop", "discretize", "dlqr",
    "gain_margin", "mpc", "zoh",
    "LQGDesign", "Observability", "Placement", "discrete_lqg", "lqg", "observability",
    "place_sensors", "ExtendedKalman", "extended_kalman",
    "ExtendedLQG", "extended_lqg",
    # studies
    "ClosedLoopComparison", "ClosedLoopReport", "MaterialComparison", "MaterialFigures",
    "compare_closed_loop", "compare_materials", "verify",
    "ShapeChangeReport", "verify_shape_change",
    # studies on an executor
    "Case", "CaseFailure", "CaseResult", "Choice", "LQRPipeline", "LogUniform", "Normal",
    "NormsPipeline", "StudyFileError", "StudyFolderError", "StudyInterrupted", "StudyResult",
    "Uniform", "grid", "process_pool", "run_study", "run_study_file", "samples",
]
__version__ = "1.0.0"

# The linear-systems tools import python-control (about 0.5 s); they load on first use so that
# `import tenscontrol` stays quick for simulation-only work (PEP 562).
_LAZY = {
    "MaterialComparison": "studies.comparison", "MaterialFigures": "studies.comparison",
    "compare_materials": "studies.comparison",
    "h2_norm": "linear.norms", "hinf_norm": "linear.norms",
    "ElasticModel": "linear.reduction", "MinimalRealization": "linear.reduction",
    "elastic_model": "linear.reduction", "minimal_realization": "linear.reduction",
    "HinfDesign": "linear.synthesis", "LQRDesign": "linear.synthesis",
    "hinfsyn": "linear.synthesis", "lqr": "linear.synthesis",
    "Design": "linear.design", "DiscreteLQGDesign": "linear.design",
    "ExtendedLQGDesign": "linear.design", "MPCDesign": "linear.design",
    "to_iosystem": "simulation.iosystem",
    "DiscreteLQRDesign": "linear.discrete", "ZOHModel": "linear.discrete",
    "discrete_closed_loop": "linear.discrete", "discretize": "linear.discrete",
    "dlqr": "linear.discrete", "gain_margin": "linear.discrete", "zoh": "linear.discrete",
    "mpc": "linear.predictive",
    "LQGDesign": "linear.estimation", "discrete_lqg": "linear.estimation",
    "lqg": "linear.estimation",
    "ExtendedKalman": "linear.ekf", "extended_kalman": "linear.ekf",
    "ExtendedLQG": "linear.extended_lqg", "extended_lqg": "linear.extended_lqg",
    "Observability": "linear.observability", "Placement": "linear.observability",
    "observability": "linear.observability", "place_sensors": "linear.observability",
    "save_mat": "linear.matlab",
    "ClosedLoopComparison": "studies.closed_loop_materials",
    "compare_closed_loop": "studies.closed_loop_materials",
    "LQRPipeline": "studies.pipelines", "NormsPipeline": "studies.pipelines",
    "StudyFileError": "studies.files", "run_study_file": "studies.files",
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
