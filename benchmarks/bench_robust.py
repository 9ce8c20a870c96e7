"""Robust stability of LQR loops to uncertain string stiffness (issue 35, items 1-2).

    python benchmarks/bench_robust.py [--samples 1000] [--gain-samples 100] [--skip-nonlinear]
                                      [--curves] [--design-rounds 2] [--cases T-bar ball]

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
ranges), started with a small velocity along the critical mode, with the linear growth rate
there (run length 4 / |Re lambda|, at most 20 s); "bounded" if the deviation's envelope in
the last tenth of the run is below the first tenth's, "diverging" if above twice it. A case
whose delta* is not a physical structure (a string stiffness at or below its force density,
k <= gamma*, or a mass <= 0) has no row: its loop is stable over every physical value.
With gravity, a changed payload also moves the equilibrium, which the frozen form leaves out:
the run then starts off its equilibrium as well. Every analysis runs in its default CPU budget
(a "partial" result says so in the table). With --curves, each case's upper and lower bound and
their gap at the frequencies of the top of the upper bound. Table 3: tc.robust.robust_lqr
(--design-rounds worst cases added) against the nominal LQR: the robust margins, the nominal H2
performance lost and the CPU. Nothing asserts.
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
#: Initial velocity along the critical mode, relative to (largest bar length) x |lambda|: small
#: enough for the linear prediction, large enough to stand above the integrator's tolerance.
KICK = 1e-4
#: Linear growth (or decay) factor over the run, exp(|Re lambda| T): enough to tell the two apart.
GROWTH_EFOLDS = 4.0
#: Longest nonlinear run [s]: the ball's and the tower's stiff strings take small steps.
MAX_TIME = 20.0


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
            f"{rd.chosen}", f"{rd.deltas.shape[0]}", f"{100 * rd.nominal_loss:.3g}", f"{rd.costs.max():.4g}",
            f"{t:.1f}"]


def deviation_envelope(traj, q_ref):
    dev = np.linalg.norm(traj.nodes.reshape(traj.t.size, -1) - q_ref, axis=1)
    k = max(traj.t.size // 10, 1)
    return dev[:k].max(), dev[-k:].max()


def nonlinear(name, s, design, loop, r):
    rows = []
    lam_star = r.eigenvalue
    scale = max(s.bar_lengths.max(), 1e-3) * max(abs(lam_star), 1.0)
    for factor in NONLINEAR_FACTORS:
        delta = factor * r.delta
        try:
            st = loop.perturbed(delta)
        except ValueError as exc:
            rows.append([name, f"{factor:g}", "-", "-", "-", "-", f"no structure: {exc}"[:60],
                         "-"])
            continue
        A = loop.closed_loop(delta)
        lam, V = np.linalg.eig(A)
        k = int(np.argmax(lam.real))
        n_e = A.shape[0] // 2
        v = np.real(V[n_e:, k] / np.abs(V[n_e:, k]).max())
        qd0 = KICK * scale * (loop.T[:loop.T.shape[0] // 2, :n_e] @ v)
        t_final = min(GROWTH_EFOLDS / max(abs(lam[k].real), 1e-3), MAX_TIME)
        t_eval = np.linspace(0.0, t_final, 2001)
        traj, t_sim = cpu(lambda: tc.simulate(st, t_final, controller=design.controller,
                                              qd=qd0, t_eval=t_eval))
        first, last = deviation_envelope(traj, s.nodes.reshape(-1))
        verdict = ("diverging" if last > 2 * first else "bounded" if last < first else
                   "undecided")
        rows.append([name, f"{factor:g}", f"{lam[k].real:+.3e}", f"{t_final:.3g}",
                     f"{first:.3e}", f"{last:.3e}", verdict, f"{t_sim:.1f}"])
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
    print(f"\n3. robust LQR ({args.design_rounds} worst cases added) against the nominal LQR")
    print_table(["case", "margin nominal", "margin per round", "kept", "models", "nominal H2 lost [%]",
                 "worst cost / J0", "CPU [s]"],
                [design_row(name, model, design, parameters, args.design_rounds)
                 for name, s, design, loop, r, model, parameters in results
                 if loop.n_parameters > 1])
    if args.skip_nonlinear:
        return
    print("\n2. nonlinear loop on the worst-case structure (delta = factor x delta*)")
    rows = []
    for name, s, design, loop, r, _, _ in results:
        if r.worst_structure is None:
            print(f"   {name}: delta* is not a physical structure ({r.unphysical})")
            continue
        rows += nonlinear(name, s, design, loop, r)
    print_table(["case", "factor", "Re lambda [1/s]", "T [s]", "dev first [m]",
                 "dev last [m]", "verdict", "CPU sim"], rows)


if __name__ == "__main__":
    main()
