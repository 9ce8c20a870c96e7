"""What the static solver returns and raises: :class:`StaticEquilibrium`, :class:`NewtonHistory`,
:class:`StaticsError` and :class:`MechanismError` (docs/theory.md, "Static equilibrium under loads
and form-finding").

Kept apart from the solver (:mod:`tenscontrol.statics.solve`) so that each module stays
short; the mechanism diagnosis (which nodes move, along which directions) lives here too, since
it only reads a stiffness matrix and a residual.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from tenscontrol.model.structure import Structure
from tenscontrol.model.tables import Presentable, html_table

__all__ = ["MechanismError", "NewtonHistory", "StaticEquilibrium", "StaticsError",
           "describe_motion", "loaded_zero_modes", "working_modes"]


class StaticsError(RuntimeError):
    """The static solver found no equilibrium (Newton and load stepping both failed).

    Attributes
    ----------
    history : NewtonHistory or None
        The iterations made before the failure, with the routes tried (``history.routes``).
    route : str or None
        The route that failed last.
    """

    def __init__(self, message: str, history: NewtonHistory | None = None):
        super().__init__(message)
        self.history = history

    @property
    def route(self) -> str | None:
        """The route that failed last (:attr:`NewtonHistory.route`), None without a history."""
        return None if self.history is None else self.history.route

    def __repr__(self) -> str:
        name = type(self).__name__
        return f"{name}({textwrap.shorten(str(self), 150, placeholder=' ...')!r})"


class MechanismError(StaticsError):
    """The loads drive a motion that no member resists: a mechanism no configuration holds.

    Attributes
    ----------
    motion : ndarray, shape (n_nodes, 3)
        The free motion (unit norm) along which the loads do work and the stiffness is zero.
    nodes : tuple of int
        The nodes that move most in it (largest first).
    history : NewtonHistory or None
        The iterations made before the diagnosis (None when found before any).
    """

    def __init__(self, message: str, motion: np.ndarray, nodes: tuple,
                 history: NewtonHistory | None = None):
        super().__init__(message, history)
        self.motion = motion
        self.nodes = nodes


#: The columns of :meth:`NewtonHistory.summary`.
_HISTORY_HEADER = ("it", "load", "residual [N]", "step", "damping", "switches")


@dataclass(frozen=True, eq=False)
class NewtonHistory(Presentable):
    """The iterations of :func:`tenscontrol.static_equilibrium`, one row per Newton iterate.

    Attributes
    ----------
    load_factor : ndarray, shape (k,)
        The load factor t of the stage the step belongs to (1 is the full load).
    residual : ndarray, shape (k,)
        Max abs unbalanced force on the free coordinates at the iterate [N].
    step : ndarray, shape (k,)
        Line-search step length taken from the iterate; 0 for the converged iterate of a load
        step (the last row of each) and for the iterate where a load step was given up.
    damping : ndarray, shape (k,)
        Levenberg shift added to the stiffness for the step [N/m] (0: a pure Newton step).
    active_changes : ndarray of int, shape (k,)
        Strings that switched between taut and slack in the step.
    load_steps : tuple of float
        The load factors reached, in order (``(1.0,)`` when the full load worked at once).
    failed_load_steps : tuple of float
        Load factors tried and given up (Newton failed), before a smaller step was taken.
    trials : ndarray of int, shape (k,)
        Trial points the line search evaluated for the step from the iterate (each one a
        projection onto the bar lengths and a force evaluation); 0 where no step was taken.
    routes : tuple of str
        The routes tried, in order, each as ``"name: outcome"``: ``"newton"`` (Newton at the
        full load from the start), ``"path"`` (the path of equilibria from the start),
        ``"unloaded start + path"`` (the path from the stable unloaded equilibrium near the
        start), ``"load steps"`` (Newton at fixed load factors); e.g. ``("newton: skipped
        (...)", "path: answered")``.
    """

    load_factor: np.ndarray
    residual: np.ndarray
    step: np.ndarray
    damping: np.ndarray
    active_changes: np.ndarray
    load_steps: tuple
    failed_load_steps: tuple
    trials: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    routes: tuple = ()

    @property
    def route(self) -> str:
        """The name of the last route tried: the one that answered, or failed last."""
        return self.routes[-1].split(":")[0] if self.routes else ""

    @property
    def line_search_trials(self) -> int:
        """Trial points evaluated by the line search in all load steps."""
        return int(self.trials.sum())

    @property
    def iterations(self) -> int:
        """Number of Newton steps taken in all load steps."""
        return int(np.count_nonzero(self.step))

    def __repr__(self) -> str:
        last = f"{self.residual[-1]:.3g} N" if self.residual.size else "-"
        return (f"NewtonHistory(route={self.route!r}, iterations={self.iterations}, "
                f"load_steps={len(self.load_steps)}, "
                f"failed_load_steps={len(self.failed_load_steps)}, last_residual={last})")

    def _rows(self) -> list:
        """The iterations as rows of formatted cells (:data:`_HISTORY_HEADER`)."""
        return [(f"{k}", f"{t:.4g}", f"{r:.3e}", f"{a:.3g}", f"{mu:.3g}", f"{int(c)}")
                for k, (t, r, a, mu, c) in enumerate(zip(
                    self.load_factor, self.residual, self.step, self.damping,
                    self.active_changes))]

    def _load_steps(self) -> str:
        return (f"load steps: {', '.join(f'{t:.4g}' for t in self.load_steps)}"
                + (f"; failed: {', '.join(f'{t:.4g}' for t in self.failed_load_steps)}"
                   if self.failed_load_steps else "")
                + (f"; routes: {'; '.join(self.routes)}" if self.routes else ""))

    def summary(self) -> str:
        """A table: load factor, residual, step length, damping and active-set changes."""
        widths = (4, 8, 15, 8, 11, 10)
        lines = ["".join(f"{h:>{w}}" for h, w in zip(_HISTORY_HEADER, widths))]
        lines += ["".join(f"{c:>{w}}" for c, w in zip(row, widths)) for row in self._rows()]
        lines.append(self._load_steps())
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return html_table(self._rows(), header=_HISTORY_HEADER,
                          caption=f"NewtonHistory; {self._load_steps()}")


@dataclass(frozen=True, eq=False)
class StaticEquilibrium(Presentable):
    """A configuration where gravity, loads, strings, springs and bars balance.

    Attributes
    ----------
    structure : Structure
        The input structure moved to `q` with its rest lengths kept
        (``structure.with_nodes(q)``): a simulation started from it at rest stays there.
    q : ndarray, shape (3n,)
        The equilibrium configuration [m], node by node.
    gamma : ndarray, shape (n_strings,)
        String force densities at q [N/m] (0 for slack strings).
    bar_force_densities : ndarray, shape (n_bars,)
        Bar force densities [N/m], negative in compression: ``-2 lambda`` for rigid bars (0
        for a bar whose ends are both fully fixed: its force goes into the supports), the
        bar law for compressible bars.
    reactions : ndarray, shape (n_nodes, 3)
        Support force on each fixed coordinate [N]; zero on free coordinates.
    loads : ndarray, shape (n_nodes, 3)
        The external loads balanced (gravity not included) [N].
    residual : float
        Max abs unbalanced force on the free coordinates at q [N], recomputed from the
        member laws after convergence.
    relative_residual : float
        `residual` over the load scale: the largest nodal gravity-plus-load force (the
        largest member force when there is no load) [-].
    constraint_violation : float
        Max abs bar length error ``|l - L|`` of rigid bars [m] (0 for compressible bars).
    displacement : float
        Largest node displacement from the input structure's nodes [m].
    min_stiffness : float
        Smallest eigenvalue of the reduced tangent stiffness at q [N/m] (on the constraint
        tangent space, less the rigid motions the loads leave rigid: translations, rotations
        about the loads' common axis); > 0: a stable equilibrium. A rigid rotation the loads
        stiffen stays: a point mass hanging on a pinned bar gives ``W / L``.
    slack : ndarray of bool, shape (n_strings,)
        Strings at or below their rest length at q.
    bars : str
        ``"rigid"`` or ``"compressible"``.
    history : NewtonHistory
        The Newton iterations and load steps.
    linear_algebra : str
        The path of the linear solves: ``"sparse"`` (a Cholesky factor of the bar columns'
        normal equations and a sparse LU of the Newton step's KKT matrix).
    dense_bar_solves : int
        Bar-column solves (projection onto the bar lengths, bar force densities) that took
        the dense SVD least squares instead, where the bars were (nearly) dependent. Same
        accuracy (rank-revealing), more time; the residual above is certified either way.
    dense_kkt_solves : int
        Newton steps whose KKT system took the dense solve (then SVD least squares) instead
        of the sparse LU: a singular or ill-conditioned system (a mechanism, slack strings).
    dense_eigensolves : int
        Stability tests (``min_stiffness``) and mechanism checks of a large structure (from
        ``tenscontrol.statics.spectrum.SPARSE_MIN_FREE`` free coordinates) that took the dense
        null-space basis and eigendecomposition because the sparse Lanczos path could not
        vouch for its answer (dependent bars, no convergence, an unstable equilibrium).
        Smaller structures take the dense path by design, uncounted.
    """

    structure: Structure
    q: np.ndarray
    gamma: np.ndarray
    bar_force_densities: np.ndarray
    reactions: np.ndarray
    loads: np.ndarray
    residual: float
    relative_residual: float
    constraint_violation: float
    displacement: float
    min_stiffness: float
    slack: np.ndarray
    bars: str
    history: NewtonHistory
    linear_algebra: str = "sparse"
    dense_bar_solves: int = 0
    dense_kkt_solves: int = 0
    dense_eigensolves: int = 0

    @property
    def route(self) -> str:
        """The route that answered (``history.routes`` lists every route tried and why)."""
        return self.history.route

    @property
    def fallback_counts(self) -> dict:
        """The linear solves that left the sparse path, by kind: ``{"dense_bar": ...,
        "dense_kkt": ..., "dense_eigen": ...}``."""
        return {"dense_bar": self.dense_bar_solves, "dense_kkt": self.dense_kkt_solves,
                "dense_eigen": self.dense_eigensolves}

    @property
    def fallbacks(self) -> int:
        """Linear solves that left the sparse path (dense_bar_solves + dense_kkt_solves +
        dense_eigensolves)."""
        return self.dense_bar_solves + self.dense_kkt_solves + self.dense_eigensolves

    @property
    def stable(self) -> bool:
        """Whether the reduced tangent stiffness is positive definite at q."""
        return bool(self.min_stiffness > 0)

    def __repr__(self) -> str:
        return (f"StaticEquilibrium(structure={self.structure.name!r}, bars={self.bars!r}, "
                f"route={self.route!r}, "
                f"residual={self.residual:.3g} N (rel {self.relative_residual:.2g}), "
                f"displacement={self.displacement:.4g} m, slack={int(self.slack.sum())}, "
                f"iterations={self.history.iterations}, load_steps={len(self.history.load_steps)}"
                + "".join(f", {k}={v}" for k, v in self.fallback_counts.items() if v) + ")")

    def _head(self) -> str:
        """The figures of the solve, on one line."""
        g = self.gamma[~self.slack]
        return (f"Static equilibrium of {self.structure.name!r} ({self.bars} bars): residual "
                f"{self.residual:.3g} N ({self.relative_residual:.3g} of the load scale), bar "
                f"length error {self.constraint_violation:.3g} m, largest displacement "
                f"{self.displacement:.6g} m, taut strings' gamma in "
                f"[{g.min(initial=np.inf):.6g}, {g.max(initial=-np.inf):.6g}] N/m, "
                f"{int(self.slack.sum())} slack, "
                f"{'stable' if self.stable else 'NOT stable'} (min stiffness "
                f"{self.min_stiffness:.4g} N/m); linear algebra {self.linear_algebra}"
                + (f" ({self.dense_bar_solves} dense bar solves, {self.dense_kkt_solves} dense "
                   f"KKT solves, {self.dense_eigensolves} dense eigensolves)"
                   if self.fallbacks else ""))

    def summary(self) -> str:
        """The figures of the solve, then the Newton history table."""
        return self._head() + "\n" + self.history.summary()

    def _repr_html_(self) -> str:
        h = self.history
        return html_table(h._rows(), header=_HISTORY_HEADER,
                          caption=f"{self._head()}; {h._load_steps()}")


def describe_motion(v: np.ndarray, n_show: int = 4) -> tuple[str, tuple]:
    """A displacement field (3n,) as "node 3 along (0, 0, -1), node 5 along ..." and its nodes."""
    V = v.reshape(-1, 3)
    size = np.linalg.norm(V, axis=1)
    order = [int(i) for i in np.argsort(-size) if size[i] > 1e-3 * size.max()]
    parts = []
    for i in order[:n_show]:
        d = np.round(V[i] / size[i], 3) + 0.0  # + 0.0: no "-0"
        parts.append(f"node {i} along ({d[0]:.3g}, {d[1]:.3g}, {d[2]:.3g})")
    more = f" and {len(order) - n_show} more nodes" if len(order) > n_show else ""
    return ", ".join(parts) + more, tuple(order)


def loaded_zero_modes(K: np.ndarray, Z: np.ndarray, force: np.ndarray,
                      rtol: float = 1e-8, rotations: np.ndarray | None = None) -> np.ndarray:
    """Displacements (3n, m) in span(Z) of (near) zero stiffness along which `force` does work.

    `K` (3n, 3n) is the tangent stiffness, `Z` (3n, r) an orthonormal basis of the admissible
    displacements, `force` (3n,) the unbalanced force. A mode counts when its eigenvalue of
    ``Z^T K Z`` is within `rtol` of the largest entry of K in size and the force's work along
    it is more than 1e-6 of the force's size. The part of the modes in span(`rotations`)
    (3n, k), orthonormal rigid rotations, does not count: the potential of dead loads along a
    rigid rotation is periodic, so it has a minimum (a pendulum at its horizontal position is
    momentarily without stiffness, yet hangs still below its pin).
    """
    if Z.shape[1] == 0:
        return np.zeros((K.shape[0], 0))
    Kr = Z.T @ K @ Z
    w, V = scipy.linalg.eigh(0.5 * (Kr + Kr.T))
    # the scale is K's largest entry: Z^T K Z may vanish to rounding on a pure mechanism
    top = max(np.abs(w).max(initial=0.0), np.abs(K).max(initial=0.0), 1e-300)
    return working_modes(Z @ V[:, np.abs(w) <= rtol * top], force, rotations)


def working_modes(modes: np.ndarray, force: np.ndarray,
                  rotations: np.ndarray | None = None) -> np.ndarray:
    """The part of the zero-stiffness `modes` (3n, m), orthonormal, that is no rigid rotation
    and along which `force` (3n,) does work (:func:`loaded_zero_modes`), orthonormal, the
    first along the force's projection onto them."""
    if rotations is not None and rotations.shape[1] and modes.shape[1]:
        # absolute tolerance: the modes are orthonormal, their part outside is what is left
        U, sv, _ = np.linalg.svd(modes - rotations @ (rotations.T @ modes),
                                 full_matrices=False)
        modes = U[:, sv > 1e-6]
    work = np.abs(modes.T @ force)
    modes = modes[:, work > 1e-6 * max(np.linalg.norm(force), 1e-300)]
    if modes.shape[1] > 1:
        # the first along the force's part in their span: the motion the force drives, the
        # same whichever basis of a repeated eigenvalue the eigensolver returned
        U, _, _ = np.linalg.svd(modes.T @ force[:, None])
        modes = modes @ U
    return modes
