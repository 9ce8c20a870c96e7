"""Tension-bounded MPC against the README's LQR on the T-bar doublet, and QP time on the ball
(issue 23). Needs ``tenscontrol[mpc]`` (OSQP).

T-bar: the README's design (passive model, outputs x and z of nodes 2 and 3,
``lqr(effort=1e-2)``, continuous) and ``mpc(model, 0.005, horizon=10, gamma_min=1.0,
effort=1e-2)`` (200 Hz, the same weights) on the nonlinear rigid-bar model under the README's
doublet on node 2 along z (half period 1 s, 4 s simulated). The amplitude a* is the smallest at
which the LQR lets a string go slack (bisection to 0.25 N); the table has a* and 2 a*. Columns:
peak of the outputs [m], least applied force density over the commanded strings [N/m], total
slack and saturated time over the strings [s], and the QP time per step: OSQP's own run time
(wall clock) median and max, and the CPU time of the whole update (time.process_time) median
and max [ms]; then the share of QPs solved (OSQP status 1 or 2), the number stopped at the
iteration cap (status 7: the projected iterate was used) and OSQP's iterations per QP.

Ball: ``mpc`` on the ball (32 commanded strings, node 12's coordinates as outputs, 200 Hz,
gamma_min 1 N/m) under a 200 N doublet on node 12 along z (half period 0.5 s, 1.5 s), for two
horizons.

Run: ``python benchmarks/bench_mpc.py``
"""

import numpy as np

import tenscontrol as tc

HEADER = (f"{'case':>22} {'peak [m]':>10} {'min gamma':>10} {'slack [s]':>9} {'sat. [s]':>8} "
          f"{'QP med [ms]':>11} {'QP max [ms]':>11} {'CPU med':>8} {'CPU max':>8}")


def row(name, traj, outputs):
    c = traj.control
    y = np.array([outputs(q) for q in traj.nodes.reshape(traj.t.size, -1)])
    line = (f"{name:>22} {np.abs(y).max():>10.4e} {c.applied.min():>10.4g} "
            f"{c.slack_time.sum():>9.3g} {c.saturated_time.sum():>8.3g}")
    info = getattr(c, "sample_info", {})
    if "solve_time" in info:
        qp, cpu = 1e3 * info["solve_time"], 1e3 * info["cpu_time"]
        solved = np.isin(info["status"], (1, 2)).mean()
        capped = int(np.count_nonzero(info["status"] == 7))
        line += (f" {np.median(qp):>11.3f} {qp.max():>11.3f} {np.median(cpu):>8.3f} "
                 f"{cpu.max():>8.3f}  solved {100 * solved:.0f} %, at the iteration cap "
                 f"{capped}, iterations median {np.median(info['iterations']):.0f} max "
                 f"{info['iterations'].max()}")
    else:
        line += f" {'-':>11} {'-':>11} {'-':>8} {'-':>8}"
    print(line)


def tbar():
    s = tc.equilibrium(tc.catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
    sel = tc.Selection(nodes=[2, 3], axes="xz")
    model = tc.linearize(s, kind="passive", outputs=sel)
    lqr = tc.lqr(model, effort=1e-2).controller
    outputs = tc.measurement(s, sel)
    t = np.linspace(0.0, 4.0, 801)

    def run(controller, amplitude):
        return tc.simulate(s, 4.0, loads=tc.doublet(s, tc.Selection(2, "z"), amplitude),
                           controller=controller, t_eval=t, max_step=5e-3)

    lo, hi = 0.0, 40.0                      # 40 N: slack (checked below)
    assert run(lqr, hi).control.slack_time.sum() > 0
    while hi - lo > 0.25:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if run(lqr, mid).control.slack_time.sum() > 0 else (mid, hi)
    print(f"T-bar: the README's LQR first lets a string go slack at a doublet of a* = {hi:.2f} N"
          f" (taut at {lo:.2f} N)")
    print(HEADER)
    mpc = tc.mpc(model, 0.005, horizon=10, gamma_min=1.0, effort=1e-2).controller
    for a in (hi, 2 * hi):
        row(f"LQR {a:.2f} N", run(lqr, a), outputs)
        row(f"MPC {a:.2f} N", run(mpc, a), outputs)


def ball():
    b = tc.equilibrium(tc.catalog.ball(damping=1.0), gamma_min=40.0).structure
    sel = tc.Selection(nodes=[12])
    model = tc.linearize(b, kind="passive", outputs=sel)
    load = tc.doublet(b, tc.Selection(12, "z"), 200.0, 0.5)
    t = np.linspace(0.0, 1.5, 301)
    print(f"ball: {len(b.actuated_strings)} commanded strings, 200 N doublet on node 12 along z")
    print(HEADER)
    row("LQR", tc.simulate(b, 1.5, loads=load, controller=tc.lqr(model, effort=1e-2).controller,
                           t_eval=t, max_step=5e-3), tc.measurement(b, sel))
    for horizon in (3, 5):
        mpc = tc.mpc(model, 0.005, horizon=horizon, gamma_min=1.0, effort=1e-2).controller
        row(f"MPC horizon {horizon}", tc.simulate(b, 1.5, loads=load, controller=mpc, t_eval=t,
                                                  max_step=5e-3), tc.measurement(b, sel))


if __name__ == "__main__":
    tbar()
    ball()
