"""Self-stress allocation: keep every commanded string taut without changing the nodal forces.

A command u (nu,) [N/m] on the commanded strings acts on the structure through the nodal forces
``-Yhat_c(q) u`` (docs/theory.md, "The Lagrangian model in Cartesian nodal coordinates"); of
these, the rigid bars and the supports take the part along the constraint normals, so the motion
sees only ``Z^T Yhat_c(q) u``, Z an orthonormal basis of the null space of the constraint
Jacobian J_Phi(q) (the same elimination as the linearization's ``B = -W P Yhat``, theory
"Linearization", and the prestress design's reduced equilibrium, theory "Prestress").

Where the commanded strings outnumber the motions they drive, ``E = Z^T Yhat_c(q)`` has a null
space: the self-stress directions S (nu, r) of the commanded strings. ``u + S c`` makes the same
nodal forces as u (``B S = 0`` in the linear model), so a controller's command can be moved
along S to keep every string's force density between its bounds. :meth:`SelfStress.allocate`
chooses the least such move,

    min |S c|  subject to  gamma_min <= gamma_base + u + S c <= gamma_max,

a least-distance program, solved exactly by one non-negative least-squares problem (Lawson and
Hanson, *Solving Least Squares Problems*, 1974, ch. 23). Its solution is unique and depends
continuously on u, so the allocated loop stays continuous. When no c meets the bounds, a linear
program finds the largest margin that can be met and the allocation keeps that (the
:class:`Allocation` says so, and by how much the bounds are missed).

S is computed once, at the controller's operating point (where it was designed): away from it
the nodal forces of S c are of the order of the displacement times c, the same order the
linearization neglects. A string whose two end nodes are fully fixed is a self-stress direction
on its own (its force goes into the supports).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.optimize

from tenscontrol import validation
from tenscontrol.feedback.controllers import Controller, controller_table, runtime_controller
from tenscontrol.feedback.sampled import SampledController, is_sampled, sampled_table
from tenscontrol.mechanics.geometry import member_columns, nodal_vector
from tenscontrol.mechanics.laws import string_densities
from tenscontrol.mechanics.rigid.model import constraint_jacobian
from tenscontrol.model.tables import Presentable, titled_table, value_range

__all__ = ["AllocatedController", "AllocatedSampled", "Allocation", "SelfStress", "allocated", "equilibrium_matrix",
           "self_stress"]

#: Singular values of the equilibrium matrix below this fraction of the largest count as zero.
RANK_RTOL = 1e-10


@dataclass(frozen=True)
class Allocation(Presentable):
    """The result of :meth:`SelfStress.allocate`.

    Attributes
    ----------
    command : ndarray, shape (nu,)
        The allocated command u + S c [N/m].
    change : ndarray, shape (nu,)
        S c [N/m]: along the self-stress directions, so it makes no nodal force.
    margin : float
        Least distance of the allocated force densities to their bounds [N/m]
        (``min(gamma - gamma_min, gamma_max - gamma)``); negative where the bounds are missed.
    feasible : bool
        Whether every bound holds (to rounding).
    solver : str
        What found the move: ``"none"`` (the command kept the bounds, or no self-stress),
        ``"nnls"`` (the least-distance program by SciPy's NNLS), ``"bvls"`` (by
        ``lsq_linear``'s BVLS, taken when NNLS stops at its iteration limit, as SciPy
        1.12-1.13's can); when the bounds cannot all be met, ``"linprog+nnls"`` or
        ``"linprog+bvls"`` (the best margin by HiGHS' linear program, then the least move
        that keeps it) or ``"linprog"`` (the linear program's own move).
    """

    command: np.ndarray
    change: np.ndarray
    margin: float
    feasible: bool
    solver: str = "none"

    def __repr__(self) -> str:
        return (f"Allocation(commanded_strings={self.command.size}, feasible={self.feasible}, "
                f"margin={self.margin:.4g} N/m, |change|={np.linalg.norm(self.change):.4g} N/m, "
                f"solver={self.solver!r})")

    def summary(self) -> str:
        """Feasibility, the margin to the bounds and the size of the change as a table."""
        return titled_table("Allocation", [
            ("commanded strings", f"{self.command.size}"),
            ("feasible", "yes" if self.feasible else "no (best margin kept)"),
            ("margin to the bounds", f"{self.margin:.4g} N/m"),
            ("|change| (along self-stress)", f"{np.linalg.norm(self.change):.4g} N/m"),
            ("allocated command", value_range(self.command, "N/m")),
            ("solver", self.solver)])


@dataclass(frozen=True, eq=False)
class SelfStress(Presentable):
    """The self-stress directions of the commanded strings at a configuration, and the bounds.

    Attributes
    ----------
    strings : ndarray of int, shape (nu,)
        The commanded strings, in command order.
    basis : ndarray, shape (nu, r)
        Orthonormal basis S of the null space of the commanded strings' equilibrium matrix
        ``Z^T Yhat_c(q)`` (r = 0: no self-stress; the allocation then changes nothing).
    q : ndarray, shape (3n,)
        The configuration [m].
    gamma_min, gamma_max : ndarray, shape (nu,)
        Bounds of the commanded force densities [N/m] (gamma_max may be inf).
    """

    strings: np.ndarray
    basis: np.ndarray
    q: np.ndarray
    gamma_min: np.ndarray
    gamma_max: np.ndarray

    @property
    def dimension(self) -> int:
        """r, the number of independent self-stress directions."""
        return self.basis.shape[1]

    def __repr__(self) -> str:
        return (f"SelfStress(commanded_strings={self.strings.size}, dimension={self.dimension}, "
                f"gamma_min=[{self.gamma_min.min(initial=0):.4g}, "
                f"{self.gamma_min.max(initial=0):.4g}] N/m)")

    def summary(self) -> str:
        """The commanded strings, the self-stress dimension and the bounds as a table."""
        return titled_table("SelfStress", [
            ("commanded strings", textwrap.shorten(
                f"{self.strings.size}: {', '.join(str(int(k)) for k in self.strings)}", 70,
                placeholder=" ...")),
            ("self-stress dimension", f"{self.dimension}"),
            ("gamma_min", value_range(self.gamma_min, "N/m")),
            ("gamma_max", value_range(self.gamma_max, "N/m"))])

    def allocate(self, u, base) -> Allocation:
        """The least move of the command u along the self-stresses that keeps the bounds.

        Parameters
        ----------
        u : array_like, shape (nu,)
            The command [N/m].
        base : array_like, shape (nu,)
            What u adds to [N/m]: the operating-point force densities (``kind="control"``)
            or the strings' elastic law at the current configuration (``kind="passive"``).

        Returns
        -------
        Allocation
        """
        u = np.asarray(u, dtype=float).reshape(-1)
        v = np.asarray(base, dtype=float).reshape(-1) + u
        G, h = self._rows(v)
        scale = max(float(np.abs(v).max(initial=0.0)),
                    float(np.abs(self.gamma_min).max(initial=0.0)))   # [N/m]: no 1 N/m floor
        tol = 1e-9 * scale
        if self.dimension == 0 or np.all(h <= 0.0):    # u keeps the bounds already
            c, solver = np.zeros(self.dimension), "none"
        else:
            c, solver = _least_distance(G, h, tol)
            if c is None:   # no c meets the bounds: keep the best margin there is
                best, c_lp = _best_margin(G, h)
                c, solver = _least_distance(G, h + best - tol, tol)
                c, solver = (c_lp, "linprog") if c is None else (c, "linprog+" + solver)
        change = self.basis @ c
        margin = float((G @ c - h).min(initial=np.inf)) if h.size else np.inf
        return Allocation(u + change, change, margin, bool(margin >= -tol), solver)

    def _rows(self, v):
        """(G, h): the bounds as ``G c >= h`` for the force densities v + S c."""
        upper = np.isfinite(self.gamma_max)
        G = np.vstack([self.basis, -self.basis[upper]])
        h = np.concatenate([self.gamma_min - v, v[upper] - self.gamma_max[upper]])
        return G, h


def _least_distance(G: np.ndarray, h: np.ndarray, tol: float):
    """(c, solver): min |c| subject to G c >= h by NNLS (Lawson and Hanson, ch. 23), or by
    BVLS where NNLS stops at its iteration limit; c None when infeasible."""
    r = G.shape[1]
    # h [N/m] in units of its largest entry: then |c| ~ 1 and the residual's last entry,
    # 1 / (1 + |c|^2), keeps its digits (with h in N/m, c ~ 1e4 N/m lost 8 of them)
    unit = float(h.max(initial=0.0)) or 1.0
    E = np.vstack([G.T, h[None, :] / unit])
    f = np.zeros(r + 1)
    f[r] = 1.0
    solver = "nnls"
    try:
        w, _ = scipy.optimize.nnls(E, f)
    except RuntimeError:
        # SciPy 1.12-1.13's rewritten NNLS can cycle on ordinary T-bar cases and stop at its
        # iteration limit; the bounded-variable least squares (BVLS, another active-set
        # code) solves the same problem, min |E w - f| with w >= 0
        w = scipy.optimize.lsq_linear(E, f, bounds=(0.0, np.inf), method="bvls",
                                      tol=1e-15).x
        solver = "bvls"
    res = E @ w - f
    if abs(res[r]) <= 1e-14:  # E w = f solvable: the constraints contradict each other
        return None, solver
    c = -res[:r] / res[r] * unit
    return (c if np.all(G @ c - h >= -tol) else None), solver


def _best_margin(G: np.ndarray, h: np.ndarray):
    """(t, c): the largest t with ``G c >= h + t`` and such a c (a linear program)."""
    r = G.shape[1]
    cost = np.zeros(r + 1)
    cost[r] = -1.0
    A = np.hstack([-G, np.ones((G.shape[0], 1))])
    res = scipy.optimize.linprog(cost, A_ub=A, b_ub=-h, bounds=[(None, None)] * (r + 1),
                                 method="highs")
    if res.status != 0:
        raise RuntimeError(f"self-stress allocation: the margin LP failed: {res.message}")
    return float(res.x[r]), res.x[:r]


def equilibrium_matrix(structure, strings, q) -> tuple[np.ndarray, np.ndarray]:
    """(Z, E): an orthonormal basis Z (3n, d) of the motions the constraints allow at q (rigid
    bars and fixed coordinates: the null space of J_Phi(q)) and ``E = Z^T Yhat_c(q)`` (d, nu),
    the commanded strings' nodal forces on them per unit force density (the forces are -Yhat u).

    `strings` (nu,) are string indices, `q` (3n,) a configuration [m]."""
    J = constraint_jacobian(structure, q)
    Z = scipy.linalg.null_space(J) if J.shape[0] else np.eye(q.size)
    return Z, Z.T @ member_columns(structure.string_nodes[strings], q)


def self_stress(structure, strings=None, q=None, *, gamma_min=0.0, gamma_max=None) -> SelfStress:
    """The self-stress directions of the commanded strings at a configuration (rigid bars).

    Parameters
    ----------
    structure : Structure
    strings : array_like of int, optional
        The commanded strings, in command order; ``structure.actuated_strings`` by default.
    q : array_like, shape (3n,) or (n, 3), optional
        The configuration [m]; the structure's nodes by default.
    gamma_min : float or array_like, shape (nu,)
        Least force density of each commanded string [N/m] (>= 0 keeps it taut).
    gamma_max : float or array_like, shape (nu,), optional
        Largest force density [N/m]; the strings' ``gamma_max`` by default.

    Returns
    -------
    SelfStress
    """
    strings = (np.asarray(structure.actuated_strings, dtype=np.int64) if strings is None else
               validation.indices("self_stress: strings", strings, structure.n_strings,
                                  what="string"))
    q = nodal_vector(structure.n_nodes, "self_stress: q", q, structure.nodes.reshape(-1))
    nu = strings.size
    lower = validation.per_item("self_stress: gamma_min", gamma_min, nu, "N/m",
                                items=" (one per commanded string)")
    upper = (structure.string_gamma_max[strings].astype(float) if gamma_max is None else
             _upper_bounds(gamma_max, nu))
    bad = np.flatnonzero(lower > upper)
    if bad.size:
        k = int(bad[0])
        raise ValueError(f"self_stress: gamma_min of string {int(strings[k])} ({lower[k]:.4g} "
                         f"N/m) exceeds its gamma_max ({upper[k]:.4g} N/m)")
    _, E = equilibrium_matrix(structure, strings, q)
    basis = scipy.linalg.null_space(E, rcond=RANK_RTOL) if nu else np.zeros((0, 0))
    for name, a in (("strings", strings), ("basis", basis), ("q", q), ("lower", lower),
                    ("upper", upper)):
        a.setflags(write=False)
    return SelfStress(strings, basis, q, lower, upper)


def _upper_bounds(value, nu: int) -> np.ndarray:
    """gamma_max: a number or nu of them, each > 0, inf allowed."""
    a = validation.real_array("self_stress: gamma_max", value, "N/m")
    a = np.full(nu, float(a)) if a.ndim == 0 else a.reshape(-1)
    if a.shape != (nu,) or np.any(np.isnan(a)) or np.any(a <= 0):
        raise ValueError(f"self_stress: gamma_max must be a positive number or {nu} of them "
                         f"(inf for no bound) [N/m], got {validation.show(value)}")
    return a


class _Allocating:
    """What the continuous and the sampled allocated controllers share: the wrapped
    controller's strings, kind and states, and the base the commands add to."""

    def __init__(self, controller, structure, self_stress: SelfStress):
        self.controller = controller
        self.self_stress = self_stress
        pairs = structure.string_nodes[self_stress.strings]
        self._pairs = pairs
        self._law = (structure.string_stiffness[self_stress.strings],
                     structure.string_rest_lengths[self_stress.strings],
                     structure.string_is_spring[self_stress.strings])

    strings = property(lambda self: self.controller.strings)
    gamma_ref = property(lambda self: self.controller.gamma_ref)
    kind = property(lambda self: self.controller.kind)
    n_states = property(lambda self: int(self.controller.n_states))

    @property
    def unallocated(self):
        """The wrapped controller: the one whose linear prediction this loop has."""
        return self.controller

    def __getattr__(self, name):
        # q_ref, K, measurement, ...: what the wrapped controller has (verify reads q_ref)
        if name.startswith("_") or name in ("controller", "self_stress"):
            raise AttributeError(name)
        return getattr(self.controller, name)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(of={type(self.controller).__name__}, "
                f"kind={self.kind!r}, commanded_strings={self.self_stress.strings.size}, "
                f"self_stress_dimension={self.self_stress.dimension})")

    _table = staticmethod(controller_table)

    def summary(self) -> str:
        """The wrapped controller, the commanded strings and the bounds kept as a table."""
        return self._table(
            self, ("wraps", type(self.controller).__name__),
            ("self-stresses", f"{self.self_stress.dimension} independent"),
            ("gamma_min", value_range(self.self_stress.gamma_min, "N/m")),
            ("gamma_max", value_range(self.self_stress.gamma_max, "N/m")),
            law="u + S c, the least move that keeps the bounds")

    def initial_state(self):
        return self.controller.initial_state()

    def base(self, q) -> np.ndarray:
        """What the command adds to at q (nu,) [N/m]: gamma_ref, or the strings' law."""
        if self.kind == "control":
            return np.asarray(self.gamma_ref, dtype=float)
        N = np.asarray(q, dtype=float).reshape(-1, 3)
        lengths = np.linalg.norm(N[self._pairs[:, 1]] - N[self._pairs[:, 0]], axis=1)
        return string_densities(*self._law[:2], lengths, self._law[2])


class AllocatedController(_Allocating, Controller):
    """A controller whose every command is moved along the self-stresses to keep the bounds.

    Built by :func:`allocated`. It commands the same strings, with the same kind and internal
    states, as the controller it wraps; :meth:`force_densities` returns
    ``self_stress.allocate(u, base).command`` for the wrapped controller's u, with base the
    operating-point force densities (``kind="control"``) or the strings' law at q
    (``kind="passive"``).

    Attributes
    ----------
    controller : Controller
        The wrapped controller (its linear prediction is this one's: ``B S = 0``).
    self_stress : SelfStress
    """

    def state_derivative(self, t, q, qd, xc):
        return self.controller.state_derivative(t, q, qd, xc)

    def force_densities(self, t, q, qd, xc):
        u = self.controller.force_densities(t, q, qd, xc)
        return self.self_stress.allocate(u, self.base(q)).command


class AllocatedSampled(_Allocating, SampledController):
    """A sampled controller whose every command is moved along the self-stresses to keep the
    bounds at the sample (built by :func:`allocated` from a
    :class:`~tenscontrol.SampledController`: a discretized LQR, a ``DiscreteLQG``, your own).

    :meth:`update` returns ``self_stress.allocate(u_k, base(q_k)).command`` for the wrapped
    controller's u_k and its next state unchanged (an estimator inside it goes on with the
    command it computed: the allocated one makes the same nodal forces at the operating
    point). Between samples the held command's strings follow the motion, as any held
    command's do.

    Attributes
    ----------
    controller : SampledController
        The wrapped controller (its linear prediction is this one's: ``B S = 0``).
    self_stress : SelfStress
    """

    period = property(lambda self: self.controller.period)
    delay = property(lambda self: self.controller.delay)
    _table = staticmethod(sampled_table)      # with the period and delay

    def update(self, k, t, q, qd, xk):
        u, x_next = self.controller.update(k, t, q, qd, xk)
        return self.self_stress.allocate(u, self.base(q)).command, x_next

    def sample_info(self) -> dict:
        return dict(self.controller.sample_info())


def allocated(controller, structure, *, gamma_min=0.0, gamma_max=None,
              q=None) -> AllocatedController:
    """`controller` with self-stress allocation: its commands keep every string within bounds.

    Parameters
    ----------
    controller : Controller or SampledController
        Any controller (``lqr(...).controller``, ``hinfsyn(...).controller``, a sampled one
        such as ``dlqr(...).controller`` or ``discrete_lqg(...).controller``, your own); a
        design (``lqr(...)``) gives its ``.controller``.
    structure : Structure
        The structure it runs on.
    gamma_min : float or array_like, shape (nu,)
        Least force density of each commanded string [N/m].
    gamma_max : float or array_like, shape (nu,), optional
        Largest force density [N/m]; the strings' ``gamma_max`` by default.
    q : array_like, shape (3n,), optional
        Where the self-stresses are computed: the controller's ``q_ref`` if it has one, else
        the structure's nodes.

    Returns
    -------
    AllocatedController or AllocatedSampled
        (the latter for a sampled `controller`). Its commands make the same nodal forces as the controller's (through the bar
        constraints, at q) and keep ``gamma_min <= gamma <= gamma_max`` whenever some
        self-stress combination can; otherwise the largest margin that can be kept.
    """
    controller = runtime_controller(controller)
    command = ("update",) if is_sampled(controller) else ("force_densities",)
    missing = [a for a in ("strings", "gamma_ref", "kind") + command
               if not hasattr(controller, a)]
    if missing:
        raise TypeError(f"allocated: controller must be a Controller or SampledController (it "
                        f"lacks {', '.join(missing)}), got {type(controller).__name__}")
    if q is None and hasattr(controller, "q_ref"):
        q = controller.q_ref
    stress = self_stress(structure, np.asarray(controller.strings, dtype=np.int64), q,
                         gamma_min=gamma_min, gamma_max=gamma_max)
    if is_sampled(controller):
        return AllocatedSampled(controller, structure, stress)
    return AllocatedController(controller, structure, stress)
