"""The ``tenscontrol`` command: structure files in, trajectories, models and plots out.

::

    tenscontrol info FILE.json
    tenscontrol catalog NAME --out FILE.json        tenscontrol catalog --list
    tenscontrol equilibrium FILE.json --gamma-min G [--configuration fixed|free]
                            [--objective min_sum|min_norm] [--bars-in-compression]
                            [--loads F] [--bars B] --out prestressed.json
    tenscontrol linearize FILE.json [--kind passive|control] [--bars B] [--outputs SEL]
                          --out model.npz|model.mat
    tenscontrol design FILE.json [--method lqr|hinf] [--kind K] [--bars B] [--outputs SEL]
                       [--order R] [--effort E] [--Q Q.npy] [--R R.npy]
                       [--disturbances SEL] [--measurements SEL] [--d-scale N] [--y-scale M]
                       [--u-scale U] [--rho R] [--eps E] [--tol T] [--backoff B] --out K.npz
    tenscontrol simulate FILE.json --t-final T [--loads F] [--qd F] [--controller K.npz]
                         [--rtol R] [--atol A] [--bars rigid|compressible]
                         [--correction energy|geometric|none] [--dt-out DT] --out traj.npz
    tenscontrol verify FILE.json --controller K.npz (--doublet NODE AXIS | --loads F)
                       [--t-final T] [--outputs SEL] [--plot report.png]
    tenscontrol plot traj.npz --out paths.png
    tenscontrol animate traj.npz --out ball.gif [--fps F] [--speed S] [--max-frames N]
    tenscontrol demo [--out-dir DIR]

One module per group of subcommands: this one (the parser, the errors, ``simulate`` and
``demo``), :mod:`tenscontrol.cli.model_commands` (info, catalog, equilibrium, linearize,
verify), :mod:`tenscontrol.cli.design_commands` (design), :mod:`tenscontrol.cli.view_commands`
(plot, animate), :mod:`tenscontrol.cli.common` (with the shell syntax of a Selection, SEL).

Every error is one line on stderr and an exit status; ``--help`` and ``--version`` exit 0:

- 2, ``tenscontrol: error: <message>``: invalid input, found before anything is simulated (a
  usage error, a bad file, structure or option, an ``--out`` that cannot be written or is the
  structure file, an output larger than :data:`OUTPUT_LIMIT` bytes).
- 1, ``tenscontrol: error: simulation failed at t = ... s: <cause>; ...``: the simulation
  failed. The trajectory up to the failure is saved beside ``--out`` as ``<name>.partial.npz``
  (same arrays), and the message says where.
- 130, ``tenscontrol: interrupted at t = ... s; ...``: Ctrl-C (the shell's convention for
  SIGINT); the partial trajectory is saved as on a failure.

Every output is written whole or not at all: to a unique ``<file>.<token>.part`` beside it,
renamed over it when complete (:mod:`tenscontrol.fileio`); a full disk, a failure or Ctrl-C
leaves no truncated output under the real name and no ``.part`` behind.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import warnings
from pathlib import Path

import numpy as np

from tenscontrol import __version__
from tenscontrol.cli import design_commands, model_commands, study_commands, view_commands
from tenscontrol.cli.common import (Failed, Parser, check_folder, one_line, os_error,
                                    positive_float, read_controller, read_loads, read_velocities,
                                    same_file, shell_words)
from tenscontrol.demo import DEMO_DESCRIPTION, run_demo
from tenscontrol.model.io import load_structure
from tenscontrol.simulation.simulator import (SimulationError, Trajectory, default_tolerances,
                                              simulate)
from tenscontrol.simulation.trajectory import SimulationInterrupted
from tenscontrol.simulation.trajectory_io import ARRAY_KEYS

__all__ = ["NPZ_KEYS", "OUTPUT_LIMIT", "main", "output_samples", "output_times",
           "save_trajectory"]

#: The arrays of a trajectory file (beside them: the structure, the settings, the stats).
NPZ_KEYS = ARRAY_KEYS
#: Largest output of ``simulate --dt-out`` [bytes], checked before simulating. While it runs,
#: the simulator holds about three times the output in memory (the recorded states, then the
#: arrays), so 500 MB of output stays within the memory of a laptop or a CI runner; it is still
#: two million samples of the T-bar, far more than a plot or a spectrum needs.
OUTPUT_LIMIT = 500_000_000
_CORRECTIONS = ("energy", "geometric", "none")
# A grid point within this fraction of --dt-out of t_final is t_final (round-off, not a sample).
_SNAP = 1e-6


def _parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="tenscontrol",
        description="Simulation and control of tensegrity structures.")
    parser.add_argument("--version", action="version", version=f"tenscontrol {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    parser.commands = commands.choices  # the subcommands' parsers, by name
    model_commands.add_structure_commands(commands)
    design_commands.add_parsers(commands)
    _add_simulate(commands)
    model_commands.add_verify(commands)
    view_commands.add_parsers(commands)
    study_commands.add_parsers(commands)
    demo = commands.add_parser(
        "demo", help="run the whole pipeline on the T-bar and write plots",
        description=DEMO_DESCRIPTION)
    demo.add_argument("--out-dir", default="tenscontrol-demo", metavar="DIR",
                      help="directory for the plots (default: ./%(default)s)")
    demo.set_defaults(run=_cmd_demo)
    return parser


def _add_simulate(commands) -> None:
    sim = commands.add_parser(
        "simulate", help="simulate a structure file and save the trajectory (.npz)",
        description="Simulate a structure given as a tenscontrol.structure/1 JSON file from "
                    "its node positions (at rest, or with --qd), under constant --loads and "
                    "an optional --controller, and save the trajectory with the structure "
                    "and the settings (read it with tenscontrol.load_trajectory).")
    sim.add_argument("file", metavar="FILE.json", help="the structure file")
    sim.add_argument("--t-final", type=positive_float, required=True, metavar="T",
                     help="end time [s]")
    sim.add_argument("--rtol", type=positive_float, default=None,
                     help="relative tolerance (default: the bar model's, 1e-10 rigid, "
                          "1e-8 compressible)")
    sim.add_argument("--atol", type=positive_float, default=None,
                     help="absolute tolerance (default: the bar model's, 1e-10 rigid, "
                          "1e-8 compressible)")
    sim.add_argument("--bars", choices=("rigid", "compressible"), default="rigid",
                     help="bar model (default: %(default)s); compressible bars use each bar's "
                          "Young's modulus and Poisson's ratio and the implicit integrator")
    sim.add_argument("--kinetic", choices=("consistent", "paper"), default="consistent",
                     help="kinetic energy of compressible bars (default: %(default)s)")
    sim.add_argument("--correction", choices=_CORRECTIONS, default=None,
                     help="correction after each step, rigid bars (default: energy)")
    sim.add_argument("--dt-out", type=positive_float, metavar="DT",
                     help="output interval [s] (default: every accepted step); the output "
                          "always ends at T")
    sim.add_argument("--loads", metavar="LOADS.npy|json",
                     help="constant external nodal forces [N]: an (n_nodes, 3) array in a "
                          ".npy file or a JSON list of [fx, fy, fz] rows (default: none)")
    sim.add_argument("--qd", metavar="VELOCITIES.npy|json",
                     help="initial node velocities [m/s], an (n_nodes, 3) array as for "
                          "--loads (default: at rest)")
    sim.add_argument("--controller", metavar="K.npz",
                     help="close the loop with a controller file written by "
                          "tenscontrol.save_controller (continuous or sampled: tenscontrol "
                          "design --period)")
    sim.add_argument("--progress", action="store_true", help="show a progress bar on stderr")
    sim.add_argument("--out", required=True, metavar="TRAJ.npz",
                     help=f"output file: the arrays {', '.join(NPZ_KEYS)}, the structure and "
                          "the settings. A failed or interrupted run saves what it computed "
                          "as TRAJ.partial.npz")
    sim.set_defaults(run=_cmd_simulate)


def _parse(argv) -> argparse.Namespace:
    """parse_args, but an unknown argument after a command is reported by that command's
    parser, so the message points to its --help."""
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        parser.commands[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def _grid(t_final: float, dt_out: float) -> tuple[float, bool]:
    """Whole intervals `dt_out` in [0, t_final] (inf if too many for a float) and whether the
    last of them ends on t_final (to round-off)."""
    ratio = t_final / dt_out
    if not ratio < 2.0**53:  # beyond this, k * dt_out no longer counts the samples exactly
        return math.inf, False
    n = math.floor(ratio + _SNAP)
    return n, abs(t_final - n * dt_out) <= _SNAP * dt_out


def output_samples(t_final: float, dt_out: float) -> float:
    """The length of :func:`output_times` ``(t_final, dt_out)``, without building it.

    Returns
    -------
    float
        An integer count, or ``inf`` if it exceeds 2**53.
    """
    n, on_grid = _grid(t_final, dt_out)
    return n + (1 if on_grid else 2)


def output_times(t_final: float, dt_out: float) -> np.ndarray:
    """The output grid 0, dt_out, 2 dt_out, ... [s], always ending at `t_final`.

    When `t_final` is not a multiple of `dt_out` the last interval is shorter; a grid point
    within round-off (a millionth of `dt_out`) of `t_final` is `t_final`. Check the length with
    :func:`output_samples` first: this builds the whole array.
    """
    n, on_grid = _grid(t_final, dt_out)
    if math.isinf(n):
        raise ValueError(f"dt_out = {dt_out:g} s over t_final = {t_final:g} s gives more than "
                         f"2**53 output times")
    times = np.arange(n + 1) * dt_out  # products, not sums: no accumulated round-off
    if on_grid:
        times[-1] = t_final
        return times
    return np.append(times, t_final)


def save_trajectory(traj: Trajectory, path) -> None:
    """Write `traj` to the .npz file `path`: :meth:`Trajectory.save`, the one format.

    The file is written beside `path` as a unique ``<name>.<token>.part`` and renamed when
    complete, so an interrupt or a full disk never leaves a truncated `path`.
    """
    traj.save(path)


def _partial_path(out: Path) -> Path:
    """Where a failed or interrupted run's trajectory goes: ``traj.npz`` -> ``traj.partial.npz``."""
    stem = out.name[:-len(".npz")] if out.name.endswith(".npz") else out.name
    return out.with_name(stem + ".partial.npz")


def _check_out(out: Path, source: Path) -> None:
    """Refuse an --out that could not be written, or whose writing would replace the structure
    file, before anything is simulated. Creates nothing."""
    if out.is_dir():
        raise ValueError(f"--out {out}: is a directory; give a file name such as "
                         f"{out / 'traj.npz'}")
    if out.exists() and not out.is_file():
        raise ValueError(f"--out {out}: is not a regular file; give a file name to write")
    check_folder(out, "--out")
    partial = _partial_path(out)
    for target in (out, partial):
        if same_file(target, source):
            instead = source.with_name(source.stem + "-trajectory.npz")
            raise ValueError(f"--out {out}: writing {target.name} would replace the structure "
                             f"file {source}; choose another --out, such as {instead}")


def _sample_bytes(structure, bars: str) -> int:
    """Bytes per output sample: t, nodes, velocities, energy, work, energy_violation and, with
    rigid bars, one bar violation per bar (float64)."""
    return 8 * (4 + 6 * structure.n_nodes + (structure.n_bars if bars == "rigid" else 0))


def _nice_ceil(x: float) -> float:
    """The smallest of 1, 2, 5 times a power of ten that is >= x."""
    power = 10.0 ** math.floor(math.log10(x))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= x)


def _check_output_size(structure, t_final: float, dt_out, bars: str) -> None:
    """Refuse a --dt-out whose output would exceed :data:`OUTPUT_LIMIT`, before simulating."""
    if dt_out is None:  # every accepted step: bounded by the integrator's own step guard
        return
    per_sample = _sample_bytes(structure, bars)
    samples = output_samples(t_final, dt_out)
    largest = OUTPUT_LIMIT // per_sample
    if samples <= largest:
        return
    need = ("more than 2**53 samples" if math.isinf(samples)
            else f"{samples:,} samples ({_size(samples * per_sample)})")
    limit = f"{largest:,} samples ({_size(OUTPUT_LIMIT)}) for this structure"
    if largest < 3:
        raise ValueError(f"--dt-out {dt_out:g}: the structure is too large to save even "
                         f"3 samples within {_size(OUTPUT_LIMIT)}")
    suggest = _nice_ceil(t_final / (largest - 2))
    while output_samples(t_final, suggest) > largest:  # guard against round-off in the above
        suggest = _nice_ceil(suggest * 1.01)
    raise ValueError(f"--dt-out {dt_out:g}: the output would take {need}, more than the "
                     f"largest allowed, {limit}; use --dt-out {suggest:g} or larger")


def _size(n_bytes: float) -> str:
    return f"{n_bytes / 1e9:,.1f} GB" if n_bytes >= 1e9 else f"{n_bytes / 1e6:,.0f} MB"


def _save_partial(traj, path: Path) -> str:
    """Save a failed or interrupted run's trajectory to `path`; say where, or why not."""
    if traj is None:
        return "nothing was saved"
    try:
        save_trajectory(traj, path)
    except KeyboardInterrupt:
        return f"interrupted while writing {path}, nothing saved"
    except Exception as exc:  # the run's own failure is the news: report this one beside it
        return f"the partial trajectory could not be saved to {path} ({one_line(exc)})"
    n = len(traj.t)
    samples = "the 1 sample up to there is" if n == 1 else f"the {n} samples up to there are"
    return f"{samples} in {path}"


def _simulate(structure, args, partial: Path, **options) -> Trajectory:
    """simulate(), turning a failure or an interrupt into a saved partial trajectory and one
    line."""
    try:
        return simulate(structure, args.t_final, bars=args.bars, kinetic=args.kinetic,
                        correction=args.correction, progress=args.progress, **options)
    except SimulationError as exc:
        cause = one_line(getattr(exc, "cause", exc))
        saved = _save_partial(getattr(exc, "trajectory", None), partial)
        raise Failed(1, f"error: simulation failed at t = {exc.time:.6g} s: {cause}; "
                         f"{saved}") from None
    except SimulationInterrupted as exc:
        saved = _save_partial(exc.trajectory, partial)
        raise Failed(130, f"interrupted at t = {exc.time:.6g} s; {saved}") from None


def _run_inputs(structure, args) -> dict:
    """The loads, initial velocities and controller given by files (only those given)."""
    inputs = {}
    if args.loads is not None:
        inputs["loads"] = read_loads(args.loads, structure)
    if args.qd is not None:
        inputs["qd"] = read_velocities(args.qd, structure)
    if args.controller is not None:
        inputs["controller"] = read_controller(args.controller, structure)
    return inputs


def _cmd_simulate(args) -> int:
    source, out = Path(args.file), Path(args.out)
    _check_out(out, source)
    structure = load_structure(source)
    _check_output_size(structure, args.t_final, args.dt_out, args.bars)
    t_eval = None if args.dt_out is None else output_times(args.t_final, args.dt_out)
    rtol, atol = default_tolerances(args.bars, args.rtol, args.atol)
    traj = _simulate(structure, args, _partial_path(out), t_eval=t_eval, rtol=rtol, atol=atol,
                     **_run_inputs(structure, args))
    try:
        save_trajectory(traj, out)
    except OSError as exc:
        raise Failed(1, f"error: {os_error(exc)}; the simulation ran but nothing was "
                         f"saved") from None
    print(f"{structure.name}: simulated {args.t_final:g} s, {traj.bars} bars, "
          f"correction = {traj.correction}, rtol = {rtol:g}, atol = {atol:g}")
    print(traj.summary())
    print(f"wrote {out}")
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
    print(f"tenscontrol: warning: {shell_words(one_line(message))}", file=sys.stderr)


def _failure(exc: BaseException) -> tuple[int, str]:
    """The exit status and the line after ``tenscontrol: `` for an exception of a command."""
    if isinstance(exc, Failed):
        return exc.status, exc.line
    if isinstance(exc, SimulationInterrupted):
        return 130, f"interrupted at t = {exc.time:.6g} s"
    if isinstance(exc, KeyboardInterrupt):
        return 130, "interrupted"
    if isinstance(exc, SimulationError):  # e.g. in the demo, which has no partial file
        return 1, f"error: {one_line(exc)}"
    if isinstance(exc, (ValueError, TypeError)):
        return 2, f"error: {one_line(exc)}"
    if isinstance(exc, OSError):
        return 2, f"error: {os_error(exc)}"
    if isinstance(exc, MemoryError):
        return 1, "error: out of memory (try a smaller structure, --t-final or a larger --dt-out)"
    # anything else is a bug of ours, but a shell user still gets one line, naming the type
    return 1, f"error: unexpected {type(exc).__name__}: {one_line(exc)} (please report it)"


def _silence_stdout() -> None:
    """Point stdout at the null device, so that flushing it at exit raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real stdout (e.g. captured): nothing to do
        pass


def main(argv=None) -> int:
    """Run the ``tenscontrol`` command.

    Parameters
    ----------
    argv : list of str, optional
        The arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success; 2 if the input was invalid (nothing was simulated); 1 if the simulation
        failed (the partial trajectory is saved as ``<name>.partial.npz`` beside ``--out``);
        130 if interrupted (Ctrl-C; the partial trajectory is saved likewise); 141 if stdout
        was a pipe closed by its reader (the files are complete, nothing more is printed).
        Each failure prints one line on stderr.

    Raises
    ------
    SystemExit
        On a usage error (status 2, one line on stderr), ``--help`` or ``--version``
        (status 0), from argparse.
    """
    args = _parse(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        try:
            return args.run(args)
        except BrokenPipeError:  # `tenscontrol ... | head`: the reader stopped, as with SIGPIPE
            _silence_stdout()
            return 141
        except BaseException as exc:
            if isinstance(exc, (SystemExit, GeneratorExit)):
                raise
            status, line = _failure(exc)
    print(f"tenscontrol: {line}", file=sys.stderr)
    return status
