"""The band path of the compressible model (issue 11, item 4) against the dense path.

Oracles: the dense kernels of compressible_kernels (rhs, Jacobian, energy) and numpy's dense
solve of (c I - J) x = r, for real and complex c, on the T-bar, the ball and a tower with a
point mass, damping and a fixed base, in both kinetic forms; and whole runs on both paths.
"""

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.mechanics.compressible import banded as CB
from tenscontrol.mechanics.compressible import kernels as CK
from tenscontrol.mechanics.compressible.model import compressible_model
from tenscontrol.model import catalog


def tower_with_point_mass():
    t = catalog.prism_tower(4, gravity=(0.0, 0.0, -9.806), damping=0.3)
    return tc.Structure(t.nodes, t.bars, t.strings, fixed=t.fixed,
                        point_masses=[tc.PointMass(7, 0.4)], gravity=t.gravity, name="tower-pm")


CASES = [(lambda: catalog.tbar(bar_material="hdpe", damping=1.0), "consistent", False),
         (lambda: catalog.tbar(bar_material="hdpe", damping=1.0), "paper", True),
         (lambda: catalog.ball(damping=0.5), "consistent", True),
         (tower_with_point_mass, "consistent", False),
         (tower_with_point_mass, "paper", True)]


def moving_state(model, seed=1):
    s, nq = model.structure, model.n_coordinates
    rng = np.random.default_rng(seed)
    free = np.zeros(nq, dtype=bool)
    free[model.free] = True
    q = s.nodes.reshape(-1) + 0.01 * rng.standard_normal(nq) * free
    y = np.concatenate([q, rng.standard_normal(nq), [0.3]])   # fixed coordinates move too
    return y, 10 * rng.standard_normal(nq), rng


@pytest.mark.parametrize("make, kinetic, radius", CASES)
def test_band_rhs_energy_and_newton_solves_match_the_dense_path(make, kinetic, radius):
    model = compressible_model(make(), kinetic, radius)
    pat = CB.band_pattern(model)
    y, f, rng = moving_state(model)
    nq, n = model.n_coordinates, y.size
    dense, band = np.empty(n), np.empty(n)
    CK.rhs(y, f, model.kernel, dense)
    CB.rhs(y, f, model.kernel, pat, band)
    np.testing.assert_allclose(band, dense, rtol=0, atol=1e-13 * np.abs(dense).max())
    np.testing.assert_allclose(CB.energies(y[None], model.kernel, pat),
                               CK.energies(y[None], model.kernel), rtol=1e-14)
    J = np.empty((n, n))
    CK.jacobian(y, f, model.kernel, J)
    Mb = np.empty((nq, 2 * pat.width + 1))
    Bq, Bqd, pw = np.empty_like(Mb), np.empty_like(Mb), np.empty(2 * nq)
    assert CB.jacobian_parts(y, f, model.kernel, pat, Mb, Bq, Bqd, pw)
    jac = CB.BandedJacobian(Mb, Bq, Bqd, pw, pat.perm, lambda: J)
    for c in (3.6 / 1e-4, 3.6 / 1e-2, complex(2.68, 3.05) / 1e-4, complex(2.68, 3.05) / 1e-1):
        r = rng.standard_normal(n) * (1.0 + (0.5j if isinstance(c, complex) else 0.0))
        solver = jac.factor(c)
        assert type(solver).__name__ == "_BandSolver"   # no dense fallback on these
        x = solver.solve(r)
        ref = np.linalg.solve(c * np.eye(n) - J, r)
        assert np.linalg.norm(x - ref) <= 1e-10 * np.linalg.norm(ref)


def test_small_pivot_falls_back_to_the_dense_lu():
    model = compressible_model(tower_with_point_mass())
    pat = CB.band_pattern(model)
    y, f, rng = moving_state(model)
    nq, n = model.n_coordinates, y.size
    J = np.empty((n, n))
    CK.jacobian(y, f, model.kernel, J)
    Mb = np.empty((nq, 2 * pat.width + 1))
    Bq, Bqd, pw = np.empty_like(Mb), np.empty_like(Mb), np.empty(2 * nq)
    CB.jacobian_parts(y, f, model.kernel, pat, Mb, Bq, Bqd, pw)
    Mb[:] = 0.0     # K(c) = -B_q then has zero rows (fixed coordinates): the band LU stops
    solver = CB.BandedJacobian(Mb, Bq, Bqd, pw, pat.perm, lambda: J).factor(1.0)
    assert type(solver).__name__ == "_DenseSolver"


@pytest.mark.slow
def test_tower_runs_match_on_both_paths(monkeypatch):
    tower = catalog.prism_tower(8, gravity=(0.0, 0.0, -9.81), damping=0.2)
    out = {}
    for name, threshold in (("dense", 10**12), ("band", 0)):
        monkeypatch.setattr(CB, "BANDED_MIN_COORDINATES", threshold)
        out[name] = tc.simulate(tower, 0.01, bars="compressible")
    a, b = out["dense"], out["band"]
    assert a.stats.accepted_steps == pytest.approx(b.stats.accepted_steps, rel=0.02)
    # both within the integrator's tolerance of each other (rtol = atol = 1e-8)
    np.testing.assert_allclose(b.nodes[-1], a.nodes[-1], rtol=0, atol=1e-8)
    np.testing.assert_allclose(b.energy_violation[-1], a.energy_violation[-1], atol=1e-8)
