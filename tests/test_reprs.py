"""Every public type prints as one short line; the tables are in summary() (and print()).

The types come from the package: every class in ``tenscontrol.__all__`` must have a builder in
tests/public_types.py, and every tenscontrol object held by a built instance (a report's
trajectories, a comparison's rows, a design's controller, ...) is checked as well, so a new
public type without a short repr fails here.
"""

import dataclasses

import numpy as np
import pytest

import tenscontrol as tc
from public_types import BUILDERS, ConstantController, available, build_all, public_classes

MAX_REPR = 200


@pytest.fixture(scope="module")
def instances():
    return build_all()


def check_repr(obj, where: str) -> str:
    text = repr(obj)
    name = type(obj).__name__
    assert "\n" not in text, f"{where}: repr of {name} spans {text.count(chr(10)) + 1} lines"
    assert len(text) < MAX_REPR, f"{where}: repr of {name} is {len(text)} characters: {text}"
    assert text.startswith(f"{name}("), f"{where}: repr does not name {name}: {text}"
    return text


def test_every_public_class_has_a_builder():
    missing = sorted(set(public_classes()) - set(BUILDERS))
    assert not missing, (f"no instance of {missing} in tests/public_types.py: add a builder "
                         "there and give the type a one-line repr")


@pytest.mark.parametrize("name", available())
def test_repr_is_one_short_line_naming_the_type(instances, name):
    obj = instances[name]
    cls = public_classes().get(name)
    if cls is not None:
        assert isinstance(obj, cls)
    else:                                   # reached as an attribute of a public result
        assert type(obj).__name__ == name
    check_repr(obj, name)


def _held(obj):
    """The tenscontrol objects held by obj's fields (dataclasses; also inside tuples/dicts)."""
    if dataclasses.is_dataclass(obj):
        values = [getattr(obj, f.name) for f in dataclasses.fields(obj)]
    elif isinstance(obj, BaseException):
        values = list(vars(obj).values())
    else:
        return
    for v in values:
        for item in (v if isinstance(v, (tuple, list)) else v.values() if isinstance(v, dict)
                     else (v,)):
            if type(item).__module__.startswith("tenscontrol."):
                yield item
                yield from _held(item)


def test_held_objects_have_short_reprs(instances):
    seen = set()
    for name, obj in instances.items():
        for item in _held(obj):
            check_repr(item, f"{name} -> {type(item).__name__}")
            seen.add(type(item).__name__)
    # the walk reaches the nested results, compressible and closed-loop runs included
    assert {"SimulationStats", "ControlRecord", "ClosedLoopFigures", "MinimalRealization",
            "ElasticModel", "StateFeedback", "Measurement", "Trajectory"} <= seen


def _extreme(value):
    """`value` with its numbers replaced by the longest %g forms (three-digit exponents)."""
    if isinstance(value, float):
        return -1.2345678e-123
    if isinstance(value, complex):
        return complex(-1.2345678e-123, -1.2345678e123)
    if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.size:
        out = np.full_like(value, -1.2345678e-123)
        out.flat[-1] = 1.2345678e123
        return out
    return value


def test_reprs_stay_short_with_extreme_numbers(instances):
    refused = set()
    for name, obj in instances.items():
        if not dataclasses.is_dataclass(obj):
            continue
        try:
            worst = dataclasses.replace(obj, **{f.name: _extreme(getattr(obj, f.name))
                                                for f in dataclasses.fields(obj)})
        except ValueError:              # validated on construction: such numbers are refused
            refused.add(name)
            continue
        check_repr(worst, f"{name} with extreme numbers")
    # they validate their fields on construction (DiscreteFeedback: period > 0; DiscreteLQG,
    # ExtendedKalman and ExtendedLQG: delay; ExpectedLoad: a finite positive amplitude)
    assert refused == {"Structure", "Selection", "Uniform", "LogUniform", "Normal",
                       "ShapeTracking", "DiscreteFeedback", "DiscreteLQG", "ExtendedKalman",
                       "ExtendedLQG", "ExpectedLoad"}


def test_compressible_closed_loop_trajectory_repr(instances):
    traj = instances["ClosedLoopComparison"].reports[0].closed_loop
    text = check_repr(traj, "compressible run")
    assert "bars='compressible'" in text and "bar strain=" in text
    assert "commanded_strings=4" in text
    stats = check_repr(traj.stats, "radau stats")
    assert "integrator='radau5'" in stats and f"jacobians={traj.stats.jacobian_evaluations}" \
        in stats


def test_kalman_realization_repr():
    # undamped T-bar: the elastic model is not asymptotically stable, no balanced truncation
    eq = tc.equilibrium(tc.catalog.tbar("stedy", damping=0.0), gamma_min=10.0)
    mr = tc.minimal_realization(tc.linearize(eq.structure, kind="passive"))
    assert mr.hsv is None and "Kalman" in check_repr(mr, "Kalman")


def test_key_figures_in_reprs(instances):
    i = instances
    assert check_repr(i["LinearModel"], "") == (
        "LinearModel(structure='tbar-stedy', kind='passive', bars='rigid', states=24, inputs=4, "
        "disturbances=12, outputs=12, at_equilibrium=True)")
    traj = i["Trajectory"]
    assert f"samples={traj.t.size}, t=[0, 1] s" in repr(traj)
    assert f"max|bar viol|={np.abs(traj.bar_violation).max():.2g} m" in repr(traj)
    assert "accepted_steps" not in repr(traj.stats) and \
        f"steps={traj.stats.accepted_steps} accepted" in repr(traj.stats)
    assert f"||K||_F={np.linalg.norm(i['LQRDesign'].K):.6g}" in repr(i["LQRDesign"])
    assert f"gamma={i['HinfDesign'].gamma:.6g}" in repr(i["HinfDesign"])
    report = i["ClosedLoopReport"]
    assert f"peak reduction={100 * report.peak_reduction:.1f} %" in repr(report)
    assert "String(nodes=(0, 1), youngs_modulus=7e+07, radius=0.001" in repr(i["String"])


def test_errors_keep_their_message_in_str(instances):
    err = instances["SimulationError"]
    assert "sensor dropout" in repr(err) and "sensor dropout" in str(err)
    assert str(err).startswith("simulation failed at t = ")
    prestress = instances["PrestressError"]
    assert len(str(prestress)) > MAX_REPR and str(prestress).startswith("prism-3: ")


def test_a_user_controller_gets_the_short_repr():
    c = ConstantController(tc.catalog.tbar())
    assert repr(c) == "ConstantController(kind='passive', commanded_strings=4, states=0)"


# ---- summary(): the tables ------------------------------------------------------------------

def _figures(name, obj) -> list:
    """Texts the summary of `obj` must contain."""
    if name == "Trajectory":
        return [f"{obj.t.size} (t = 0..1 s)", f"{np.abs(obj.bar_violation).max():.3e} m"]
    if name in ("ControlRecord", "SampledControlRecord"):
        return [f"{obj.u[:, 0].min():.4g}", f"{obj.u[:, 0].max():.4g}"]
    if name == "Equilibrium":
        return ["string 3", "bar 1", f"{obj.gamma[0]:.6f}", f"residual {obj.residual:.3g} N"]
    if name == "StaticEquilibrium":
        return [f"residual {obj.residual:.3g} N", "load steps: 1"]
    if name == "NewtonHistory":
        return [f"{obj.residual[0]:.3e}", "load steps: 1"]
    if name == "LQRDesign":
        return [f"{np.linalg.norm(obj.K):.6g}", f"reduced {obj.minimal.order}"]
    if name == "HinfDesign":
        return [f"{obj.gamma:.6g}", f"{obj.closed_loop_norm:.6g}"]
    if name == "ClosedLoopReport":
        return [f"{obj.open.peak:.4e}", f"{obj.closed.peak:.4e}", f"{obj.linear.peak:.4e}"]
    if name in ("MaterialComparison", "ClosedLoopComparison"):
        return ["hdpe", "aluminium", f"{obj.rows[0].h2:.4g}", f"{obj.rows[1].hinf:.4g}"]
    if name == "Structure":
        return [f"{obj.n_nodes}, {obj.n_bars}, {obj.n_strings}", f"{obj.total_mass:.6g} kg",
                f"{obj.fixed_coordinates.size}"]
    if name == "FormFinding":
        return [f"{len(obj.nodes)}, {obj.densities.size}", f"{obj.self_stress_residual:.3g}"]
    if name == "Compliance":
        return [f"{obj.eigenvalues[0]:.4g} .. {obj.eigenvalues[-1]:.4g} m/N"]
    if name == "SimulationStats":
        return [f"{obj.accepted_steps} accepted, {obj.rejected_steps} rejected",
                f"{obj.rhs_evaluations}"]
    if name == "LinearModel":
        return [f"{obj.A.shape[0]}", f"{obj.B.shape[1]}: ", obj.kind]
    if name == "ElasticModel":
        return [f"{obj.n_e} ({2 * obj.n_e} states)", f"{obj.invariance_residual:.1e}"]
    if name == "MinimalRealization":
        return [f"{obj.order} (structural {obj.structural_order}, full {obj.full_order})",
                f"{obj.error_bound:.3e}"]
    if name == "RiccatiSolution":
        return [obj.method, f"{obj.residual:.2g}"]
    if isinstance(obj, tc.Controller):     # every controller, a user's subclass too
        extra = {"StateFeedback": [f"{np.linalg.norm(getattr(obj, 'K', 0)):.4g}"],
                 "OutputFeedback": ["measured signals"],
                 "AllocatedController": [f"wraps{' ' * 4}", "self-stresses"],
                 "AllocatedSampled": [f"wraps{' ' * 4}", "self-stresses"],
                 "ShapeTracking": [f"{getattr(obj, 'duration', 0):.4g} s", "path points"]
                 }.get(name, [])
        return [f"commanded strings  {obj.strings.size}: ", "states  "] + extra
    if name == "Measurement":
        return [" ".join(obj.names), f"{obj.n_signals}"]
    if name == "ClosedLoopFigures":
        return [f"{obj.peak:.4e} m", f"{obj.effort_peak:.4g} N/m"]
    if name == "MaterialFigures":
        return [obj.material, f"{obj.h2:.4g}", f"{obj.hinf:.4g}"]
    if name == "ClosedLoopMaterialFigures":
        return [obj.material, f"{obj.gain:.4g}", f"{obj.closed_peak:.4g}"]
    if name == "StudyResult":
        return [f"{obj.n_cases} cases", f"{len(obj.records)} finished",
                f"case {obj.failures[0].index}", obj.failures[0].error_type]
    if name == "ShapeChangeReport":
        return [f"{obj.max_tracking_error:.3e}", f"{obj.final_static_residual:.3e}"]
    # sampled-data control (issue 23): the controllers' head, then their own figures
    if isinstance(obj, tc.SampledController):
        extra = {"DiscreteFeedback": [f"{np.linalg.norm(getattr(obj, 'DK', 0)):.4g}"],
                 "DiscreteLQG": [f"{np.linalg.norm(getattr(obj, 'K', 0)):.4g}"],
                 "ExtendedLQG": [f"{np.linalg.norm(getattr(obj, 'Kx', 0)):.4g}",
                                 "extended Kalman filter"],
                 "PredictiveController": [f"{getattr(obj, 'horizon', 0)} samples"]}
        return ([f"commanded strings  {np.size(getattr(obj, 'strings', ()))}:", "period  ",
                 "delay  "] + extra.get(name, []))
    if name == "SampledControlRecord":
        return [f"{obj.u[:, 0].min():.4g}", f"{obj.period:g} s",
                f"controller samples  {obj.sample_times.size}"]
    if name == "DiscreteLQRDesign":
        return [f"{obj.spectral_radius:.6g}", f"{np.linalg.norm(obj.K_reduced):.6g}"]
    # the designs of issue 30 (Design: the base, built as an LQRDesign)
    if name == "Design":
        return _figures(type(obj).__name__, obj)
    if name == "DiscreteLQGDesign":
        return [f"{obj.spectral_radius:.6g}", f"{np.linalg.norm(obj.L):.6g}",
                f"{np.linalg.norm(obj.K):.6g}"]
    if name == "ExtendedLQGDesign":
        return [f"{np.linalg.norm(obj.K):.6g}", f"{obj.spectral_radius:.6g}",
                f"{obj.controller.n_states} recorded states"]
    if name == "MPCDesign":
        return [f"{obj.controller.horizon} samples", f"{obj.spectral_radius:.6g}",
                f"{np.trace(obj.S):.6g}"]
    if name == "ZOHModel":
        return [f"{obj.Gamma0.shape[0]} x {obj.Gamma0.shape[1]}", f"{obj.period:g} s"]
    if name in ("SensorSet", "SensorMeasurement"):
        return [f"signals{' ' * 4}", f"{obj.n_signals}", " ".join(obj.names)]
    if name == "LQGDesign":
        return [f"{obj.h2:.6g}", f"{np.linalg.norm(obj.L):.6g}"]
    if name == "DiscreteKalman":
        return [f"{obj.Phi.shape[0]} x {obj.Cr.shape[0]}", f"{np.linalg.norm(obj.M):.4g}"]
    if name == "ExtendedKalman":
        return [f"{obj.Qd.shape[0]} x {obj.sensors.n_signals}", f"{np.trace(obj.Qd):.4g}"]
    if name == "Observability":
        return [f"{obj.rank} / {obj.order}", f"{obj.min_eigenvalue:.4g}"]
    if name == "Placement":
        return [obj.criterion, f"{obj.figure:.6g}", f"{obj.full:.6g}"]
    if name == "ActuatorPlacement":
        return [obj.criterion, f"{obj.figure:.6g}", f"{obj.full:.6g}", f"{obj.kept:.3f}"]
    if name == "SelfStress":
        return [f"dimension  {obj.dimension}", f"{obj.gamma_min.min():.4g}"]
    if name == "Allocation":
        return [f"{obj.margin:.4g} N/m", "yes" if obj.feasible else "no"]
    if name == "ShapePath":
        return [f"{obj.s.size}", f"{obj.residual.max():.3g} N", f"gamma_min {obj.gamma_min:.4g}"]
    if name == "ShapeChange":
        return [f"{max(float(np.max(p.real)) for p in obj.E):.3g} 1/s",
                f"{obj.controller.duration:.4g} s"]
    if name == "ModalView":
        return [f"{len(obj)} elastic modes", f"{obj.frequency[0]:.4g}",
                f"{obj.closed_damping[0]:.2g}", "zeta closed"]
    if name == "DampingVerdict":
        return [f"{len(obj)} of {obj.n_modes} modes below {obj.target:g}"]
    if name == "EffortChoice":
        return [f"{obj.target:g}", f"{obj.effort:.3g}", f"{obj.command_ratio:.2g} of the prestress"]
    raise AssertionError(f"{name} has summary(): list the figures it must show in _figures")


@pytest.mark.parametrize("name", available())
def test_summary_is_a_table_with_the_key_figures(instances, name):
    obj = instances[name]
    if not hasattr(obj, "summary"):
        return
    text = obj.summary()
    assert isinstance(text, str) and text.count("\n") >= 2, f"{name}.summary() is not a table"
    for figure in _figures(name, obj):
        assert figure in text, f"{name}.summary() lacks {figure!r}:\n{text}"
    assert str(obj) == text             # print() shows the table, the repr stays one line
