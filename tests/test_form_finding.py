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
