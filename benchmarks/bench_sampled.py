"""A continuous LQR sampled at 1 kHz, 200 Hz and 50 Hz against the continuous loop (issue 23).

The README's T-bar design (passive model, outputs x and z of nodes 2 and 3, ``lqr(effort=1e-2)``)
discretized by :func:`tenscontrol.discretize` (sample and hold, no delay), closed on the
nonlinear rigid-bar model under the README's 10 N doublet on node 2 along z (half period 1 s,
5 s simulated). Figures: the closed-loop peak of the outputs; the spectral radius of the
discrete loop around the ZOH model of the minimal realization, its decay rate ln(rho)/T
against the continuous loop's slowest pole; the gain margin (largest loop gain factor that
keeps the discrete loop stable, scanned up to 100); CPU time of the nonlinear run.

Run: ``python benchmarks/bench_sampled.py``
"""

import time

import numpy as np

import tenscontrol as tc


def main():
    tbar = tc.equilibrium(tc.catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
    outputs = tc.Selection(nodes=[2, 3], axes="xz")
    design = tc.lqr(tc.linearize(tbar, kind="passive", outputs=outputs), effort=1e-2)
    load = tc.doublet(tbar, tc.Selection(2, "z"), 10.0)
    meas = tc.measurement(tbar, outputs)
    t = np.linspace(0.0, 5.0, 1001)

    def run(controller):
        start = time.process_time()
        traj = tc.simulate(tbar, 5.0, loads=load, controller=controller, t_eval=t, max_step=5e-3)
        cpu = time.process_time() - start
        y = np.array([meas(q) for q in traj.nodes.reshape(t.size, -1)])
        return np.abs(y).max(), traj.control.slack_time.sum(), cpu

    peak_c, slack_c, cpu_c = run(design.controller)
    print(f"{'loop':>12} {'peak [m]':>11} {'vs cont.':>9} {'rho':>9} {'ln(rho)/T':>10} "
          f"{'gain margin':>11} {'slack [s]':>9} {'CPU [s]':>8}")
    print(f"{'continuous':>12} {peak_c:>11.5e} {'1.000':>9} {'-':>9} "
          f"{design.E.real.max():>10.4f} {'inf (LQR)':>11} {slack_c:>9.3g} {cpu_c:>8.2f}")
    for rate in (1000.0, 200.0, 50.0):
        law = tc.discretize(design.controller, 1.0 / rate)
        cl = tc.discrete_closed_loop(design.minimal, law)
        rho = float(np.abs(np.linalg.eigvals(np.asarray(cl.A))).max())
        margin = tc.gain_margin(design.minimal, law)
        peak, slack, cpu = run(law)
        gm = f">{margin:.0f}" if margin >= 100 else f"{margin:.3g}"
        print(f"{rate:>9.0f} Hz {peak:>11.5e} {peak / peak_c:>9.4f} {rho:>9.6f} "
              f"{np.log(rho) * rate:>10.4f} {gm:>11} {slack:>9.3g} {cpu:>8.2f}")


if __name__ == "__main__":
    main()
