"""The actuation law shared by the simulator and the extended Kalman filter
(tenscontrol.mechanics.actuation): its exact derivatives against central differences, in every
regime of the law (inside the bounds, slack by command, saturated, geometrically slack but
commanded to pull, a two-sided spring), dampers switched by the command."""

import dataclasses

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.mechanics.actuation import (actuated_forces, actuation_jacobians,
                                             actuator_record)
from tenscontrol.simulation.actuation import Actuators


@pytest.fixture(scope="module")
def structure():
    """The damped T-bar at 10 N/m with gamma_max 50 N/m, string 2 made longer than its
    length (slack at rest) and string 3 a two-sided spring."""
    s = tc.equilibrium(tc.catalog.tbar("stedy", damping=2.0), gamma_min=10.0).structure
    lengths = np.linalg.norm(np.diff(s.nodes[s.string_nodes], axis=1)[:, 0], axis=1)
    members = [dataclasses.replace(m, gamma_max=50.0) for m in s.strings]
    members[2] = dataclasses.replace(members[2], rest_length=1.05 * lengths[2],
                                     rest_fraction=None)
    members[3] = dataclasses.replace(members[3], kind="spring")
    return dataclasses.replace(s, strings=tuple(members))


def _state(structure, seed):
    rng = np.random.default_rng(seed)
    nq = 3 * structure.n_nodes
    q, qd = structure.nodes.reshape(-1).copy(), np.zeros(nq)
    free = structure.free_coordinates
    q[free] += 0.05 * rng.standard_normal(free.size)
    qd[free] = 2.0 * rng.standard_normal(free.size)
    return q, qd


def _forces(act, q, qd, u):
    n = u.size
    out = np.empty(q.size)
    actuated_forces(np.ascontiguousarray(q), np.ascontiguousarray(qd), u, act, out,
                    np.empty(n), np.empty(n))
    return out


def _central(f, x, rel=1e-6):
    cols = []
    for i in range(x.size):
        h = rel * max(1.0, abs(x[i]))
        e = np.zeros_like(x)
        e[i] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.array(cols).T


@pytest.mark.parametrize("kind", ["passive", "control"])
@pytest.mark.parametrize("u", [[2.0, -1e3, 3.0, -4.0], [2.0, 1e9, 3.0, 5.0]])
def test_jacobians_against_central_differences(structure, kind, u):
    # measured 2e-10 (q) and 1.5e-9 (qd) relative: the central differences' own error
    u = np.array(u)
    strings = np.arange(4)
    act = actuator_record(structure, strings, np.full(4, 10.0), kind)
    q, qd = _state(structure, 7)
    _, applied, _ = Actuators(structure, strings, np.full(4, 10.0), kind).apply(q, u, qd)
    # the regimes the parameters are meant to reach
    lengths = np.linalg.norm(np.diff(q.reshape(-1, 3)[structure.string_nodes], axis=1)[:, 0],
                             axis=1)
    assert lengths[2] < structure.string_rest_lengths[2] and applied[2] > 0.0
    assert applied[1] in (0.0, 50.0)
    dq, dqd = actuation_jacobians(act, q, qd, u)
    fd_q = _central(lambda v: _forces(act, v, qd, u), q)
    fd_qd = _central(lambda v: _forces(act, q, v, u), qd)
    assert np.abs(dq - fd_q).max() < 1e-7 * np.abs(fd_q).max()
    assert np.abs(dqd - fd_qd).max() < 1e-7 * np.abs(fd_qd).max()
    assert np.abs(fd_qd).max() > 0.1          # the switched dampers are in the derivative
    # without velocities the dampers stay as the kernels have them: no velocity derivative
    assert not actuation_jacobians(act, q, np.zeros(0), u)[1].any()


def test_the_record_is_the_simulators(structure):
    # Actuators (the simulator) builds its record with the same function, field by field
    strings, gamma = np.array([3, 1]), np.array([10.0, 12.0])
    mine = actuator_record(structure, strings, gamma, "control")
    theirs = Actuators(structure, strings, gamma, "control").record
    for a, b in zip(mine, theirs):
        for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
            np.testing.assert_array_equal(x, y)
            assert np.asarray(x).dtype == np.asarray(y).dtype
