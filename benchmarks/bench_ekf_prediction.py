"""The extended Kalman filter's one-period prediction against the simulator (issue 30, item 2).

The EKF predicts ``x_k+1|k`` with the rigid-bar model and the commanded strings' forces; the
simulator integrates the same model with the command held over the period. Both should apply the
same law: the command clipped to ``[0, gamma_max]`` and the damper of a commanded string switched
on while the string pulls (``tenscontrol.mechanics.actuation``). This script starts the damped
T-bar (``catalog.tbar("stedy", damping=DAMPING)`` at its 10 N/m equilibrium, every string
commanded) from moving states on the bar lengths, holds a command u over one period in both, and
prints the largest difference of the end states (positions [m], velocities [m/s]).

The commands: string 1 driven slack (u = -1e3 N/m, so the kernels' damper of a taut string
must be taken out), string 2 driven hard, the others a few N/m (string 0 joins the two fixed
nodes). ``substeps`` is the EKF's
Runge-Kutta steps per period: with many, what remains is the model's difference, not the
integration error (the simulator runs at rtol = atol = 1e-12).

Run: PYTHONPATH=. python benchmarks/bench_ekf_prediction.py [--period 0.005] [--damping 10]
(a few seconds once the kernels are compiled)
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np

import tenscontrol as tc
from tenscontrol.estimation.ekf import extended_kalman
from tenscontrol.mechanics.sensors import sensors


class HeldCommand(tc.Controller):
    """A continuous controller that commands the constant u (the hold of one period; the base
    class gives a static law's initial state and state derivative)."""

    def __init__(self, strings, gamma_ref, kind, u):
        self.strings, self.gamma_ref, self.kind, self.u = strings, gamma_ref, kind, u

    def force_densities(self, t, q, qd, xc):
        return self.u


def damped_tbar(damping: float):
    """The T-bar at its 10 N/m equilibrium with string dampers c = `damping` [N s/m]."""
    return tc.equilibrium(tc.catalog.tbar("stedy", damping=damping), gamma_min=10.0).structure


def moving_state(ekf, seed: int, spread: float = 0.2, speed: float = 2.0) -> np.ndarray:
    """A state on the bar lengths: displacements O(spread) [m], velocities O(speed) [m/s]."""
    s = ekf.structure
    rng = np.random.default_rng(seed)
    nq = 3 * s.n_nodes
    x = np.concatenate([s.nodes.reshape(-1), np.zeros(nq)])
    x[ekf.free] += np.r_[spread * rng.standard_normal(ekf.free.size // 2),
                         speed * rng.standard_normal(ekf.free.size // 2)]
    return ekf.project(x)


def prediction_error(structure, x, u, kind: str, period: float, substeps: int) -> tuple:
    """(max |dq| [m], max |dqd| [m/s]) between the EKF's prediction of x under the held u and
    the simulator's run of one period."""
    ss = sensors(structure, string_lengths=range(structure.n_strings), std=1e-3)
    strings = np.arange(structure.n_strings)
    gamma_ref = np.full(strings.size, 10.0)
    ekf = dataclasses.replace(extended_kalman(ss, period, process_noise=1.0), strings=strings,
                              gamma_ref=gamma_ref, kind=kind, substeps=substeps)
    predicted = ekf.propagate(x, u, u)
    nq = x.size // 2
    start = structure.with_nodes(x[:nq].reshape(-1, 3))
    traj = tc.simulate(start, period, t_eval=[0.0, period], qd=x[nq:], rtol=1e-12, atol=1e-12,
                       controller=HeldCommand(strings, gamma_ref, kind, np.asarray(u, float)))
    q, qd = traj.nodes[-1].reshape(-1), traj.velocities[-1].reshape(-1)
    return float(np.abs(predicted[:nq] - q).max()), float(np.abs(predicted[nq:] - qd).max())


COMMAND = np.array([3.0, -1e3, 40.0, -2.0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--period", type=float, default=0.005)
    parser.add_argument("--damping", type=float, default=1.0)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    s = damped_tbar(args.damping)
    ekf = extended_kalman(sensors(s, string_lengths=[0], std=1e-3), args.period,
                          process_noise=1.0)
    print(f"T-bar, string dampers c = {args.damping:g} N s/m, period {args.period:g} s, "
          f"u = {COMMAND.tolist()} N/m")
    print(f"{'kind':>8} {'seed':>4} {'substeps':>8} {'max |dq| [m]':>13} {'max |dqd| [m/s]':>16}")
    for kind in ("passive", "control"):
        for seed in range(args.seeds):
            x = moving_state(ekf, seed)
            for substeps in (1, 20):
                dq, dv = prediction_error(s, x, COMMAND, kind, args.period, substeps)
                print(f"{kind:>8} {seed:>4} {substeps:>8} {dq:>13.3e} {dv:>16.3e}")


if __name__ == "__main__":
    main()
