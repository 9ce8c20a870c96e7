"""The member laws: strings with their slack rule, springs, compressible bars and dampers.

One place for the constitutive laws of docs/theory.md ("Strings and springs", "Dampers",
"Compressible bars") and their derivatives, for every layer that evaluates them: the compiled
kernels (per member, on scalars), and the statics, the linearization, the actuation, the
checks and the studies (on arrays). The next change to a member model (clustered strings, a
nonlinear material) changes this module.

The laws, for a member of stiffness k [N/m], rest length l0 [m] and length l [m]:

- **elastic law** ``gamma = k (1 - l0/l)`` [N/m], two-sided: springs, compressible bars (their
  psi, negative in compression, never slack) and strings while taut;
- **slack rule**: a one-sided string is active (taut) when ``l > l0`` and slack when
  ``l <= l0`` -- exactly at its rest length it is slack -- with gamma = 0, no material
  stiffness, no energy and its damper off; a two-sided spring is always active. A NaN length
  counts as active, so that NaN reaches the forces (and the integrators reject the step)
  instead of a silently dropped member;
- **slope** ``d gamma/dl = k l0 / l^2`` [N/m^2] and **material coefficient**
  ``k l0 / l^3`` [N/m^3], the slope over l: ``d gamma/dq = (k l0 / l^3) s^T`` on node j's
  coordinates (s = n_j - n_i), the material stiffness ``(k l0 / l^3) Yhat q q^T Yhat`` of the
  tangent stiffness and the passive linearization;
- **potential** ``1/2 k (l - l0)^2`` [J] (d/dl: gamma l) and **tension** ``gamma l = k (l - l0)``
  [N];
- **damper**: the force density ``c ldot / l = c (s . sd) / l^2`` [N/m] adds to gamma (the
  member pulls harder while it lengthens) and dissipates ``c ldot^2 = c (s . sd)^2 / l^2`` [W];
- **clustered cable** (docs/theory.md, "Clustered cables"): a cable of stiffness k, rest
  length L0 and length L (the sum of its segments' lengths) follows the string law as one
  member: tension ``k (L - L0)`` while ``L > L0``, else 0 (:func:`string_tension`), energy
  :func:`string_energy` of (k, L0, L); each segment of length l carries the tension, so its
  force density is ``T / l``;
- **rest length for a force density** (the law inverted, for prestress design):
  ``l0 = l (1 - gamma/k)`` at a given k, ``l0 = EA / (gamma + EA/l)`` when ``k = EA / l0``.

Each law comes in two forms defined here together: a compiled scalar function for the numba
kernels (``cache=CACHE``; small enough that LLVM inlines it, so the kernels run as fast as
with the formula written in) and a numpy function on arrays of members (broadcasting; plain
floats work too). Where the rule has no branch both are the same code; tests/test_laws.py
checks that the two forms agree on random members. The material coefficient's compiled form
takes the kernels' squared length as well (``k l0 / (l2 l)``): it is the kernels' rounding.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tenscontrol.mechanics.kernels.cache import CACHE as _CACHE

__all__ = [
    "active_set", "damper_densities", "damper_density", "damper_dissipation",
    "damper_dissipations", "density_slopes", "elastic_densities", "elastic_density",
    "elastic_energies", "elastic_energy", "is_active", "material_coefficient",
    "material_coefficients", "rest_length_at_modulus", "rest_length_at_stiffness",
    "string_densities", "string_density", "string_energies", "string_energy",
    "string_tension", "string_tensions",
]


# ---- the slack rule -------------------------------------------------------------------------


@njit(cache=_CACHE)
def is_active(l, l0, spring):
    """Whether one tension member acts (compiled scalar): a spring always, a string when
    ``l > l0`` (slack at ``l <= l0``; a NaN length acts)."""
    return spring or not l <= l0


def active_set(l, l0, spring):
    """The active tension members (bool, broadcast shape of the arguments): springs always,
    strings longer than their rest length.

    Parameters
    ----------
    l, l0 : array_like
        Lengths and rest lengths [m].
    spring : array_like of bool
        True for a two-sided spring, False for a one-sided string.
    """
    return spring | ~np.less_equal(l, l0)


# ---- force densities ------------------------------------------------------------------------


def elastic_densities(k, l0, l):
    """The elastic law ``k (1 - l0/l)`` [N/m] with no slack rule: springs, compressible bars,
    taut strings (arrays broadcast; compiled for scalars as :func:`elastic_density`)."""
    return k * (1.0 - l0 / l)


#: The elastic law ``k (1 - l0/l)`` [N/m] of one member, compiled (the same code).
elastic_density = njit(cache=_CACHE)(elastic_densities)


@njit(cache=_CACHE)
def string_density(k, l0, l, spring):
    """Force density [N/m] of one tension member with the slack rule (compiled scalar)."""
    return elastic_density(k, l0, l) if is_active(l, l0, spring) else 0.0


def string_densities(k, l0, l, spring):
    """Force densities gamma [N/m] of tension members with the slack rule: the elastic law
    where :func:`active_set`, else 0.

    Parameters
    ----------
    k, l0, l : array_like
        Stiffnesses [N/m], rest lengths [m] and lengths [m].
    spring : array_like of bool
        True for two-sided springs.
    """
    return np.where(active_set(l, l0, spring), elastic_densities(k, l0, l), 0.0)


# ---- derivatives ----------------------------------------------------------------------------


def density_slopes(k, l0, l):
    """``d gamma / dl = k l0 / l^2`` [N/m^2] of the elastic law (where the member is active)."""
    return k * l0 / l**2


@njit(cache=_CACHE)
def material_coefficient(k, l0, l, l2):
    """``k l0 / l^3`` [N/m^3] of one member (compiled), with ``l^3`` formed as ``l2 l`` from the
    kernels' squared length l2 [m^2] and length l [m]."""
    return k * l0 / (l2 * l)


def material_coefficients(k, l0, l):
    """Material coefficients ``k l0 / l^3`` [N/m^3], the slope of the elastic law over l: each
    active member adds ``(k l0 / l^3) Yhat q q^T Yhat`` to the stiffness (no slack rule here:
    the callers choose the active set, e.g. a string at rest taken taut)."""
    return k * l0 / l**3


# ---- energy and tension ---------------------------------------------------------------------


def elastic_energies(k, l0, l):
    """Strain energies ``1/2 k (l - l0)^2`` [J] with no slack rule (compressible bars, springs;
    compiled for scalars as :func:`elastic_energy`)."""
    return 0.5 * k * (l - l0) ** 2


#: The strain energy ``1/2 k (l - l0)^2`` [J] of one member, compiled (the same code).
elastic_energy = njit(cache=_CACHE)(elastic_energies)


@njit(cache=_CACHE)
def string_energy(k, l0, l, spring):
    """Strain energy [J] of one tension member with the slack rule (compiled scalar)."""
    return elastic_energy(k, l0, l) if is_active(l, l0, spring) else 0.0


def string_energies(k, l0, l, spring):
    """Strain energies [J] of tension members with the slack rule (0 when slack)."""
    return np.where(active_set(l, l0, spring), elastic_energies(k, l0, l), 0.0)


@njit(cache=_CACHE)
def string_tension(k, l0, l, spring):
    """Tension ``k (l - l0)`` [N] of one tension member or cable with the slack rule (compiled
    scalar; 0 when slack)."""
    return k * (l - l0) if is_active(l, l0, spring) else 0.0


def string_tensions(k, l0, l, spring):
    """Tensions ``gamma l = k (l - l0)`` [N] of tension members with the slack rule (0 when
    slack; negative for a compressed spring)."""
    return np.where(active_set(l, l0, spring), k * (l - l0), 0.0)


# ---- dampers --------------------------------------------------------------------------------


def damper_densities(c, sdot, l2):
    """Damper force densities ``c (s . sd) / l^2`` [N/m] from the coefficients c [N s/m], the
    products s . sd [m^2/s] and the squared lengths l2 [m^2]; they add to gamma while the member
    is active (compiled for scalars as :func:`damper_density`)."""
    return c * sdot / l2


#: The damper force density ``c (s . sd) / l^2`` [N/m] of one member, compiled (the same code).
damper_density = njit(cache=_CACHE)(damper_densities)


def damper_dissipations(c, sdot, l2):
    """Power the dampers dissipate, ``c (s . sd)^2 / l^2 = c ldot^2`` [W] (>= 0 for c >= 0;
    compiled for scalars as :func:`damper_dissipation`)."""
    return c * sdot * sdot / l2


#: The power ``c (s . sd)^2 / l^2`` [W] one damper dissipates, compiled (the same code).
damper_dissipation = njit(cache=_CACHE)(damper_dissipations)


# ---- the law inverted -----------------------------------------------------------------------


def rest_length_at_stiffness(k, l, gamma):
    """Rest length [m] at which a member of stiffness k [N/m] and length l [m] has the force
    density gamma [N/m]: ``l (1 - gamma/k)``; positive only for gamma < k."""
    return l * (1.0 - gamma / k)


def rest_length_at_modulus(EA, l, gamma):
    """Rest length [m] at which a member of axial rigidity EA [N] (stiffness ``EA / l0``) and
    length l [m] has the force density gamma [N/m]: ``EA / (gamma + EA/l)``; positive only for
    gamma > -EA/l."""
    return EA / (gamma + EA / l)
