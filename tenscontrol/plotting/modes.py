"""Plots of a :class:`tenscontrol.ModalView`: a mode shape on the structure and the damping
map (damping ratio against natural frequency, open and closed loop)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from mpl_toolkits.mplot3d.art3d import Line3DCollection

from tenscontrol.plotting.common import (BAR_STYLE, STRING_STYLE, new_3d_axes, new_figure,
                                         outside_legend)
from tenscontrol.plotting.structures import set_cube_limits

__all__ = ["plot_damping_map", "plot_mode_shape"]

#: The largest nodal displacement of a drawn mode shape, as a fraction of the structure's size.
SHAPE_FRACTION = 0.2
#: Damping ratios below this are drawn at it on the log axis (an undamped mode's 0 or 1e-12).
DAMPING_FLOOR = 1e-9


def _check_view(view, who: str) -> None:
    if not (hasattr(view, "shapes") and hasattr(view, "frequency") and hasattr(view, "damping")):
        raise TypeError(f"{who}: expected a tenscontrol ModalView (tenscontrol.modes(model)), "
                        f"got {type(view).__name__}")


def plot_mode_shape(view, mode: int, *, scale: float | None = None, ax=None) -> Figure:
    """Mode `mode` of a ModalView drawn on its structure: the structure at rest in grey, the
    displaced shape in colour, each string as wide as its stretch in the mode (0.5 pt plus
    3 pt per metre of stretch per metre of largest nodal displacement, at most 3.5 pt).

    Parameters
    ----------
    view : ModalView
    mode : int
        Row of the view (0: the lowest frequency).
    scale : float, optional
        Largest nodal displacement drawn [m]; default 20 % of the structure's size.
    ax : Axes3D, optional
        A 3-D axes to draw into; default a new figure.

    Returns
    -------
    Figure
    """
    _check_view(view, "plot_mode_shape")
    if view.structure is None:
        raise ValueError("plot_mode_shape: the view has no structure to draw on")
    i = int(mode)
    if not 0 <= i < len(view):
        raise IndexError(f"plot_mode_shape: mode {i} out of range 0..{len(view) - 1}")
    st = view.structure
    X = np.asarray(view.q, dtype=float).reshape(-1, 3)
    size = float(np.ptp(X, axis=0).max()) or 1.0
    scale = SHAPE_FRACTION * size if scale is None else float(scale)
    Y = X + scale * np.real(view.shapes[i]).reshape(-1, 3)
    slot = None
    if ax is None:
        ax, slot = new_3d_axes()
    for pairs, style, label in ((st.bar_nodes, BAR_STYLE, "bars"),
                                (st.string_nodes, STRING_STYLE, "strings")):
        if len(pairs):
            ax.add_collection3d(Line3DCollection(X[pairs], colors="0.8",
                                                 linewidths=style["linewidth"]))
    if st.n_bars:
        ax.add_collection3d(Line3DCollection(Y[st.bar_nodes], label="bars (mode shape)",
                                             **BAR_STYLE))
    if st.n_strings:
        # absolute stretch per metre of largest nodal displacement, so that a mode the
        # strings do not stretch in (a twist) shows hairlines, not the widest lines
        widths = 0.5 + 3.0 * np.clip(view.string_stretch[i], 0.0, 1.0)
        ax.add_collection3d(Line3DCollection(Y[st.string_nodes], colors=STRING_STYLE["color"],
                                             linewidths=widths,
                                             label="strings (width: stretch)"))
    ax.scatter(Y[:, 0], Y[:, 1], Y[:, 2], color="0.2", s=10, depthshade=False)
    set_cube_limits(ax, np.vstack([X, Y]))
    ax.set(xlabel="x [m]", ylabel="y [m]", zlabel="z [m]")
    z = view.damping[i]
    title = (f"{st.name}: mode {i}, {view.frequency[i]:.4g} rad/s ({view.hertz[i]:.4g} Hz), "
             f"damping {'-' if np.isnan(z) else f'{z:.2g}'}, shown {scale:.2g} m")
    (ax.figure.suptitle if slot is not None else ax.set_title)(title)
    outside_legend(ax, slot)
    return ax.figure


def plot_damping_map(view, ax=None) -> Figure:
    """Damping ratio against natural frequency of every mode of a ModalView (log-log), open
    loop and, with a design, closed loop (an arrow from each mode to its closed-loop
    eigenvalue), with the damping target as a line.

    Parameters
    ----------
    view : ModalView
    ax : Axes, optional

    Returns
    -------
    Figure
    """
    _check_view(view, "plot_damping_map")
    if ax is None:
        ax = new_figure().subplots()
    w = view.frequency
    z = np.clip(np.nan_to_num(view.damping, nan=DAMPING_FLOOR), DAMPING_FLOOR, None)
    ax.scatter(w, z, color="0.4", marker="o", label="open loop", zorder=3)
    if view.closed_eigenvalues is not None:
        wc = view.closed_frequency
        zc = np.clip(np.nan_to_num(view.closed_damping, nan=DAMPING_FLOOR), DAMPING_FLOOR, None)
        ok = np.isfinite(wc)
        ax.scatter(wc[ok], zc[ok], color="C0", marker="x", label="closed loop", zorder=3)
        for a, b, c, d in zip(w[ok], z[ok], wc[ok], zc[ok]):
            ax.annotate("", xy=(c, d), xytext=(a, b),
                        arrowprops=dict(arrowstyle="->", color="C0", alpha=0.5))
    ax.axhline(view.target, color="C3", linestyle="--", linewidth=1.0,
               label=f"target {view.target:g}")
    for i, (a, b) in enumerate(zip(w, z)):
        ax.annotate(f" {i}", (a, b), fontsize="small", color="0.3")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("natural frequency [rad/s]")
    ax.set_ylabel("damping ratio")
    ax.grid(True, which="both", alpha=0.3)
    name = getattr(view.structure, "name", "model")
    ax.set_title(f"{name}: damping map ({len(view)} elastic modes)")
    outside_legend(ax)
    return ax.figure
