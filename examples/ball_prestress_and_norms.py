"""Prestress the ball under gravity, linearize it, reduce it and take its norms.

The six-bar ball carries a 1 kg payload at its centre (`tenscontrol.catalog.ball`, Hsu et al. (2021), Fig. 1c). We find the
least total string force density that holds it under gravity with every string at
gamma >= 10 N/m, check the equilibrium, then build the passive linear model (strings follow
their elastic law, dampers 1 N s/m), remove the constraint and fixed directions by structure,
balance and truncate, and report the H2 and H-infinity norms from a vertical force on the
payload to the payload's position, the balanced-truncation error bound, and the compliance.

Usage: python examples/ball_prestress_and_norms.py [OUTPUT_DIR]   (default: a temporary dir)
"""

import pathlib
import sys
import tempfile

import numpy as np

import tenscontrol as tc
from tenscontrol import plotting

PAYLOAD = 12  # node of the payload (catalog.ball)


def output_dir() -> pathlib.Path:
    """The directory named by the first argument (created if needed), else a fresh temp dir."""
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="ball-"))
    out.mkdir(parents=True, exist_ok=True)
    return out


def main() -> None:
    out = output_dir()
    ball = tc.catalog.ball(damping=1.0)
    eq = tc.equilibrium(ball, gamma_min=10.0)
    print(f"prestress: gamma {eq.gamma.min():.3f}..{eq.gamma.max():.3f} N/m, bar force densities "
          f"{eq.bar_force_densities.min():.3f}..{eq.bar_force_densities.max():.3f} N/m, "
          f"residual {eq.residual:.1e} N, self-stress dimension {eq.self_stress_dimension}")

    model = tc.linearize(eq.structure, kind="passive")
    minimal = tc.minimal_realization(model)
    print(f"orders: full {minimal.full_order}, structural {minimal.structural_order}, "
          f"minimal {minimal.order}")
    payload = minimal.sys[[f"{a}{PAYLOAD}" for a in "xyz"], [f"fz{PAYLOAD}"]]
    print(f"fz{PAYLOAD} -> payload position: H2 {tc.h2_norm(payload):.5g} m/(N s^0.5), "
          f"H-inf {tc.hinf_norm(payload):.5g} m/N")

    truncated = tc.minimal_realization(model, order=20)
    print(f"truncated to order 20: error bound 2 sum(tail HSV) = {truncated.error_bound:.3e}")

    comp = tc.compliance(eq.structure)
    print(f"compliance eigenvalues: {comp.eigenvalues.min():.3e} .. {comp.eigenvalues.max():.3e} m/N")
    sag = comp.displacement(np.eye(ball.n_nodes * 3)[3 * PAYLOAD + 2].reshape(-1, 3) * -10.0)
    print(f"static payload sag under a further 10 N: {sag[PAYLOAD, 2]:.4e} m")
    plotting.plot_hankel_singular_values(minimal).savefig(out / "ball_hankel.png", dpi=100)


if __name__ == "__main__":
    main()
