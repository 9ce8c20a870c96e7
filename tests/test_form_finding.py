"""Form-finding (issue 12 item 3): the force density method against closed forms.

Closed forms (docs/theory.md, "Static equilibrium under loads and form-finding", derived here): a
regular n-prism is prestressable only when a bar spans pi/2 + pi/n around the axis (Tibert &
Pellegrino 2003, "Review of form-finding methods for tensegrity structures", section on the prism;
the catalog's prestressable_twist); its force densities are then bar/side = -1 and ring/side = 1 /
(2 sin(pi/n)). The regular expanded octahedron (6-bar icosahedron) with nodes (0, +-a, +-2a) and
cyclic permutations has bars of length L = 4a and strings of length sqrt(a^2 + a^2 + (2a)^2) = a
sqrt(6) = L sqrt(6)/4; equilibrium of node (0, a, -2a) along its bar gives bar/string force density
= -3/2.
"""

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.model.form_finding import equilibrium_matrix, force_density_matrix


def prism_topology(n):
    bars = [(k, n + k) for k in range(n)]
    rings = [(k, (k + 1) % n) for k in range(n)] + [(n + k, n + (k + 1) % n) for k in range(n)]
    sides = [(k, n + (k - 1) % n) for k in range(n)]
    return bars, rings + sides


def bar_span(N, n):
    """Angle (in [0, pi]) that bar 0 spans around the prism's axis (centroids of the rings)."""
    axis = N[n:].mean(axis=0) - N[:n].mean(axis=0)
    axis /= np.linalg.norm(axis)
    c = N[:n].mean(axis=0)
    e1 = N[0] - c - axis * ((N[0] - c) @ axis)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(axis, e1)
    v = N[n] - c
    angle = abs(np.arctan2(v @ e2, v @ e1))
    return angle


@pytest.mark.parametrize("n", [3, 4, 5])
def test_prism_twist_and_force_densities(n):
    bars, strings = prism_topology(n)
    found = tc.form_find(2 * n, bars, strings, solve_for=[range(n), range(n, 3 * n)])
    assert found.rank == 2 * n - 4 and found.self_stress_residual <= 1e-12
    assert bar_span(found.nodes, n) == pytest.approx(tc.catalog.prestressable_twist(n),
                                                     abs=1e-9)
    w = found.densities
    assert w[:n] == pytest.approx(-w[3 * n], rel=1e-9)
    assert w[n:3 * n] == pytest.approx(w[3 * n] / (2 * np.sin(np.pi / n)), rel=1e-9)


def test_icosahedron_self_stress_ratios_and_lengths():
    found = tc.form_find(12, tc.catalog.ICOSAHEDRON_BARS, tc.catalog.ICOSAHEDRON_STRINGS)
    assert found.rank == 8
    assert found.densities[:6] == pytest.approx(-1.5, rel=1e-12)
    s = tc.catalog.icosahedron()
    assert s.bar_lengths == pytest.approx(1.0, rel=1e-12)
    assert s.string_lengths == pytest.approx(np.sqrt(6) / 4, rel=1e-12)
    # the equilibrium matrix holds the self-stress; the structure's laws give it at 20 N/m
    A = equilibrium_matrix(s.nodes, np.vstack([s.bar_nodes, s.string_nodes]))
    w = np.concatenate([np.full(6, -30.0), np.full(24, 20.0)])
    assert np.abs(A @ w).max() <= 1e-12 * 20
    assert tc.force_densities(s) == pytest.approx(20.0, rel=1e-12)
    # parallel bars L/2 apart
    mid = (s.nodes[0::2] + s.nodes[1::2]) / 2
    assert np.linalg.norm(mid[0] - mid[1]) == pytest.approx(0.5, rel=1e-12)


def test_icosahedron_on_a_face():
    s = tc.catalog.icosahedron(on_face=True)
    assert s.name == "icosahedron-on-face" and list(s.fixed_coordinates) == [0, 1, 2, 18, 19, 20,
                                                                           33, 34, 35]
    assert s.nodes[[0, 6, 11], 2] == pytest.approx(0.0, abs=1e-15)
    assert s.nodes[:, 2].min() >= -1e-15 and s.gravity[2] == -9.806
    with pytest.raises(tc.PrestressError, match="configuration='free'"):
        tc.equilibrium(s, gamma_min=20.0)  # the report


def test_fixed_nodes_give_a_linear_solve():
    """A cable net: one free node held by four strings of equal force density sits at the mean."""
    fixed = {0: (0, 0, 0), 1: (2, 0, 0), 2: (2, 2, 1), 3: (0, 2, 1)}
    found = tc.form_find(5, [], [(4, k) for k in range(4)], fixed=fixed)
    assert found.nodes[4] == pytest.approx([1.0, 1.0, 0.5], abs=1e-14)
    D = force_density_matrix(5, [(4, k) for k in range(4)], np.ones(4))
    assert D[4, 4] == 4.0


def test_form_find_errors():
    bars, strings = prism_topology(3)
    with pytest.raises(ValueError, match="no rank deficiency 4"):
        tc.form_find(6, bars, strings, solve_for=[])
    with pytest.raises(ValueError, match="bar 0 joins nodes"):
        tc.form_find(6, [(0, 9)], strings)


_B3, _S3 = prism_topology(3)
_G3 = [range(3), range(3, 9)]


@pytest.mark.parametrize("kwargs, error, match", [
    # node indices: integers, pairs, distinct, in range (issue 21: 0.7 was truncated to 0)
    (dict(bars=[(0, 3), (1, 4), (2, 5.7)]), TypeError, r"form_find: bars must be node index "
     r"integers, got 5.7"),
    (dict(bars=[(0, 3), (True, 4), (2, 5)]), TypeError, "form_find: bars must be node index"),
    (dict(bars=[(0, 3, 1), (4, 2, 5)]), ValueError, r"form_find: bars: bar 0 is \(0, 3, 1\); "
     r"each bar is a pair"),                                  # triples were re-paired
    (dict(strings=[(0, 1), 2]), ValueError, r"form_find: strings: string 1 is 2; each string"),
    (dict(bars="0312"), TypeError, "form_find: bars must be a sequence of node pairs"),
    (dict(bars=[(0, 9), (1, 4), (2, 5)]), ValueError, r"form_find: bar 0 joins nodes \[0, 9\]"),
    (dict(strings=[(1, 1)] + _S3[1:]), ValueError, r"string 0 joins nodes \[1, 1\]: node "
     "indices must be distinct"),
    # no members, nodes in no member, disconnected parts
    (dict(bars=[], strings=[]), ValueError, "form_find: bars and strings are both empty"),
    (dict(n_nodes=7), ValueError, r"form_find: node 6 is in no member"),
    (dict(n_nodes=12, bars=_B3 + [(i + 6, j + 6) for i, j in _B3],
          strings=_S3 + [(i + 6, j + 6) for i, j in _S3], solve_for=None), ValueError,
     r"the members form 2 separate parts \(node 0 in one, node 6 in another\)"),
    # densities: finite, nonzero, one or one per member
    (dict(string_force_densities=0.0), ValueError, r"string_force_densities: string 0 "
     r"\(nodes 0->1\) has force density 0"),
    (dict(bar_force_densities=[-1, 0, -1]), ValueError, r"bar_force_densities: bar 1 "
     r"\(nodes 1->4\) has force density 0"),
    (dict(bar_force_densities=[-1, np.nan, -1]), ValueError, "bar_force_densities must be a "
     "finite number or 3 finite numbers"),
    (dict(string_force_densities=[1, 2]), ValueError, "string_force_densities must be a finite "
     r"number or 9 finite numbers \(one per string\)"),
    # solve_for: a list of groups of existing members
    (dict(solve_for=3), TypeError, "form_find: solve_for must be a list of member groups"),
    (dict(solve_for="bars"), TypeError, "form_find: solve_for must be a list of member groups"),
    (dict(solve_for=[0, 1, 2]), TypeError, r"form_find: solve_for\[0\] must be a sequence of "
     "member indices"),
    (dict(solve_for=[range(3), [3, 99]]), ValueError, r"solve_for\[1\]: member index 99 out of "
     r"range; there are 12"),
    (dict(solve_for=[range(3), [2.5]]), TypeError, r"solve_for\[1\] must be member index "
     "integers"),
    (dict(solve_for=[range(3), []]), ValueError, r"solve_for\[1\] is empty"),
    (dict(solve_for=[range(3), range(2, 9)]), ValueError, "member 2 is in groups 0 and 1"),
    # fixed: {node: (x, y, z)}
    (dict(fixed={0: (0, 0)}, solve_for=None), ValueError, r"form_find: fixed\[0\] must have "
     r"shape \(3,\)"),
    (dict(fixed={0.0: (0, 0, 0)}, solve_for=None), TypeError, "form_find: fixed: node must be "
     "an integer"),
    (dict(fixed={7: (0, 0, 0)}, solve_for=None), ValueError, "form_find: fixed: node must be an "
     "integer >= 0 and <= 5"),
    (dict(fixed=[(0, 0, 0)], solve_for=None), TypeError, "form_find: fixed must be a dict"),
    (dict(fixed={0: (0, 0, np.inf)}, solve_for=None), ValueError, r"fixed\[0\] must be finite"),
    (dict(fixed={0: (0, 0, 0)}), ValueError, "solve_for adjusts a free-standing structure"),
    # n_nodes
    (dict(n_nodes=-6), ValueError, "form_find: n_nodes must be an integer >= 2"),
    (dict(n_nodes=6.0), TypeError, "form_find: n_nodes must be an integer >= 2"),
])
def test_form_find_refuses_what_it_cannot_form_find(kwargs, error, match):
    args = dict(n_nodes=6, bars=_B3, strings=_S3, solve_for=_G3) | kwargs
    with pytest.raises(error, match=match):
        tc.form_find(args.pop("n_nodes"), args.pop("bars"), args.pop("strings"), **args)


def test_form_find_refuses_a_family_of_geometries_and_a_degenerate_one():
    # two 3-prisms stacked on a shared ring: a family of self-stressed shapes, not one (the
    # geometry returned was the basis LAPACK happened to pick in a null space of dimension 5+)
    bars = [(s * 3 + k, (s + 1) * 3 + k) for s in range(2) for k in range(3)]
    rings = [(L * 3 + k, L * 3 + (k + 1) % 3) for L in range(3) for k in range(3)]
    sides = [(s * 3 + k, (s + 1) * 3 + (k - 1) % 3) for s in range(2) for k in range(3)]
    with pytest.raises(ValueError, match="rank deficiency above 4"):
        tc.form_find(9, bars, rings + sides, solve_for=[range(6), range(6, 15)])
    # two free nodes tied to the same fixed ones the same way coincide
    fixed = {0: (0, 0, 0), 1: (1, 0, 0), 2: (0, 1, 0)}
    strings = [(3, 0), (3, 1), (3, 2), (4, 0), (4, 1), (4, 2), (3, 4)]
    with pytest.raises(ValueError, match=r"degenerated: string 6 \(nodes 3->4\) has length 0"):
        tc.form_find(5, [], strings, fixed=fixed)
    # a part of the members that no fixed node holds
    with pytest.raises(ValueError, match="node 3 is in a part of the members with no fixed node"):
        tc.form_find(5, [], [(0, 1), (0, 2), (3, 4)], fixed={0: (0, 0, 0), 1: (1, 0, 0)})


def test_the_sparse_path_gives_the_dense_results(monkeypatch):
    """Above DENSE_NODES the eigenproblems are sparse (shift-invert Lanczos): the same nodes,
    densities and rank as the dense path on a 5-prism and a fixed cable net."""
    from tenscontrol.model import force_density

    bars, strings = prism_topology(5)
    net = [(8, k) for k in range(4)] + [(4 + k, k) for k in range(4)] + [(4 + k, 8)
                                                                         for k in range(4)]
    fixed = {k: (np.cos(k * np.pi / 2), np.sin(k * np.pi / 2), k % 2) for k in range(4)}

    def both():
        return (tc.form_find(10, bars, strings, solve_for=[range(5), range(5, 15)]),
                tc.form_find(9, [], net, fixed=fixed))

    dense = both()
    monkeypatch.setattr(force_density, "DENSE_NODES", 4)
    for d, s in zip(dense, both()):
        assert s.nodes == pytest.approx(d.nodes, abs=1e-12)
        assert s.densities == pytest.approx(d.densities, rel=1e-10)
        assert s.rank == d.rank and s.self_stress_residual <= 1e-12
