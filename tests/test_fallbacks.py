"""Every fallback path of simulate() is counted in its stats, and warned of once where it
changes the accuracy (issue 19, item 3); the linear-algebra path is an option recorded there.

Each test forces its path: a crafted structure (a nearly straight toggle of two rigid bars,
whose length constraints are nearly dependent; a compressible bar whose axial stretch carries
no mass in the "paper" kinetic energy) or a monkeypatched failure (the band LU, Newton).
"""

import dataclasses
import warnings

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.integrate import chunked, radau
from tenscontrol.mechanics.compressible import banded as CB
from tenscontrol.mechanics.compressible import kernels as CK
from tenscontrol.mechanics.compressible import model as CM
from tenscontrol.simulation import compressible_loop, rigid_loop


def _toggle(offset=1e-7):
    """Two rigid bars A-B-C, A and C fixed, B off the line AC by `offset` [m]: the bars' rows
    at B are nearly parallel (smallest singular value ~offset, kept by the model's 1e-10 test)
    and the KKT pivot ~offset^2 fails the kernels' 1e-12 test."""
    bar = tc.catalog.tbar("stedy").bars[0]
    fixed = np.array([[1, 1, 1], [0, 0, 0], [1, 1, 1]], bool)
    return tc.Structure(nodes=np.array([[0.0, 0, 0], [1, 0, offset], [2, 0, 0]]),
                        bars=(dataclasses.replace(bar, nodes=(0, 1)),
                              dataclasses.replace(bar, nodes=(1, 2))),
                        strings=(), fixed=fixed, name="toggle")


def _run(*args, **kwargs):
    """simulate() with its warnings recorded: (trajectory, messages)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tr = tc.simulate(*args, **kwargs)
    ours = [w for w in caught if str(w.message).startswith("simulate:")]
    assert all(w.filename == __file__ for w in ours)    # shown at the caller's line
    return tr, [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


@pytest.mark.slow
@pytest.mark.parametrize("compiled", [True, False])
def test_dependent_bar_rows_are_counted_and_warned_once(monkeypatch, compiled):
    monkeypatch.setattr(rigid_loop, "ENABLED", compiled)
    qd = np.zeros((3, 3))
    qd[1, 1] = 1e-3          # about the axis AC: no bar stretches
    tr, messages = _run(_toggle(), 0.01, qd=qd)
    st = tr.stats
    assert st.linear_algebra == "sparse"
    assert st.dependent_constraint_solves > 0 and st.svd_correction_steps > 0
    assert st.fallbacks == {"dependent_constraint_solves": st.dependent_constraint_solves,
                            "svd_correction_steps": st.svd_correction_steps}
    assert f"fallbacks={sum(st.fallbacks.values())}" in repr(st)
    warned = [m for m in messages if "nearly) dependent" in m]
    assert len(warned) == 1      # once per run, with the count; the SVD steps are not warned
    assert f"simulate: {st.dependent_constraint_solves} derivative" in warned[0]
    assert np.abs(tr.bar_violation).max() < 1e-10     # the correction holds the lengths


@pytest.mark.slow
def test_accelerations_warn_of_dependent_bars():
    with pytest.warns(RuntimeWarning, match=r"toggle: the bar constraints are \(nearly\) "
                                            "dependent at q"):
        tc.accelerations(_toggle())


def test_independent_bars_take_no_fallback():
    tr, messages = _run(tc.catalog.tbar("stedy"), 0.2)
    assert tr.stats.fallbacks == {} and "fallbacks" not in repr(tr.stats)
    assert not [m for m in messages if "simulate:" in m]


@pytest.fixture
def unchecked_mass(monkeypatch):
    """Let a singular "paper" mass matrix through the model's start check (the path a mass
    that turns singular during motion takes); the model cache is cleared around the test."""
    monkeypatch.setattr(CM, "_check_mass", lambda *args: None)
    CM._model_cached.cache_clear()
    yield
    CM._model_cached.cache_clear()


def _hanging_bar():
    """A free compressible bar hung on a string: in the "paper" kinetic energy its axial
    stretch has no inertia (its end nodes carry no other mass), so M is singular."""
    s = tc.catalog.tbar("stedy")
    fixed = np.array([[1, 1, 1], [0, 0, 0], [0, 0, 0]], bool)
    return tc.Structure(nodes=np.array([[0.0, 0, 0], [0, 0, 1], [0, 0, 2]]),
                        bars=(dataclasses.replace(s.bars[0], nodes=(1, 2)),),
                        strings=(dataclasses.replace(s.strings[0], nodes=(0, 1),
                                                     rest_fraction=0.9),),
                        fixed=fixed, name="hanging bar")


@pytest.mark.slow
@pytest.mark.parametrize("linear_algebra", ["dense", "banded"])
def test_singular_mass_is_counted_and_warned(unchecked_mass, linear_algebra):
    tr, messages = _run(_hanging_bar(), 0.01, bars="compressible", kinetic="paper",
                        linear_algebra=linear_algebra)
    st = tr.stats
    assert st.linear_algebra == linear_algebra
    assert st.singular_mass_solves > 0
    if linear_algebra == "banded":   # M(q) singular: no band Jacobian either
        assert st.dense_jacobians == st.jacobian_evaluations > 0
    warned = [m for m in messages if "singular mass matrix" in m]
    assert len(warned) == 1 and f"simulate: {st.singular_mass_solves} " in warned[0]


def test_the_compiled_loop_redoes_a_singular_attempt_as_the_python_loop_runs_it(
        unchecked_mass, monkeypatch):
    # the compiled loop starts in its variant without the pseudo-inverse, returns FALLBACK at
    # the first attempt (its Jacobian meets the singular mass) and redoes it in the other one
    runs, statuses = [], []
    real = compressible_loop.advance

    def advance(*args):
        statuses.append(real(*args))
        return statuses[-1]

    monkeypatch.setattr(compressible_loop, "advance", advance)
    for compiled in (True, False):
        monkeypatch.setattr(compressible_loop, "ENABLED", compiled)
        runs.append(tc.simulate(_hanging_bar(), 0.01, bars="compressible", kinetic="paper"))
    assert statuses[0] == compressible_loop.FALLBACK
    a, b = runs
    assert a.stats.singular_mass_solves > 0
    for name in ("t", "nodes", "velocities", "work", "energy"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert dataclasses.replace(a.stats, wall_time=0.0) == dataclasses.replace(b.stats,
                                                                                wall_time=0.0)


@pytest.mark.slow
def test_an_attempt_returned_from_its_stages_is_redone_the_same(unchecked_mass, monkeypatch):
    # J at hand before the first attempt: the stage derivatives meet the singular mass, and
    # the attempt redone from the state the loop returned equals the one run with the
    # pseudo-inverse from the start
    real, results = compressible_loop.advance, []

    def advance(model, times, values, settings, work, y, limit, t_eval, T, Y, clock, counts,
                fallback):
        if not results:
            CK.jacobian(y, values[0], model, work[13])
            counts[chunked.NEED_JAC], counts[chunked.JAC_CURRENT] = 0, 1
            state = (*work, y, T, Y, clock, counts)
            copies = [a.copy(order="K") for a in state]   # E1, E2 stay Fortran-ordered
            results.append(real(model, times, values, settings, work, y, limit, t_eval, T, Y,
                                clock, counts, None))
            results.append(real(model, times, values, settings, work, y, limit, t_eval, T, Y,
                                clock, counts, True))
            w, rest = tuple(copies[:len(work)]), copies[len(work):]
            results.append(real(model, times, values, settings, w, rest[0], limit, t_eval,
                                *rest[1:], True))
            for got, want in zip(state, copies):
                np.testing.assert_array_equal(got, want)
            return results[1]
        return real(model, times, values, settings, work, y, limit, t_eval, T, Y, clock,
                    counts, fallback)

    monkeypatch.setattr(compressible_loop, "advance", advance)
    tr = tc.simulate(_hanging_bar(), 0.01, bars="compressible", kinetic="paper")
    assert results[0] == compressible_loop.FALLBACK and results[1] == results[2]
    assert tr.stats.singular_mass_solves > 0


def test_accelerations_warn_of_a_singular_mass(unchecked_mass):
    with pytest.warns(RuntimeWarning, match="mass matrix is singular at q"):
        tc.accelerations(_hanging_bar(), bars="compressible", kinetic="paper")


def test_band_lu_fallback_is_counted(monkeypatch):
    s = tc.catalog.tbar("stedy", damping=1.0, bar_material="hdpe")
    band, _ = _run(s, 0.2, bars="compressible", linear_algebra="banded")
    assert band.stats.linear_algebra == "banded" and band.stats.fallbacks == {}
    monkeypatch.setattr(CB, "k_factor", lambda Mb, Bq, Bqd, c, K: 0)   # a small first pivot
    tr, messages = _run(s, 0.2, bars="compressible", linear_algebra="banded")
    st = tr.stats
    # both factorizations (real and complex) of every LU fell back
    assert st.dense_lu_fallbacks == 2 * st.lu_decompositions > 0
    assert st.fallbacks == {"dense_lu_fallbacks": st.dense_lu_fallbacks}
    assert not [m for m in messages if "simulate:" in m]      # costs time, not accuracy
    np.testing.assert_allclose(tr.nodes[-1], band.nodes[-1], atol=1e-7)


def test_linear_algebra_paths_agree_and_auto_keeps_the_threshold():
    s = tc.catalog.tbar("stedy", damping=1.0, bar_material="hdpe")
    dense = tc.simulate(s, 0.2, bars="compressible")
    band = tc.simulate(s, 0.2, bars="compressible", linear_algebra="banded")
    assert dense.stats.linear_algebra == "dense"             # 12 coordinates < 60
    assert dense.stats.keep_step == "narrow"                  # 25 unknowns < 30
    np.testing.assert_allclose(band.nodes[-1], dense.nodes[-1], atol=1e-7)
    tower = tc.catalog.prism_tower(6)                         # 21 nodes: 63 coordinates
    assert 3 * tower.n_nodes >= CB.BANDED_MIN_COORDINATES
    big = tc.simulate(tower, 1e-3, bars="compressible")
    assert (big.stats.linear_algebra, big.stats.keep_step) == ("banded", "wide")


def test_linear_algebra_is_validated():
    s = tc.catalog.tbar("stedy")
    with pytest.raises(ValueError, match="linear_algebra must be one of 'auto', 'dense', "
                                         "'banded', got 'band'"):
        tc.simulate(s, 0.1, bars="compressible", linear_algebra="band")
    with pytest.raises(ValueError, match="linear_algebra='dense' applies to compressible bars"):
        tc.simulate(s, 0.1, linear_algebra="dense")


def test_newton_failures_reach_the_stats(monkeypatch):
    newton = radau.Radau5.newton
    failed = []

    def fail_once(self, t, h, y0):
        if not failed:
            failed.append(t)
            return radau._DIVERGED, 0.5, 1
        return newton(self, t, h, y0)
    monkeypatch.setattr(radau.Radau5, "newton", fail_once)
    # the Python loop: the compiled one (compressible_loop) has no Radau5.newton to patch
    monkeypatch.setattr(compressible_loop, "ENABLED", False)
    tr = tc.simulate(tc.catalog.tbar("stedy", damping=1.0, bar_material="hdpe"), 0.05,
                     bars="compressible")
    assert tr.stats.newton_failures == 1


@pytest.mark.slow
def test_the_compiled_loop_takes_the_python_loops_steps_through_the_fallbacks(monkeypatch):
    # the compiled loop starts without the fallbacks and repeats the attempt that needs one in
    # the variant with them (rigid_loop.FALLBACK): the steps must be the Python loop's
    qd = np.zeros((3, 3))
    qd[1, 1] = 1e-3
    runs = {}
    for compiled in (True, False):
        monkeypatch.setattr(rigid_loop, "ENABLED", compiled)
        runs[compiled], _ = _run(_toggle(), 0.01, qd=qd)
    a, b = runs[True], runs[False]
    for field in ("accepted_steps", "rejected_steps", "rhs_evaluations", "correction_iterations",
                  "dependent_constraint_solves", "svd_correction_steps"):
        assert getattr(a.stats, field) == getattr(b.stats, field), field
    np.testing.assert_allclose(a.nodes, b.nodes, rtol=0, atol=1e-12)
