"""The ``tenscontrol`` command: simulate a structure file, or run the demo.

::

    tenscontrol simulate FILE.json --t-final T [--rtol R] [--atol A] [--bars rigid|compressible]
                         [--correction energy|geometric|none] [--dt-out DT] --out traj.npz
    tenscontrol demo [--out-dir DIR]

Invalid input (a bad file, structure or option) and failed simulations print one line,
``tenscontrol: error: <message>``, to stderr and exit with status 2. Ctrl-C prints
``tenscontrol: interrupted ...`` and exits with status 130 (the shell's convention for SIGINT),
leaving no output file behind.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import warnings
from pathlib import Path

import numpy as np

from tenscontrol import __version__
from tenscontrol.demo import run_demo
from tenscontrol.model.io import load_structure
from tenscontrol.simulation.simulator import (SimulationError, Trajectory, default_tolerances,
                                              simulate)
from tenscontrol.simulation.trajectory import SimulationInterrupted

__all__ = ["NPZ_KEYS", "main", "output_times", "save_trajectory"]

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
    sim.add_argument("--rtol", type=_positive_float, default=None,
                     help="relative tolerance (default: the bar model's, 1e-10 rigid, "
                          "1e-8 compressible)")
    sim.add_argument("--atol", type=_positive_float, default=None,
                     help="absolute tolerance (default: the bar model's, 1e-10 rigid, "
                          "1e-8 compressible)")
    sim.add_argument("--bars", choices=("rigid", "compressible"), default="rigid",
                     help="bar model (default: %(default)s); compressible bars use each bar's "
                          "Young's modulus and Poisson's ratio and the implicit integrator")
    sim.add_argument("--kinetic", choices=("consistent", "paper"), default="consistent",
                     help="kinetic energy of compressible bars (default: %(default)s)")
    sim.add_argument("--correction", choices=_CORRECTIONS, default=None,
                     help="correction after each step, rigid bars (default: energy)")
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
    """Write the arrays of `traj` (keys :data:`NPZ_KEYS`) to the .npz file `path` exactly.

    The file is written beside `path` as ``<name>.part`` and renamed when complete, so an
    interrupt or a full disk never leaves a truncated `path`.
    """
    path = Path(path)
    part = path.with_name(path.name + ".part")
    try:
        with open(part, "wb") as f:
            np.savez(f, **{key: getattr(traj, key) for key in NPZ_KEYS})
        os.replace(part, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            part.unlink(missing_ok=True)
        if isinstance(exc, OSError):  # name the file asked for, not the temporary one
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise


def _cmd_simulate(args) -> int:
    structure = load_structure(args.file)
    t_eval = None if args.dt_out is None else output_times(args.t_final, args.dt_out)
    rtol, atol = default_tolerances(args.bars, args.rtol, args.atol)
    traj = simulate(structure, args.t_final, t_eval=t_eval, rtol=rtol, atol=atol,
                    bars=args.bars, kinetic=args.kinetic, correction=args.correction,
                    progress=args.progress)
    save_trajectory(traj, args.out)
    print(f"{structure.name}: simulated {args.t_final:g} s, {traj.bars} bars, "
          f"correction = {traj.correction}, rtol = {rtol:g}, atol = {atol:g}")
    print(traj.summary())
    print(f"wrote {args.out}")
    return 0


def _cmd_demo(args) -> int:
    out_dir = Path(args.out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--out-dir {out_dir}: cannot create the directory "
                         f"({exc.strerror or exc})") from None
    run_demo(out_dir)
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
        message on stderr); 130 if interrupted (Ctrl-C; nothing is saved).

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
        except KeyboardInterrupt as exc:
            where = (f" at t = {exc.time:.6g} s, nothing saved"
                     if isinstance(exc, SimulationInterrupted) else "")
            print(f"tenscontrol: interrupted{where}", file=sys.stderr)
            return 130
    print(f"tenscontrol: error: {message}", file=sys.stderr)
    return 2
