"""The ``tenscontrol`` command: simulate a structure file, or run the demo.

::

    tenscontrol simulate FILE.json --t-final T [--rtol R] [--atol A]
                         [--correction energy|geometric|none] [--dt-out DT] --out traj.npz
    tenscontrol demo [--out-dir DIR]

Invalid input (a bad file, structure or option) and failed simulations print one line,
``tenscontrol: error: <message>``, to stderr and exit with status 2.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from . import __version__
from .io import load_structure
from .simulation import SimulationError, Trajectory, simulate

__all__ = ["DEMO_STEPS", "NPZ_KEYS", "DemoContext", "main", "output_times", "save_trajectory"]

NPZ_KEYS = ("t", "nodes", "velocities", "energy", "work", "bar_violation", "energy_violation")
_CORRECTIONS = ("energy", "geometric", "none")


def _positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tenscontrol",
        description="Simulation and control of tensegrity structures.")
    parser.add_argument("--version", action="version", version=f"tenscontrol {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sim = commands.add_parser(
        "simulate", help="simulate a structure file and save the trajectory (.npz)",
        description="Simulate a structure given as a tenscontrol.structure/1 JSON file, "
                    "starting at rest from its node positions, and save the trajectory.")
    sim.add_argument("file", metavar="FILE.json", help="the structure file")
    sim.add_argument("--t-final", type=_positive_float, required=True, metavar="T",
                     help="end time [s]")
    sim.add_argument("--rtol", type=_positive_float, default=1e-10,
                     help="relative tolerance (default: %(default)g)")
    sim.add_argument("--atol", type=_positive_float, default=1e-10,
                     help="absolute tolerance (default: %(default)g)")
    sim.add_argument("--correction", choices=_CORRECTIONS, default="energy",
                     help="correction after each step (default: %(default)s)")
    sim.add_argument("--dt-out", type=_positive_float, metavar="DT",
                     help="output interval [s] (default: every accepted step)")
    sim.add_argument("--progress", action="store_true", help="show a progress bar on stderr")
    sim.add_argument("--out", required=True, metavar="TRAJ.npz",
                     help=f"output file; arrays {', '.join(NPZ_KEYS)}")
    sim.set_defaults(run=_cmd_simulate)

    demo = commands.add_parser(
        "demo", help="run the T-bar demo and write plots",
        description="Simulate the catalog T-bar with and without the energy correction, print "
                    "the constraint and energy figures and write PNG plots.")
    demo.add_argument("--out-dir", default="tenscontrol-demo", metavar="DIR",
                      help="directory for the plots (default: ./%(default)s)")
    demo.set_defaults(run=_cmd_demo)
    return parser


def output_times(t_final: float, dt_out: float) -> np.ndarray:
    """The output grid 0, dt, 2 dt, ... up to t_final [s] (the last point clipped to t_final)."""
    return np.minimum(np.arange(0.0, t_final + dt_out / 2, dt_out), t_final)


def save_trajectory(traj: Trajectory, path) -> None:
    """Write the arrays of `traj` (keys :data:`NPZ_KEYS`) to the .npz file `path` exactly."""
    with open(path, "wb") as f:
        np.savez(f, **{key: getattr(traj, key) for key in NPZ_KEYS})


def _max_abs(a: np.ndarray) -> float:
    return float(np.abs(a).max(initial=0.0))


def _summary(traj: Trajectory) -> list[str]:
    """The figures of a run, one per line."""
    s = traj.stats
    return [
        f"  samples                 {len(traj.t)} (t = {traj.t[0]:g}..{traj.t[-1]:g} s)",
        f"  steps                   {s.accepted_steps} accepted, {s.rejected_steps} rejected",
        f"  derivative evaluations  {s.rhs_evaluations}",
        f"  correction iterations   {s.correction_iterations}"
        + (f" ({s.correction_failures} steps did not converge)" if s.correction_failures else ""),
        f"  wall time               {s.wall_time:.3g} s",
        f"  max |bar violation|     {_max_abs(traj.bar_violation):.3e} m",
        f"  max |energy violation|  {_max_abs(traj.energy_violation):.3e} J",
    ]


def _cmd_simulate(args) -> int:
    structure = load_structure(args.file)
    t_eval = None if args.dt_out is None else output_times(args.t_final, args.dt_out)
    traj = simulate(structure, args.t_final, t_eval=t_eval, rtol=args.rtol, atol=args.atol,
                    correction=args.correction, progress=args.progress)
    save_trajectory(traj, args.out)
    print(f"{structure.name}: simulated {args.t_final:g} s, correction = {traj.correction}, "
          f"rtol = {args.rtol:g}, atol = {args.atol:g}")
    print("\n".join(_summary(traj)))
    print(f"wrote {args.out}")
    return 0


# ---- demo: a list of stages sharing one context; append stages to DEMO_STEPS ---------------

@dataclass
class DemoContext:
    """What the demo's stages share.

    Attributes
    ----------
    out_dir : Path
        Where the stages write their files (created before the first stage).
    structure : Structure or None
        The structure under study, set by the first stage.
    runs : dict of str to Trajectory
        Simulation results by name.
    files : list of Path
        Files written so far.
    """

    out_dir: Path
    structure: object = None
    runs: dict = field(default_factory=dict)
    files: list = field(default_factory=list)


DEMO_T_FINAL = 10.0
DEMO_TOL = 1e-10


def _demo_structure(ctx: DemoContext) -> None:
    from . import catalog

    ctx.structure = catalog.tbar("stedy", damping=1.0)
    s = ctx.structure
    print(f"T-bar '{s.name}': {s.n_nodes} nodes, {s.n_bars} bars, {s.n_strings} strings, "
          f"mass {s.total_mass:.4g} kg; released from rest with strings m1, m3 pre-stretched")


def _demo_run(ctx: DemoContext, correction: str) -> Trajectory:
    traj = simulate(ctx.structure, DEMO_T_FINAL, rtol=DEMO_TOL, atol=DEMO_TOL,
                    correction=correction)
    ctx.runs[correction] = traj
    print(f"\n== {DEMO_T_FINAL:g} s, rtol = atol = {DEMO_TOL:g}, correction = {correction} ==")
    print("\n".join(_summary(traj)))
    return traj


def _demo_warm_up(ctx: DemoContext) -> None:
    import time

    start = time.perf_counter()
    simulate(ctx.structure, 1e-3)
    print(f"kernels ready in {time.perf_counter() - start:.2g} s (compiled on the first run on "
          "this machine, loaded from the on-disk cache afterwards)")


def _demo_energy_correction(ctx: DemoContext) -> None:
    _demo_run(ctx, "energy")


def _demo_drift(ctx: DemoContext) -> None:
    free = _demo_run(ctx, "none")
    corrected = ctx.runs["energy"]
    tiny = np.finfo(float).tiny
    bar = _max_abs(free.bar_violation) / max(_max_abs(corrected.bar_violation), tiny)
    energy = _max_abs(free.energy_violation) / max(_max_abs(corrected.energy_violation), tiny)
    print(f"  without correction the bars drift {bar:.3g}x and the energy {energy:.3g}x "
          "further than with it")


def _demo_plots(ctx: DemoContext) -> None:
    from .plotting import plot_node_paths, plot_violations

    name = ctx.structure.name
    figures = [(f"{name}-node-paths.png", plot_node_paths(ctx.runs["energy"]))]
    figures += [(f"{name}-violations-{c}.png", plot_violations(traj))
                for c, traj in ctx.runs.items()]
    print("\nplots:")
    for filename, fig in figures:
        path = ctx.out_dir / filename
        fig.savefig(path, dpi=120)
        ctx.files.append(path)
        print(f"  {path}")


DEMO_STEPS: list[Callable[[DemoContext], None]] = [
    _demo_structure, _demo_warm_up, _demo_energy_correction, _demo_drift, _demo_plots,
]
"""The demo's stages, run in order on one :class:`DemoContext`; append to extend the demo."""


def _cmd_demo(args) -> int:
    out_dir = Path(args.out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--out-dir {out_dir}: cannot create the directory "
                         f"({exc.strerror or exc})") from None
    ctx = DemoContext(out_dir)
    for step in DEMO_STEPS:
        step(ctx)
    return 0


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Print a warning as one line, without the source location."""
    print(f"tenscontrol: warning: {message}", file=sys.stderr)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def main(argv=None) -> int:
    """Run the ``tenscontrol`` command.

    Parameters
    ----------
    argv : list of str, optional
        The arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success; 2 if the input was invalid or the simulation failed (a one-line
        message on stderr).

    Raises
    ------
    SystemExit
        On a usage error (status 2), ``--help`` or ``--version`` (status 0), from argparse.
    """
    args = _parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        try:
            return args.run(args)
        except (ValueError, SimulationError) as exc:
            message = _one_line(exc)
        except OSError as exc:  # e.g. the output file cannot be written
            where = f"{exc.filename}: " if exc.filename else ""
            message = f"{where}{exc.strerror or _one_line(exc)}"
    print(f"tenscontrol: error: {message}", file=sys.stderr)
    return 2
