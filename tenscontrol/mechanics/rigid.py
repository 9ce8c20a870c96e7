"""Rigid-bar Lagrangian dynamics in Cartesian nodal coordinates (theory.md sections 2-9).

:func:`rigid_model` turns a :class:`~tenscontrol.Structure` into a :class:`RigidBarModel`: the
constant mass matrix, gravity vector and member data as the arrays the compiled kernels take,
with redundant bar-length constraints detected and dropped. The public functions evaluate the
model at a state; they call the same kernels as the simulator.

Coordinates: q = vec(N) node by node (x0, y0, z0, x1, ...), shape (3 n_nodes,); velocities qd
likewise. Force densities are positive in tension.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import scipy.linalg

from tenscontrol.mechanics import rigid_kernels as K
from tenscontrol.mechanics.geometry import member_columns
from tenscontrol.model.structure import Structure

__all__ = [
    "RigidBarModel", "rigid_model", "mass_matrix", "gravity_vector", "constraint_jacobian",
    "accelerations", "total_energy", "force_densities",
]


def mass_matrix(structure: Structure, include_radius: bool = False) -> np.ndarray:
    """Consistent mass matrix M (3n, 3n) [kg] of rigid bars plus point masses.

    A bar of mass m and length l contributes ``m Xbar^T Xbar + mu H`` (theory.md section 3):
    translation of its centre plus rotation with transverse inertia ``mu l^2``. By default
    the bar is a slender rod, mu = m/12, which gives the block
    ``[[m/3, m/6], [m/6, m/3]] kron I_3`` on its two nodes, as in the paper's reference code.

    Parameters
    ----------
    structure : Structure
    include_radius : bool
        Treat each bar as a solid cylinder of its radius r: mu = m/12 + m r^2 / (4 l^2).
    """
    m, l = structure.bar_masses, structure.bar_lengths
    r = np.array([bar.radius for bar in structure.bars])
    mu = m / 12 + (m * r**2 / (4 * l**2) if include_radius else 0.0)
    return bar_mass_matrix(structure, mu)


def bar_mass_matrix(structure: Structure, mu) -> np.ndarray:
    """sum over bars of m Xbar^T Xbar + mu H, plus the point masses (3n, 3n) [kg].

    `mu` (n_bars,) [kg] is each bar's transverse inertia over its length squared; the rigid
    model and the compressible model's constant part differ only in it.
    """
    n = structure.n_nodes
    M = np.zeros((n, n))
    for (i, j), m, mu_k in zip(structure.bar_nodes, structure.bar_masses, mu):
        M[i, i] += m / 4 + mu_k
        M[j, j] += m / 4 + mu_k
        M[i, j] += m / 4 - mu_k
        M[j, i] += m / 4 - mu_k
    for pm in structure.point_masses:
        M[pm.node, pm.node] += pm.mass
    return np.kron(M, np.eye(3))


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


def _independent_bars(structure: Structure) -> tuple[np.ndarray, tuple[int, ...]]:
    """Bars whose length constraints are independent at q0 (theory.md section 8)."""
    free = structure.free_coordinates
    J = _bar_rows(structure, structure.nodes.reshape(-1))[:, free]
    if J.shape[0] == 0:
        return np.arange(0), ()
    sv = np.linalg.svd(J, compute_uv=False) if J.size else np.zeros(0)
    smax = sv.max() if sv.size else 0.0
    rank = int(np.sum(sv > 1e-10 * smax)) if smax > 0 else 0
    if rank == J.shape[0]:
        return np.arange(J.shape[0]), ()
    # QR with column pivoting on J^T orders the rows by independence
    _, _, piv = scipy.linalg.qr(J.T, pivoting=True, mode="economic")
    keep = np.sort(piv[:rank])
    dropped = tuple(int(k) for k in np.sort(piv[rank:]))
    return keep, dropped


@dataclass(frozen=True, eq=False)
class RigidBarModel:
    """The rigid-bar model of a structure as the arrays the compiled kernels take.

    Attributes
    ----------
    structure : Structure
    M : ndarray, shape (3n, 3n)
        Mass matrix [kg].
    W : ndarray, shape (3n, 3n)
        Inverse of M on the free coordinates, zero on fixed rows and columns [1/kg]. Then
        ``W P = Z (Z^T M Z)^{-1} Z^T`` restricted to the fixed-coordinate null space.
    G : ndarray, shape (3n,)
        Gravity force vector [N].
    constrained_bars : ndarray of int
        Bars whose length constraints are enforced; redundant ones are dropped.
    dropped_bars : tuple of int
        Bars whose length constraints were redundant at q0 (e.g. both ends fully fixed).
    col : ndarray of int, shape (3n,)
        Position of each coordinate among the free coordinates, -1 if fixed.
    """

    structure: Structure
    M: np.ndarray
    W: np.ndarray
    G: np.ndarray
    constrained_bars: np.ndarray
    dropped_bars: tuple
    col: np.ndarray

    @property
    def n_coordinates(self) -> int:
        return self.M.shape[0]

    @property
    def member_args(self) -> tuple:
        """(si, sj, sk, sl0, sc, ssp): the tension-member arrays of the kernels."""
        return member_args(self.structure)

    @property
    def bar_args(self) -> tuple:
        """(bi, bj, bl2): constrained bars' end nodes and squared lengths."""
        s, k = self.structure, self.constrained_bars
        return (np.ascontiguousarray(s.bar_nodes[k, 0]), np.ascontiguousarray(s.bar_nodes[k, 1]),
                np.array(s.bar_lengths[k] ** 2))

    def __repr__(self) -> str:
        return (f"RigidBarModel(structure={self.structure.name!r}, coordinates={self.M.shape[0]}, "
                f"free={int((self.col >= 0).sum())}, "
                f"constrained_bars={self.constrained_bars.size}, "
                f"dropped_bars={list(self.dropped_bars)})")


def member_args(structure: Structure) -> tuple:
    """(si, sj, sk, sl0, sc, ssp): the tension-member arrays the kernels of both bar models take."""
    s = structure
    return (np.ascontiguousarray(s.string_nodes[:, 0]), np.ascontiguousarray(s.string_nodes[:, 1]),
            np.array(s.string_stiffness, dtype=float), np.array(s.string_rest_lengths, dtype=float),
            np.array(s.string_damping, dtype=float), s.string_is_spring.astype(float))


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
    M = mass_matrix(structure, include_radius)
    free = structure.free_coordinates
    W = free_inverse(M, free)
    keep, dropped = _independent_bars(structure)
    if dropped:
        names = ", ".join(f"bar {k} (nodes {structure.bar_nodes[k][0]}->{structure.bar_nodes[k][1]})"
                          for k in dropped)
        warnings.warn(
            f"{structure.name}: the length constraints of {names} are redundant (for example both "
            "ends fully fixed) and are dropped; the bars keep their mass",
            stacklevel=3,
        )
    col = -np.ones(M.shape[0], dtype=np.int64)
    col[free] = np.arange(len(free))
    return RigidBarModel(structure, M, W, gravity_vector(structure), keep, dropped, col)


def rigid_model(structure: Structure, include_radius: bool = False) -> RigidBarModel:
    """Build (or fetch from a small cache) the rigid-bar model of `structure`.

    `include_radius` selects the solid-cylinder bar inertia (see :func:`mass_matrix`).
    """
    if not isinstance(structure, Structure):
        raise TypeError(f"expected a tenscontrol.Structure, got {type(structure).__name__}")
    return _rigid_model_cached(structure, bool(include_radius))


def _state(structure: Structure, q, qd):
    nq = 3 * structure.n_nodes
    q = structure.nodes.reshape(-1).copy() if q is None else np.asarray(q, dtype=float).reshape(-1)
    qd = np.zeros(nq) if qd is None else np.asarray(qd, dtype=float).reshape(-1)
    for name, v in (("q", q), ("qd", qd)):
        if v.shape != (nq,):
            raise ValueError(f"{name} must have {nq} entries (3 per node), got {v.size}")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{name} must be finite")
    return np.ascontiguousarray(q), np.ascontiguousarray(qd)


def accelerations(structure: Structure, q=None, qd=None, force=None, include_radius=False):
    """Constrained nodal accelerations and bar force densities (theory.md (21)-(23)).

    Parameters
    ----------
    structure : Structure
    q, qd : array_like, shape (3n,), optional
        Positions [m] and velocities [m/s]; the initial configuration at rest by default.
    force : array_like, shape (n_nodes, 3) or (3n,), optional
        External nodal forces [N].
    include_radius : bool
        Solid-cylinder bar inertia instead of slender rods (see :func:`mass_matrix`).

    Returns
    -------
    qdd : ndarray, shape (3n,)
        Accelerations [m/s^2]; zero on fixed coordinates.
    bar_force_densities : ndarray, shape (n_bars,)
        psi_k = -2 lambda_k [N/m] (negative in compression); 0 for dropped redundant bars.
    """
    model = rigid_model(structure, include_radius)
    q, qd = _state(structure, q, qd)
    f = np.zeros_like(q) if force is None else np.asarray(force, dtype=float).reshape(-1)
    if f.shape != q.shape:
        raise ValueError(f"force must have shape ({structure.n_nodes}, 3), got {np.shape(force)}")
    bi, bj, _ = model.bar_args
    qdd = np.empty_like(q)
    lam = np.empty(len(bi))
    gamma = np.empty(structure.n_strings)
    K.accelerations(q, qd, f, model.W, model.G, bi, bj, *model.member_args, qdd, lam, gamma)
    psi = np.zeros(structure.n_bars)
    psi[model.constrained_bars] = -2.0 * lam
    return qdd, psi


def force_densities(structure: Structure, q=None) -> np.ndarray:
    """Tension-member force densities gamma (n_strings,) [N/m] with the slack rule."""
    model = rigid_model(structure)
    q, qd = _state(structure, q, None)
    gamma = np.empty(structure.n_strings)
    si, sj, sk, sl0, _, ssp = model.member_args
    K.member_forces(q, qd, si, sj, sk, sl0, np.zeros_like(sl0), ssp, gamma, np.zeros_like(q))
    return gamma


def total_energy(structure: Structure, q=None, qd=None, include_radius=False) -> float:
    """Total energy Etot = T - G^T q + V_s [J] (theory.md (34)); slack strings store none.

    `include_radius` selects the solid-cylinder bar inertia for T (see :func:`mass_matrix`).
    """
    model = rigid_model(structure, include_radius)
    q, qd = _state(structure, q, qd)
    si, sj, sk, sl0, _, ssp = model.member_args
    return float(K.total_energy(q, qd, model.M, model.G, si, sj, sk, sl0, ssp))
