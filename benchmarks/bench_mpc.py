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

Floor (issue 30, item 3: guarantees between samples): the T-bar (as above, doublet on node 2
along z) and the 3-prism (``catalog.prism(3, damping=1.0)`` brought to equilibrium with
``gamma_min=10``, outputs the top nodes 3-5, doublet on node 3 along x), each with
``kind="passive"`` and ``kind="control"``: the doublet amplitude a* at which the continuous
``lqr(effort=1e-2)`` first lets a string go slack (bisection to 0.5 N, half period 1 s, 2.5 s),
then ``mpc(model, 0.005, horizon=10, gamma_min=5, effort=1e-2)`` without delay and with a
computation delay of half a period in the model, under the doublet of 2 a*, 2.5 s; the
passive cases also with ``expected_load=ExpectedLoad(2 a*, 1)`` ("margin" [N]: the floor inside
the hold raised for every constant load of that 2-norm, to first order). Output on
20 points per period, so that "least" is the least applied force density of any commanded
string over the whole run, between the samples too, and at each switching instant with the
hold that ends there as well as the one that starts ("at samples": at the sample instants,
the command that starts there; "below": the time any string spends below gamma_min [s]);
QP: OSQP's run time (wall clock) median and max [ms], with "late" the QPs that took longer than the delay (the time the
command has; no time limit is set, so the run does not depend on the machine); soft: the
share of samples with a soft row (moves 2..N) relaxed; held: the samples that held the last
command (a failed QP or an infeasible first move); peak: the largest displacement of a free
coordinate from the rest shape [m]; then the statuses by name.

Run: ``python benchmarks/bench_mpc.py [tbar] [ball] [floor]`` (all three by default)
"""

import itertools
import sys

import numpy as np

import tenscontrol as tc
from tenscontrol.control.mpc import status_counts

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


PERIOD, FLOOR, T_FINAL, DENSE = 0.005, 5.0, 2.5, 20


def floor_cases():
    """(name, structure, outputs, doublet place) of the floor table."""
    tb = tc.equilibrium(tc.catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
    prism = tc.equilibrium(tc.catalog.prism(3, damping=1.0), gamma_min=10.0).structure
    return [("T-bar", tb, tc.Selection(nodes=[2, 3], axes="xz"), tc.Selection(2, "z")),
            ("3-prism", prism, tc.Selection(nodes=[3, 4, 5]), tc.Selection(3, "x"))]


def critical(s, model, where):
    """The least doublet amplitude [N] (to 0.5 N) at which the continuous LQR lets a string go
    slack."""
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


def held_to_the_end(run):
    """The applied force density (nt, nu) [N/m] with the command of the instant just before
    each output time: at a switching instant the hold that ends there (the record has the
    command that starts there). ``commanded - u`` is what u adds to (the elastic law from
    the simulated lengths, or gamma_ref)."""
    c, t = run.control, run.t
    starts = c.sample_times + c.delay
    before = np.maximum(np.searchsorted(starts, t - 1e-12, side="right") - 1, 0)
    held = np.where((starts[0] < t)[:, None], c.sample_u[before], 0.0)
    return np.clip(c.commanded - c.u + held, 0.0, None)


def floor_row(name, kind, amplitude, delay, run, margin, s):
    c, t = run.control, run.t
    # the largest displacement of any free coordinate from the structure's rest shape [m]
    peak = np.abs(run.nodes.reshape(t.size, -1) - s.nodes.reshape(-1))[:, s.free_coordinates].max()
    phase = (t / PERIOD) % 1
    at_samples = np.isclose(phase, 0, atol=1e-6) | np.isclose(phase, 1, atol=1e-6)
    # least over the run: at every output time, with the hold that ends there too
    applied = np.minimum(c.applied, held_to_the_end(run))
    below = (applied < FLOOR - 1e-9).any(axis=1).sum() * (t[1] - t[0])
    info = c.sample_info
    qp = 1e3 * info["solve_time"]
    late = int(np.count_nonzero(info["solve_time"] > delay)) if delay else "-"
    soft = 100 * (info["soft_active"] > 0).mean()
    statuses = ", ".join(f"{k}: {v}" for k, v in status_counts(info["status"]).items())
    held = int(info["held_last"].sum())
    print(f"{name:>8} {kind:>8} {amplitude:>7.2f} {1e3 * delay:>6.2f} {margin:>6} "
          f"{applied.min():>8.4f} "
          f"{FLOOR:>6g} {c.applied[at_samples].min():>8.4f} {below:>7.4f} {np.median(qp):>7.3f} "
          f"{qp.max():>7.3f} {late!s:>5} {soft:>5.1f}% {held:>4} {peak:>6.3f}  {statuses}")


def floor():
    print(f"floor: gamma_min {FLOOR:g} N/m, period {1e3 * PERIOD:g} ms, horizon 10, doublets "
          f"of 2 a*, {DENSE} points per period")
    print(f"{'case':>8} {'kind':>8} {'2a* [N]':>7} {'d [ms]':>6} {'margin':>6} {'least':>8} "
          f"{'floor':>6} {'at smpl':>8} {'below':>7} {'QP med':>7} {'QP max':>7} {'late':>5} "
          f"{'soft':>6} {'held':>4} {'peak':>6}  statuses")
    t = np.linspace(0.0, T_FINAL, int(round(T_FINAL / PERIOD)) * DENSE + 1)
    for name, s, outputs, where in floor_cases():
        for kind in ("passive", "control"):
            model = tc.linearize(s, kind=kind, outputs=outputs)
            amplitude = 2 * critical(s, model, where)
            # the passive rows also with the doublet's amplitude as the expected load (the
            # floor's margin inside the hold; kind="control" needs none)
            loads = (None, tc.ExpectedLoad(amplitude, 1.0)) if kind == "passive" else (None,)
            for expected, delay in itertools.product(loads, (0.0, 0.5 * PERIOD)):
                m = tc.mpc(model, PERIOD, horizon=10, gamma_min=FLOOR, effort=1e-2,
                           delay=delay, expected_load=expected).controller
                run = tc.simulate(s, T_FINAL, loads=tc.doublet(s, where, amplitude),
                                  controller=m, t_eval=t, max_step=5e-3)
                floor_row(name, kind, amplitude, delay, run,
                          "-" if expected is None else f"{expected.amplitude:.2f}", s)


def floor_prism4():
    """The floor table's passive rows on a structure issue 30 does not name: the 4-prism
    (doublet on top node 4 along x, outputs the top nodes), without and with the doublet's
    amplitude as the expected load, no delay."""
    s = tc.equilibrium(tc.catalog.prism(4, damping=1.0), gamma_min=10.0).structure
    where = tc.Selection(4, "x")
    model = tc.linearize(s, kind="passive", outputs=tc.Selection(nodes=[4, 5, 6, 7]))
    amplitude = 2 * critical(s, model, where)
    t = np.linspace(0.0, T_FINAL, int(round(T_FINAL / PERIOD)) * DENSE + 1)
    for expected in (None, tc.ExpectedLoad(amplitude, 1.0)):
        m = tc.mpc(model, PERIOD, horizon=10, gamma_min=FLOOR, effort=1e-2,
                   expected_load=expected).controller
        run = tc.simulate(s, T_FINAL, loads=tc.doublet(s, where, amplitude), controller=m,
                          t_eval=t, max_step=5e-3)
        floor_row("4-prism", "passive", amplitude, 0.0, run,
                  "-" if expected is None else f"{expected.amplitude:.2f}", s)


if __name__ == "__main__":
    parts = sys.argv[1:] or ["tbar", "ball", "floor"]
    for part in parts:
        {"tbar": tbar, "ball": ball, "floor": floor, "floor-4prism": floor_prism4}[part]()
