"""The extended Kalman filter in the sampled closed loop (issue 23, item 3): where it pays.

The T-bar (c = 1 N s/m, prestress >= 10 N/m), its 4 string lengths (std 1 mm) and 2 bar
gyroscopes (std 0.01 rad/s) read at 200 Hz, the 4 strings commanded. Two sampled controllers
with the same discrete LQR gain, readings and process noise (W = 4 N^2 s):
``discrete_lqg`` (DiscreteLQG: the linear Kalman filter on the reduced coordinates) and
``extended_lqg`` (ExtendedLQG: the EKF on the nonlinear rigid-bar model). Each runs in its own
nonlinear closed loop (``simulate(..., controller=...)``), the T-bar kicked at t = 0 (free
velocities v [1, -1, 1, 1] m/s) so that the bars swing from a fraction of a degree to tens of
degrees.

1. Estimate error: RMS over the samples and the free coordinates of the predicted position
   ``q_k|k-1 - q(t_k)``, relative to the bar length (5 m); the swing (largest bar rotation);
   the peak free-node deflection relative to the bar length.
2. CPU time of one controller update (``trajectory.control.update_time``,
   time.process_time: read the sensors, correct, command, predict), mean and max, against
   the 5 ms sample period; the machine's load is printed with it.
3. The analytic Jacobians against central differences (step 1e-6 relative) at a moving
   state with commands and a delay: the prediction's Runge-Kutta map, the projection.

Run: PYTHONPATH=. python benchmarks/bench_ekf.py [--kicks 0.03,0.3,1,3] [--t-final 2]
(about a minute: the EKF's update is Python, four linearizations per period)
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time

import numpy as np

import tenscontrol as tc

PERIOD = 1.0 / 200.0
PROCESS_NOISE = 4.0


def print_table(head, rows) -> None:
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    for row in [head, ["-" * w for w in widths]] + rows:
        print("  ".join(str(x).rjust(w) for x, w in zip(row, widths)))


def tbar():
    s = tc.equilibrium(tc.catalog.tbar(damping=1.0), gamma_min=10.0).structure
    ss = (tc.sensors(s, string_lengths=range(s.n_strings), std=1e-3, rate=1 / PERIOD)
          + tc.sensors(s, bar_rates=range(s.n_bars), std=1e-2, rate=1 / PERIOD))
    model = tc.linearize(s)
    return (s, tc.discrete_lqg(model, ss, PERIOD, process_noise=PROCESS_NOISE).controller,
            tc.extended_lqg(model, ss, PERIOD, process_noise=PROCESS_NOISE).controller)


def predicted_positions(s, controller, states) -> np.ndarray:
    """q_k|k-1 (ns, nq) from a sampled run's controller states."""
    nq = 3 * s.n_nodes
    if isinstance(controller, tc.estimation.ExtendedLQG):
        return controller.estimates(states)[:, :nq]
    r = controller.kalman.Phi.shape[0]
    return states[:, :r] @ controller.kalman.basis[:nq, :r].T + s.nodes.reshape(-1)


def run(s, controller, v, t_final):
    """(RMS estimate error / L, swing [deg], peak deflection / L, update times [s])."""
    nq, free, L = 3 * s.n_nodes, s.free_coordinates, s.bar_lengths.max()
    qd0 = np.zeros(nq)
    qd0[free] = v * np.array([1.0, -1.0, 1.0, 1.0])
    t = np.arange(0.0, t_final - PERIOD / 2, PERIOD)           # the sample instants
    traj = tc.simulate(s, t_final, qd=qd0, t_eval=t, controller=controller)
    rec = traj.control
    Q = traj.nodes.reshape(t.size, -1)
    est = predicted_positions(s, controller, rec.sample_states)
    rms = np.sqrt(np.mean((est - Q)[:, free] ** 2)) / L
    i, j = s.bars[0].nodes
    b = traj.nodes[:, j] - traj.nodes[:, i]
    cos = b @ b[0] / (np.linalg.norm(b, axis=1) * np.linalg.norm(b[0]))
    swing = float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))).max())
    peak = np.abs(Q - s.nodes.reshape(-1))[:, free].max() / L
    return rms, swing, peak, rec.update_time


def table_estimates(s, lin, ext, kicks, t_final) -> None:
    print(f"\n1-2. T-bar kicked, {t_final:g} s in closed loop at {1 / PERIOD:g} Hz: predicted "
          "position error RMS / bar length, DiscreteLQG (linear KF) against ExtendedLQG (EKF); "
          "CPU per update [ms]")
    rows = []
    for v in kicks:
        e_lin, swing, peak_lin, cpu_lin = run(s, lin, v, t_final)
        e_ext, _, peak_ext, cpu_ext = run(s, ext, v, t_final)
        rows.append([f"{v:g}", f"{swing:.2f}", f"{peak_lin:.3e}", f"{peak_ext:.3e}",
                     f"{e_lin:.3e}", f"{e_ext:.3e}", f"{e_lin / e_ext:.2f}",
                     f"{1e3 * cpu_lin.mean():.2f}",
                     f"{1e3 * cpu_ext.mean():.2f} / {1e3 * cpu_ext.max():.1f}"])
    print_table(["kick [m/s]", "swing [deg]", "peak/L lin", "peak/L EKF", "RMS err/L lin",
                 "RMS err/L EKF", "lin / EKF", "lin CPU", "EKF CPU mean / max"], rows)
    print(f"(sample period {1e3 * PERIOD:g} ms; load average {os.getloadavg()[0]:.2f} on "
          f"{os.cpu_count()} cores)")


def central(f, x, free):
    cols = []
    for i in free:
        h = 1e-6 * max(1.0, abs(x[i]))
        e = np.zeros_like(x)
        e[i] = h
        cols.append((f(x + e) - f(x - e))[free] / (2 * h))
    return np.array(cols).T


def table_jacobians(s, ext) -> None:
    print("\n3. Analytic Jacobians against central differences (max |error| / max |entry|), "
          "T-bar at a moving state (O(0.3 m), O(2 m/s)), random commands")
    rows = []
    for kind in ("passive", "control"):
        f = dataclasses.replace(ext.kalman, kind=kind, delay=0.002, substeps=2)
        rng = np.random.default_rng(3)
        x = np.concatenate([s.nodes.reshape(-1), np.zeros(3 * s.n_nodes)])
        x[f.free] += np.r_[0.3 * rng.standard_normal(f.free.size // 2),
                           2.0 * rng.standard_normal(f.free.size // 2)]
        x = f.project(x)
        up, u = 5.0 * rng.standard_normal(4), 5.0 * rng.standard_normal(4)
        Fx = f.transition(x, up, u)
        fd = central(lambda v: f.propagate(v, up, u), x, f.free)
        D = f.projection_jacobian(x)
        fdp = central(f.project, x, f.free)
        rows.append([kind, f"{np.abs(Fx - fd).max() / np.abs(fd).max():.1e}",
                     f"{np.abs(D - fdp).max() / np.abs(fdp).max():.1e}"])
    print_table(["kind", "prediction dF/dx", "projection"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kicks", default="0.03,0.3,1,3", help="kick velocities [m/s]")
    parser.add_argument("--t-final", type=float, default=2.0, help="run length [s]")
    args = parser.parse_args()
    s, lin, ext = tbar()
    table_estimates(s, lin, ext, [float(v) for v in args.kicks.split(",")], args.t_final)
    cpu = time.process_time()
    table_jacobians(s, ext)
    print(f"({time.process_time() - cpu:.1f} s CPU)")


if __name__ == "__main__":
    main()
