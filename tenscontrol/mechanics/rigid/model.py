"""Rigid-bar Lagrangian dynamics in Cartesian nodal coordinates (docs/theory.md, "The Lagrangian
model in Cartesian nodal coordinates" and "Rigid bars: constraints and multipliers").

:func:`rigid_model` turns a :class:`~tenscontrol.Structure` into a :class:`RigidBarModel`: the
constant mass matrix, gravity vector and member data, with redundant bar-length constraints
detected and dropped, and the named record the compiled kernels take
(:attr:`RigidBarModel.kernel`). :func:`accelerations_at` and :func:`energy_at` evaluate
the model at a state with the same kernels as the simulator; the public functions
(:mod:`tenscontrol.mechanics.dynamics`) call them.

Coordinates: q = vec(N) node by node (x0, y0, z0, x1, ...), shape (3 n_nodes,); velocities qd
likewise. Force densities are positive in tension.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np
import scipy.linalg

from tenscontrol import validation
from tenscontrol.mechanics.rigid import kernels as K
from tenscontrol.mechanics.kernels.banded import ldl_factor
from tenscontrol.mechanics.geometry import member_columns, state_vectors
from tenscontrol.mechanics.kernels.records import (Members, RigidBars, RigidKernelModel, members_record,
                                           rigid_bars_record)
from tenscontrol.mechanics.rigid.sparse import MassCoupling, kkt_pattern, normal_pattern
from tenscontrol.model.structure import Structure

__all__ = [
    "RigidBarModel", "rigid_model", "rigid_mass_matrix", "gravity_vector", "constraint_jacobian",
    "accelerations_at", "energy_at", "force_densities",
]


def rigid_mass_matrix(structure: Structure, include_radius: bool = False) -> np.ndarray:
    """Consistent mass matrix M (3n, 3n) [kg] of rigid bars plus point masses.

    A bar of mass m and length l contributes ``m Xbar^T Xbar + mu H`` (docs/theory.md, "The
    Lagrangian model in Cartesian nodal coordinates"): translation of its centre plus rotation with
    transverse inertia ``mu l^2``. By default the bar is a slender rod, mu = m/12, which gives the
    block
    ``[[m/3, m/6], [m/6, m/3]] kron I_3`` on its two nodes, as in the paper's reference code.

    Parameters
    ----------
    structure : Structure
    include_radius : bool
        Treat each bar as a solid cylinder of its radius r: mu = m/12 + m r^2 / (4 l^2).
    """
    return bar_mass_matrix(structure, _rigid_mu(structure, include_radius))


def _rigid_mu(structure: Structure, include_radius: bool) -> np.ndarray:
    """Transverse inertia over length squared of each rigid bar (n_bars,) [kg]."""
    m, l = structure.bar_masses, structure.bar_lengths
    r = np.array([bar.radius for bar in structure.bars])
    return m / 12 + (m * r**2 / (4 * l**2) if include_radius else 0.0)


def bar_mass_matrix(structure: Structure, mu) -> np.ndarray:
    """sum over bars of m Xbar^T Xbar + mu H, plus the point masses (3n, 3n) [kg].

    `mu` (n_bars,) [kg] is each bar's transverse inertia over its length squared; the rigid
    model and the compressible model's constant part differ only in it.
    """
    diagonal, coupling = node_mass_parts(structure, mu)
    M = np.diag(diagonal)
    np.add.at(M, (coupling.i, coupling.j), coupling.value)
    np.add.at(M, (coupling.j, coupling.i), coupling.value)
    return np.kron(M, np.eye(3))


def node_mass_parts(structure: Structure, mu) -> tuple[np.ndarray, MassCoupling]:
    """The node-level mass matrix Mn (M = Mn kron I_3) as (diagonal (n_nodes,), MassCoupling).

    A bar of mass m adds m/4 + mu to the diagonal of both its nodes and couples them by
    m/4 - mu [kg]; point masses add to the diagonal.
    """
    m = structure.bar_masses
    p = structure.bar_nodes
    diagonal = np.zeros(structure.n_nodes)
    np.add.at(diagonal, p[:, 0], m / 4 + mu)
    np.add.at(diagonal, p[:, 1], m / 4 + mu)
    for pm in structure.point_masses:
        diagonal[pm.node] += pm.mass
    coupling = MassCoupling(np.ascontiguousarray(p[:, 0], dtype=np.int64),
                            np.ascontiguousarray(p[:, 1], dtype=np.int64),
                            np.ascontiguousarray(m / 4 - mu, dtype=float))
    return diagonal, coupling


def gravity_vector(structure: Structure) -> np.ndarray:
    """Nodal gravity forces G (3n,) [N]: half of each bar's weight at each end, plus point masses."""
    return np.kron(structure.node_masses, structure.gravity)


def _bar_rows(structure: Structure, q: np.ndarray) -> np.ndarray:
    """Bar-length rows 2 q^T H_k of the constraint Jacobian, shape (n_bars, 3n)."""
    return 2.0 * member_columns(structure.bar_nodes, q).T


def constraint_jacobian(structure: Structure, q=None) -> np.ndarray:
    """Constraint Jacobian J_Phi (c, 3n): fixed-coordinate rows, then one row per bar.

    Parameters
    ----------
    structure : Structure
    q : array_like, shape (3n,), optional
        Configuration [m]; the initial one by default.
    """
    q = structure.nodes.reshape(-1) if q is None else np.asarray(q, dtype=float)
    A = np.eye(3 * structure.n_nodes)[structure.fixed_coordinates]
    return np.vstack([A, _bar_rows(structure, q)])


#: Largest cost (bars^2 x free coordinates, the SVD's flops) of the dense rank test of the
#: bar constraints, run only when the sparse factorization shows a doubtful pivot that bars
#: with both ends fixed do not explain: 1e10, a few seconds (3000 bars x 9000 free
#: coordinates, 8e10, took 56 s); above it the structure is refused with what to look for.
DENSE_RANK_LIMIT = 1e10


def _clearly_independent(structure: Structure, kkt, bars=None) -> bool:
    """True when the KKT factorization at q0 with every bar (or the bars `bars`, those of
    `kkt`) shows no pivot under 1e-8.

    Linear in the bars, so that large structures skip the dense SVD of the rank test; any
    doubt (a smaller pivot) leaves the decision to that test.
    """
    q = structure.nodes.reshape(-1)
    p = structure.bar_nodes if bars is None else structure.bar_nodes[bars]
    A = kkt.mass_band.copy()
    w = A.shape[1] - 1
    for end, sign in ((1, 1.0), (0, -1.0)):
        c = kkt.position[(3 * p[:, end])[:, None] + np.arange(3)]
        b = q.reshape(-1, 3)[p[:, 1]] - q.reshape(-1, 3)[p[:, 0]]
        r = np.broadcast_to(kkt.bar_position[:, None], c.shape)
        ok = c >= 0
        np.add.at(A, (r[ok], w - r[ok] + c[ok]), sign * 2.0 * b[ok])
    return ldl_factor(A, kkt.first, kkt.negative, 1e-8) < 0


def _without_fixed_bars(structure: Structure, diagonal, coupling, is_free):
    """(keep, dropped) when the only dependent bars are those with no free coordinate at
    either end (whose rows vanish), found without the dense rank test; else that test's."""
    ends = 3 * structure.bar_nodes[:, :, None] + np.arange(3)
    fixed = ~is_free[ends].any(axis=(1, 2))
    if fixed.any() and not fixed.all():
        keep = np.flatnonzero(~fixed)
        kkt = kkt_pattern(structure.n_nodes, diagonal, coupling, structure.bar_nodes[keep],
                          is_free)
        if _clearly_independent(structure, kkt, keep):
            return keep, tuple(int(k) for k in np.flatnonzero(fixed))
    return _independent_bars(structure)


def _independent_bars(structure: Structure) -> tuple[np.ndarray, tuple[int, ...]]:
    """Bars whose length constraints are independent at q0 (docs/theory.md, "Rigid bars:
    constraints and multipliers").

    Each row is divided by its full norm (4 l_k / sqrt 2) first, so the test compares
    directions, not lengths: a bar 1e-11 m long is as independent as a 5 m one. A bar whose
    free part vanishes (both ends fully fixed) keeps a zero row and is dropped.
    """
    free = structure.free_coordinates
    m, n = sorted((structure.n_bars, free.size))
    if float(m) ** 2 * n > DENSE_RANK_LIMIT:
        raise ValueError(
            f"{structure.name}: the KKT factorization at the start has a pivot below 1e-8: "
            f"some of its {structure.n_bars} bar constraints are (nearly) dependent, and the "
            f"dense rank test that finds them ({structure.n_bars} bars x {free.size} free "
            f"coordinates, about {float(m) ** 2 * n:.1e} flops, more than "
            f"{DENSE_RANK_LIMIT:.0e}) would not end in reasonable time: look for bars that "
            "meet at one node along one line, or a bar whose free motion the fixed "
            "coordinates block, and fix or remove them")
    rows = _bar_rows(structure, structure.nodes.reshape(-1))
    norms = np.linalg.norm(rows, axis=1)  # > 0: Structure refuses zero-length bars
    J = (rows / norms[:, None])[:, free]
    if J.shape[0] == 0:
        return np.arange(0), ()
    sv = np.linalg.svd(J, compute_uv=False) if J.size else np.zeros(0)
    smax = sv.max() if sv.size else 0.0
    rank = int(np.sum(sv > 1e-10 * smax)) if smax > 0 else 0
    if rank == J.shape[0]:
        return np.arange(J.shape[0]), ()
    if rank == 0:  # no free coordinate moves a bar (J may have no columns: LAPACK's QR of an
        # empty matrix fails under older scipy): every bar's constraint is dropped
        return np.arange(0), tuple(range(J.shape[0]))
    # QR with column pivoting on J^T orders the rows by independence
    _, _, piv = scipy.linalg.qr(J.T, pivoting=True, mode="economic")
    keep = np.sort(piv[:rank])
    dropped = tuple(int(k) for k in np.sort(piv[rank:]))
    return keep, dropped


@dataclass(frozen=True, eq=False)
class RigidBarModel:
    """The rigid-bar model of a structure, and the record the compiled kernels take.

    Attributes
    ----------
    structure : Structure
    include_radius : bool
        Whether the bars' inertia includes their radius (see :func:`rigid_mass_matrix`).
    G : ndarray, shape (3n,)
        Gravity force vector [N].
    constrained_bars : ndarray of int
        Bars whose length constraints are enforced; redundant ones are dropped.
    dropped_bars : tuple of int
        Bars whose length constraints were redundant at q0 (e.g. both ends fully fixed).
    col : ndarray of int, shape (3n,)
        Position of each coordinate among the free coordinates, -1 if fixed.
    members : Members
        The tension members.
    bars : RigidBars
        The constrained bars (`constrained_bars`).
    kernel : RigidKernelModel
        The record every kernel of :mod:`~tenscontrol.mechanics.rigid.kernels` takes; it holds
        G, col, `bars` and `members` themselves (not copies), the mass matrix in sparse form
        and the ordering of the sparse solves (:mod:`~tenscontrol.mechanics.rigid.sparse`).

    The dense M and W below are built on first use only (the linear tools read them); the
    simulation never forms them.
    """

    structure: Structure
    include_radius: bool
    G: np.ndarray
    constrained_bars: np.ndarray
    dropped_bars: tuple
    col: np.ndarray
    members: Members
    bars: RigidBars
    kernel: RigidKernelModel

    @cached_property
    def M(self) -> np.ndarray:
        """Mass matrix (3n, 3n) [kg], dense (built on first use)."""
        return rigid_mass_matrix(self.structure, self.include_radius)

    @cached_property
    def W(self) -> np.ndarray:
        """Inverse of M on the free coordinates, zero on fixed rows and columns (3n, 3n) [1/kg].

        Then ``W P = Z (Z^T M Z)^{-1} Z^T`` restricted to the fixed-coordinate null space.
        Dense, built on first use.
        """
        return free_inverse(self.M, self.structure.free_coordinates)

    @property
    def n_coordinates(self) -> int:
        return self.col.shape[0]

    def __repr__(self) -> str:
        return (f"RigidBarModel(structure={self.structure.name!r}, "
                f"coordinates={self.n_coordinates}, free={int((self.col >= 0).sum())}, "
                f"constrained_bars={self.constrained_bars.size}, "
                f"dropped_bars={list(self.dropped_bars)})")


def free_inverse(M: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Inverse of M on the `free` coordinates, zero rows and columns elsewhere (symmetric).

    M restricted to the free coordinates is positive definite: every node that is not fully
    fixed carries mass (checked by Structure), and each bar block is positive definite.
    """
    W = np.zeros_like(M)
    c, low = scipy.linalg.cho_factor(M[np.ix_(free, free)])
    W[np.ix_(free, free)] = scipy.linalg.cho_solve((c, low), np.eye(len(free)))
    return 0.5 * (W + W.T)


@lru_cache(maxsize=32)
def _rigid_model_cached(structure: Structure, include_radius: bool) -> RigidBarModel:
    free = structure.free_coordinates
    is_free = np.zeros(3 * structure.n_nodes, dtype=bool)
    is_free[free] = True
    diagonal, coupling = node_mass_parts(structure, _rigid_mu(structure, include_radius))
    kkt = kkt_pattern(structure.n_nodes, diagonal, coupling, structure.bar_nodes, is_free)
    if _clearly_independent(structure, kkt):
        keep, dropped = np.arange(structure.n_bars), ()
    else:
        keep, dropped = _without_fixed_bars(structure, diagonal, coupling, is_free)
    if dropped:
        names = ", ".join(f"bar {k} (nodes {structure.bar_nodes[k][0]}->{structure.bar_nodes[k][1]})"
                          for k in dropped)
        warnings.warn(
            f"{structure.name}: the length constraints of {names} are redundant (for example both "
            "ends fully fixed) and are dropped; the bars keep their mass",
            stacklevel=3,
        )
    col = -np.ones(3 * structure.n_nodes, dtype=np.int64)
    col[free] = np.arange(len(free))
    G = gravity_vector(structure)
    members, bars = members_record(structure), rigid_bars_record(structure, keep)
    bar_nodes = np.column_stack([bars.i, bars.j])
    if dropped:
        kkt = kkt_pattern(structure.n_nodes, diagonal, coupling, bar_nodes, is_free)
    normal = normal_pattern(bar_nodes, kkt.bar_position, is_free)
    kernel = RigidKernelModel(diagonal, coupling, G, col, bars, members, kkt, normal)
    return RigidBarModel(structure, include_radius, G, keep, dropped, col, members, bars, kernel)


def rigid_model(structure: Structure, include_radius: bool = False) -> RigidBarModel:
    """Build (or fetch from a small cache) the rigid-bar model of `structure`.

    `include_radius` selects the solid-cylinder bar inertia (see :func:`rigid_mass_matrix`).
    """
    if not isinstance(structure, Structure):
        raise TypeError(f"expected a tenscontrol.Structure, got {type(structure).__name__}")
    validation.flag("include_radius", include_radius)  # "no" would be truthy
    return _rigid_model_cached(structure, bool(include_radius))


def accelerations_at(model: RigidBarModel, q, qd, f):
    """(qdd (3n,), bar force densities (n_bars,)) of the rigid model at a checked state.

    psi_k = -2 lambda_k [N/m] (negative in compression); 0 for dropped redundant bars.
    """
    qdd = np.empty_like(q)
    lam = np.empty(len(model.constrained_bars))
    gamma = np.empty(model.structure.n_strings)
    _, dependent = K.accelerations_lazily(q, qd, f, model.kernel, qdd, lam, gamma)
    if dependent:
        warnings.warn(f"{model.structure.name}: the bar constraints are (nearly) dependent at q; "
                      "the accelerations come from rank-truncated least squares (singular values "
                      "below 1e-12 of the largest dropped) and the bar force densities are the "
                      "minimum-norm ones, not unique there", RuntimeWarning, stacklevel=3)
    psi = np.zeros(model.structure.n_bars)
    psi[model.constrained_bars] = -2.0 * lam
    return qdd, psi


def energy_at(model: RigidBarModel, q, qd) -> float:
    """Total energy Etot = T - G^T q + V_s [J] of the rigid model at a checked state."""
    return float(K.total_energy(q, qd, model.kernel))


def force_densities(structure: Structure, q=None) -> np.ndarray:
    """Tension-member force densities gamma (n_strings,) [N/m] with the slack rule.

    Parameters
    ----------
    structure : Structure
    q : array_like, shape (3n,) or (n_nodes, 3), optional
        Configuration [m]; the structure's nodes by default.
    """
    model = rigid_model(structure)
    q, _, _ = state_vectors(structure, q)
    gamma = np.empty(structure.n_strings)
    K.elastic_forces(q, model.members, gamma, np.zeros_like(q))
    return gamma
