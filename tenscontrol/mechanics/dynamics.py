"""The public mechanics of either bar model: mass matrix, accelerations, energy, Jacobians.

Each function takes ``bars="rigid"`` (bar lengths are constraints, docs/theory.md, "The Lagrangian
model in Cartesian nodal coordinates" and "Rigid bars: constraints and multipliers") or
``bars="compressible"`` (elastic bars, sections 12-13), validates its arguments here, builds (or
fetches) the model once and evaluates it with the compiled kernels the simulator uses.

Coordinates: q = vec(N) node by node (x0, y0, z0, x1, ...), shape (3n,) or (n_nodes, 3);
velocities qd and loads likewise. Force densities are positive in tension.
"""

from __future__ import annotations


import numpy as np

from tenscontrol import validation
from tenscontrol.mechanics.compressible import model as compressible
from tenscontrol.mechanics.rigid import model as rigid
from tenscontrol.mechanics.compressible.model import check_kinetic
from tenscontrol.mechanics.geometry import state_vectors
from tenscontrol.model.structure import Structure

__all__ = ["BAR_MODELS", "mass_matrix", "accelerations", "total_energy", "jacobians"]

BAR_MODELS = ("rigid", "compressible")


def _check(structure, bars, kinetic, include_radius) -> None:
    """Raise TypeError/ValueError naming the first invalid option and its fix."""
    if not isinstance(structure, Structure):
        raise TypeError(f"structure: expected a tenscontrol.Structure, got "
                        f"{type(structure).__name__}")
    validation.choice("bars", bars, BAR_MODELS)
    check_kinetic(kinetic)
    validation.flag("include_radius", include_radius)
    if bars == "rigid" and kinetic != "consistent":
        raise ValueError(f"kinetic={kinetic!r} applies to compressible bars only; pass "
                         "bars='compressible' or leave kinetic unset")


def _model(structure, bars, kinetic, include_radius):
    """The rigid or compressible model of `structure` (built once), after checking the options."""
    _check(structure, bars, kinetic, include_radius)
    if bars == "rigid":
        return rigid.rigid_model(structure, bool(include_radius))
    return compressible.compressible_model(structure, kinetic, bool(include_radius))


def mass_matrix(structure: Structure, q=None, *, bars: str = "rigid",
                kinetic: str = "consistent", include_radius: bool = False) -> np.ndarray:
    """Mass matrix M (3n, 3n) [kg]: T = 1/2 qd^T M qd.

    Rigid bars (docs/theory.md, "The Lagrangian model in Cartesian nodal coordinates"): constant.
    A bar of mass m and length l contributes
    ``m Xbar^T Xbar + mu H``, translation of its centre plus rotation with transverse inertia
    ``mu l^2``; a slender rod has mu = m/12, the block ``[[m/3, m/6], [m/6, m/3]] kron I_3`` on
    its two nodes, as in the paper's reference code. Compressible bars (docs/theory.md,
    "Compressible bars"):
    M_qdd(q), equal to the rigid one with ``kinetic="consistent"`` and no radius.

    Parameters
    ----------
    structure : Structure
    q : array_like, shape (3n,) or (n_nodes, 3), optional
        Configuration [m] (compressible bars only: the rigid mass matrix is constant); the
        structure's nodes by default.
    bars : {"rigid", "compressible"}
    kinetic : {"consistent", "paper"}
        Kinetic energy of compressible bars (docs/theory.md, "Compressible bars"); rigid bars
        take only
        ``"consistent"``.
    include_radius : bool
        Give the bars the transverse inertia of solid cylinders of their radius:
        mu = m/12 + m r^2 / (4 l^2) (compressible bars: r(l) = r0 (l/l0)^(-nu)).

    Returns
    -------
    ndarray, shape (3n, 3n)
    """
    _check(structure, bars, kinetic, include_radius)
    q, _, _ = state_vectors(structure, q)
    if bars == "rigid":
        return rigid.rigid_mass_matrix(structure, bool(include_radius))
    return compressible.mass_at(_model(structure, bars, kinetic, include_radius), q)


def accelerations(structure: Structure, q=None, qd=None, *, loads=None, bars: str = "rigid",
                  kinetic: str = "consistent", include_radius: bool = False):
    """Nodal accelerations and bar force densities at a state (Hsu et al. (2021), eqs. (21)-(23);
    docs/theory.md, "Compressible bars").

    Parameters
    ----------
    structure : Structure
    q, qd : array_like, shape (3n,) or (n_nodes, 3), optional
        Positions [m] and velocities [m/s]; the structure's nodes at rest by default.
    loads : array_like, shape (n_nodes, 3) or (3n,), optional
        External nodal forces [N].
    bars, kinetic, include_radius
        The bar model, as for :func:`mass_matrix`.

    Returns
    -------
    qdd : ndarray, shape (3n,)
        Accelerations [m/s^2]; zero on fixed coordinates.
    bar_force_densities : ndarray, shape (n_bars,)
        psi [N/m], negative in compression. Rigid bars: the constraint forces, psi_k =
        -2 lambda_k (0 for a bar whose redundant constraint was dropped); compressible bars:
        the elastic law k_b (1 - l0/l).
    """
    model = _model(structure, bars, kinetic, include_radius)
    q, qd, f = state_vectors(structure, q, qd, loads)
    module = rigid if bars == "rigid" else compressible
    return module.accelerations_at(model, q, qd, f)


def total_energy(structure: Structure, q=None, qd=None, *, bars: str = "rigid",
                 kinetic: str = "consistent", include_radius: bool = False) -> float:
    """Total energy Etot = T - G^T q + V_s (+ V_b for compressible bars) [J].

    Hsu et al. (2021), eq. (34), and docs/theory.md, "Compressible bars"; slack strings store no
    energy, compressible bars always do.

    Parameters
    ----------
    structure : Structure
    q, qd : array_like, shape (3n,) or (n_nodes, 3), optional
        Positions [m] and velocities [m/s]; the structure's nodes at rest by default.
    bars, kinetic, include_radius
        The bar model, as for :func:`mass_matrix`.
    """
    model = _model(structure, bars, kinetic, include_radius)
    q, qd, _ = state_vectors(structure, q, qd)
    module = rigid if bars == "rigid" else compressible
    return module.energy_at(model, q, qd)


def jacobians(structure: Structure, q=None, qd=None, *, loads=None, gamma=None,
              bar_force_densities=None, bars: str = "rigid",
              kinetic: str = "consistent", include_radius: bool = False) -> dict:
    """Analytic partial derivatives of the compressible model's qdd(q, qd, gamma, psi, f).

    docs/theory.md, "Compressible bars" and "Linearization: force densities in, nodal forces as
    disturbances": ``d qdd/dq = W_c (d xi_c/dq - d(M_qdd(q) qdd)/dq |qdd)`` and
    ``d qdd/dqd = W_c d xi_c/dqd``, with ``W_c = Z (Z^T M_qdd Z)^(-1) Z^T`` and N_T
    (docs/theory.md, "Compressible bars") on the force side; valid at any state, not only at equilibria. For rigid bars use
    :func:`tenscontrol.linearize`, which has the constraint forces in closed form.

    Parameters
    ----------
    structure : Structure
    q, qd, loads : array_like, shape (3n,) or (n_nodes, 3), optional
        Operating point: positions [m], velocities [m/s], external nodal forces [N].
    gamma : array_like, shape (n_strings,), optional
        None (passive model): the members follow their elastic laws and slack rule, so
        ``dq`` includes the material stiffness ``k l0/l^3 Yhat q q^T Yhat``. Given (control
        model): the force densities [N/m] are held at these values, for every member
        regardless of slack, and only geometric stiffness remains.
    bar_force_densities : array_like, shape (n_bars,), optional
        The same for the bars (material stiffness ``k_b l0/l^3 H q q^T H`` when None).
    bars : {"rigid", "compressible"}
        Only ``"compressible"`` is differentiated here; ``"rigid"`` (the default, as everywhere)
        raises a ValueError that points to :func:`tenscontrol.linearize`.
    kinetic, include_radius
        As for :func:`mass_matrix`.

    Returns
    -------
    dict
        ``"dq"``, ``"dqd"`` (3n, 3n): d qdd/dq [1/s^2], d qdd/dqd [1/s];
        ``"dgamma"`` (3n, n_strings) = -W_c Yhat(q) [m/(s^2 N/m)]: with `gamma` None, columns of
        slack strings are zero; with `gamma` given, every column is the exact derivative;
        ``"dbar_force_densities"`` (3n, n_bars) = -W_c Xhat(q), the derivative with respect to the bar force
        densities; ``"dloads"`` (3n, 3n) = W_c [1/kg], with respect to the loads;
        ``"qdd"`` (3n,) [m/s^2]; ``"gamma"``, ``"bar_force_densities"``: the force densities used [N/m].
        Damper terms (active members) are included in ``dq`` and ``dqd``; the loads are held
        constant. Rows of fixed coordinates are zero; columns of fixed coordinates hold the
        derivatives with respect to them (restrict with ``structure.free_coordinates`` for a
        minimal state, docs/theory.md, "Linearization: force densities in, nodal forces as
        disturbances").
    """
    _check(structure, bars, kinetic, include_radius)
    if bars == "rigid":
        raise ValueError("jacobians: rigid bars have no such function here; use "
                         "tenscontrol.linearize(structure, ...), which differentiates the "
                         "rigid model with its constraint forces in closed form, or pass "
                         "bars='compressible'")
    model = _model(structure, bars, kinetic, include_radius)
    q, qd, f = state_vectors(structure, q, qd, loads)
    return compressible.jacobians_at(model, q, qd, f, gamma, bar_force_densities)
