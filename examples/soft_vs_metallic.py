"""Soft (HDPE) against metallic (aluminium) bars on the T-bar of the paper's Table 2 study.

The T-bar with one-sided strings (E = 2 GPa, radius 1 mm) at their rest length, dampers of
100 N s/m and no prestress (the configuration of Hsu et al. (2021), Table 2) is an equilibrium as it stands. For each
bar material tenscontrol.compare_materials reports the bar mass, the linear H2 and H-inf norms
from a vertical force on node 2 to the free node coordinates, the compliance eigenvalues, the
lowest natural frequencies, and the nonlinear response to a 10 N doublet. The table is printed
and plotted.

Usage: python examples/soft_vs_metallic.py [OUTPUT_DIR]   (default: a temporary dir)
"""

import pathlib
import sys
import tempfile

import numpy as np

import tenscontrol as tc


def output_dir() -> pathlib.Path:
    """The directory named by the first argument (created if needed), else a fresh temp dir."""
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="tbar-"))
    out.mkdir(parents=True, exist_ok=True)
    return out


def main() -> None:
    out = output_dir()
    tbar = tc.catalog.tbar("table2", damping=100.0)
    table = tc.compare_materials(tbar, ("hdpe", "aluminium"), disturbances=tc.Selection(2, "z"),
                                 amplitude=10.0, half_period=1.0, t_final=10.0,
                                 t_eval=np.linspace(0.0, 10.0, 10001), atol=1e-10)
    print(table)
    table.plot().savefig(out / "tbar_soft_vs_metallic.png", dpi=100)


if __name__ == "__main__":
    main()
