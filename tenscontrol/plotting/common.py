"""What the plotting modules share: figures made through pyplot, argument checks, the members
drawn in 2-D, colours for many series (a colormap with a colorbar beyond ten), legends placed
outside the data.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import colormaps
from matplotlib.cm import ScalarMappable
from matplotlib.collections import LineCollection
from matplotlib.colors import Normalize
from matplotlib.ticker import MaxNLocator, NullLocator
from matplotlib.transforms import Bbox, TransformedBbox
from mpl_toolkits.mplot3d import Axes3D  # noqa: F401 (registers the "3d" projection)

from tenscontrol import fileio
from tenscontrol.model.structure import Structure
from tenscontrol.simulation.trajectory import Trajectory

__all__ = ["AXES", "PLANES", "FIGSIZE", "BAR_STYLE", "STRING_STYLE", "MAX_LEGEND_ENTRIES",
           "new_figure", "new_3d_axes", "check_trajectory", "node_list", "plane_axes", "draw_members_2d",
           "series_colors", "outside_legend", "integer_ticks"]

AXES = "xyz"
PLANES = {"xy": (0, 1), "xz": (0, 2), "yz": (1, 2)}
FIGSIZE = (6.4, 5.6)
BAR_STYLE = {"color": "C0", "linewidth": 4.0}
STRING_STYLE = {"color": "C3", "linewidth": 1.0}
#: Series beyond this many get a colormap and a colorbar instead of one legend entry each.
MAX_LEGEND_ENTRIES = 10
SERIES_CMAP = "viridis"


def new_figure(figsize=FIGSIZE, **kwargs):
    """A figure made through pyplot (so that ``plt.show()`` and the notebook's inline backend
    display it) with constrained layout (titles and outside legends are not clipped)."""
    return plt.figure(figsize=figsize, layout="constrained", **kwargs)


def save_figure(fig, path, *, dpi: int = 120):
    """Write `fig` to `path` (format from the suffix) and close it, so that pyplot lets it go.

    For scripts and commands that save many figures; returns the path as a ``pathlib.Path``.
    The file is written whole or not at all (:func:`tenscontrol.fileio.write_file`); an
    OSError names `path`.
    """
    from pathlib import Path
    fmt = Path(path).suffix[1:].lower() or None  # None: matplotlib's default format
    try:
        return fileio.write_file(path, lambda f: fig.savefig(f, format=fmt, dpi=dpi))
    finally:
        plt.close(fig)


def check_trajectory(traj) -> None:
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


def node_list(traj: Trajectory, nodes) -> list[int]:
    """The validated node indices to plot (default: the nodes that move)."""
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


def plane_axes(traj: Trajectory, nodes: list[int], plane) -> tuple[int, int]:
    """The coordinate indices of `plane`, by default the two along which `nodes` move most."""
    if plane is not None:
        if plane not in PLANES:
            raise ValueError(f"plane must be one of {', '.join(map(repr, PLANES))}, "
                             f"got {plane!r}")
        return PLANES[plane]
    if nodes:
        spread = np.ptp(traj.nodes[:, nodes, :], axis=0).sum(axis=0)
    else:
        spread = np.ptp(traj.nodes[0], axis=0)
    a, b = sorted(np.argsort(-spread, kind="stable")[:2])
    return int(a), int(b)


def draw_members_2d(ax, structure: Structure, X: np.ndarray, a: int, b: int,
                    labels: bool = True) -> None:
    """Bars (thick) and strings (thin), faint, at positions X, projected on axes (a, b)."""
    for pairs, style, label in ((structure.bar_nodes, BAR_STYLE, "bars (t = 0)"),
                                (structure.string_nodes, STRING_STYLE, "strings (t = 0)")):
        if len(pairs):
            segments = X[pairs][:, :, [a, b]]
            ax.add_collection(LineCollection(segments, alpha=0.25, label=label, zorder=1,
                                             **style))
    if labels:
        for i, p in enumerate(X):
            ax.annotate(str(i), (p[a], p[b]), textcoords="offset points", xytext=(4, 4),
                        color="0.45", fontsize="small")
    ax.plot(X[:, a], X[:, b], ".", color="0.55", zorder=1)


#: Where :func:`series_colors` puts its colorbar, in `ax`'s axes fraction: beside the axes, and
#: in the lower half when :func:`outside_legend` puts a legend above it.
_COLORBAR_ALONE = (1.03, 0.1, 0.03, 0.8)
_COLORBAR_UNDER_LEGEND = (1.03, 0.0, 0.03, 0.45)
_SERIES_COLORBAR = "series colorbar"


def _inset_locator(ax, bounds):
    """An axes locator: `bounds` (x0, y0, width, height) in `ax`'s axes fraction."""
    def locate(inset, renderer):
        box = TransformedBbox(Bbox.from_bounds(*bounds), ax.transAxes)
        # `inset.figure` is the (sub)figure holding the inset on every matplotlib we support
        # (get_figure(root=False) says the same from 3.10 on only)
        return TransformedBbox(box, inset.figure.transSubfigure.inverted())
    return locate


def integer_ticks(axis) -> None:
    """Ticks at integers only on `axis` (an Axis, e.g. ``ax.xaxis``): for axes that count
    things (an index, a number of states)."""
    axis.set_major_locator(MaxNLocator(integer=True))
    axis.set_minor_locator(NullLocator())


def series_colors(ax, indices, what: str) -> tuple[list, bool]:
    """One colour per series (e.g. per node or string) and whether to give each a legend entry.

    Up to :data:`MAX_LEGEND_ENTRIES` series: the colour cycle, one legend entry each. Beyond:
    colours from a colormap over the indices and a colorbar labelled ``f"{what} [index]"`` next
    to `ax`, so that the legend never grows past a readable size. The colorbar is an inset of
    `ax` just right of it (a colorbar given ``ax=`` sits at the far edge of the figure's right
    margin, beyond another axes' outside legend), with integer ticks.
    """
    indices = list(indices)
    if len(indices) <= MAX_LEGEND_ENTRIES:
        return [f"C{n}" for n in range(len(indices))], True
    cmap = colormaps[SERIES_CMAP]
    norm = Normalize(min(indices), max(indices))
    cax = ax.inset_axes(_COLORBAR_ALONE, label=_SERIES_COLORBAR)
    bar = ax.figure.colorbar(ScalarMappable(norm=norm, cmap=cmap), cax=cax)
    bar.set_label(f"{what} [index]")
    integer_ticks(bar.ax.yaxis)
    return [cmap(norm(i)) for i in indices], False


def new_3d_axes(figsize=(7.6, 5.6)):
    """(ax, slot): a 3-D axes in a new pyplot figure, and an empty axes to its right for the
    legend (constrained layout does not make room for a 3-D axes' own outside legend)."""
    fig = new_figure(figsize=figsize)
    grid = fig.add_gridspec(1, 2, width_ratios=(4.0, 1.0))
    ax = fig.add_subplot(grid[0], projection="3d")
    slot = fig.add_subplot(grid[1])
    slot.set_axis_off()
    return ax, slot


def outside_legend(ax, slot=None, **kwargs):
    """A legend to the right of `ax`, outside the data (constrained layout makes room), or in
    the empty axes `slot` (see :func:`new_3d_axes`)."""
    handles, _ = ax.get_legend_handles_labels()
    if not handles:
        return None
    for cax in ax.child_axes:        # series_colors' colorbar: make room for the legend above it
        if cax.get_label() == _SERIES_COLORBAR:
            cax.set_axes_locator(_inset_locator(ax, _COLORBAR_UNDER_LEGEND))
    if slot is not None:
        return slot.legend(*ax.get_legend_handles_labels(), loc="upper left", borderaxespad=0.0,
                           fontsize="small", **kwargs)
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                     fontsize="small", **kwargs)
