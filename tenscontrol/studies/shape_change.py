"""Verification of a shape change on the nonlinear model: tracking, least tension, final statics.

:func:`verify_shape_change` runs a :class:`tenscontrol.design.ShapeChange`'s controller on the corrected
nonlinear simulator from the start of its path at rest, and reports the tracking error against
time (the largest coordinate deviation from the moving reference q(s(t))), the least force
density and tension the strings carried, and the final static residual: the unbalanced force
of the target equilibrium's structure at the final configuration (zero at the target itself).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tenscontrol.design.shape import ShapeChange
from tenscontrol.model.tables import Presentable, titled_table
from tenscontrol.simulation.simulator import simulate
from tenscontrol.simulation.trajectory import Trajectory
from tenscontrol.statics.solve import unbalanced_force
from tenscontrol.studies.verification import output_grid
from tenscontrol import validation

__all__ = ["ShapeChangeReport", "verify_shape_change"]


@dataclass(frozen=True, eq=False)
class ShapeChangeReport(Presentable):
    """The result of :func:`verify_shape_change`.

    Attributes
    ----------
    t : ndarray, shape (nt,)
        Output times [s].
    tracking_error : ndarray, shape (nt,)
        max over free coordinates of |q(t) - q_ref(t)| [m].
    max_tracking_error, final_tracking_error : float
        Its largest value and its value at the last output time [m].
    least_force_density : float
        Least applied force density of any commanded string over the run [N/m].
    least_tension : float
        Least tension gamma * l of any commanded string over the run [N].
    final_static_residual : float
        Max abs unbalanced force on the free coordinates of the target equilibrium's structure
        at the final configuration [N] (0 at the target).
    path_residual : float
        Largest equilibrium residual of the planned points [N].
    move : float
        Largest node displacement between the path's ends [m].
    slack_time : dict of int to float
        Commanded strings that went slack, with the time spent so [s].
    trajectory : Trajectory
        The closed-loop run.
    """

    t: np.ndarray
    tracking_error: np.ndarray
    max_tracking_error: float
    final_tracking_error: float
    least_force_density: float
    least_tension: float
    final_static_residual: float
    path_residual: float
    move: float
    slack_time: dict
    trajectory: Trajectory

    def __repr__(self) -> str:
        return (f"ShapeChangeReport(move={self.move:.4g} m, max tracking error="
                f"{self.max_tracking_error:.3g} m, final={self.final_tracking_error:.3g} m, "
                f"least gamma={self.least_force_density:.4g} N/m, final static residual="
                f"{self.final_static_residual:.3g} N, slack={len(self.slack_time)})")

    def summary(self) -> str:
        """The figures as a table."""
        rows = [("largest node move [m]", f"{self.move:.4g}"),
                ("max tracking error [m]", f"{self.max_tracking_error:.3e}"),
                ("final tracking error [m]", f"{self.final_tracking_error:.3e}"),
                ("least force density [N/m]", f"{self.least_force_density:.4g}"),
                ("least tension [N]", f"{self.least_tension:.4g}"),
                ("final static residual [N]", f"{self.final_static_residual:.3e}"),
                ("planned path residual [N]", f"{self.path_residual:.3e}"),
                ("slack strings [s]", ", ".join(f"{k}: {v:.3g}" for k, v in
                                                self.slack_time.items()) or "none")]
        return titled_table("ShapeChangeReport", rows)


def verify_shape_change(change: ShapeChange, t_final: float | None = None, *, t_eval=None,
                        rtol: float | None = None, atol: float | None = None) -> ShapeChangeReport:
    """Run a shape change on the nonlinear model (rigid bars) and measure how it went.

    Parameters
    ----------
    change : ShapeChange
        From :func:`tenscontrol.shape_change`.
    t_final : float, optional
        Simulated time [s]; 1.5 times the motion's duration by default (it settles after).
    t_eval : array_like, optional
        Output times [s]; 1001 points on [0, t_final] by default.
    rtol, atol : float, optional
        Tolerances of the simulation (:func:`tenscontrol.simulate`'s defaults).

    Returns
    -------
    ShapeChangeReport
    """
    if not isinstance(change, ShapeChange):
        raise TypeError(f"verify_shape_change: change must be a ShapeChange (from "
                        f"tenscontrol.shape_change), got {type(change).__name__}")
    ctl, path = change.controller, change.path
    t_final = (1.5 * ctl.duration if t_final is None else
               validation.real("verify_shape_change: t_final", t_final, positive=True))
    t = output_grid(t_final, t_eval, "verify_shape_change")
    start, target = path.structures[0], path.structures[-1]
    run = simulate(start, t_final, controller=ctl, t_eval=t, rtol=rtol, atol=atol,
                   max_step=float(t[-1] - t[0]) / (t.size - 1))
    free = start.free_coordinates
    Q = run.nodes.reshape(t.size, -1)
    error = np.array([np.abs(q[free] - ctl.reference(tk)[1][free]).max()
                      for tk, q in zip(t, Q)])
    c = run.control
    pairs = start.string_nodes[c.strings]
    N = run.nodes.reshape(t.size, -1, 3)
    lengths = np.linalg.norm(N[:, pairs[:, 1]] - N[:, pairs[:, 0]], axis=2)
    residual = unbalanced_force(target, Q[-1])[target.free_coordinates]
    slack = {int(k): float(v) for k, v in zip(c.strings, c.slack_time) if v > 0}
    return ShapeChangeReport(
        t, error, float(error.max()), float(error[-1]), float(c.applied.min()),
        float((c.applied * lengths).min()), float(np.abs(residual).max()),
        float(path.residual.max()), float(np.abs(path.nodes[-1] - path.nodes[0]).max()),
        slack, run)
