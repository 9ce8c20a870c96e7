"""static_equilibrium's budget: every route stops within its CPU time and iterations with a
StaticsError that names the route, the load factor reached and the limit (issue 33)."""

import pytest

import tenscontrol as tc
from tenscontrol.statics import problem


def _steel_tower_under_30g():
    # 10-stage steel tower under 30 g: Newton at the full load is skipped and the path from
    # the start answers (tests/test_static_solve.py, test_path_tangent_...), in more than 20
    # corrector iterations
    s = tc.catalog.prism_tower(10, string_material="steel")
    s = tc.equilibrium(s, gamma_min=200.0).structure
    return s.with_gravity((0.0, 0.0, -30 * 9.806))


def test_iteration_limit_stops_the_path_and_names_it():
    s = _steel_tower_under_30g()
    full = tc.static_equilibrium(s)
    assert full.route == "path" and full.history.iterations > 20
    with pytest.raises(tc.StaticsError, match=r"stopped on the route 'path' at 0\.\d+ of the "
                       r"load: 20 iterations reached iteration_limit") as info:
        tc.static_equilibrium(s, iteration_limit=20)
    error = info.value
    assert error.route == "path"
    assert error.history.routes[-1].startswith("path: stopped at")
    # the iterations the error's history holds: those counted, no more
    assert error.history.iterations <= 20


def test_time_limit_stops_newton_at_its_first_iteration():
    # a pendulum out of equilibrium: Newton at the full load, stopped before its first step
    s = tc.Structure(nodes=[[0, 0, 0], [1, 0, 0]],
                     bars=[tc.Bar((0, 1), radius=0.01, material="aluminium")],
                     fixed={0: "xyz"}, gravity=(0, 0, -9.806))
    with pytest.raises(tc.StaticsError, match=r"stopped on the route 'newton' at 1 of the "
                       r"load: .* s of CPU passed time_limit = 1e-09 s") as info:
        tc.static_equilibrium(s, time_limit=1e-9)
    assert info.value.route == "newton"
    # with the default budget it hangs (the oracle of the limit's message: it is the limit)
    assert tc.static_equilibrium(s).stable


def test_the_budget_does_not_change_an_answer():
    s = _steel_tower_under_30g()
    r = tc.static_equilibrium(s)
    # the budget also counts iterations whose step the line search gave up (no step row)
    limited = tc.static_equilibrium(s, iteration_limit=2 * r.history.iterations,
                                    time_limit=600.0)
    assert (limited.q == r.q).all() and limited.history.iterations == r.history.iterations


def test_default_limits_scale_with_the_free_coordinates():
    cpu_small, its_small = problem.default_limits(100)
    cpu_large, its_large = problem.default_limits(4600)
    assert cpu_small < cpu_large and its_small < its_large
    # the 768-bar steel tower's path (about 1000 iterations, 13 s of CPU in the first issue-33
    # bench) fits several times in its default
    assert its_large >= 4 * 1000 and cpu_large >= 4 * 13


@pytest.mark.parametrize("kwargs, match", [
    ({"time_limit": 0.0}, r"static_equilibrium: time_limit must be .*positive"),
    ({"time_limit": -1.0}, r"static_equilibrium: time_limit must be .*positive"),
    ({"time_limit": "fast"}, r"static_equilibrium: time_limit must be a number of seconds"),
    ({"iteration_limit": 0}, r"static_equilibrium: iteration_limit must be .*>= 1"),
    ({"iteration_limit": 2.5}, r"static_equilibrium: iteration_limit must be an int"),
])
def test_bad_limits_name_the_argument(kwargs, match):
    s = tc.catalog.tbar("stedy")
    with pytest.raises((ValueError, TypeError), match=match):
        tc.static_equilibrium(s, **kwargs)
