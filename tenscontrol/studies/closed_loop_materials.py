"""Soft against metallic bars in closed loop: one design procedure, several bar materials.

:func:`compare_closed_loop` gives each material the same treatment: the bars take the preset
(:func:`tenscontrol.comparison.with_bar_material`, force densities kept, so the prestressed
equilibrium stays one), the passive linear model of the compressible structure is linearized
there, an LQR is designed with the same weights, and :func:`tenscontrol.studies.verification` checks it on the
nonlinear compressible model under a doublet. The figures are those of
:func:`tenscontrol.compare_materials`, for the closed loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tenscontrol import validation
from tenscontrol.studies.comparison import (MaterialTable, check_materials, doublet_ratios,
                                            one_channel, with_bar_material)
from tenscontrol.linear.linearization import linearize
from tenscontrol.model.loads import doublet
from tenscontrol.model.selection import Selection, check_selection
from tenscontrol.linear.norms import h2_norm, hinf_norm
from tenscontrol.design.synthesis import lqr
from tenscontrol.studies.verification import output_grid, verify

__all__ = ["ClosedLoopMaterialFigures", "ClosedLoopComparison", "compare_closed_loop"]


@dataclass(frozen=True)
class ClosedLoopMaterialFigures(MaterialTable):
    """One material's closed-loop figures (see :func:`compare_closed_loop`).

    Attributes
    ----------
    material : str
    bar_mass : float
        [kg].
    slowest_pole : complex
        Closed-loop pole of the design with the largest real part [1/s].
    gain : float
        ||K||_F of the Cartesian gain.
    h2, hinf : float
        Closed-loop linear norms from the disturbance force to the outputs [m/(N s^.5)], [m/N].
    peak_ratio, energy_ratio : float
        Nonlinear closed loop: max_t |y(t)| / |u|_2 and |y|_2 / |u|_2 (u: the doublet).
    open_peak, closed_peak : float
        Nonlinear peak deflection max_t |y(t)| [m] without and with the controller.
    effort_peak : float
        max |command| [N/m].
    linear_error : float
        max |y_nonlinear - y_linear| / max |y_nonlinear| in closed loop.
    slack_time : dict of int to float
        Strings that went slack and for how long [s].
    """

    material: str
    bar_mass: float
    slowest_pole: complex
    gain: float
    h2: float
    hinf: float
    peak_ratio: float
    energy_ratio: float
    open_peak: float
    closed_peak: float
    effort_peak: float
    linear_error: float
    slack_time: dict

    def __repr__(self) -> str:
        return (f"ClosedLoopMaterialFigures(material={self.material!r}, "
                f"slowest pole={self.slowest_pole:.4g} 1/s, ||K||_F={self.gain:.4g}, "
                f"peak open={self.open_peak:.4g} m, closed={self.closed_peak:.4g} m, "
                f"linear error={100 * self.linear_error:.2f} %)")

    _widths = (36, 14)

    def _table(self):
        """(title, [material], rows of (label, [value], format)): one column of the
        comparison's table."""
        return (f"ClosedLoopMaterialFigures of {self.material}", [self.material],
                closed_loop_rows((self,)))


@dataclass(frozen=True, eq=False)
class ClosedLoopComparison(MaterialTable):
    """The result of :func:`compare_closed_loop`; ``print()`` it for a table.

    Attributes
    ----------
    rows : tuple of ClosedLoopMaterialFigures
    reports : tuple of ClosedLoopReport
        The full :func:`tenscontrol.studies.verification` report of each material.
    disturbance : str
    outputs : tuple of str
    amplitude, half_period, t_final, effort : float
    """

    rows: tuple
    reports: tuple
    disturbance: str
    outputs: tuple
    amplitude: float
    half_period: float
    t_final: float
    effort: float

    _widths = (36, 14)

    def __repr__(self) -> str:
        return (f"ClosedLoopComparison(materials=[{self._names()}], disturbance="
                f"{self.disturbance!r}, outputs={len(self.outputs)}, effort={self.effort:g}, "
                f"doublet={self.amplitude:g} N / {self.half_period:g} s, "
                f"t_final={self.t_final:g} s)")

    def _table(self):
        """(title, material names, rows of (label, values, format))."""
        title = (f"closed loop, LQR (effort {self.effort:g}) on every material: disturbance "
                 f"{self.disturbance} -> outputs {', '.join(self.outputs)}; doublet "
                 f"{self.amplitude:g} N, half period {self.half_period:g} s, window "
                 f"{self.t_final:g} s")
        return title, [r.material for r in self.rows], closed_loop_rows(self.rows)


def closed_loop_rows(figures) -> list:
    """The rows (label, values, format) of the comparison table, one value per
    ClosedLoopMaterialFigures of `figures`."""
    rows = []

    def row(*spec):
        rows.append(spec)

    row("total bar mass [kg]", [r.bar_mass for r in figures], ".3f")
    row("slowest pole, real part [1/s]", [r.slowest_pole.real for r in figures], ".4g")
    row("||K||_F", [r.gain for r in figures], ".4g")
    row("H2 norm, linear [m/(N s^.5)]", [r.h2 for r in figures], ".4g")
    row("H-inf norm, linear [m/N]", [r.hinf for r in figures], ".4g")
    row("peak/|u|2, nonlinear [m/(N s^.5)]", [r.peak_ratio for r in figures], ".4g")
    row("|y|2/|u|2, nonlinear [m/N]", [r.energy_ratio for r in figures], ".4g")
    row("open-loop peak [m]", [r.open_peak for r in figures], ".4g")
    row("closed-loop peak [m]", [r.closed_peak for r in figures], ".4g")
    row("peak |command| [N/m]", [r.effort_peak for r in figures], ".4g")
    row("linear prediction error [%]", [100 * r.linear_error for r in figures], ".3g")
    row("slack strings", [", ".join(map(str, r.slack_time)) or "none" for r in figures],
        "")
    return rows


def compare_closed_loop(structure, materials=("hdpe", "aluminium"), *,
                        disturbances: Selection = Selection(2, "z"),
                        outputs: Selection | None = None, amplitude: float = 10.0,
                        half_period: float = 1.0, t_final: float = 10.0, effort: float = 1e-2,
                        t_eval=None, rtol: float | None = None,
                        atol: float | None = None) -> ClosedLoopComparison:
    """Design the same LQR for each bar material and check it on the compressible model.

    For each material: ``with_bar_material``; ``linearize(bars="compressible",
    kind="passive")`` with the output coordinates; ``lqr(effort=effort)`` (default weights:
    outputs relative to the bar length, commands relative to the prestress); the closed-loop
    norms from the disturbance force to the outputs (the design's ``closed_loop``); and
    ``verify`` under :func:`tenscontrol.doublet` with compressible bars. The nonlinear ratios
    use the Euclidean norm over the outputs, ``|u|_2 = amplitude sqrt(2 half_period)`` and the
    trapezoidal L2 norm over [0, t_final], as :func:`tenscontrol.compare_materials` does.

    Parameters
    ----------
    structure : Structure
        At a prestressed equilibrium with compressible bars
        (``equilibrium(..., bars="compressible").structure``).
    materials : sequence of str
        Bar material presets.
    disturbances : Selection
        The one coordinate of the doublet force, ``Selection(2, "z")`` by default.
    outputs : Selection, optional
        Output coordinates (``Selection(nodes=[2, 3], axes="xz")``); all free coordinates
        by default.
    amplitude, half_period, t_final : float
        The doublet [N], [s] and the window [s].
    effort : float
        The LQR's effort weight (see :func:`tenscontrol.lqr`).
    t_eval : array_like, optional
        Output times of the simulations [s], increasing from 0 to at most t_final;
        ``np.linspace(0, t_final, 1001)`` by default.
    rtol, atol : float, optional
        Tolerances of the compressible simulations; the compressible bars' default (1e-8) by
        default.

    Returns
    -------
    ClosedLoopComparison
    """
    check_materials(materials)
    outputs = check_selection(outputs, "compare_closed_loop: outputs")
    effort = validation.real("compare_closed_loop: effort", effort, positive=True,
                             expected="a positive number")
    t_eval = output_grid(t_final, t_eval, "compare_closed_loop")
    d_index = one_channel(structure, disturbances, "compare_closed_loop")
    d_name = f"f{'xyz'[d_index % 3]}{d_index // 3}"
    load = doublet(structure, disturbances, amplitude, half_period)
    rows, reports, y_names = [], [], None
    for name in materials:
        s = with_bar_material(structure, name)
        model = linearize(s, bars="compressible", kind="passive", outputs=outputs)
        y_names = list(model.output_names)
        design = lqr(model, effort=effort)
        loop = design.closed_loop[y_names, [d_name]]
        report = verify(s, design.controller, load, t_final, outputs=outputs,
                        bars="compressible", t_eval=t_eval, rtol=rtol, atol=atol)
        peak, peak_ratio, energy_ratio = doublet_ratios(report.y_closed, report.t, amplitude,
                                                        half_period)
        slowest = design.E[np.argmax(design.E.real)]
        rows.append(ClosedLoopMaterialFigures(
            name, float(s.bar_masses.sum()), complex(slowest), float(np.linalg.norm(design.K)),
            h2_norm(loop), hinf_norm(loop), peak_ratio, energy_ratio,
            float(np.linalg.norm(report.y_open, axis=1).max()), peak,
            report.closed.effort_peak, report.linear_error, report.closed.slack_time))
        reports.append(report)
    return ClosedLoopComparison(tuple(rows), tuple(reports), d_name, tuple(y_names),
                                float(amplitude), float(half_period), float(t_final),
                                float(effort))
