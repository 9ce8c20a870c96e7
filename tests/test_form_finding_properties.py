"""Property-based tests of form-finding topologies (hypothesis; issue 21 item 6).

Generated topologies, valid and arbitrary:
- a prism (n = 3..7) with its nodes renumbered, its members shuffled and turned around and its
  densities scaled: form_find finds the same shape (distances between nodes, up to the scale
  its isotropic moments fix) in the standard frame, whatever the numbering;
- any small topology (random connected nets with random densities, groups and fixed nodes; a
  prism with one thing changed: a member dropped or added, a density zero or NaN, a node in no
  member, a float index, a triple, a bad group, a bad fixed node): form_find either
  returns a geometry that is a self-stress, non-degenerate and in its frame, or refuses with a
  ValueError / TypeError naming ``form_find`` -- never another exception, never a collapsed or
  NaN geometry.

The example counts are set explicitly and kept small (a few seconds); database-less settings
keep runs independent.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tenscontrol as tc
from depth import examples

QUICK = settings(max_examples=examples(40), deadline=None, database=None,
                 suppress_health_check=[HealthCheck.too_slow])


def prism_topology(n):
    bars = [(k, n + k) for k in range(n)]
    rings = [(k, (k + 1) % n) for k in range(n)] + [(n + k, n + (k + 1) % n) for k in range(n)]
    sides = [(k, n + (k - 1) % n) for k in range(n)]
    return bars, rings + sides


def distances(N):
    return np.linalg.norm(N[:, None] - N[None], axis=2)


def assert_standard_frame(N, bars):
    """The rules of form_find's frame hold for the free-standing nodes N."""
    tol = 1e-8 * np.sqrt(3)
    assert N.mean(axis=0) == pytest.approx(np.zeros(3), abs=1e-12)
    assert N.T @ N == pytest.approx(len(N) * np.eye(3), abs=1e-9)
    first = lambda v: next(k for k in range(len(N)) if abs(v[k]) > tol)  # noqa: E731
    assert N[first(N[:, 2]), 2] < 0                                  # first node off xy below
    k = first(np.hypot(N[:, 0], N[:, 1]))                            # first node off z: on +x
    assert abs(N[k, 1]) <= 1e-12 and N[k, 0] > 0
    assert N[first(N[:, 1]), 1] > 0                                  # first node off xz: y > 0
    u = N[bars[:, 1]] - N[bars[:, 0]]
    u /= np.linalg.norm(u, axis=1)[:, None]
    T = u.T @ u / len(u)
    lam = np.linalg.eigvalsh(T)
    if lam[2] - lam[0] > 1e-8:                                       # z is an axis of T
        assert T @ [0, 0, 1] == pytest.approx(T[2, 2] * np.array([0, 0, 1]), abs=1e-9)


@st.composite
def relabelled_prisms(draw):
    """(n, bars, strings, solve_for, permutation): a prism renumbered, reordered, re-oriented."""
    n = draw(st.integers(3, 7))
    bars, strings = prism_topology(n)
    perm = draw(st.permutations(range(2 * n)))
    flip = lambda p: draw(st.sampled_from([p, p[::-1]]))  # noqa: E731
    relabel = lambda pairs: [flip((perm[i], perm[j])) for i, j in pairs]  # noqa: E731
    b, rings, sides = relabel(bars), relabel(strings[:2 * n]), relabel(strings[2 * n:])
    order = draw(st.permutations(range(3 * n)))
    s = [(rings + sides)[k] for k in order]
    ring_members = [n + order.index(k) for k in range(2 * n)]  # rings, indexed into bars + s
    return n, b, s, [range(n), ring_members], np.array(perm)


@QUICK
@given(relabelled_prisms(), st.floats(0.01, 100.0))
def test_a_renumbered_prism_has_the_same_shape_in_the_standard_frame(prism, scale):
    n, bars, strings, groups, perm = prism
    found = tc.form_find(2 * n, bars, strings, solve_for=groups,
                         string_force_densities=scale, bar_force_densities=-scale)
    reference = tc.form_find(2 * n, *prism_topology(n), solve_for=[range(n), range(n, 3 * n)])
    # node perm[k] of the renumbered prism is node k of the reference
    assert distances(found.nodes)[np.ix_(perm, perm)] == pytest.approx(
        distances(reference.nodes), abs=1e-9)
    assert found.rank == 2 * n - 4 and found.self_stress_residual <= 1e-10
    assert_standard_frame(found.nodes, np.array(bars))


@st.composite
def random_nets(draw):
    """A random connected topology (a random tree plus chords) on 2-8 nodes, with random
    densities, groups and fixed nodes: (n_nodes, bars, strings, keyword arguments)."""
    n = draw(st.integers(2, 8))
    tree = [(k, draw(st.integers(0, k - 1))) for k in range(1, n)]
    chords = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(
        lambda p: p[0] != p[1]), max_size=2 * n))
    members = tree + chords
    nb = draw(st.integers(0, min(len(members), n // 2 + 1)))
    bars, strings = members[:nb], members[nb:]
    kwargs = {"string_force_densities": draw(st.lists(
        st.floats(0.1, 10), min_size=len(strings), max_size=len(strings)))}
    choice = draw(st.sampled_from(["default", "none", "groups", "fixed"]))
    if choice == "none":
        kwargs["solve_for"] = []
    elif choice == "groups":
        kwargs["solve_for"] = [range(nb), range(nb, len(members))] if nb else []
    elif choice == "fixed":
        nodes = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
        coordinate = st.floats(-2, 2, allow_nan=False)
        kwargs["fixed"] = {k: draw(st.tuples(coordinate, coordinate, coordinate))
                           for k in nodes}
    return n, bars, strings, kwargs


_MUTATIONS = ["none", "drop member", "add member", "density", "extra node", "float index",
              "triple", "group", "fixed node"]


@st.composite
def mutated_prisms(draw):
    """A valid prism input with one thing changed (or none): (n, bars, strings, kwargs)."""
    n = draw(st.integers(3, 6))
    bars, strings = prism_topology(n)
    kwargs = {"solve_for": [range(n), range(n, 3 * n)]}
    what = draw(st.sampled_from(_MUTATIONS))
    node = st.integers(0, 2 * n - 1)
    if what == "drop member":
        k = draw(st.integers(0, 3 * n - 1))
        strings = strings[:k] + strings[k + 1:]
        kwargs["solve_for"] = [range(n), range(n, 3 * n - 1)]
    elif what == "add member":
        strings = strings + [(draw(node), draw(node))]
    elif what == "density":
        kwargs["string_force_densities"] = draw(st.sampled_from([0.0, -1.0, np.nan, np.inf,
                                                                 [1.0, 2.0], "1"]))
    elif what == "extra node":
        return 2 * n + 1, bars, strings, kwargs
    elif what == "float index":
        bars = [(0, draw(st.floats(0, 2 * n - 1)))] + bars[1:]
    elif what == "triple":
        bars = [(0, n, draw(node))] + bars[1:]
    elif what == "group":
        kwargs["solve_for"] = draw(st.sampled_from([3, "bars", [0, 1], [[99]], [[]], [[0.5]],
                                                    [range(n), range(n)]]))
    elif what == "fixed node":
        kwargs = {"fixed": {draw(node): draw(st.sampled_from([(0, 0), (0, 0, np.nan),
                                                              (0, 0, 0), "xyz"]))}}
    return 2 * n, bars, strings, kwargs


@settings(max_examples=examples(150), deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(random_nets(), mutated_prisms()))
def test_any_topology_gives_a_valid_geometry_or_a_clear_error(topology):
    n, bars, strings, kwargs = topology
    try:
        found = tc.form_find(n, bars, strings, **kwargs)
    except (ValueError, TypeError) as error:
        message = str(error)
        assert message.startswith("form_find") and "\n" not in message
        return
    N = found.nodes
    assert N.shape == (n, 3) and np.isfinite(N).all()
    pairs = np.array(bars + strings).reshape(-1, 2)
    lengths = np.linalg.norm(N[pairs[:, 1]] - N[pairs[:, 0]], axis=1)
    assert lengths.min() > 0
    assert found.self_stress_residual <= 1e-8
    if kwargs.get("fixed"):
        for k, xyz in kwargs["fixed"].items():
            assert N[k].tolist() == list(xyz)
    else:
        assert np.linalg.matrix_rank(N - N.mean(axis=0), tol=1e-8 * np.abs(N).max()) == 3
        assert found.rank == n - 4
        assert_standard_frame(N, np.array(bars).reshape(-1, 2) if bars else pairs)
