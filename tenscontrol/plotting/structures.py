"""Plots of a structure and of one trajectory: the structure in 3-D, node paths (2-D or 3-D),
constraint and energy violations."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure
from mpl_toolkits.mplot3d import Axes3D  # noqa: F401 (registers the "3d" projection)
from mpl_toolkits.mplot3d.art3d import Line3DCollection

from tenscontrol.model.structure import Structure
from tenscontrol.plotting.common import (AXES, BAR_STYLE, STRING_STYLE, check_trajectory,
                                         draw_members_2d, new_3d_axes, new_figure,
                                         node_list, outside_legend, plane_axes, series_colors)
from tenscontrol.simulation.trajectory import Trajectory

__all__ = ["plot_node_paths", "plot_violations", "plot_structure", "positions", "set_cube_limits"]

_PROJECTIONS = ("2d", "3d")


def _magnification(traj: Trajectory, nodes: list[int], magnify) -> float:
    """The factor the paths are drawn magnified by: `magnify`, or by default 1 if the largest
    path spans 5 % of the structure, else a round factor (1, 2, 5 x 10^k) that makes it ~20 %."""
    if magnify is not None:
        if isinstance(magnify, bool) or not isinstance(magnify, (int, float, np.number)) \
                or not (math.isfinite(magnify) and magnify > 0):
            raise ValueError(f"magnify must be a positive number (1: true scale), got {magnify!r}")
        return float(magnify)
    size = float(np.ptp(traj.nodes[0], axis=0).max()) or 1.0
    extent = float(np.linalg.norm(np.ptp(traj.nodes[:, nodes, :], axis=0), axis=1).max(
        initial=0.0))
    if extent == 0.0 or extent >= 0.05 * size:
        return 1.0
    want = 0.2 * size / extent
    decade = 10.0 ** math.floor(math.log10(want))
    return max(s * decade for s in (1, 2, 5) if s * decade <= want)


def _scale_note(factor: float) -> str:
    return "" if factor == 1.0 else f" (motion x{factor:g} about the start)"


def plot_node_paths(traj: Trajectory, nodes=None, plane: str | None = None, *,
                    projection: str = "2d", magnify: float | None = None) -> Figure:
    """Paths of nodes over the structure drawn faintly at t = 0, in a plane or in 3-D.

    Parameters
    ----------
    traj : Trajectory
        A simulation result.
    nodes : int or sequence of int, optional
        The nodes whose paths to draw. Default: every node that moves (all free nodes if none
        does).
    plane : {"xz", "xy", "yz"}, optional
        The projection plane (``projection="2d"``). Default: the plane of the two coordinates
        along which the chosen nodes move the most.
    projection : {"2d", "3d"}
        ``"2d"``: two panels, the paths on the structure in the plane [m] and the true
        displacements from t = 0 in that plane [mm]. ``"3d"``: one 3-D axes.
    magnify : float, optional
        Draw the paths on the structure as ``q(0) + magnify (q(t) - q(0))``, so that
        millimetre motions of a metre-sized structure show; the title says the factor. Default:
        1 if the largest path spans 5 % of the structure, else a round factor that makes it
        about 20 %. The displacement panel is always at true scale.

    Returns
    -------
    Figure
        Made through pyplot: it displays with ``plt.show()`` or in a notebook; close it with
        ``plt.close(fig)`` when you make many. Up to ten nodes get a legend entry each (outside
        the axes), more a colormap with a colorbar of node indices.

    Raises
    ------
    ValueError
        For an empty trajectory, a node index out of range, an unknown plane or projection,
        or a magnification that is not a positive number.
    """
    check_trajectory(traj)
    if projection not in _PROJECTIONS:
        raise ValueError(f"projection must be one of {', '.join(map(repr, _PROJECTIONS))}, "
                         f"got {projection!r}")
    chosen = node_list(traj, nodes)
    factor = _magnification(traj, chosen, magnify)
    if projection == "3d":
        return _node_paths_3d(traj, chosen, factor)
    a, b = plane_axes(traj, chosen, plane)
    fig = new_figure(figsize=(12.0, 5.4))
    ax, ax_d = fig.subplots(1, 2)
    draw_members_2d(ax, traj.structure, traj.nodes[0], a, b)
    colors, legend = series_colors(ax_d, chosen, "node")
    start, disp = traj.nodes[0], 1e3 * (traj.nodes - traj.nodes[0])
    for color, i in zip(colors, chosen):
        path = start[i] + factor * (traj.nodes[:, i] - start[i])
        ax.plot(path[:, a], path[:, b], lw=1.5, color=color, zorder=2)
        ax.plot(start[i, a], start[i, b], "o", color=color, ms=5, zorder=3)
        ax_d.plot(disp[:, i, a], disp[:, i, b], lw=1.3, color=color,
                  label=f"node {i}" if legend else None)
    if chosen:
        ax.plot([], [], "o", color="0.3", ms=5, label="start (t = 0)")
        ax_d.plot(0.0, 0.0, "+", color="k", ms=10)
    ax.set(xlabel=f"{AXES[a]} [m]", ylabel=f"{AXES[b]} [m]",
           title=f"paths on the structure{_scale_note(factor)}")
    ax_d.set(xlabel=f"{AXES[a]} - {AXES[a]}(0) [mm]", ylabel=f"{AXES[b]} - {AXES[b]}(0) [mm]",
             title="displacement from t = 0 (true scale)")
    for axis in (ax, ax_d):
        axis.set_aspect("equal", adjustable="datalim")
        axis.autoscale_view()
        axis.grid(alpha=0.3)
        outside_legend(axis)
    fig.suptitle(f"{traj.structure.name}: node paths in the {AXES[a]}-{AXES[b]} plane, "
                 f"t = {traj.t[0]:g}..{traj.t[-1]:g} s")
    return fig


def _node_paths_3d(traj: Trajectory, chosen: list[int], factor: float) -> Figure:
    """plot_node_paths(projection="3d")."""
    s, start = traj.structure, traj.nodes[0]
    ax, slot = new_3d_axes()
    fig = ax.figure
    for pairs, style, label in ((s.bar_nodes, BAR_STYLE, "bars (t = 0)"),
                                (s.string_nodes, STRING_STYLE, "strings (t = 0)")):
        if len(pairs):
            ax.add_collection3d(Line3DCollection(start[pairs], alpha=0.3, label=label, **style))
    colors, legend = series_colors(ax, chosen, "node")
    points = [start]
    for color, i in zip(colors, chosen):
        path = start[i] + factor * (traj.nodes[:, i] - start[i])
        points.append(path)
        ax.plot(path[:, 0], path[:, 1], path[:, 2], lw=1.5, color=color,
                label=f"node {i}" if legend else None)
        ax.scatter(*start[i], color=color, s=15, depthshade=False)
    set_cube_limits(ax, np.vstack(points))
    ax.set(xlabel="x [m]", ylabel="y [m]", zlabel="z [m]")
    outside_legend(ax, slot)
    fig.suptitle(f"{s.name}: node paths, t = {traj.t[0]:g}..{traj.t[-1]:g} s"
                 f"{_scale_note(factor)}")
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
        energy or work) are drawn at that level, marked by a dotted line. Made through pyplot
        (close it with ``plt.close(fig)`` when you make many).

    Raises
    ------
    ValueError
        For an empty trajectory.
    """
    check_trajectory(traj)
    eps = np.finfo(float).eps
    bars = np.abs(traj.bar_violation).max(axis=1, initial=0.0)
    energy = np.abs(traj.energy_violation)
    bar_floor = eps * max(float(traj.structure.bar_lengths.max(initial=0.0)), 1.0)
    energy_scale = max(float(np.abs(traj.energy).max()), float(np.abs(traj.work).max()))
    energy_floor = eps * (energy_scale if energy_scale > 0 else 1.0)
    fig = new_figure()
    ax_bar, ax_energy = fig.subplots(2, 1, sharex=True)
    for ax, values, floor, label, color in (
            (ax_bar, bars, bar_floor, "max |bar violation| [m]", "C0"),
            (ax_energy, energy, energy_floor, "|energy violation| [J]", "C1")):
        ax.semilogy(traj.t, _floored(values, floor), color=color, lw=1.2,
                    label=label.split(" [")[0])
        ax.axhline(floor, color="0.5", ls=":", lw=1, label="round-off level")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3, which="both")
        outside_legend(ax)
    ax_energy.set_xlabel("time [s]")
    fig.suptitle(f"{traj.structure.name}: violations (correction = {traj.correction})")
    return fig


def positions(structure: Structure, q) -> np.ndarray:
    """Node positions (n_nodes, 3) from q given as (n_nodes, 3) or flat (3 n_nodes,)."""
    if q is None:
        return np.asarray(structure.nodes)
    n = structure.n_nodes
    X = np.asarray(q, dtype=float)
    if X.shape not in ((n, 3), (3 * n,)) or not np.all(np.isfinite(X)):
        raise ValueError(f"q must be a finite ({n}, 3) array or a flat ({3 * n},) array of node "
                         f"positions [m], got shape {X.shape}")
    return X.reshape(n, 3)


def set_cube_limits(ax, X: np.ndarray) -> None:
    """Equal scale on x, y and z: a cube around the points X (k, 3)."""
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
        figure with one, made through pyplot (close it with ``plt.close(fig)`` when you make
        many).

    Returns
    -------
    Figure
        The figure holding the axes; coordinates in m at equal scale; the legend (at most five
        entries) outside the axes.

    Raises
    ------
    ValueError
        If `q` has the wrong shape or `ax` is not a 3-D axes.
    """
    if not isinstance(structure, Structure):
        raise TypeError(f"expected a tenscontrol.Structure, got {type(structure).__name__}")
    X = positions(structure, q)
    slot = None
    if ax is None:
        ax, slot = new_3d_axes()
    elif getattr(ax, "name", None) != "3d":
        raise ValueError("ax must be a 3-D axes, e.g. fig.add_subplot(projection='3d')")
    for pairs, style, label in ((structure.bar_nodes, BAR_STYLE, "bars"),
                                (structure.string_nodes, STRING_STYLE, "strings")):
        if len(pairs):
            ax.add_collection3d(Line3DCollection(X[pairs], label=label, **style))
    _draw_nodes_3d(ax, structure, X)
    set_cube_limits(ax, X)
    ax.set(xlabel="x [m]", ylabel="y [m]", zlabel="z [m]")
    # a 3-D axes' own title is drawn inside its box and clipped by the layout: name the
    # structure in the figure's title when the figure is ours
    if slot is not None:
        ax.figure.suptitle(structure.name)
    else:
        ax.set_title(structure.name)
    outside_legend(ax, slot)
    return ax.figure
