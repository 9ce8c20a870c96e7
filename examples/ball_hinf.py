"""H-infinity output feedback on the six-bar ball holding its payload under the 30 sin t loads.

The ball of the paper (`tenscontrol.catalog.ball`, Hsu et al. (2021), Fig. 1c) with string dampers of 1 N s/m is prestressed
under gravity with every string at 40 N/m or more (at the catalog's 10 N/m floor the 30 N loads
make strings go slack even in open loop). The controller measures the positions of all free
nodes and commands all 32 string force densities; the generalized plant weighs the payload
deflection relative to 5 mm against commands relative to the prestress, with the three 30 N
loads as disturbances and 1 mm of measurement noise. It is checked on the corrected nonlinear
model under the paper's loads: 30 sin(t) N on node 3 along x, node 6 along y, node 7 along z.

Usage: python examples/ball_hinf.py [OUTPUT_DIR]   (default: a temporary dir)
"""

import pathlib
import sys
import tempfile

import numpy as np

import tenscontrol as tc


def output_dir() -> pathlib.Path:
    """The directory named by the first argument (created if needed), else a fresh temp dir."""
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="ball-"))
    out.mkdir(parents=True, exist_ok=True)
    return out


def main() -> None:
    out = output_dir()
    ball = tc.equilibrium(tc.catalog.ball(damping=1.0), gamma_min=40.0).structure
    model = tc.linearize(ball, kind="passive")
    free = [i for i in range(ball.n_nodes) if not ball.fixed[i].all()]
    channels = tc.Selection(3, "x") + tc.Selection(6, "y") + tc.Selection(7, "z")
    design = tc.hinfsyn(model, disturbances=channels, d_scale=30.0,
                        outputs=tc.Selection(nodes=[12]), y_scale=5e-3,
                        measurements=tc.Selection(nodes=free), rho=1.0, eps=1e-3, backoff=1.2)
    print(design.summary())
    report = tc.verify(ball, design.controller, tc.catalog.ball_load(30.0), 10.0,
                       outputs=tc.Selection(nodes=[12]), t_eval=np.linspace(0.0, 10.0, 501),
                       rtol=1e-9, atol=1e-9)
    print(report)
    report.plot().savefig(out / "ball_hinf_closed_loop.png", dpi=100)


if __name__ == "__main__":
    main()
