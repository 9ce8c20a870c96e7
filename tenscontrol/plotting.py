"""Plots of structures and trajectories; the only tenscontrol module that imports matplotlib.

Every function builds a :class:`matplotlib.figure.Figure` directly (no pyplot, no global
state), so it works without a display; save it with ``fig.savefig("name.png")``, or let
Jupyter display the returned figure.
"""

from __future__ import annotations

import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from mpl_toolkits.mplot3d import Axes3D  # noqa: F401 (registers the "3d" projection)
from mpl_toolkits.mplot3d.art3d import Line3DCollection

from tenscontrol.simulation.trajectory import Trajectory
from tenscontrol.model.structure import Structure

__all__ = ["plot_node_paths", "plot_violations", "plot_structure", "plot_bar_models",
           "plot_hankel_singular_values", "plot_material_comparison", "plot_closed_loop"]

_AXES = "xyz"
_PLANES = {"xy": (0, 1), "xz": (0, 2), "yz": (1, 2)}
_FIGSIZE = (6.4, 5.6)
_BAR_STYLE = {"color": "C0", "linewidth": 4.0}
_STRING_STYLE = {"color": "C3", "linewidth": 1.0}


def _check_trajectory(traj) -> None:
    """Reject anything that is not a non-empty Trajectory."""
    if not isinstance(traj, Trajectory):
        raise TypeError(f"expected a tenscontrol.Trajectory, got {type(traj).__name__}")
    if len(traj.t) == 0:
        raise ValueError("the trajectory is empty: nothing to plot")


def _moving_nodes(traj: Trajectory) -> list[int]:
    """Nodes whose path extent exceeds round-off; free nodes if none moves."""
    extent = np.ptp(traj.nodes, axis=0).max(axis=1)
    scale = max(float(np.ptp(traj.nodes[0], axis=0).max()), 1.0)
    moving = [int(i) for i in np.flatnonzero(extent > 1e-9 * scale)]
    if moving:
        return moving
    return [i for i in range(traj.structure.n_nodes) if not traj.structure.fixed[i].all()]


def _node_list(traj: Trajectory, nodes) -> list[int]:
    """The validated node indices to plot."""
    if nodes is None:
        return _moving_nodes(traj)
    n = traj.nodes.shape[1]
    chosen = [nodes] if isinstance(nodes, (int, np.integer)) else list(nodes)
    for i in chosen:
        if not isinstance(i, (int, np.integer)):
            raise ValueError(f"nodes: expected node indices, got {i!r}")
        if not 0 <= i < n:
            raise ValueError(f"nodes: node index {i} out of range; the trajectory has {n} nodes "
                             f"(indices 0 to {n - 1})")
    return [int(i) for i in chosen]


def _plane_axes(traj: Trajectory, nodes: list[int], plane) -> tuple[int, int]:
    """The coordinate indices of `plane`, by default the two that move the most."""
    if plane is not None:
        if plane not in _PLANES:
            raise ValueError(f"plane must be one of {', '.join(map(repr, _PLANES))}, "
                             f"got {plane!r}")
        return _PLANES[plane]
    if nodes:
        spread = np.ptp(traj.nodes[:, nodes, :], axis=0).sum(axis=0)
    else:
        spread = np.ptp(traj.nodes[0], axis=0)
    a, b = sorted(np.argsort(-spread, kind="stable")[:2])
    return int(a), int(b)


def _draw_members_2d(ax, structure: Structure, X: np.ndarray, a: int, b: int) -> None:
    """Bars (thick) and strings (thin), faint, at positions X, projected on axes (a, b)."""
    for pairs, style, label in ((structure.bar_nodes, _BAR_STYLE, "bars (t = 0)"),
                                (structure.string_nodes, _STRING_STYLE, "strings (t = 0)")):
        if len(pairs):
            segments = X[pairs][:, :, [a, b]]
            ax.add_collection(LineCollection(segments, alpha=0.25, label=label, zorder=1,
                                             **style))
    for i, p in enumerate(X):
        ax.annotate(str(i), (p[a], p[b]), textcoords="offset points", xytext=(4, 4),
                    color="0.45", fontsize="small")
    ax.plot(X[:, a], X[:, b], ".", color="0.55", zorder=1)


def plot_node_paths(traj: Trajectory, nodes=None, plane: str | None = None) -> Figure:
    """Paths of nodes in a coordinate plane, over the structure drawn faintly at t = 0.

    Parameters
    ----------
    traj : Trajectory
        A simulation result.
    nodes : int or sequence of int, optional
        The nodes whose paths to draw. Default: every node that moves (all free nodes if none
        does).
    plane : {"xz", "xy", "yz"}, optional
        The projection plane. Default: the plane of the two coordinates along which the
        chosen nodes move the most.

    Returns
    -------
    Figure
        One axes; positions in m at equal scale, each path's start marked with a dot, node
        numbers in the legend.

    Raises
    ------
    ValueError
        For an empty trajectory, a node index out of range or an unknown plane.
    """
    _check_trajectory(traj)
    chosen = _node_list(traj, nodes)
    a, b = _plane_axes(traj, chosen, plane)
    fig = Figure(figsize=_FIGSIZE, layout="constrained")
    ax = fig.add_subplot()
    _draw_members_2d(ax, traj.structure, traj.nodes[0], a, b)
    for i in chosen:
        (line,) = ax.plot(traj.nodes[:, i, a], traj.nodes[:, i, b], lw=1.5, label=f"node {i}",
                          zorder=2)
        ax.plot(traj.nodes[0, i, a], traj.nodes[0, i, b], "o", color=line.get_color(), ms=6,
                zorder=3)
    if chosen:
        ax.plot([], [], "o", color="0.3", ms=6, label="start (t = 0)")
    ax.set_xlabel(f"{_AXES[a]} [m]")
    ax.set_ylabel(f"{_AXES[b]} [m]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.autoscale_view()
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    ax.set_title(f"{traj.structure.name}: node paths in the {_AXES[a]}-{_AXES[b]} plane, "
                 f"t = {traj.t[0]:g}..{traj.t[-1]:g} s")
    return fig


def _floored(values: np.ndarray, floor: float) -> np.ndarray:
    """Values clipped from below at `floor`, so that a log axis can show them."""
    return np.maximum(values, floor)


def plot_violations(traj: Trajectory) -> Figure:
    """Constraint and energy violations against time, on log axes.

    Parameters
    ----------
    traj : Trajectory
        A simulation result.

    Returns
    -------
    Figure
        Two stacked axes sharing the time axis [s]: the largest bar-length violation
        max_k | |b_k| - l_k | [m], and the energy violation |Etot - w - E0| [J]. Values below
        the round-off level (machine epsilon times the largest bar length, or times the largest
        energy or work) are drawn at that level, marked by a dotted line.

    Raises
    ------
    ValueError
        For an empty trajectory.
    """
    _check_trajectory(traj)
    eps = np.finfo(float).eps
    bars = np.abs(traj.bar_violation).max(axis=1, initial=0.0)
    energy = np.abs(traj.energy_violation)
    bar_floor = eps * max(float(traj.structure.bar_lengths.max(initial=0.0)), 1.0)
    energy_scale = max(float(np.abs(traj.energy).max()), float(np.abs(traj.work).max()))
    energy_floor = eps * (energy_scale if energy_scale > 0 else 1.0)
    fig = Figure(figsize=_FIGSIZE, layout="constrained")
    ax_bar, ax_energy = fig.subplots(2, 1, sharex=True)
    for ax, values, floor, label, color in (
            (ax_bar, bars, bar_floor, "max |bar violation| [m]", "C0"),
            (ax_energy, energy, energy_floor, "|energy violation| [J]", "C1")):
        ax.semilogy(traj.t, _floored(values, floor), color=color, lw=1.2,
                    label=label.split(" [")[0])
        ax.axhline(floor, color="0.5", ls=":", lw=1, label="round-off level")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3, which="both")
        ax.legend(loc="best", fontsize="small")
    ax_energy.set_xlabel("time [s]")
    fig.suptitle(f"{traj.structure.name}: violations (correction = {traj.correction})")
    return fig


def _positions(structure: Structure, q) -> np.ndarray:
    """Node positions (n_nodes, 3) from q given as (n_nodes, 3) or flat (3 n_nodes,)."""
    if q is None:
        return np.asarray(structure.nodes)
    n = structure.n_nodes
    X = np.asarray(q, dtype=float)
    if X.shape not in ((n, 3), (3 * n,)) or not np.all(np.isfinite(X)):
        raise ValueError(f"q must be a finite ({n}, 3) array or a flat ({3 * n},) array of node "
                         f"positions [m], got shape {X.shape}")
    return X.reshape(n, 3)


def _set_cube_limits(ax, X: np.ndarray) -> None:
    """Equal scale on x, y and z: a cube around the nodes."""
    lo, hi = X.min(axis=0), X.max(axis=0)
    mid = (lo + hi) / 2
    half = 0.55 * float((hi - lo).max()) or 0.5
    ax.set_xlim(mid[0] - half, mid[0] + half)
    ax.set_ylim(mid[1] - half, mid[1] + half)
    ax.set_zlim(mid[2] - half, mid[2] + half)
    ax.set_box_aspect((1, 1, 1))


def _draw_nodes_3d(ax, structure: Structure, X: np.ndarray) -> None:
    """Free nodes as dots, fully and partly fixed nodes as filled and hollow triangles."""
    full = structure.fixed.all(axis=1)
    part = structure.fixed.any(axis=1) & ~full
    free = ~structure.fixed.any(axis=1)
    for mask, style, label in ((free, {"marker": "o", "color": "0.2", "s": 12}, "free node"),
                               (full, {"marker": "^", "color": "k", "s": 60}, "fixed (x, y, z)"),
                               (part, {"marker": "^", "facecolors": "none", "edgecolors": "k",
                                       "s": 60}, "partly fixed")):
        if mask.any():
            ax.scatter(X[mask, 0], X[mask, 1], X[mask, 2], label=label, depthshade=False,
                       **style)
    for i, p in enumerate(X):
        ax.text(p[0], p[1], p[2], f" {i}", color="0.3", fontsize="small")


def plot_structure(structure: Structure, q=None, ax=None) -> Figure:
    """A 3-D drawing of a structure: bars thick, strings thin, fixed nodes marked.

    Parameters
    ----------
    structure : Structure
        The structure to draw.
    q : array_like, shape (n_nodes, 3) or (3 n_nodes,), optional
        Node positions [m] (flat order x0, y0, z0, x1, ...). Default: ``structure.nodes``.
    ax : mpl_toolkits.mplot3d.axes3d.Axes3D, optional
        A 3-D axes to draw into (e.g. ``fig.add_subplot(projection="3d")``). Default: a new
        figure with one.

    Returns
    -------
    Figure
        The figure holding the axes; coordinates in m at equal scale.

    Raises
    ------
    ValueError
        If `q` has the wrong shape or `ax` is not a 3-D axes.
    """
    if not isinstance(structure, Structure):
        raise TypeError(f"expected a tenscontrol.Structure, got {type(structure).__name__}")
    X = _positions(structure, q)
    if ax is None:
        fig = Figure(figsize=_FIGSIZE, layout="constrained")
        ax = fig.add_subplot(projection="3d")
    elif getattr(ax, "name", None) != "3d":
        raise ValueError("ax must be a 3-D axes, e.g. fig.add_subplot(projection='3d')")
    for pairs, style, label in ((structure.bar_nodes, _BAR_STYLE, "bars"),
                                (structure.string_nodes, _STRING_STYLE, "strings")):
        if len(pairs):
            ax.add_collection3d(Line3DCollection(X[pairs], label=label, **style))
    _draw_nodes_3d(ax, structure, X)
    _set_cube_limits(ax, X)
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")
    ax.set_title(structure.name)
    ax.legend(loc="upper left", fontsize="small")
    return ax.figure


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
        Left: the node paths [m]; right: each bar's strain (l - l0)/l0 against time [s].
    """
    trajectories = list(trajectories)
    if not trajectories or len(labels) != len(trajectories):
        raise ValueError("give one label per trajectory (and at least one trajectory)")
    for traj in trajectories:
        _check_trajectory(traj)
    chosen = _node_list(trajectories[0], nodes)
    if plane not in _PLANES:
        raise ValueError(f"plane must be one of {', '.join(_PLANES)}, got {plane!r}")
    a, b = _PLANES[plane]
    fig = Figure(figsize=(11.0, 4.8), layout="constrained")
    ax_path, ax_strain = fig.subplots(1, 2)
    _draw_members_2d(ax_path, trajectories[0].structure, trajectories[0].nodes[0], a, b)
    styles = ("-", "--", ":", "-.")
    for r, (traj, label) in enumerate(zip(trajectories, labels)):
        ls = styles[r % len(styles)]
        for n, i in enumerate(chosen):
            ax_path.plot(traj.nodes[:, i, a], traj.nodes[:, i, b], ls=ls, color=f"C{n}", lw=1.3,
                         label=f"{label}, node {i}")
        for k in range(traj.structure.n_bars):
            ax_strain.plot(traj.t, traj.bar_strains[:, k], ls=ls, color=f"C{k}", lw=1.0,
                           label=f"{label}, bar {k}")
    ax_path.set(xlabel=f"{_AXES[a]} [m]", ylabel=f"{_AXES[b]} [m]", title="node paths")
    ax_path.set_aspect("equal", adjustable="datalim")
    ax_strain.set(xlabel="time [s]", ylabel="bar strain (l - l0)/l0 [-]", title="bar strains")
    for ax in (ax_path, ax_strain):
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize="x-small")
    fig.suptitle(trajectories[0].structure.name)
    return fig


def plot_hankel_singular_values(minimal) -> Figure:
    """Hankel singular values of a :class:`~tenscontrol.reduction.MinimalRealization`, log scale,
    with the kept ones marked."""
    hsv = getattr(minimal, "hsv", None)
    if hsv is None or len(hsv) == 0:
        raise ValueError("this realization has no Hankel singular values (its elastic model is "
                         "not asymptotically stable: add damping to balance it)")
    fig = Figure(figsize=_FIGSIZE, layout="constrained")
    ax = fig.add_subplot()
    k = np.arange(1, len(hsv) + 1)
    ax.semilogy(k, hsv, "o-", color="C0", ms=4, label="Hankel singular values")
    kept = k <= minimal.order
    ax.semilogy(k[kept], np.asarray(hsv)[kept], "o", color="C3", ms=6,
                label=f"kept ({minimal.order} of {len(hsv)} elastic states)")
    ax.set(xlabel="index", ylabel="Hankel singular value",
           title=f"balanced truncation: full order {minimal.full_order}, structural "
                 f"{minimal.structural_order}, minimal {minimal.order}")
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="best", fontsize="small")
    return fig


def plot_material_comparison(result) -> Figure:
    """The doublet responses and the norms of a :class:`~tenscontrol.comparison.MaterialComparison`."""
    fig = Figure(figsize=(11.0, 4.8), layout="constrained")
    ax_t, ax_n = fig.subplots(1, 2)
    for r, (row, y) in enumerate(zip(result.rows, result.responses)):
        ax_t.plot(result.t, np.linalg.norm(y, axis=1), color=f"C{r}", lw=1.2, label=row.material)
    ax_t.set(xlabel="time [s]", ylabel="|output deviation| [m]",
             title=f"nonlinear response to a {result.amplitude:g} N doublet on "
                   f"{result.disturbance}")
    names = ("H2", "H-inf", "peak/|u|2", "|y|2/|u|2")
    width = 0.8 / max(len(result.rows), 1)
    for r, row in enumerate(result.rows):
        values = (row.h2, row.hinf, row.peak_ratio, row.energy_ratio)
        ax_n.bar(np.arange(4) + r * width, values, width, color=f"C{r}", label=row.material)
    ax_n.set_xticks(np.arange(4) + width * (len(result.rows) - 1) / 2, names)
    ax_n.set_yscale("log")
    ax_n.set(title="linear norms and nonlinear ratios", ylabel="gain")
    for ax in (ax_t, ax_n):
        ax.grid(alpha=0.3, which="both")
        ax.legend(loc="best", fontsize="small")
    return fig


def plot_closed_loop(report, output=None) -> Figure:
    """A :class:`tenscontrol.verify.ClosedLoopReport`: one output's deflection (open loop,
    closed loop, linear prediction) above the commanded strings' applied force densities.

    Parameters
    ----------
    report : ClosedLoopReport
    output : int or str, optional
        Index or name of the output; the one with the largest open-loop peak by default.
    """
    names = list(report.output_names)
    if output is None:
        k = int(np.argmax(np.abs(report.y_open).max(axis=0)))
    elif isinstance(output, str):
        if output not in names:
            raise ValueError(f"output {output!r} is not one of the report's outputs {names}")
        k = names.index(output)
    elif isinstance(output, (int, np.integer)) and 0 <= output < len(names):
        k = int(output)
    else:
        raise ValueError(f"output must be a name from {names} or an index below {len(names)}, "
                         f"got {output!r}")
    fig = Figure(figsize=(6.4, 6.4), layout="constrained")
    ax, ax2 = fig.subplots(2, 1, sharex=True)
    t = report.t
    ax.plot(t, 1e3 * report.y_open[:, k], color="0.5", label="open loop (nonlinear)")
    ax.plot(t, 1e3 * report.y_closed[:, k], color="C0", label="closed loop (nonlinear)")
    ax.plot(t, 1e3 * report.y_linear[:, k], color="C1", linestyle="--",
            label="closed loop (linear prediction)")
    ax.set_ylabel(f"deflection {names[k]} [mm]")
    ax.legend(loc="best", fontsize="small")
    ax.grid(True, alpha=0.3)
    c = report.closed_loop.control
    for col, string in enumerate(c.strings):
        ax2.plot(t, c.applied[:, col], label=f"string {int(string)}")
    ax2.axhline(0.0, color="k", linewidth=0.8)
    ax2.set_xlabel("t [s]")
    ax2.set_ylabel("applied force density [N/m]")
    ax2.legend(loc="best", fontsize="small", ncol=2)
    ax2.grid(True, alpha=0.3)
    fig.suptitle(f"{report.closed_loop.structure.name}: closed-loop check "
                 f"(peak {100 * report.peak_reduction:.0f} % lower than open loop)")
    return fig
