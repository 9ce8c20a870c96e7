"""The compiled Radau IIA loop of compressible-bar runs takes the Python loop's steps.

Oracle: simulate()'s Python loop (Radau5 calling CompressibleRun and Recorder), forced with
compressible_loop.ENABLED = False; the compiled loop calls the same radau_kernel pieces in the
same order, so the trajectories and the stats must agree bit for bit.
"""

import dataclasses

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.integrate import chunked
from tenscontrol.model.loads import PiecewiseConstantLoads
from tenscontrol.simulation import compressible_loop


def _both(monkeypatch, structure, t_final, **options):
    """The trajectories of the compiled and the Python loop (in that order)."""
    runs = []
    for compiled in (True, False):
        monkeypatch.setattr(compressible_loop, "ENABLED", compiled)
        runs.append(tc.simulate(structure, t_final, bars="compressible", **options))
    return runs


def _assert_same(a, b):
    for name in ("t", "nodes", "velocities", "work", "energy"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert dataclasses.replace(a.stats, wall_time=0.0) == dataclasses.replace(b.stats,
                                                                                wall_time=0.0)


def test_the_compiled_loop_takes_the_python_loops_steps(monkeypatch):
    s = tc.catalog.tbar("stedy", damping=1.0)
    a, b = _both(monkeypatch, s, 0.3)
    assert a.stats.rejected_steps > 0 and a.stats.jacobian_evaluations > 1
    _assert_same(a, b)


def test_the_compiled_loop_keeps_a_step_ending_at_t_final(monkeypatch):
    # a last step stretched by up to 1% to end at t_final; its output time is t0 + h
    s = tc.catalog.tbar("stedy", damping=1.0, bar_material="aluminium")
    _assert_same(*_both(monkeypatch, s, 0.0137, rtol=1e-6, atol=1e-6))


def test_dense_output_and_a_doublet_match_the_python_loop(monkeypatch):
    s = tc.catalog.tbar("stedy", damping=1.0, bar_material="hdpe")
    loads = tc.doublet(s, tc.Selection(2, "z"), 10.0, 0.05)
    t_eval = np.linspace(0.0, 0.2, 81)
    a, b = _both(monkeypatch, s, 0.2, loads=loads, t_eval=t_eval)
    np.testing.assert_array_equal(a.t, t_eval)
    _assert_same(a, b)


def test_constant_loads_and_small_chunks(monkeypatch):
    # one attempt per chunk at first, then chunks of ~0 s: the pace check and the recorder's
    # growth (from 4 rows) between chunks change nothing
    monkeypatch.setattr(chunked, "FIRST_CHUNK", 1)
    monkeypatch.setattr(chunked, "CHUNK_SECONDS", 1e-9)
    monkeypatch.setattr(tc.simulation.recording, "FIRST_ROWS", 4)
    s = tc.catalog.tbar("stedy", damping=1.0)
    loads = np.zeros((4, 3))
    loads[2, 2] = -20.0
    _assert_same(*_both(monkeypatch, s, 0.05, loads=loads))


def test_doublet_is_piecewise_constant_as_before():
    s = tc.catalog.tbar("stedy")
    d = tc.doublet(s, tc.Selection(2, "z"), 3.0, 0.5)
    assert isinstance(d, PiecewiseConstantLoads)
    for t, fz in ((0.0, 3.0), (0.4999, 3.0), (0.5, -3.0), (0.9999, -3.0), (1.0, 0.0), (7.0, 0.0)):
        expected = np.zeros((4, 3))
        expected[2, 2] = fz
        np.testing.assert_array_equal(d(t), expected)
    d(0.0)[2, 2] = 99.0  # a new array each call
    assert d(0.0)[2, 2] == 3.0
    with pytest.raises(ValueError, match=r"values must have shape \(3, n_nodes, 3\) for 2"):
        PiecewiseConstantLoads([1.0, 2.0], np.zeros((2, 4, 3)))


def test_what_the_compiled_loop_applies_to():
    s = tc.catalog.tbar("stedy", damping=1.0)
    run = tc.simulation.models.CompressibleRun(s, "consistent", False, "dense")
    applies = compressible_loop.applies
    assert applies(run, "radau5", None, None)
    assert applies(run, "radau5", np.zeros((4, 3)), None)
    assert applies(run, "radau5", tc.doublet(s, tc.Selection(2, "z")), None)
    assert not applies(run, "dopri54", None, None)
    assert not applies(run, "radau5", lambda t, q, qd: np.zeros((4, 3)), None)
    assert not applies(run, "radau5", None, object())  # a controller's loop
    banded = tc.simulation.models.CompressibleRun(s, "consistent", False, "banded")
    assert not applies(banded, "radau5", None, None)


def test_failures_read_as_in_the_python_loop(monkeypatch):
    s = tc.catalog.tbar("stedy", damping=1.0)
    messages = []
    for compiled in (True, False):
        monkeypatch.setattr(compressible_loop, "ENABLED", compiled)
        with pytest.raises(tc.SimulationError, match="max_steps = 2100") as info:
            tc.simulate(s, 10.0, bars="compressible", max_steps=2100)
        messages.append(str(info.value))
        assert len(info.value.trajectory.t) == info.value.trajectory.nodes.shape[0] > 1000
    assert messages[0] == messages[1]
