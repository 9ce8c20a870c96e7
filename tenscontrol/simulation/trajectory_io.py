"""A Trajectory on disk: the ``tenscontrol.trajectory/1`` .npz file, and as a pandas DataFrame.

One file holds everything a :class:`~tenscontrol.Trajectory` has, so that
:func:`load_trajectory` gives back an equal trajectory (every array bit for bit):

- the arrays ``t, nodes, velocities, energy, work, bar_violation, energy_violation``
  (:data:`ARRAY_KEYS`, the arrays ``tenscontrol simulate`` has always written);
- ``structure``: the structure as its ``tenscontrol.structure/1`` JSON text;
- ``settings``: JSON text with the format name, the package version, the bar model, the
  correction, the kinetic-energy form, E0 and the :class:`~tenscontrol.SimulationStats`
  (JSON writes floats with enough digits to read back exactly);
- closed loop only: the :class:`~tenscontrol.ControlRecord` arrays as ``control_<field>``.

Written with ``allow_pickle``-free arrays only (text as numpy unicode scalars), so a file
from elsewhere cannot run code when it is read. Files are written as ``<name>.part`` and
renamed when complete: an interrupt or a full disk never leaves a truncated file.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, fields
from pathlib import Path

import numpy as np

from tenscontrol.model.io import structure_from_dict, structure_to_dict
from tenscontrol.simulation.actuation import ControlRecord
from tenscontrol.simulation.trajectory import SimulationStats, Trajectory

__all__ = ["ARRAY_KEYS", "FORMAT", "load_trajectory", "save_trajectory", "trajectory_dataframe"]

FORMAT = "tenscontrol.trajectory/1"
#: The trajectory's arrays, each stored under its attribute's name.
ARRAY_KEYS = ("t", "nodes", "velocities", "energy", "work", "bar_violation", "energy_violation")
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


def part_path(path: Path) -> Path:
    """The temporary name a file is written under before it is renamed: ``<name>.part``."""
    return path.with_name(path.name + ".part")


def save_trajectory(traj: Trajectory, path) -> Path:
    """Write `traj` to the .npz file `path` (format :data:`FORMAT`); see :meth:`Trajectory.save`."""
    if not isinstance(traj, Trajectory):
        raise TypeError(f"save_trajectory: expected a Trajectory, got {type(traj).__name__}")
    path = Path(path)
    part = part_path(path)
    arrays = _contents(traj)
    try:
        with open(part, "wb") as f:
            np.savez(f, **arrays)
        os.replace(part, path)
    except BaseException as exc:
        try:
            part.unlink(missing_ok=True)
        except OSError:
            pass
        if isinstance(exc, OSError):  # name the file asked for, not the temporary one
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise
    return path


def _text(data, key: str, path) -> str:
    if key not in data.files:
        raise ValueError(f"{path}: not a {FORMAT} file (no '{key}' entry); it may be an older "
                         "tenscontrol simulate output, which held the arrays only")
    value = data[key]
    if value.dtype.kind != "U" or value.shape != ():
        raise ValueError(f"{path}: entry '{key}' must be JSON text, got a {value.dtype} array "
                         f"of shape {value.shape}")
    return str(value)


def load_trajectory(path) -> Trajectory:
    """Read a trajectory written by :meth:`Trajectory.save` (or ``tenscontrol simulate``).

    Parameters
    ----------
    path : str or path-like
        A ``tenscontrol.trajectory/1`` .npz file.

    Returns
    -------
    Trajectory
        Equal to the saved one: every array bit for bit, the structure, the stats, the
        settings and, for a closed-loop run, the control record.

    Raises
    ------
    ValueError
        If the file is not a trajectory file or an entry is missing or malformed (the
        message names the file and the entry).
    OSError
        If the file cannot be read.
    """
    try:
        data = np.load(path, allow_pickle=False)
    except ValueError as exc:  # an object array, or not an .npy/.npz file at all
        raise ValueError(f"{path}: not a {FORMAT} .npz file ({exc})") from None
    if not hasattr(data, "files"):
        raise ValueError(f"{path}: a single .npy array, not a {FORMAT} .npz file")
    with data:
        try:
            settings = json.loads(_text(data, "settings", path))
            structure = structure_from_dict(json.loads(_text(data, "structure", path)))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: an entry is not valid JSON ({exc})") from None
        if settings.get("format") != FORMAT:
            raise ValueError(f"{path}: format {settings.get('format')!r} is not {FORMAT!r}")
        missing = [k for k in ARRAY_KEYS if k not in data.files]
        if missing:
            raise ValueError(f"{path}: missing the array '{missing[0]}' of a {FORMAT} file")
        arrays = {key: data[key] for key in ARRAY_KEYS}
        control = None
        if "control_t" in data.files:
            control = ControlRecord(**{name: data[f"control_{name}"] for name in _CONTROL_FIELDS})
    try:
        stats = SimulationStats(**settings["stats"])
        return Trajectory(**arrays, E0=settings["E0"], stats=stats, structure=structure,
                          correction=settings["correction"], bars=settings["bars"],
                          kinetic=settings["kinetic"], control=control)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path}: the settings entry is incomplete ({exc})") from None


def trajectory_dataframe(traj: Trajectory):
    """The trajectory as a pandas DataFrame; see :meth:`Trajectory.to_dataframe`."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("Trajectory.to_dataframe needs pandas: pip install pandas (or "
                          "pip install 'tenscontrol[pandas]')") from None
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
