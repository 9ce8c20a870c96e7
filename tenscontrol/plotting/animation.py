"""Animation of a trajectory: the structure moving in 3-D, members coloured by force density,
slack strings dashed; saved as GIF (pillow) or MP4 (ffmpeg), or played in a notebook by an HTML
player that needs no network."""

from __future__ import annotations

import math
import pathlib
import re
import urllib.parse

import numpy as np
from matplotlib import animation, colormaps
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize, TwoSlopeNorm
from matplotlib.figure import Figure
from mpl_toolkits.mplot3d.art3d import Line3DCollection

from tenscontrol import fileio
from tenscontrol.mechanics.compressible.model import bar_force_densities
from tenscontrol.mechanics.rigid.model import force_densities
from tenscontrol.plotting.common import check_trajectory
from tenscontrol.plotting.structures import set_cube_limits
from tenscontrol.simulation.options import positive_count, positive_number
from tenscontrol.simulation.trajectory import Trajectory

__all__ = ["animate", "save_animation", "frame_indices", "member_force_densities"]

_WRITERS = {".gif": "pillow", ".mp4": "ffmpeg"}


def frame_indices(traj: Trajectory, fps: float, speed: float, max_frames: int) -> np.ndarray:
    """Indices into ``traj.t`` of the frames: one every ``speed / fps`` seconds of simulated time
    (the sample nearest to it), ``floor(duration fps / speed) + 1`` frames, at most
    `max_frames` (then spread evenly over the run, which plays faster)."""
    t = traj.t
    count = min(max_frames, math.floor((t[-1] - t[0]) * fps / speed + 1e-9) + 1)
    wanted = np.linspace(t[0], t[-1], count) if count > 1 else t[:1]
    right = np.clip(np.searchsorted(t, wanted), 1, max(len(t) - 1, 1))
    left = right - 1
    nearer_left = np.abs(wanted - t[left]) <= np.abs(t[np.minimum(right, len(t) - 1)] - wanted)
    return np.where(nearer_left, left, np.minimum(right, len(t) - 1)).astype(int)


def member_force_densities(traj: Trajectory, indices=None):
    """Force densities of the members at the samples `indices` of a trajectory.

    Parameters
    ----------
    traj : Trajectory
    indices : array_like of int, optional
        Samples to evaluate; all by default.

    Returns
    -------
    gamma : ndarray, shape (k, n_strings)
        String force densities [N/m] from the strings' elastic law at the recorded positions
        (:func:`tenscontrol.force_densities`; dampers not included); commanded strings of a
        closed loop take the applied force density of ``traj.control``.
    psi : ndarray, shape (k, n_bars) or None
        Bar force densities [N/m] of compressible bars (:func:`tenscontrol.bar_force_densities`);
        None for rigid bars, whose forces (constraint multipliers) are not recorded.
    slack : ndarray of bool, shape (k, n_strings)
        Strings that do not pull because they are shorter than their rest length (for commanded
        strings: the record's slack flag).
    """
    s = traj.structure
    idx = np.arange(len(traj.t)) if indices is None else np.asarray(indices, dtype=int)
    X = traj.nodes[idx]
    gamma = np.array([force_densities(s, x) for x in X]).reshape(len(idx), s.n_strings)
    pairs = s.string_nodes
    length = np.linalg.norm(X[:, pairs[:, 1]] - X[:, pairs[:, 0]], axis=2)
    slack = (gamma == 0.0) & (length < s.string_rest_lengths) & ~s.string_is_spring
    if traj.control is not None:
        cols = np.asarray(traj.control.strings, dtype=int)
        gamma[:, cols] = traj.control.applied[idx]
        slack[:, cols] = traj.control.slack[idx]
    psi = None
    if traj.bars == "compressible":
        psi = np.array([bar_force_densities(s, x) for x in X]).reshape(len(idx), s.n_bars)
    return gamma, psi, slack


# matplotlib's HTML player (to_jshtml) links Font Awesome from a CDN for its buttons' icons:
# offline, or on a site that loads nothing from elsewhere, the buttons are blank. The player of
# `animate` draws them as inline SVG (16 x 16 shapes, data: URIs in a <style>) instead.
_FONT_AWESOME = re.compile(r"<link[^>]*font-awesome[^>]*>")
_ICONS = {
    "minus": "<rect x='2' y='7' width='12' height='2'/>",
    "plus": "<path d='M7 2h2v5h5v2H9v5H7V9H2V7h5z'/>",
    "play": "<path d='M4 2l10 6-10 6z'/>",
    "pause": "<rect x='3' y='2' width='4' height='12'/><rect x='9' y='2' width='4' height='12'/>",
    "step-forward": "<path d='M2 2l9 6-9 6z'/><rect x='11' y='2' width='3' height='12'/>",
    "step-backward": "<path d='M14 2L5 8l9 6z'/><rect x='2' y='2' width='3' height='12'/>",
    "fast-forward": "<path d='M1 2l6 6-6 6zM7 2l6 6-6 6z'/>"
                    "<rect x='13' y='2' width='2' height='12'/>",
    "fast-backward": "<path d='M15 2L9 8l6 6zM9 2L3 8l6 6z'/>"
                     "<rect x='1' y='2' width='2' height='12'/>",
}
_ICON_STYLE = "\n".join(
    [".animation i.fa { display: inline-block; width: 1em; height: 1em; vertical-align: -0.125em;"
     " background: no-repeat center / contain; }",
     ".animation i.fa-flip-horizontal { transform: scaleX(-1); }"]
    + [f".animation i.fa-{name} {{ background-image: url(\"data:image/svg+xml,"
       + urllib.parse.quote(f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16' "
                            f"fill='#333'>{shape}</svg>") + "\"); }"
       for name, shape in _ICONS.items()])


class _Player(animation.FuncAnimation):
    """The FuncAnimation of :func:`animate`, whose HTML player (``to_jshtml()``, and a
    notebook's display with ``rcParams["animation.html"] = "jshtml"``) loads nothing from the
    network: its button icons are inline SVG instead of Font Awesome from a CDN."""

    def to_jshtml(self, fps=None, embed_frames=True, default_mode=None):
        html = super().to_jshtml(fps=fps, embed_frames=embed_frames, default_mode=default_mode)
        return _FONT_AWESOME.sub(lambda m: f"<style>\n{_ICON_STYLE}\n</style>", html, count=1)


def _color_scale(gamma, psi):
    """(cmap, norm): diverging around 0 when compressible bars push, else 0..max tension."""
    top = max(float(gamma.max(initial=0.0)), 1e-12)
    low = float(psi.min(initial=0.0)) if psi is not None else 0.0
    if low < 0.0:
        return colormaps["coolwarm"], TwoSlopeNorm(0.0, low, top)
    return colormaps["viridis"], Normalize(0.0, top)


def _check_animate_args(traj, fps, speed, max_frames, ax):
    check_trajectory(traj)
    fps = positive_number("fps", fps, "a number of frames per second")
    speed = positive_number("speed", speed, "a playback speed (1: real time)")
    max_frames = positive_count("max_frames", max_frames)
    if ax is not None and getattr(ax, "name", None) != "3d":
        raise ValueError("ax must be a 3-D axes, e.g. fig.add_subplot(projection='3d')")
    return fps, speed, max_frames


def animate(traj: Trajectory, *, fps: float = 20, speed: float = 1.0, max_frames: int = 300,
            ax=None) -> animation.FuncAnimation:
    """An animation of a trajectory, rigid or compressible bars.

    Strings are coloured by their force density with a colorbar [N/m] and dashed while slack;
    bars are thick: compressible bars coloured by their force density on the same scale
    (negative = compression, a diverging colormap), rigid bars dark grey (their constraint
    forces are not recorded). The view is fixed to a cube around every frame's nodes.

    Parameters
    ----------
    traj : Trajectory
        A simulation result (``simulate(..., t_eval=np.linspace(0, t_final, n))`` gives evenly
        spaced samples; each frame shows the sample nearest its time).
    fps : float
        Frames per second of the movie.
    speed : float
        Simulated seconds per second of movie (0.5: slow motion).
    max_frames : int
        At most this many frames: ``min(max_frames, floor(duration fps / speed) + 1)``. A
        longer run is spread over `max_frames` frames and plays faster than `speed`; the
        caption shows the actual speed.
    ax : Axes3D, optional
        A 3-D axes to draw into, e.g. of a pyplot figure, to play the animation in a window
        with ``plt.show()``. Default: a new figure kept out of pyplot, so that a notebook does
        not also show it as a still image.

    Returns
    -------
    matplotlib.animation.FuncAnimation
        In a notebook: ``from IPython.display import HTML; HTML(anim.to_jshtml())`` shows a
        player (or set ``matplotlib.rcParams["animation.html"] = "jshtml"`` and leave ``anim``
        as the cell's value), self-contained: frames and button icons are in the HTML, so it
        plays offline and in a saved notebook or web page. Save it with
        :func:`save_animation` (``.gif`` or ``.mp4``).

    Raises
    ------
    TypeError, ValueError
        For a trajectory that is not one or is empty, a non-positive `fps` or `speed`, a
        `max_frames` below 1, or an `ax` that is not 3-D.
    """
    fps, speed, max_frames = _check_animate_args(traj, fps, speed, max_frames, ax)
    idx = frame_indices(traj, fps, speed, max_frames)
    gamma, psi, slack = member_force_densities(traj, idx)
    cmap, norm = _color_scale(gamma, psi)
    s = traj.structure
    cax = None
    if ax is None:
        # fixed positions, no layout engine: a layout pass per frame would triple the drawing;
        # the cube is drawn at 0.85 of the axes (set_box_aspect's zoom below) so that its tick
        # and axis labels stay inside the frame
        fig = Figure(figsize=(5.6, 4.8), dpi=80)
        ax = fig.add_axes((0.0, 0.02, 0.8, 0.9), projection="3d")
        cax = fig.add_axes((0.83, 0.15, 0.03, 0.65))
        fig.suptitle(f"{s.name} ({traj.bars} bars)")
    fig = ax.figure
    X0 = traj.nodes[idx[0]]
    strings = Line3DCollection(X0[s.string_nodes], cmap=cmap, norm=norm, linewidths=1.6)
    ax.add_collection3d(strings)
    bar_style = {"linewidths": 5.0}
    bars = Line3DCollection(X0[s.bar_nodes], cmap=cmap, norm=norm, **bar_style) \
        if psi is not None else Line3DCollection(X0[s.bar_nodes], colors="0.25", **bar_style)
    ax.add_collection3d(bars)
    (nodes,) = ax.plot(*X0.T, "o", color="k", ms=3)
    set_cube_limits(ax, traj.nodes[idx].reshape(-1, 3))
    if cax is not None:
        ax.set_box_aspect((1, 1, 1), zoom=0.85)
    ax.set(xlabel="x [m]", ylabel="y [m]", zlabel="z [m]")
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), cax=cax,
                       **({} if cax is not None else {"ax": ax, "shrink": 0.7, "pad": 0.1}))
    bar.set_label("force density [N/m]" + (" (bars: < 0)" if psi is not None else ""))
    duration = traj.t[idx[-1]] - traj.t[idx[0]]
    shown = duration * fps / (len(idx) - 1) if len(idx) > 1 else speed
    caption = ax.text2D(0.0, 1.0, "", transform=ax.transAxes, va="top", fontsize="small")
    rate = f", x{shown:.3g} real time" + (", dashed: slack" if slack.any() else "")

    def update(f):
        X = traj.nodes[idx[f]]
        strings.set_segments(X[s.string_nodes])
        strings.set_array(gamma[f])
        strings.set_linestyles(["--" if k else "-" for k in slack[f]])
        bars.set_segments(X[s.bar_nodes])
        if psi is not None:
            bars.set_array(psi[f])
        nodes.set_data_3d(*X.T)
        caption.set_text(f"t = {traj.t[idx[f]]:.3f} s{rate}")
        return strings, bars, nodes, caption

    update(0)
    return _Player(fig, update, frames=len(idx), interval=1000.0 / fps, blit=False, repeat=True)


def save_animation(anim: animation.Animation, path) -> pathlib.Path:
    """Save an animation, the writer chosen by the file's suffix.

    Parameters
    ----------
    anim : matplotlib.animation.Animation
        E.g. from :func:`animate`; saved at its own frame rate.
    path : str or path-like
        ``*.gif`` (pillow, installed with matplotlib) or ``*.mp4`` (needs the ``ffmpeg``
        program on PATH).

    Returns
    -------
    pathlib.Path
        The file written, whole or not at all: the movie goes to a unique
        ``<stem>.<token>.part<suffix>`` renamed over `path` when complete, so an interrupted
        save (Ctrl-C) leaves no short movie at `path`.

    Raises
    ------
    ValueError
        For another suffix or a folder that does not exist.
    OSError
        If the file cannot be written (it names `path`).
    RuntimeError
        For ``.mp4`` when ffmpeg is not installed (the message names the fix).
    """
    if not isinstance(anim, animation.Animation):
        raise TypeError(f"anim must be a matplotlib animation (from tenscontrol.plotting."
                        f"animate), got {type(anim).__name__}")
    path = pathlib.Path(path)
    writer = _WRITERS.get(path.suffix.lower())
    if writer is None:
        raise ValueError(f"path: cannot tell the movie format of {str(path)!r}; use a .gif "
                         f"(pillow) or .mp4 (ffmpeg) suffix")
    if not path.parent.is_dir():
        raise ValueError(f"path: the folder {str(path.parent)!r} does not exist; create it first")
    if writer == "ffmpeg" and not animation.writers.is_available("ffmpeg"):
        raise RuntimeError(f"saving {path.name} needs the ffmpeg program, which is not on PATH: "
                           "install it (apt install ffmpeg, brew install ffmpeg or conda install "
                           "ffmpeg) or save a .gif instead")
    # whole or not at all: Ctrl-C or a full disk leaves no short movie that looks complete
    with fileio.part_file(path, keep_suffix=True) as part:
        anim.save(part, writer=writer)
    return path
