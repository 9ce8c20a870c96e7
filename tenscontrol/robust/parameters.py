"""Uncertain parameters of a structure, each a real scalar with a range.

A parameter p has its nominal value p0 and a relative half-range w: ``p = p0 (1 + w delta)`` with
``|delta| <= 1`` (docs/theory.md, "Structured uncertainty and mu"). One :class:`Uncertainty`
is one real scalar delta; it may move several members together (a group, e.g. every string's
stiffness by one factor).

Two kinds, both taken at the nominal equilibrium with the form frozen (the configuration q* and
the string force densities gamma* do not move):

- ``"string_stiffness"``: the strings' axial stiffness k = EA/l0 (material and cross-section),
  the prestress held: a string with stiffness ``k' = k (1 + w delta)`` gets the rest length
  ``l0' = l* (1 - gamma*/k')``, so gamma(q*) = gamma* and q* stays an equilibrium. Only the
  material stiffness ``(k - gamma*)/l*^2 s s^T / l*^2`` moves: rank 1 per string.
- ``"point_mass"``: the point masses (payloads), ``m' = m (1 + w delta)``: rank 3 per mass. With
  gravity on, a changed payload weighs more or less, which moves the equilibrium; the frozen
  form ignores that shift (the inertia is what the LFT carries).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tenscontrol.model.structure import Structure

__all__ = ["Uncertainty", "point_masses", "string_stiffness"]

KINDS = ("string_stiffness", "point_mass")


@dataclass(frozen=True)
class Uncertainty:
    """One real uncertain scalar: ``p = p0 (1 + spread * delta)``, ``|delta| <= 1``.

    Attributes
    ----------
    kind : {"string_stiffness", "point_mass"}
        What moves: strings' axial stiffness (prestress held) or point masses.
    members : tuple of int
        The strings (indices into ``structure.strings``) or point masses (indices into
        ``structure.point_masses``) that this one delta scales together.
    spread : float
        Relative half-range w, 0 < w < 1 (dimensionless): the parameter lies in
        ``[p0 (1 - w), p0 (1 + w)]``.
    """

    kind: str
    members: tuple
    spread: float

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"Uncertainty: kind must be one of {list(KINDS)}, got {self.kind!r}")
        members = tuple(int(m) for m in np.atleast_1d(np.asarray(self.members)).ravel())
        if not members:
            raise ValueError(f"Uncertainty {self.kind}: members is empty; name at least one "
                             "string or point mass")
        object.__setattr__(self, "members", members)
        w = float(self.spread) if np.ndim(self.spread) == 0 else np.nan
        # a relative range of 1 or more lets a stiffness or a mass reach zero or turn negative,
        # which no physical structure has (and the mass matrix loses definiteness)
        if not np.isfinite(w) or not 0.0 < w < 1.0:
            raise ValueError(f"Uncertainty {self.name}: spread (relative "
                             f"half-range, p = p0 (1 + spread delta)) must be in (0, 1), got "
                             f"{self.spread!r}; e.g. spread=0.2 for +-20 %")
        object.__setattr__(self, "spread", w)

    @property
    def name(self) -> str:
        """``"k3"`` (string 3), ``"k[0,1,2]"`` (a group), ``"m0"`` (point mass 0)."""
        prefix = "k" if self.kind == "string_stiffness" else "m"
        if len(self.members) == 1:
            return f"{prefix}{self.members[0]}"
        text = ",".join(map(str, self.members))
        return f"{prefix}[{text}]" if len(text) <= 20 else f"{prefix}[{len(self.members)} members]"

    def __repr__(self) -> str:
        return f"Uncertainty({self.name}, +-{100 * self.spread:.3g} %)"


def _indices(which, count: int, what: str, who: str) -> list:
    if which is None:
        return list(range(count))
    idx = np.atleast_1d(np.asarray(which)).ravel()
    if idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
        raise ValueError(f"{who}: {what} must be a non-empty list of integer indices, got "
                         f"{which!r}")
    bad = [int(i) for i in idx if not 0 <= i < count]
    if bad:
        raise ValueError(f"{who}: {what} {bad} out of range; the structure has {count}")
    return [int(i) for i in idx]


def string_stiffness(spread, strings=None, *, grouped: bool = False) -> tuple:
    """Uncertain string stiffness, relative: ``k = k0 (1 + spread delta)``, prestress held.

    Parameters
    ----------
    spread : float
        Relative half-range, in (0, 1) (0.2 means +-20 %).
    strings : sequence of int, optional
        The uncertain strings; all by default (checked against the structure by
        :func:`tenscontrol.robust.uncertain_loop`).
    grouped : bool
        False (default): each string its own delta. True: one delta scales them all together
        (a batch of cable from one supplier).

    Returns
    -------
    tuple of Uncertainty
    """
    members = None if strings is None else tuple(int(i) for i in np.atleast_1d(strings))
    if members is None:
        return (_Pending("string_stiffness", float(spread), grouped),)
    if grouped:
        return (Uncertainty("string_stiffness", members, spread),)
    return tuple(Uncertainty("string_stiffness", (i,), spread) for i in members)


def point_masses(spread, masses=None) -> tuple:
    """Uncertain point masses (payloads), relative: ``m = m0 (1 + spread delta)``, each its own.

    Parameters
    ----------
    spread : float
        Relative half-range, in (0, 1).
    masses : sequence of int, optional
        Indices into ``structure.point_masses``; all by default.

    Returns
    -------
    tuple of Uncertainty
    """
    if masses is None:
        return (_Pending("point_mass", float(spread), False),)
    return tuple(Uncertainty("point_mass", (int(i),), spread) for i in np.atleast_1d(masses))


@dataclass(frozen=True)
class _Pending:
    """"All members" of a kind, resolved once the structure is known."""
    kind: str
    spread: float
    grouped: bool


def resolve(parameters, structure: Structure, active) -> tuple:
    """The parameters as a tuple of Uncertainty, checked against `structure`.

    `active` (n_strings,) bool marks the taut strings: a slack string carries no stiffness at the
    operating point, so its uncertainty would be an empty block.
    """
    who = "uncertain_loop"
    if isinstance(parameters, (Uncertainty, _Pending)):
        parameters = (parameters,)
    out = []
    for p in parameters:
        if isinstance(p, _Pending):
            count = structure.n_strings if p.kind == "string_stiffness" else len(
                structure.point_masses)
            if p.kind == "point_mass" and count == 0:
                raise ValueError(f"{who}: point_masses(...): {structure.name} has no point masses; "
                                 "add one (structure.with_point_masses) or drop this parameter")
            members = [i for i in range(count) if p.kind != "string_stiffness" or active[i]]
            out += ([Uncertainty(p.kind, members, p.spread)] if p.grouped else
                    [Uncertainty(p.kind, (i,), p.spread) for i in members])
        elif isinstance(p, Uncertainty):
            out.append(p)
        else:
            raise TypeError(f"{who}: parameters must be Uncertainty objects (from "
                            "tenscontrol.robust.string_stiffness or point_masses), got "
                            f"{type(p).__name__}")
    if not out:
        raise ValueError(f"{who}: no uncertain parameters; pass e.g. "
                         "tc.robust.string_stiffness(0.2)")
    for p in out:
        if p.kind == "string_stiffness":
            _indices(p.members, structure.n_strings, f"{p.name}: strings", who)
            slack = [i for i in p.members if not active[i]]
            if slack:
                raise ValueError(f"{who}: {p.name}: strings {slack} are slack at the operating "
                                 "point (no stiffness to be uncertain); leave them out")
        else:
            _indices(p.members, len(structure.point_masses), f"{p.name}: point masses", who)
    return tuple(out)
