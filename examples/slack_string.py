"""The slack rule: a mass bouncing on a one-sided string beside one on a two-sided spring.

Two 1 kg masses hang from fixed anchors, one on a string and one on a spring, both with
k = 200 N/m and rest length 1.2 m. Each starts at rest 1.0 m below its anchor, where the
string is slack (gamma = 0: it never pushes) and the spring is compressed (gamma < 0: it
pushes). The string's mass falls freely until the string is taut again, so it swings between
1.0 m and the length where m g (l - 1) = k (l - 1.2)^2 / 2; the spring's mass oscillates
symmetrically about 1.2 m + m g / k. Prints these figures and the energy balance with and
without the correction, and plots member lengths and force densities against time.

Usage: python examples/slack_string.py [OUTPUT_DIR]   (default: a new temporary directory)
"""

import pathlib
import sys
import tempfile

import numpy as np
from matplotlib.figure import Figure

import tenscontrol as tc
from tenscontrol import plotting

K, L0, MASS, G = 200.0, 1.2, 1.0, 9.806


def output_dir() -> pathlib.Path:
    """The directory named by the first argument (created if needed), else a fresh temp dir."""
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="slack-"))
    out.mkdir(parents=True, exist_ok=True)
    return out


def main() -> None:
    out = output_dir()
    pair = tc.Structure(
        nodes=[[0, 0, 0], [0, 0, -1.0], [0.5, 0, 0], [0.5, 0, -1.0]],
        strings=[tc.String((0, 1), kind="string", stiffness=K, rest_length=L0),
                 tc.String((2, 3), kind="spring", stiffness=K, rest_length=L0)],
        point_masses=[tc.PointMass(1, MASS), tc.PointMass(3, MASS)],
        fixed={0: "xyz", 2: "xyz", 1: "xy", 3: "xy"}, gravity=(0, 0, -G), name="string-vs-spring")
    print(f"force densities at t = 0 (lengths 1.0 m < l0): {tc.force_densities(pair)} N/m")

    t_eval = np.linspace(0.0, 5.0, 1001)
    runs = {mode: tc.simulate(pair, 5.0, t_eval=t_eval, correction=mode)
            for mode in ("none", "energy")}
    traj = runs["energy"]
    lengths = -traj.nodes[:, [1, 3], 2]
    gamma = np.array([tc.force_densities(pair, q.reshape(-1)) for q in traj.nodes])
    u = (MASS * G + np.sqrt((MASS * G) ** 2 + 2 * K * MASS * G * (L0 - 1.0))) / K
    predicted = (L0 + u, 2 * (L0 + MASS * G / K) - 1.0)
    for m, name in enumerate(("string", "spring")):
        print(f"{name}: length {lengths[:, m].min():.5f}..{lengths[:, m].max():.5f} m "
              f"(predicted 1.00000..{predicted[m]:.5f}); gamma {gamma[:, m].min():+.2f}.."
              f"{gamma[:, m].max():+.2f} N/m, zero in {np.mean(gamma[:, m] == 0):.0%} of samples")
    for mode, run in runs.items():
        print(f"correction = {mode!r:<9}: max |Etot - w - E0| = "
              f"{np.abs(run.energy_violation).max():.1e} J, {run.stats.accepted_steps} steps "
              f"({run.stats.rejected_steps} rejected)")

    fig = Figure(figsize=(6.4, 5.6), layout="constrained")
    ax_l, ax_g = fig.subplots(2, 1, sharex=True)
    for m, name in enumerate(("string (one-sided)", "spring (two-sided)")):
        ax_l.plot(traj.t, lengths[:, m], label=name)
        ax_g.plot(traj.t, gamma[:, m], label=name)
    ax_l.axhline(L0, color="0.5", ls=":", label="rest length")
    ax_g.axhline(0.0, color="0.5", ls=":")
    ax_l.set_ylabel("member length [m]")
    ax_g.set_ylabel("force density gamma [N/m]")
    ax_g.set_xlabel("time [s]")
    ax_l.legend(fontsize="small")
    fig.savefig(out / "slack_string_members.png", dpi=80)
    plotting.plot_violations(traj).savefig(out / "slack_string_violations.png", dpi=80)
    print(f"plots written to {out}")


if __name__ == "__main__":
    main()
