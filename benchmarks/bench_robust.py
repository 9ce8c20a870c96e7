"""Robust stability of LQR loops to uncertain string stiffness (issue 35, items 1-2).

    python benchmarks/bench_robust.py [--samples 1000] [--gain-samples 100] [--skip-nonlinear]
                                      [--curves] [--design-rounds 2]
                                      [--cases T-bar ball "48-bar tower"]

Cases (damping 1 N s/m on every string, passive linearization at the equilibrium, tc.lqr):
the T-bar (stedy, gamma_min 10 N/m, outputs x, z of nodes 2, 3, effort 1e-2) with each string's
stiffness its own parameter (+-50 %, prestress held); the ball (gamma_min 40 N/m, output node
12, default effort) with each string's stiffness and the 1 kg payload on node 12 (+-50 %); the
48-bar tower tc.catalog.prism_tower(16) (gamma_min 10 N/m, every node's position as output)
with one parameter scaling every string's stiffness (+-50 %): per-string parameters there
would be 96 real scalars, and one AB13MD call on a 96 x 96 matrix ran for more than 5 minutes,
so the tower is analysed with the exact one-parameter mu (the largest real eigenvalue of M).

Table 1 (per case): mu upper and lower bound at the peak and their gap, the peak frequency of
the upper bound and the frequency of the eigenvalue the lower bound's perturbation puts on the
axis, the margin (1 / max mu_upper, in units of the +-50 % ranges), |Re lambda| / ||A|| at the
lower bound's perturbation, the number of unstable loops among `--samples` uniform samples in
the box |delta| <= 0.99 margin, the largest H-inf gain d -> y among the first `--gain-samples` of
them, the worst gain found by tc.robust.worst_case_gain in the same box (vertex ascent from
delta = 0 and from the three worst samples), and the CPU seconds of the M-Delta form, the upper
bound sweep, the lower bound, the Monte Carlo and the worst-gain search. Table 2: the nonlinear
loop (tc.simulate, rigid bars, energy correction, the nominal LQR) on the worst-case structure
at 0.95 and 1.05 times delta* (the lower bound's perturbation, which sits at 1 / mu_lower of the
ranges; 1.01 instead of 1.05 when 1.05 is no structure), started with a small velocity along the
rightmost closed-loop mode, run 4 / |Re lambda| (at most 20 s) on 16 points per period of that
mode: the growth rate fitted to the speed envelope (log of each window's max speed against
time, 40 windows after the first tenth) against Re lambda at that delta; "bounded" if the last
window's envelope is below the first's, "diverging" if above twice it. A case
whose delta* is not a physical structure (a string stiffness at or below its force density,
k <= gamma*, or a mass <= 0) has no row: its loop is stable over every physical value.
With gravity, a changed payload also moves the equilibrium, which the frozen form leaves out:
the run then starts off its equilibrium as well. Every analysis runs in its default CPU budget
(a "partial" result says so in the table). With --curves, each case's upper and lower bound and
their gap at the frequencies of the top of the upper bound. Table 3: tc.robust.robust_lqr
(--design-rounds worst cases added) against the nominal LQR: the robust margins, the nominal H2
performance lost and the CPU. Table 4: the nonlinear response to a short doublet on the payload
(or last) node of the nominal LQR and of robust_lqr's gain, on the nominal structure and on the
nominal gain's worst case delta*: the rightmost linear eigenvalue, the peak deviation from the
nominal nodes and the speed left in the last 0.2 s (the nominal gain at delta* keeps an
undamped oscillation). Nothing asserts.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import tenscontrol as tc
from tenscontrol import robust

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_simulate import machine_info, print_table  # noqa: E402

SPREAD = 0.5                  # +-50 % stiffness
INSIDE = 0.99                 # Monte Carlo box, times the certified margin
NONLINEAR_FACTORS = (0.95, 1.05)
#: Run instead of 1.05 when 1.05 delta* is no structure (the tower: a stiffness there would be
#: below its force density; physical up to 1.026 delta*).
FALLBACK_FACTOR = 1.01
#: Initial velocity along the critical mode, relative to (largest bar length) x |lambda|: small
#: enough for the linear prediction, large enough to stand above the integrator's tolerance.
KICK = 1e-4
#: Linear growth (or decay) factor over the run, exp(|Re lambda| T): enough to tell the two apart.
GROWTH_EFOLDS = 4.0
#: Longest nonlinear run [s]: the ball's and the tower's stiff strings take small steps.
MAX_TIME = 20.0
#: Samples per period of the critical oscillation: the envelope (a window's max) is then within
#: 1 - cos(pi / 16) = 2 % of the true peak.
POINTS_PER_PERIOD = 16
#: Share of the run left out of the envelope fit (the other modes' transients, and with a changed
#: payload the move to the new equilibrium), and the number of windows fitted after it.
SKIP_SHARE, ENVELOPE_WINDOWS = 0.1, 40
#: Table 4's doublet [N, s], run length [s] and the tail [s] whose speed tells a decaying
#: response (robust gain, Re lambda < 0) from one left oscillating (the nominal gain at delta*,
#: Re lambda = 0).
DOUBLET_AMPLITUDE, DOUBLET_HALF_PERIOD, DOUBLET_TIME, DOUBLET_TAIL = 1.0, 0.05, 2.0, 0.2


def cases():
    tbar = tc.equilibrium(tc.catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
    ball = tc.equilibrium(tc.catalog.ball(damping=1.0), gamma_min=40.0).structure
    tower = tc.equilibrium(tc.catalog.prism_tower(16, damping=1.0), gamma_min=10.0).structure
    return [("T-bar", tbar, tc.Selection(nodes=[2, 3], axes="xz"), 1e-2,
             robust.string_stiffness(SPREAD)),
            ("ball", ball, tc.Selection(nodes=[12]), 1.0,
             robust.string_stiffness(SPREAD) + robust.point_masses(SPREAD)),
            ("48-bar tower", tower, None, 1.0, robust.string_stiffness(SPREAD, grouped=True))]


def cpu(f):
    t = time.process_time()
    out = f()
    return out, time.process_time() - t


def analyse(name, s, outputs, effort, parameters, samples, gain_samples):
    model = tc.linearize(s, kind="passive", outputs=outputs)
    design = tc.lqr(model, effort=effort)
    loop, t_lft = cpu(lambda: robust.uncertain_loop(model, design, parameters))
    r = robust.robust_stability(loop)
    if not r.complete:
        print(f"   {name}: {r.note}")
    mc = robust.monte_carlo(loop, samples, scale=INSIDE * r.margin, gains=False, seed=35)
    mg = robust.monte_carlo(loop, gain_samples, scale=INSIDE * r.margin, seed=35)
    worst = np.argsort(-mg.gains)[:3]
    wc = robust.worst_case_gain(loop, INSIDE * r.margin, starts=mg.deltas[worst])
    nominal = wc.nominal
    row = [name, f"{loop.n_parameters} ({sum(loop.blocks)})", f"{r.peak_upper:.5g}",
           f"{r.peak_lower:.5g}", f"{100 * r.gap:.2f}" + ("" if r.complete else " (partial)"),
           f"{r.peak_frequency:.4g}",
           f"{r.crossing_frequency:.4g}", f"{r.margin:.4g}", f"{r.axis_residual:.1e}",
           f"{mc.unstable}/{samples}", f"{nominal:.3g}", f"{np.max(mg.gains):.3g}",
           f"{wc.gain:.3g}", f"{t_lft:.2f}", f"{r.cpu['upper']:.2f}", f"{r.cpu['lower']:.2f}",
           f"{mc.cpu + mg.cpu:.2f}", f"{wc.cpu:.2f}"]
    return row, (name, s, design, loop, r, model, parameters)


def curves(name, r, top=12):
    """The bounds at the frequencies where the upper bound is highest."""
    k = np.sort(np.argsort(-r.mu_upper)[:top])
    rows = [[name, f"{r.frequencies[i]:.5g}", f"{r.mu_upper[i]:.5g}", f"{r.mu_lower[i]:.5g}",
             f"{100 * (1 - r.mu_lower[i] / r.mu_upper[i]):.1f}", "yes" if r.evaluated[i] else
             "no"] for i in k]
    print_table(["case", "w [rad/s]", "mu upper", "mu lower", "gap [%]", "AB13MD"], rows)


def design_row(name, model, design, parameters, rounds):
    rd, t = cpu(lambda: robust.robust_lqr(model, design, parameters, rounds=rounds))
    return [name, f"{rd.margins[0]:.4g}", " -> ".join(f"{m:.4g}" for m in rd.margins[1:]),
            f"{rd.chosen}", f"{rd.deltas.shape[0]}", f"{100 * rd.nominal_loss:.3g}",
            f"{rd.costs.max():.4g}", f"{t:.1f}"], rd


def doublet_rows(name, s, design, robust_design, loop, r, model, parameters):
    """Table 4's rows: the nonlinear doublet response of both gains on the nominal structure
    and on the nominal gain's worst case (loop.perturbed(delta*))."""
    rows = []
    loops = {"nominal LQR": loop,
             "robust_lqr": robust.uncertain_loop(model, robust_design, parameters)}
    node = s.n_nodes - 1 if not s.point_masses else s.point_masses[0].node
    for where, st, delta in (("nominal", s, np.zeros(loop.n_parameters)),
                             ("worst (delta*)", r.worst_structure, r.delta)):
        loads = tc.doublet(st, tc.Selection(nodes=[node], axes="z"), DOUBLET_AMPLITUDE,
                           DOUBLET_HALF_PERIOD)
        for label, d in (("nominal LQR", design), ("robust_lqr", robust_design)):
            re = np.linalg.eigvals(loops[label].closed_loop(delta)).real.max()
            n_t = int(DOUBLET_TIME * POINTS_PER_PERIOD * max(r.crossing_frequency, 1.0)
                      / (2 * np.pi)) + 1
            traj, t_sim = cpu(lambda: tc.simulate(st, DOUBLET_TIME, controller=d.controller,
                                                  loads=loads,
                                                  t_eval=np.linspace(0, DOUBLET_TIME, n_t)))
            dev = np.linalg.norm(traj.nodes - s.nodes, axis=2).max(axis=1)
            speed = np.linalg.norm(traj.velocities.reshape(n_t, -1), axis=1)
            tail = traj.t >= traj.t[-1] - DOUBLET_TAIL
            rows.append([name, where, label, f"{re:+.4f}", f"{dev.max():.4e}",
                         f"{speed[tail].max():.3e}", f"{t_sim:.1f}"])
    return rows


def envelope_rate(t, signal, skip=SKIP_SHARE, windows=ENVELOPE_WINDOWS):
    """Growth rate [1/s] of the envelope of an oscillating `signal`: the least-squares slope of
    log(max over each window) against the window's centre, after the first `skip` of the run
    (the other modes' transients). Also returns the envelope of the first and last window."""
    keep = t >= t[0] + skip * (t[-1] - t[0])
    chunks = np.array_split(np.flatnonzero(keep), windows)
    centres = np.array([t[c].mean() for c in chunks])
    peaks = np.array([signal[c].max() for c in chunks])
    rate = np.polyfit(centres, np.log(np.maximum(peaks, np.finfo(float).tiny)), 1)[0]
    return float(rate), peaks[0], peaks[-1]


def critical_kick(s, loop, lam, V):
    """Initial node velocities [m/s] along the eigenvector of the rightmost eigenvalue."""
    k = int(np.argmax(lam.real))
    n_e = V.shape[0] // 2
    v = np.real(V[n_e:, k] / np.abs(V[n_e:, k]).max())
    scale = max(s.bar_lengths.max(), 1e-3) * max(abs(lam[k]), 1.0)
    qd = KICK * scale * (loop.T[:loop.T.shape[0] // 2, :n_e] @ v)
    # T v keeps the bars' lengths to round-off only; simulate wants them exact (1e-9)
    q = s.nodes.reshape(-1)
    J = np.zeros((s.n_bars, q.size))
    for b, (i, j) in enumerate(s.bar_nodes):
        d = q[3 * j:3 * j + 3] - q[3 * i:3 * i + 3]
        J[b, 3 * j:3 * j + 3], J[b, 3 * i:3 * i + 3] = d, -d
    J[:, s.fixed_coordinates] = 0.0
    qd -= np.linalg.lstsq(J, J @ qd, rcond=None)[0]
    return qd.reshape(-1, 3)


def nonlinear(name, s, design, loop, r):
    """Table 2's rows: the nominal LQR on loop.perturbed(factor delta*), tc.simulate."""
    rows = []
    factors = list(NONLINEAR_FACTORS)
    while factors:
        factor = factors.pop(0)
        delta = factor * r.delta
        try:
            st = loop.perturbed(delta)
        except ValueError as exc:
            why = "k <= gamma*" if "gamma" in str(exc) else "mass <= 0"
            rows.append([name, f"{factor:g}", "-", "-", "-", "-", "-", f"no structure ({why})",
                         "-"])
            if factor > 1 and FALLBACK_FACTOR not in factors + list(NONLINEAR_FACTORS):
                factors.append(FALLBACK_FACTOR)
            continue
        lam, V = np.linalg.eig(loop.closed_loop(delta))
        k = int(np.argmax(lam.real))
        t_final = min(GROWTH_EFOLDS / max(abs(lam[k].real), 1e-3), MAX_TIME)
        # POINTS_PER_PERIOD samples of the critical oscillation, for its envelope
        n_t = max(2001, int(POINTS_PER_PERIOD * t_final * abs(lam[k].imag) / (2 * np.pi)))
        t_eval = np.linspace(0.0, t_final, n_t)
        qd0 = critical_kick(s, loop, lam, V)
        t0 = time.process_time()
        try:
            traj, note = tc.simulate(st, t_final, controller=design.controller, qd=qd0,
                                     t_eval=t_eval), ""
        except tc.SimulationError as exc:     # a divergence the integrator gave up on
            traj, note = exc.trajectory, f" (stopped at {exc.time:.3g} s)"
        t_sim = time.process_time() - t0
        speed = np.linalg.norm(traj.velocities.reshape(traj.t.size, -1), axis=1)
        rate, first, last = envelope_rate(traj.t, speed)
        verdict = ("diverging" if last > 2 * first else "bounded" if last < first else
                   "undecided") + note
        rows.append([name, f"{factor:g}", f"{lam[k].real:+.4f}", f"{rate:+.4f}",
                     f"{abs(lam[k].imag):.4g}", f"{traj.t[-1]:.3g}", f"{first:.3e} -> {last:.3e}",
                     verdict, f"{t_sim:.1f}"])
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--gain-samples", type=int, default=100)
    parser.add_argument("--skip-nonlinear", action="store_true")
    parser.add_argument("--curves", action="store_true")
    parser.add_argument("--design-rounds", type=int, default=2)
    parser.add_argument("--cases", nargs="*", default=None)
    args = parser.parse_args()
    print(machine_info())
    rows, results = [], []
    for name, s, outputs, effort, parameters in cases():
        if args.cases and name not in args.cases:
            continue
        row, res = analyse(name, s, outputs, effort, parameters, args.samples,
                           args.gain_samples)
        rows.append(row)
        results.append(res)
        print(res[4], flush=True)
    print(f"\n1. mu of the LQR loops, string stiffness +-{100 * SPREAD:g} % (prestress held); "
          f"Monte Carlo in |delta| <= {INSIDE} margin")
    print_table(["case", "params (ch)", "mu upper", "mu lower", "gap [%]", "w peak",
                 "w cross", "margin", "|Re|/||A||", "unstable", "gain nom", "gain max MC",
                 "gain worst", "CPU lft", "CPU upper", "CPU lower", "CPU MC", "CPU worst"], rows)
    if args.curves:
        for res in results:
            curves(res[0], res[4])
    designs = design_table(results, args.design_rounds) if args.design_rounds > 0 else {}
    if args.skip_nonlinear:
        return
    nonlinear_table(results)
    doublet_table(results, designs)


def design_table(results, rounds):
    """Table 3; the robust designs by case name."""
    print(f"\n3. robust LQR ({rounds} worst cases added) against the nominal LQR")
    rows, designs = [], {}
    for name, s, design, loop, r, model, parameters in results:
        if loop.n_parameters > 1:
            row, designs[name] = design_row(name, model, design, parameters, rounds)
            rows.append(row)
    print_table(["case", "margin nominal", "margin per round", "kept", "models",
                 "nominal H2 lost [%]", "worst cost / J0", "CPU [s]"], rows)
    return designs


def nonlinear_table(results):
    print("\n2. nonlinear loop on the worst-case structure (delta = factor x delta*)")
    rows = []
    for name, s, design, loop, r, _, _ in results:
        if r.worst_structure is None:
            print(f"   {name}: delta* is not a physical structure ({r.unphysical})")
            continue
        rows += nonlinear(name, s, design, loop, r)
    print_table(["case", "factor", "Re lambda [1/s]", "fitted rate [1/s]", "Im lambda [rad/s]",
                 "T [s]", "speed envelope [m/s]", "verdict", "CPU sim"], rows)


def doublet_table(results, designs):
    rows = []
    for name, s, design, loop, r, model, parameters in results:
        if name in designs and r.worst_structure is not None:
            rows += doublet_rows(name, s, design, designs[name], loop, r, model, parameters)
    if not rows:
        return
    print(f"\n4. doublet {DOUBLET_AMPLITUDE:g} N along z on the payload (or last) node, "
          f"{DOUBLET_HALF_PERIOD:g} s each way, {DOUBLET_TIME:g} s: nonlinear (tc.simulate)")
    print_table(["case", "structure", "gain", "linear max Re [1/s]", "peak deviation [m]",
                 f"speed, last {DOUBLET_TAIL:g} s [m/s]", "CPU sim"], rows)


if __name__ == "__main__":
    main()
