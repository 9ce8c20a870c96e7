"""tenscontrol: simulation, linearization and control design for tensegrity structures.

Quick start::

    import tenscontrol as tc
    tbar = tc.catalog.tbar(variant="stedy", damping=1.0)
    traj = tc.simulate(tbar, 10.0)
    print(traj)             # the run's figures as a table; repr(traj) is one line

What a user calls first is here (``tc.simulate``, ``tc.lqr``, ``tc.Structure``, ...); the rest,
mostly the result types those return, lives in the subpackages named for what they hold:
``tc.statics``, ``tc.control`` (the runtime laws the simulator calls), ``tc.simulation``,
``tc.linear`` (the analysis), ``tc.design`` (the synthesis), ``tc.robust`` (uncertain
parameters and mu), ``tc.estimation`` and
``tc.studies`` (e.g. ``tc.design.LQRDesign``). docs/api.md lists every name with one line each;
pyproject.toml's import-linter contracts keep the subpackages' import direction. A name that
left the top level still works here, with a DeprecationWarning naming its new place.
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
from tenscontrol.statics.prestress import PrestressError, equilibrium
from tenscontrol.statics.result import MechanismError, StaticsError
from tenscontrol.statics.solve import static_equilibrium
from tenscontrol.statics.stiffness import compliance, tangent_stiffness
from tenscontrol.statics.self_stress import self_stress
# control: the runtime laws the simulator calls; simulation
from tenscontrol.control.controllers import (Controller, Measurement, OutputFeedback,
                                             StateFeedback, measurement)
from tenscontrol.control.allocation import allocated
from tenscontrol.control.sampled import SampledController
from tenscontrol.control.storage import load_controller, save_controller
from tenscontrol.simulation.simulator import simulate
from tenscontrol.simulation.trajectory import SimulationError, SimulationInterrupted, Trajectory
from tenscontrol.simulation.trajectory_io import load_trajectory
# linear analysis, design, estimation (python-control loads lazily, below), studies
from tenscontrol.linear.linearization import LinearModel, linearize
from tenscontrol.linear.threads import blas_threads
from tenscontrol.design.shape import shape_change, shape_path
from tenscontrol.studies.verification import verify
from tenscontrol.studies.shape_change import verify_shape_change
from tenscontrol.studies.cases import Case, Choice, LogUniform, Normal, Uniform, grid, samples
from tenscontrol.studies.results import StudyInterrupted
from tenscontrol.studies.runner import process_pool, run_study
from tenscontrol.studies.store import StudyFolderError
from tenscontrol import control, design, estimation, linear, robust, simulation, statics, studies
from tenscontrol.exports import lazy_exports

__all__ = [
    # model
    "Bar", "MATERIALS", "Material", "PointMass", "Selection", "String", "Structure", "catalog",
    "doublet", "load_structure", "materials", "PiecewiseConstantLoads", "save_structure",
    "structure_from_dict", "structure_to_dict", "to_mjcf", "FormFinding", "form_find",
    # mechanics
    "accelerations", "bar_force_densities", "constraint_jacobian", "force_densities",
    "gravity_vector", "jacobians", "mass_matrix", "total_energy", "SensorSet", "sensors",
    # statics
    "PrestressError", "MechanismError", "StaticsError", "compliance", "equilibrium",
    "self_stress", "static_equilibrium", "tangent_stiffness",
    # control and simulation
    "Controller", "Measurement", "OutputFeedback", "SampledController", "SimulationError",
    "SimulationInterrupted", "StateFeedback", "Trajectory", "allocated", "load_controller",
    "load_trajectory", "measurement", "save_controller", "simulate", "to_iosystem",
    # linear analysis
    "LinearModel", "blas_threads", "elastic_model", "h2_norm", "hinf_norm", "linearize",
    "minimal_realization", "modes", "save_mat",
    # design
    "Design", "discrete_closed_loop", "discretize", "dlqr", "gain_margin", "hinfsyn", "lqr",
    "mpc", "place_actuators", "shape_change", "shape_path", "zoh",
    # estimation
    "ExpectedLoad", "discrete_lqg", "extended_kalman", "extended_lqg", "lqg", "observability",
    "place_sensors",
    # studies
    "compare_closed_loop", "compare_materials", "verify", "verify_shape_change",
    # studies on an executor
    "Case", "Choice", "LQRPipeline", "LogUniform", "Normal", "NormsPipeline", "StudyFileError",
    "StudyFolderError", "StudyInterrupted", "Uniform", "grid", "process_pool", "run_study",
    "run_study_file", "samples",
    # the subpackages that hold the rest
    "control", "design", "estimation", "linear", "robust", "simulation", "statics", "studies",
]
__version__ = "1.0.0"

# The linear-systems tools import python-control (about 0.5 s); they load on first use so that
# `import tenscontrol` stays quick for simulation-only work (PEP 562).
_LAZY = {
    "compare_materials": "studies.comparison",
    "compare_closed_loop": "studies.closed_loop_materials",
    "h2_norm": "linear.norms", "hinf_norm": "linear.norms",
    "elastic_model": "linear.reduction", "minimal_realization": "linear.reduction",
    "modes": "linear.modal_view",
    "save_mat": "linear.matlab", "to_iosystem": "simulation.iosystem",
    "Design": "design.result", "hinfsyn": "design.synthesis", "lqr": "design.synthesis",
    "discrete_closed_loop": "design.discrete", "discretize": "design.discrete",
    "dlqr": "design.discrete", "gain_margin": "design.discrete", "zoh": "design.discrete",
    "mpc": "design.predictive", "place_actuators": "design.placement",
    "discrete_lqg": "estimation.lqg", "lqg": "estimation.lqg",
    "extended_kalman": "estimation.ekf", "extended_lqg": "estimation.extended_lqg",
    "observability": "estimation.observability", "place_sensors": "estimation.observability",
    "ExpectedLoad": "estimation.tuning",
    "LQRPipeline": "studies.pipelines", "NormsPipeline": "studies.pipelines",
    "StudyFileError": "studies.files", "run_study_file": "studies.files",
}

# Names that left the top level for the subpackage that holds them (issue 30, item 5): mostly
# the result types the functions above return. tc.NAME still works, with a DeprecationWarning.
_MOVED = {
    **dict.fromkeys(["Allocation", "Compliance", "Equilibrium", "NewtonHistory", "SelfStress",
                     "StaticEquilibrium"], "tenscontrol.statics"),
    **dict.fromkeys(["AllocatedController", "AllocatedSampled", "DiscreteFeedback",
                     "DiscreteKalman", "DiscreteLQG", "PredictiveController",
                     "SensorMeasurement", "ShapeTracking"], "tenscontrol.control"),
    **dict.fromkeys(["ControlRecord", "SampledControlRecord", "SimulationStats"],
                    "tenscontrol.simulation"),
    **dict.fromkeys(["ElasticModel", "MinimalRealization"], "tenscontrol.linear"),
    **dict.fromkeys(["DiscreteLQGDesign", "DiscreteLQRDesign", "ExtendedLQGDesign", "HinfDesign",
                     "LQRDesign", "MPCDesign", "ShapeChange", "ShapePath", "ZOHModel"],
                    "tenscontrol.design"),
    **dict.fromkeys(["ExtendedKalman", "ExtendedLQG", "LQGDesign", "Observability",
                     "Placement"], "tenscontrol.estimation"),
    **dict.fromkeys(["CaseFailure", "CaseResult", "ClosedLoopComparison", "ClosedLoopReport",
                     "MaterialComparison", "MaterialFigures", "ShapeChangeReport",
                     "StudyResult"], "tenscontrol.studies"),
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, _MOVED)
