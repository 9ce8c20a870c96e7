"""Linear models and controllers as MATLAB .mat files (scipy.io), with named signals.

:func:`save_mat` writes the matrices, the signal names and units as cell arrays of strings,
and the operating point, so that in MATLAB::

    S = load('model.mat');
    sys = ss(S.A, S.B, S.C, S.D, 'StateName', S.StateName, 'InputName', S.InputName, ...
             'OutputName', S.OutputName, 'StateUnit', S.StateUnit, 'InputUnit', S.InputUnit, ...
             'OutputUnit', S.OutputUnit);

gives the model with python-control's names (``LinearModel.sys``). :func:`mat_arrays` is the
same content as a dict; ``tenscontrol linearize --out model.npz`` stores it with numpy.
String and bar indices (``strings``) are tenscontrol's, counted from 0.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tenscontrol import fileio
from tenscontrol.control.controllers import OutputFeedback, StateFeedback
from tenscontrol.linear.linearization import LinearModel

__all__ = ["mat_arrays", "save_mat"]


def _unit(name: str) -> str:
    """The unit of a signal from its name (x2, vx2, gamma3, psi1, fz2, l5; the sensors' T5,
    ux1, wz1)."""
    for prefix, unit in (("gamma", "N/m"), ("psi", "N/m"), ("v", "m/s"), ("f", "N"),
                         ("l", "m"), ("T", "N"), ("u", "1"), ("w", "rad/s")):
        if name.startswith(prefix):
            return unit
    return "m"


def _cells(names) -> np.ndarray:
    """A column cell array of strings for scipy.io.savemat."""
    out = np.empty((len(names), 1), dtype=object)
    for k, name in enumerate(names):
        out[k, 0] = str(name)
    return out


def _signals(states, inputs, outputs) -> dict:
    return {"StateName": list(states), "InputName": list(inputs), "OutputName": list(outputs),
            "StateUnit": [_unit(n) for n in states], "InputUnit": [_unit(n) for n in inputs],
            "OutputUnit": [_unit(n) for n in outputs]}


def _model_arrays(model: LinearModel) -> dict:
    inputs = model.input_names + model.disturbance_names
    nu = model.B.shape[1]
    D = np.zeros((model.C.shape[0], len(inputs)))
    if getattr(model, "D", None) is not None:      # sensors' feedthrough (with_sensors)
        D[:, :nu] = model.D
    return {
        # ss(A, B, C, D) over [u; d]: B is [B E] here, and the split kept as Bu and E
        "A": model.A, "B": np.hstack([model.B, model.E]), "C": model.C,
        "D": D, "Bu": model.B, "E": model.E,
        "n_force_density_inputs": nu,
        **_signals(model.state_names, inputs, model.output_names),
        "q_ref": model.q, "qd_ref": model.qd, "loads_ref": model.loads, "gamma_ref": model.gamma,
        "bar_force_densities_ref": model.bar_force_densities,
        "mass_matrix": model.mass_matrix, "stiffness": model.stiffness, "damping": model.damping,
        "kind": model.kind, "bars": model.bars, "structure": model.structure.name,
        "at_equilibrium": bool(model.at_equilibrium), "type": "LinearModel",
    }


def _state_feedback_arrays(ctrl: StateFeedback) -> dict:
    nq = ctrl.q_ref.size
    states = [f"{a}{i}" for i in range(nq // 3) for a in "xyz"]
    states += [f"v{n}" for n in states]
    outputs = [f"gamma{k}" for k in ctrl.strings]
    # u = -K (x - x_ref): a static gain from the state deviation
    return {"A": np.zeros((0, 0)), "B": np.zeros((0, 2 * nq)),
            "C": np.zeros((ctrl.strings.size, 0)), "D": -ctrl.K, "K": ctrl.K,
            **_signals([], states, outputs), "q_ref": ctrl.q_ref,
            "strings": ctrl.strings, "gamma_ref": ctrl.gamma_ref, "kind": ctrl.kind,
            "type": "StateFeedback"}


def _output_feedback_arrays(ctrl: OutputFeedback) -> dict:
    m = ctrl.measurement
    if not hasattr(m, "coordinates"):
        raise TypeError(f"save_mat: the controller measures {type(m).__name__} signals (a "
                        "SensorSet, tenscontrol.lqg), which the .mat layout does not hold; "
                        "save AK, BK, CK, DK with scipy.io.savemat")
    states = [f"xc{k}" for k in range(ctrl.n_states)]
    # the command map y_m -> u = -(CK xc + DK y_m), as D = -K for StateFeedback (and 1.0)
    return {"A": ctrl.AK, "B": ctrl.BK, "C": -ctrl.CK, "D": -ctrl.DK,
            **_signals(states, m.names, [f"gamma{k}" for k in ctrl.strings]),
            "measurement_C": m.C, "q_ref": m.q_ref, "measured_coordinates": m.coordinates,
            "measured_strings": m.strings, "lengths_ref": m.lengths_ref,
            "strings": ctrl.strings, "gamma_ref": ctrl.gamma_ref, "kind": ctrl.kind,
            "type": "OutputFeedback"}


def mat_arrays(obj) -> dict:
    """The variables :func:`save_mat` writes, as a dict of arrays, numbers and lists of str."""
    if isinstance(obj, LinearModel):
        return _model_arrays(obj)
    if isinstance(obj, StateFeedback):
        return _state_feedback_arrays(obj)
    if isinstance(obj, OutputFeedback):
        return _output_feedback_arrays(obj)
    raise TypeError(f"save_mat: expected a LinearModel, StateFeedback or OutputFeedback, got "
                    f"{type(obj).__name__} (for a design, pass design.controller)")


def save_mat(obj, path) -> Path:
    """Write a linear model or a controller to a MATLAB .mat file (version 5, via scipy.io).

    Variables: ``A, B, C, D`` for ``ss(A, B, C, D)``; ``StateName, InputName, OutputName``
    and ``StateUnit, InputUnit, OutputUnit`` as column cell arrays of strings; the operating
    point; ``type`` and ``kind`` as text.

    - LinearModel: inputs are the force densities then the nodal forces, so ``B = [B E]``
      (``Bu`` and ``E`` are there too, and ``n_force_density_inputs``), ``D = 0``; the
      operating point ``q_ref, qd_ref, loads_ref, gamma_ref, bar_force_densities_ref``;
      ``mass_matrix``, ``stiffness``, ``damping``; ``bars``, ``structure`` (its name),
      ``at_equilibrium``.
    - StateFeedback: ``K`` and the static gain ``D = -K`` from the state deviation
      x - [q_ref; 0] (``InputName``) to the commands (``OutputName``, gamma<k>); ``q_ref``,
      ``strings`` (from 0), ``gamma_ref``.
    - OutputFeedback: ``A, B, C, D = AK, BK, -CK, -DK``, the system from the measured signals
      to the commands, ``u = ss(A, B, C, D) y_m`` (OutputFeedback is ``u = -K(s) y_m``; this is
      ``-K(s)``, MATLAB's ``lft``/positive-feedback convention of ``hinfsyn``, the same
      variables as version 1.0 wrote); ``measurement_C``, ``q_ref``,
      ``measured_coordinates``, ``measured_strings``, ``lengths_ref``, ``strings``,
      ``gamma_ref``.

    Every controller is so exported as its command map: ``u = ss(A, B, C, D)`` applied to the
    deviations of its inputs (D = -K for StateFeedback, -K(s) for OutputFeedback).

    Parameters
    ----------
    obj : LinearModel, StateFeedback or OutputFeedback
    path : str or path-like
        The .mat file to write.

    Returns
    -------
    pathlib.Path
        The file written, whole or not at all.

    Raises
    ------
    OSError
        If the file cannot be written (a missing folder, a directory, no permission, a full
        disk): the message names `path`, which is left as it was.
    """
    import scipy.io

    variables = {key: _cells(value) if isinstance(value, list) else value
                 for key, value in mat_arrays(obj).items()}
    return fileio.write_file(path, lambda f: scipy.io.savemat(
        f, variables, oned_as="column", do_compression=True))
