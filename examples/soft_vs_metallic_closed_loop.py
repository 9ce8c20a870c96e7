"""Soft (HDPE) against metallic (aluminium) bars in closed loop: one LQR design procedure.

The T-bar (`tenscontrol.catalog.tbar`, the paper's Fig. 1a; dampers of 1 N s/m) is prestressed with compressible bars
(every string at 10 N/m or more). For each bar material tenscontrol.compare_closed_loop
linearizes the passive compressible model, designs the LQR with the same weights, and checks it
on the nonlinear compressible model under a 10 N doublet on node 2 along z: the closed-loop
linear norms, the nonlinear ratios, the peak against open loop, the commands and the linear
prediction error. The table is printed and each material's closed-loop check is plotted.

Usage: python examples/soft_vs_metallic_closed_loop.py [OUTPUT_DIR]   (default: a temporary dir)
"""

import pathlib
import sys
import tempfile

import tenscontrol as tc


def output_dir() -> pathlib.Path:
    """The directory named by the first argument (created if needed), else a fresh temp dir."""
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="tbar-"))
    out.mkdir(parents=True, exist_ok=True)
    return out


def main() -> None:
    out = output_dir()
    tbar = tc.catalog.tbar("stedy", damping=1.0)
    prestressed = tc.equilibrium(tbar, gamma_min=10.0, bars="compressible").structure
    table = tc.compare_closed_loop(prestressed, ("hdpe", "aluminium"),
                                   disturbances=tc.Selection(2, "z"),
                                   outputs=tc.Selection(nodes=[2, 3], axes="xz"), t_final=10.0)
    print(table)
    for row, report in zip(table.rows, table.reports):
        report.plot("z2").savefig(out / f"tbar_closed_loop_{row.material}.png", dpi=100)


if __name__ == "__main__":
    main()
