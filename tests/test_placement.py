"""Actuator placement (tenscontrol.place_actuators): the greedy choice against the brute-force
optimum, its figure against python-control's H2 norm of the closed loop, the chosen half
against random halves, the result as every design's actuator selection, and the errors."""

from __future__ import annotations

import itertools

import control as ct
import numpy as np
import pytest
import scipy.linalg

import tenscontrol as tc
from tenscontrol.linear.greedy import greedy_subset

PRISM_STRINGS = 9          # the 3-prism: 3 base-ring, 3 top-ring and 3 side strings


@pytest.fixture(scope="module")
def prism():
    """The damped 3-prism at an equilibrium (twisting mode 8.47 rad/s, damping ratio 3e-8)."""
    eq = tc.equilibrium(tc.catalog.prism(3, damping=1.0), gamma_min=10.0)
    return eq.structure, tc.linearize(eq.structure)


def loop_figure(structure, strings) -> float:
    """The oracle: python-control's H2 norm from d to z = [Q_r^1/2 x_r; R^1/2 u] of the LQR
    loop with `strings` commanded, on a model linearized again from the structure marked
    with String.actuated (inf when the LQR has no stabilizing solution)."""
    marked = structure.with_strings(actuated=False).with_strings(sorted(strings), actuated=True)
    try:
        d = tc.lqr(tc.linearize(marked))
    except ValueError:
        return np.inf
    sys, nu = d.minimal.sys, d.K.shape[0]
    A, B = np.asarray(sys.A), np.asarray(sys.B)
    T = d.minimal.basis
    Cz = np.vstack([np.real(scipy.linalg.sqrtm(T.T @ d.Q @ T)),
                    -np.real(scipy.linalg.sqrtm(d.R)) @ d.K_reduced])
    return float(ct.norm(ct.ss(A - B[:, :nu] @ d.K_reduced, B[:, nu:], Cz, 0), 2))


def test_greedy_subset_takes_the_best_and_the_first_of_equals():
    values = [3.0, 5.0, 5.0, 1.0]
    chosen, scores = greedy_subset(4, 3, lambda S: sum(values[i] for i in S))
    assert chosen == (1, 2, 0) and scores == (5.0, 10.0, 13.0)


@pytest.mark.parametrize("k", [2, 4])
def test_greedy_reaches_the_brute_force_optimum_on_the_prism(prism, k):
    structure, model = prism
    p = tc.place_actuators(model, k)
    figures = {S: loop_figure(structure, S) for S in itertools.combinations(range(9), k)}
    best = min(figures.values())
    assert p.figure == pytest.approx(best, rel=1e-6)
    assert p.figure == pytest.approx(loop_figure(structure, p.strings), rel=1e-6)
    # the optimum is not every set's figure: the choice matters
    assert max(figures.values()) > 1.1 * best


def test_figure_is_the_closed_loop_h2_norm_and_the_full_set_is_every_candidate(prism):
    structure, model = prism
    p = tc.place_actuators(model, 3)
    assert p.full == pytest.approx(loop_figure(structure, range(PRISM_STRINGS)), rel=1e-6)
    assert p.history[-1] == p.figure and len(p.history) == 3
    assert all(a >= b for a, b in zip(p.history, p.history[1:]))   # passive: never grows
    assert p.kept == pytest.approx(p.full / p.figure) and 0 < p.kept <= 1


def test_chosen_half_beats_the_median_random_half_on_the_prism(prism):
    structure, model = prism
    p = tc.place_actuators(model, 4)
    rng = np.random.default_rng(20261207)
    random = [loop_figure(structure, rng.choice(PRISM_STRINGS, 4, replace=False))
              for _ in range(20)]
    assert p.figure < np.median(random)
    assert p.kept >= 0.9                       # 0.904 measured (benchmarks/bench_placement.py)


def test_modal_index_greedy_reaches_the_brute_force_optimum(prism):
    from tenscontrol.design.placement import _loop, _modal_log, _modal_spaces

    _, model = prism
    cands = tuple(range(PRISM_STRINGS))
    design, _ = _loop(model, cands, None, {s: s for s in cands}, dict(Q=None, effort=1.0,
                                                                        order=None))
    spaces = _modal_spaces(design, cands)
    for k in (2, 3):
        p = tc.place_actuators(model, k, criterion="modal")
        best = max(np.exp(_modal_log(spaces, S)) for S in itertools.combinations(cands, k))
        assert p.figure == pytest.approx(best, rel=1e-9)
    assert p.full == pytest.approx(1.0, abs=1e-9)
    # the base ring (strings 0-2, between fixed nodes) reaches no mode: a set of it scores
    # the floor, far below any set that reaches every mode
    assert _modal_log(spaces, (0, 1, 2)) < np.log(1e-6)
    assert _modal_log(spaces, (3, 4, 5, 6, 7, 8)) == pytest.approx(0.0, abs=1e-9)


def test_result_is_the_actuator_selection_of_the_design_functions(prism):
    structure, model = prism
    p = tc.place_actuators(model, 4, candidates=[3, 4, 5, 6, 7, 8])
    chosen = sorted(p.strings)
    assert list(p.structure.actuated_strings) == chosen and p.candidates == (3, 4, 5, 6, 7, 8)
    d = tc.lqr(p.model)
    assert list(d.controller.strings) == chosen
    nu = d.K.shape[0]
    E = np.asarray(d.minimal.sys.B)[:, nu:]
    assert np.sqrt(np.trace(E.T @ d.riccati.X @ E)) == pytest.approx(p.figure, rel=1e-9)
    sampled = tc.dlqr(p.model, 0.01)
    assert list(sampled.controller.strings) == chosen
    assert sampled.spectral_radius < 1.0
    # the designed controller runs on the placed structure and on the original one
    push = tc.doublet(structure, tc.Selection(nodes=[3], axes="x"), amplitude=1.0,
                      half_period=0.02)
    for s in (p.structure, structure):
        run = tc.simulate(s, 0.05, controller=d, loads=push)
        assert run.t[-1] == pytest.approx(0.05)


def test_control_model_and_given_weights(prism):
    structure, model = prism
    control = tc.linearize(structure, kind="control")
    p = tc.place_actuators(control, 2, R=np.diag(np.arange(1.0, 10.0)))
    assert p.model.kind == "control" and len(p.strings) == 2
    assert list(tc.lqr(p.model, R=np.eye(2)).controller.strings) == sorted(p.strings)


def test_repr_and_summary(prism):
    _, model = prism
    p = tc.place_actuators(model, 2, criterion="modal")
    assert "\n" not in repr(p) and repr(p).startswith("ActuatorPlacement(criterion='modal'")
    text = str(p)
    assert "chosen strings" in text and f"{p.figure:.6g}" in text and "kept" in text


def test_bad_arguments_name_the_field_and_the_fix(prism):
    structure, model = prism
    with pytest.raises(ValueError, match=r"k must be from 1 to 9 .*choose fewer"):
        tc.place_actuators(model, 0)
    with pytest.raises(ValueError, match=r"k must be from 1 to 2 .*give more candidates"):
        tc.place_actuators(model, 3, candidates=[4, 5])
    with pytest.raises(TypeError, match=r"k \(the number of strings to choose\) must be an "
                                        r"integer"):
        tc.place_actuators(model, 2.0)
    with pytest.raises(ValueError, match=r"candidates: string 12 does not exist .*9 strings"):
        tc.place_actuators(model, 1, candidates=[3, 12])
    with pytest.raises(ValueError, match=r"string 4 \(nodes .*\) is listed twice"):
        tc.place_actuators(model, 1, candidates=[4, 4])
    with pytest.raises(TypeError, match="candidates must be string indices"):
        tc.place_actuators(model, 1, candidates=[0.5])
    with pytest.raises(ValueError, match="criterion"):
        tc.place_actuators(model, 1, criterion="best")
    with pytest.raises(ValueError, match=r"R must be a \(9, 9\) matrix, one row and column per "
                                         r"candidate"):
        tc.place_actuators(model, 1, R=np.eye(3))
    with pytest.raises(ValueError, match=r"one input per string.*before \.actuated"):
        tc.place_actuators(model.actuated([3, 4]), 1)
    with pytest.raises(TypeError, match="LinearModel"):
        tc.place_actuators(model.A, 1)
    off = tc.linearize(structure.with_strings([3], actuated=False))
    with pytest.raises(ValueError, match=r"string 3 \(nodes .*\) is not commanded "
                                         r"\(String.actuated is False\); leave it out, or mark "
                                         r"it with structure.with_strings\(\[3\], actuated=True\)"):
        tc.place_actuators(off, 1, candidates=[3, 4])
    assert 3 not in tc.place_actuators(off, 8).candidates       # the default: the commanded


def test_candidates_that_reach_no_lightly_damped_mode_are_refused():
    """The 4-prism's base ring (strings 0-3) joins fixed nodes: no LQR on it is stabilizing
    (a mode with damping ratio 3e-8 is out of reach)."""
    eq = tc.equilibrium(tc.catalog.prism(4, damping=1.0), gamma_min=10.0)
    model = tc.linearize(eq.structure)
    with pytest.raises(ValueError, match=r"out of reach of the candidates \[0, 1, 2, 3\] or "
                                         r"not weighted by Q; add candidates that reach it"):
        tc.place_actuators(model, 2, candidates=[0, 1, 2, 3])
    p = tc.place_actuators(model, 1, candidates=[0, 1, 2, 3, 8])
    assert p.strings == (8,) and np.isfinite(p.figure)


def test_modal_index_does_not_depend_on_the_state_basis(prism):
    """The 3-prism's double modes (a symmetric structure) make the eigenvectors arbitrary in
    their eigenspaces: the index of every set is the same in another state basis."""
    import types

    from tenscontrol.design.placement import _loop, _modal_log, _modal_spaces

    _, model = prism
    cands = tuple(range(PRISM_STRINGS))
    design, _ = _loop(model, cands, None, {s: s for s in cands}, dict(Q=None, effort=1.0,
                                                                        order=None))
    sys = design.minimal.sys
    T = np.random.default_rng(7).standard_normal((sys.nstates, sys.nstates))
    Ti = np.linalg.inv(T)
    moved = types.SimpleNamespace(
        minimal=types.SimpleNamespace(sys=ct.ss(Ti @ sys.A @ T, Ti @ sys.B, sys.C @ T, 0)),
        K=design.K, R=design.R)
    here, there = _modal_spaces(design, cands), _modal_spaces(moved, cands)
    assert [X.shape for X in here] and sorted(X.shape[0] for X in here) == sorted(
        X.shape[0] for X in there)
    # a random basis (condition number ~1e2) loses digits: 5e-8 relative measured
    for S in [(3,), (4, 7), (3, 5, 8), (0, 6, 7, 8), (3, 4, 5, 6, 7, 8)]:
        assert _modal_log(there, S) == pytest.approx(_modal_log(here, S), rel=1e-6, abs=1e-9)


def test_undamped_prism_no_single_string_stabilizes_and_the_modal_index_picks_the_first():
    """Undamped, every mode must be reached for a stabilizing LQR: no single string does it,
    21 of the 36 pairs and 19 of the 84 triples do not either. The first pick goes by the
    modal index (a base-ring string, the first of the equal infinite figures, would leave
    every pair without a stabilizing LQR), and greedy still reaches the brute-force optimum."""
    eq = tc.equilibrium(tc.catalog.prism(3), gamma_min=10.0)
    model = tc.linearize(eq.structure)
    p1 = tc.place_actuators(model, 1)
    assert p1.figure == np.inf and p1.kept == 0.0 and p1.strings[0] >= 6   # a side string
    for k in (2, 3):
        p = tc.place_actuators(model, k)
        figures = [loop_figure(eq.structure, S) for S in itertools.combinations(range(9), k)]
        assert sum(np.isinf(figures)) == {2: 21, 3: 19}[k]
        assert p.history[0] == np.inf and p.figure == pytest.approx(min(figures), rel=1e-6)
