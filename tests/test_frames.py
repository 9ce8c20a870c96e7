"""Frames fixed by rules (issue 20 item 3): form_find's standard frame, Structure.with_base and
Structure.with_scale.

The frame must not depend on the basis LAPACK returns for the null space of the force density
matrix: rotating or reflecting a geometry before the rule is applied must give the same nodes.
"""

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.model.frames import principal_axis, standard_frame


def prism_topology(n):
    bars = [(k, n + k) for k in range(n)]
    rings = [(k, (k + 1) % n) for k in range(n)] + [(n + k, n + (k + 1) % n) for k in range(n)]
    sides = [(k, n + (k - 1) % n) for k in range(n)]
    return bars, rings + sides


def orthogonal(seed):
    """A random 3x3 orthogonal matrix (a reflection for odd seeds)."""
    Q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(3, 3)))
    return Q * (1 if np.linalg.det(Q) > 0 else -1) * (-1 if seed % 2 else 1)


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_a_form_found_prism_stands_on_its_first_ring(n):
    bars, strings = prism_topology(n)
    N = tc.form_find(2 * n, bars, strings, solve_for=[range(n), range(n, 3 * n)]).nodes
    assert N.mean(axis=0) == pytest.approx(np.zeros(3), abs=1e-14)
    assert N.T @ N == pytest.approx(2 * n * np.eye(3), abs=1e-12)   # isotropic second moments
    # the axis along z: each ring in a plane z = const, ring 0..n-1 below
    assert N[:n, 2] == pytest.approx(np.full(n, N[0, 2]), abs=1e-13) and N[0, 2] < 0
    assert N[n:, 2] == pytest.approx(np.full(n, -N[0, 2]), abs=1e-13)
    assert abs(N[0, 1]) <= 1e-14 and N[0, 0] > 0                     # node 0 on +x
    assert N[1, 1] > 0                                               # ring 0 turns from x to y
    # the regular prism: both rings centred on the axis, radius sqrt(2) (isotropic moments)
    radius = np.hypot(N[:, 0], N[:, 1])
    assert radius == pytest.approx(np.full(2 * n, radius[0]), rel=1e-13)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shape", ["prism-3", "prism-4", "icosahedron"])
def test_the_frame_does_not_depend_on_the_basis_it_is_given(shape, seed):
    """Any rotation or reflection of the null-space basis (what LAPACK may return) gives the
    same nodes to rounding."""
    if shape == "icosahedron":
        bars, strings = tc.catalog.ICOSAHEDRON_BARS, tc.catalog.ICOSAHEDRON_STRINGS
        found = tc.form_find(12, bars, strings)
    else:
        n = int(shape[-1])
        bars, strings = prism_topology(n)
        found = tc.form_find(2 * n, bars, strings, solve_for=[range(n), range(n, 3 * n)])
    N = found.nodes
    turned = N @ orthogonal(seed).T + np.random.default_rng(seed).normal(size=3)
    assert standard_frame(turned, bars) == pytest.approx(N, abs=1e-13)


def test_the_icosahedron_has_no_principal_axis_and_node_0_goes_below_the_centre():
    ico = tc.form_find(12, tc.catalog.ICOSAHEDRON_BARS, tc.catalog.ICOSAHEDRON_STRINGS).nodes
    assert principal_axis(ico, np.array(tc.catalog.ICOSAHEDRON_BARS)) is None
    assert ico[0, :2] == pytest.approx([0, 0], abs=1e-14) and ico[0, 2] < 0
    first_off_z = next(k for k in range(12) if np.hypot(*ico[k, :2]) > 1e-6)
    assert abs(ico[first_off_z, 1]) <= 1e-14 and ico[first_off_z, 0] > 0


def test_fixed_nodes_keep_their_coordinates_exactly():
    fixed = {0: (0.1, -0.2, 0.3), 1: (2.0, 0.0, 0.0), 2: (2.0, 2.0, 1.0), 3: (0.0, 2.0, 1.5)}
    found = tc.form_find(5, [], [(4, k) for k in range(4)], fixed=fixed)
    for k, xyz in fixed.items():
        assert found.nodes[k].tolist() == list(xyz)
    assert found.nodes[4] == pytest.approx(np.mean(list(fixed.values()), axis=0), abs=1e-14)


def test_with_base_stands_the_icosahedron_on_a_face_like_the_catalog():
    ico = tc.catalog.icosahedron()
    face = [0, 6, 11]
    standing = ico.with_base(face)
    N = standing.nodes
    assert N[face, 2].tolist() == [0.0, 0.0, 0.0] and N[:, 2].min() >= 0.0
    assert N[face].mean(axis=0)[:2] == pytest.approx([0, 0], abs=1e-15)
    assert N[0, 1] == pytest.approx(0.0, abs=1e-15) and N[0, 0] > 0   # first base node on +x
    # a rigid motion: every distance kept, no reflection (the signed volume of 4 nodes kept)
    dist = lambda X: np.linalg.norm(X[:, None] - X[None], axis=2)  # noqa: E731
    assert dist(N) == pytest.approx(dist(ico.nodes), abs=1e-14)
    vol = lambda X: np.linalg.det(X[[1, 2, 3]] - X[0])  # noqa: E731
    assert vol(N) == pytest.approx(vol(ico.nodes), rel=1e-12)
    # the catalog's own face (catalog.icosahedron(on_face=True)) has the same heights
    catalog = tc.catalog.icosahedron(on_face=True).nodes
    assert np.sort(N[:, 2]) == pytest.approx(np.sort(catalog[:, 2]), abs=1e-14)
    assert standing.string_rest_lengths == pytest.approx(ico.string_rest_lengths, rel=1e-14)
    assert standing.fixed_coordinates.size == 0 and standing.gravity.tolist() == [0, 0, 0]


def test_with_base_of_a_prism_ring_and_its_errors():
    prism = tc.catalog.prism(4)
    top = prism.with_base([4, 5, 6, 7])                # upside down on the top ring
    assert top.nodes[4:, 2] == pytest.approx(np.zeros(4), abs=1e-15)
    assert top.nodes[:4, 2] == pytest.approx(np.full(4, prism.nodes[4, 2] - prism.nodes[0, 2]),
                                             rel=1e-12)
    with pytest.raises(ValueError, match=r"with_base: node [13] lies .* m below the plane of "
                                         r"nodes \[0, 2, 4\], on the other side"):
        prism.with_base([0, 2, 4])                     # a plane through the middle
    with pytest.raises(ValueError, match=r"with_base: nodes \[0, 1, 2, 4\] are not in one plane"):
        prism.with_base([0, 1, 2, 4])
    with pytest.raises(ValueError, match="at least three distinct nodes"):
        prism.with_base([0, 1, 1])
    with pytest.raises(ValueError, match=r"with_base: nodes: node index 9 out of range"):
        prism.with_base([0, 1, 9])
    with pytest.raises(TypeError, match=r"with_base: nodes must be node index integers"):
        prism.with_base([0, 1, 2.0])
    line = tc.Structure([[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 0, 1]], [],
                        [tc.String((k, 3), material="nylon", radius=1e-3) for k in range(3)],
                        fixed={k: "xyz" for k in range(4)})
    with pytest.raises(ValueError, match=r"with_base: nodes \[0, 1, 2\] are on one line"):
        line.with_base([0, 1, 2])


def test_with_scale_multiplies_every_length_and_keeps_forces():
    prism = tc.catalog.prism(3, rest_fraction=0.9)
    fixed_length = prism.with_strings([0], rest_length=0.2).with_bars([1], rest_length=0.5)
    big = fixed_length.with_scale(2.5)
    assert big.nodes == pytest.approx(2.5 * fixed_length.nodes, rel=1e-15)
    assert big.string_rest_lengths == pytest.approx(2.5 * fixed_length.string_rest_lengths,
                                                    rel=1e-14)
    assert big.bar_rest_lengths == pytest.approx(2.5 * fixed_length.bar_rest_lengths, rel=1e-14)
    assert big.strings[1].rest_fraction == 0.9 and big.strings[0].rest_length == 0.5
    # same strains, same forces: force densities divide by the factor
    assert tc.force_densities(big) == pytest.approx(tc.force_densities(fixed_length) / 2.5,
                                                    rel=1e-12)
    for bad, error in ((0.0, ValueError), (-1, ValueError), (float("nan"), ValueError),
                       ("2", TypeError), (True, TypeError)):
        with pytest.raises(error, match="with_scale: factor must be"):
            prism.with_scale(bad)
