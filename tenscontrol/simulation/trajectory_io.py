"""A Trajectory on disk: the ``tenscontrol.trajectory/1`` .npz file, and as a pandas DataFrame.

One file holds everything a :class:`~tenscontrol.Trajectory` has, so that
:func:`load_trajectory` gives back an equal trajectory (every array bit for bit):

- the arrays ``t, nodes, velocities, energy, work, bar_violation, energy_violation``
  (:data:`ARRAY_KEYS`, the arrays ``tenscontrol simulate`` has always written);
- ``structure``: the structure as its ``tenscontrol.structure/1`` JSON text;
- ``settings``: JSON text with the format name, the package version, the bar model, the
  correction, the kinetic-energy form, E0 and the :class:`~tenscontrol.simulation.SimulationStats`
  (JSON writes floats with enough digits to read back exactly);
- closed loop only: the :class:`~tenscontrol.simulation.ControlRecord` arrays as ``control_<field>``.

Written with ``allow_pickle``-free arrays only (text as numpy unicode scalars), so a file
from elsewhere cannot run code when it is read, and read back through
:mod:`tenscontrol.fileio`: every entry is checked (numbers, shapes that fit the structure,
known settings) and any failure is a ValueError naming the file and the entry. Files are
written whole or not at all (:func:`tenscontrol.fileio.write_file`): an interrupt or a full
disk never leaves a truncated file.
"""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from pathlib import Path

import numpy as np

from tenscontrol import fileio
from tenscontrol.model.io import structure_from_dict, structure_to_dict
from tenscontrol.simulation.actuation import ControlRecord
from tenscontrol.simulation.trajectory import SimulationStats, Trajectory

__all__ = ["ARRAY_KEYS", "FORMAT", "MAX_TRAJECTORY_BYTES", "load_trajectory", "save_trajectory",
           "trajectory_dataframe"]

FORMAT = "tenscontrol.trajectory/1"
#: The trajectory's arrays, each stored under its attribute's name.
ARRAY_KEYS = ("t", "nodes", "velocities", "energy", "work", "bar_violation", "energy_violation")
#: Default size limit of :func:`load_trajectory` [bytes]: 4 GiB (``tenscontrol simulate``
#: writes at most 500 MB).
MAX_TRAJECTORY_BYTES = 4 * 2**30
# the settings simulate() writes (kinetic: None for rigid bars)
_CHOICES = {"bars": ("rigid", "compressible"), "correction": ("energy", "geometric", "none"),
            "kinetic": (None, "consistent", "paper")}
_CONTROL_FIELDS = tuple(f.name for f in fields(ControlRecord))


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tenscontrol")
    except PackageNotFoundError:  # run from a source tree
        return "unknown"


def _contents(traj: Trajectory) -> dict:
    """The named arrays of the file."""
    settings = {"format": FORMAT, "tenscontrol": _package_version(), "bars": traj.bars,
                "correction": traj.correction, "kinetic": traj.kinetic, "E0": float(traj.E0),
                "stats": asdict(traj.stats)}
    out = {key: np.asarray(getattr(traj, key)) for key in ARRAY_KEYS}
    out["structure"] = np.array(json.dumps(structure_to_dict(traj.structure)))
    out["settings"] = np.array(json.dumps(settings))
    if traj.control is not None:
        for name in _CONTROL_FIELDS:
            out[f"control_{name}"] = np.asarray(getattr(traj.control, name))
    return out


def save_trajectory(traj: Trajectory, path) -> Path:
    """Write `traj` to the .npz file `path` (format :data:`FORMAT`); see :meth:`Trajectory.save`."""
    if not isinstance(traj, Trajectory):
        raise TypeError(f"save_trajectory: expected a Trajectory, got {type(traj).__name__}")
    arrays = _contents(traj)
    return fileio.write_file(path, lambda f: np.savez(f, **arrays))


def _json(data, key: str, path) -> dict:
    """The JSON object stored as text in the entry `key`."""
    if key not in data.files:
        raise ValueError(f"{path}: not a {FORMAT} file (no '{key}' entry); it may be an older "
                         "tenscontrol simulate output, which held the arrays only")
    value = fileio.npz_entry(data, key, path, kind="U", ndim=0)
    where = f"{path}: entry '{key}'"
    value = fileio.parse_json(str(value), where)
    if not isinstance(value, dict):
        raise ValueError(f"{where}: must be a JSON object, got {type(value).__name__}")
    return value


def _arrays(data, path, n_nodes: int, n_bars: int) -> dict:
    """The trajectory's arrays, each checked for numbers and its shape."""
    arrays = {key: fileio.npz_entry(data, key, path, kind="f", ndim=1 if key == "t" else None)
              for key in ARRAY_KEYS}
    nt = arrays["t"].shape[0]
    shapes = {"t": (nt,), "nodes": (nt, n_nodes, 3), "velocities": (nt, n_nodes, 3),
              "energy": (nt,), "work": (nt,), "energy_violation": (nt,),
              "bar_violation": (nt, n_bars)}
    for key, shape in shapes.items():
        if arrays[key].shape != shape and not (key == "bar_violation"
                                               and arrays[key].shape == (nt, 0)):
            raise ValueError(f"{path}: entry '{key}' must have shape {shape} ({nt} samples "
                             f"in 't', {n_nodes} nodes and {n_bars} bars in the structure), "
                             f"got {arrays[key].shape}")
    return arrays


def _control(data, path, nt: int):
    """The closed loop's ControlRecord, checked, or None for an open-loop file."""
    if "control_t" not in data.files:
        return None
    kinds = {"strings": "i", "slack": "b", "saturated": "b", "cables": "i"}
    # files written before clustered cables could be commanded have no control_cables
    names = [n for n in _CONTROL_FIELDS if n != "cables" or "control_cables" in data.files]
    values = {name: fileio.npz_entry(data, f"control_{name}", path, kind=kinds.get(name, "f"),
                                     ndim=1 if name in ("t", "strings", "cables") else 2)
              for name in names}
    nu = values["strings"].shape[0] + values.get("cables", np.zeros(0)).shape[0]
    for name, value in values.items():
        if name not in ("strings", "cables") and value.shape[0] != nt or (
                name in ("u", "commanded", "applied", "slack", "saturated")
                and value.shape[1] != nu):
            raise ValueError(f"{path}: entry 'control_{name}' has shape {value.shape}, which "
                             f"does not fit {nt} samples of {nu} commanded strings")
    return ControlRecord(**values)


def _settings(settings: dict, path) -> dict:
    """The trajectory's settings, each checked against what simulate() writes."""
    where = f"{path}: entry 'settings'"
    if settings.get("format") != FORMAT:
        raise ValueError(f"{path}: format {settings.get('format')!r} is not {FORMAT!r}")
    missing = [k for k in ("bars", "correction", "kinetic", "E0", "stats") if k not in settings]
    if missing:
        raise ValueError(f"{where}: '{missing[0]}' is missing")
    for key, allowed in _CHOICES.items():
        if settings[key] not in allowed:
            raise ValueError(f"{where}: '{key}' must be one of {allowed}, "
                             f"got {settings[key]!r}")
    E0 = settings["E0"]
    if isinstance(E0, bool) or not isinstance(E0, (int, float)):
        raise ValueError(f"{where}: 'E0' must be a number, got {E0!r}")
    stats = settings["stats"]
    if not isinstance(stats, dict):
        raise ValueError(f"{where}: 'stats' must be an object, got {stats!r}")
    try:
        stats = SimulationStats(**stats)
    except TypeError as exc:
        raise ValueError(f"{where}: 'stats' does not fit SimulationStats ({exc})") from None
    return {"bars": settings["bars"], "correction": settings["correction"],
            "kinetic": settings["kinetic"], "E0": float(E0), "stats": stats}


def load_trajectory(path, *, max_bytes: int = MAX_TRAJECTORY_BYTES) -> Trajectory:
    """Read a trajectory written by :meth:`Trajectory.save` (or ``tenscontrol simulate``).

    Parameters
    ----------
    path : str or path-like
        A ``tenscontrol.trajectory/1`` .npz file (a regular file).
    max_bytes : int, optional
        Largest size accepted [bytes], of the file and of its entries once unpacked; 4 GiB
        by default (:data:`MAX_TRAJECTORY_BYTES`).

    Returns
    -------
    Trajectory
        Equal to the saved one: every array bit for bit, the structure, the stats, the
        settings and, for a closed-loop run, the control record.

    Raises
    ------
    ValueError
        If the file is missing, not a regular file, larger than `max_bytes`, truncated or
        corrupt, not a trajectory file, or an entry is missing or malformed: not numbers, a
        shape that does not fit the structure, an unknown bar model, pickled objects (the
        message names the file and the entry).
    """
    with fileio.open_npz(path, max_bytes=max_bytes, what=f"a {FORMAT} .npz file") as data:
        settings = _settings(_json(data, "settings", path), path)
        try:
            structure = structure_from_dict(_json(data, "structure", path))
        except ValueError as exc:
            raise ValueError(f"{path}: entry 'structure': {exc}") from None
        arrays = _arrays(data, path, structure.n_nodes, structure.n_bars)
        control = _control(data, path, arrays["t"].shape[0])
    return Trajectory(**arrays, structure=structure, control=control, **settings)


def trajectory_dataframe(traj: Trajectory):
    """The trajectory as a pandas DataFrame; see :meth:`Trajectory.to_dataframe`."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("Trajectory.to_dataframe needs pandas: pip install 'pandas>=2.2.2' "
                          "(or, in a checkout of tenscontrol, pip install '.[pandas]')") from None
    nt, n = len(traj.t), traj.structure.n_nodes
    names = [f"{a}{i}" for i in range(n) for a in "xyz"]
    columns = {name: traj.nodes.reshape(nt, -1)[:, c] for c, name in enumerate(names)}
    columns.update({f"v{name}": traj.velocities.reshape(nt, -1)[:, c]
                    for c, name in enumerate(names)})
    columns.update(energy=traj.energy, work=traj.work, energy_violation=traj.energy_violation)
    columns.update({f"bar_violation{b}": traj.bar_violation[:, b]
                    for b in range(traj.bar_violation.shape[1])})
    if traj.control is not None:
        for c, k in enumerate(traj.control.strings):
            columns[f"u{k}"] = traj.control.u[:, c]
            columns[f"applied{k}"] = traj.control.applied[:, c]
    return pd.DataFrame(columns, index=pd.Index(traj.t, name="t"))
