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

from tenscontrol.feedback.controllers import Measurement, OutputFeedback, StateFeedback

__all__ = ["CONTROLLER_FORMAT", "controller_arrays", "load_controller", "save_controller"]

CONTROLLER_FORMAT = "tenscontrol.controller/2"
#: Version 1.0's format: OutputFeedback in positive feedback, u = CK xc + DK y_m.
POSITIVE_FEEDBACK_FORMAT = "tenscontrol.controller/1"
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
    out.update(AK=controller.AK, BK=controller.BK, CK=controller.CK, DK=controller.DK)
    m = controller.measurement
    for name in _MEASUREMENT_FIELDS:
        value = getattr(m, name)
        out[f"measurement_{name}"] = np.array(value, dtype=str) if name == "names" else value
    return out


def save_controller(controller, path) -> Path:
    """Write a StateFeedback or OutputFeedback to the .npz file `path`.

    Parameters
    ----------
    controller : StateFeedback or OutputFeedback
        E.g. ``lqr(model).controller``.
    path : str or path-like

    Returns
    -------
    pathlib.Path
        The file written.
    """
    arrays = controller_arrays(controller)
    path = Path(path)
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    return path


def _entry(data, key: str, path):
    if key not in data.files:
        raise ValueError(f"{path}: not a {CONTROLLER_FORMAT} file (no '{key}' entry)")
    return data[key]


def load_controller(path):
    """Read a controller written by :func:`save_controller`.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    StateFeedback or OutputFeedback

    Raises
    ------
    ValueError
        If the file is not a controller file or an entry is missing or malformed (named).
    """
    try:
        data = np.load(path, allow_pickle=False)
    except ValueError as exc:
        raise ValueError(f"{path}: not a {CONTROLLER_FORMAT} .npz file ({exc})") from None
    if not hasattr(data, "files"):
        raise ValueError(f"{path}: a single .npy array, not a {CONTROLLER_FORMAT} .npz file")
    with data:
        try:
            header = json.loads(str(_entry(data, "header", path)))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: the header is not valid JSON ({exc})") from None
        if header.get("format") not in (CONTROLLER_FORMAT, POSITIVE_FEEDBACK_FORMAT):
            raise ValueError(f"{path}: format {header.get('format')!r} is not "
                             f"{CONTROLLER_FORMAT!r} (or {POSITIVE_FEEDBACK_FORMAT!r})")
        common = {"strings": _entry(data, "strings", path),
                  "gamma_ref": _entry(data, "gamma_ref", path), "kind": header.get("kind")}
        if header.get("type") == "StateFeedback":
            return StateFeedback(K=_entry(data, "K", path), q_ref=_entry(data, "q_ref", path),
                                 **common)
        if header.get("type") != "OutputFeedback":
            raise ValueError(f"{path}: controller type {header.get('type')!r} is not "
                             "StateFeedback or OutputFeedback")
        values = {name: _entry(data, f"measurement_{name}", path)
                  for name in _MEASUREMENT_FIELDS}
        values["names"] = tuple(str(n) for n in values["names"])
        AK, BK, CK, DK = (_entry(data, k, path) for k in ("AK", "BK", "CK", "DK"))
        if header["format"] == POSITIVE_FEEDBACK_FORMAT:   # u = +(CK xc + DK y_m) in 1.0
            CK, DK = -np.asarray(CK), -np.asarray(DK)
        return OutputFeedback(AK, BK, CK, DK, measurement=Measurement(**values), **common)
