"""Plots of structures and trajectories; the only tenscontrol package that imports matplotlib.

Every figure is made through pyplot, so it displays with ``plt.show()`` or, in a notebook,
with a trailing ``;`` (as pyplot's own figures, a figure left as the cell's value without
``;`` shows twice: once as the value, once by the inline backend), and saves headless (Agg
backend) with ``fig.savefig("name.png")``. pyplot keeps every figure it made open: when you make many (in a
loop, in a script), close each with ``plt.close(fig)`` once saved, or save with :func:`save_figure`, which
closes it. :func:`animate` returns a
``FuncAnimation`` (see its docstring for playing it in a notebook); :func:`save_animation`
writes it as GIF or MP4.

Usage: ``from tenscontrol import plotting; plotting.plot_node_paths(traj)``.
"""

from tenscontrol.plotting.animation import animate, save_animation
from tenscontrol.plotting.common import save_figure
from tenscontrol.plotting.comparisons import (plot_bar_models, plot_closed_loop,
                                              plot_hankel_singular_values,
                                              plot_material_comparison)
from tenscontrol.plotting.modes import plot_damping_map, plot_mode_shape
from tenscontrol.plotting.structures import plot_node_paths, plot_structure, plot_violations
from tenscontrol.plotting.studies import plot_against, plot_distribution, plot_slack_fraction

__all__ = ["plot_node_paths", "plot_violations", "plot_structure", "plot_bar_models",
           "plot_hankel_singular_values", "plot_material_comparison", "plot_closed_loop",
           "animate", "save_animation", "save_figure", "plot_distribution", "plot_against",
           "plot_slack_fraction", "plot_mode_shape", "plot_damping_map"]
