"""JSON read/write of structures in the ``tenscontrol.structure/1`` format.

The format (node indices start at 0; members point from ``nodes[0]`` to ``nodes[1]``)::

    {
      "format": "tenscontrol.structure/1",
      "name": "tbar",
      "gravity": [0, 0, 0],
      "nodes": [[0, 0, 0], [3.5355339, 0, 0], ...],
      "fixed": [{"node": 0, "axes": "xyz"}, {"node": 2, "axes": "y"}, ...],
      "bars": [{"nodes": [0, 2], "density": 500, "radius": 0.05,
                "youngs_modulus": 2e11, "poisson": 0.3}, ...],
      "strings": [{"nodes": [0, 1], "kind": "string", "youngs_modulus": 7e7,
                   "radius": 0.001, "rest_fraction": 1.0, "damping": 1.0}, ...],
      "point_masses": [{"node": 12, "mass": 1.0}]
    }

A string gives ``stiffness`` or (``youngs_modulus`` or ``material``, and ``radius``), and
``rest_length`` or ``rest_fraction``. ``kind`` defaults to ``"string"``, ``damping`` to 0,
``actuated`` to true and ``gamma_max`` (the actuator's force-density limit [N/m]) to none.
A bar or string may name a ``material`` preset instead of density and Young's modulus. Unknown
keys are errors.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict

from tenscontrol.model.structure import Structure, reject_unknown_keys

__all__ = ["FORMAT", "load_structure", "save_structure", "structure_from_dict", "structure_to_dict"]

FORMAT = "tenscontrol.structure/1"
_TOP_KEYS = ["format", "name", "gravity", "nodes", "fixed", "bars", "strings", "point_masses"]


def _members(d: dict, key: str) -> list:
    value = d.get(key, [])
    if not isinstance(value, list):
        raise ValueError(f"'{key}' must be a list, got {type(value).__name__}")
    return value


def structure_from_dict(d: dict) -> Structure:
    """Build a :class:`Structure` from a dict in the ``tenscontrol.structure/1`` format.

    Raises
    ------
    ValueError
        On a wrong format tag, an unknown key, or any invalid field (the message names it).
    """
    if not isinstance(d, dict):
        raise ValueError(f"a structure must be a JSON object, got {type(d).__name__}")
    reject_unknown_keys("structure", d, _TOP_KEYS)
    fmt = d.get("format", FORMAT)
    if fmt != FORMAT:
        raise ValueError(f"format must be {FORMAT!r}, got {fmt!r}")
    if "nodes" not in d:
        raise ValueError("structure: missing key 'nodes' (an (n_nodes, 3) list of coordinates)")
    return Structure(
        nodes=d["nodes"],
        bars=_members(d, "bars"),
        strings=_members(d, "strings"),
        fixed=_members(d, "fixed"),
        point_masses=_members(d, "point_masses"),
        gravity=d.get("gravity", (0.0, 0.0, 0.0)),
        name=d.get("name", "structure"),
    )


def _compact(member) -> dict:
    """A member as a dict without the fields left at None (and strings' default actuated)."""
    out = {}
    for key, value in asdict(member).items():
        if value is None or (key == "actuated" and value is True):
            continue
        out[key] = list(value) if isinstance(value, tuple) else value
    return out


def structure_to_dict(structure: Structure) -> dict:
    """The structure as a JSON-ready dict; :func:`structure_from_dict` inverts it exactly."""
    fixed = [
        {"node": i, "axes": "".join(a for a, f in zip("xyz", row) if f)}
        for i, row in enumerate(structure.fixed)
        if row.any()
    ]
    return {
        "format": FORMAT,
        "name": structure.name,
        "gravity": structure.gravity.tolist(),
        "nodes": structure.nodes.tolist(),
        "fixed": fixed,
        "bars": [_compact(b) for b in structure.bars],
        "strings": [_compact(s) for s in structure.strings],
        "point_masses": [_compact(p) for p in structure.point_masses],
    }


def load_structure(path) -> Structure:
    """Read a structure from a JSON file in the ``tenscontrol.structure/1`` format.

    Parameters
    ----------
    path : str or os.PathLike
        The file to read.

    Raises
    ------
    ValueError
        If the file is missing or unreadable, is not valid JSON (the message gives the line
        and column), or describes an invalid structure (the message names the field).
    """
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ValueError(f"{path}: is a directory, not a structure file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the file ({exc})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{path}: not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    try:
        return structure_from_dict(data)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def save_structure(structure: Structure, path) -> None:
    """Write `structure` to `path` as JSON (``tenscontrol.structure/1``)."""
    with open(os.fspath(path), "w", encoding="utf-8") as f:
        json.dump(structure_to_dict(structure), f, indent=1)
        f.write("\n")
