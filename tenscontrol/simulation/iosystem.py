"""The nonlinear model as a python-control ``NonlinearIOSystem``.

:func:`to_iosystem` exports the uncorrected equations of motion (docs/theory.md, "Rigid bars:
constraints and multipliers" and "Compressible bars") with the actuated strings' force-density
commands and the nodal forces as inputs, so that users can interconnect the structure with
python-control's own blocks. It has no constraint or energy correction: :func:`tenscontrol.simulate`
stays the reference simulator (python-control's
``input_output_response`` measured at 1.1-2.1 times a direct integration).
"""

from __future__ import annotations

import numpy as np

from tenscontrol.simulation.actuation import Actuators
from tenscontrol.control.controllers import measurement
from tenscontrol.model.selection import Selection, check_selection
from tenscontrol.simulation.models import CompressibleRun, RigidRun

__all__ = ["to_iosystem"]

_AXES = "xyz"


def _run(structure, bars, kinetic, include_radius):
    # the simulator's own model objects, so that both evaluate the same compiled kernels
    if bars == "rigid":
        run = RigidRun(structure, include_radius, "none", 1e-10, 10)
    elif bars == "compressible":
        run = CompressibleRun(structure, kinetic, include_radius)
    else:
        raise ValueError(f"bars must be 'rigid' or 'compressible', got {bars!r}")
    y0 = np.concatenate([structure.nodes.reshape(-1), np.zeros(3 * structure.n_nodes), [0.0]])
    run.start(y0, lambda t, y: np.zeros(3 * structure.n_nodes), None)
    return run


def to_iosystem(structure, *, kind: str = "passive", bars: str = "rigid", gamma_ref=None,
                outputs: Selection | None = None, kinetic: str = "consistent",
                include_radius: bool = False, name: str | None = None):
    """The nonlinear dynamics of `structure` as a ``control.NonlinearIOSystem``.

    Parameters
    ----------
    structure : Structure
    kind : {"passive", "control"}
        How the force-density inputs act (:mod:`tenscontrol.control.controllers`): added to the
        elastic law, or added to `gamma_ref` in place of it; clipped to [0, gamma_max]
        (two-sided springs: below gamma_max only).
    bars : {"rigid", "compressible"}
    gamma_ref : array_like, shape (n_actuated,), optional
        Operating force densities of the actuated strings [N/m] for ``kind="control"``;
        their elastic laws at the structure's nodes by default.
    outputs : Selection, optional
        Output node coordinates (``Selection(nodes=[2], axes="z")``) and string lengths
        (``strings=[...]``): outputs are their deviations from the structure's nodes; by
        default all free node coordinates.
    kinetic, include_radius
        As in :func:`tenscontrol.simulate`.
    name : str, optional
        System name; the structure's by default.

    Returns
    -------
    control.NonlinearIOSystem
        States ``x2, ..., vx2, ...`` (positions [m] then velocities [m/s], 6n), inputs
        ``gamma<k>`` for the actuated strings [N/m] then ``f<axis><node>`` (3n nodal forces [N]),
        outputs as chosen (``x2``: deviation of node 2 along x [m]; ``l0``: of string 0's length [m]).

    Notes
    -----
    Rigid bars are held by the constraint forces of the KKT solve only; without the
    correction of docs/theory.md, "The direct correction with the energy row" their lengths drift
    at the integrator's tolerance. Start simulations from ``X0 = [structure.nodes.ravel(), 0]``.
    """
    import control

    outputs = check_selection(outputs, "to_iosystem: outputs", strings=True)
    run = _run(structure, bars, kinetic, include_radius)
    strings = structure.actuated_strings
    acts = Actuators(structure, strings, np.zeros(strings.size), kind)
    if gamma_ref is None:
        gamma_ref = acts.law(structure.nodes.reshape(-1))[1]
    acts = Actuators(structure, strings, gamma_ref, kind)
    meas = measurement(structure, Selection() if outputs is None else outputs)
    nq, nu = 3 * structure.n_nodes, strings.size

    def update(t, x, u, params):
        y = np.concatenate([x, [0.0]])
        f = u[nu:] + acts.apply(x[:nq], u[:nu], x[nq:])[0]
        return run.base_rhs(y, f)[:2 * nq]

    def output(t, x, u, params):
        return meas(x[:nq])

    pos = [f"{a}{i}" for i in range(structure.n_nodes) for a in _AXES]
    return control.nlsys(update, output, states=pos + [f"v{p}" for p in pos],
                         inputs=[f"gamma{k}" for k in strings] + [f"f{p}" for p in pos],
                         outputs=list(meas.names), name=name or structure.name)
