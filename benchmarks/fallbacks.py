"""Every fallback path of simulate() and static_equilibrium(), and what the result says of it.

Usage::

    python benchmarks/fallbacks.py

Each case forces one path, as tests/test_fallbacks.py does: a crafted structure (two rigid bars
nearly in line, whose length constraints are nearly dependent; a compressible bar whose axial
stretch has no mass in the "paper" kinetic energy, let through the model's start check) or a
patched failure (the band LU's pivot test, one Newton iteration, the static solver's Cholesky
pivot test and sparse LU). For each: the stats' linear-algebra path, the nonzero fallback
counters, and the warnings (RuntimeWarning) the run issued. Then the ill-conditioned static
min-norm step, by SVD least squares (now) and by the normal equations (1.0).

Not forced: ``dense_mass_solves`` (the band LDL^T of M(q) failing where the dense Cholesky
passes: a pivot window of about 2x, not reached by any structure built here; its pivot tolerance
is compiled into the kernel, so it cannot be patched).
"""

from __future__ import annotations

import contextlib
import dataclasses
import textwrap
import warnings

import numpy as np
import scipy.sparse

import tenscontrol as tc
from tenscontrol.integrate import radau
from tenscontrol.mechanics.compressible import banded as CB
from tenscontrol.mechanics.compressible import model as CM
from tenscontrol.simulation import compressible_loop, rigid_loop
from tenscontrol.statics import linalg


@contextlib.contextmanager
def patched(obj, name, value):
    """obj.name = value inside."""
    old = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, old)


def toggle(offset=1e-7):
    """Rigid bars A-B-C, A and C fixed, B `offset` [m] off the line AC."""
    bar = tc.catalog.tbar("stedy").bars[0]
    fixed = np.array([[1, 1, 1], [0, 0, 0], [1, 1, 1]], bool)
    return tc.Structure(nodes=np.array([[0.0, 0, 0], [1, 0, offset], [2, 0, 0]]),
                        bars=(dataclasses.replace(bar, nodes=(0, 1)),
                              dataclasses.replace(bar, nodes=(1, 2))),
                        strings=(), fixed=fixed, name="toggle")


def hanging_bar():
    """A free compressible bar hung on a string (singular "paper" mass matrix)."""
    s = tc.catalog.tbar("stedy")
    fixed = np.array([[1, 1, 1], [0, 0, 0], [0, 0, 0]], bool)
    return tc.Structure(nodes=np.array([[0.0, 0, 0], [0, 0, 1], [0, 0, 2]]),
                        bars=(dataclasses.replace(s.bars[0], nodes=(1, 2)),),
                        strings=(dataclasses.replace(s.strings[0], nodes=(0, 1),
                                                     rest_fraction=0.9),),
                        fixed=fixed, name="hanging bar")


def report(label, run):
    """Run `run()` recording its warnings; print the result's paths, counters and warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run()
    print(f"\n== {label}")
    stats = getattr(result, "stats", result)
    print(f"   repr: {stats!r}")
    if isinstance(result, tc.statics.StaticEquilibrium):
        print(f"   linear_algebra={result.linear_algebra!r}, dense_bar_solves="
              f"{result.dense_bar_solves}, dense_kkt_solves={result.dense_kkt_solves}")
    else:
        print(f"   linear_algebra={stats.linear_algebra!r}, keep_step={stats.keep_step!r}, "
              f"newton_failures={stats.newton_failures}, jacobians={stats.jacobian_evaluations}"
              f", LU={stats.lu_decompositions}")
        print(f"   fallbacks: {stats.fallbacks or 'none'}")
    shown = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    for w in shown:
        print(textwrap.fill(f"warning: {w.message}", 96, initial_indent="   ",
                            subsequent_indent="      "))
    if not shown:
        print("   warnings: none")


def simulation_cases():
    qd = np.zeros((3, 3))
    qd[1, 1] = 1e-3
    for compiled in (True, False):
        with patched(rigid_loop, "ENABLED", compiled):
            report(f"rigid toggle, nearly dependent bars, {'compiled' if compiled else 'Python'}"
                   " loop (0.01 s)", lambda: tc.simulate(toggle(), 0.01, qd=qd))
    with patched(CM, "_check_mass", lambda *args: None):
        CM._model_cached.cache_clear()
        for la in ("dense", "banded"):
            report(f"compressible hanging bar, kinetic='paper' (singular M), {la} (0.01 s)",
                   lambda: tc.simulate(hanging_bar(), 0.01, bars="compressible",
                                       kinetic="paper", linear_algebra=la))
    CM._model_cached.cache_clear()
    tbar = tc.catalog.tbar("stedy", damping=1.0, bar_material="hdpe")
    report("HDPE T-bar, banded, no fallback (0.2 s)",
           lambda: tc.simulate(tbar, 0.2, bars="compressible", linear_algebra="banded"))
    with patched(CB, "k_factor", lambda Mb, Bq, Bqd, c, K: 0):
        report("HDPE T-bar, banded, band LU pivot test failing (0.2 s)",
               lambda: tc.simulate(tbar, 0.2, bars="compressible", linear_algebra="banded"))
    newton, failed = radau.Radau5.newton, []

    def fail_once(self, t, h, y0):
        if not failed:
            failed.append(t)
            return radau._DIVERGED, 0.5, 1
        return newton(self, t, h, y0)
    # in the Python loop: the compiled one (compressible_loop) has no Radau5.newton to patch
    with patched(radau.Radau5, "newton", fail_once), patched(compressible_loop, "ENABLED", False):
        report("HDPE T-bar, dense, first Newton iteration failing (0.05 s)",
               lambda: tc.simulate(tbar, 0.05, bars="compressible"))
    st = tc.equilibrium(tbar, gamma_min=10.0, bars="compressible").structure
    ctrl = tc.lqr(tc.linearize(st, bars="compressible")).controller
    loads = np.zeros((st.n_nodes, 3))
    loads[2, 0] = 1.0
    report("HDPE T-bar, closed loop (LQR), banded (0.05 s)",
           lambda: tc.simulate(st, 0.05, bars="compressible", controller=ctrl, loads=loads,
                               linear_algebra="banded"))
    report("HDPE T-bar, closed loop (LQR), auto = dense (0.05 s)",
           lambda: tc.simulate(st, 0.05, bars="compressible", controller=ctrl, loads=loads))


def static_cases():
    s = tc.catalog.tbar("stedy")
    f = np.zeros((s.n_nodes, 3))
    f[:, 0] = 0.1
    report("static T-bar, side load, no fallback",
           lambda: tc.static_equilibrium(s, loads=f))
    with patched(linalg, "_PIVOT_TOL", 2.0):
        report("static T-bar, Cholesky pivot test failing (dense bar solves)",
               lambda: tc.static_equilibrium(s, loads=f))

    def singular(A):
        raise RuntimeError("Factor is exactly singular")
    with patched(linalg.scipy.sparse.linalg, "splu", singular):
        report("static T-bar, sparse LU failing (dense KKT solves)",
               lambda: tc.static_equilibrium(s, loads=f))


def normal_equations():
    rng = np.random.default_rng(6)
    U = np.linalg.qr(rng.standard_normal((12, 4)))[0]
    V = np.linalg.qr(rng.standard_normal((4, 4)))[0]
    print("\n== the static min-norm step X^T dq = phi on an ill-conditioned X (12 x 4)")
    print(f"   {'cond(X)':>8} {'path':>6} {'SVD (now)':>11} {'X^T X (1.0)':>12}   relative "
          "residual |X^T dq - phi| / |phi|")
    phi = np.random.default_rng(7).standard_normal(4)
    for cond in (1e2, 1e4, 1e6, 1e7):
        X = U @ np.diag(np.logspace(0, -np.log10(cond), 4)) @ V.T
        g = linalg.BarGram(scipy.sparse.csc_matrix(X))
        dq = g.min_norm_step(phi)
        normal = X @ np.linalg.lstsq(X.T @ X, phi, rcond=None)[0]
        res = [np.linalg.norm(X.T @ v - phi) / np.linalg.norm(phi) for v in (dq, normal)]
        path = "dense" if g.dense is not None else "chol"
        print(f"   {cond:8.0e} {path:>6} {res[0]:11.2e} {res[1]:12.2e}")


if __name__ == "__main__":
    simulation_cases()
    static_cases()
    normal_equations()
