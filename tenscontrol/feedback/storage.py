"""Controllers on disk: the ``tenscontrol.controller/2`` .npz file.

:func:`save_controller` writes a :class:`~tenscontrol.StateFeedback` or
:class:`~tenscontrol.OutputFeedback` (what :func:`tenscontrol.lqr` and
:func:`tenscontrol.hinfsyn` return) with its matrices and operating point;
:func:`load_controller` reads it back equal. The file holds:

- ``header``: JSON text ``{"format", "type", "kind"}``;
- ``strings`` (int), ``gamma_ref``;
- StateFeedback: ``K``, ``q_ref``;
- OutputFeedback: ``AK, BK, CK, DK`` and the measurement as ``measurement_<field>``
  (``measurement_names`` as text).

Format 2 stores OutputFeedback in the negative-feedback convention ``u = -(CK xc + DK y_m)``
of :class:`~tenscontrol.OutputFeedback`. Files of format 1 (tenscontrol 1.0, positive feedback
``u = CK xc + DK y_m``) are read with CK and DK negated, so a controller keeps its meaning
(the same commands, the same closed loop); their StateFeedback is unchanged (``u = -K (x -
x*)`` in both).

No pickled objects: a file from elsewhere cannot run code when it is read. For MATLAB, see
:func:`tenscontrol.save_mat`.
"""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import numpy as np

from tenscontrol import fileio
from tenscontrol.feedback.controllers import Measurement, OutputFeedback, StateFeedback

__all__ = ["CONTROLLER_FORMAT", "MAX_CONTROLLER_BYTES", "controller_arrays", "load_controller",
           "save_controller"]

CONTROLLER_FORMAT = "tenscontrol.controller/2"
#: Version 1.0's format: OutputFeedback in positive feedback, u = CK xc + DK y_m.
POSITIVE_FEEDBACK_FORMAT = "tenscontrol.controller/1"
#: Default size limit of :func:`load_controller` [bytes].
MAX_CONTROLLER_BYTES = 2**30
_MEASUREMENT_FIELDS = tuple(f.name for f in fields(Measurement))


def controller_arrays(controller) -> dict:
    """The named arrays of the controller file of `controller` (see the module docstring)."""
    if not isinstance(controller, (StateFeedback, OutputFeedback)):
        raise TypeError(f"save_controller: expected a StateFeedback or OutputFeedback, got "
                        f"{type(controller).__name__}; a Controller subclass of your own has no "
                        "matrices to save")
    header = {"format": CONTROLLER_FORMAT, "type": type(controller).__name__,
              "kind": controller.kind}
    out = {"header": np.array(json.dumps(header)), "strings": controller.strings,
           "gamma_ref": controller.gamma_ref}
    if isinstance(controller, StateFeedback):
        out.update(K=controller.K, q_ref=controller.q_ref)
        return out
    m = controller.measurement
    if not isinstance(m, Measurement):
        raise TypeError(f"save_controller: the controller measures {type(m).__name__} signals "
                        "(a SensorSet, tenscontrol.lqg); the controller file holds node "
                        "coordinates and string lengths only: save AK, BK, CK, DK with numpy")
    out.update(AK=controller.AK, BK=controller.BK, CK=controller.CK, DK=controller.DK)
    for name in _MEASUREMENT_FIELDS:
        value = getattr(m, name)
        out[f"measurement_{name}"] = np.array(value, dtype=str) if name == "names" else value
    return out


def save_controller(controller, path) -> Path:
    """Write a StateFeedback or OutputFeedback to the .npz file `path`, whole or not at all.

    Parameters
    ----------
    controller : StateFeedback or OutputFeedback
        E.g. ``lqr(model).controller``.
    path : str or path-like

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    OSError
        If the file cannot be written (it names `path`, which is left as it was).
    """
    arrays = controller_arrays(controller)
    return fileio.write_file(path, lambda f: np.savez(f, **arrays))


# the dtype kind ("f" numbers, "i" integers, "U" text) and dimensions of every array entry
_ENTRIES = {"strings": ("i", 1), "gamma_ref": ("f", 1), "K": ("f", 2), "q_ref": ("f", 1),
            "AK": ("f", 2), "BK": ("f", 2), "CK": ("f", 2), "DK": ("f", 2),
            "measurement_C": ("f", 2), "measurement_q_ref": ("f", 1),
            "measurement_coordinates": ("i", 1), "measurement_strings": ("i", 1),
            "measurement_string_nodes": ("i", 2), "measurement_lengths_ref": ("f", 1),
            "measurement_names": ("U", 1)}


def _entry(data, key: str, path):
    kind, ndim = _ENTRIES[key]
    return fileio.npz_entry(data, key, path, kind=kind, ndim=ndim)


def _header(data, path) -> dict:
    if "header" not in data.files:
        raise ValueError(f"{path}: not a {CONTROLLER_FORMAT} file (no 'header' entry)")
    text = str(fileio.npz_entry(data, "header", path, kind="U", ndim=0))
    header = fileio.parse_json(text, f"{path}: entry 'header'")
    if not isinstance(header, dict):
        raise ValueError(f"{path}: entry 'header' must be a JSON object, got {text[:40]!r}")
    if header.get("format") not in (CONTROLLER_FORMAT, POSITIVE_FEEDBACK_FORMAT):
        raise ValueError(f"{path}: format {header.get('format')!r} is not "
                         f"{CONTROLLER_FORMAT!r} (or {POSITIVE_FEEDBACK_FORMAT!r})")
    if header.get("type") not in ("StateFeedback", "OutputFeedback"):
        raise ValueError(f"{path}: controller type {header.get('type')!r} is not "
                         "StateFeedback or OutputFeedback")
    return header


def _measurement(data, path) -> Measurement:
    """The OutputFeedback's measurement, its indices checked against its operating point."""
    v = {name: _entry(data, f"measurement_{name}", path) for name in _MEASUREMENT_FIELDS}
    nq, ny = v["q_ref"].size, v["C"].shape[0]
    n_nodes = nq // 3
    checks = {"C": v["C"].shape == (v["coordinates"].size + v["strings"].size, 2 * nq),
              "coordinates": bool(np.all((v["coordinates"] >= 0) & (v["coordinates"] < nq))),
              "string_nodes": v["string_nodes"].shape == (v["strings"].size, 2) and bool(
                  np.all((v["string_nodes"] >= 0) & (v["string_nodes"] < n_nodes))),
              "lengths_ref": v["lengths_ref"].shape == v["strings"].shape,
              "names": v["names"].shape == (ny,)}
    for name, ok in checks.items():
        if not ok:
            raise ValueError(f"{path}: entry 'measurement_{name}' (shape "
                             f"{v[name].shape}) does not fit {ny} measured signals of "
                             f"{n_nodes} nodes and {v['strings'].size} string lengths")
    v["names"] = tuple(str(n) for n in v["names"])
    return Measurement(**v)


def load_controller(path, *, max_bytes: int = MAX_CONTROLLER_BYTES):
    """Read a controller written by :func:`save_controller`.

    Parameters
    ----------
    path : str or path-like
        A regular file.
    max_bytes : int, optional
        Largest size accepted [bytes], of the file and of its entries once unpacked; 1 GiB
        by default (:data:`MAX_CONTROLLER_BYTES`).

    Returns
    -------
    StateFeedback or OutputFeedback

    Raises
    ------
    ValueError
        If the file is missing, not a regular file, too large, truncated or corrupt, not a
        controller file, or an entry is missing or malformed (the message names the file
        and the entry).
    """
    with fileio.open_npz(path, max_bytes=max_bytes,
                         what=f"a {CONTROLLER_FORMAT} .npz file") as data:
        header = _header(data, path)
        common = {"strings": _entry(data, "strings", path),
                  "gamma_ref": _entry(data, "gamma_ref", path), "kind": header.get("kind")}
        if header["type"] == "StateFeedback":
            matrices = {"K": _entry(data, "K", path), "q_ref": _entry(data, "q_ref", path)}
        else:
            matrices = {k: _entry(data, k, path) for k in ("AK", "BK", "CK", "DK")}
            matrices["measurement"] = _measurement(data, path)
            if header["format"] == POSITIVE_FEEDBACK_FORMAT:  # u = +(CK xc + DK y_m) in 1.0
                matrices["CK"], matrices["DK"] = -matrices["CK"], -matrices["DK"]
    cls = StateFeedback if header["type"] == "StateFeedback" else OutputFeedback
    try:
        return cls(**matrices, **common)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from None
