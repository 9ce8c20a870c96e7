"""Controllers on disk: the ``tenscontrol.controller`` .npz file.

:func:`save_controller` writes a :class:`~tenscontrol.StateFeedback` or
:class:`~tenscontrol.OutputFeedback` (what :func:`tenscontrol.lqr`, :func:`tenscontrol.hinfsyn`
and :func:`tenscontrol.lqg` return), a sampled :class:`~tenscontrol.control.DiscreteFeedback`
(:func:`tenscontrol.discretize`, :func:`tenscontrol.dlqr`) or a
:class:`~tenscontrol.control.DiscreteLQG` (:func:`tenscontrol.discrete_lqg`) with its matrices,
operating point and timing; :func:`load_controller` reads it back equal (the same commands,
bit for bit). The file holds:

- ``header``: JSON text ``{"format", "type", "kind"}``, for the sampled controllers also
  ``"period"`` and ``"delay"`` [s] (a DiscreteLQG: ``"seed"``, ``"noise"`` and its Kalman
  filter's ``"kalman_period"``, ``"kalman_delay"``), and from format 3 ``"measurement"``: null,
  ``"Measurement"`` or ``"SensorMeasurement"``;
- ``strings`` (int), ``gamma_ref``;
- StateFeedback: ``K``, ``q_ref``; DiscreteFeedback: ``AK, BK, CK, DK``, ``q_ref``;
  OutputFeedback: ``AK, BK, CK, DK``; DiscreteLQG: ``K`` and the filter's matrices as
  ``kalman_<field>`` (``Phi, Gamma0, Gamma1, Cr, M, P, basis``);
- a :class:`~tenscontrol.Measurement` as ``measurement_<field>`` (``measurement_names`` as
  text); a sensor measurement (:class:`~tenscontrol.control.estimators.SensorMeasurement`)
  as ``measurement_<field>`` (``C, q_ref, y_ref, held, gamma_held``) and its sensor set as
  ``sensors_<field>`` (``kinds`` as text, ``items, std, bias, quantization, rate``) with the
  structure it reads as ``sensors_structure``, its ``tenscontrol.structure/1`` JSON text (a
  load cell reads the member law).

Files of StateFeedback and of OutputFeedback on node coordinates and string lengths are format
2 (``tenscontrol.controller/2``, which tenscontrol 1.1 reads too); the others are format 3.
Format 2 and 3 store OutputFeedback in the negative-feedback convention ``u = -(CK xc + DK
y_m)`` of :class:`~tenscontrol.OutputFeedback`. Files of format 1 (tenscontrol 1.0, positive
feedback ``u = CK xc + DK y_m``) are read with CK and DK negated, so a controller keeps its
meaning (the same commands, the same closed loop); their StateFeedback is unchanged (``u = -K
(x - x*)`` in both).

A :class:`~tenscontrol.control.PredictiveController` (:func:`tenscontrol.mpc`) is refused: it holds an
OSQP solver and its warm start, not matrices; save its structure and settings instead (see
the error message).

No pickled objects: a file from elsewhere cannot run code when it is read. For MATLAB, see
:func:`tenscontrol.save_mat`.
"""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import numpy as np

from tenscontrol import fileio
from tenscontrol.control.controllers import (Measurement, OutputFeedback, StateFeedback,
                                              check_kind, runtime_controller)
from tenscontrol.control.estimators import DiscreteKalman, DiscreteLQG, SensorMeasurement
from tenscontrol.control.sampled import DiscreteFeedback, check_timing
from tenscontrol.control.storage_checks import (check_covariance, check_finite,
                                                check_lqg_timing, check_noise)
from tenscontrol.mechanics.sensors import KINDS, SensorSet
from tenscontrol.model.io import structure_from_dict, structure_to_dict

__all__ = ["CONTROLLER_FORMAT", "MAX_CONTROLLER_BYTES", "SAMPLED_CONTROLLER_FORMAT",
           "controller_arrays", "load_controller", "save_controller"]

CONTROLLER_FORMAT = "tenscontrol.controller/2"
#: Sampled controllers and sensor measurements (DiscreteFeedback, DiscreteLQG, tenscontrol.lqg).
SAMPLED_CONTROLLER_FORMAT = "tenscontrol.controller/3"
#: Version 1.0's format: OutputFeedback in positive feedback, u = CK xc + DK y_m.
POSITIVE_FEEDBACK_FORMAT = "tenscontrol.controller/1"
#: Default size limit of :func:`load_controller` [bytes].
MAX_CONTROLLER_BYTES = 2**30
_FORMATS = (CONTROLLER_FORMAT, SAMPLED_CONTROLLER_FORMAT, POSITIVE_FEEDBACK_FORMAT)
_TYPES = {"StateFeedback": StateFeedback, "OutputFeedback": OutputFeedback,
          "DiscreteFeedback": DiscreteFeedback, "DiscreteLQG": DiscreteLQG}
_MEASUREMENT_FIELDS = tuple(f.name for f in fields(Measurement))
_SENSOR_MEASUREMENT_FIELDS = ("C", "q_ref", "y_ref", "held", "gamma_held")
_SENSOR_FIELDS = ("kinds", "items", "std", "bias", "quantization", "rate")
_KALMAN_FIELDS = ("Phi", "Gamma0", "Gamma1", "Cr", "M", "P", "basis")


def _refused(controller) -> TypeError:
    """The error for a controller the file cannot hold, with what to save instead."""
    name = type(controller).__name__
    if name == "PredictiveController":
        return TypeError(
            "save_controller: a PredictiveController (tenscontrol.mpc) holds an OSQP solver "
            "and its warm start, not plain matrices, so it cannot be saved; save what it is "
            "built from instead (the structure with tenscontrol.save_structure, and mpc's "
            "period, horizon, gamma_min, rate_limit, Q, R) and call tenscontrol.mpc again, or "
            "save its unconstrained discrete LQR, tenscontrol.dlqr(model, period).controller")
    return TypeError(f"save_controller: expected a StateFeedback, OutputFeedback, "
                     f"DiscreteFeedback or DiscreteLQG, got {name}; a controller class of your "
                     f"own has no matrices to save")


def _measurement_arrays(m, out: dict) -> str | None:
    """Add the entries of measurement `m` to `out`; its kind for the header."""
    if m is None:
        return None
    if isinstance(m, Measurement):
        for name in _MEASUREMENT_FIELDS:
            value = getattr(m, name)
            out[f"measurement_{name}"] = np.array(value, dtype=str) if name == "names" else value
        return "Measurement"
    if isinstance(m, SensorMeasurement):
        for name in _SENSOR_MEASUREMENT_FIELDS:
            out[f"measurement_{name}"] = getattr(m, name)
        for name in _SENSOR_FIELDS:
            value = getattr(m.sensors, name)
            out[f"sensors_{name}"] = np.array(value, dtype=str) if name == "kinds" else value
        out["sensors_structure"] = np.array(json.dumps(structure_to_dict(m.sensors.structure),
                                                       sort_keys=True))
        return "SensorMeasurement"
    raise TypeError(f"save_controller: the controller measures {type(m).__name__} signals; "
                    "the controller file holds a Measurement (node coordinates and string "
                    "lengths) or a SensorMeasurement (a SensorSet): save AK, BK, CK, DK with "
                    "numpy")


def _lqg_arrays(c: DiscreteLQG, header: dict, out: dict) -> str:
    """Add a DiscreteLQG's gain, filter and timing; its measurement's kind."""
    f = c.kalman
    header.update(period=float(c.period), delay=float(c.delay), seed=int(c.seed),
                  noise=bool(c.noise), kalman_period=float(f.period),
                  kalman_delay=float(f.delay))
    out["K"] = c.K
    for name in _KALMAN_FIELDS:
        out[f"kalman_{name}"] = getattr(f, name)
    return _measurement_arrays(f.measurement, out)


def controller_arrays(controller) -> dict:
    """The named arrays of the controller file of `controller` (see the module docstring)."""
    controller = runtime_controller(controller)     # a design (lqr(...)): its .controller
    if type(controller) not in _TYPES.values():
        raise _refused(controller)
    header = {"format": CONTROLLER_FORMAT, "type": type(controller).__name__,
              "kind": controller.kind}
    if np.size(getattr(controller, "cables", ())):
        raise ValueError("save_controller: a controller commanding clustered cables cannot be "
                         "saved yet (the controller file has no cable entries); keep the design "
                         "script instead")
    out = {"strings": controller.strings, "gamma_ref": controller.gamma_ref}
    if isinstance(controller, StateFeedback):
        out.update(K=controller.K, q_ref=controller.q_ref)
        kind = None
    elif isinstance(controller, DiscreteLQG):
        kind = _lqg_arrays(controller, header, out)
    else:
        out.update(AK=controller.AK, BK=controller.BK, CK=controller.CK, DK=controller.DK)
        if isinstance(controller, DiscreteFeedback):
            out["q_ref"] = controller.q_ref
            header.update(period=controller.period, delay=controller.delay)
        kind = _measurement_arrays(controller.measurement, out)
    if type(controller) not in (StateFeedback, OutputFeedback) or kind == "SensorMeasurement":
        header.update(format=SAMPLED_CONTROLLER_FORMAT, measurement=kind)
    for name, value in out.items():     # a controller that could not run is not written
        check_finite(name, np.asarray(value), "save_controller")
    return {"header": np.array(json.dumps(header)), **out}


def save_controller(controller, path) -> Path:
    """Write a controller to the .npz file `path`, whole or not at all.

    Parameters
    ----------
    controller : StateFeedback, OutputFeedback, DiscreteFeedback or DiscreteLQG
        E.g. ``lqr(model).controller``, ``discretize(lqr(model).controller, 0.005)``,
        ``discrete_lqg(...).controller``; a design (``lqr(model)``) saves its ``.controller``.
    path : str or path-like

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    TypeError
        For another controller (a PredictiveController: the message says what to save
        instead).
    ValueError
        If a matrix or number of the controller is NaN or inf (it could not run).
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
            "measurement_names": ("U", 1), "measurement_y_ref": ("f", 1),
            "measurement_held": ("i", 1), "measurement_gamma_held": ("f", 1),
            "sensors_kinds": ("U", 1), "sensors_items": ("i", 1), "sensors_std": ("f", 1),
            "sensors_bias": ("f", 1), "sensors_quantization": ("f", 1),
            "sensors_rate": ("f", 1), "sensors_structure": ("U", 0),
            **{f"kalman_{name}": ("f", 2) for name in _KALMAN_FIELDS}}


def _entry(data, key: str, path):
    """The entry `key`, of its kind and dimensions, its numbers finite (rates may be inf)."""
    kind, ndim = _ENTRIES[key]
    value = fileio.npz_entry(data, key, path, kind=kind, ndim=ndim)
    check_finite(key, value, str(path))
    return value


def _header(data, path) -> dict:
    if "header" not in data.files:
        raise ValueError(f"{path}: not a {CONTROLLER_FORMAT} file (no 'header' entry)")
    text = str(fileio.npz_entry(data, "header", path, kind="U", ndim=0))
    header = fileio.parse_json(text, f"{path}: entry 'header'")
    if not isinstance(header, dict):
        raise ValueError(f"{path}: entry 'header' must be a JSON object, got {text[:40]!r}")
    if header.get("format") not in _FORMATS:
        raise ValueError(f"{path}: format {header.get('format')!r} is not "
                         f"{CONTROLLER_FORMAT!r} (or {SAMPLED_CONTROLLER_FORMAT!r}, "
                         f"{POSITIVE_FEEDBACK_FORMAT!r})")
    if header.get("type") not in _TYPES:
        raise ValueError(f"{path}: controller type {header.get('type')!r} is not "
                         f"{', '.join(_TYPES)}")
    return header


def _header_value(header: dict, key: str, kinds: tuple, path):
    """header[key], checked to be of one of `kinds` (a bool is no number)."""
    value = header.get(key)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise ValueError(f"{path}: entry 'header' must give {key!r} as "
                         f"{' or '.join(k.__name__ for k in kinds)}, got {value!r}")
    return value


def _fits(path, checks: dict, what: str) -> None:
    """Raise naming the first entry whose check (name -> (ok, shape)) failed."""
    for name, (ok, shape) in checks.items():
        if not ok:
            raise ValueError(f"{path}: entry '{name}' (shape {shape}) does not fit {what}")


def _measurement(data, path) -> Measurement:
    """A Measurement, its indices checked against its operating point."""
    v = {name: _entry(data, f"measurement_{name}", path) for name in _MEASUREMENT_FIELDS}
    nq, ny = v["q_ref"].size, v["C"].shape[0]
    n_nodes = nq // 3
    _fits(path, {f"measurement_{name}": (ok, v[name].shape) for name, ok in {
        "C": v["C"].shape == (v["coordinates"].size + v["strings"].size, 2 * nq),
        "coordinates": bool(np.all((v["coordinates"] >= 0) & (v["coordinates"] < nq))),
        "string_nodes": v["string_nodes"].shape == (v["strings"].size, 2) and bool(
            np.all((v["string_nodes"] >= 0) & (v["string_nodes"] < n_nodes))),
        "lengths_ref": v["lengths_ref"].shape == v["strings"].shape,
        "names": v["names"].shape == (ny,)}.items()},
        f"{ny} measured signals of {n_nodes} nodes and {v['strings'].size} string lengths")
    v["names"] = tuple(str(n) for n in v["names"])
    return Measurement(**v)


def _sensor_set(data, path) -> SensorSet:
    """The sensor set of a SensorMeasurement, on the structure stored with it."""
    text = str(_entry(data, "sensors_structure", path))
    try:
        structure = structure_from_dict(fileio.parse_json(text, f"{path}: entry "
                                                                "'sensors_structure'"))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: entry 'sensors_structure': {exc}") from None
    v = {name: _entry(data, f"sensors_{name}", path) for name in _SENSOR_FIELDS}
    kinds, items, n = tuple(str(k) for k in v["kinds"]), v["items"], v["kinds"].size
    sizes = {"string_length": structure.n_strings, "string_tension": structure.n_strings,
             "node_position": 3 * structure.n_nodes, "bar_direction": structure.n_bars,
             "bar_rate": structure.n_bars}
    in_range = all(k in KINDS and 0 <= i < sizes[k] for k, i in zip(kinds, items.tolist()))
    _fits(path, {"sensors_kinds": (all(k in KINDS for k in kinds), v["kinds"].shape),
                 "sensors_items": (items.shape == (n,) and in_range, items.shape),
                 **{f"sensors_{name}": (v[name].shape == (n,), v[name].shape)
                    for name in _SENSOR_FIELDS[2:]}},
          f"{n} sensors of the kinds {KINDS} on {structure.n_nodes} nodes, "
          f"{structure.n_strings} strings and {structure.n_bars} bars")
    check_noise(v, str(path))
    return SensorSet(structure, kinds, items, v["std"], v["bias"], v["quantization"], v["rate"])


def _sensor_measurement(data, path) -> SensorMeasurement:
    """A SensorMeasurement, its sizes checked against its sensor set."""
    sensors = _sensor_set(data, path)
    v = {name: _entry(data, f"measurement_{name}", path) for name in _SENSOR_MEASUREMENT_FIELDS}
    ny, nq, ns = sensors.n_signals, 3 * sensors.structure.n_nodes, sensors.structure.n_strings
    held = v["held"]
    _fits(path, {f"measurement_{name}": (ok, v[name].shape) for name, ok in {
        "C": v["C"].shape == (ny, 2 * nq), "q_ref": v["q_ref"].shape == (nq,),
        "y_ref": v["y_ref"].shape == (ny,),
        "held": bool(np.all((held >= 0) & (held < ns))) and np.unique(held).size == held.size,
        "gamma_held": v["gamma_held"].shape == (ns,)}.items()},
        f"{ny} signals of its sensors on {nq // 3} nodes and {ns} strings")
    return SensorMeasurement(sensors, **v)


def _read_measurement(data, path, kind):
    if kind is None:
        return None
    if kind == "Measurement":
        return _measurement(data, path)
    if kind == "SensorMeasurement":
        return _sensor_measurement(data, path)
    raise ValueError(f"{path}: entry 'header' gives the measurement {kind!r}, not null, "
                     "'Measurement' or 'SensorMeasurement'")


def _lqg(data, header: dict, path, common: dict) -> DiscreteLQG:
    """A DiscreteLQG: the filter's matrices checked against its gain and measurement."""
    number = (int, float)
    m = _read_measurement(data, path, header.get("measurement"))
    if not isinstance(m, SensorMeasurement):
        raise ValueError(f"{path}: a DiscreteLQG needs a SensorMeasurement, the header gives "
                         f"{header.get('measurement')!r}")
    check_kind(common["kind"])
    v = {name: _entry(data, f"kalman_{name}", path) for name in _KALMAN_FIELDS}
    K = _entry(data, "K", path)
    r, nu, ny = v["Phi"].shape[0], common["strings"].size, m.n_signals
    expected = {"Phi": (r, r), "Gamma0": (r, nu), "Gamma1": (r, nu), "Cr": (ny, r),
                "M": (r, ny), "P": (r, r), "basis": (m.C.shape[1], r)}
    _fits(path, {"K": (K.shape == (nu, r + nu), K.shape),
                 "gamma_ref": (common["gamma_ref"].shape == (nu,), common["gamma_ref"].shape),
                 **{f"kalman_{k}": (v[k].shape == s, v[k].shape) for k, s in expected.items()}},
          f"{r} filter states, {nu} commanded strings and {ny} measured signals")
    timing = {key: float(_header_value(header, key, number, path))
              for key in ("period", "delay", "kalman_period", "kalman_delay")}
    period, delay = check_lqg_timing(timing, m.sensors.rate, str(path))
    check_noise({name: getattr(m.sensors, name) for name in _SENSOR_FIELDS[2:]}, str(path),
                positive_std=True)
    check_covariance("kalman_P", v["P"], str(path))
    kalman = DiscreteKalman(**v, measurement=m, period=period, delay=delay)
    seed = _header_value(header, "seed", (int,), path)
    if seed < 0:
        raise ValueError(f"{path}: entry 'header' must give 'seed' >= 0, got {seed}")
    return DiscreteLQG(**common, K=K, kalman=kalman, seed=seed,
                       noise=_header_value(header, "noise", (bool,), path),
                       period=period, delay=delay)


def _matrices(data, header: dict, path) -> dict:
    """The type's own arguments: gains, operating point, measurement, timing."""
    kind = header["type"]
    if kind == "StateFeedback":
        return {"K": _entry(data, "K", path), "q_ref": _entry(data, "q_ref", path)}
    matrices = {k: _entry(data, k, path) for k in ("AK", "BK", "CK", "DK")}
    # format 2 files name no measurement: OutputFeedback's is a Measurement there
    matrices["measurement"] = _read_measurement(data, path, header.get(
        "measurement", "Measurement" if kind == "OutputFeedback" else None))
    if kind == "DiscreteFeedback":
        period, delay = check_timing(_header_value(header, "period", (int, float), path),
                                     _header_value(header, "delay", (int, float), path),
                                     f"{path}: entry 'header'")
        matrices.update(q_ref=_entry(data, "q_ref", path), period=period, delay=delay)
    elif matrices["measurement"] is None:
        raise ValueError(f"{path}: an OutputFeedback needs a measurement, the header gives "
                         "null")
    if header["format"] == POSITIVE_FEEDBACK_FORMAT:  # u = +(CK xc + DK y_m) in 1.0
        matrices["CK"], matrices["DK"] = -matrices["CK"], -matrices["DK"]
    return matrices


def _strings(data, path) -> np.ndarray:
    """The commanded strings: distinct indices >= 0."""
    strings = _entry(data, "strings", path)
    if np.any(strings < 0) or np.unique(strings).size != strings.size:
        raise ValueError(f"{path}: entry 'strings' must hold distinct string indices >= 0, got "
                         f"{strings.tolist()[:10]}; the file was edited or damaged: save the "
                         "controller again from its design")
    return strings


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
    StateFeedback, OutputFeedback, DiscreteFeedback or DiscreteLQG

    Raises
    ------
    ValueError
        If the file is missing, not a regular file, too large, truncated or corrupt, not a
        controller file, or an entry is missing or malformed (the message names the file
        and the entry); also for values the controller could not run with, as a file edited
        by hand may hold (:mod:`tenscontrol.control.storage_checks`): a non-finite number,
        a period that is not > 0 or a delay outside [0, period), a Kalman filter whose period
        or delay is not the controller's, a sensor slower than a DiscreteLQG's period, a
        negative sensor noise or quantization, a rate that is not > 0, an error covariance
        that is not symmetric positive semidefinite, repeated or negative string indices.
    """
    with fileio.open_npz(path, max_bytes=max_bytes,
                         what=f"a {CONTROLLER_FORMAT} .npz file") as data:
        header = _header(data, path)
        common = {"strings": _strings(data, path),
                  "gamma_ref": _entry(data, "gamma_ref", path), "kind": header.get("kind")}
        try:
            if header["type"] == "DiscreteLQG":
                return _lqg(data, header, path, common)
            return _TYPES[header["type"]](**_matrices(data, header, path), **common)
        except (TypeError, ValueError) as exc:
            if str(exc).startswith(f"{path}: "):     # an entry's error names the file already
                raise
            raise ValueError(f"{path}: {exc}") from None
