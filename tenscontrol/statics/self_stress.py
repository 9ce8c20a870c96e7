"""Self-stress of the commanded strings: the force densities that make no nodal force.

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

S holds at the configuration it is computed at; the run-time wrapping of a controller
(:mod:`tenscontrol.control.allocation`) computes it once, at the controller's operating point.
A string whose two end nodes are fully fixed is a self-stress direction on its own (its force
goes into the supports).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.optimize

from tenscontrol import validation
from tenscontrol.mechanics.geometry import member_columns, nodal_vector
from tenscontrol.mechanics.rigid.model import constraint_jacobian
from tenscontrol.model.tables import Presentable, titled_table, value_range

__all__ = ["Allocation", "RANK_RTOL", "SelfStress", "equilibrium_matrix", "self_stress"]

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
