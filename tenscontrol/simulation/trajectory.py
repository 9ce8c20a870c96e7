"""What a simulation returns: the Trajectory, its SimulationStats, and the SimulationError
and SimulationInterrupted that carry a partial trajectory.

Kept apart from :mod:`tenscontrol.simulation.simulator` so that plotting and analysis code can use the
result types without the simulator, and so that the rigid-bar and compressible-bar runs share
them.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import numpy as np

from tenscontrol.model.structure import Structure
from tenscontrol.model.tables import Presentable, html_table, summary_html, titled_table

__all__ = ["Trajectory", "SimulationStats", "SimulationError", "SimulationInterrupted"]


# the SimulationStats counters of fallback paths (see its docstring)
_FALLBACKS = ("dependent_constraint_solves", "svd_correction_steps", "dense_mass_solves",
              "singular_mass_solves", "dense_lu_fallbacks", "dense_jacobians",
              "finite_difference_jacobians")


@dataclass(frozen=True)
class SimulationStats(Presentable):
    """Work done by a simulation.

    Attributes
    ----------
    accepted_steps, rejected_steps : int
    rhs_evaluations : int
        Derivative evaluations, including the re-evaluation after each correction that moved
        the state and the one of the initial-step estimate.
    correction_iterations : int
        Newton iterations of the correction, summed over steps (0 for a step that was already
        on the constraints; always 0 for compressible bars, which are not corrected).
    correction_failures : int
        Steps whose correction did not converge within `max_correction_iterations`.
    wall_time : float
        Seconds spent in the integration loop.
    integrator : str
        ``"dopri54"`` (explicit Dormand-Prince 5(4)) or ``"radau5"`` (implicit Radau IIA).
    jacobian_evaluations : int
        Analytic Jacobians of the right-hand side (implicit integrator only).
    lu_decompositions : int
        LU factorizations of the Newton matrix (implicit integrator only; the real and the
        complex factorization of one step count as one).
    newton_iterations : int
        Simplified Newton iterations over all steps (implicit integrator only).
    newton_failures : int
        Steps retried with a smaller h because Newton converged too slowly or diverged
        (implicit integrator only).
    linear_algebra : str
        The linear-algebra path of the derivative and the Newton matrices: ``"sparse"`` (rigid
        bars: the envelope LDL^T of the KKT system), ``"dense"`` or ``"banded"`` (compressible
        bars: ``simulate(linear_algebra=...)``); ``""`` where not recorded (files of 1.0).
    keep_step : str
        The Radau integrator's rule for keeping h and its LU factors (``Radau5(keep_step=...)``):
        ``"narrow"`` or ``"wide"``; ``""`` for Dormand-Prince.
    dependent_constraint_solves : int
        Rigid bars: derivative evaluations whose bar constraints were (nearly) dependent, so
        that the accelerations came from rank-truncated least squares instead of the KKT solve
        (changes accuracy: warned).
    svd_correction_steps : int
        Rigid bars: correction iterations that took the dense SVD step instead of the normal
        equations' band solve, for the same reason (costs time; the correction's tolerance
        still holds).
    dense_mass_solves : int
        Compressible bars, banded: derivative evaluations whose band LDL^T of M(q) met a small
        pivot and that solved with the dense Cholesky instead (costs time only).
    singular_mass_solves : int
        Compressible bars: derivative evaluations at a singular M(q) (``kinetic="paper"``), solved
        with its pseudo-inverse (changes accuracy: warned).
    dense_lu_fallbacks : int
        Compressible bars, banded: factorizations of a Newton matrix whose band LU met a small
        pivot and that took the dense pivoted LU instead (costs time only).
    dense_jacobians : int
        Compressible bars, banded: Jacobians formed dense (closed loop, or M(q) singular there),
        whose Newton matrices are factored dense (costs time only).
    finite_difference_jacobians : int
        Compressible bars in closed loop: Jacobians whose controller and load coupling came
        from central differences (only Newton's convergence depends on it).
    """

    accepted_steps: int
    rejected_steps: int
    rhs_evaluations: int
    correction_iterations: int
    correction_failures: int
    wall_time: float
    integrator: str = "dopri54"
    jacobian_evaluations: int = 0
    lu_decompositions: int = 0
    newton_iterations: int = 0
    newton_failures: int = 0
    linear_algebra: str = ""
    keep_step: str = ""
    dependent_constraint_solves: int = 0
    svd_correction_steps: int = 0
    dense_mass_solves: int = 0
    singular_mass_solves: int = 0
    dense_lu_fallbacks: int = 0
    dense_jacobians: int = 0
    finite_difference_jacobians: int = 0

    @property
    def fallbacks(self) -> dict:
        """The nonzero fallback counters, by field name (empty when every solve took its
        path)."""
        return {name: getattr(self, name) for name in _FALLBACKS if getattr(self, name)}

    def __repr__(self) -> str:
        # the implicit integrator's counters and the correction's only where they count
        extra = [(label, getattr(self, name)) for label, name in (
            ("corrections", "correction_iterations"), ("failed_corrections", "correction_failures"),
            ("jacobians", "jacobian_evaluations"), ("LU", "lu_decompositions"),
            ("newton", "newton_iterations")) if getattr(self, name)]
        fallbacks = sum(self.fallbacks.values())   # one figure: the fields are in .fallbacks
        return (f"SimulationStats(integrator={self.integrator!r}, steps={self.accepted_steps} "
                f"accepted + {self.rejected_steps} rejected, rhs={self.rhs_evaluations}, "
                + "".join(f"{label}={value}, " for label, value in extra)
                + (f"linalg={self.linear_algebra}, " if self.linear_algebra else "")
                + (f"fallbacks={fallbacks}, " if fallbacks else "")
                + f"wall_time={self.wall_time:.3g} s)")

    def summary(self) -> str:
        """The counters that count (nonzero), the fallbacks and the wall time as a table."""
        rows = [("integrator", self.integrator),
                ("steps", f"{self.accepted_steps} accepted, {self.rejected_steps} rejected"),
                ("derivative evaluations", self.rhs_evaluations)]
        rows += [(label, getattr(self, name)) for label, name in (
            ("correction iterations", "correction_iterations"),
            ("failed corrections", "correction_failures"), ("Jacobians", "jacobian_evaluations"),
            ("LU decompositions", "lu_decompositions"), ("Newton iterations", "newton_iterations"),
            ("Newton failures", "newton_failures"), ("linear algebra", "linear_algebra"),
            ("keep step", "keep_step")) if getattr(self, name)]
        rows += [(name.replace("_", " "), value) for name, value in self.fallbacks.items()]
        rows.append(("wall time", f"{self.wall_time:.3g} s"))
        return titled_table("SimulationStats", rows)


@dataclass(frozen=True, eq=False)
class Trajectory(Presentable):
    """The result of :func:`tenscontrol.simulate`.

    Attributes
    ----------
    t : ndarray, shape (nt,)
        Output times [s].
    nodes : ndarray, shape (nt, n_nodes, 3)
        Node positions [m].
    velocities : ndarray, shape (nt, n_nodes, 3)
        Node velocities [m/s].
    energy : ndarray, shape (nt,)
        Total energy Etot = T - G^T q + V_s (+ V_b for compressible bars) [J].
    work : ndarray, shape (nt,)
        Work w of the non-conservative forces (external loads and dampers) since t = 0 [J].
    bar_violation : ndarray, shape (nt, n_bars)
        |b| - l for each rigid bar [m]. Compressible bars have no length constraint: the
        array then has shape (nt, 0); see :attr:`bar_strains`.
    energy_violation : ndarray, shape (nt,)
        Etot - w - E0 [J]; zero for the exact solution.
    E0 : float
        Total energy of the initial state [J].
    stats : SimulationStats
    structure : Structure
    correction : str
        The correction mode used (``"none"`` for compressible bars).
    bars : str
        ``"rigid"`` or ``"compressible"``.
    kinetic : str or None
        The kinetic-energy form of compressible bars (``"consistent"`` or ``"paper"``).
    control : ControlRecord or None
        Closed loop only (``simulate(..., controller=...)``): the commands, applied force
        densities, slack and saturation of the commanded strings, and the controller's states
        (:class:`tenscontrol.actuation.ControlRecord`). The actuators' work is part of `work`.
    """

    t: np.ndarray
    nodes: np.ndarray
    velocities: np.ndarray
    energy: np.ndarray
    work: np.ndarray
    bar_violation: np.ndarray
    energy_violation: np.ndarray
    E0: float
    stats: SimulationStats
    structure: Structure
    correction: str
    bars: str = "rigid"
    kinetic: str | None = None
    control: object = None

    @property
    def bar_lengths(self) -> np.ndarray:
        """(nt, n_bars) bar lengths |n_j - n_i| [m]."""
        p = self.structure.bar_nodes
        return np.linalg.norm(self.nodes[:, p[:, 1]] - self.nodes[:, p[:, 0]], axis=2)

    @property
    def bar_strains(self) -> np.ndarray:
        """(nt, n_bars) bar strains (l - l0) / l0 [-], negative in compression.

        l0 is the bar's rest length (:attr:`Structure.bar_rest_lengths`) for compressible bars;
        for rigid bars it is the constrained length, so the strain is the constraint drift.
        """
        s = self.structure
        l0 = s.bar_rest_lengths if self.bars == "compressible" else s.bar_lengths
        return self.bar_lengths / l0 - 1.0

    def summary(self) -> str:
        """The run's figures as indented text lines (what ``tenscontrol simulate`` prints)."""
        s = self.stats
        lines = [
            f"  samples                 {len(self.t)} (t = {self.t[0]:g}..{self.t[-1]:g} s)",
            f"  steps                   {s.accepted_steps} accepted, {s.rejected_steps} rejected"
            f" ({s.integrator})",
            f"  derivative evaluations  {s.rhs_evaluations}",
        ]
        if s.integrator == "radau5":
            lines.append(f"  Jacobians, LU           {s.jacobian_evaluations}, {s.lu_decompositions}"
                         f" ({s.newton_iterations} Newton iterations)")
        if self.bars == "rigid":
            lines.append(f"  correction iterations   {s.correction_iterations}"
                         + (f" ({s.correction_failures} steps did not converge)"
                            if s.correction_failures else ""))
        lines.append(f"  wall time               {s.wall_time:.3g} s")
        if self.bars == "rigid":
            lines.append(f"  max |bar violation|     {max_abs(self.bar_violation):.3e} m")
        else:
            strain = self.bar_strains
            lines.append(f"  bar strain              {strain.min(initial=0):.4e} .. "
                         f"{strain.max(initial=0):.4e}")
        lines.append(f"  max |energy violation|  {max_abs(self.energy_violation):.3e} J"
                     + (f" ({max_abs(self.energy_violation) / abs(self.E0):.2e} of E0)"
                        if self.E0 else ""))
        if self.control is not None:
            c = self.control
            slack = [f"{int(k)} ({t:.3g} s)" for k, t in zip(c.strings, c.slack_time) if t > 0]
            sat = [f"{int(k)} ({t:.3g} s)" for k, t in zip(c.strings, c.saturated_time) if t > 0]
            lines.append(f"  control |u| max         {max_abs(c.u):.4g} N/m over "
                         f"{c.strings.size} strings")
            lines.append(f"  slack strings           {', '.join(slack) or 'none'}")
            lines.append(f"  saturated strings       {', '.join(sat) or 'none'}")
        return "\n".join(lines)

    def save(self, path):
        """Write the trajectory to the .npz file `path`, structure and settings included.

        The file (format ``tenscontrol.trajectory/1``, the one ``tenscontrol simulate``
        writes) holds the arrays under their attribute names, the structure as its
        ``tenscontrol.structure/1`` JSON, the bar model, correction, kinetic form, E0, the
        stats and, for a closed-loop run, the control record. It is written whole or not at
        all: to a unique ``<name>.<token>.part`` renamed over `path` when complete. :func:`tenscontrol.load_trajectory`
        reads it back exactly.

        Parameters
        ----------
        path : str or path-like
            The file to write (replaced if it exists).

        Returns
        -------
        pathlib.Path
            The file written.
        """
        from tenscontrol.simulation.trajectory_io import save_trajectory

        return save_trajectory(self, path)

    def to_dataframe(self):
        """The trajectory as a pandas DataFrame, one row per output time (needs pandas).

        Returns
        -------
        pandas.DataFrame
            Index ``t`` [s]; columns ``x0, y0, z0, x1, ...`` (node positions [m]),
            ``vx0, ...`` (velocities [m/s]), ``energy``, ``work``, ``energy_violation`` [J],
            ``bar_violation0, ...`` [m] (rigid bars) and, in closed loop, ``u<k>`` and
            ``applied<k>`` [N/m] for each commanded string k.

        Raises
        ------
        ImportError
            If pandas is not installed (``pip install pandas``).
        """
        from tenscontrol.simulation.trajectory_io import trajectory_dataframe

        return trajectory_dataframe(self)

    def __repr__(self) -> str:
        if not len(self.t):
            return f"Trajectory(bars={self.bars!r}, samples=0)"
        if self.bars == "compressible":
            s = self.bar_strains
            bars = f"bar strain=[{s.min(initial=0):.2e}, {s.max(initial=0):.2e}]"
        else:
            bars = f"max|bar viol|={max_abs(self.bar_violation):.2g} m"
        control = (f", commanded_strings={self.control.strings.size}"
                   if self.control is not None else "")
        return (f"Trajectory(bars={self.bars!r}, samples={len(self.t)}, "
                f"t=[{self.t[0]:g}, {self.t[-1]:g}] s, {bars}, "
                f"max|E viol|={max_abs(self.energy_violation):.2g} J{control})")

    def _repr_html_(self) -> str:
        if not len(self.t):
            return html_table([], caption=repr(self))
        return summary_html(f"Trajectory of {self.structure.name!r} ({self.bars} bars)\n"
                            + self.summary())


def max_abs(a: np.ndarray) -> float:
    """The largest absolute entry of `a`, 0 for an empty array."""
    return float(np.abs(a).max(initial=0.0))


class SimulationError(RuntimeError):
    """A simulation failed; carries the trajectory up to the last accepted step.

    Attributes
    ----------
    time : float
        Time [s] of the last accepted step before the failure.
    cause : str
        What went wrong and what to try.
    trajectory : Trajectory
        Everything computed up to the failure.
    """

    def __init__(self, time: float, cause: str, trajectory: Trajectory):
        super().__init__(f"simulation failed at t = {time:.6g} s: {cause} "
                         f"(the trajectory up to there is in the exception's .trajectory)")
        self.time = time
        self.cause = cause
        self.trajectory = trajectory

    def __repr__(self) -> str:
        # str() is the whole message; the repr names the cause, shortened to keep one line
        cause = textwrap.shorten(self.cause, 100, placeholder=" ...")
        return (f"SimulationError(t={self.time:.6g} s, samples={len(self.trajectory.t)}, "
                f"cause={cause!r})")


class SimulationInterrupted(KeyboardInterrupt):
    """A simulation was interrupted (Ctrl-C, or a KeyboardInterrupt raised by a loads function
    or a controller); carries the trajectory up to the last recorded step.

    A subclass of KeyboardInterrupt, not of Exception: ``except Exception`` in a parameter
    loop lets it through, so Ctrl-C stops the loop.

    Attributes
    ----------
    time : float
        Time [s] reached: the last accepted step before the interrupt (as in SimulationError).
    trajectory : Trajectory
        Everything computed up to there; its arrays all have the same length.
    """

    def __init__(self, time: float, trajectory: Trajectory):
        super().__init__(f"simulation interrupted at t = {time:.6g} s (the trajectory up to "
                         "there is in the exception's .trajectory)")
        self.time = time
        self.trajectory = trajectory

    def __repr__(self) -> str:
        return f"SimulationInterrupted(t={self.time:.6g} s, samples={len(self.trajectory.t)})"
