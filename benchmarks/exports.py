"""The exports checked against their readers: to_mjcf in MuJoCo against simulate(), and
save_mat read back with scipy.io.

    python benchmarks/exports.py

Prints, for the 3-prism (gravity on) and the ball with every member a spring, the largest node
distance between MuJoCo (RK4) and tenscontrol's rigid-bar run (rtol = atol = 1e-12) over
0.2 s, sampled every 1 ms; then each matrix of the T-bar's .mat export against the model.
"""

import tempfile
from dataclasses import replace
from pathlib import Path

import mujoco
import numpy as np
import scipy.io

import tenscontrol as tc
from tenscontrol.model import catalog


def springs(s):
    return tc.Structure(s.nodes, s.bars, [replace(m, kind="spring") for m in s.strings],
                        fixed=s.fixed, point_masses=s.point_masses, gravity=s.gravity,
                        name=s.name)


def mujoco_paths(s, t_final, dt, every):
    model = mujoco.MjModel.from_xml_string(tc.to_mjcf(s, timestep=dt))
    data = mujoco.MjData(model)
    sites = [model.site(f"node{k}").id for k in range(s.n_nodes)]
    mujoco.mj_forward(model, data)
    out = [data.site_xpos[sites].copy()]
    for n in range(1, int(round(t_final / dt)) + 1):
        mujoco.mj_step(model, data)
        if n % every == 0:
            out.append(data.site_xpos[sites].copy())
    return np.array(out)


def mjcf_table():
    print("to_mjcf against simulate(), 0.2 s, every member a spring")
    print(f"{'structure':<26}{'MuJoCo step [s]':>16}{'max node motion [m]':>21}"
          f"{'max node difference [m]':>25}")
    for name, s in (("prism-3 (gravity on)", springs(catalog.prism(3, gravity=(0, 0, -9.806)))),
                    ("ball", springs(catalog.ball()))):
        t = np.arange(201) * 1e-3
        traj = tc.simulate(s, 0.2, t_eval=t, rtol=1e-12, atol=1e-12)
        motion = np.linalg.norm(traj.nodes - traj.nodes[0], axis=2).max()
        for dt in (1e-4, 1e-5):
            diff = np.linalg.norm(mujoco_paths(s, 0.2, dt, int(round(1e-3 / dt))) - traj.nodes,
                                  axis=2).max()
            print(f"{name:<26}{dt:>16g}{motion:>21.4g}{diff:>25.3e}")


def cells(value):
    return [str(c[0]) for c in value.reshape(-1)]


def mat_table():
    s = tc.equilibrium(catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
    model = tc.linearize(s, kind="passive")
    with tempfile.TemporaryDirectory() as folder:
        back = scipy.io.loadmat(tc.save_mat(model, Path(folder) / "tbar.mat"))
    sys = model.sys
    print("\nsave_mat(LinearModel) read back with scipy.io.loadmat (T-bar, passive, prestressed)")
    print(f"{'variable':<12}{'shape':>12}{'max |difference|':>18}")
    for name, expected in (("A", sys.A), ("B", sys.B), ("C", sys.C), ("D", sys.D),
                           ("E", model.E), ("q_ref", model.q[:, None]),
                           ("gamma_ref", model.gamma[:, None])):
        print(f"{name:<12}{str(back[name].shape):>12}"
              f"{np.abs(back[name] - expected).max(initial=0):>18.3g}")
    for name, expected in (("StateName", sys.state_labels), ("InputName", sys.input_labels),
                           ("OutputName", sys.output_labels)):
        same = cells(back[name]) == list(expected)
        print(f"{name:<12}{len(expected):>12}{'equal' if same else 'DIFFERENT':>18}"
              f"   {', '.join(cells(back[name])[:5])}, ...")


if __name__ == "__main__":
    mjcf_table()
    mat_table()
