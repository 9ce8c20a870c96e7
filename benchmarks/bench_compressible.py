"""Compressible bars: wall time, energy conservation and convergence to the rigid model.

Usage::

    python benchmarks/bench_compressible.py [--repeat N] [--quick]

--repeat N   timed warm repeats per speed case (default 3; 1 with --quick); each case runs
             once untimed first, so the numba kernels are compiled or loaded from cache.
--quick      speed cases only (no energy and convergence tables).

Three tables (see benchmarks/README.md):

1. speed: the issue's cases (T-bar, strings as the "stedy" variant with damping 1,
   rtol = atol = 1e-8, 10 s) for HDPE and aluminium bars with the implicit Radau IIA
   integrator (the default) and the explicit Dormand-Prince 5(4), and a 3-D compressible
   prism; beside the paper's MATLAB figures and the reference code under GNU Octave
   (benchmarks/README.md);
2. energy: the undamped HDPE T-bar over 10 s, relative energy error |E - w - E0| / E0 and the
   bar strains, in both kinetic-energy forms;
3. convergence: the largest node distance to the rigid-bar model over 10 s as E grows;
4. the Radau tolerance mapping: node errors of radau5 with and without it beside dopri54.

Timings are informative only: nothing here asserts on them.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import statistics
import sys
import time

import numpy as np

import tenscontrol as tc
from tenscontrol.model import catalog

# Reference figures for 10 s simulated (benchmarks/README.md): paper (MATLAB ode15s) and the
# reference code under GNU Octave 7.3 (per simulated second, times 10)
PEER = {"hdpe": ("39.18", "~105"), "aluminium": ("502.2", "~610")}
TARGET = {"hdpe": 1.0, "aluminium": 5.0}


def _tbar(material, damping=1.0):
    return catalog.tbar("stedy", damping=damping, bar_material=material)


def speed_cases():
    """(label, structure, t_final, simulate kwargs, material key or None)."""
    tol = {"rtol": 1e-8, "atol": 1e-8}
    out = []
    for material in ("hdpe", "aluminium"):
        for integrator in ("radau5", "dopri54"):
            out.append((f"T-bar {material} c=1 {integrator} 1e-8", _tbar(material), 10.0,
                        dict(tol, integrator=integrator), material))
    prism = catalog.prism(3, bar_material="aluminium")
    out.append(("prism(3) aluminium radau5 1e-8, 1 s", prism, 1.0, dict(tol), None))
    out.append(("prism(3) hdpe radau5 1e-8, 1 s", catalog.prism(3, bar_material="hdpe"), 1.0,
                dict(tol), None))
    return out


def _timed(structure, t_final, kwargs, repeat):
    traj = tc.simulate(structure, t_final, bars="compressible", **kwargs)  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        traj = tc.simulate(structure, t_final, bars="compressible", **kwargs)
        times.append(time.perf_counter() - start)
    return traj, times


def speed_table(repeat):
    print("\n1. Speed (wall time of simulate(), warm)")
    print(f"{'case':<40}{'median [s]':>11}{'min [s]':>9}{'target':>8}{'steps':>8}{'rej':>6}"
          f"{'rhs':>8}{'jac':>6}{'LU':>6}{'|dE|/E0':>10}{'paper [s]':>11}{'Octave [s]':>11}")
    for label, s, t_final, kwargs, material in speed_cases():
        sys.stderr.write(f"  {label}\n")
        traj, times = _timed(s, t_final, kwargs, repeat)
        st = traj.stats
        rel = np.abs(traj.energy_violation).max() / abs(traj.E0) if traj.E0 else np.nan
        target = f"{TARGET[material]:g}" if material and kwargs["integrator"] == "radau5" else "-"
        paper, octave = PEER.get(material, ("-", "-")) if material else ("-", "-")
        print(f"{label:<40}{statistics.median(times):>11.3f}{min(times):>9.3f}{target:>8}"
              f"{st.accepted_steps:>8}{st.rejected_steps:>6}{st.rhs_evaluations:>8}"
              f"{st.jacobian_evaluations:>6}{st.lu_decompositions:>6}{rel:>10.1e}"
              f"{paper:>11}{octave:>11}")


def energy_table():
    print("\n2. Energy conservation: T-bar stedy, HDPE bars, damping 0, 10 s, "
          "rtol = atol = 1e-10, radau5")
    print(f"{'kinetic':<12}{'max |E-w-E0|/E0':>17}{'E0 [J]':>10}{'strain min':>13}"
          f"{'strain max':>13}{'steps':>8}{'wall [s]':>10}")
    for kinetic in ("consistent", "paper"):
        traj = tc.simulate(_tbar("hdpe", 0.0), 10.0, bars="compressible", kinetic=kinetic,
                           rtol=1e-10, atol=1e-10)
        rel = np.abs(traj.energy_violation).max() / traj.E0
        strain = traj.bar_strains
        print(f"{kinetic:<12}{rel:>17.2e}{traj.E0:>10.3f}{strain.min():>13.4e}"
              f"{strain.max():>13.4e}{traj.stats.accepted_steps:>8}{traj.stats.wall_time:>10.3f}")


def convergence_table():
    print("\n3. Convergence to rigid bars: T-bar stedy, damping 1, bars rho = 500, nu = 0.3, "
          "10 s, rtol = atol = 1e-10, on the 0.01 s grid")
    t_eval = np.linspace(0.0, 10.0, 1001)
    base = catalog.tbar("stedy", damping=1.0)
    rigid = tc.simulate(base, 10.0, t_eval=t_eval)
    print(f"{'E [GPa]':>8}{'max node diff [m]':>19}{'ratio to previous':>19}{'strain min':>13}"
          f"{'wall [s]':>10}")
    previous = None
    for E in (1e9, 68e9, 200e9, 2000e9):
        s = _with_modulus(base, E)
        traj = tc.simulate(s, 10.0, bars="compressible", t_eval=t_eval, rtol=1e-10, atol=1e-10)
        diff = float(np.linalg.norm(traj.nodes - rigid.nodes, axis=2).max())
        ratio = f"{diff / previous:.3f}" if previous else "-"
        previous = diff
        print(f"{E / 1e9:>8g}{diff:>19.3e}{ratio:>19}{traj.bar_strains.min():>13.3e}"
              f"{traj.stats.wall_time:>10.3f}")


def tolerance_table():
    print("\n4. Radau tolerance mapping: HDPE T-bar, damping 1, 10 s, requested rtol = atol = 1e-8; "
          "node error against dopri54 at 1e-12 on the 0.1 s grid")
    s = _tbar("hdpe")
    t_eval = np.linspace(0.0, 10.0, 101)
    ref = tc.simulate(s, 10.0, bars="compressible", integrator="dopri54", rtol=1e-12,
                      atol=1e-12, t_eval=t_eval)
    # simulate maps radau5's tolerances (Radau5.error_test_tolerances); asking for
    # (10 tol)^(3/2) makes the mapped test run at tol itself, i.e. without the mapping
    runs = (("radau5, mapped (default)", "radau5", 1e-8),
            ("radau5, unmapped", "radau5", (10 * 1e-8) ** 1.5),
            ("dopri54", "dopri54", 1e-8))
    print(f"{'integrator':<28}{'node err [m]':>14}{'|dE|/E0':>10}{'steps':>8}{'wall [s]':>10}")
    for label, integrator, tol in runs:
        traj = tc.simulate(s, 10.0, bars="compressible", integrator=integrator, rtol=tol,
                           atol=tol, t_eval=t_eval)
        err = np.abs(traj.nodes - ref.nodes).max()
        rel = np.abs(traj.energy_violation).max() / traj.E0
        print(f"{label:<28}{err:>14.2e}{rel:>10.1e}{traj.stats.accepted_steps:>8}"
              f"{traj.stats.wall_time:>10.3f}")


def _with_modulus(structure, E):
    bars = [dataclasses.replace(b, youngs_modulus=E) for b in structure.bars]
    return tc.Structure(structure.nodes, bars, structure.strings, structure.fixed,
                        structure.point_masses, structure.gravity, f"{structure.name}-E{E:g}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    repeat = args.repeat or (1 if args.quick else 3)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor()) \
        if os.path.exists("/proc/cpuinfo") else platform.processor()
    print(f"machine: {cpu}, {len(os.sched_getaffinity(0))} CPUs; python {platform.python_version()}"
          f", numpy {np.__version__}, tenscontrol {tc.__version__}")
    speed_table(repeat)
    if not args.quick:
        energy_table()
        convergence_table()
        tolerance_table()


if __name__ == "__main__":
    main()
