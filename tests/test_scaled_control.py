"""Issue 23's control features at every scale: the T-bar at 1, 1e-3 and 1e3 in length.

The numerics rule (docs/theory.md, "Scales"): tolerances are relative to the structure's own
scales, so a structure and its scaled copy give the same answers up to the scaling. Two
scalings are exact similarities of the T-bar (no gravity, no point masses):

- ``Structure.with_scale(s)``: lengths s; the bars keep their cross-sections (masses s), the
  strings their strains and forces (stiffness 1/s, damping kept): time s, forces 1;
- ``model.scaling.similar(s)`` (the elastic similarity): lengths s, masses s^3, stiffness and
  force densities s, damping s^2: time s, forces s^2.

So with the length, time and force units L, T, F of a copy (:class:`Units`) every quantity
scales by its dimension: positions L, velocities L/T, force densities and their bounds F/L,
loads and tensions F, sample periods and delays T, rates 1/T, process noise (a force spectral
density) F^2 T, load drift F^2 / T, sensor noise stds by their signal's unit (m: L, N: F,
rad/s: 1/T, directions: 1); the weights (``effort``, the LQR's default Q and R) are relative
already. Each test computes a feature's dimensionless figures (each quantity divided by its
unit) on the copies and on the T-bar itself and asserts they agree.

``python tests/test_scaled_control.py`` prints the figures as a table.
"""

import dataclasses
import sys
import warnings

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.statics.self_stress import self_stress
from tenscontrol.estimation import lqg as est
from tenscontrol.design.discrete import gain_margin
from tenscontrol.estimation.observability import observability, place_sensors
from tenscontrol.mechanics.sensors import sensors
from tenscontrol.model.scaling import similar

FACTORS = (1e-3, 1e3)
SCALINGS = ("with_scale", "similar")
OUT = tc.Selection(nodes=[2, 3], axes="xz")
C = 5.0 * np.cos(np.pi / 4)                    # the T-bar's tip height and string length [m]


@dataclasses.dataclass(frozen=True)
class Units:
    """The length [m], time [s] and force [N] units of a scaled copy (1, 1, 1 at scale 1)."""

    length: float = 1.0
    time: float = 1.0
    force: float = 1.0

    @property
    def density(self):   # force density [N/m]
        return self.force / self.length

    @property
    def velocity(self):
        return self.length / self.time


def units(scaling: str, s: float) -> Units:
    return Units(s, s, 1.0) if scaling == "with_scale" else Units(s, s, s * s)


def scaled(structure, scaling: str, s: float):
    if s == 1.0:
        return structure
    return structure.with_scale(s) if scaling == "with_scale" else similar(structure, s)


_BASE = {}


def tbar(equilibrated=True):
    """The README's T-bar ("stedy", damping 1), at its 10 N/m prestress by default."""
    if equilibrated not in _BASE:
        s = tc.catalog.tbar("stedy", damping=1.0)
        _BASE[equilibrated] = tc.equilibrium(s, gamma_min=10.0).structure if equilibrated else s
    return _BASE[equilibrated]


# ---- each feature's dimensionless figures --------------------------------------------------


def every_sensor(s, u: Units):
    """Every kind of sensor with noise of 1e-3 of its unit, sampled at 200 / T."""
    n = dict(string_length=4, string_tension=4, node_position=4, bar_direction=2, bar_rate=2)
    unit = dict(string_length=u.length, string_tension=u.force, node_position=u.length,
                bar_direction=1.0, bar_rate=1 / u.time)
    std = np.concatenate([np.full(n[k], 1e-3 * unit[k]) for k in n])
    ss = sensors(s, string_lengths=range(4), string_tensions=range(4), node_positions=OUT,
                 bar_directions=[0, 1], bar_rates=[0, 1], std=std, rate=200.0 / u.time)
    return ss, np.array([unit[k] for k in ss.kinds])[ss.signal_sensor]


def sensor_figures(s, u: Units) -> dict:
    """Outputs and analytic Jacobians at a moving point (string 1 held), the model's C and D."""
    ss, row = every_sensor(s, u)
    rng = np.random.default_rng(5)
    free = s.free_coordinates
    q, qd = s.nodes.reshape(-1).copy(), np.zeros(3 * s.n_nodes)
    q[free] += 0.02 * u.length * rng.normal(size=free.size)
    qd[free] = 0.3 * u.velocity * rng.normal(size=free.size)
    gamma = tc.force_densities(s, q)
    y = ss.outputs(q, qd, gamma, held=[1])
    Cq, Cv, D = ss.output_matrices(q, qd, gamma, held=[1])
    m = tc.linearize(s, kind="control").actuated([1, 2]).with_sensors(ss)
    nq = q.size
    return {"y": y / row, "dh/dq": Cq * u.length / row[:, None],
            "dh/dqd": Cv * u.velocity / row[:, None], "dh/dgamma": D * u.density / row[:, None],
            "model C": np.hstack([m.C[:, :nq] * u.length, m.C[:, nq:] * u.velocity]) / row[:, None],
            "model D": m.D[:, :2] * u.density / row[:, None]}


def sampled_figures(s, u: Units) -> dict:
    """dlqr, gain_margin and the nonlinear sampled loop (20 ms, 5 ms delay at scale 1)."""
    model = tc.linearize(s, kind="passive", outputs=OUT)
    design = tc.lqr(model, effort=1e-2)
    T, delay = 0.02 * u.time, 0.005 * u.time
    d = tc.dlqr(model, T, delay=delay, effort=1e-2)
    law = tc.discretize(design.controller, T, delay)
    load = np.zeros((s.n_nodes, 3))
    load[2, 2] = 5.0 * u.force
    t = np.linspace(0.0, 0.4, 41) * u.time
    run = tc.simulate(s, t[-1], loads=load, controller=law, t_eval=t)
    c = run.control
    return {"dlqr spectral radius": d.spectral_radius, "dlqr |poles|": np.abs(d.E),
            "ZOH eig(Phi)": np.sort(np.abs(np.linalg.eigvals(d.model.Phi))),
            "gain margin": gain_margin(design.minimal, law),
            "loop q / L": (run.nodes - s.nodes).reshape(t.size, -1) / u.length,
            "loop sample u / (F/L)": c.sample_u / u.density,
            "loop sample times / T": c.sample_times / u.time,
            "loop accepted steps": float(run.stats.accepted_steps)}


def estimation_figures(s, u: Units) -> dict:
    """lqg, discrete_lqg, observability, place_sensors on string lengths and bar rates."""
    model = tc.linearize(s)
    ss = (sensors(s, string_lengths=range(4), std=1e-3 * u.length, rate=200.0 / u.time)
          + sensors(s, bar_rates=range(2), std=1e-2 / u.time, rate=200.0 / u.time))
    w = 4.0 * u.force ** 2 * u.time
    d = est.lqg(model, ss, process_noise=w)
    A, _, _ = est.reduced_model(d.lqr)
    T, delay = 0.005 * u.time, 0.001 * u.time
    dl = est.discrete_lqg(model, ss, T, process_noise=w, delay=delay).controller
    k = dl.kalman
    nu, n = k.Gamma0.shape[1], k.Phi.shape[0]
    Pa = np.block([[k.Phi, k.Gamma1], [np.zeros((nu, n + nu))]])
    Ga = np.vstack([k.Gamma0, np.eye(nu)])
    kd = est.discrete_lqg(model, ss, T, process_noise=w, delay=delay,
                          load_drift=10.0 * u.force ** 2 / u.time).controller.kalman
    o = observability(model, ss)
    h2 = place_sensors(model, ss, 2, process_noise=w)
    ld = place_sensors(model, ss, 3, criterion="logdet")
    return {"lqg h2": d.h2, "filter poles * T": np.sort_complex(
                np.linalg.eigvals(A - d.L @ d.Cr)) * u.time,
            "discrete lqg loop radius": np.abs(np.linalg.eigvals(Pa - Ga @ dl.K)).max(),
            "discrete kalman eig(Phi - M C Phi)": np.sort(np.abs(np.linalg.eigvals(
                k.Phi - k.M @ k.Cr @ k.Phi))),
            "with load states eig(Phi - M C Phi)": np.sort(np.abs(np.linalg.eigvals(
                kd.Phi - kd.M @ kd.Cr @ kd.Phi))),
            "observability rank": o.rank, "gramian trace": o.trace,
            "gramian min eigenvalue": o.min_eigenvalue, "gramian log det": o.log_det,
            # bar rates 0 and 1 (sensors 4, 5) tie by symmetry: the order they are picked in
            # is rounding, the set is not
            "h2 placement": np.sort(h2.indices), "h2 placement figure": h2.figure,
            "logdet placement": np.array(ld.indices), "logdet figure": ld.figure}


def mpc_figures(s, u: Units) -> dict:
    """The tension-bounded MPC (5 ms, gamma_min 1 N/m) under the 40 N doublet that lets the
    README's LQR go slack, for 1 s."""
    pytest.importorskip("osqp")
    model = tc.linearize(s, kind="passive", outputs=OUT)
    m = tc.mpc(model, 0.005 * u.time, gamma_min=1.0 * u.density, effort=1e-2).controller
    load = tc.doublet(s, tc.Selection(2, "z"), 40.0 * u.force, half_period=0.5 * u.time)
    t = np.linspace(0.0, 1.0, 201) * u.time
    run = tc.simulate(s, t[-1], loads=load, controller=m, t_eval=t, max_step=0.005 * u.time)
    c = run.control
    return {"peak / L": np.abs(run.nodes - s.nodes).max() / u.length,
            "least gamma / (F/L)": c.applied.min() / u.density,
            "sample u / (F/L)": c.sample_u / u.density,
            "QP statuses": np.array(sorted(set(c.sample_info["status"].tolist()))),
            "QP iterations": c.sample_info["iterations"].sum()}


def allocation_figures(s, u: Units) -> dict:
    """Least moves along the self-stresses for 12 commands in [1, 40] N/m bounds."""
    stress = self_stress(s, gamma_min=1.0 * u.density, gamma_max=40.0 * u.density)
    base, rng = np.full(4, 10.0 * u.density), np.random.default_rng(3)
    out = [stress.allocate(rng.normal(0.0, 15.0, 4) * u.density, base) for _ in range(12)]
    return {"command / (F/L)": np.array([a.command for a in out]) / u.density,
            "margin / (F/L)": np.array([a.margin for a in out]) / u.density,
            "feasible": np.array([a.feasible for a in out]),
            "solver": " ".join(a.solver for a in out)}


def tip_path(structure, u: Units):
    """The T-bar's tips from height C to 3 m (in L), bars kept (5 L)."""
    def geometry(s):
        z = (C + s * (3.0 - C)) * u.length
        x = np.sqrt((5.0 * u.length) ** 2 - z * z)
        N = structure.nodes.copy()
        N[2], N[3] = [x, 0.0, z], [C * u.length - x, 0.0, z]
        return N
    return geometry


def shape_figures(s, u: Units, closed_loop=False) -> dict:
    """shape_change of the T-bar's tips (5 points, 2 designs, 4 s), verified over 6 s."""
    change = tc.shape_change(s, tip_path(s, u), 4.0 * u.time, points=5, designs=2,
                             gamma_min=10.0 * u.density)
    path = change.path
    force = 10.0 * u.force
    out = {"path gamma / (F/L)": path.gamma / u.density,
           "path residual / F": path.residual.max() / force,
           "poles * T": np.sort_complex(np.concatenate(change.E)) * u.time}
    if closed_loop:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)   # no failed correction
            r = tc.verify_shape_change(change, t_eval=np.linspace(0.0, 6.0, 121) * u.time)
        out.update({"max tracking error / L": r.max_tracking_error / u.length,
                    "final tracking error / L": r.final_tracking_error / u.length,
                    "least gamma / (F/L)": r.least_force_density / u.density,
                    "final static residual / F": r.final_static_residual / force})
    return out


# ---- the comparisons -----------------------------------------------------------------------

_REFERENCE = {}


def reference(name, figures, *args):
    if name not in _REFERENCE:
        _REFERENCE[name] = figures(*args, Units())
    return _REFERENCE[name]


def check(got: dict, want: dict, rtol: float, loose: dict | None = None) -> None:
    """Every figure equal: exact for integers, flags and names; floats to `rtol` of the
    figure's largest entry (or `loose[name]` for the figures named there)."""
    for name, w in want.items():
        g, tol = got[name], (loose or {}).get(name, rtol)
        if isinstance(w, str) or np.asarray(w).dtype.kind in "biu":
            assert np.array_equal(g, w), f"{name}: {g} != {w}"
        else:
            scale = np.abs(w).max()
            assert np.shape(g) == np.shape(w), name
            assert np.abs(np.asarray(g) - w).max() <= tol * scale, \
                f"{name}: off by {np.abs(np.asarray(g) - w).max() / scale:.3g} relative"


CASES = [(scaling, s) for scaling in SCALINGS for s in FACTORS]


@pytest.mark.parametrize("scaling, s", CASES)
def test_sensors_and_output_matrices(scaling, s):
    want = reference("sensors", sensor_figures, tbar())
    got = sensor_figures(scaled(tbar(), scaling, s), units(scaling, s))
    # closed-form Jacobians: only the rounding of the scaled inputs (measured 1e-15)
    check(got, want, 1e-14)


@pytest.mark.parametrize("scaling, s", CASES)
def test_sampled_loop_zoh_dlqr_and_gain_margin(scaling, s):
    want = reference("sampled", sampled_figures, tbar())
    got = sampled_figures(scaled(tbar(), scaling, s), units(scaling, s))
    # the designs are Riccati and expm solutions (measured 6e-16); the loop runs to the
    # integrator's tolerance (measured 2e-8 on q, 3e-11 on u); the gain margin is bisected to
    # 1e-3 relative (measured equal). The step count is simulate()'s own: 40, 40, 45 (the
    # plain T-bar without controller: 22, 21 + 2 rejected, 25), not the loop's
    check(got, want, 5e-15, loose={"loop q / L": 2e-7, "loop sample u / (F/L)": 2e-10,
                                   "gain margin": 2e-3, "loop accepted steps": 0.2})


@pytest.mark.parametrize("scaling, s", CASES)
def test_estimation_observability_and_placement(scaling, s):
    want = reference("estimation", estimation_figures, tbar())
    got = estimation_figures(scaled(tbar(), scaling, s), units(scaling, s))
    # Riccati and Lyapunov solutions, solved in scaled units (measured 1e-13, the filter's
    # poles 1e-9: eigenvalues of a non-normal A - L C)
    check(got, want, 1e-10, loose={"filter poles * T": 1e-8})


@pytest.mark.parametrize("scaling, s", CASES)
def test_tension_bounded_mpc(scaling, s):
    want = reference("mpc", mpc_figures, tbar())
    got = mpc_figures(scaled(tbar(), scaling, s), units(scaling, s))
    # the same QPs (the same OSQP iterations) in a loop at the integrator's tolerance
    # (measured 7e-7 on the least force density)
    check(got, want, 5e-6)


@pytest.mark.parametrize("scaling, s", CASES)
def test_self_stress_allocation(scaling, s):
    want = reference("allocation", allocation_figures, tbar())
    got = allocation_figures(scaled(tbar(), scaling, s), units(scaling, s))
    # a least-distance program solved exactly (measured 4e-15)
    check(got, want, 4e-14)


@pytest.mark.parametrize("scaling, s", CASES)
def test_shape_path_and_designs(scaling, s):
    want = reference("shape", shape_figures, tbar(False))
    got = shape_figures(scaled(tbar(False), scaling, s), units(scaling, s))
    # min-norm prestress (a QP) and LQR designs (measured 2e-11 on the poles); the residual
    # is rounding (measured 1e-15 to 4e-15 of the prestress force)
    check(got, want, 2e-10, loose={"path residual / F": np.inf})
    assert got["path residual / F"] <= 1e-13


@pytest.mark.parametrize("scaling, s", CASES)
def test_shape_change_closed_loop(scaling, s):
    if "shape loop" not in _REFERENCE:
        _REFERENCE["shape loop"] = shape_figures(tbar(False), Units(), True)
    want = _REFERENCE["shape loop"]
    got = shape_figures(scaled(tbar(False), scaling, s), units(scaling, s), True)
    # the nonlinear run at the integrator's tolerance (measured 4e-8 on the largest error,
    # 2e-5 on the final one and the final residual, both near the settling's end)
    check(got, want, 2e-10, loose={"path residual / F": np.inf, "max tracking error / L": 4e-7,
                                   "final tracking error / L": 2e-4,
                                   "final static residual / F": 2e-4})


# ---- the table -----------------------------------------------------------------------------


def _show(value) -> str:
    if isinstance(value, str):
        return value[:22]
    a = np.asarray(value)
    if a.size == 1:
        return f"{a.item():.10g}" if a.dtype.kind == "f" else str(a.item())
    if a.dtype.kind in "biu":
        return str(a.tolist())[:22]
    return f"|.|max {np.abs(a).max():.10g}"


def main():
    features = {"sensors": (sensor_figures, True), "sampled": (sampled_figures, True),
                "estimation": (estimation_figures, True), "mpc": (mpc_figures, True),
                "allocation": (allocation_figures, True),
                "shape": (lambda st, u: shape_figures(st, u, "--slow" in sys.argv), False)}
    scaling = "similar" if "--similar" in sys.argv else "with_scale"
    print(f"Scale-invariant figures of the T-bar, scaled by {scaling}; the largest relative "
          f"difference to scale 1 in the last column")
    print(f"{'feature':<11}{'figure':<36}{'s = 1':>24}{'s = 1e-3':>24}{'s = 1e3':>24}"
          f"{'max rel diff':>14}")
    for feature, (fn, eq) in features.items():
        rows = [fn(scaled(tbar(eq), scaling, s), units(scaling, s)) for s in (1.0, *FACTORS)]
        for name, w in rows[0].items():
            if isinstance(w, str) or np.asarray(w).dtype.kind in "biu":
                diff = "same" if all(np.array_equal(r[name], w) for r in rows) else "DIFFERS"
            else:
                d = max(np.abs(np.asarray(r[name]) - w).max() for r in rows[1:])
                diff = f"{d / max(np.abs(w).max(), 1e-300):.2e}"
            print(f"{feature:<11}{name:<36}" + "".join(f"{_show(r[name]):>24}" for r in rows)
                  + f"{diff:>14}")


if __name__ == "__main__":
    main()
