"""The sparse rigid-bar kernels against the dense path (tests/rigid_dense.py) and numpy.

The envelope LDL^T on random banded SPD and KKT matrices against numpy.linalg.solve; the
accelerations and one correction step on the T-bar, the ball, a prism tower (class-2 joints),
the arm (point masses, fixed coordinates) and a triangle made collinear (dependent bar rows)
against the dense oracle; the whole correction against the dense one iterated.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import rigid_dense
from numba import njit

import tenscontrol as tc
from tenscontrol.mechanics.rigid import kernels as K
from tenscontrol.mechanics.kernels.banded import (band_matrix, dense_from_band, envelope, ldl_factor,
                                          ldl_solve)
from tenscontrol.mechanics.kernels.records import Correction
from tenscontrol.mechanics.rigid.model import rigid_model
from tenscontrol.model import catalog


def _random_envelope(rng, n, w):
    """A random lower envelope (rows, cols) of width at most w, with every diagonal."""
    rows, cols = [], []
    for i in range(n):
        for j in range(max(0, i - w), i):
            if rng.random() < 0.5:
                rows.append(i), cols.append(j)
    return np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)


@pytest.mark.parametrize("seed", range(5))
def test_envelope_ldl_solves_random_banded_spd_systems(seed):
    rng = np.random.default_rng(seed)
    n, w = 40, 1 + seed * 2
    rows, cols = _random_envelope(rng, n, w)
    first = envelope(n, rows, cols)
    vals = rng.normal(size=rows.size)
    A = band_matrix(n, first, np.r_[rows, np.arange(n)], np.r_[cols, np.arange(n)],
                    np.r_[vals, np.full(n, 2.0 * w + 1)])
    dense = dense_from_band(A)
    assert np.all(np.linalg.eigvalsh(dense) > 0)
    b = rng.normal(size=n)
    x = b.copy()
    assert ldl_factor(A, first, np.zeros(n, dtype=np.bool_), 1e-13) == -1
    ldl_solve(A, first, x)
    np.testing.assert_allclose(x, np.linalg.solve(dense, b), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_envelope_ldl_solves_random_kkt_systems_with_constraints_after_their_coordinates(seed):
    """[M J^T; J 0] with each constraint row right after the last coordinate it touches."""
    rng = np.random.default_rng(seed)
    nq = 30
    order, negative, touched = [], [], []
    for a in range(nq):
        order.append(("q", a))
        if a >= 2 and rng.random() < 0.4:
            cols = np.sort(rng.choice(np.arange(max(0, a - 4), a + 1), 3, replace=False))
            cols[-1] = a
            touched.append(cols)
            order.append(("c", len(touched) - 1))
    n = len(order)
    pos = {key: k for k, key in enumerate(order)}
    rows, cols, vals = [], [], []
    for a in range(nq):
        rows.append(pos["q", a]), cols.append(pos["q", a]), vals.append(4.0 + rng.random())
        if a:
            rows.append(pos["q", a]), cols.append(pos["q", a - 1]), vals.append(rng.normal())
    for c, tc_ in enumerate(touched):
        for a in tc_:
            rows.append(pos["c", c]), cols.append(pos["q", a]), vals.append(rng.normal())
    rows, cols = np.array(rows), np.array(cols)
    first = envelope(n, rows, cols)
    A = band_matrix(n, first, rows, cols, np.array(vals))
    dense = dense_from_band(A)
    negative = np.array([key[0] == "c" for key in order])
    b = rng.normal(size=n)
    x = b.copy()
    assert ldl_factor(A, first, negative, 1e-13) == -1
    ldl_solve(A, first, x)
    np.testing.assert_allclose(x, np.linalg.solve(dense, b), rtol=1e-11, atol=1e-12)


def test_envelope_ldl_reports_a_dependent_constraint_row():
    """A constraint row equal to an earlier one: its pivot vanishes and the row is named."""
    dense = np.array([[2.0, 0.5, 1.0, 1.0], [0.5, 3.0, 2.0, 2.0], [1.0, 2.0, 0.0, 0.0],
                      [1.0, 2.0, 0.0, 0.0]])
    first = np.zeros(4, dtype=np.int64)
    A = band_matrix(4, first, *np.tril_indices(4), dense[np.tril_indices(4)])
    assert ldl_factor(A, first, np.array([False, False, True, True]), 1e-12) == 3


def _cases():
    tower = catalog.prism_tower(4, gravity=(0.0, 0.0, -9.81))
    return {"tbar": catalog.tbar(), "ball": catalog.ball(), "tower": tower,
            "arm": catalog.arm(), "tower-free": catalog.prism_tower(3, base="free")}


def _random_state(s, rng):
    q = s.nodes.reshape(-1) + 1e-3 * rng.normal(size=3 * s.n_nodes)
    qd = rng.normal(size=q.size)
    q[s.fixed_coordinates] = s.nodes.reshape(-1)[s.fixed_coordinates]
    qd[s.fixed_coordinates] = 0.0
    return q, qd


@pytest.mark.parametrize("name", ["tbar", "ball", "tower", "arm", "tower-free"])
def test_sparse_accelerations_match_the_dense_path(name):
    s = _cases()[name]
    model = rigid_model(s)
    rng = np.random.default_rng(1)
    q, qd = _random_state(s, rng)
    f = rng.normal(size=q.size)
    qdd, lam = np.empty_like(q), np.empty(model.bars.i.size)
    K.accelerations(q, qd, f, model.kernel, qdd, lam, np.empty(s.n_strings))
    ref_qdd, ref_lam = rigid_dense.accelerations(model, q, qd, f)
    np.testing.assert_allclose(qdd, ref_qdd, rtol=0, atol=1e-12 * np.abs(ref_qdd).max())
    np.testing.assert_allclose(lam, ref_lam, rtol=0, atol=1e-12 * np.abs(ref_lam).max())


def _triangle():
    """Three bars in a triangle; collinear nodes make their rows dependent."""
    nodes = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.5, 0.8, 0.0]]
    bar = {"radius": 0.01, "density": 500.0, "youngs_modulus": 2e11, "poisson": 0.3}
    bars = [dict(bar, nodes=[0, 1]), dict(bar, nodes=[1, 2]), dict(bar, nodes=[0, 2])]
    strings = [{"nodes": [0, 2], "kind": "string", "youngs_modulus": 7e7, "radius": 0.001,
                "rest_fraction": 0.9, "damping": 0.0}]
    return tc.structure_from_dict({"format": "tenscontrol.structure/1", "name": "triangle",
                                   "gravity": [0.0, 0.0, 0.0], "nodes": nodes, "fixed": [],
                                   "bars": bars, "strings": strings, "point_masses": []})


def test_dependent_bar_rows_fall_back_to_least_squares_like_the_dense_path():
    """The multipliers of dependent rows are not unique: matching the dense path's minimum-norm
    ones shows that the least-squares fallback, not the KKT solve, answered."""
    model = rigid_model(_triangle())
    q = np.array([0.0, 0, 0, 1, 0, 0, 2, 0, 0])      # collinear: the three rows are dependent
    qd = np.array([0.0, 0.1, 0, 0.2, -0.1, 0, 0.1, 0.3, 0.1])
    f = np.array([0.0, 1, 0, 0, 0, 1, 1, 0, 0])
    qdd, lam = np.empty_like(q), np.empty(3)
    K.accelerations(q, qd, f, model.kernel, qdd, lam, np.empty(1))
    ref_qdd, ref_lam = rigid_dense.accelerations(model, q, qd, f)
    np.testing.assert_allclose(qdd, ref_qdd, rtol=0, atol=1e-12 * np.abs(ref_qdd).max())
    np.testing.assert_allclose(lam, ref_lam, rtol=0, atol=1e-12 * np.abs(ref_lam).max())


def _one_step(model, y, E0, energy):
    y1 = y.copy()
    K.correct(y1, E0, Correction(energy, 0.0, 0.0, 0.0, 1), model.kernel)
    return y1 - y


@pytest.mark.parametrize("energy", [True, False])
@pytest.mark.parametrize("name", ["tbar", "ball", "tower", "arm", "tower-free"])
def test_a_correction_step_matches_the_dense_svd_step(name, energy):
    s = _cases()[name]
    model = rigid_model(s)
    q, qd = _random_state(s, np.random.default_rng(2))
    y = np.concatenate([q, 0.01 * qd, [0.3]])
    E0 = float(K.total_energy(q, qd, model.kernel)) + 0.1
    dx = _one_step(model, y, E0, energy)
    ref = rigid_dense.correction_step(model, y, E0, energy)
    np.testing.assert_allclose(dx, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    assert np.all(dx[np.concatenate([model.col < 0, model.col < 0, [False]])] == 0.0)


def test_a_correction_step_with_dependent_rows_is_the_svd_step():
    model = rigid_model(_triangle())
    q = np.array([0.0, 0, 0, 1, 0, 0, 2.001, 0, 0])
    y = np.concatenate([q, [0.0, 0.1, 0, 0.2, -0.1, 0, 0.1, 0.3, 0.0], [0.0]])
    E0 = float(K.total_energy(y[:9], y[9:18], model.kernel))
    dx = _one_step(model, y, E0, True)
    ref = rigid_dense.correction_step(model, y, E0, True)
    np.testing.assert_allclose(dx, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    assert np.all(dx[[2, 5, 8, 11, 14, 17]] == 0.0)       # out of the plane: untouched


@pytest.mark.parametrize("name", ["ball", "tower", "arm"])
def test_the_correction_converges_like_the_dense_one(name):
    """Iterated to the default tolerance, both land on the same point to the tolerance."""
    s = _cases()[name]
    model = rigid_model(s)
    q, qd = _random_state(s, np.random.default_rng(3))
    y = np.concatenate([q, 0.01 * qd, [0.0]])
    E0 = float(K.total_energy(y[:q.size], y[q.size:2 * q.size], model.kernel))
    y[:q.size] += 1e-5 * np.random.default_rng(4).normal(size=q.size) * (model.col >= 0)
    ref = y.copy()
    for _ in range(10):
        ref += rigid_dense.correction_step(model, ref, E0, True)
    it, ok, svd = K.correct(y, E0, Correction(True, 1e-12, 1e-12, 1e-12, 10), model.kernel)
    assert ok and it <= 4 and svd == 0   # independent bars: the band solve every time
    np.testing.assert_allclose(y, ref, rtol=0, atol=1e-10)


def test_the_kernel_record_holds_no_dense_mass_matrix():
    """A 768-bar tower's model: no (3n, 3n) array; M and W are built only when asked for."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = rigid_model(catalog.prism_tower(256))
    assert "M" not in model.__dict__ and "W" not in model.__dict__
    assert njit(lambda m: m.kkt.mass_band.shape[1])(model.kernel) < 40


def test_a_768_bar_tower_corrects_to_its_energy_floor_without_warnings():
    """Its energy (1.1e6 J of potential terms) and its bar rows (coordinates up to 256 m) round
    above the default relative tolerances: the floors (8 eps of those terms) let every
    correction converge."""
    tower = catalog.prism_tower(256, gravity=(0.0, 0.0, -9.81))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        traj = tc.simulate(tower, 2e-3)
    assert traj.stats.correction_failures == 0
    assert np.abs(traj.energy_violation).max() < 1e-8
    assert np.abs(traj.bar_violation).max() < 1e-12
