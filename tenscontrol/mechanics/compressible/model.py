"""Compressible-bar Lagrangian dynamics in Cartesian nodal coordinates (docs/theory.md,
"Compressible bars" and "Linearization: force densities in, nodal forces as disturbances").

Bars have free lengths: each bar is an axial spring of stiffness ``k_b = E pi r0^2 / l0`` with
potential ``1/2 k_b (l - l0)^2`` and force density ``psi = k_b (1 - l0/l)`` (negative in
compression, never slack), and its kinetic energy depends on the configuration. Only the
fixed-coordinate constraints remain; they are eliminated (the equations are solved on the
free coordinates; fixed coordinates have zero acceleration).

Two kinetic energies (docs/theory.md, "Compressible bars"), per bar
``T = 1/2 m |Xbar qd|^2 + 1/2 mu0 qd^T H qd + 1/2 a(l) (qd^T H qd - ldot^2)``:

- ``"consistent"`` (default; the theory's ``"consistent_rod"``): mu0 = m/12, a = 0, or
  ``m r(l)^2 / (4 l^2)`` with ``include_radius``. Without the radius the mass matrix is constant
  and equal to the rigid one (``tenscontrol.mass_matrix(structure)``).
- ``"paper"``: mu0 = 0, a = m/12 (+ ``m r(l)^2 / (4 l^2)``). Singular for a bar whose end nodes
  carry no other mass and are free (docs/theory.md, "Compressible bars");
  :func:`compressible_model` rejects it.

The radius follows Poisson's ratio: ``r(l) = r0 (l/l0)^(-nu)``.

The simulator calls the compiled kernels of :mod:`tenscontrol.mechanics.compressible.kernels` with
the model's record ``CompressibleBarModel.kernel`` (see that module for the calling convention):
``rhs(y, f, model.kernel, dy)``, ``jacobian(y, f, model.kernel, J)``,
``energies(Y, model.kernel)``, with y = [q, qd, w]. The public functions
(:mod:`tenscontrol.mechanics.dynamics`) call :func:`mass_at`, :func:`accelerations_at`,
:func:`energy_at` and :func:`jacobians_at`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import scipy.linalg

from tenscontrol import validation
from tenscontrol.model.cables import reject_cables
from tenscontrol.mechanics.compressible import kernels as CK
from tenscontrol.mechanics.geometry import member_columns, nodal_vector
from tenscontrol.mechanics.laws import active_set, elastic_densities
from tenscontrol.mechanics.kernels.records import (CompressibleBars, CompressibleKernelModel,
                                           HeldForceDensities, Members, follow_laws,
                                           members_record)
from tenscontrol.mechanics.rigid.model import bar_mass_matrix, free_inverse, gravity_vector
from tenscontrol.model.structure import Structure

__all__ = [
    "CompressibleBarModel", "compressible_model", "mass_at", "accelerations_at", "energy_at",
    "jacobians_at", "bar_force_densities", "check_kinetic", "KINETIC_MODES",
]

KINETIC_MODES = ("consistent", "paper")


@dataclass(frozen=True, eq=False)
class CompressibleBarModel:
    """The compressible-bar model of a structure, and the record the compiled kernels take.

    Attributes
    ----------
    structure : Structure
    kinetic : {"consistent", "paper"}
        Kinetic-energy form (docs/theory.md, "Compressible bars").
    include_radius : bool
        Whether the bars' transverse inertia includes their (Poisson-varying) radius.
    M0 : ndarray, shape (3n, 3n)
        Constant part of the mass matrix [kg]: ``sum m Xbar^T Xbar + mu0 H`` plus point masses.
        The full one is ``M0 + sum a(l) (H - H q q^T H / l^2)``.
    W : ndarray, shape (3n, 3n) or (0, 0)
        With `const_mass`, the inverse of M0 on the free coordinates, zero on fixed rows and
        columns [1/kg] (this is W_c); otherwise empty.
    G : ndarray, shape (3n,)
        Gravity force vector [N].
    free : ndarray of int, shape (nf,)
        Free coordinates.
    const_mass : bool
        True when a(l) = 0 for every bar: the mass matrix is M0 and N_T = 0.
    bars : CompressibleBars
        The bars: end nodes, inertia coefficients of a(l), stiffness k_b, rest length l0_b.
    members : Members
        The tension members.
    kernel : CompressibleKernelModel
        The record every kernel of :mod:`~tenscontrol.mechanics.compressible.kernels` takes;
        it holds M0, W, G, free, const_mass, `bars` and `members` themselves (not copies).
    """

    structure: Structure
    kinetic: str
    include_radius: bool
    M0: np.ndarray
    W: np.ndarray
    G: np.ndarray
    free: np.ndarray
    const_mass: bool
    bars: CompressibleBars
    members: Members
    kernel: CompressibleKernelModel

    @property
    def n_coordinates(self) -> int:
        """Number of coordinates 3n."""
        return self.M0.shape[0]

    def __repr__(self) -> str:
        return (f"CompressibleBarModel(structure={self.structure.name!r}, "
                f"kinetic={self.kinetic!r}, include_radius={self.include_radius}, "
                f"coordinates={self.M0.shape[0]}, free={self.free.size}, "
                f"bars={self.bars.stiffness.size}, const_mass={self.const_mass})")


def _singular_bars(structure: Structure, M: np.ndarray) -> list[int]:
    """Bars whose free stretch mode (n_i, n_j moving apart along b) has no kinetic energy."""
    q = structure.nodes.reshape(-1)
    fixed = structure.fixed.reshape(-1)
    out = []
    for k, (i, j) in enumerate(structure.bar_nodes):
        e = np.zeros_like(q)
        u = (q[3 * j:3 * j + 3] - q[3 * i:3 * i + 3]) / structure.bar_lengths[k]
        e[3 * i:3 * i + 3], e[3 * j:3 * j + 3] = -u, u
        if np.any(np.abs(e[fixed]) > 1e-12):
            continue  # the stretch mode moves a fixed coordinate
        if e @ M @ e <= 1e-10 * structure.bar_masses[k]:
            out.append(k)
    return out


def _check_mass(structure: Structure, M: np.ndarray, kinetic: str) -> None:
    """Raise ValueError if M (at q0) is not positive definite on the free coordinates."""
    free = structure.free_coordinates
    Mff = M[np.ix_(free, free)]
    try:
        L = scipy.linalg.cholesky(Mff, lower=True)
        ok = np.diag(L).min() ** 2 > 1e-12 * np.diag(Mff).max() if free.size else True
    except np.linalg.LinAlgError:
        ok = False
    if ok:
        return
    bars = _singular_bars(structure, M)
    if not bars:
        raise ValueError(f"{structure.name}: the {kinetic!r} kinetic energy gives a singular mass "
                         "matrix on the free coordinates (docs/theory.md, \"Compressible bars\"); "
                         "use "
                         "kinetic=\"consistent\", or fix or load the nodes that carry no mass")
    names = "; ".join(f"bar {k} (nodes {structure.bar_nodes[k][0]}->{structure.bar_nodes[k][1]})"
                      for k in bars)
    raise ValueError(
        f"{structure.name}: {names}: the {kinetic!r} kinetic energy gives no inertia to the bar's "
        "axial stretch (its end nodes carry no other bar or point mass and are free), so the "
        "mass matrix is singular (docs/theory.md, \"Compressible bars\"); use "
        "kinetic=\"consistent\", or fix or load "
        "an end node"
    )


@lru_cache(maxsize=32)
def _model_cached(structure: Structure, kinetic: str, include_radius: bool):
    kb, nu = structure.bar_stiffness, structure.bar_poisson  # raise naming a bar without E/nu
    m, l0 = structure.bar_masses, structure.bar_rest_lengths
    r0 = np.array([b.radius for b in structure.bars], dtype=float)
    paper = kinetic == "paper"
    M0 = bar_mass_matrix(structure, np.zeros_like(m) if paper else m / 12)
    a0 = m / 12 if paper else np.zeros_like(m)
    ra = m * r0**2 * l0 ** (2 * nu) / 4 if include_radius else np.zeros_like(m)
    const = not (np.any(a0) or np.any(ra))
    free = np.array(structure.free_coordinates, dtype=np.int64)
    W = free_inverse(M0, free) if const else np.zeros((0, 0))
    G, p = gravity_vector(structure), structure.bar_nodes
    bars = CompressibleBars(np.ascontiguousarray(p[:, 0], dtype=np.int64),
                            np.ascontiguousarray(p[:, 1], dtype=np.int64), a0, ra,
                            np.array(-2.0 * (1.0 + nu)), np.array(kb, dtype=float),
                            np.array(l0, dtype=float))
    members = members_record(structure)
    model = CompressibleBarModel(structure, kinetic, include_radius, M0, W, G, free, const, bars,
                                 members,
                                 CompressibleKernelModel(M0, W, G, free, const, bars, members))
    if not const:
        _check_mass(structure, mass_at(model, structure.nodes.reshape(-1)), kinetic)
    return model


def compressible_model(structure: Structure, kinetic: str = "consistent",
                       include_radius: bool = False) -> CompressibleBarModel:
    """Build (or fetch from a small cache) the compressible-bar model of `structure`.

    Parameters
    ----------
    structure : Structure
        Every bar needs a Young's modulus and a Poisson's ratio (directly or via a material).
    kinetic : {"consistent", "paper"}
        Kinetic-energy form (docs/theory.md, "Compressible bars"); see the module docstring.
    include_radius : bool
        Include the bars' radius r(l) = r0 (l/l0)^(-nu) in their transverse inertia.

    Raises
    ------
    ValueError
        For an unknown `kinetic`, a bar without Young's modulus or Poisson's ratio, or (in
        ``"paper"`` mode) a bar whose stretch mode has no inertia; the message names the bar.
    """
    reject_cables(structure, "the compressible-bar model")
    if not isinstance(structure, Structure):
        raise TypeError(f"expected a tenscontrol.Structure, got {type(structure).__name__}")
    check_kinetic(kinetic)
    return _model_cached(structure, kinetic, bool(include_radius))


def check_kinetic(kinetic) -> None:
    """Raise ValueError unless `kinetic` is one of :data:`KINETIC_MODES` (with a close match)."""
    validation.choice("kinetic", kinetic, KINETIC_MODES)


def mass_at(model: CompressibleBarModel, q: np.ndarray) -> np.ndarray:
    """M_qdd(q) (3n, 3n) [kg] of the model at a checked configuration (docs/theory.md,
    "Compressible bars")."""
    M = np.empty_like(model.M0)
    CK.mass_matrix(q, model.kernel, M)
    return M


def _held(name: str, values, n: int):
    """(array, hold flag) for a held force-density vector, or zeros and False if None."""
    if values is None:
        return np.zeros(n), False
    try:
        a = np.array(values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        a = np.full(0, np.nan)  # not numbers: reported just below
    if a.shape != (n,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be {n} finite force densities [N/m] (one per member), "
                         f"got shape {np.shape(values)}")
    return a, True


def accelerations_at(model: CompressibleBarModel, q, qd, f):
    """(qdd (3n,), bar force densities psi (n_bars,)) at a checked state (docs/theory.md,
    "Compressible bars")."""
    structure = model.structure
    qdd, gamma, psi = np.empty_like(q), np.empty(structure.n_strings), np.empty(structure.n_bars)
    _, ok = CK.accelerations(q, qd, f, model.kernel, follow_laws(), qdd, gamma, psi)
    if not ok:
        warnings.warn(f"{structure.name}: the mass matrix is singular at q; the accelerations "
                      "use its pseudo-inverse (rcond 1e-12), which sets those along the massless "
                      "directions to zero instead of leaving them to the dynamics; use "
                      "kinetic='consistent' or give every free node mass", RuntimeWarning,
                      stacklevel=3)
    return qdd, psi


def energy_at(model: CompressibleBarModel, q, qd) -> float:
    """Total energy Etot = T(q, qd) - G^T q + V_s + V_b [J] at a checked state (docs/theory.md,
    "Compressible bars")."""
    return float(CK.total_energy(q, qd, model.kernel))


def bar_force_densities(structure: Structure, q=None) -> np.ndarray:
    """Bar force densities psi = k_b (1 - l0/l) (n_bars,) [N/m], negative in compression."""
    q = nodal_vector(structure.n_nodes, "q", q, structure.nodes.reshape(-1)).reshape(-1, 3)
    p = structure.bar_nodes
    l = np.linalg.norm(q[p[:, 1]] - q[p[:, 0]], axis=1)
    return elastic_densities(structure.bar_stiffness, structure.bar_rest_lengths, l)


def _wc(model: CompressibleBarModel, q: np.ndarray) -> np.ndarray:
    """W_c = Z (Z^T M_qdd Z)^(-1) Z^T (3n, 3n) [1/kg] at q (Hsu et al. (2021), eq. (58))."""
    if model.const_mass:
        return model.W.copy()
    M, free = mass_at(model, q), model.free
    Wc = np.zeros_like(M)
    Wc[np.ix_(free, free)] = np.linalg.pinv(M[np.ix_(free, free)], rcond=1e-12, hermitian=True)
    return Wc


def jacobians_at(model: CompressibleBarModel, q, qd, f, gamma=None, psi=None) -> dict:
    """Analytic partial derivatives of qdd at a checked state (docs/theory.md, "Compressible bars"
    and "Linearization: force densities in, nodal forces as disturbances").

    `gamma` (`psi`) None: the strings (bars) follow their elastic laws; given: held at these
    values. The result is documented at :func:`tenscontrol.jacobians`.
    """
    structure = model.structure
    ns, nb, nq = structure.n_strings, structure.n_bars, q.size
    g_in, hold_g = _held("gamma", gamma, ns)
    p_in, hold_p = _held("bar_force_densities", psi, nb)
    held = HeldForceDensities(g_in, p_in, hold_g, hold_p)
    qdd, g_out, p_out = np.empty(nq), np.empty(ns), np.empty(nb)
    D, pw = np.empty((nq, 2 * nq)), np.empty(2 * nq)
    CK.derivatives(q, qd, f, model.kernel, held, qdd, g_out, p_out, D, pw)
    Wc = _wc(model, q)
    Yh = member_columns(structure.string_nodes, q)
    if not hold_g:
        N, p = q.reshape(-1, 3), structure.string_nodes
        l = np.linalg.norm(N[p[:, 1]] - N[p[:, 0]], axis=1)
        Yh[:, ~active_set(l, structure.string_rest_lengths, structure.string_is_spring)] = 0.0
    return {"dq": D[:, :nq], "dqd": D[:, nq:], "dgamma": -Wc @ Yh,
            "dbar_force_densities": -Wc @ member_columns(structure.bar_nodes, q), "dloads": Wc,
            "qdd": qdd, "gamma": g_out, "bar_force_densities": p_out}
