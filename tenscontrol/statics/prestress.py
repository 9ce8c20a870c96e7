"""Equilibrium and prestress design at a given configuration (docs/theory.md, "Prestress").

At rest (qd = qdd = 0) the equations of motion are linear in the force densities. With rigid bars,
``[Yhat(q), -J_Phi(q)^T] [gamma; lambda] = G + f``; since the bar rows of ``J_Phi^T lambda`` are
``2 lambda_b H_b q = -psi_b H_b q`` with the bar force density ``psi_b = -2 lambda_b``, both bar
models share one form, ``Yhat(q) gamma + Xhat(q) psi - A^T lambda_A = G + f``, where A selects the
fixed coordinates. :func:`equilibrium` eliminates the reactions ``lambda_A`` by keeping the free
rows, chooses (gamma, psi) by a stated objective, certifies the result, and returns a structure
whose rest lengths realise it. The sign convention: a member pulls node j with ``-gamma s`` and
node i with ``+gamma s`` (s = n_j - n_i), i.e. the member forces on the nodes are ``-Yhat gamma``.
"""

from __future__ import annotations

import dataclasses
import textwrap
from dataclasses import dataclass

import numpy as np
import scipy.optimize

from tenscontrol import validation
from tenscontrol.model.cables import reject_cables
from tenscontrol.mechanics.checks import check_members
from tenscontrol.statics.loaded_prestress import loaded_prestress
from tenscontrol.mechanics.rigid.model import constraint_jacobian, gravity_vector
from tenscontrol.mechanics.geometry import member_columns, nodal_vector
from tenscontrol.mechanics.laws import rest_length_at_modulus, rest_length_at_stiffness
from tenscontrol.model.structure import Structure
from tenscontrol.model.tables import Presentable, html_table

__all__ = ["Equilibrium", "PrestressError", "equilibrium"]

_OBJECTIVES = ("min_sum", "min_norm")
#: A designed rest length must lie within these fractions of the member's length: beyond, the
#: member would stretch to over 1000 times (or shrink to under 1/1000 of) its rest length, which
#: no string or bar material takes elastically, and the stiffness E A / l0 explodes. The bound
#: is loose on purpose: it refuses only absurd designs (gamma_min = 1e12 on the T-bar asked
#: for a strain of 1.6e10), not merely optimistic ones.
REST_FRACTION_RANGE = (1e-3, 1e3)
_BAR_MODELS = ("rigid", "compressible")
#: Largest load or gamma_min handed to HiGHS, which takes 1e20 for infinite (a "Model error");
#: 1e15 keeps its absolute tolerances (1e-7) meaningful for the certification that follows.
_LP_MAX = 1e15


class PrestressError(ValueError):
    """No admissible prestress exists, or the computed one could not be certified."""

    def __repr__(self) -> str:
        # str() is the whole message (what failed and what to try); the repr keeps one line
        return f"PrestressError({textwrap.shorten(str(self), 150, placeholder=' ...')!r})"


def _per_string(structure: Structure, value, name: str, default: float,
                unit: str = "N/m") -> np.ndarray:
    """A scalar or (n_strings,) array of finite values."""
    return validation.per_item(name, default if value is None else value, structure.n_strings,
                               unit, items=" (one per string)")


@dataclass(frozen=True, eq=False)
class Equilibrium(Presentable):
    """The result of :func:`equilibrium`: a certified prestress and the structure realising it.

    Attributes
    ----------
    structure : Structure
        A copy of the input whose string rest lengths (and, for ``bars="compressible"``, bar rest
        lengths) give exactly these force densities at its node positions.
    gamma : ndarray, shape (n_strings,)
        Tension-member force densities [N/m], positive in tension.
    bar_force_densities : ndarray, shape (n_bars,)
        Bar force densities [N/m]: psi for compressible bars, ``-2 lambda_b`` for rigid bars;
        negative in compression. The axial force is this times the bar length.
    multipliers : ndarray, shape (c,)
        Lagrange multipliers of the constraint rows, in the order of
        :func:`tenscontrol.constraint_jacobian`: the fixed coordinates, then (rigid bars only) one
        per bar. Fixed rows: the support force on that coordinate [N]; bar rows:
        ``lambda_b = -psi_b / 2`` [N/m].
    reactions : ndarray, shape (n_nodes, 3)
        Support force on each fixed coordinate [N] (the constraint force ``+A^T lambda_A``);
        zero on free coordinates.
    loads : ndarray, shape (n_nodes, 3)
        The external nodal loads the prestress balances (gravity not included) [N].
    residual : float
        Max abs residual of the full equilibrium equations [N].
    objective : str
        ``"min_sum"`` or ``"min_norm"``.
    bars : str
        ``"rigid"`` or ``"compressible"``.
    self_stress_dimension : int
        Dimension of the null space of the equilibrium equations in (gamma, psi) after the
        reactions are eliminated: the number of independent self-stresses. A member whose two
        end nodes are fully fixed adds one (its force goes straight into the supports).
    configuration : str
        ``"fixed"``: at the input's node positions; ``"free"``: at the loaded configuration
        found with the prestress (``structure.nodes`` then differ from the input's).
    displacement : float
        Largest node displacement from the input's nodes [m] (0 for ``"fixed"``).
    rounds : int
        Static solves ``configuration="free"`` took to meet `gamma_min` at the loaded
        configuration, counted on the path that succeeded (0 for ``"fixed"``).
    rest_lengths : str
        The family of rest lengths the search moved along: ``"designed"`` (``"fixed"``: this
        design's own), ``"built"`` (``"free"``: from the prestress designed at the built
        geometry without the loads) or ``"given"`` (``"free"``: from the static equilibrium
        at the structure's own rest lengths, tried when the built family finds nothing).
    static_route : str
        The route of the last static solve (:attr:`StaticEquilibrium.route`; ``""`` for
        ``"fixed"``).
    fallbacks : tuple of str
        The families tried before the one that answered, each with why it failed.
    """

    structure: Structure
    gamma: np.ndarray
    bar_force_densities: np.ndarray
    multipliers: np.ndarray
    reactions: np.ndarray
    loads: np.ndarray
    residual: float
    objective: str
    bars: str
    self_stress_dimension: int
    configuration: str = "fixed"
    displacement: float = 0.0
    rounds: int = 0
    rest_lengths: str = "designed"
    static_route: str = ""
    fallbacks: tuple = ()

    def __repr__(self) -> str:
        def span(a):
            return f"[{a.min():.4g}, {a.max():.4g}]" if a.size else "[]"
        return (f"Equilibrium(structure={self.structure.name!r}, bars={self.bars!r}, "
                f"objective={self.objective!r}, gamma={span(self.gamma)} N/m, "
                f"bar_force_densities={span(self.bar_force_densities)} N/m, "
                f"self_stress_dimension={self.self_stress_dimension}"
                + (f", sag={self.displacement:.3g} m, rest_lengths={self.rest_lengths!r}, "
                   f"static_route={self.static_route!r}" if self.configuration == "free" else "")
                + (f", fallbacks={len(self.fallbacks)}" if self.fallbacks else "") + ")")

    def _table(self):
        """(heading, rows of (member, nodes, force density [N/m], force [N]))."""
        s = self.structure
        head = (f"Equilibrium of {s.name!r} ({self.bars} bars, {self.objective}): gamma sum "
                f"{self.gamma.sum():.6g} N/m, residual {self.residual:.3g} N, "
                f"self-stress dimension {self.self_stress_dimension}")
        rows = [(f"string {k}", s.string_nodes[k], g, g * l)
                for k, (g, l) in enumerate(zip(self.gamma, s.string_lengths))]
        rows += [(f"bar {k}", s.bar_nodes[k], p, p * l)
                 for k, (p, l) in enumerate(zip(self.bar_force_densities, s.bar_lengths))]
        return head, [(name, f"{i}->{j}", f"{d:.6f}", f"{f:.6f}")
                      for name, (i, j), d, f in rows]

    def summary(self) -> str:
        """A table of every member's force density [N/m] and axial force [N]."""
        head, rows = self._table()
        lines = [head, f"{'member':<10}{'nodes':>9}{'gamma/psi [N/m]':>18}{'force [N]':>14}"]
        lines += [f"{name:<10}{nodes:>9}{d:>18}{f:>14}" for name, nodes, d, f in rows]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head, rows = self._table()
        return html_table(rows, header=["member", "nodes", "gamma/psi [N/m]", "force [N]"],
                          caption=head)


@dataclass(frozen=True)
class _Problem:
    """Reduced equilibrium ``E x = e`` in x = [gamma; psi], bounds and the QP's diagonal Hessian."""

    E: np.ndarray
    e: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    hessian: np.ndarray

    def snap(self, x: np.ndarray, side: np.ndarray) -> np.ndarray:
        """x with the entries of the working set (side -1 / +1) exactly at their bounds."""
        return np.where(side < 0, self.lower, np.where(side > 0, self.upper, x))


def _problem(structure, q, rhs, gamma_min, bars, bars_in_compression) -> _Problem:
    free = structure.free_coordinates
    cols = np.hstack([member_columns(structure.string_nodes, q),
                      member_columns(structure.bar_nodes, q)])
    ns, nb = structure.n_strings, structure.n_bars
    # Springs push and pull, so their force density has no bound; strings never push.
    lower = np.concatenate([np.where(structure.string_is_spring, -np.inf, gamma_min),
                            np.full(nb, -np.inf)])
    upper = np.concatenate([np.full(ns, np.inf),
                            np.full(nb, 0.0 if bars_in_compression else np.inf)])
    # Rigid bars' psi is a reaction (not in the norm); compressible bars' psi is a stress.
    hessian = np.concatenate([np.ones(ns), np.full(nb, 1.0 if bars == "compressible" else 0.0)])
    return _Problem(cols[free], rhs[free], lower, upper, hessian)


def _lp(prob: _Problem, cost: np.ndarray) -> scipy.optimize.OptimizeResult:
    bounds = [(None if np.isinf(lo) else lo, None if np.isinf(hi) else hi)
              for lo, hi in zip(prob.lower, prob.upper)]
    return scipy.optimize.linprog(cost, A_eq=prob.E, b_eq=prob.e, bounds=bounds, method="highs")


def _infeasible(prob: _Problem, structure: Structure) -> PrestressError:
    """The error for an infeasible problem, with the least-squares residual under the bounds."""
    lsq = scipy.optimize.lsq_linear(prob.E, prob.e, bounds=(prob.lower, prob.upper))
    r = np.abs(prob.E @ lsq.x - prob.e).max(initial=0.0)
    return PrestressError(
        f"{structure.name}: no prestress is in equilibrium with these loads under the bounds "
        f"(strings gamma >= gamma_min, and bars in compression if requested): infeasible. The "
        f"closest force densities within the bounds leave a least-squares residual of {r:.3g} N "
        "(max abs nodal force). Try a lower gamma_min (gamma_min = 0 allows slack strings), "
        "check the loads and the fixed coordinates, bars_in_compression=False, or a "
        "configuration that admits a self-stress (e.g. catalog.prestressable_twist). If "
        "gravity or the loads push along a motion the fixed geometry cannot resist (a "
        "mechanism of the equilibrium matrix), the structure must sag first: "
        "configuration='free' finds the loaded configuration and its prestress together "
        "(tenscontrol.static_equilibrium solves it at given rest lengths).")


def _polish(prob: _Problem, x: np.ndarray, side: np.ndarray) -> np.ndarray:
    """Remove the equality residual by a minimum-norm correction of the entries off their bounds."""
    x = prob.snap(x, side)
    free = side == 0
    if free.any():
        r = prob.e - prob.E @ x
        x[free] += np.linalg.lstsq(prob.E[:, free], r, rcond=None)[0]
    return x


def _sides(prob: _Problem, x: np.ndarray, tol: float) -> np.ndarray:
    """-1 / +1 for entries at their lower / upper bound (within tol), else 0."""
    return np.where(x - prob.lower <= tol, -1, np.where(prob.upper - x <= tol, 1, 0))


def _feasible_point(prob: _Problem, cost: np.ndarray, structure, objective) -> np.ndarray:
    res = _lp(prob, cost)
    if res.status == 2:
        raise _infeasible(prob, structure)
    if res.status == 3:
        raise PrestressError(
            f"{structure.name}: the {objective} LP is unbounded: the free force densities of "
            "springs (any sign) or bars let the weighted sum decrease without limit. Use "
            "objective='min_norm', positive weights on strings only, or bars_in_compression=True.")
    if res.status != 0:
        raise PrestressError(f"{structure.name}: the LP solver failed: {res.message}")
    x = res.x.copy()
    tol = 1e-9 * max(1.0, np.abs(x).max(initial=0.0))
    side = _sides(prob, x, tol)
    for _ in range(5):  # a correction that crosses a bound pins that entry and is redone
        x = _polish(prob, x, side)
        crossed = (side == 0) & ((x < prob.lower) | (x > prob.upper))
        if not crossed.any():
            break
        side = np.where(crossed, np.where(x < prob.lower, -1, 1), side)
    return x


def _eqp(prob: _Problem, x: np.ndarray, side: np.ndarray):
    """Minimiser of the QP with the working-set entries held; returns (x, equality multipliers)."""
    free = side == 0
    if not free.any():
        return x.copy(), np.zeros(len(prob.e))
    EF, D = prob.E[:, free], prob.hessian[free]
    r = prob.e - prob.E[:, ~free] @ x[~free]
    U, s, Vt = np.linalg.svd(EF, full_matrices=True)
    rank = int(np.sum(s > 1e-12 * s[0])) if s.size and s[0] > 0 else 0
    # Dependent rows of E drop out here (docs/theory.md, "Prestress": "remove dependent rows by
    # SVD").
    xp = Vt[:rank].T @ ((U[:, :rank].T @ r) / s[:rank])
    Nsp = Vt[rank:].T
    t = np.linalg.lstsq(Nsp.T @ (D[:, None] * Nsp), -Nsp.T @ (D * xp), rcond=None)[0]
    out = x.copy()
    out[free] = xp + Nsp @ t
    nu = U[:, :rank] @ ((Vt[:rank] @ (D * out[free])) / s[:rank])
    return out, nu


def _active_set(prob: _Problem, x: np.ndarray, structure):
    """Primal active-set method for min 1/2 x^T diag(h) x, E x = e, bounds, from a feasible x.

    Returns (x, g, side): the optimum, the bound multipliers g = h x - E^T nu, the working set.
    """
    scale = max(1.0, np.abs(x).max(initial=0.0))
    side = _sides(prob, x, 1e-9 * scale)
    for _ in range(20 * (len(x) + 5)):
        xh, nu = _eqp(prob, x, side)
        p = xh - x
        if np.abs(p).max(initial=0.0) <= 1e-12 * scale:
            g = prob.hessian * xh - prob.E.T @ nu  # bound multipliers (signed by side)
            wrong = np.where(side < 0, -g, np.where(side > 0, g, 0.0))
            k = int(np.argmax(wrong)) if wrong.size else 0
            if not wrong.size or wrong[k] <= 1e-9 * scale:
                return _pin_touching(prob, xh, g, side, scale)
            side[k] = 0
            x = xh
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            to_lo = np.where((side == 0) & (p < 0), (prob.lower - x) / p, np.inf)
            to_hi = np.where((side == 0) & (p > 0), (prob.upper - x) / p, np.inf)
        steps = np.minimum(to_lo, to_hi)
        k = int(np.argmin(steps))
        if steps[k] >= 1.0:
            x = xh
            continue
        x = x + max(steps[k], 0.0) * p
        side[k] = -1 if to_lo[k] <= to_hi[k] else 1
        x[k] = prob.lower[k] if side[k] < 0 else prob.upper[k]
    raise PrestressError(f"{structure.name}: the min_norm active-set QP did not converge; "
                         "try objective='min_sum'")


def _pin_touching(prob: _Problem, x, g, side, scale):
    """Hold free entries that ended on (or a rounding error past) a bound exactly at it."""
    touching = (side == 0) & ((x - prob.lower <= 1e-9 * scale) | (prob.upper - x <= 1e-9 * scale))
    if not touching.any():
        return x, g, side
    pinned = np.where(touching, np.where(x - prob.lower <= 1e-9 * scale, -1, 1), side)
    xp, _ = _eqp(prob, prob.snap(x, pinned), pinned)
    if np.abs(xp - x).max() > 1e-9 * scale:
        return x, g, side
    # The extra bounds are degenerate (multiplier 0), so the certificate g of x still holds.
    return xp, g, pinned


def _multipliers_exist(prob: _Problem, x, side, tol) -> bool:
    """Feasibility LP: is there nu with D x - E^T nu = 0 on free entries and signed on bounds?"""
    h, Et = prob.hessian * x, prob.E.T
    free, lo, hi = side == 0, side < 0, side > 0
    # |E_F^T nu - h_F| <= tol, (E^T nu)_i <= h_i + tol at lower bounds, >= h_i - tol at upper
    A_ub = np.vstack([Et[free], -Et[free], Et[lo], -Et[hi]])
    b_ub = np.concatenate([h[free] + tol, tol - h[free], h[lo] + tol, tol - h[hi]])
    res = scipy.optimize.linprog(np.zeros(Et.shape[1]), A_ub=A_ub, b_ub=b_ub,
                                 bounds=[(None, None)] * Et.shape[1], method="highs")
    return res.status == 0


def _certify_qp(prob: _Problem, x, g, side, structure) -> None:
    """KKT check: bounds hold, and bound multipliers of the right sign exist (docs/theory.md,
    "Prestress")."""
    scale = max(1.0, np.abs(x).max(initial=0.0))
    tol = 1e-8 * scale
    inside = np.all(x >= prob.lower - 1e-9 * scale) and np.all(x <= prob.upper + 1e-9 * scale)
    signed = np.where(side < 0, g, np.where(side > 0, -g, 0.0))
    certified = (np.abs(g[side == 0]).max(initial=0.0) <= tol and signed.min(initial=0.0) >= -tol)
    if inside and not certified:  # degenerate bounds: the multipliers are not unique
        certified = _multipliers_exist(prob, x, side, tol)
    if not (inside and certified):
        raise PrestressError(f"{structure.name}: the min_norm solution failed its KKT "
                             "certification; try objective='min_sum'")


def rest_length_for(where: str, EA_or_k: float, length: float, density: float, by_modulus: bool):
    """Rest length giving force density `density` at `length` (docs/theory.md, "The Lagrangian
    model in Cartesian nodal coordinates").

    Raises PrestressError if none exists, or if it lies outside ``REST_FRACTION_RANGE`` times
    the length (a strain no material takes; the message gives the largest usable density).
    """
    if density == 0.0:
        return length  # exactly at rest: a string there is slack (strict l > l0 rule)
    if by_modulus:  # k = EA / l0 and gamma = EA/l0 - EA/l
        denom = density + EA_or_k / length
        if denom <= 0:
            raise PrestressError(f"{where}: force density {density:.6g} N/m is below "
                                 f"-EA/l = {-EA_or_k / length:.6g} N/m; no rest length gives it")
        l0 = rest_length_at_modulus(EA_or_k, length, density)
    else:
        if density >= EA_or_k:  # gamma = k (1 - l0/l) < k for any l0 > 0
            raise PrestressError(f"{where}: force density {density:.6g} N/m needs gamma < k = "
                                 f"{EA_or_k:.6g} N/m; give the member a higher stiffness")
        l0 = rest_length_at_stiffness(EA_or_k, length, density)
    low, high = REST_FRACTION_RANGE
    if not low * length <= l0 <= high * length:
        f = low if l0 < low * length else high
        limit = (EA_or_k / (f * length) - EA_or_k / length) if by_modulus else EA_or_k * (1 - f)
        bound = "at most" if f == low else "at least"
        raise PrestressError(
            f"{where}: force density {density:.6g} N/m needs a rest length of {l0:.3g} m, "
            f"{l0 / length:.3g} times its length {length:.6g} m (strain {length / l0 - 1:.3g}), "
            f"beyond what any material takes elastically (rest length within {low:g} to "
            f"{high:g} times the length). Use {bound} {limit:.6g} N/m on this member (a lower "
            "gamma_min, or other loads), or give it a higher stiffness")
    return l0


def _prestressed(structure: Structure, gamma, psi, bars) -> Structure:
    strings = []
    for k, (s, g, l) in enumerate(zip(structure.strings, gamma, structure.string_lengths)):
        where = f"string {k} (nodes {s.nodes[0]}->{s.nodes[1]})"
        if s.stiffness is None:
            l0 = rest_length_for(where, s.youngs_modulus * np.pi * s.radius**2, l, g, True)
        else:
            l0 = rest_length_for(where, s.stiffness, l, g, False)
        strings.append(dataclasses.replace(s, rest_length=float(l0), rest_fraction=None))
    new_bars = list(structure.bars)
    if bars == "compressible":
        for k, (b, p, l) in enumerate(zip(structure.bars, psi, structure.bar_lengths)):
            where = f"bar {k} (nodes {b.nodes[0]}->{b.nodes[1]})"
            l0 = rest_length_for(where, b.youngs_modulus * np.pi * b.radius**2, l, p, True)
            new_bars[k] = dataclasses.replace(b, rest_length=float(l0))
    return dataclasses.replace(structure, strings=tuple(strings), bars=tuple(new_bars))


def _validate(structure, objective, bars, gamma_min):
    if objective not in _OBJECTIVES:
        raise ValueError(f"objective must be 'min_sum' or 'min_norm', got {objective!r}")
    if bars not in _BAR_MODELS:
        raise ValueError(f"bars must be 'rigid' or 'compressible', got {bars!r}")
    bad = np.flatnonzero((gamma_min < 0) & ~structure.string_is_spring)
    if bad.size:
        raise ValueError(f"gamma_min must be >= 0 for strings (they cannot push); string "
                         f"{bad[0]} has {gamma_min[bad[0]]:g}")
    if bars == "compressible":
        structure.bar_stiffness  # raises, naming the bar, if a Young's modulus is missing


def equilibrium(structure: Structure, *, gamma_min=0.0, loads=None, objective: str = "min_sum",
                bars: str = "rigid", weights=None, bars_in_compression: bool = False,
                configuration: str = "fixed") -> Equilibrium:
    """Design a prestress in equilibrium at the structure's configuration (docs/theory.md,
    "Prestress").

    Parameters
    ----------
    structure : Structure
        The structure; its node positions q0 are the configuration to hold.
    gamma_min : float or array_like, shape (n_strings,)
        Lower bound on the strings' force densities [N/m], >= 0. Springs (two-sided members)
        have no bound: their force density may take either sign, and entries for them are
        ignored. They still enter the objective.
    loads : array_like, shape (n_nodes, 3), optional
        External nodal forces to balance [N]; gravity (``structure.gravity``) is added.
    objective : {"min_sum", "min_norm"}
        ``"min_sum"`` (default): minimise ``sum_k w_k gamma_k`` by the HiGHS LP; a vertex, which
        may be non-unique. ``"min_norm"``: minimise ``1/2 |gamma|^2`` (``+ 1/2 |psi|^2`` for
        compressible bars), unique in gamma; solved exactly by an active-set method on the KKT
        system, started from the LP point, and KKT-certified.
    bars : {"rigid", "compressible"}
        Rigid bars carry any force as constraint reactions (``psi = -2 lambda``); compressible
        bars get rest lengths that produce their psi through ``psi = k_b (1 - l0_b/l)``.
    weights : array_like, shape (n_strings,), optional
        Weights w of the min_sum objective (default 1).
    bars_in_compression : bool
        Add ``psi <= 0`` on every bar (strict tensegrity).
    configuration : {"fixed", "free"}
        ``"fixed"`` (default): hold the structure's node positions. ``"free"``: let it sag
        under gravity and loads first (for geometries that cannot hold the load as built,
        e.g. an icosahedron on a face or a prism with its base fixed, where gravity loads a
        mechanism of the equilibrium matrix): a prestress at the built geometry without
        gravity and loads, the static equilibrium (:func:`tenscontrol.static_equilibrium`)
        under them at those rest lengths, then the prestress design at the loaded
        configuration. Where the loaded strings fall below `gamma_min`, the unloaded
        prestress is raised by a secant on the measured loaded minimum until it meets
        `gamma_min` to 1e-6 of it (``Equilibrium.rounds`` counts the static solves). When no
        prestress exists at the built geometry without the loads (a payload hung from strings
        that only gravity holds), or that path finds nothing, the search starts from the
        static equilibrium at the structure's own rest lengths instead, raising the force
        densities found there. The returned structure sits at the loaded configuration, an
        equilibrium a simulation started there does not leave.

    Returns
    -------
    Equilibrium

    Raises
    ------
    PrestressError
        If the problem is infeasible (the message gives the least-squares residual under the
        bounds and what to try), the min_sum LP is unbounded, a force density cannot be realised
        by a positive rest length or needs one outside ``REST_FRACTION_RANGE`` (0.001 to 1000)
        times the member's length (the message names the member and the largest usable
        force density), or the result fails its certification. With
        ``configuration="free"``: when neither path (from the built geometry, from the
        static equilibrium at the given rest lengths) reaches `gamma_min`; the message says
        which step of each failed.
    ValueError
        If a member's derived quantity (length, stiffness, force density law, weight) is not
        finite (the message names the member), or loads or gamma_min exceed 1e15.

    Notes
    -----
    Rest lengths: a member with E and r gets ``l0 = EA / (gamma* + EA/l)`` (so k = EA/l0 =
    EA/l + gamma*); one with a given stiffness k gets ``l0 = l (1 - gamma*/k)``, which needs
    gamma* < k. A string with gamma* = 0 exactly gets l0 = l: it sits at its rest length and is
    slack under the strict ``l > l0`` rule. Rigid bars are returned unchanged.

    The default objective is min_sum (docs/theory.md, "Prestress" calls both objectives equal there; for
    the arm and the ball both give the same vector, see catalog.arm and catalog.ball). Springs in
    a self-stress usually make min_sum unbounded (their gamma may fall without limit); use
    min_norm for them.
    """
    reject_cables(structure, "prestress equilibrium")
    if not isinstance(structure, Structure):
        raise TypeError(f"expected a tenscontrol.Structure, got {type(structure).__name__}")
    gamma_min = _per_string(structure, gamma_min, "gamma_min", 0.0)
    _validate(structure, objective, bars, gamma_min)
    bars_in_compression = validation.flag("bars_in_compression", bars_in_compression)
    if configuration not in ("fixed", "free"):
        raise ValueError(f"configuration must be 'fixed' (hold the nodes) or 'free' (sag under "
                         f"the loads first), got {configuration!r}")
    if configuration == "free":
        def design(s, g, f):
            return equilibrium(s, gamma_min=g, loads=f, objective=objective, bars=bars,
                               weights=weights, bars_in_compression=bars_in_compression)
        def realise(s, gamma, psi):
            return _prestressed(s, gamma, psi, bars)
        return loaded_prestress(structure, design, realise, gamma_min, loads, bars,
                                PrestressError)
    w = _per_string(structure, weights, "weights", 1.0, "1")
    f = nodal_vector(structure.n_nodes, "loads", loads)
    q = structure.nodes.reshape(-1)
    check_members(structure, "equilibrium", bars=bars, inertia=False)
    with np.errstate(over="ignore", invalid="ignore"):
        rhs = gravity_vector(structure) + f
    _check_loads(rhs, gamma_min)
    prob = _problem(structure, q, rhs, gamma_min, bars, bars_in_compression)
    ns = structure.n_strings
    if objective == "min_sum":
        x = _feasible_point(prob, np.concatenate([w, np.zeros(structure.n_bars)]), structure,
                            objective)
    else:  # springs are free in sign, so they stay out of the starting LP's cost (bounded)
        start_cost = np.concatenate([(~structure.string_is_spring).astype(float),
                                     np.zeros(structure.n_bars)])
        x = _feasible_point(prob, start_cost, structure, objective)
        x, g, side = _active_set(prob, x, structure)
        _certify_qp(prob, x, g, side, structure)
    gamma, psi = x[:ns], x[ns:]
    return _result(structure, q, f, rhs, gamma, psi, prob, objective, bars)


def _check_loads(rhs, gamma_min) -> None:
    """The LP's data are finite and of a size HiGHS takes: it reports "Model error" (which
    would read as infeasible) for bounds or right-hand sides of 1e20 and more."""
    bad = np.flatnonzero(~np.isfinite(rhs))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"equilibrium: node {i // 3}: gravity plus loads along "
                         f"{'xyz'[i % 3]} overflow; give loads and masses of usable size")
    for name, v, unit in (("loads plus gravity", rhs, "N"), ("gamma_min", gamma_min, "N/m")):
        size = float(np.abs(v).max(initial=0.0))
        if size > _LP_MAX:
            raise ValueError(f"equilibrium: the largest of {name} is {size:.3g} {unit}, beyond the "
                             f"{_LP_MAX:g} the LP solver (HiGHS) accepts; change units or "
                             "give values of usable size")


def _result(structure, q, f, rhs, gamma, psi, prob, objective, bars) -> Equilibrium:
    """Recover the multipliers, certify the full residual and build the Equilibrium."""
    Y = member_columns(structure.string_nodes, q)
    Xb = member_columns(structure.bar_nodes, q)
    fixed = structure.fixed_coordinates
    lam_fixed = (Y @ gamma + Xb @ psi - rhs)[fixed]
    if bars == "rigid":
        lam = np.concatenate([lam_fixed, -0.5 * psi])
        J = constraint_jacobian(structure, q)
        r = Y @ gamma - J.T @ lam - rhs
    else:
        lam = lam_fixed
        r = Y @ gamma + Xb @ psi - rhs
        r[fixed] -= lam_fixed
    residual = float(np.abs(r).max(initial=0.0))
    scale = max(np.abs(rhs).max(initial=0.0), np.abs(Y @ gamma).max(initial=0.0), 1.0)
    if residual > 1e-9 * scale:
        raise PrestressError(f"{structure.name}: equilibrium residual {residual:.3g} N exceeds "
                             f"1e-9 of the force scale {scale:.3g} N; the problem is "
                             "ill-conditioned (check for near-mechanisms)")
    reactions = np.zeros(3 * structure.n_nodes)
    reactions[fixed] = lam_fixed
    rank = np.linalg.matrix_rank(prob.E) if prob.E.size else 0
    return Equilibrium(
        structure=_prestressed(structure, gamma, psi, bars), gamma=gamma, bar_force_densities=psi,
        multipliers=lam, reactions=reactions.reshape(-1, 3), loads=f.reshape(-1, 3),
        residual=residual, objective=objective, bars=bars,
        self_stress_dimension=int(prob.E.shape[1] - rank))
