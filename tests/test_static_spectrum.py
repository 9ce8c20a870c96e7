"""The sparse stability test and mechanism check of static_equilibrium (issue 20): the same
answers as the dense null-space path, which small structures take by default; here the
threshold statics.spectrum.SPARSE_MIN_FREE is lowered to 0 to force the sparse path.

Oracle: the dense path (an orthonormal null-space basis Z and the eigenvalues of Z^T K Z),
itself checked against closed forms in test_static_stability.py (the pendulums' W / L).
"""

import warnings

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse

import tenscontrol as tc
from tenscontrol.statics import solve, spectrum
from test_static_stability import pendulum

G = (0.0, 0.0, -9.806)


def _prestressed(stages):
    return tc.equilibrium(tc.catalog.prism_tower(stages), gamma_min=20.0).structure


def _inverted_pendulums():
    """Four upright bars of different lengths pinned at their feet, point masses on top, no
    strings: unstable, its smallest stiffness -W / L of the shortest (12 free coordinates:
    Lanczos, not the tiny problems' dense operator)."""
    lengths = [1.0, 1.3, 1.7, 2.2]
    feet = [[3.0 * k, 0.0, 0.0] for k in range(4)]
    tops = [[3.0 * k, 0.0, L] for k, L in enumerate(lengths)]
    return tc.Structure(feet + tops,
                        bars=[{"nodes": (k, 4 + k), "density": 500.0, "radius": 0.01}
                              for k in range(4)],
                        fixed={k: "xyz" for k in range(4)},
                        point_masses=[{"node": 4 + k, "mass": 2.0} for k in range(4)],
                        gravity=G)


CASES = {
    "pendulum hanging": lambda: (pendulum(30.0), "rigid"),
    "pendulum planar": lambda: (pendulum(89.0, planar=True), "rigid"),
    "pendulum upright": lambda: (pendulum(150.0), "rigid"),
    "inverted pendulums": lambda: (_inverted_pendulums(), "rigid"),
    "tower 3 under gravity": lambda: (_prestressed(3).with_gravity(G), "rigid"),
    "tower 5 under gravity": lambda: (_prestressed(5).with_gravity(G), "rigid"),
    "tower 3 compressible": lambda: (_prestressed(3).with_gravity(G), "compressible"),
    "tower 3 free-floating": lambda: (tc.Structure(_prestressed(3).nodes,
                                                   bars=_prestressed(3).bars,
                                                   strings=_prestressed(3).strings), "rigid"),
}


def _both(monkeypatch, structure, bars):
    """(dense, sparse) results of static_equilibrium."""
    out = []
    for threshold in (10 ** 9, 0):
        monkeypatch.setattr(spectrum, "SPARSE_MIN_FREE", threshold)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the unstable cases' warning
            out.append(tc.static_equilibrium(structure, bars=bars))
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_sparse_stability_test_matches_the_dense_one(monkeypatch, case):
    structure, bars = CASES[case]()
    dense, sparse = _both(monkeypatch, structure, bars)
    assert sparse.dense_eigensolves == 0  # the sparse path answered
    assert sparse.q == pytest.approx(dense.q, abs=0.0)
    assert sparse.stable == dense.stable
    # measured 1e-16 .. 3e-11 (compressible bars: eps |K| / lambda of the dense path itself)
    assert sparse.min_stiffness == pytest.approx(dense.min_stiffness, rel=1e-9)


def test_inverted_pendulums_give_the_shortest_ones_swing(monkeypatch):
    s = _inverted_pendulums()
    _, sparse = _both(monkeypatch, s, "rigid")
    weight = 9.806 * (2.0 + 0.5 * s.bar_masses[0])  # W / L as in test_static_stability.py
    assert not sparse.stable
    assert sparse.min_stiffness == pytest.approx(-weight / s.bar_lengths[0], rel=1e-12)


def _tangent_and_constraints(structure, bars="rigid"):
    p = solve._problem(structure, None, bars)
    q = structure.nodes.reshape(-1)
    _, _, gamma, psi = solve._forces(p, q, np.zeros(p.free.size))
    K, X = solve._sparse_tangent(p, q, gamma, psi)
    return K, solve._stability_constraints(p, q, K, X, 0.0)


def test_inertia_counts_the_eigenvalues_below_the_shift():
    K, C = _tangent_and_constraints(_prestressed(3).with_gravity(G))
    Z = scipy.linalg.null_space(C.toarray().T)
    w = np.linalg.eigvalsh(Z.T @ K.toarray() @ Z)
    # shifts half-way between consecutive eigenvalues (and below and above them all)
    shifts = np.concatenate([[w[0] - 1.0], 0.5 * (w[1:] + w[:-1])[::7], [w[-1] + 1.0]])
    counts = [spectrum._count_below(K, C, sigma) for sigma in shifts]
    assert counts == [int(np.sum(w < sigma)) for sigma in shifts]


def test_negative_count_is_the_number_of_negative_reduced_eigenvalues():
    # the path following's stability check (unshifted): K - sigma I for sigma half-way
    # between consecutive eigenvalues of the reduced K has exactly that many below zero
    K, C = _tangent_and_constraints(_prestressed(3).with_gravity(G))
    Z = scipy.linalg.null_space(C.toarray().T)
    w = np.linalg.eigvalsh(Z.T @ K.toarray() @ Z)
    assert w[0] > 0 and spectrum.admissible_negative_count(K, C) == 0
    for j in (1, 3, 5):  # not 2: w[1] = w[2] (a double eigenvalue), the shift on it
        shifted = (K - 0.5 * (w[j - 1] + w[j]) * scipy.sparse.identity(K.shape[0])).tocsc()
        assert spectrum.admissible_negative_count(shifted, C) == j


def test_sparse_tangent_is_the_dense_one():
    s = _prestressed(3).with_gravity(G)
    p = solve._problem(s, None, "rigid")
    q = s.nodes.reshape(-1)
    _, _, gamma, psi = solve._forces(p, q, np.zeros(p.free.size))
    K, _ = solve._sparse_tangent(p, q, gamma, psi)
    dense = solve.static_tangent(s, q, psi)[np.ix_(p.free, p.free)]
    assert K.toarray() == pytest.approx(dense, abs=1e-13 * np.abs(dense).max())


def test_untrusted_inertia_takes_the_dense_path_and_counts_it(monkeypatch):
    s = _prestressed(3).with_gravity(G)
    dense, _ = _both(monkeypatch, s, "rigid")
    monkeypatch.setattr(spectrum, "_PIVOT", 1.0)  # no pivot's sign is trusted
    r = tc.static_equilibrium(s)
    assert r.dense_eigensolves == 1 and r.fallbacks == 1
    assert r.min_stiffness == dense.min_stiffness


def _dangling_bar():
    """A prestressed tower with a bar hinged at a top node and pushed sideways: a mechanism
    whose zero-stiffness swing the load drives (and a second one it does not)."""
    s = _prestressed(3)
    top = s.n_nodes - 1
    nodes = np.vstack([s.nodes, s.nodes[top] + [1.0, 0.0, 0.0]])
    bars = list(s.bars) + [{"nodes": (top, s.n_nodes), "material": "aluminium",
                            "radius": 0.01}]
    m = tc.Structure(nodes, bars=bars, strings=s.strings, fixed={k: "xyz" for k in range(3)})
    f = np.zeros((m.n_nodes, 3))
    f[-1] = [0.0, 1.0, 0.3]
    return m, f


@pytest.mark.slow
def test_sparse_mechanism_check_names_the_same_motion(monkeypatch):
    m, f = _dangling_bar()
    errors = []
    for threshold in (10 ** 9, 0):
        monkeypatch.setattr(spectrum, "SPARSE_MIN_FREE", threshold)
        with pytest.raises(tc.MechanismError) as error:
            tc.static_equilibrium(m, loads=f)
        errors.append(error.value)
    dense, sparse = errors
    assert sparse.nodes == dense.nodes == (m.n_nodes - 1,)
    assert sparse.motion == pytest.approx(dense.motion, abs=1e-8)
    assert str(sparse) == str(dense)


def test_sparse_mechanism_check_finds_none_on_a_prestressed_tower(monkeypatch):
    monkeypatch.setattr(spectrum, "SPARSE_MIN_FREE", 0)
    s = _prestressed(3).with_gravity(G)
    p = solve._problem(s, None, "rigid")
    q = s.nodes.reshape(-1)
    r = solve._forces(p, q, np.zeros(p.free.size))[0]
    assert solve._mechanism(p, q, r) is None and p.counts["dense_eigen"] == 0


def test_large_structures_take_the_sparse_path_by_default(monkeypatch):
    s = _prestressed(34)  # 102 bars, 306 free coordinates: just above SPARSE_MIN_FREE
    assert len(s.free_coordinates) >= spectrum.SPARSE_MIN_FREE
    calls = []
    inner = spectrum.smallest_admissible_eigenvalue
    monkeypatch.setattr(spectrum, "smallest_admissible_eigenvalue",
                        lambda K, C: calls.append(inner(K, C)) or calls[-1])
    r = tc.static_equilibrium(s)
    assert len(calls) == 1 and calls[0] == r.min_stiffness and r.dense_eigensolves == 0
    monkeypatch.setattr(spectrum, "SPARSE_MIN_FREE", 10 ** 9)
    # measured 6e-11 (eps max|K| / lambda = 5e-10: the eigenvalue is no better determined)
    assert r.min_stiffness == pytest.approx(tc.static_equilibrium(s).min_stiffness, rel=1e-8)
