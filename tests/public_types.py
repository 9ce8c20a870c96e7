"""One cheap instance of every public type, for tests/test_reprs.py and benchmarks/repr_lengths.py.

Everything is built on the T-bar of :mod:`tenscontrol.catalog` with short runs (about 10 s in
all, most of it compare_closed_loop), through the top-level API (the two bar models, internal since 1.0,
through tenscontrol.mechanics).

:data:`BUILDERS` maps a public name to a function ``(cache) -> instance``; the cache holds what
several builders share (the prestressed T-bar, its linear model, the LQR design, ...). Types
that are not exported at the top level but reached as attributes of public results
(``report.open``, ``comparison.rows[0]``) have builders too, under their class names.
"""

from __future__ import annotations

import importlib.util

import numpy as np

import tenscontrol as tc
from tenscontrol.mechanics.compressible.model import compressible_model
from tenscontrol.mechanics.rigid.model import rigid_model

T_FINAL = 1.0          # [s] every simulated window
OUTPUTS = tc.Selection(nodes=[2, 3], axes="xz")
GRID = np.linspace(0.0, T_FINAL, 101)   # [s] the output grid of the studies


class ConstantController(tc.Controller):
    """A user's controller, written without a dataclass: a constant command on every string."""

    kind = "passive"
    n_states = 0

    def __init__(self, structure):
        self.strings = np.arange(structure.n_strings)
        self.gamma_ref = np.zeros(structure.n_strings)

    def force_densities(self, t, q, qd, xc):
        return np.zeros(self.strings.size)


def _shared(cache: dict, key: str, make):
    if key not in cache:
        cache[key] = make(cache)
    return cache[key]


def _tbar(c):
    return _shared(c, "tbar", lambda c: tc.catalog.tbar("stedy", damping=1.0))


def _equilibrium(c):
    return _shared(c, "eq", lambda c: tc.equilibrium(_tbar(c), gamma_min=10.0))


def _model(c):
    return _shared(c, "model", lambda c: tc.linearize(_equilibrium(c).structure, kind="passive"))


def _lqr(c):
    return _shared(c, "lqr", lambda c: tc.lqr(_model(c)))


def _hinf(c):
    def make(c):
        meas = tc.measurement(_equilibrium(c).structure, OUTPUTS)
        return tc.hinfsyn(_model(c), outputs=OUTPUTS, measurements=meas)
    return _shared(c, "hinf", make)


def _trajectory(c):
    return _shared(c, "traj", lambda c: tc.simulate(_tbar(c), T_FINAL))


def _report(c):
    def make(c):
        s = _equilibrium(c).structure
        load = tc.doublet(s, tc.Selection(2, "z"), 1.0, 0.25)
        return tc.verify(s, _lqr(c).controller, load, T_FINAL, outputs=OUTPUTS, t_eval=GRID)
    return _shared(c, "report", make)


def _stopped_run(c, fault: BaseException, caught: type):
    """The exception a T-bar run ends with when its loads function raises `fault` at 0.1 s."""
    def load(t, q, qd):
        if t > 0.1:
            raise fault
        return np.zeros((4, 3))
    try:
        tc.simulate(_tbar(c), T_FINAL, loads=load)
    except caught as exc:
        return exc
    raise AssertionError(f"a loads function raising {fault!r} did not stop the simulation")


def _simulation_error(c):
    return _stopped_run(c, RuntimeError("sensor dropout"), tc.SimulationError)


def _simulation_interrupted(c):
    # KeyboardInterrupt is what Ctrl-C raises inside the user's function
    return _stopped_run(c, KeyboardInterrupt(), tc.SimulationInterrupted)


def _prestress_error(c):
    try:
        tc.equilibrium(tc.catalog.prism(3, twist=1.0), gamma_min=1.0)
    except tc.PrestressError as exc:
        return exc
    raise AssertionError("the twisted prism has no self-stress, yet equilibrium succeeded")


def _static(c):
    return _shared(c, "static", lambda c: tc.static_equilibrium(
        tc.catalog.icosahedron(on_face=True)))


def _mechanism_error(c):
    try:
        tc.static_equilibrium(tc.catalog.icosahedron().with_gravity((0.0, 0.0, -9.806)))
    except tc.MechanismError as exc:
        return exc
    raise AssertionError("a free-floating icosahedron under gravity found an equilibrium")


def _material_comparison(c):
    return _shared(c, "materials", lambda c: tc.compare_materials(
        tc.catalog.tbar("table2", damping=100.0), t_final=T_FINAL, t_eval=GRID))


def _closed_loop_comparison(c):
    def make(c):
        s = tc.equilibrium(_tbar(c), gamma_min=10.0, bars="compressible").structure
        return tc.compare_closed_loop(s, ("hdpe", "aluminium"), t_final=T_FINAL, t_eval=GRID,
                                      outputs=OUTPUTS)
    return _shared(c, "closed_materials", make)


def _shape_change(c):
    def tips(s):    # the T-bar's tips 0.1 m down, bars kept at 5 m
        N = _tbar(c).nodes.copy()
        z = N[2, 2] - 0.1 * s
        x = np.sqrt(25 - z * z)
        N[2, 0], N[2, 2], N[3, 0], N[3, 2] = x, z, N[1, 0] - x, z
        return N
    return _shared(c, "shape", lambda c: tc.shape_change(_tbar(c), tips, T_FINAL, points=3,
                                                         designs=1, gamma_min=10.0))


BUILDERS = {
    "Structure": _tbar,
    "Bar": lambda c: _tbar(c).bars[0],
    "String": lambda c: _tbar(c).strings[0],
    "PointMass": lambda c: tc.PointMass(node=2, mass=0.5),
    "Material": lambda c: tc.MATERIALS["hdpe"],
    "Trajectory": _trajectory,
    "SimulationStats": lambda c: _trajectory(c).stats,
    "SimulationError": _simulation_error,
    "SimulationInterrupted": _simulation_interrupted,
    "PrestressError": _prestress_error,
    "ControlRecord": lambda c: _report(c).closed_loop.control,
    "Equilibrium": _equilibrium,
    "Compliance": lambda c: tc.compliance(_equilibrium(c).structure),
    "LinearModel": _model,
    "ElasticModel": lambda c: tc.elastic_model(_model(c)),
    "MinimalRealization": lambda c: tc.minimal_realization(_model(c)),
    "ModalView": lambda c: tc.modes(_model(c), _lqr(c)),
    "DampingVerdict": lambda c: _lqr(c).damping_verdict(),
    "EffortChoice": lambda c: tc.lqr(_model(c), damping=0.02).effort_choice,
    "LQRDesign": _lqr,
    "RiccatiSolution": lambda c: _lqr(c).riccati,
    "HinfDesign": _hinf,
    "Controller": lambda c: ConstantController(_tbar(c)),
    "StateFeedback": lambda c: _lqr(c).controller,
    "OutputFeedback": lambda c: _hinf(c).controller,
    "Measurement": lambda c: _hinf(c).controller.measurement,
    "ClosedLoopReport": _report,
    "ClosedLoopFigures": lambda c: _report(c).closed,
    "MaterialComparison": _material_comparison,
    "MaterialFigures": lambda c: _material_comparison(c).rows[0],
    "ClosedLoopComparison": _closed_loop_comparison,
    "ClosedLoopMaterialFigures": lambda c: _closed_loop_comparison(c).rows[0],
    "RigidBarModel": lambda c: rigid_model(_tbar(c)),
    "CompressibleBarModel": lambda c: compressible_model(tc.catalog.tbar("table2")),
    "Selection": lambda c: tc.Selection(nodes=[2, 3], axes="xz"),
    "PiecewiseConstantLoads": lambda c: tc.doublet(tc.catalog.tbar(), tc.Selection(2, "z")),
    "StaticEquilibrium": _static,
    "NewtonHistory": lambda c: _static(c).history,
    "MechanismError": _mechanism_error,
    "StaticsError": lambda c: tc.StaticsError("prism-3: Newton failed"),
    "FormFinding": lambda c: tc.form_find(12, tc.catalog.ICOSAHEDRON_BARS,
                                          tc.catalog.ICOSAHEDRON_STRINGS),
    # studies on an executor
    "Case": lambda c: _cases(c)[0],
    "Uniform": lambda c: tc.Uniform(-0.05, 0.05),
    "LogUniform": lambda c: tc.LogUniform(1e-3, 1e3),
    "Normal": lambda c: tc.Normal(0.0, 0.1),
    "Choice": lambda c: tc.Choice(("hdpe", "aluminium")),
    "NormsPipeline": lambda c: tc.NormsPipeline(_tbar(c), prestress=10.0, t_final=0.2),
    "LQRPipeline": lambda c: tc.LQRPipeline(_tbar(c), t_final=0.2),
    "StudyResult": lambda c: _study(c),
    "CaseResult": lambda c: _study(c).records[0],
    "CaseFailure": lambda c: _study(c).failures[0],
    "StudyInterrupted": lambda c: tc.StudyInterrupted(_study(c)),
    "StudyFolderError": lambda c: tc.StudyFolderError("out: " + "/very/long/folder" * 20),
    "StudyFileError": lambda c: tc.StudyFileError("study.toml: key 'x': " + "wrong " * 50),
    # self-stress allocation
    "AllocatedController": lambda c: tc.allocated(_lqr(c).controller, _equilibrium(c).structure,
                                                  gamma_min=1.0),
    "AllocatedSampled": lambda c: tc.allocated(tc.dlqr(_model(c), 0.01).controller,
                                               _equilibrium(c).structure, gamma_min=1.0),
    "SelfStress": lambda c: tc.self_stress(_equilibrium(c).structure, gamma_min=1.0),
    "Allocation": lambda c: tc.self_stress(_equilibrium(c).structure, gamma_min=1.0).allocate(
        np.array([0.0, -12.0, 0.0, 0.0]), _equilibrium(c).gamma),
    # shape change
    "ShapeChange": _shape_change,
    "ShapePath": lambda c: _shape_change(c).path,
    "ShapeTracking": lambda c: _shape_change(c).controller,
    "ShapeChangeReport": lambda c: tc.verify_shape_change(_shape_change(c), T_FINAL,
                                                          t_eval=GRID),
    # sensors and estimation
    "SensorSet": lambda c: _sensors(c),
    "SensorMeasurement": lambda c: _lqg(c).controller.measurement,
    "LQGDesign": lambda c: _lqg(c),
    "DiscreteLQG": lambda c: _discrete_lqg(c).controller,
    "DiscreteKalman": lambda c: _discrete_lqg(c).controller.kalman,
    "Observability": lambda c: tc.observability(_model(c), _sensors(c)),
    "Placement": lambda c: tc.place_sensors(_model(c), _sensors(c), 2, criterion="logdet"),
    "ActuatorPlacement": lambda c: tc.place_actuators(_model(c), 2),
    "ExtendedKalman": lambda c: tc.extended_kalman(_sensors(c), 0.005, process_noise=4.0),
    "ExtendedLQG": lambda c: _extended_lqg(c).controller,
    # the designs (issue 30)
    "Design": _lqr,
    "DiscreteLQGDesign": lambda c: _discrete_lqg(c),
    "ExtendedLQGDesign": lambda c: _extended_lqg(c),
    # issue 32, item 4: the load an LQG is tuned for, and what a design used (derived)
    "ExpectedLoad": lambda c: tc.ExpectedLoad(30.0, 1.0),
    "NoiseTuning": lambda c: tc.lqg(_model(c), _sensors(c),
                                    expected_load=tc.ExpectedLoad(30.0, 1.0)).tuning,
}


def _sampled_run(c):
    def make(c):
        law = tc.discretize(_lqr(c).controller, 0.01, 0.002)
        return tc.simulate(_equilibrium(c).structure, 0.05, controller=law)
    return _shared(c, "sampled", make)


# sampled-data control (issue 23)
BUILDERS.update({
    "SampledController": lambda c: tc.SampledController(),
    "DiscreteFeedback": lambda c: tc.discretize(_lqr(c).controller, 0.01),
    "SampledControlRecord": lambda c: _sampled_run(c).control,
    "DiscreteLQRDesign": lambda c: tc.dlqr(_model(c), 0.01),
    "ZOHModel": lambda c: tc.zoh(-np.eye(2), np.ones((2, 1)), 0.1, 0.01),
})
# types that need an optional dependency: built where it is installed
OPTIONAL = {"PredictiveController": "osqp", "MPCDesign": "osqp"}
if importlib.util.find_spec("osqp") is not None:
    BUILDERS["PredictiveController"] = lambda c: _mpc(c).controller
    BUILDERS["MPCDesign"] = lambda c: _mpc(c)


def _mpc(c):
    return _shared(c, "mpc", lambda c: tc.mpc(_model(c), 0.01))


def _sensors(c):
    s = _equilibrium(c).structure
    return _shared(c, "sensors", lambda c: tc.sensors(s, string_lengths=range(s.n_strings),
                                                      bar_rates=[0, 1], std=1e-3))


def _lqg(c):
    return _shared(c, "lqg", lambda c: tc.lqg(_model(c), _sensors(c), process_noise=4.0))


def _discrete_lqg(c):
    return _shared(c, "discrete_lqg", lambda c: tc.discrete_lqg(_model(c), _sensors(c), 0.005,
                                                               process_noise=4.0))


def _extended_lqg(c):
    return _shared(c, "extended_lqg", lambda c: tc.extended_lqg(_model(c), _sensors(c), 0.005,
                                                               process_noise=4.0))


def _cases(c):
    return _shared(c, "cases", lambda c: tc.samples(
        {"rest_length_error": tc.Uniform(-0.02, 0.02)}, 2, seed=1,
        designs={"material": ["hdpe", "aluminium"]}))


def _study(c):
    def make(c):
        pipeline = tc.NormsPipeline(_tbar(c), prestress=10.0, t_final=0.2)
        cases = _cases(c) + (tc.Case(4, {"rest_length_error_1": 0.5,
                                         "rest_length_error_3": 0.5}),)
        return tc.run_study(pipeline, cases, progress=False)
    return _shared(c, "study", make)

#: The subpackages whose ``__all__`` hold the public names that are not at the top level.
SUBPACKAGES = ("control", "design", "estimation", "linear", "simulation", "statics", "studies")


def public_classes() -> dict:
    """The classes exported by ``tenscontrol.__all__`` and by its subpackages' ``__all__``
    (``tc.design.LQRDesign``; lazy exports included), by name."""
    found = {}
    for module in [tc] + [getattr(tc, name) for name in SUBPACKAGES]:
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if isinstance(obj, type) and (name not in OPTIONAL or
                                          importlib.util.find_spec(OPTIONAL[name]) is not None):
                found[name] = obj
    return found


def available() -> list:
    """The names of :data:`BUILDERS`."""
    return list(BUILDERS)


def build_all(names=None) -> dict:
    """One instance per name of `names` (:func:`available` by default), built in order."""
    cache = {}
    return {name: BUILDERS[name](cache) for name in (names or available())}
