"""Named records the compiled kernels take, built once per model.

The leaf records are numba-compatible named tuples of contiguous arrays (built in Python, read
by field name inside the kernels). A model's record is a numba structref holding its arrays and
leaf records: a kernel call from the step loop then passes one object whose numba type is stored
on it. Passing the leaf tuples themselves would cost about 2 us a call, because numba
recomputes a named tuple's type from every field on each call, more than the rigid T-bar
kernel's own 0.9 us; the structref adds under 0.1 us.

Records
-------
:class:`Members`
    the tension members (strings and springs) of either bar model.
:class:`RigidBars`, :class:`CompressibleBars`
    the bars as each model sees them.
:class:`RigidKernelModel`, :class:`CompressibleKernelModel`
    a whole model, as :attr:`RigidBarModel.kernel <tenscontrol.mechanics.rigid.model.RigidBarModel>`
    and :attr:`CompressibleBarModel.kernel
    <tenscontrol.mechanics.compressible.model.CompressibleBarModel>` hold it.
:class:`Correction`
    the settings of the rigid model's direct correction, built once per run.
:class:`HeldForceDensities`
    force densities that replace the members' elastic laws (the control model), or not.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from numba.core import types
from numba.experimental import structref

from tenscontrol.mechanics.kernels.cache import CACHE
from tenscontrol.model.structure import Structure

__all__ = [
    "Members", "ClusteredMembers", "RigidBars", "CompressibleBars", "Correction", "HeldForceDensities",
    "RigidKernelModel", "CompressibleKernelModel", "members_record", "rigid_bars_record",
    "follow_laws",
]


class Members(NamedTuple):
    """The tension members (strings and springs) as the kernels read them; each (n_strings,).

    Attributes
    ----------
    i, j : ndarray of int64
        Start and end node.
    stiffness : ndarray of float
        Axial stiffness k [N/m].
    rest_length : ndarray of float
        Rest length l0 [m].
    damping : ndarray of float
        Damping coefficient c [N s/m].
    spring : ndarray of bool
        True for a two-sided spring, False for a one-sided string (slack when l <= l0).
    """

    i: np.ndarray
    j: np.ndarray
    stiffness: np.ndarray
    rest_length: np.ndarray
    damping: np.ndarray
    spring: np.ndarray


class ClusteredMembers(NamedTuple):
    """:class:`Members` of a structure with clustered cables (docs/theory.md, "Clustered
    cables"): its six fields, then the cables. A separate type, so that the kernels compile
    the cable code only for it and a structure without cables runs the plain member loop.

    Attributes
    ----------
    i, j, stiffness, rest_length, damping, spring
        As for :class:`Members`, with stiffness and damping 0 for a cable's segments (their own
        law is replaced by the cable's).
    cable : ndarray of int64, shape (n_strings,)
        The cable each member is a segment of, -1 for a member on its own.
    cable_segments : ndarray of int64
        The cables' segments (member indices), cable after cable, each in the order it runs.
    cable_start : ndarray of int64, shape (n_cables + 1,)
        Cable c's segments are ``cable_segments[cable_start[c]:cable_start[c + 1]]``.
    cable_stiffness, cable_rest_length, cable_damping : ndarray of float, shape (n_cables,)
        Stiffness k [N/m], rest length L0 [m] and damper coefficient [N s/m] of each cable.
    """

    i: np.ndarray
    j: np.ndarray
    stiffness: np.ndarray
    rest_length: np.ndarray
    damping: np.ndarray
    spring: np.ndarray
    cable: np.ndarray
    cable_segments: np.ndarray
    cable_start: np.ndarray
    cable_stiffness: np.ndarray
    cable_rest_length: np.ndarray
    cable_damping: np.ndarray


class RigidBars(NamedTuple):
    """Bars of the rigid model: end nodes and lengths; each (n,) for the n bars it covers.

    Attributes
    ----------
    i, j : ndarray of int64
        Start and end node.
    length : ndarray of float
        Bar length l [m] (the constraint is |n_j - n_i|^2 = l^2).
    """

    i: np.ndarray
    j: np.ndarray
    length: np.ndarray


class CompressibleBars(NamedTuple):
    """Bars of the compressible model (docs/theory.md, "Compressible bars"); each (n_bars,).

    Attributes
    ----------
    i, j : ndarray of int64
        Start and end node.
    a0 : ndarray of float
        Constant part of the inertia coefficient a(l) [kg]: m/12 for ``kinetic="paper"``, else 0.
    radius_coefficient, radius_exponent : ndarray of float
        The radius part of a(l) is ``radius_coefficient * l**radius_exponent`` = m r(l)^2 / (4 l^2)
        [kg]: coefficient m r0^2 l0^(2 nu) / 4 (0 without the radius), exponent -2 (1 + nu).
    stiffness : ndarray of float
        Axial stiffness k_b [N/m].
    rest_length : ndarray of float
        Rest length l0_b [m].
    """

    i: np.ndarray
    j: np.ndarray
    a0: np.ndarray
    radius_coefficient: np.ndarray
    radius_exponent: np.ndarray
    stiffness: np.ndarray
    rest_length: np.ndarray


class Correction(NamedTuple):
    """Settings of the rigid model's direct correction (docs/theory.md, "The direct correction with
    the energy row").

    Attributes
    ----------
    energy : bool
        Also correct the total energy (``correction="energy"``); False corrects bar lengths and
        their rates only (``"geometric"``).
    position_tol, velocity_tol, energy_tol : float
        Residual norms to reach [m^2], [m^2/s], [J].
    max_iterations : int
        Newton iterations before giving up.
    """

    energy: bool
    position_tol: float
    velocity_tol: float
    energy_tol: float
    max_iterations: int


class HeldForceDensities(NamedTuple):
    """Force densities that replace the members' elastic laws, or that are ignored.

    Attributes
    ----------
    gamma : ndarray, shape (n_strings,)
        String force densities [N/m], used when `hold_gamma`; they apply to slack strings too.
    psi : ndarray, shape (n_bars,)
        Bar force densities [N/m], used when `hold_psi`.
    hold_gamma, hold_psi : bool
        Whether the strings (bars) take these values instead of following their elastic laws.
    """

    gamma: np.ndarray
    psi: np.ndarray
    hold_gamma: bool
    hold_psi: bool


def follow_laws() -> HeldForceDensities:
    """The record that holds nothing: every member follows its elastic law."""
    return HeldForceDensities(np.zeros(0), np.zeros(0), False, False)


def members_record(structure: Structure) -> Members | ClusteredMembers:
    """The tension members of `structure` as a :class:`Members` record, or a
    :class:`ClusteredMembers` record if it has cables."""
    s = structure
    # a cable segment's own law is replaced by its cable's: stiffness and damping 0 here make
    # the plain member loop skip it (gamma 0, no force, no energy), the cable code applies it
    segment = s.string_cable >= 0
    plain = (
        np.ascontiguousarray(s.string_nodes[:, 0], dtype=np.int64),
        np.ascontiguousarray(s.string_nodes[:, 1], dtype=np.int64),
        np.where(segment, 0.0, s.string_stiffness), np.array(s.string_rest_lengths, dtype=float),
        np.where(segment, 0.0, s.string_damping), np.array(s.string_is_spring, dtype=np.bool_))
    if not s.cables:
        return Members(*plain)
    return ClusteredMembers(
        *plain, np.array(s.string_cable, dtype=np.int64),
        np.array([k for c in s.cables for k in c.strings], dtype=np.int64),
        np.cumsum([0] + [len(c.strings) for c in s.cables]).astype(np.int64),
        np.array(s.cable_stiffness, dtype=float), np.array(s.cable_rest_lengths, dtype=float),
        np.array(s.cable_damping, dtype=float))


def rigid_bars_record(structure: Structure, bars=None) -> RigidBars:
    """The bars `bars` (indices; all by default) of `structure` as a :class:`RigidBars` record."""
    k = np.arange(structure.n_bars) if bars is None else np.asarray(bars, dtype=np.int64)
    p = structure.bar_nodes
    return RigidBars(np.ascontiguousarray(p[k, 0], dtype=np.int64),
                     np.ascontiguousarray(p[k, 1], dtype=np.int64),
                     np.array(structure.bar_lengths[k], dtype=float))


# ---- the model records (structrefs) ---------------------------------------------------------


@structref.register
class RigidKernelModelType(types.StructRef):
    """numba type of :class:`RigidKernelModel`."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(t)) for name, t in fields)


@structref.register
class CompressibleKernelModelType(types.StructRef):
    """numba type of :class:`CompressibleKernelModel`."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(t)) for name, t in fields)


_RIGID_FIELDS = ("mass_diagonal", "mass_coupling", "gravity", "free_column", "bars", "members",
                 "kkt", "normal")
_COMPRESSIBLE_FIELDS = ("constant_mass", "inverse_mass", "gravity", "free", "mass_is_constant",
                        "bars", "members")


class _TypedProxy(structref.StructRefProxy):
    """A structref proxy whose numba type is a plain attribute, not the base class's property.

    numba reads ``_numba_type_`` to type the argument on every kernel call. As a property it
    runs Python code inside numba's typing, which clears any exception raised there: a Ctrl-C
    that landed in it was lost and the run went on (1 run in 20 in a test that interrupts a
    long compressible simulation). A plain attribute, set once when the record is boxed, runs
    no Python code, so the interrupt is raised at the next line of ours.
    """

    _numba_type_ = None     # shadows the base's property; each instance holds its own type

    @classmethod
    def _numba_box_(cls, ty, mi):
        instance = super()._numba_box_(ty, mi)
        instance.__dict__["_numba_type_"] = ty
        return instance


class RigidKernelModel(_TypedProxy):
    """The rigid-bar model as the kernels of :mod:`~tenscontrol.mechanics.rigid.kernels` take it.

    Fields (read inside the kernels; in Python read them from the
    :class:`~tenscontrol.mechanics.rigid.model.RigidBarModel` that holds this record):

    mass_diagonal : ndarray (n_nodes,)
        Diagonal of the node-level mass matrix Mn, M = Mn kron I_3 [kg].
    mass_coupling : MassCoupling
        The off-diagonal entries of Mn, one per bar (all bars, dropped ones included).
    gravity : ndarray (3n,)
        Gravity force vector G [N].
    free_column : ndarray of int64 (3n,)
        Position of each coordinate among the free ones, -1 if fixed.
    bars : RigidBars
        The constrained bars (redundant ones left out).
    members : Members
        The tension members.
    kkt : KKTPattern
        Ordering, envelope and mass part of the accelerations' KKT system.
    normal : NormalPattern
        Envelope of the correction's normal equations.

    No field is (3n, 3n): storage and the kernels' cost grow with the members (times the
    square of the envelope width), see :mod:`~tenscontrol.mechanics.rigid.sparse`.
    """

    def __new__(cls, mass_diagonal, mass_coupling, gravity, free_column, bars, members, kkt,
                normal):
        return _new_rigid(mass_diagonal, mass_coupling, gravity, free_column, bars, members, kkt,
                          normal)

    def __repr__(self) -> str:
        # the fields only: reading them from Python would compile a getter per field
        return f"RigidKernelModel({', '.join(_RIGID_FIELDS)})"


class CompressibleKernelModel(_TypedProxy):
    """The compressible-bar model as :mod:`~tenscontrol.mechanics.compressible.kernels` take it.

    Fields (read inside the kernels; in Python read them from the
    :class:`~tenscontrol.mechanics.compressible.model.CompressibleBarModel` that holds this record):

    constant_mass : ndarray (3n, 3n)
        Constant part M0 of the mass matrix [kg]: sum m Xbar^T Xbar + mu0 H + point masses.
    inverse_mass : ndarray (3n, 3n) or (0, 0)
        With `mass_is_constant`, the inverse of M0 on the free coordinates (zero fixed rows and
        columns) [1/kg]; else empty.
    gravity : ndarray (3n,)
        Gravity force vector G [N].
    free : ndarray of int64 (nf,)
        Indices of the free coordinates.
    mass_is_constant : bool
        True when a(l) = 0 for every bar: M = M0 and N_T = 0.
    bars : CompressibleBars
    members : Members
    """

    def __new__(cls, constant_mass, inverse_mass, gravity, free, mass_is_constant, bars, members):
        return _new_compressible(constant_mass, inverse_mass, gravity, free, mass_is_constant,
                                 bars, members)

    def __repr__(self) -> str:
        return f"CompressibleKernelModel({', '.join(_COMPRESSIBLE_FIELDS)})"


structref.define_proxy(RigidKernelModel, RigidKernelModelType, list(_RIGID_FIELDS))
structref.define_proxy(CompressibleKernelModel, CompressibleKernelModelType,
                       list(_COMPRESSIBLE_FIELDS))


# Constructors compiled with cache=True: numba's default proxy constructor is compiled afresh in
# every process (about 0.3 s), these load from the cache like the kernels.
@njit(cache=CACHE)
def _new_rigid(mass_diagonal, mass_coupling, gravity, free_column, bars, members, kkt, normal):
    return RigidKernelModel(mass_diagonal, mass_coupling, gravity, free_column, bars, members,
                            kkt, normal)


@njit(cache=CACHE)
def _new_compressible(constant_mass, inverse_mass, gravity, free, mass_is_constant, bars,
                      members):
    return CompressibleKernelModel(constant_mass, inverse_mass, gravity, free, mass_is_constant,
                                   bars, members)
