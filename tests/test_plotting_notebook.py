"""Plots that work in notebooks: figures pyplot knows (so ';' and plt.show() display them),
legends that stay small and outside the data on structures with many members, a unit on every
axis, and animations of rigid and compressible runs saved as GIF."""

import re
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib import animation  # noqa: E402
from matplotlib.legend import Legend  # noqa: E402
from PIL import Image  # noqa: E402

import tenscontrol as tc  # noqa: E402
from tenscontrol import plotting  # noqa: E402
from tenscontrol.model import catalog  # noqa: E402
from tenscontrol.plotting.animation import member_force_densities  # noqa: E402
from tenscontrol.plotting.common import MAX_LEGEND_ENTRIES  # noqa: E402

# a legend holds at most the per-member entries plus the structure's own (bars, strings, start)
LEGEND_LIMIT = MAX_LEGEND_ENTRIES + 4
UNIT = re.compile(r"\[[^\]]+\]$")


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def tbar_run():
    return tc.simulate(catalog.tbar("stedy", damping=1.0), 1.0, t_eval=np.linspace(0, 1, 101))


@pytest.fixture(scope="module")
def ball_run():
    """The ball (32 strings) under its load, prestressed with gamma_min = 40 N/m."""
    s = tc.equilibrium(catalog.ball(damping=1.0), gamma_min=40.0).structure
    return tc.simulate(s, 0.3, loads=catalog.ball_load(), t_eval=np.linspace(0, 0.3, 61))


@pytest.fixture(scope="module")
def prism_run():
    """An 8-prism (24 strings, 8 free nodes) pushed sideways at its top nodes."""
    s = tc.equilibrium(catalog.prism(8), gamma_min=1.0).structure
    loads = np.zeros((s.n_nodes, 3))
    loads[8:, 0] = 1.0  # [N]
    return tc.simulate(s, 0.2, loads=loads, t_eval=np.linspace(0, 0.2, 41))


@pytest.fixture(scope="module")
def compressible_run():
    return tc.simulate(catalog.tbar("stedy", damping=1.0, bar_material="hdpe"), 0.5,
                       bars="compressible", t_eval=np.linspace(0, 0.5, 51))


def figures(traj):
    """Every figure of one trajectory."""
    return [plotting.plot_node_paths(traj), plotting.plot_node_paths(traj, projection="3d"),
            plotting.plot_violations(traj), plotting.plot_structure(traj.structure)]


def test_figures_are_known_to_pyplot(tbar_run):
    # pyplot knows the figure: a trailing ';' or plt.show() in a notebook displays it
    for make in (lambda: plotting.plot_node_paths(tbar_run),
                 lambda: plotting.plot_node_paths(tbar_run, projection="3d"),
                 lambda: plotting.plot_violations(tbar_run),
                 lambda: plotting.plot_structure(tbar_run.structure),
                 lambda: plotting.plot_bar_models([tbar_run, tbar_run], ["a", "b"])):
        before = set(plt.get_fignums())
        fig = make()
        assert set(plt.get_fignums()) - before == {fig.number}
        assert plt.gcf() is fig


def test_figures_made_in_a_loop_do_not_pile_up_when_closed(tbar_run):
    start = len(plt.get_fignums())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pyplot warns beyond 20 open figures
        for _ in range(25):
            fig = plotting.plot_violations(tbar_run)
            plt.close(fig)
    assert len(plt.get_fignums()) == start


def legends(fig):
    return [lg for lg in fig.findobj(Legend)]


@pytest.mark.slow
@pytest.mark.parametrize("run", ["ball_run", "prism_run"])
def test_legends_stay_small_and_off_the_data(run, request):
    traj = request.getfixturevalue(run)
    assert traj.structure.n_strings >= 24
    figs = figures(traj) + [plotting.plot_node_paths(traj, nodes=range(traj.structure.n_nodes))]
    for fig in figs:
        fig.canvas.draw()
        for legend in legends(fig):
            assert len(legend.get_texts()) <= LEGEND_LIMIT
            box = legend.get_window_extent()
            for ax in fig.axes:
                if ax.axison and ax is legend.axes and not ax.name == "3d":
                    assert not box.overlaps(ax.get_window_extent()), "legend covers the data"
    # more than ten nodes: a colorbar of node indices instead of a legend entry per node (an
    # inset of the axes it colours)
    fig = figs[-1]
    assert any(cax.get_ylabel() == "node [index]" for ax in fig.axes for cax in ax.child_axes)


def axis_labels(ax):
    labels = [ax.get_xlabel(), ax.get_ylabel()]
    if ax.name == "3d":
        labels.append(ax.get_zlabel())
    return [label for label in labels if label]


def test_every_axis_has_a_unit(ball_run, bar_models, tbar_run):
    figs = figures(ball_run) + figures(tbar_run) + [bar_models]
    for fig in figs:
        for ax in fig.axes:
            if not ax.axison:
                continue  # the legend's slot next to a 3-D axes
            labels = axis_labels(ax)
            assert labels, f"an axes of {fig.get_suptitle()!r} has no axis label"
            for label in labels:
                assert UNIT.search(label), f"{label!r} has no unit in brackets"


@pytest.fixture(scope="module")
def bar_models(tbar_run, compressible_run):
    return plotting.plot_bar_models([tbar_run, compressible_run], ["rigid", "HDPE"])


def test_node_paths_in_3d_and_magnified(ball_run):
    fig = plotting.plot_node_paths(ball_run, projection="3d")
    ax = fig.axes[0]
    assert ax.name == "3d"
    assert "motion x" in fig.get_suptitle()  # millimetre motions of a 1 m ball are magnified
    fig = plotting.plot_node_paths(ball_run, nodes=[2], plane="xz", magnify=1)
    assert "motion x" not in fig.axes[0].get_title()
    np.testing.assert_allclose(fig.axes[1].get_lines()[0].get_xdata(),
                               1e3 * (ball_run.nodes[:, 2, 0] - ball_run.nodes[0, 2, 0]))
    with pytest.raises(ValueError, match="projection must be one of"):
        plotting.plot_node_paths(ball_run, projection="4d")
    with pytest.raises(ValueError, match="magnify must be a positive number"):
        plotting.plot_node_paths(ball_run, magnify=0)


# ---- animation ---------------------------------------------------------------------------------

@pytest.mark.parametrize("run, kwargs, frames", [
    ("tbar_run", {}, 21),                               # 1 s at 20 fps: floor(20) + 1
    ("tbar_run", {"fps": 5, "speed": 0.5}, 11),         # slow motion: 2 s of movie at 5 fps
    ("tbar_run", {"max_frames": 7}, 7),                 # capped: spread over the run
    ("compressible_run", {"fps": 10}, 6),               # 0.5 s at 10 fps
])
def test_animation_frame_count_and_gif(run, kwargs, frames, request, tmp_path):
    traj = request.getfixturevalue(run)
    anim = plotting.animate(traj, **kwargs)
    assert isinstance(anim, animation.FuncAnimation)
    path = plotting.save_animation(anim, tmp_path / "run.gif")
    assert path == tmp_path / "run.gif"
    with Image.open(path) as im:
        assert im.format == "GIF" and im.n_frames == frames


def test_animation_colours_members_by_force_density(compressible_run):
    anim = plotting.animate(compressible_run, max_frames=3)
    ax = anim._fig.axes[0]
    strings, bars = ax.collections[:2]
    gamma, psi, slack = member_force_densities(compressible_run, [0])
    np.testing.assert_allclose(strings.get_array(), gamma[0])
    np.testing.assert_allclose(bars.get_array(), psi[0])   # compressible bars coloured too
    _, psi_all, _ = member_force_densities(compressible_run)
    assert psi_all.min() < 0                                # the bars go into compression
    assert bars.norm.vmin < 0 < bars.norm.vmax and bars.norm(0.0) == 0.5  # diverging at 0
    colorbar = anim._fig.axes[1]
    assert colorbar.get_ylabel().startswith("force density [N/m]")
    html = anim.to_jshtml()
    assert "<script" in html and html.count("data:image/png") == 3


def test_slack_strings_are_dashed(tmp_path):
    # rest lengths 5 % longer than the strings: every string is slack at rest
    s = catalog.prism(3, rest_fraction=1.05)
    traj = tc.simulate(s, 0.05, t_eval=np.linspace(0, 0.05, 6))
    gamma, psi, slack = member_force_densities(traj)
    assert psi is None and slack.all() and np.all(gamma == 0)
    anim = plotting.animate(traj, fps=100)
    strings = anim._fig.axes[0].collections[0]
    assert all(ls[1] is not None for ls in strings.get_linestyles())  # dashed, not solid
    plotting.save_animation(anim, tmp_path / "slack.gif")


def test_save_animation_picks_the_writer_or_says_why_not(tbar_run, tmp_path, monkeypatch):
    anim = plotting.animate(tbar_run, max_frames=2)
    with pytest.raises(ValueError, match="use a .gif .* or .mp4"):
        plotting.save_animation(anim, tmp_path / "run.avi")
    with pytest.raises(ValueError, match="does not exist"):
        plotting.save_animation(anim, tmp_path / "missing" / "run.gif")
    with pytest.raises(TypeError, match="matplotlib animation"):
        plotting.save_animation("movie", tmp_path / "run.gif")
    monkeypatch.setattr(animation.writers, "is_available", lambda name: False)
    with pytest.raises(RuntimeError, match="needs the ffmpeg program.*install it"):
        plotting.save_animation(anim, tmp_path / "run.mp4")
    plotting.save_animation(anim, tmp_path / "run.gif")  # let the animation render once


@pytest.mark.parametrize("kwargs, error, match", [
    ({"fps": 0}, ValueError, "fps must be positive"),
    ({"speed": "fast"}, TypeError, "speed must be a playback speed"),
    ({"max_frames": 0}, ValueError, "max_frames must be an integer >= 1"),
    ({"ax": "axes"}, ValueError, "ax must be a 3-D axes"),
])
def test_animate_rejects_bad_arguments(tbar_run, kwargs, error, match):
    with pytest.raises(error, match=match):
        plotting.animate(tbar_run, **kwargs)


def test_animate_into_a_pyplot_axes(tbar_run, tmp_path):
    fig = plt.figure()
    ax = fig.add_subplot(projection="3d")
    anim = plotting.animate(tbar_run, ax=ax, max_frames=2)
    assert anim._fig is fig and fig.number in plt.get_fignums()
    plotting.save_animation(anim, tmp_path / "run.gif")


# ---- layout: colorbars next to their axes, nothing clipped, integer ticks on counts ------------

def _report_with_strings(n_strings: int):
    """What plot_closed_loop reads of a ClosedLoopReport, for `n_strings` commanded strings."""
    from types import SimpleNamespace

    t = np.linspace(0.0, 1.0, 21)
    y = np.sin(6 * t)[:, None] * [1e-3, 2e-3]
    control = SimpleNamespace(strings=np.arange(n_strings),
                              applied=10.0 + np.outer(np.sin(3 * t), np.arange(n_strings)))
    return SimpleNamespace(t=t, output_names=("x2", "z2"), y_open=y, y_closed=0.5 * y,
                           y_linear=0.5 * y, peak_reduction=0.5,
                           closed_loop=SimpleNamespace(control=control,
                                                       structure=SimpleNamespace(name="ball")))


def test_report_without_linear_prediction_has_no_linear_legend_entry():
    # verify fills y_linear with NaN when a controller has no linear prediction: no empty
    # "linear prediction" line or legend entry then (issue 23); with one, both are there
    report = _report_with_strings(3)

    def labels(fig):
        ax = fig.axes[0]
        legend = ax.get_legend() or fig.legends[0]
        return ([t.get_text() for t in legend.get_texts()], [line.get_label() for line in
                                                             ax.get_lines()])

    with_linear = labels(plotting.plot_closed_loop(report))
    assert all("closed loop (linear prediction)" in names for names in with_linear)
    report.y_linear = np.full_like(report.y_closed, np.nan)
    texts, lines = labels(plotting.plot_closed_loop(report))
    assert not any("prediction" in name for name in texts + lines)
    assert "closed loop (nonlinear)" in texts
    plt.close("all")


def _colorbar_gap(fig, ax) -> float:
    """Horizontal gap between `ax` and its colorbar, as a fraction of the figure's width."""
    fig.canvas.draw()
    (cax,) = [c for c in [*ax.child_axes, *fig.axes] if c.get_ylabel().endswith("[index]")]
    return (cax.get_window_extent().x0 - ax.get_window_extent().x1) / fig.bbox.width


def test_report_colorbar_sits_next_to_its_axes():
    # 32 strings (the ball): a colorbar of string indices beside the force densities, not at
    # the figure's right edge beyond the deflection panel's outside legend (issue 22: it sat
    # 0.31 of the figure's width away)
    fig = plotting.plot_closed_loop(_report_with_strings(32))
    ax_u = fig.axes[1]
    assert 0.0 < _colorbar_gap(fig, ax_u) < 0.05
    # its ticks count strings: integers
    (cax,) = [c for c in [*ax_u.child_axes, *fig.axes] if c.get_ylabel() == "string [index]"]
    ticks = [v for v in cax.get_yticks() if 0 <= v <= 31]
    assert ticks and all(float(v).is_integer() for v in ticks)


def test_colorbar_makes_room_for_a_legend_above_it(prism_run):
    # two runs of 16 nodes: the runs' line styles in a legend, the node colours in a colorbar
    # below it; neither covers the other
    nodes = range(prism_run.structure.n_nodes)
    fig = plotting.plot_bar_models([prism_run, prism_run], ["a", "b"], nodes=nodes)
    ax = fig.axes[0]
    assert _colorbar_gap(fig, ax) < 0.05
    (cax,) = [c for c in [*ax.child_axes, *fig.axes] if c.get_ylabel() == "node [index]"]
    assert not ax.get_legend().get_window_extent().overlaps(cax.get_window_extent())


@pytest.mark.parametrize("run", ["tbar_run", "ball_run"])
def test_animation_frame_holds_every_label(run, request, tmp_path):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    anim = plotting.animate(request.getfixturevalue(run), max_frames=2)
    plotting.save_animation(anim, tmp_path / "run.gif")
    fig = anim._fig
    FigureCanvasAgg(fig).draw()
    ax = fig.axes[0]
    frame = fig.bbox
    for label in (ax.xaxis.label, ax.yaxis.label, ax.zaxis.label, fig.axes[1].yaxis.label):
        box = label.get_window_extent()
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 \
            and box.y1 <= frame.y1, f"{label.get_text()!r} clipped: {box} outside {frame}"
    box = ax.get_tightbbox()          # the tick labels too
    assert frame.y0 <= box.y0 and box.y1 <= frame.y1 and frame.x0 <= box.x0


def test_the_html_player_loads_nothing_from_the_network(tbar_run):
    # matplotlib's own player links Font Awesome from a CDN for its buttons' icons
    html = plotting.animate(tbar_run, max_frames=2).to_jshtml()
    assert html.count("data:image/png") == 2 and "<link" not in html
    # the only URL left is the SVG namespace inside the icons' data: URIs
    urls = set(re.findall(r"https?(?::|%3A)//[^\s\"')%]+", html))
    assert urls <= {"http://www.w3.org/2000/svg", "http%3A//www.w3.org/2000/svg"}, urls
    # every icon the buttons use has a drawing
    icons = set(re.findall(r'<i class="fa (fa-[a-z-]+)', html))
    assert len(icons) == 8 and all(f".animation i.{name} {{ background-image" in html
                                   for name in icons)
