"""Ready-made per-case pipelines: a designed structure, built with errors, linearized and run.

Both pipelines take one structure and, per case, a dict of parameters from a fixed vocabulary
(:data:`PARAMETERS`; an unknown name raises, so a typo never runs a study that varies
nothing). Each case goes through the same chain:

1. **design**: the bar ``material`` and ``bar_radius``, the strings' ``damping``, a
   ``payload_mass``; then, with a ``prestress`` (a pipeline default or the case's), the
   prestress design of :func:`tenscontrol.equilibrium` with the pipeline's bar model and
   ``configuration`` (the designed rest lengths);
2. **as built**: relative errors of the rest lengths (``rest_length_error`` on every string,
   ``rest_length_error_<k>`` on string k on top), of the string stiffness and of the bars'
   Young's modulus (compressible bars only);
3. **settled**: the stable static equilibrium of the as-built structure near the design
   (:func:`tenscontrol.static_equilibrium`, gravity included);
4. :class:`NormsPipeline`: the passive linear model there (minimal realization) and its norms,
   then the nonlinear doublet response; :class:`LQRPipeline`: an LQR designed on the nominal
   structure, verified on the as-built one (:func:`tenscontrol.verify`), continuous or, with
   a sample ``period``, discretized exactly (:func:`tenscontrol.discretize`) and verified in
   the sampled-data loop.

Every step uses the pipeline's one bar model, ``bars="rigid"`` (the default, as everywhere in
tenscontrol) or ``"compressible"`` (bars that are axial springs: their material's stiffness
enters the norms and responses, at a cost: an aluminium T-bar run is stiff).

The structure travels to the workers as its ``tenscontrol.structure/1`` JSON text and is
rebuilt once per process.
"""

from __future__ import annotations

import functools
import json
import warnings

import numpy as np

from tenscontrol import validation
from tenscontrol.design.discrete import discrete_closed_loop, discretize, gain_margin
from tenscontrol.linear.linearization import linearize
from tenscontrol.linear.norms import h2_norm, hinf_norm
from tenscontrol.linear.reduction import minimal_realization
from tenscontrol.design.synthesis import lqr
from tenscontrol.mechanics.laws import active_set, string_tensions
from tenscontrol.statics.prestress import equilibrium
from tenscontrol.statics.result import StaticsError
from tenscontrol.statics.solve import static_equilibrium
from tenscontrol.model.io import structure_from_dict, structure_to_dict
from tenscontrol.model.loads import doublet
from tenscontrol.model.selection import Selection
from tenscontrol.model.structure import PointMass, Structure
from tenscontrol.simulation.simulator import simulate
from tenscontrol.studies.verification import verify

__all__ = ["BAR_MODELS", "CONFIGURATIONS", "LQRPipeline", "NormsPipeline", "PARAMETERS",
           "as_built", "settle"]

#: The pipelines' `bars` (the bar model of every step) and `configuration` (of the prestress
#: design, :func:`tenscontrol.equilibrium`).
BAR_MODELS = ("rigid", "compressible")
CONFIGURATIONS = ("fixed", "free")

PARAMETERS = {
    "material": "bar material preset (design)",
    "bar_radius": "bar radius [m] (design)",
    "damping": "damper coefficient of every string [N s/m] (design)",
    "payload_mass": "point mass at the pipeline's payload_node [kg] (design)",
    "prestress": "least string force density of the prestress design [N/m] (design)",
    "rest_length_error": "relative error of every string's rest length (as built)",
    "rest_length_error_<k>": "relative error of string k's rest length, added (as built)",
    "string_stiffness_error": "relative error of every string's stiffness (as built)",
    "bar_youngs_modulus_error": "relative error of the bars' Young's modulus (as built; "
                                "compressible bars)",
    "amplitude": "doublet amplitude [N]",
    "effort": "LQR effort weight (LQRPipeline)",
    "period": "sample period of the LQR [s], held (LQRPipeline)",
    "delay": "computation delay of the sampled LQR [s], 0 <= delay < period (LQRPipeline)",
}


@functools.lru_cache(maxsize=8)
def _structure(text: str) -> Structure:
    """The structure of a JSON text, rebuilt once per process."""
    return structure_from_dict(json.loads(text))


def _number(params: dict, name: str, default):
    value = params.get(name, default)
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        if value is default:
            return value
        raise TypeError(f"parameter {name!r} must be a number ({PARAMETERS[name]}), got {value!r}")
    return float(value)


def _check_names(params: dict, known: set, n_strings: int, who: str) -> None:
    per_string = {f"rest_length_error_{k}" for k in range(n_strings)}
    unknown = sorted(set(params) - known - per_string)
    if unknown:
        raise ValueError(f"{who}: unknown parameter {unknown[0]!r}; it knows "
                         f"{', '.join(sorted(known))} and rest_length_error_0 .. "
                         f"rest_length_error_{n_strings - 1}")


def _designed(structure: Structure, params: dict, payload_node, prestress, bars: str,
              configuration: str) -> Structure:
    """Step 1: the design parameters, then the prestress design."""
    s = structure
    if "material" in params:
        s = s.with_bars(material=params["material"])
    if "bar_radius" in params:
        s = s.with_bars(radius=_number(params, "bar_radius", None))
    if "damping" in params:
        s = s.with_strings(damping=_number(params, "damping", None))
    if "payload_mass" in params:
        if payload_node is None:
            raise ValueError("parameter 'payload_mass' needs the pipeline's payload_node")
        s = s.with_point_masses(tuple(s.point_masses) + (
            PointMass(node=payload_node, mass=_number(params, "payload_mass", None)),))
    prestress = _number(params, "prestress", prestress)
    if prestress is not None:
        s = equilibrium(s, gamma_min=prestress, bars=bars,
                        configuration=configuration).structure
    return s


def as_built(structure: Structure, params: dict) -> Structure:
    """Step 2: the structure with the relative errors of `params` (see :data:`PARAMETERS`)."""
    common = _number(params, "rest_length_error", 0.0)
    errors = np.array([common + _number(params, f"rest_length_error_{k}", 0.0)
                       for k in range(structure.n_strings)])
    s = structure
    if np.any(errors):
        s = s.with_strings(rest_length=s.string_rest_lengths * (1.0 + errors))
    k_error = _number(params, "string_stiffness_error", 0.0)
    if k_error:
        s = s.with_strings(stiffness=s.string_stiffness * (1.0 + k_error))
    e_error = _number(params, "bar_youngs_modulus_error", 0.0)
    if e_error:
        s = s.with_bars(youngs_modulus=[b.youngs_modulus * (1.0 + e_error) for b in s.bars])
    return s


def settle(structure: Structure, bars: str = "rigid") -> Structure:
    """Step 3: the structure at its stable static equilibrium near its nodes.

    :func:`tenscontrol.static_equilibrium` under gravity (no loads) with the bar model `bars`
    (``"rigid"`` or ``"compressible"``), so that the linear model there passes
    :func:`tenscontrol.linearize`'s equilibrium test. Raises a ``ValueError`` naming the slack
    strings when there is no equilibrium nearby or the one found is not stable (a mechanism:
    the linear model would have no finite norms).
    """
    bars = validation.choice("settle: bars", bars, BAR_MODELS)
    try:
        with warnings.catch_warnings():
            # an unstable equilibrium is this function's error, not a warning
            warnings.filterwarnings("ignore", ".*the equilibrium found is unstable")
            result = static_equilibrium(structure, bars=bars)
    except StaticsError as exc:
        raise ValueError(f"settle: {structure.name}: no static equilibrium near the design "
                         f"({exc}); slack strings at the start: {_slack(structure)}") from exc
    if not result.stable:
        raise ValueError(f"settle: {structure.name}: the static equilibrium near the design is "
                         f"not stable (least stiffness eigenvalue {result.min_stiffness:.3g} "
                         f"N/m, a mechanism); slack strings there: "
                         f"{np.flatnonzero(result.slack).tolist() or 'none'}")
    return result.structure


def _slack(structure: Structure):
    slack = np.flatnonzero(~active_set(structure.string_lengths, structure.string_rest_lengths,
                                       structure.string_is_spring))
    return slack.tolist() or "none"


def _tensions(structure: Structure, nodes: np.ndarray) -> np.ndarray:
    """String tensions [N] (0 when slack) at each time of `nodes` (nt, n, 3)."""
    i, j = structure.string_nodes[:, 0], structure.string_nodes[:, 1]
    length = np.linalg.norm(nodes[:, j] - nodes[:, i], axis=2)
    return string_tensions(structure.string_stiffness, structure.string_rest_lengths, length,
                           structure.string_is_spring)


class _Pipeline:
    """What both pipelines share: the structure as JSON text, the chain's first three steps."""

    name = "pipeline"
    _known = {"material", "bar_radius", "damping", "payload_mass", "prestress",
              "rest_length_error", "string_stiffness_error", "bar_youngs_modulus_error",
              "amplitude"}

    def __init__(self, structure, disturbances, outputs, prestress, amplitude, half_period,
                 t_final, payload_node, bars, configuration):
        who = type(self).__name__
        if not isinstance(structure, Structure):
            raise TypeError(f"{who}: structure must be a tenscontrol.Structure, "
                            f"got {type(structure).__name__}")
        self.bars = validation.choice(f"{who}: bars", bars, BAR_MODELS)
        self.configuration = validation.choice(f"{who}: configuration", configuration,
                                               CONFIGURATIONS)
        for label, value in (("amplitude", amplitude), ("half_period", half_period),
                             ("t_final", t_final)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"{type(self).__name__}: {label} must be a positive number, "
                                 f"got {value!r}")
        self.structure_json = json.dumps(structure_to_dict(structure), sort_keys=True)
        self.disturbances, self.outputs = disturbances, outputs
        self.prestress, self.payload_node = prestress, payload_node
        self.amplitude, self.half_period = float(amplitude), float(half_period)
        self.t_final = float(t_final)

    @property
    def structure(self) -> Structure:
        """The nominal structure (rebuilt from its JSON once per process)."""
        return _structure(self.structure_json)

    def definition(self) -> dict:
        """The settings as JSON data (for the study's hash and manifest)."""
        return {"structure": json.loads(self.structure_json),
                **{k: (repr(v) if isinstance(v, Selection) else v) for k, v in vars(self).items()
                   if k != "structure_json"}}

    def __repr__(self) -> str:
        s = self.structure
        return (f"{type(self).__name__}(structure={s.name!r}, bars={self.bars!r}, "
                f"prestress={self.prestress}, doublet={self.amplitude:g} N / {self.half_period:g} s, "
                f"t_final={self.t_final:g} s)")

    def warm(self) -> None:
        """Run the chain once on a short window: loads (or compiles) the kernels."""
        self._chain({}, t_final=min(self.t_final, 0.05))

    def __call__(self, parameters: dict) -> dict:
        """The figures of one case (see the class docstring)."""
        return self._chain(parameters, self.t_final)

    def _built(self, params: dict):
        _check_names(params, self._known, self.structure.n_strings, self.name)
        if self.bars == "rigid" and "bar_youngs_modulus_error" in params:
            raise ValueError("parameter 'bar_youngs_modulus_error' changes nothing with rigid "
                             "bars: give the pipeline bars='compressible'")
        design = _designed(self.structure, params, self.payload_node, self.prestress,
                           self.bars, self.configuration)
        return design, settle(as_built(design, params), self.bars)

    def _eval(self, t_final: float) -> np.ndarray:
        return np.linspace(0.0, t_final, max(51, int(round(100 * t_final)) + 1))


class NormsPipeline(_Pipeline):
    """Design -> as built -> settled -> linear norms and the nonlinear doublet response.

    Figures: ``bar_mass`` [kg]; ``offset`` [m], the largest node displacement of the settled
    as-built structure from the design; ``h2`` [m/(N s^0.5)], ``hinf`` [m/N] from the
    disturbance force to the outputs, ``order`` and ``frequency`` [Hz] (the lowest natural
    frequency) of its passive linear model (strings at rest length taut); from the
    nonlinear run under :func:`tenscontrol.doublet` from the settled state: ``peak``
    [m], the largest output deviation, ``min_tension`` [N], the least string tension over the
    run, and ``slack`` (bool), whether a string went slack.

    Parameters
    ----------
    structure : Structure
        The nominal structure (the design's configuration).
    disturbances : Selection
        The one coordinate of the doublet force, ``Selection(2, "z")`` by default.
    outputs : Selection, optional
        Output coordinates; all free coordinates by default.
    prestress : float, optional
        Default least force density of the prestress design [N/m] (the case's ``prestress``
        wins); None: the structure's rest lengths are the design.
    amplitude, half_period, t_final : float
        The doublet [N], [s] and the simulated window [s]; a case's ``amplitude`` wins.
    payload_node : int, optional
        The node that carries a case's ``payload_mass``.
    bars : {"rigid", "compressible"}
        The bar model of every step: the prestress design, the static solve, the linear model
        and the run. ``"rigid"`` (default, as in :func:`tenscontrol.simulate`): the bars'
        material sets their mass only; ``"compressible"``: axial springs, whose stiffness
        enters every figure (and ``bar_youngs_modulus_error`` may be varied), at the cost of a
        stiff run for metal bars.
    configuration : {"fixed", "free"}
        The prestress design's (:func:`tenscontrol.equilibrium`): ``"fixed"`` (default) holds
        the structure's nodes; ``"free"`` lets it sag under gravity first (a structure built
        without its sag, which no prestress holds as built). Used when there is a
        ``prestress``.
    """

    name = "norms"

    def __init__(self, structure: Structure, *, disturbances: Selection = Selection(2, "z"),
                 outputs: Selection | None = None, prestress: float | None = None,
                 amplitude: float = 10.0, half_period: float = 0.5, t_final: float = 3.0,
                 payload_node: int | None = None, bars: str = "rigid",
                 configuration: str = "fixed"):
        super().__init__(structure, disturbances, outputs, prestress, amplitude, half_period,
                         t_final, payload_node, bars, configuration)

    def _chain(self, params: dict, t_final: float) -> dict:
        design, s = self._built(params)
        model = linearize(s, bars=self.bars, kind="passive", at_rest="taut",
                          outputs=self.outputs)
        minimal = minimal_realization(model)
        sys = minimal.sys[list(range(minimal.sys.noutputs)),
                          _input_names(s, self.disturbances, minimal.sys)]
        el = minimal.elastic
        w2 = np.sort(np.real(np.linalg.eigvals(np.linalg.solve(el.M_e, el.K_e))))
        amplitude = _number(params, "amplitude", self.amplitude)
        t_eval = self._eval(t_final)
        traj = simulate(s, t_final, bars=self.bars, t_eval=t_eval,
                        loads=doublet(s, self.disturbances, amplitude, self.half_period))
        y = (traj.nodes - s.nodes).reshape(len(traj.t), -1)[:, _output_columns(s, self.outputs)]
        tension = _tensions(s, traj.nodes)
        return {"bar_mass": float(s.bar_masses.sum()),
                "offset": float(np.abs(s.nodes - design.nodes).max()),
                "h2": h2_norm(sys), "hinf": hinf_norm(sys), "order": int(minimal.order),
                "frequency": float(np.sqrt(max(w2[0], 0.0)) / (2 * np.pi)) if w2.size
                else float("nan"),
                "peak": float(np.linalg.norm(y, axis=1).max()),
                "min_tension": float(tension.min()), "slack": bool((tension <= 0).any())}


class LQRPipeline(_Pipeline):
    """Design -> as built -> settled; an LQR designed on the nominal structure, verified on the
    as-built one, continuous or sampled.

    Figures: ``offset`` [m] (as in :class:`NormsPipeline`); from :func:`tenscontrol.verify`
    under the doublet: ``open_peak``, ``closed_peak`` [m], ``peak_reduction`` (1 -
    closed/open), ``effort_peak`` [N/m], ``linear_error`` (how far the linear prediction is
    off), ``slack_strings`` (commanded strings that went slack in closed loop) and ``slack``;
    the controller's ``period`` and ``delay`` [s] (nan and 0 for the continuous LQR), and for a
    sampled one the ``spectral_radius`` and ``gain_margin`` of its discrete loop on the nominal
    design model (:func:`tenscontrol.discrete_closed_loop`, :func:`tenscontrol.gain_margin`,
    up to 100, 0 for a loop unstable at the design gain; both nan for the continuous LQR, whose loop stays stable for every gain >= 1/2
    on that model).

    Parameters are those of :class:`NormsPipeline` (``bars`` the bar model of the design,
    the LQR's linear model and both runs), and `effort`, the LQR's effort weight (a case's
    ``effort`` wins). `prestress` is needed (the LQR acts about a prestressed equilibrium):
    10 N/m by default. `period` [s] samples the LQR at that period with a zero-order hold and
    the computation `delay` [s] (``0 <= delay < period``), the continuous design discretized
    exactly (:func:`tenscontrol.discretize`); None (default): the continuous LQR. A case's
    ``period`` and ``delay`` win, so a study can sweep sample rates.
    """

    name = "lqr"
    _known = _Pipeline._known | {"effort", "period", "delay"}

    def __init__(self, structure: Structure, *, disturbances: Selection = Selection(2, "z"),
                 outputs: Selection | None = None, prestress: float = 10.0,
                 effort: float = 1e-2, amplitude: float = 10.0, half_period: float = 0.5,
                 t_final: float = 3.0, payload_node: int | None = None, bars: str = "rigid",
                 configuration: str = "fixed", period: float | None = None,
                 delay: float = 0.0):
        super().__init__(structure, disturbances, outputs, prestress, amplitude, half_period,
                         t_final, payload_node, bars, configuration)
        self.effort = float(effort)
        self.period, self.delay = _timing(period, delay, "LQRPipeline: ")

    def definition(self) -> dict:
        """The settings as JSON data (for the study's hash and manifest); a continuous
        pipeline's has no period and delay, so the folders of studies run before pipelines
        took a period keep their hash and resume."""
        out = super().definition()
        if self.period is None and self.delay == 0:
            del out["period"], out["delay"]
        return out

    def __repr__(self) -> str:
        text = super().__repr__()
        if self.period is None:
            return text
        return f"{text[:-1]}, period={self.period:g} s, delay={self.delay:g} s)"

    def _chain(self, params: dict, t_final: float) -> dict:
        design, s = self._built(params)
        model = linearize(design, bars=self.bars, kind="passive", outputs=self.outputs)
        lqr_design = lqr(model, effort=_number(params, "effort", self.effort))
        period, delay = _timing(params.get("period", self.period),
                                params.get("delay", self.delay), "parameter ")
        controller, figures = lqr_design.controller, {"spectral_radius": np.nan,
                                                       "gain_margin": np.nan}
        if period is not None:
            controller = discretize(controller, period, delay)
            loop = np.asarray(discrete_closed_loop(lqr_design.minimal, controller).A)
            figures = {"spectral_radius": float(np.abs(np.linalg.eigvals(loop)).max()),
                       "gain_margin": gain_margin(lqr_design.minimal, controller)}
        amplitude = _number(params, "amplitude", self.amplitude)
        with warnings.catch_warnings():
            # the as-built structure is verified about its settled state, while the controller
            # (and verify's linear prediction) keep the nominal operating point: expected here
            warnings.filterwarnings("ignore", "verify: the controller's operating point")
            warnings.filterwarnings("ignore", "linearize: .* not in equilibrium")
            report = self._verify(s, controller, amplitude, t_final)
        slack = len(report.closed.slack_time)
        return {"offset": float(np.abs(s.nodes - design.nodes).max()),
                "open_peak": report.open.peak, "closed_peak": report.closed.peak,
                "peak_reduction": report.peak_reduction, "effort_peak": report.closed.effort_peak,
                "linear_error": report.linear_error, "slack_strings": slack, "slack": slack > 0,
                "period": np.nan if period is None else period, "delay": delay, **figures}

    def _verify(self, s, controller, amplitude, t_final):
        return verify(s, controller, doublet(s, self.disturbances, amplitude, self.half_period),
                      t_final, outputs=self.outputs, t_eval=self._eval(t_final),
                      bars=self.bars)


def _timing(period, delay, who: str) -> tuple:
    """(period or None, delay) checked: a positive finite period [s] or None (continuous),
    0 <= delay < period (0 without a period). `who` starts the messages ("parameter ")."""
    quote = "'" if who == "parameter " else ""
    delay = validation.real(f"{who}{quote}delay{quote}", delay, what="a number of seconds",
                            low=0.0)
    if period is None:
        if delay:
            raise ValueError(f"{who}{quote}delay{quote} is a computation delay of the sampled "
                             f"LQR: give a period too, or a delay of 0 (got {delay:g} s)")
        return None, delay
    period = validation.real(f"{who}{quote}period{quote}", period, what="a number of seconds "
                             "(None: the continuous LQR)", positive=True,
                             expected="a positive, finite number of seconds")
    if not delay < period:
        raise ValueError(f"{who}{quote}delay{quote} must be less than the period "
                         f"{period:g} s, got {delay:g} s")
    return period, delay


def _input_names(structure: Structure, disturbances: Selection, sys) -> list:
    """The linear model's input names of the disturbance coordinates (e.g. ``["fz2"]``)."""
    coords = disturbances.coordinates(structure, "disturbances")
    return [f"f{'xyz'[c % 3]}{c // 3}" for c in coords]


def _output_columns(structure: Structure, outputs: Selection | None) -> np.ndarray:
    if outputs is None:
        return np.asarray(structure.free_coordinates, dtype=np.int64)
    return outputs.coordinates(structure, "outputs")
