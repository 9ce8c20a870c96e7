"""The icosahedron on a face, from its topology to an LQR design checked in closed loop.

A SUPERball-like 6-bar icosahedron (1 m aluminium bars, nylon strings with dampers of
1 N s/m) is form-found from its topology alone (tc.catalog.icosahedron: equal string force
densities, bars at -3/2 of them) and rests on a triangular face, its three nodes fixed, under
gravity. As built it cannot hold its weight with every string in tension (tc.equilibrium
raises PrestressError); configuration="free" lets it sag and designs the prestress (every
string at 20 N/m or more) at the loaded configuration. The static solve confirms it does not
move, the compliance at the loaded equilibrium gives its stiffness, and an LQR on the passive
linear model there, outputs the coordinates of the three top nodes, is checked in closed loop on
the nonlinear model against a 2 N doublet on a top node (small enough that no string goes slack).

Usage: python examples/icosahedron_on_a_face.py [OUTPUT_DIR]   (default: a temporary dir)
"""

import pathlib
import sys
import tempfile

import numpy as np

import tenscontrol as tc


def output_dir() -> pathlib.Path:
    """The directory named by the first argument (created if needed), else a fresh temp dir."""
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="ico-"))
    out.mkdir(parents=True, exist_ok=True)
    return out


def main() -> None:
    out = output_dir()
    ico = tc.catalog.icosahedron(on_face=True, damping=1.0)
    try:
        tc.equilibrium(ico, gamma_min=20.0)
    except tc.PrestressError as err:
        print("at the built geometry:", str(err).split(":")[1].strip()[:70], "...")
    eq = tc.equilibrium(ico, gamma_min=20.0, configuration="free")
    print(eq)
    check = tc.static_equilibrium(eq.structure)
    print(f"static check: residual {check.residual:.2e} N ({check.relative_residual:.1e} of the "
          f"load scale), moved {check.displacement:.1e} m, stable: {check.stable}")
    structure = eq.structure
    C = tc.compliance(structure)
    print(f"compliance at the loaded equilibrium: eigenvalues {C.eigenvalues[0]:.3e} .. "
          f"{C.eigenvalues[-1]:.3e} m/N")
    top = [int(i) for i in np.argsort(structure.nodes[:, 2])[-3:]]
    outputs = tc.Selection(nodes=top, axes="xyz")
    model = tc.linearize(structure, kind="passive", outputs=outputs)
    design = tc.lqr(model, effort=1e-3)
    print(design)
    report = tc.verify(structure, design.controller,
                       tc.doublet(structure, tc.Selection(top[0], "x"), 2.0), 4.0,
                       outputs=outputs, rtol=1e-9, atol=1e-9)
    print(report)
    report.plot().savefig(out / "icosahedron_lqr_closed_loop.png", dpi=100)


if __name__ == "__main__":
    main()
