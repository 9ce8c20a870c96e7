"""The static solver's sparse linear algebra against the dense oracles it replaced."""

import numpy as np
import scipy.sparse

import tenscontrol as tc
from tenscontrol.statics import linalg
from tenscontrol.mechanics.geometry import member_columns
from tenscontrol.statics.linalg import BarGram, bar_columns, kkt_solve
from tenscontrol.statics.stiffness import rigid_fields


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


def _ill_conditioned_columns(cond):
    """A sparse (12, 4) X with singular values 1 .. 1/cond, every column nonzero."""
    rng = np.random.default_rng(6)
    U = np.linalg.qr(rng.standard_normal((12, 4)))[0]
    V = np.linalg.qr(rng.standard_normal((4, 4)))[0]
    return scipy.sparse.csc_matrix(U @ np.diag(np.logspace(0, -np.log10(cond), 4)) @ V.T)


def test_ill_conditioned_min_norm_step_solves_without_normal_equations():
    # cond(X) = 1e6: the Cholesky pivot test (sin^2 ~ 1e-12 < 1e-8) sends BarGram to its dense
    # path; the normal equations X^T X (cond 1e12) lose about 12 digits there, the SVD 6
    X = _ill_conditioned_columns(1e6)
    g = BarGram(X)
    assert g.dense is not None
    Xd = X.toarray()
    phi = np.random.default_rng(7).standard_normal(4)
    dq = g.min_norm_step(phi)
    normal = Xd @ np.linalg.lstsq(Xd.T @ Xd, phi, rcond=None)[0]   # what 1.0 computed
    residual = np.linalg.norm(Xd.T @ dq - phi) / np.linalg.norm(phi)
    residual_normal = np.linalg.norm(Xd.T @ normal - phi) / np.linalg.norm(phi)
    assert residual < 4e-11              # measured 4.6e-12 (eps cond(X) ~ 2e-10)
    assert residual_normal > 5e-6        # measured 5.0e-5: the normal equations' cond(X)^2
    assert residual_normal > 1e5 * residual


def test_static_equilibrium_counts_dense_bar_solves(monkeypatch):
    s = tc.catalog.tbar("stedy")
    sparse = tc.static_equilibrium(s, loads=_side_load(s))
    assert (sparse.dense_bar_solves, sparse.dense_kkt_solves) == (0, 0)
    monkeypatch.setattr(linalg, "_PIVOT_TOL", 2.0)     # no Cholesky factor passes: all dense
    dense = tc.static_equilibrium(s, loads=_side_load(s))
    assert dense.linear_algebra == "sparse" and dense.dense_bar_solves > 0
    assert f"dense_bar={dense.dense_bar_solves}" in repr(dense)
    assert "dense_bar=" not in repr(sparse) and "dense bar solves" in dense.summary()
    assert dense.fallback_counts["dense_bar"] == dense.dense_bar_solves
    np.testing.assert_allclose(dense.q, sparse.q, atol=1e-9)


def test_static_equilibrium_counts_dense_kkt_solves(monkeypatch):
    s = tc.catalog.tbar("stedy")
    sparse = tc.static_equilibrium(s, loads=_side_load(s))

    def singular(A, *args, **kwargs):
        raise RuntimeError("Factor is exactly singular")
    monkeypatch.setattr(linalg.scipy.sparse.linalg, "splu", singular)
    dense = tc.static_equilibrium(s, loads=_side_load(s))
    assert dense.dense_kkt_solves >= dense.history.iterations > 0   # every Newton step
    assert sparse.dense_kkt_solves == 0
    np.testing.assert_allclose(dense.q, sparse.q, atol=1e-9)


def _side_load(s):
    f = np.zeros((s.n_nodes, 3))
    f[:, 0] = 0.1
    return f


def test_pattern_sums_duplicates_and_refills_in_place():
    P = linalg.Pattern(np.array([0, 1, 0, 2]), np.array([0, 1, 0, 0]), (3, 2))
    A = P.fill(np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(A.toarray(), [[4, 0], [0, 2], [4, 0]])
    B = P.fill(np.array([-1.0, 0.5, 0.0, 1.0]))
    assert B is A                                      # the same matrix, values replaced
    np.testing.assert_array_equal(B.toarray(), [[-1, 0], [0, 0.5], [1, 0]])


def _matrices(s, free, index, rigid=True):
    gauge = rigid_fields(s, bars="rigid" if rigid else "compressible")[free]
    return linalg.MemberMatrices(s.string_nodes, s.bar_nodes, index, gauge, rigid)


def test_member_matrices_match_the_dense_tangent_forces_and_gram():
    s, free, index, q = _tower()
    m = _matrices(s, free, index)
    d = m.differences(q)
    rng = np.random.default_rng(8)
    gamma, psi = rng.uniform(1, 20, s.n_strings), rng.uniform(-50, -1, s.n_bars)
    # forces: -sum_k w_k Yhat_k q
    w = np.concatenate([gamma, psi])
    dense = -(member_columns(s.string_nodes, q) @ gamma + member_columns(s.bar_nodes, q) @ psi)
    np.testing.assert_allclose(m.forces(d, w), dense, atol=1e-12 * np.abs(dense).max())
    # the KKT matrix's stiffness block is the dense tangent with the same terms (at_rest taut)
    l = np.linalg.norm(d[:s.n_strings], axis=1)
    material = np.concatenate([s.string_stiffness * s.string_rest_lengths / l ** 3,
                               np.zeros(s.n_bars)])
    gamma_law = s.string_stiffness * (1 - s.string_rest_lengths / l)
    w = np.concatenate([gamma_law, psi])
    X = m.bar_columns(d[s.n_strings:])
    A = m.kkt(d, w, material, 0.25, X).toarray()
    K = tc.tangent_stiffness(s, q, gamma=gamma_law, bar_force_densities=psi, at_rest="taut")
    nf = free.size
    Kff = K[np.ix_(free, free)] + 0.25 * np.eye(nf)
    np.testing.assert_allclose(A[:nf, :nf], Kff, atol=1e-12 * np.abs(Kff).max())
    Xd = member_columns(s.bar_nodes, q)[free]
    np.testing.assert_array_equal(A[:nf, nf:], Xd)   # fixed base, no gauge: C = X
    np.testing.assert_array_equal(A[nf:, :nf], Xd.T)
    np.testing.assert_allclose(m.diagonal(d, w, material), np.diag(K)[free], rtol=1e-14)
    G = m.gram(X)
    f = rng.standard_normal(nf)
    np.testing.assert_allclose(G.least_squares(f), np.linalg.lstsq(Xd, f, rcond=None)[0],
                               atol=1e-12)


def test_static_equilibrium_counts_line_search_trials():
    s = tc.catalog.tbar("stedy")
    h = tc.static_equilibrium(s, loads=_side_load(s)).history
    assert h.trials.shape == h.step.shape
    assert h.line_search_trials >= h.iterations > 0   # one trial at least per step taken


def _steel_kkt():
    """The KKT matrix [[K, X], [X^T, 0]] of a 10-stage steel tower prestressed at 200 N/m, at
    its nodes (K 1e6-1e7 N/m against bar columns of about 1 m), and its free size."""
    from tenscontrol.statics import solve
    s = tc.equilibrium(tc.catalog.prism_tower(10, string_material="steel"),
                       gamma_min=200.0).structure
    p = solve._problem(s, None, "rigid")
    q = s.nodes.reshape(-1)
    _, _, gamma, psi = solve._forces(p, q, np.zeros(p.free.size))
    d, density, material = solve._tangent(p, q, gamma, psi)
    X = p.mats.bar_columns(d[s.n_strings:])
    return p.mats.kkt(d, density, material, 0.0, X).copy(), p.free.size


def test_equilibrated_is_a_congruence_with_unit_rows_and_the_same_inertia():
    A, _ = _steel_kkt()
    B, d = linalg.equilibrated(A)
    D = scipy.sparse.diags(d)
    np.testing.assert_allclose(B.toarray(), (D @ A @ D).toarray(), rtol=1e-15, atol=0.0)
    rows = np.abs(B.toarray()).max(axis=1)
    # three Ruiz sweeps: every row's largest entry within a factor 8 of 1 (unscaled: 1e-7 to 1)
    assert rows.max() <= 1.0 + 1e-12 and rows.min() >= 1.0 / 8.0
    inertia = [np.sum(np.linalg.eigvalsh(M.toarray()) < 0) for M in (A, B)]
    assert inertia[0] == inertia[1]  # Sylvester: the count the stability test relies on


def test_unguarded_kkt_factor_gives_the_guarded_solution():
    A, nf = _steel_kkt()
    r = np.random.default_rng(3).standard_normal(nf)
    counts = {"dense_kkt": 0}
    guarded = linalg.kkt_factor(A, nf, counts)(r)
    plain = linalg.kkt_factor(A, nf, counts, guarded=False)(r)
    dense = np.linalg.solve(A.toarray(), np.concatenate([r, np.zeros(A.shape[0] - nf)]))[:nf]
    # the scaled condition estimate is 5e5 here (1.7e12 unscaled)
    assert counts["dense_kkt"] == 0
    # measured 5e-12 (scaled) and 1.6e-10 (plain LU) of the solution against dense LAPACK
    for x in (guarded, plain):
        assert np.abs(x - dense).max() <= 1e-8 * np.abs(dense).max()
