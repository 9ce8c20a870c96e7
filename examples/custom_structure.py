"""Build a structure of your own, save it as JSON, load it back and simulate it under a load.

A slewing boom: an aluminium bar pinned at its foot (node 0) carries a 2 kg tip mass (node 2)
and hangs from a damped nylon guy to an anchor above the foot (node 1). Gravity acts along -z;
a gust along y on the tip for 2 s sets the boom turning about the vertical axis. Prints member
forces at the start and end, the energy balance and step counts; writes the JSON file, a 3-D
drawing and the tip's path.

Usage: python examples/custom_structure.py [OUTPUT_DIR]   (default: a new temporary directory)
"""

import pathlib
import sys
import tempfile

import numpy as np

import tenscontrol as tc
from tenscontrol import plotting

TIP = 2


def output_dir() -> pathlib.Path:
    """The directory named by the first argument (created if needed), else a fresh temp dir."""
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="boom-"))
    out.mkdir(parents=True, exist_ok=True)
    return out


def slewing_boom() -> tc.Structure:
    # rest fraction 0.9978: the guy's pretension then nearly balances the weight at t = 0
    guy = tc.String((1, TIP), material="nylon", radius=1.5e-3, rest_fraction=0.9978, damping=2.0)
    return tc.Structure(
        nodes=[[0, 0, 0], [0, 0, 1.0], [1.2, 0, 0.6]],
        bars=[tc.Bar((0, TIP), radius=0.01, material="aluminium")],
        strings=[guy], point_masses=[tc.PointMass(TIP, 2.0)],
        fixed={0: "xyz", 1: "xyz"}, gravity=(0, 0, -9.806), name="slewing-boom")


def gust(t, q, qd):
    """5 N sin(2 pi 0.8 t) along y on the tip while t < 2 s, nothing afterwards [N]."""
    f = np.zeros((len(q) // 3, 3))
    f[TIP, 1] = 5.0 * np.sin(2 * np.pi * 0.8 * t) if t < 2.0 else 0.0
    return f


def main() -> None:
    out = output_dir()
    boom = slewing_boom()
    print(f"guy stiffness {boom.string_stiffness[0]:.4g} N/m, rest length "
          f"{boom.string_rest_lengths[0]:.4f} m; bar mass {boom.bar_masses[0]:.3f} kg")
    tc.save_structure(boom, out / "slewing_boom.json")
    loaded = tc.load_structure(out / "slewing_boom.json")
    assert tc.structure_to_dict(loaded) == tc.structure_to_dict(boom), "the JSON round trip changed the structure"
    traj = tc.simulate(loaded, 4.0, loads=gust, t_eval=np.linspace(0.0, 4.0, 401),
                       rtol=1e-9, atol=1e-9)
    for k in (0, -1):  # guy tension gamma l and the bar's axial force psi l [N]
        q, qd = traj.nodes[k].reshape(-1), traj.velocities[k].reshape(-1)
        s = traj.nodes[k, loaded.string_nodes[:, 1]] - traj.nodes[k, loaded.string_nodes[:, 0]]
        tension = tc.force_densities(loaded, q) * np.linalg.norm(s, axis=1)
        psi = tc.accelerations(loaded, q, qd)[1]
        print(f"t = {traj.t[k]:g} s: guy tension {tension[0]:.2f} N, "
              f"bar force {psi[0] * loaded.bar_lengths[0]:.2f} N (negative: compression)")
    tip = traj.nodes[:, TIP]
    print(f"slew angle at 4 s: {np.degrees(np.arctan2(tip[-1, 1], tip[-1, 0])):.2f} deg; "
          f"tip height {tip[:, 2].min():.6f}..{tip[:, 2].max():.6f} m")
    print(f"E0 = {traj.E0:.6f} J, Etot(4 s) = {traj.energy[-1]:.6f} J, work of gust and "
          f"dampers w = {traj.work[-1]:.6f} J, max |Etot - w - E0| = "
          f"{np.abs(traj.energy_violation).max():.1e} J")
    print(traj.stats)
    plotting.plot_structure(loaded).savefig(out / "slewing_boom_structure.png", dpi=80)
    plotting.plot_node_paths(traj, nodes=[TIP], plane="xy").savefig(
        out / "slewing_boom_tip_path.png", dpi=80)
    print(f"files written to {out}")


if __name__ == "__main__":
    main()
