"""The tension-bounded MPC's floor between samples (issue 30, item 3). Needs OSQP.

For the T-bar (``tc.catalog.tbar("stedy", damping=1.0)`` after ``tc.equilibrium(...,
gamma_min=10)``, outputs x, z of nodes 2 and 3, doublet on node 2 along z) and the 3-prism
(``tc.catalog.prism(3, damping=1.0)`` after the same equilibrium, outputs the top nodes 3-5,
doublet on node 3 along x), both kinds ("passive", "control"): the doublet amplitude a* at
which the continuous ``lqr(effort=1e-2)`` first lets a string go slack (bisection to 0.5 N,
half period 1 s), then ``mpc(model, 0.005, horizon=10, gamma_min=5, effort=1e-2)`` (and with a
computation delay of half a period) under the doublet of 2 a*, 2.5 s on the nonlinear rigid-bar
model. Output on a dense grid of 20 points per period (the integrator's dense output), so that
"least applied" is the least applied force density of any commanded string over the whole
run, between the samples too; "at samples" only at the sample instants. QP: OSQP's own run
time (wall clock) median and max; CPU: the whole update (time.process_time) median and max;
"soft": the share of samples at which a soft row (moves 2..N) was violated; statuses by count.

Run: ``python benchmarks/bench_mpc_floor.py [MARGIN_CAP]`` (the MPC's ``margin_cap``, default
the library's; the same script runs on the code before the change: the options it lacks are
left out)
"""

import inspect
import sys

import numpy as np

import tenscontrol as tc

PERIOD, GAMMA_MIN, T_FINAL, DENSE = 0.005, 5.0, 2.5, 20


def structures():
    tbar = tc.equilibrium(tc.catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
    prism = tc.equilibrium(tc.catalog.prism(3, damping=1.0), gamma_min=10.0).structure
    return {"T-bar": (tbar, tc.Selection(nodes=[2, 3], axes="xz"), tc.Selection(2, "z")),
            "3-prism": (prism, tc.Selection(nodes=[3, 4, 5]), tc.Selection(3, "x"))}


def critical(s, model, where):
    """The least doublet amplitude [N] at which the continuous LQR lets a string go slack."""
    lqr = tc.lqr(model, effort=1e-2).controller
    t = np.linspace(0.0, T_FINAL, 501)

    def slack(a):
        run = tc.simulate(s, T_FINAL, loads=tc.doublet(s, where, a), controller=lqr, t_eval=t,
                          max_step=5e-3)
        return run.control.slack_time.sum() > 0
    lo, hi = 0.0, 10.0
    while not slack(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 0.5:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if slack(mid) else (mid, hi)
    return hi


def row(name, kind, amplitude, delay, run):
    c, ts = run.control, run.t
    at_samples = np.isclose((ts / PERIOD) % 1, 0, atol=1e-6) | np.isclose((ts / PERIOD) % 1, 1)
    info = c.sample_info
    qp, cpu = 1e3 * info["solve_time"], 1e3 * info["cpu_time"]
    soft = (info["soft_active"] > 0).mean() if "soft_active" in info else float("nan")
    status, count = np.unique(info["status"], return_counts=True)
    statuses = ", ".join(f"{s}: {n}" for s, n in zip(status.tolist(), count))
    print(f"{name:>8} {kind:>8} {amplitude:>7.1f} {delay:>7.4f} {c.applied.min():>9.4f} "
          f"{c.applied[at_samples].min():>9.4f} {np.median(qp):>7.3f} {qp.max():>7.3f} "
          f"{np.median(cpu):>7.3f} {cpu.max():>7.3f} {100 * soft:>6.1f}%  {statuses}")


def main():
    options = inspect.signature(tc.mpc).parameters
    cap = {"margin_cap": float(sys.argv[1])} if len(sys.argv) > 1 else {}
    print(f"gamma_min = {GAMMA_MIN} N/m, period {PERIOD} s, horizon 10, doublet 2 a*"
          + (f", margin_cap {cap['margin_cap']:g}" if cap else ""))
    print(f"{'case':>8} {'kind':>8} {'2a* [N]':>7} {'delay':>7} {'least':>9} {'at smpl':>9} "
          f"{'QP med':>7} {'QP max':>7} {'CPU med':>7} {'CPU max':>7} {'soft':>7}  statuses")
    for name, (s, outputs, where) in structures().items():
        for kind in ("passive", "control"):
            model = tc.linearize(s, kind=kind, outputs=outputs)
            amplitude = 2 * critical(s, model, where)
            delays = (0.0, 0.5 * PERIOD) if "delay" in options else (0.0,)
            for delay in delays:
                extra = {"delay": delay} if "delay" in options else {}
                m = tc.mpc(model, PERIOD, horizon=10, gamma_min=GAMMA_MIN, effort=1e-2, **extra,
                           **cap)
                t = np.linspace(0.0, T_FINAL, int(round(T_FINAL / PERIOD)) * DENSE + 1)
                run = tc.simulate(s, T_FINAL, loads=tc.doublet(s, where, amplitude),
                                  controller=m, t_eval=t, max_step=5e-3)
                row(name, kind, amplitude, delay, run)


if __name__ == "__main__":
    main()
