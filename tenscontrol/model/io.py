"""JSON read/write of structures in the ``tenscontrol.structure/1`` and ``/2`` formats.

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
Version 2 (``"format": "tenscontrol.structure/2"``) adds the key ``"cables"``: a list of
clustered cables, each ``{"strings": [1, 2, 3], ...}`` with the fields of
:class:`~tenscontrol.model.cables.Cable`. A structure without cables is written as version 1,
so that older readers keep reading it; both versions load.
A bar or string may name a ``material`` preset instead of density and Young's modulus. Unknown
keys are errors, and so is a key given twice in one object (JSON readers keep the last value,
which would hide the first). :func:`load_structure` reads regular files only (a FIFO or a
device could block or never end) of at most ``max_bytes`` (256 MiB by default), and reports
nesting too deep to parse, and integers too long for Python, as errors naming the file.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict

from tenscontrol import fileio
from tenscontrol.model.checks import paused_gc, reject_unknown_keys, show
from tenscontrol.model.structure import Structure

__all__ = ["FORMAT", "FORMAT_CABLES", "MAX_FILE_BYTES", "load_structure", "save_structure", "structure_from_dict", "structure_to_dict"]

FORMAT = "tenscontrol.structure/1"
#: The format that adds clustered cables (written only for structures that have cables).
FORMAT_CABLES = "tenscontrol.structure/2"
#: Default size limit of :func:`load_structure` [bytes]: 256 MiB, four times a 100k-node file.
MAX_FILE_BYTES = 256 * 2**20
_TOP_KEYS = ["format", "name", "gravity", "nodes", "fixed", "bars", "strings", "point_masses",
             "cables"]


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
    if fmt not in (FORMAT, FORMAT_CABLES):
        raise ValueError(f"format must be {FORMAT!r} or {FORMAT_CABLES!r}, got {show(fmt)}")
    if "cables" in d and fmt != FORMAT_CABLES:
        raise ValueError(f"structure: key 'cables' needs \"format\": {FORMAT_CABLES!r} (version 1 "
                         "has no cables); change the format tag")
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
        cables=_members(d, "cables"),
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
    out = {
        "format": FORMAT_CABLES if structure.cables else FORMAT,
        "name": structure.name,
        "gravity": structure.gravity.tolist(),
        "nodes": structure.nodes.tolist(),
        "fixed": fixed,
        "bars": [_compact(b) for b in structure.bars],
        "strings": [_compact(s) for s in structure.strings],
        "point_masses": [_compact(p) for p in structure.point_masses],
    }
    if structure.cables:
        out["cables"] = [_compact(c) for c in structure.cables]
    return out


def _read_text(path: str, max_bytes: int) -> str:
    """The file's text, read only if it is a regular file of at most `max_bytes` bytes."""
    return fileio.read_text(path, max_bytes=max_bytes, what="a structure file",
                            hint="a structure of 100k nodes takes about 62 MB. Pass a larger "
                                 "max_bytes to load_structure if the file really is a structure")


class _Duplicated(dict):
    """A JSON object in which a key appeared more than once (the first such key)."""

    duplicate = None


def _object(pairs: list, found: list) -> dict:
    """object_pairs_hook: a dict, flagged (and noted in `found`) when a key repeats."""
    d = dict(pairs)
    if len(d) == len(pairs):
        return d
    seen = set()
    flagged = _Duplicated(d)
    flagged.duplicate = next(k for k, _ in pairs if k in seen or seen.add(k))
    found.append(flagged)
    return flagged


_MEMBER_NAMES = {"bars": "bar", "strings": "string", "fixed": "fixed entry",
                 "point_masses": "point mass", "cables": "cable"}


def _where(path: tuple) -> str:
    """A readable location: ("bars", 3) -> "bar 3"; elsewhere a JSON path."""
    if not path:
        return "structure"
    if len(path) == 2 and path[0] in _MEMBER_NAMES and isinstance(path[1], int):
        return f"{_MEMBER_NAMES[path[0]]} {path[1]}"
    return "structure" + "".join(f"[{p}]" if isinstance(p, int) else f"[{show(p)}]"
                                 for p in path)


def _check_duplicates(data) -> None:
    """ValueError at the first (in document order) object with a repeated key."""
    stack = [((), data)]
    while stack:  # iterative: the document may nest deeply
        path, value = stack.pop()
        if isinstance(value, dict):
            if isinstance(value, _Duplicated):
                raise ValueError(f"{_where(path)}: duplicate key {show(value.duplicate)}; give "
                                 "each key once (the reader would keep only the last value)")
            items = list(value.items())
        elif isinstance(value, list):
            items = list(enumerate(value))
        else:
            continue
        stack.extend((path + (k,), v) for k, v in reversed(items))


def _parse(text: str, path: str):
    """The JSON document in `text`; ValueError with the position or the cause otherwise."""
    found = []
    hook = lambda pairs: _object(pairs, found)  # noqa: E731
    data = fileio.parse_json(text, path, object_pairs_hook=hook, on_retry=found.clear)
    if found:  # walk the document (for the place to name) only when a key repeated
        try:
            _check_duplicates(data)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    return data


def load_structure(path, *, max_bytes: int = MAX_FILE_BYTES) -> Structure:
    """Read a structure from a JSON file in the ``tenscontrol.structure/1`` format.

    Parameters
    ----------
    path : str or os.PathLike
        The file to read: a regular file (not a pipe or device, which could block or never
        end).
    max_bytes : int, optional
        Largest file size accepted [bytes], 256 MiB by default (:data:`MAX_FILE_BYTES`): a
        100k-node structure takes about 62 MB, and parsing holds several times the file
        size in memory.

    Raises
    ------
    ValueError
        If the file is missing, unreadable, not a regular file or larger than `max_bytes`,
        is not valid JSON (the message gives the line and column), repeats a key within an
        object, nests too deeply, or describes an invalid structure (the message names the
        field).
    """
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"load_structure: path must be a file path (str or os.PathLike), "
                        f"got {show(path)}")
    path = os.fspath(path)
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0:
        raise ValueError(f"max_bytes must be a positive integer, got {show(max_bytes)}")
    with paused_gc():  # millions of small acyclic objects: see paused_gc
        data = _parse(_read_text(path, max_bytes), path)
        try:
            structure = structure_from_dict(data)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
        except RecursionError:
            raise ValueError(f"{path}: the JSON nests too deeply") from None
        del data  # freed before the collector resumes, which would otherwise scan it once more
    return structure


def save_structure(structure: Structure, path) -> None:
    """Write `structure` to `path` as JSON (``tenscontrol.structure/1``), whole or not at all.

    Raises
    ------
    OSError
        If the file cannot be written (it names `path`, which is left as it was).
    """
    text = json.dumps(structure_to_dict(structure), indent=1) + "\n"
    fileio.write_file(path, lambda f: f.write(text.encode("utf-8")))
