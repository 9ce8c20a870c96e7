"""LQR on the string force densities of the prestressed T-bar, rejecting a doublet force.

The T-bar of the paper (`tenscontrol.catalog.tbar`, Fig. 1a; dampers of 1 N s/m) is prestressed with the
smallest total force density that keeps every string at 10 N/m or more. An LQR designed on the
passive linear model (strings elastic, u adds to their force densities) with outputs x, z of
the free nodes 2 and 3 is checked in closed loop on the corrected nonlinear model: a 10 N
doublet on node 2 along z, open loop against closed loop and against the linear prediction.

Usage: python examples/tbar_lqr.py [OUTPUT_DIR]   (default: a temporary dir)
"""

import pathlib
import sys
import tempfile

import numpy as np

import tenscontrol as tc

OUTPUTS = tc.Selection(nodes=[2, 3], axes="xz")


def output_dir() -> pathlib.Path:
    """The directory named by the first argument (created if needed), else a fresh temp dir."""
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="tbar-"))
    out.mkdir(parents=True, exist_ok=True)
    return out


def main() -> None:
    out = output_dir()
    tbar = tc.equilibrium(tc.catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
    model = tc.linearize(tbar, kind="passive", outputs=OUTPUTS)
    # effort 1e-2: a force-density change of a tenth of the prestress costs as much as a
    # deflection of a tenth of a bar length
    design = tc.lqr(model, effort=1e-2)
    print(design)
    print("closed-loop poles [1/s]:", np.array2string(design.E, precision=4))
    report = tc.verify(tbar, design.controller, tc.doublet(tbar, tc.Selection(2, "z"), 10.0),
                       10.0, outputs=OUTPUTS, rtol=1e-9, atol=1e-9)
    print(report)
    report.plot().savefig(out / "tbar_lqr_closed_loop.png", dpi=100)


if __name__ == "__main__":
    main()
