"""Robust H2 and H-infinity norms (docs/theory.md, "Norms and compliance").

Oracles: python-control on stable random systems, the dual Gramian, the numerically integrated
impulse-response energy, and a refined dense frequency sweep.
"""

import os
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
import scipy.optimize
import control as ct

from tenscontrol.linear.norms import h2_norm, hinf_norm


def rss(n, p, m, seed, strictly_proper=True):
    """control.rss with a fixed seed; with strictly_proper=False a nonzero random D is set."""
    np.random.seed(seed)                     # control.rss draws from numpy's global generator
    sys = ct.rss(n, p, m, strictly_proper=True)
    if strictly_proper:
        return sys
    return ct.ss(sys.A, sys.B, sys.C, np.random.default_rng(seed).standard_normal((p, m)))


def sigma_max(sys, w):
    A, B, C, D = (np.asarray(X) for X in (sys.A, sys.B, sys.C, sys.D))
    G = C @ np.linalg.solve(1j * w * np.eye(A.shape[0]) - A, B) + D
    return np.linalg.norm(G, 2)


def sweep_hinf(sys):
    """Peak gain from a log grid that includes every |Im lambda|, refined around the best points."""
    lam = np.linalg.eigvals(sys.A)
    mag = np.abs(lam)
    grid = np.unique(np.concatenate([np.logspace(np.log10(mag.min()) - 3,
                                                 np.log10(mag.max()) + 3, 3000),
                                     np.abs(lam.imag), [0.0]]))
    vals = np.array([sigma_max(sys, w) for w in grid])
    best = vals.max()
    for k in np.argsort(vals)[-8:]:
        lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
        res = scipy.optimize.minimize_scalar(lambda w: -sigma_max(sys, w), bounds=(lo, hi),
                                             method="bounded", options={"xatol": 1e-14 * hi})
        best = max(best, -res.fun)
    return max(best, np.linalg.norm(np.asarray(sys.D), 2))


@pytest.mark.parametrize("n, p, m, seed", [(2, 1, 1, 0), (6, 2, 3, 1), (12, 3, 2, 2),
                                           (30, 4, 4, 3)])
def test_h2_matches_python_control_and_dual_gramian(n, p, m, seed):
    sys = rss(n, p, m, seed)
    A, B, C = (np.asarray(X) for X in (sys.A, sys.B, sys.C))
    Q = scipy.linalg.solve_continuous_lyapunov(A.T, -C.T @ C)      # A^T Q + Q A = -C^T C
    dual = np.sqrt(np.trace(B.T @ Q @ B))
    value = h2_norm(sys)
    assert value == pytest.approx(dual, rel=1e-9)
    assert value == pytest.approx(ct.norm(sys, 2), rel=1e-9)


def test_h2_matches_impulse_response_energy():
    sys = ct.ss([[-1.0, 2.0], [-2.0, -1.5]], [[1.0, 0.0], [0.5, 1.0]], [[1.0, -1.0]], 0)
    A, B, C = (np.asarray(X) for X in (sys.A, sys.B, sys.C))
    energy, _ = scipy.integrate.quad(
        lambda t: np.sum((C @ scipy.linalg.expm(A * t) @ B) ** 2), 0, 60, limit=400,
        epsabs=1e-13, epsrel=1e-12)
    assert h2_norm(sys) == pytest.approx(np.sqrt(energy), rel=1e-8)


@pytest.mark.parametrize("n, p, m, seed, proper", [(3, 1, 1, 0, True), (8, 2, 2, 4, True),
                                                   (15, 3, 2, 5, False), (40, 2, 3, 6, True)])
def test_hinf_matches_refined_frequency_sweep(n, p, m, seed, proper):
    sys = rss(n, p, m, seed, strictly_proper=proper)
    value = hinf_norm(sys)
    sweep = sweep_hinf(sys)
    assert value == pytest.approx(sweep, rel=1e-6)
    assert sweep <= value * (1 + 1e-8)      # the sweep is a lower bound


def test_lightly_damped_peak():
    """A resonance with zeta = 1e-4: the peak 1/(2 zeta) must not be missed."""
    zeta, w0 = 1e-4, 3.0
    sys = ct.ss([[0, 1], [-w0**2, -2 * zeta * w0]], [[0], [w0**2]], [[1, 0]], 0)
    expected = 1 / (2 * zeta * np.sqrt(1 - zeta**2))        # exact peak of the 2nd-order system
    assert hinf_norm(sys) == pytest.approx(expected, rel=1e-8)
    assert hinf_norm(sys) == pytest.approx(sweep_hinf(sys), rel=1e-6)


def test_stability_threshold_is_relative_not_absolute():
    """Time unit change: poles at -1e-9 rad/s are stable; ct.norm says inf (absolute 1e-8)."""
    sys = rss(5, 2, 2, 7)
    alpha = 1e-9
    slow = ct.ss(alpha * sys.A, alpha * sys.B, sys.C, 0)      # G_slow(s) = G(s / alpha)
    with pytest.warns(UserWarning, match="imaginary axis"):
        assert ct.norm(slow, 2) == np.inf
    assert h2_norm(slow) == pytest.approx(np.sqrt(alpha) * h2_norm(sys), rel=1e-8)
    assert hinf_norm(slow) == pytest.approx(hinf_norm(sys), rel=1e-8)


def test_unstable_system_returns_inf():
    sys = ct.ss([[0.5, 1.0], [0.0, -2.0]], [[1.0], [1.0]], [[1.0, 1.0]], 0)
    assert np.isfinite(ct.norm(sys, "inf"))           # python-control: no stability check
    assert hinf_norm(sys) == np.inf
    assert h2_norm(sys) == np.inf


def test_hidden_marginal_mode_raises_with_pointer_to_minimal_realization():
    stable = rss(4, 2, 2, 8)
    A = scipy.linalg.block_diag(np.asarray(stable.A), [[0.0]])      # appended integrator
    B = np.vstack([stable.B, np.zeros((1, 2))])                       # ... uncontrollable
    C = np.hstack([stable.C, np.ones((2, 1))])
    with pytest.raises(ValueError, match=r"uncontrollable/unobservable marginal.*"
                                         r"tenscontrol\.minimal_realization\(model\)"):
        h2_norm(ct.ss(A, B, C, 0))
    with pytest.raises(ValueError, match="minimal_realization"):
        hinf_norm(ct.ss(A, B, C, 0))
    # the same integrator made unobservable instead, after a similarity that mixes the states
    B2 = np.vstack([stable.B, np.ones((1, 2))])
    C2 = np.hstack([stable.C, np.zeros((2, 1))])
    T = np.eye(5) + 0.3 * np.random.default_rng(0).standard_normal((5, 5))
    mixed = ct.ss(np.linalg.solve(T, A @ T), np.linalg.solve(T, B2), C2 @ T, 0)
    with pytest.raises(ValueError, match="minimal_realization"):
        hinf_norm(mixed)


def test_excited_integrator_returns_inf():
    stable = rss(4, 2, 2, 9)
    A = scipy.linalg.block_diag(np.asarray(stable.A), [[0.0]])
    B = np.vstack([stable.B, np.ones((1, 2))])
    C = np.hstack([stable.C, np.ones((2, 1))])
    sys = ct.ss(A, B, C, 0)
    assert h2_norm(sys) == np.inf and hinf_norm(sys) == np.inf


def test_undamped_oscillator_returns_inf():
    sys = ct.ss([[0.0, 1.0], [-4.0, 0.0]], [[0.0], [1.0]], [[1.0, 0.0]], 0)
    assert h2_norm(sys) == np.inf and hinf_norm(sys) == np.inf


def test_feedthrough_and_static_systems():
    sys = rss(4, 2, 2, 10, strictly_proper=False)
    assert np.any(np.asarray(sys.D) != 0)
    assert h2_norm(sys) == np.inf                     # continuous time, D != 0
    assert hinf_norm(sys) >= np.linalg.norm(np.asarray(sys.D), 2)
    static = ct.ss([], [], [], [[3.0, 4.0]])
    assert hinf_norm(static) == pytest.approx(5.0)
    assert h2_norm(static) == np.inf
    assert h2_norm(ct.ss([], [], [], [[0.0]])) == 0.0


def test_inputs_are_validated():
    sys = rss(3, 1, 1, 11)
    holder = SimpleNamespace(sys=sys)
    assert h2_norm(holder) == h2_norm(sys)            # anything with a .sys StateSpace
    with pytest.raises(TypeError, match="StateSpace"):
        h2_norm(np.eye(2))
    with pytest.raises(ValueError, match="discrete-time"):
        hinf_norm(ct.c2d(sys, 0.1))
    with pytest.raises(ValueError, match="tol"):
        hinf_norm(sys, tol=0.0)


# ---- issue 13: NaN and inf never reach slycot or LAPACK -----------------------------------


@pytest.mark.parametrize("norm", [h2_norm, hinf_norm])
@pytest.mark.parametrize("args, where", [
    ((-1.0, np.inf, 1.0, 0.0), r"B\[0, 0\] is inf"),       # hinf_norm gave 0.0
    ((-1.0, 1.0, np.inf, 0.0), r"C\[0, 0\] is inf"),       # hinf_norm gave 0.0
    ((-1.0, 1.0, 1.0, np.nan), r"D\[0, 0\] is nan"),       # hinf_norm gave nan
    ((np.nan, 1.0, 1.0, 0.0), r"A\[0, 0\] is nan"),
    (([[-1.0, 0.0], [0.0, -2.0]], [[1.0], [np.nan]], [[1.0, 1.0]], 0.0), r"B\[1, 0\] is nan"),
])
def test_non_finite_entries_are_named(norm, args, where):
    with pytest.raises(ValueError, match=f"{norm.__name__}: {where}.*must be finite"):
        norm(ct.ss(*args))


def test_nan_in_b_or_c_fails_fast_instead_of_hanging_in_slycot():
    """slycot's ab13dd never returned on NaN in B or C (133 s, deaf to Ctrl-C): the call runs
    in a subprocess with a timeout so that a regression fails instead of hanging the suite."""
    code = ("import numpy as np, control as ct\nfrom tenscontrol.linear.norms import hinf_norm\n"
            "for s in (ct.ss(-1, np.nan, 1, 0), ct.ss(-1, 1, np.nan, 0)):\n"
            "    try:\n        hinf_norm(s)\n    except ValueError as e:\n        print(e)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    assert run.returncode == 0, run.stderr
    assert "hinf_norm: B[0, 0] is nan" in run.stdout
    assert "hinf_norm: C[0, 0] is nan" in run.stdout


@pytest.mark.parametrize("norm", [h2_norm, hinf_norm])
@pytest.mark.parametrize("args, name", [
    ((-1.0, 1e300, 1e300, 0.0), "B"),    # hinf_norm gave 0.0 for a norm of 1e600
    ((-1e300, 1.0, 1.0, 0.0), "A"),      # gave inf for 1e-300
    ((-1e-300, 1.0, 1.0, 0.0), "A"),     # h2_norm gave 0.0 for 7e149
])
def test_entries_beyond_the_usable_range_are_refused(norm, args, name):
    with pytest.raises(ValueError, match=f"largest entry of {name} is .*other units"):
        norm(ct.ss(*args))
