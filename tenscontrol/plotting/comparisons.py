"""Plots of several runs and of study results: bar models side by side, Hankel singular
values, soft against metallic bars, a closed-loop check."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from tenscontrol.plotting.common import (AXES, PLANES, check_trajectory, draw_members_2d,
                                         new_figure, node_list, outside_legend, series_colors,
                                         integer_ticks)

__all__ = ["plot_bar_models", "plot_hankel_singular_values", "plot_material_comparison",
           "plot_closed_loop"]

_LINESTYLES = ("-", "--", ":", "-.")


def _run_entries(ax, labels) -> None:
    """Legend entries for the runs' line styles (black lines that draw nothing), grouped after
    the colours' entries in the one legend outside the axes."""
    for r, label in enumerate(labels):
        ax.add_line(Line2D([], [], color="k", ls=_LINESTYLES[r % len(_LINESTYLES)],
                           label=f"run: {label}"))


def _common_name(names) -> str:
    """The structure name the runs share (their longest common prefix, trimmed of separators)."""
    prefix = names[0]
    for name in names[1:]:
        while not name.startswith(prefix):
            prefix = prefix[:-1]
    return prefix.rstrip("/-_ ,") or " / ".join(names)


def plot_bar_models(trajectories, labels, nodes=None, plane: str = "xz") -> Figure:
    """Node paths and bar strains of several runs of one structure (e.g. two bar materials).

    Parameters
    ----------
    trajectories : sequence of Trajectory
        Runs of structures with the same nodes (for example compressible HDPE and aluminium
        bars, or rigid against compressible).
    labels : sequence of str
        One label per run.
    nodes : sequence of int, optional
        Nodes whose paths to draw; default: the moving nodes of the first run.
    plane : {"xz", "xy", "yz"}
        Projection plane of the paths.

    Returns
    -------
    Figure
        Left: the node paths [m]; right: each bar's strain (l - l0)/l0 [-] against time [s].
        Colour = node or bar (a colorbar beyond ten), line style = run; the legends sit outside
        the axes. The title names every run. Made through pyplot.
    """
    trajectories = list(trajectories)
    if not trajectories or len(labels) != len(trajectories):
        raise ValueError("give one label per trajectory (and at least one trajectory)")
    for traj in trajectories:
        check_trajectory(traj)
    chosen = node_list(trajectories[0], nodes)
    if plane not in PLANES:
        raise ValueError(f"plane must be one of {', '.join(PLANES)}, got {plane!r}")
    a, b = PLANES[plane]
    fig = new_figure(figsize=(12.0, 5.0))
    ax_path, ax_strain = fig.subplots(1, 2)
    draw_members_2d(ax_path, trajectories[0].structure, trajectories[0].nodes[0], a, b)
    node_colors, node_legend = series_colors(ax_path, chosen, "node")
    bars = range(trajectories[0].structure.n_bars)
    bar_colors, bar_legend = series_colors(ax_strain, bars, "bar")
    for r, traj in enumerate(trajectories):
        ls, first = _LINESTYLES[r % len(_LINESTYLES)], r == 0
        for color, i in zip(node_colors, chosen):
            ax_path.plot(traj.nodes[:, i, a], traj.nodes[:, i, b], ls=ls, color=color, lw=1.3,
                         label=f"node {i}" if first and node_legend else None)
        for color, k in zip(bar_colors, bars):
            ax_strain.plot(traj.t, traj.bar_strains[:, k], ls=ls, color=color, lw=1.0,
                           label=f"bar {k}" if first and bar_legend else None)
    ax_path.set(xlabel=f"{AXES[a]} [m]", ylabel=f"{AXES[b]} [m]", title="node paths")
    ax_path.set_aspect("equal", adjustable="datalim")
    ax_strain.set(xlabel="time [s]", ylabel="bar strain (l - l0)/l0 [-]", title="bar strains")
    for ax in (ax_path, ax_strain):
        ax.grid(alpha=0.3)
        if len(trajectories) > 1:
            _run_entries(ax, labels)
        outside_legend(ax)
    names = [traj.structure.name for traj in trajectories]
    fig.suptitle(f"{_common_name(names)}: {' against '.join(map(str, labels))}")
    return fig


def plot_hankel_singular_values(minimal) -> Figure:
    """Hankel singular values of a :class:`~tenscontrol.reduction.MinimalRealization`, log scale,
    with the kept ones marked (a Figure made through pyplot)."""
    hsv = getattr(minimal, "hsv", None)
    if hsv is None or len(hsv) == 0:
        raise ValueError("this realization has no Hankel singular values (its elastic model is "
                         "not asymptotically stable: add damping to balance it)")
    fig = new_figure()
    ax = fig.add_subplot()
    k = np.arange(1, len(hsv) + 1)
    ax.semilogy(k, hsv, "o-", color="C0", ms=4, label="Hankel singular values")
    kept = k <= minimal.order
    ax.semilogy(k[kept], np.asarray(hsv)[kept], "o", color="C3", ms=6,
                label=f"kept ({minimal.order} of {len(hsv)} elastic states)")
    ax.set(xlabel="index [-]", ylabel="Hankel singular value [output unit / input unit]",
           title=f"balanced truncation: full order {minimal.full_order}, structural "
                 f"{minimal.structural_order}, minimal {minimal.order}")
    integer_ticks(ax.xaxis)             # the x axis counts states
    ax.grid(alpha=0.3, which="both")
    outside_legend(ax)
    return fig


def _norm_panel(ax, rows, pairs, unit: str) -> None:
    """Grouped bars of figures that share one unit, on a linear axis from 0."""
    width = 0.8 / max(len(rows), 1)
    for r, row in enumerate(rows):
        values = [getattr(row, attr) for _, attr in pairs]
        ax.bar(np.arange(len(pairs)) + r * width, values, width, color=f"C{r % 10}",
               label=row.material)
    ax.set_xticks(np.arange(len(pairs)) + width * (len(rows) - 1) / 2,
                  [name for name, _ in pairs])
    ax.set_ylim(bottom=0.0)
    ax.set_ylabel(f"gain [{unit}]")
    ax.grid(alpha=0.3, axis="y")


def plot_material_comparison(result) -> Figure:
    """The doublet responses and the norms of a
    :class:`~tenscontrol.comparison.MaterialComparison`.

    Returns
    -------
    Figure
        Three panels: the nonlinear responses' |output deviation| [mm] against time [s]; the
        H2 norm and the nonlinear peak/|u|2 [m/(N s^0.5)]; the H-inf norm and the nonlinear
        |y|2/|u|2 [m/N]. One unit per axis; bars on linear axes from 0. Made through pyplot.
    """
    fig = new_figure(figsize=(13.0, 4.6))
    ax_t, ax_2, ax_inf = fig.subplots(1, 3, width_ratios=(1.6, 1, 1))
    for r, (row, y) in enumerate(zip(result.rows, result.responses)):
        ax_t.plot(result.t, 1e3 * np.linalg.norm(y, axis=1), color=f"C{r % 10}", lw=1.2,
                  label=row.material)
    ax_t.set(xlabel="time [s]", ylabel="|output deviation| [mm]",
             title=f"nonlinear response to a {result.amplitude:g} N doublet on "
                   f"{result.disturbance}")
    ax_t.grid(alpha=0.3)
    _norm_panel(ax_2, result.rows, (("H2 (linear)", "h2"), ("peak/|u|2", "peak_ratio")),
                "m/(N s^0.5)")
    ax_2.set_title("H2-type gains")
    _norm_panel(ax_inf, result.rows, (("H-inf (linear)", "hinf"),
                                      ("|y|2/|u|2", "energy_ratio")), "m/N")
    ax_inf.set_title("H-inf-type gains")
    outside_legend(ax_inf)
    return fig


def _output_index(report, output) -> int:
    """The index of the output to show: by name, by index, or the largest open-loop peak."""
    names = list(report.output_names)
    if output is None:
        return int(np.argmax(np.abs(report.y_open).max(axis=0)))
    if isinstance(output, str):
        if output not in names:
            raise ValueError(f"output {output!r} is not one of the report's outputs {names}")
        return names.index(output)
    if isinstance(output, (int, np.integer)) and 0 <= output < len(names):
        return int(output)
    raise ValueError(f"output must be a name from {names} or an index below {len(names)}, "
                     f"got {output!r}")


def plot_closed_loop(report, output=None) -> Figure:
    """A :class:`tenscontrol.verify.ClosedLoopReport`: one output's deflection (open loop,
    closed loop, linear prediction) above the commanded strings' applied force densities.

    Parameters
    ----------
    report : ClosedLoopReport
    output : int or str, optional
        Index or name of the output; the one with the largest open-loop peak by default.

    Returns
    -------
    Figure
        Made through pyplot; up to ten strings get a legend entry, more a colorbar of string
        indices; legends outside the axes.
    """
    k = _output_index(report, output)
    names = list(report.output_names)
    fig = new_figure(figsize=(8.0, 6.4))
    ax, ax2 = fig.subplots(2, 1, sharex=True)
    t = report.t
    ax.plot(t, 1e3 * report.y_open[:, k], color="0.5", label="open loop (nonlinear)")
    ax.plot(t, 1e3 * report.y_closed[:, k], color="C0", label="closed loop (nonlinear)")
    if np.isfinite(report.y_linear[:, k]).any():  # all NaN: verify had no linear prediction
        ax.plot(t, 1e3 * report.y_linear[:, k], color="C1", linestyle="--",
                label="closed loop (linear prediction)")
    ax.set_ylabel(f"deflection {names[k]} [mm]")
    ax.grid(True, alpha=0.3)
    c = report.closed_loop.control
    strings = [int(s) for s in c.strings]
    colors, legend = series_colors(ax2, strings, "string")
    for col, (color, string) in enumerate(zip(colors, strings)):
        ax2.plot(t, c.applied[:, col], color=color, label=f"string {string}" if legend else None)
    ax2.axhline(0.0, color="k", linewidth=0.8)
    ax2.set_xlabel("time [s]")
    ax2.set_ylabel("applied force density [N/m]")
    ax2.grid(True, alpha=0.3)
    for axis in (ax, ax2):
        outside_legend(axis)
    verdict = getattr(report, "verdict", "")
    if verdict.startswith("closed loop WORSE"):
        causes = getattr(report, "causes", ())
        cause = causes[0].split(":")[0] if causes else ""
        # on a second line: the verdict must not be clipped off a narrow figure
        fig.suptitle(f"{report.closed_loop.structure.name}: closed-loop check\n"
                     f"WORSE than open loop (peak {-100 * report.peak_reduction:+.0f} %, rms "
                     f"{-100 * report.rms_reduction:+.0f} %)"
                     + (f"; likely: {cause}" if cause else ""))
    else:
        fig.suptitle(f"{report.closed_loop.structure.name}: closed-loop check "
                     f"(peak {100 * report.peak_reduction:.0f} % lower than open loop)")
    return fig
