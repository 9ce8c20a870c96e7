"""Finiteness checks shared by the public entry points of the mechanics and the linear layer.

A structure can pass its own validation (every field finite and in range) and still give
derived quantities that are not usable numbers: ``E = 1e308`` on a 1 m radius makes the
stiffness inf, a 1e-160 m bar radius makes its mass underflow, coordinates of 1e160 m make the
lengths overflow. Fed on, they reach numpy, scipy and slycot, which answer with messages that
name no member ("array must not contain infs or NaNs", "Invalid input for linprog") or, worse,
with silent garbage or a hang. The two checks here run once at the public boundary, before
any of that:

- :func:`check_members` names the member whose derived quantity (length, rest length,
  stiffness, law force density, mass, weight) is not a finite number of the right sign;
- :func:`check_finite` names the first NaN or inf entry of matrices about to be handed to
  LAPACK or slycot.

This module imports nothing but numpy, so the linear layer can use it without the rest of the
mechanics.
"""

from __future__ import annotations

import numpy as np

from tenscontrol.mechanics.laws import elastic_densities, material_coefficients

__all__ = ["check_finite", "check_members"]

#: The smallest positive normal float: a mass or rest length below it has no finite inverse.
_TINY = np.finfo(float).tiny


def check_finite(who: str, **arrays) -> None:
    """Raise ValueError naming the first NaN or inf entry of the named arrays.

    Parameters
    ----------
    who : str
        The public function, prefixed to the message ("hinf_norm").
    **arrays : array_like
        The arrays by the names the user knows them by (``A=..., B=...``), checked in order.

    Raises
    ------
    ValueError
        "hinf_norm: B[0, 0] is nan (1 non-finite entry); ...": every entry must be finite.
    """
    for name, value in arrays.items():
        try:
            a = np.asarray(value, dtype=complex if np.iscomplexobj(value) else float)
        except (TypeError, ValueError):
            raise ValueError(f"{who}: {name} must be an array of numbers, got "
                             f"{type(value).__name__}") from None
        bad = ~np.isfinite(a)
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            index = f"[{', '.join(map(str, where))}]" if where else ""
            count = int(bad.sum())
            more = "" if count == 1 else f" ({count} non-finite entries)"
            raise ValueError(
                f"{who}: {name}{index} is {a[where]}{more}; "
                f"every entry of {', '.join(arrays)} must be finite (NaN or inf make LAPACK and "
                "slycot return garbage or hang): fix the model that produced it")


def _describe(kind: str, k: int, nodes) -> str:
    return f"{kind} {k} (nodes {int(nodes[0])}->{int(nodes[1])})"


def _first_bad(values: np.ndarray, positive: bool) -> int:
    """Index of the first entry that is not finite (or, if `positive`, not >= the tiniest
    normal float), else -1."""
    ok = np.isfinite(values) & ((values >= _TINY) if positive else True)
    bad = np.flatnonzero(~ok)
    return int(bad[0]) if bad.size else -1


def _lengths(pairs: np.ndarray, q: np.ndarray) -> np.ndarray:
    N = q.reshape(-1, 3)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.linalg.norm(N[pairs[:, 1]] - N[pairs[:, 0]], axis=1)


def _length_problem(who, kind, pairs, lengths, q) -> None:
    k = _first_bad(lengths, positive=True)
    if k < 0:
        return
    scale = float(np.abs(q).max(initial=0.0))
    why = ("overflows: the node coordinates (up to {:.3g} m) are too large; express the "
           "structure in metres of a usable size".format(scale) if not np.isfinite(lengths[k])
           else "is zero or underflows: its nodes (nearly) coincide; move them apart")
    raise ValueError(f"{who}: {_describe(kind, k, pairs[k])}: the length at the configuration "
                     f"({lengths[k]:.3g} m) {why}")


def check_members(structure, who: str, q=None, *, bars: str = "rigid",
                  inertia: bool = True) -> None:
    """Raise ValueError naming the first member or node with a derived quantity out of range.

    Checked at the configuration q (the structure's nodes by default): member lengths finite
    and positive; string rest lengths finite and positive, stiffness finite and positive,
    elastic-law force density ``k (1 - l0/l)`` and material coefficient ``k l0 / l^3``
    finite; bar masses finite and invertible; nodal weights finite; for compressible bars
    (``bars="compressible"``) the rest length, stiffness and law of each bar as for strings.
    With ``inertia=False`` (statics) the bar masses need not be invertible, only their
    weights finite.

    Parameters
    ----------
    structure : Structure
    who : str
        The public function, prefixed to the message.
    q : ndarray, shape (3n,), optional
        A finite configuration [m] (already checked by ``nodal_vector``).
    bars : {"rigid", "compressible"}
    inertia : bool
        Whether the masses enter (dynamics, linearization) or only the weights (statics).

    Raises
    ------
    ValueError
        "linearize: string 0 (nodes 0->1): stiffness is inf N/m (...)", with the cause and
        the fix.
    """
    q = structure.nodes.reshape(-1) if q is None else np.asarray(q, dtype=float)
    with np.errstate(all="ignore"):     # the derived arrays are computed (and cached) here
        structure.string_rest_lengths, structure.string_stiffness, structure.bar_masses
        if bars == "compressible" and structure.n_bars:
            structure.bar_stiffness
    ps, pb = structure.string_nodes, structure.bar_nodes
    ls, lb = _lengths(ps, q), _lengths(pb, q)
    _length_problem(who, "string", ps, ls, q)
    _length_problem(who, "bar", pb, lb, q)
    _check_laws(who, "string", structure.strings, ps, structure.string_rest_lengths,
                structure.string_stiffness, ls)
    _check_masses(structure, who, inertia)
    if bars == "compressible" and structure.n_bars:
        _check_laws(who, "bar", structure.bars, pb, structure.bar_rest_lengths,
                    structure.bar_stiffness, lb)


def _origin(member, l0: float) -> str:
    """Where a member's stiffness comes from, for the message."""
    if getattr(member, "stiffness", None) is not None:
        return f"given stiffness, rest length {l0:.3g} m"
    return (f"E pi r^2 / l0 with youngs_modulus {member.youngs_modulus:.3g} Pa, radius "
            f"{member.radius:.3g} m, rest length {l0:.3g} m")


def _check_laws(who, kind, members, pairs, l0, k, lengths) -> None:
    """Rest length, stiffness, law force density and material coefficient of each member."""
    fix = ("give a rest length (or rest_fraction) that is a usable positive number of metres "
           "and a stiffness (or youngs_modulus and radius) that gives a finite k")
    j = _first_bad(l0, positive=True)
    if j >= 0:
        fraction = getattr(members[j], "rest_fraction", None)
        source = f" (rest_fraction {fraction:.3g})" if fraction is not None else ""
        raise ValueError(f"{who}: {_describe(kind, j, pairs[j])}: rest length {l0[j]:.3g} m"
                         f"{source} is not a usable positive length; {fix}")
    j = _first_bad(k, positive=True)
    if j >= 0:
        raise ValueError(f"{who}: {_describe(kind, j, pairs[j])}: stiffness is {k[j]:.3g} N/m "
                         f"({_origin(members[j], l0[j])}); {fix}")
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        law = elastic_densities(k, l0, lengths)
        material = material_coefficients(k, l0, lengths)
    for what, values in (("force density k (1 - l0/l)", law),
                         ("material stiffness k l0 / l^3", material)):
        j = _first_bad(values, positive=False)
        if j >= 0:
            raise ValueError(f"{who}: {_describe(kind, j, pairs[j])}: the {what} overflows "
                             f"(k = {k[j]:.3g} N/m, l0 = {l0[j]:.3g} m, l = {lengths[j]:.3g} "
                             f"m); {fix}")


def _check_masses(structure, who, inertia: bool) -> None:
    """Bar masses finite and invertible (if `inertia`), and every nodal weight finite."""
    with np.errstate(over="ignore", invalid="ignore"):
        masses = np.asarray(structure.bar_masses, dtype=float)
        weights = np.kron(np.asarray(structure.node_masses, dtype=float), structure.gravity)
    j = _first_bad(masses, positive=inertia)
    if j >= 0:
        b = structure.bars[j]
        raise ValueError(
            f"{who}: {_describe('bar', j, structure.bar_nodes[j])}: mass {masses[j]:.3g} kg "
            f"(density {b.density:.3g} kg/m^3, radius {b.radius:.3g} m, length "
            f"{structure.bar_lengths[j]:.3g} m) is not a finite "
            f"{'positive number with a finite inverse' if inertia else 'number'}; give a density "
            "and radius of usable size")
    bad = np.flatnonzero(~np.isfinite(weights))
    if bad.size:
        i = int(bad[0]) // 3
        raise ValueError(f"{who}: node {i}: its weight (mass {structure.node_masses[i]:.3g} kg "
                         f"times gravity {structure.gravity.tolist()} m/s^2) is not finite; give "
                         "masses and gravity of usable size")
