"""Soft against metallic bars: the same structure with different bar materials, side by side.

:func:`compare_materials` gives each material's bar mass, the linear model's H2 and H-inf norms
from a disturbance force to chosen outputs, the compliance eigenvalues, the lowest natural
frequencies, and the nonlinear response to a doublet force. The paper's Table 2 lost the
definitions of its rows (Hsu et al. (2021), Table 2); the definitions in the docstring of
:func:`compare_materials` are tenscontrol's and are the reference.
"""

from __future__ import annotations

import dataclasses
import textwrap
from dataclasses import dataclass

import numpy as np

from tenscontrol.mechanics.compressible.model import bar_force_densities
from tenscontrol.linear.linearization import linearize
from tenscontrol.model.loads import doublet
from tenscontrol.model.materials import material
from tenscontrol.model.selection import Selection, check_selection
from tenscontrol.linear.norms import h2_norm, hinf_norm
from tenscontrol.linear.reduction import minimal_realization
from tenscontrol import validation
from tenscontrol.simulation.simulator import simulate
from tenscontrol.statics.prestress import rest_length_for
from tenscontrol.statics.stiffness import compliance
from tenscontrol.model.structure import Structure
from tenscontrol.model.tables import Presentable, html_table
from tenscontrol.studies.verification import output_grid

__all__ = ["MaterialFigures", "MaterialComparison", "RobustFigures", "MaterialTable",
           "check_materials",
           "compare_materials", "doublet_ratios", "one_channel", "with_bar_material",
           "text_table", "html_material_table"]

_AXES = "xyz"


class MaterialTable(Presentable):
    """What the comparisons' results and their rows share: ``print()`` and a notebook show
    :meth:`_table` (title, material names, rows of (label, values, format)) with one column
    per material."""

    _widths = (34, 12)  # the label column and the smallest value column [characters]

    def _names(self) -> str:
        """The materials of the rows, shortened for a repr."""
        return textwrap.shorten(", ".join(r.material for r in self.rows), 60, placeholder=" ...")

    def summary(self) -> str:
        """The figures as a table, one column per material (what ``print()`` shows)."""
        return text_table(*self._table(), *self._widths)

    def _repr_html_(self) -> str:
        return html_material_table(*self._table())


@dataclass(frozen=True)
class RobustFigures:
    """Robustness of one material's LQR loop to the strings' stiffness (see
    :func:`compare_materials`, ``robust=``).

    Attributes
    ----------
    spread : float
        The relative range of each string's stiffness (prestress held).
    margin : float
        Robust stability margin, in units of the ranges (1 / peak mu upper bound; certified).
    mu_upper, mu_lower : float
        Peak bounds of mu.
    nominal_gain, worst_gain : float
        H-inf gain from the disturbance force to the outputs [m/N] at the nominal and at the
        worst perturbation found in the box ``|delta| <= gain_scale``.
    gain_scale : float
        ``min(1, 0.99 margin)``: the box of the worst gain, inside the certified region.
    cpu_stability, cpu_gain : float
        CPU seconds of the mu analysis and of the worst-gain search.
    complete : bool
        False when an analysis ran out of its CPU budget (its partial result is reported).
    """

    spread: float
    margin: float
    mu_upper: float
    mu_lower: float
    nominal_gain: float
    worst_gain: float
    gain_scale: float
    cpu_stability: float
    cpu_gain: float
    complete: bool

    def __repr__(self) -> str:
        return (f"RobustFigures(spread={self.spread:g}, margin={self.margin:.4g}, worst gain="
                f"{self.worst_gain:.4g} m/N{'' if self.complete else ', partial'})")


@dataclass(frozen=True)
class MaterialFigures(MaterialTable):
    """The figures of one bar material; see :func:`compare_materials` for the definitions.

    Attributes
    ----------
    material : str
    bar_mass : float
        Total bar mass [kg].
    h2, hinf : float
        Linear-model norms from the disturbance force [N] to the output deviations [m]:
        H2 [m/(N s^0.5)] and H-inf [m/N].
    compliance_eigenvalues : ndarray
        Eigenvalues of the compliance matrix, ascending [m/N].
    natural_frequencies : ndarray
        Lowest undamped natural frequencies of the linear model [Hz].
    peak : float
        Peak output deviation of the nonlinear doublet response [m].
    peak_ratio : float
        peak / |u|_2 [m/(N s^0.5)]; for a linear system at most the H2 norm.
    energy_ratio : float
        |y|_2 / |u|_2 over the window [m/N]; for a linear system at most the H-inf norm.
    order : int
        Order of the minimal realization behind the norms.
    robust : RobustFigures or None
        With ``compare_materials(..., robust=spread)``: the robust margin and the worst-case
        gain of the material's LQR loop.
    """

    material: str
    bar_mass: float
    h2: float
    hinf: float
    compliance_eigenvalues: np.ndarray
    natural_frequencies: np.ndarray
    peak: float
    peak_ratio: float
    energy_ratio: float
    order: int
    robust: RobustFigures | None = None

    def __repr__(self) -> str:
        f = self.natural_frequencies
        return (f"MaterialFigures(material={self.material!r}, bar_mass={self.bar_mass:.4g} kg, "
                f"order={self.order}, h2={self.h2:.4g}, hinf={self.hinf:.4g} m/N, "
                f"peak={self.peak:.4g} m, lowest frequency="
                f"{f'{f[0]:.4g}' if f.size else '-'} Hz)")

    def _table(self):
        """(title, [material], rows of (label, [value], format)): one column of the
        comparison's table."""
        return f"MaterialFigures of {self.material}", [self.material], material_rows((self,))


@dataclass(frozen=True, eq=False)
class MaterialComparison(MaterialTable):
    """The result of :func:`compare_materials`; ``print()`` it for a table.

    Attributes
    ----------
    rows : tuple of MaterialFigures
    disturbance : str
        The disturbance channel, e.g. ``"fz2"``.
    outputs : tuple of str
        The output coordinates, e.g. ``("x2", "z2", "x3", "z3")``.
    amplitude, half_period, t_final : float
        The doublet [N], [s] and the simulated window [s].
    t : ndarray, shape (nt,)
        Times of the nonlinear responses [s].
    responses : tuple of ndarray, shape (nt, n_outputs)
        Output deviations of each material's nonlinear doublet response [m].
    """

    rows: tuple
    disturbance: str
    outputs: tuple
    amplitude: float
    half_period: float
    t_final: float
    t: np.ndarray
    responses: tuple

    def __repr__(self) -> str:
        return (f"MaterialComparison(materials=[{self._names()}], disturbance="
                f"{self.disturbance!r}, outputs={len(self.outputs)}, doublet="
                f"{self.amplitude:g} N / {self.half_period:g} s, t_final={self.t_final:g} s)")

    def _table(self):
        """(title, material names, rows of (label, values, format))."""
        title = (f"soft against metallic bars: disturbance {self.disturbance} -> outputs "
                 f"{', '.join(self.outputs)}; doublet {self.amplitude:g} N, half period "
                 f"{self.half_period:g} s, window {self.t_final:g} s")
        return title, [r.material for r in self.rows], material_rows(self.rows)

    def plot(self):
        """The nonlinear doublet responses and the norms (a matplotlib Figure)."""
        from tenscontrol.plotting import plot_material_comparison

        return plot_material_comparison(self)


def robust_figures(structure: Structure, spread: float, disturbances, outputs,
                   at_rest: str) -> RobustFigures:
    """:class:`RobustFigures` of `structure` (see :func:`compare_materials`, ``robust=``)."""
    from tenscontrol.design.synthesis import lqr
    from tenscontrol.robust import (robust_stability, string_stiffness, uncertain_loop,
                                    worst_case_gain)

    model = linearize(structure, kind="passive", at_rest=at_rest, outputs=outputs)
    loop = uncertain_loop(model, lqr(model), string_stiffness(spread),
                          disturbances=disturbances)
    r = robust_stability(loop)
    scale = min(1.0, 0.99 * r.margin)
    wc = worst_case_gain(loop, scale)
    return RobustFigures(float(spread), r.margin, r.peak_upper, r.peak_lower, wc.nominal,
                         wc.gain, scale, r.cpu["total"], wc.cpu, r.complete and wc.complete)


def material_rows(figures) -> list:
    """The rows (label, values, format) of the comparison table, one value per MaterialFigures
    of `figures`."""
    rows = []

    def row(*spec):
        rows.append(spec)

    row("total bar mass [kg]", [r.bar_mass for r in figures], ".3f")
    row("minimal order", [r.order for r in figures], "d")
    row("H2 norm, linear [m/(N s^.5)]", [r.h2 for r in figures], ".4g")
    row("H-inf norm, linear [m/N]", [r.hinf for r in figures], ".4g")
    row("peak/|u|2, nonlinear [m/(N s^.5)]", [r.peak_ratio for r in figures], ".4g")
    row("|y|2/|u|2, nonlinear [m/N]", [r.energy_ratio for r in figures], ".4g")
    row("peak deflection [m]", [r.peak for r in figures], ".4g")
    n_eig = min(len(r.compliance_eigenvalues) for r in figures)
    for k in range(n_eig):
        row(f"compliance eigenvalue {k + 1} [m/N]",
            [r.compliance_eigenvalues[k] for r in figures], ".5e")
    n_f = min(len(r.natural_frequencies) for r in figures)
    for k in range(n_f):
        row(f"natural frequency {k + 1} [Hz]", [r.natural_frequencies[k] for r in figures],
            ".4g")
    if all(r.robust is not None for r in figures):
        rob = [r.robust for r in figures]
        row(f"robust margin, k +-{100 * rob[0].spread:g} % (LQR)", [x.margin for x in rob],
            ".4g")
        row("mu upper bound (peak)", [x.mu_upper for x in rob], ".4g")
        row("mu lower bound (peak)", [x.mu_lower for x in rob], ".4g")
        row("H-inf gain nominal, LQR [m/N]", [x.nominal_gain for x in rob], ".4g")
        row("worst H-inf gain found [m/N]", [x.worst_gain for x in rob], ".4g")
        row("  in the box |delta| <=", [x.gain_scale for x in rob], ".4g")
        row("CPU of mu [s]", [x.cpu_stability for x in rob], ".3g")
        row("CPU of the worst gain [s]", [x.cpu_gain for x in rob], ".3g")
    return rows


def text_table(title: str, names, rows, label_width: int, min_width: int) -> str:
    """A text table with one column per material; rows are (label, values, format)."""
    width = max(min_width, *(len(n) + 2 for n in names))
    lines = [title, f"{'':<{label_width}}" + "".join(f"{n:>{width}}" for n in names)]
    for label, values, fmt in rows:
        lines.append(f"{label:<{label_width}}" + "".join(f"{format(v, fmt):>{width}}"
                                                         for v in values))
    return "\n".join(lines)


def html_material_table(title: str, names, rows) -> str:
    """The same table as :func:`text_table`, in HTML (a notebook's ``_repr_html_``)."""
    return html_table([(label, *(format(v, fmt) for v in values)) for label, values, fmt in rows],
                      header=["", *names], caption=title)


def with_bar_material(structure: Structure, material_name: str) -> Structure:
    """A copy of `structure` whose bars take density, Young's modulus and Poisson's ratio from
    the preset `material_name`, with the radius and the bar force densities kept.

    A prestressed compressible bar (rest length != length) gets the rest length that gives
    the same force density psi = k_b (1 - l0/l) with the new Young's modulus, so that an
    equilibrium stays an equilibrium; a compression the new bar cannot carry at any rest
    length raises :class:`~tenscontrol.PrestressError` naming the bar.
    """
    E = material(material_name).youngs_modulus
    prestressed = any(b.rest_length is not None for b in structure.bars)
    psi = bar_force_densities(structure) if prestressed else np.zeros(structure.n_bars)
    bars = []
    for k, (b, p, l) in enumerate(zip(structure.bars, psi, structure.bar_lengths)):
        new = dataclasses.replace(b, material=material_name, density=None, youngs_modulus=None,
                                  poisson=None)
        if b.rest_length is not None:
            where = f"bar {k} (nodes {b.nodes[0]}->{b.nodes[1]}) in {material_name}"
            new = dataclasses.replace(new, rest_length=float(
                rest_length_for(where, E * np.pi * b.radius**2, l, p, True)))
        bars.append(new)
    return dataclasses.replace(structure, bars=tuple(bars),
                               name=f"{structure.name}/{material_name}")


def check_materials(materials) -> None:
    """Refuse anything but a non-empty sequence of known preset names, before any run."""
    if isinstance(materials, str) or len(materials) == 0:
        raise ValueError("materials must be a non-empty sequence of preset names, e.g. "
                         f"('hdpe', 'aluminium'), got {materials!r}")
    for name in materials:
        material(name)  # an unknown name fails here


def doublet_ratios(y: np.ndarray, t: np.ndarray, amplitude: float,
                   half_period: float) -> tuple[float, float, float]:
    """(peak [m], peak / |u|_2, |y|_2 / |u|_2) of output deviations y (nt, n_outputs) [m] at
    times t (nt,) [s] under a doublet of `amplitude` [N] and `half_period` [s].

    |y(t)| is Euclidean over the outputs, ``|u|_2 = amplitude sqrt(2 half_period)``, and
    |y|_2 the trapezoidal L2 norm over t (see :func:`compare_materials`).
    """
    u_l2 = amplitude * np.sqrt(2 * half_period)
    mag = np.linalg.norm(y, axis=1)
    peak = float(mag.max())
    y_l2 = float(np.sqrt(np.trapezoid(mag**2, t)))
    return peak, peak / u_l2, y_l2 / u_l2


def one_channel(structure: Structure, disturbances, who: str) -> int:
    """Index into q of the one free coordinate that `disturbances` (a Selection) selects."""
    sel = check_selection(disturbances, f"{who}: disturbances")
    if sel is None:
        raise TypeError(f"{who}: disturbances must be a tenscontrol.Selection of one coordinate, "
                        "e.g. Selection(2, 'z'); got None")
    coords = sel.coordinates(structure, f"{who}: disturbances")
    if coords.size != 1:
        names = ", ".join(f"{_AXES[c % 3]}{c // 3}" for c in coords)
        raise ValueError(f"{who}: disturbances must select one free coordinate (the doublet's), "
                         f"got {coords.size} ({names}) from {sel!r}; e.g. Selection(2, 'z')")
    return int(coords[0])


def output_indices(structure: Structure, outputs, who: str) -> np.ndarray:
    """Indices into q of the output coordinates (all free ones by default)."""
    sel = check_selection(outputs, f"{who}: outputs")
    if sel is None:
        return np.asarray(structure.free_coordinates, dtype=np.int64)
    return sel.coordinates(structure, f"{who}: outputs")


def compare_materials(structure: Structure, materials=("hdpe", "aluminium"), *,
                      disturbances: Selection = Selection(2, "z"),
                      outputs: Selection | None = None, amplitude: float = 10.0,
                      half_period: float = 1.0, t_final: float = 10.0, kinetic: str = "consistent",
                      at_rest: str = "taut", n_frequencies: int = 4, t_eval=None,
                      rtol: float | None = None, atol: float | None = None,
                      robust: float | None = None) -> MaterialComparison:
    """Compare bar materials on one structure, linear and nonlinear, with compressible bars.

    For each material the bars take the preset's density, Young's modulus and Poisson's
    ratio (radius kept), and:

    - **bar mass**: sum of rho pi r^2 l over the bars [kg];
    - **H2, H-inf**: norms of the passive linear model (docs/theory.md, "Linearization: force
      densities in, nodal forces as disturbances": strings and bars follow their elastic laws)
      of the compressible structure at its configuration, from the
      disturbance force to the deviations of the output coordinates, computed on its minimal
      realization (structural projection, then balanced truncation);
    - **compliance eigenvalues**: eig(K_red^-1) of the tangent stiffness on the free
      coordinates (docs/theory.md, "Norms and compliance") [m/N];
    - **natural frequencies**: the lowest sqrt(eig(K_e, M_e)) / 2 pi of the elastic model [Hz];
    - **nonlinear doublet response**: the compressible-bar simulation from rest under
      :func:`tenscontrol.doublet` (`amplitude`, `half_period`) on the disturbance coordinate
      over [0, `t_final`], sampled at `t_eval`; with y(t) the vector of output deviations and
      |u|_2 = amplitude sqrt(2 half_period): ``peak = max_t |y(t)|`` (Euclidean over the
      outputs), ``peak_ratio = peak / |u|_2`` (the L2 -> L-inf gain, at most the H2 norm for a
      linear single-input system) and ``energy_ratio = |y|_2 / |u|_2`` with the trapezoidal
      L2 norm over the window (at most the H-inf norm for a linear system).

    Parameters
    ----------
    structure : Structure
        At an equilibrium in its given configuration (use :func:`tenscontrol.equilibrium`
        first if it is not); its bars' radii and rest lengths are kept.
    materials : sequence of str
        Presets of :data:`tenscontrol.materials.MATERIALS`.
    disturbances : Selection
        The one coordinate of the disturbance force, ``Selection(2, "z")`` (node 2 along z)
        by default.
    outputs : Selection, optional
        Output coordinates, e.g. ``Selection(nodes=[2, 3], axes="xz")``; all free
        coordinates by default.
    amplitude, half_period, t_final : float
        The doublet [N], [s] and the simulated window [s].
    kinetic : {"consistent", "paper"}
        Kinetic-energy form of the compressible bars.
    at_rest : {"taut", "slack"}
        Linear-model rule for strings exactly at their rest length (docs/theory.md, "Linearization:
        force densities in, nodal forces as disturbances").
        ``"taut"`` (the default here, unlike elsewhere: the paper's Table-2 strings sit at
        their rest length, and with ``"slack"`` the model would be a mechanism) takes their
        tension-side stiffness.
    n_frequencies : int
        How many natural frequencies to report.
    t_eval : array_like, optional
        Output times of the nonlinear simulation [s], increasing from 0 to at most t_final;
        ``np.linspace(0, t_final, 1001)`` by default.
    rtol, atol : float, optional
        Tolerances of the nonlinear simulation; the compressible bars' default (1e-8) by
        default.
    robust : float, optional
        A relative range in (0, 1) for every string's stiffness (prestress held): then each
        material also gets ``robust`` (:class:`RobustFigures`), on its rigid-bar passive model
        with the outputs and the default LQR (``tc.lqr(model)``): the robust stability margin
        (:func:`tenscontrol.robust.robust_stability`) and the worst H-inf gain from the
        disturbance force to the outputs in the box ``|delta| <= min(1, 0.99 margin)``
        (:func:`tenscontrol.robust.worst_case_gain`), each in its default CPU budget. Default
        None: skipped (the analyses take from a tenth of a second on the T-bar to minutes).

    Returns
    -------
    MaterialComparison
    """
    check_materials(materials)
    for label, value in (("t_final", t_final), ("half_period", half_period)):
        validation.real(f"compare_materials: {label}", value, what="a time [s]", positive=True,
                        expected="a positive time [s]")
    amplitude = validation.real("compare_materials: amplitude", amplitude,
                                expected="a finite force [N]")
    n_frequencies = validation.integer("compare_materials: n_frequencies", n_frequencies,
                                       minimum=1)
    t_eval = output_grid(t_final, t_eval, "compare_materials")
    if robust is not None:
        robust = validation.real("compare_materials: robust", robust,
                                 expected="a relative range of the string stiffness in (0, 1)",
                                 positive=True)
        if robust >= 1:
            raise ValueError(f"compare_materials: robust must be a relative range of the "
                             f"string stiffness in (0, 1), e.g. robust=0.5; got {robust!r}")
    d_index = one_channel(structure, disturbances, "compare_materials")
    y_index = output_indices(structure, outputs, "compare_materials")
    d_name = f"f{_AXES[d_index % 3]}{d_index // 3}"
    y_names = [f"{_AXES[c % 3]}{c // 3}" for c in y_index]
    rows, responses = [], []
    for name in materials:
        s = with_bar_material(structure, name)
        model = linearize(s, bars="compressible", kind="passive", kinetic=kinetic, at_rest=at_rest)
        minimal = minimal_realization(model)
        sys = minimal.sys[y_names, [d_name]]
        el = minimal.elastic
        w2 = np.sort(np.real(np.linalg.eigvals(np.linalg.solve(el.M_e, el.K_e))))
        freqs = np.sqrt(np.clip(w2, 0, None))[:n_frequencies] / (2 * np.pi)
        comp = compliance(s, bars="compressible", at_rest=at_rest)
        traj = simulate(s, t_final, bars="compressible", kinetic=kinetic, t_eval=t_eval,
                        loads=doublet(s, disturbances, amplitude, half_period),
                        rtol=rtol, atol=atol)
        y = traj.nodes.reshape(len(traj.t), -1)[:, y_index] - s.nodes.reshape(-1)[y_index]
        peak, peak_ratio, energy_ratio = doublet_ratios(y, traj.t, amplitude, half_period)
        rows.append(MaterialFigures(name, float(s.bar_masses.sum()), h2_norm(sys), hinf_norm(sys),
                                    np.sort(comp.eigenvalues), freqs, peak, peak_ratio,
                                    energy_ratio, minimal.order, None if robust is None else
                                    robust_figures(s, robust, disturbances, outputs, at_rest)))
        responses.append(y)
    return MaterialComparison(tuple(rows), d_name, tuple(y_names), float(amplitude),
                              float(half_period), float(t_final), t_eval, tuple(responses))
