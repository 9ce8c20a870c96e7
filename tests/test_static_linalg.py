"""The static solver's sparse linear algebra against the dense oracles it replaced."""

import numpy as np

import tenscontrol as tc
from tenscontrol.mechanics.geometry import member_columns
from tenscontrol.statics.linalg import BarGram, bar_columns, kkt_solve


def _tower():
    s = tc.catalog.prism_tower(4)
    free = np.asarray(s.free_coordinates)
    index = np.full(3 * s.n_nodes, -1)
    index[free] = np.arange(free.size)
    q = s.nodes.reshape(-1) + 0.01 * np.random.default_rng(1).standard_normal(3 * s.n_nodes)
    return s, free, index, q


def test_bar_columns_and_gram_match_dense_least_squares():
    s, free, index, q = _tower()
    X = bar_columns(s.bar_nodes, q, index)
    Xd = member_columns(s.bar_nodes, q)[free]
    np.testing.assert_array_equal(X.toarray(), Xd)
    g = BarGram(X)
    assert g.factor is not None
    f = np.random.default_rng(2).standard_normal(free.size)
    np.testing.assert_allclose(g.least_squares(f), np.linalg.lstsq(Xd, f, rcond=None)[0],
                               rtol=0, atol=1e-12)
    phi = np.random.default_rng(3).standard_normal(s.n_bars)
    dq = g.min_norm_step(phi)
    np.testing.assert_allclose(Xd.T @ dq, phi, atol=1e-12)
    np.testing.assert_allclose(dq, np.linalg.pinv(Xd.T) @ phi, atol=1e-12)


def test_dependent_bars_fall_back_to_least_squares():
    s, free, index, q = _tower()
    pairs = np.vstack([s.bar_nodes, s.bar_nodes[:1]])  # bar 0 twice: dependent columns
    Xd = member_columns(pairs, q)[free]
    g = BarGram(bar_columns(pairs, q, index))
    assert g.factor is None
    f = np.random.default_rng(4).standard_normal(free.size)
    np.testing.assert_allclose(g.least_squares(f), np.linalg.lstsq(Xd, f, rcond=None)[0],
                               atol=1e-12)


def test_kkt_solve_matches_the_dense_solve():
    s, free, index, q = _tower()
    K = tc.tangent_stiffness(s, q, at_rest="taut")[np.ix_(free, free)]
    X = bar_columns(s.bar_nodes, q, index)
    r = np.random.default_rng(5).standard_normal(free.size)
    m = s.n_bars
    A = np.block([[K, X.toarray()], [X.toarray().T, np.zeros((m, m))]])
    x = np.linalg.solve(A, np.concatenate([r, np.zeros(m)]))[:free.size]
    np.testing.assert_allclose(kkt_solve(K, X, r), x, rtol=0, atol=1e-10 * np.abs(x).max())
