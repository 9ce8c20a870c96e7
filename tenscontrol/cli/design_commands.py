"""The subcommand that designs a controller: design (tenscontrol.lqr, tenscontrol.hinfsyn), in
continuous time or sampled (--period, tenscontrol.discretize)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from tenscontrol.cli.common import (SELECTION_SYNTAX, Failed, check_selection_on, check_target,
                                    positive_float, positive_floats, read_matrix, selection,
                                    shell_words, whole_number)
from tenscontrol.model.io import load_structure

__all__ = ["add_parsers"]

# The options of one method only: (dest, the option as typed); a default of None means "not
# given", so giving one with the other method is an error, not silently ignored.
_LQR_OPTIONS = (("effort", "--effort"), ("Q", "--Q"), ("R", "--R"))
_HINF_OPTIONS = (("disturbances", "--disturbances"), ("measurements", "--measurements"),
                 ("d_scale", "--d-scale"), ("y_scale", "--y-scale"), ("u_scale", "--u-scale"),
                 ("rho", "--rho"), ("eps", "--eps"), ("tol", "--tol"), ("backoff", "--backoff"))
_METHODS = {"lqr": _LQR_OPTIONS, "hinf": _HINF_OPTIONS}


def _at_least_one(text: str) -> float:
    """argparse type: a finite number >= 1."""
    value = positive_float(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text!r}")
    return value


def add_parsers(commands) -> None:
    """Register design."""
    des = commands.add_parser(
        "design", help="design an LQR or H-infinity controller and write it (K.npz)",
        description="Linearize the structure about its node positions (an equilibrium: "
                    "prestress it with tenscontrol equilibrium first), design a controller "
                    "on the commanded strings' force densities with tenscontrol.lqr "
                    "(--method lqr, state feedback) or tenscontrol.hinfsyn (--method hinf; "
                    "state feedback, or output feedback with --measurements), print the "
                    "design and write the controller file that simulate --controller and "
                    "verify --controller read; with --period, the design sampled at that "
                    "period and held (tenscontrol.discretize), run by simulate and verify in "
                    "the sampled-data loop.")
    des.add_argument("file", metavar="FILE.json", help="the structure file, at an equilibrium")
    des.add_argument("--method", choices=tuple(_METHODS), default="lqr",
                     help="lqr: linear-quadratic regulator; hinf: H-infinity "
                          "(default: %(default)s)")
    des.add_argument("--out", required=True, metavar="K.npz",
                     help="the controller file to write (tenscontrol.save_controller)")
    _add_model_options(des.add_argument_group("the model (both methods)"))
    _add_sampling_options(des.add_argument_group("sampled-data controller (both methods)"))
    _add_lqr_options(des.add_argument_group("--method lqr"))
    _add_hinf_options(des.add_argument_group("--method hinf"))
    des.set_defaults(run=_cmd_design)


def _add_model_options(model) -> None:
    model.add_argument("--kind", choices=("passive", "control"), default="passive",
                       help="passive: the command adds to the strings' elastic law; control: "
                            "it replaces it (default: %(default)s)")
    model.add_argument("--bars", choices=("rigid", "compressible"), default="rigid",
                       help="bar model of the linearization (default: %(default)s)")
    model.add_argument("--outputs", type=selection, metavar="SELECTION",
                       help=f"the performance outputs: {SELECTION_SYNTAX}. Default: every "
                            "node position")
    model.add_argument("--order", type=whole_number(1), metavar="R",
                       help="design order: the design model is the order-R balanced "
                            "truncation (default: the minimal realization)")


def _delay(text: str) -> float:
    """argparse type: a finite number of seconds >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, got "
                                         f"{text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds >= 0, got "
                                         f"{text!r}")
    return value


def _add_sampling_options(sampling) -> None:
    sampling.add_argument("--period", type=positive_float, metavar="T",
                          help="write the controller sampled every T seconds with a "
                               "zero-order hold (the continuous design discretized exactly; "
                               "default: continuous)")
    sampling.add_argument("--delay", type=_delay, metavar="D",
                          help="with --period: computation delay [s], 0 <= D < T: the command "
                               "of sample k acts from k T + D (default: 0)")


def _add_lqr_options(lqr) -> None:
    lqr.add_argument("--effort", type=positive_float, metavar="E",
                     help="scale of the default input weight R = E diag(1/gamma_ref^2); "
                          "larger means gentler control (default: 1)")
    lqr.add_argument("--Q", metavar="Q.npy|json",
                     help="state weight on [dq; dqd], a (6 n_nodes, 6 n_nodes) symmetric "
                          "positive semidefinite matrix (default: the outputs relative to the "
                          "longest bar)")
    lqr.add_argument("--R", metavar="R.npy|json",
                     help="input weight, an (n_actuated, n_actuated) symmetric positive "
                          "definite matrix [m^2/N^2] (default: from --effort)")


def _add_hinf_options(hinf) -> None:
    hinf.add_argument("--disturbances", type=selection, metavar="SELECTION",
                      help="the nodal-force disturbance channels, e.g. '2:z+3:x' for fz2, "
                           "fx3 (default: every free coordinate)")
    hinf.add_argument("--measurements", type=selection, metavar="SELECTION",
                      help="measured node coordinates and string lengths ('strings:0,1'), "
                           "e.g. '2,3:xz+strings:0' (default: state feedback)")
    for option, unit, what in (("--d-scale", "N", "expected load per disturbance channel"),
                               ("--y-scale", "m", "allowed excursion per output"),
                               ("--u-scale", "N/m", "force-density scale per input "
                                                    "(default: the prestress)")):
        hinf.add_argument(option, type=positive_floats, metavar=f"{option[2].upper()}[,...]",
                          help=f"{what} [{unit}]: one number, or one per channel separated "
                               "by commas" + ("" if "default" in what else " (default: 1)"))
    hinf.add_argument("--rho", type=positive_float, help="control weight (default: 0.1)")
    hinf.add_argument("--eps", type=positive_float,
                      help="measurement-noise level [m] (default: 0.01)")
    hinf.add_argument("--tol", type=positive_float,
                      help="relative width of the final gamma bracket (default: 0.001)")
    hinf.add_argument("--backoff", type=_at_least_one,
                      help="output feedback: the controller at BACKOFF times the optimal "
                           "gamma, for slower controller poles (default: 1)")


def _check_method_options(args) -> None:
    """Refuse an option of the other method, naming it and the fix."""
    for method, options in _METHODS.items():
        given = [option for dest, option in options if getattr(args, dest) is not None]
        if method != args.method and given:
            raise ValueError(f"{given[0]} is an option of --method {method}; drop it, or "
                             f"use --method {method}")


def _lqr(model, structure, args):
    from tenscontrol.design.synthesis import lqr

    n_states, n_inputs = 6 * structure.n_nodes, structure.actuated_strings.size
    Q = None if args.Q is None else read_matrix(
        args.Q, "--Q", n_states, "6 per node (positions, then velocities)")
    R = None if args.R is None else read_matrix(
        args.R, "--R", n_inputs, "one row per commanded string")
    return lqr(model, Q=Q, R=R, order=args.order,
               effort=1.0 if args.effort is None else args.effort)


def _hinf(model, args):
    from tenscontrol.design.synthesis import hinfsyn

    given = {dest: getattr(args, dest) for dest, _ in _HINF_OPTIONS
             if getattr(args, dest) is not None}
    return hinfsyn(model, order=args.order, **given)


def _design(structure, args):
    """The design, the library's errors put in the command's options."""
    from tenscontrol.linear.linearization import linearize

    try:
        model = linearize(structure, kind=args.kind, bars=args.bars, outputs=args.outputs)
        return _lqr(model, structure, args) if args.method == "lqr" else _hinf(model, args)
    except ValueError as exc:
        if str(exc).startswith(("--Q ", "--R ")):
            raise
        text = shell_words(str(exc))
        if args.bars == "compressible":  # a prestress for rigid bars is no equilibrium here
            text = text.replace("tenscontrol equilibrium first",
                                "tenscontrol equilibrium --bars compressible first")
        raise ValueError(text) from None
    except RuntimeError as exc:  # hinfsyn's final loop check failed: the input was fine
        raise Failed(1, f"error: {shell_words(str(exc))}") from None


def _check_sampling(args) -> None:
    """Refuse --delay without --period, or not below it, before any work."""
    if args.period is None and args.delay is not None:
        raise ValueError("--delay is the computation delay of a sampled controller: give "
                         "--period too")
    if args.period is not None and args.delay is not None and not args.delay < args.period:
        raise ValueError(f"--delay must be less than --period ({args.period:g} s), got "
                         f"{args.delay:g}")


def _sampled(design, args):
    """The design's controller, sampled at --period with --delay; the sampled loop printed."""
    from tenscontrol.design.discrete import discrete_closed_loop, discretize, gain_margin

    if args.period is None:
        return design.controller
    delay = 0.0 if args.delay is None else args.delay
    controller = discretize(design.controller, args.period, delay)
    loop = np.asarray(discrete_closed_loop(design.minimal, controller).A)
    rho = float(np.abs(np.linalg.eigvals(loop)).max())
    print(f"sampled every {args.period:g} s (delay {delay:g} s): spectral radius of the "
          f"discrete loop {rho:.6g} ({'stable' if rho < 1 else 'UNSTABLE: a shorter --period'}"
          f"), gain margin {gain_margin(design.minimal, controller):.4g} (up to 100)")
    return controller


def _poles(poles) -> str:
    return ", ".join(f"{p.real:.4g}{p.imag:+.4g}j" if p.imag else f"{p.real:.4g}"
                     for p in poles)


def _cmd_design(args) -> int:
    from tenscontrol.control.storage import save_controller

    _check_method_options(args)
    _check_sampling(args)
    source, out = Path(args.file), Path(args.out)
    check_target(out, "--out", source, suffixes=(".npz",))
    structure = load_structure(source)
    for option in ("outputs", "disturbances", "measurements"):
        if getattr(args, option) is not None:
            check_selection_on(structure, getattr(args, option), f"--{option}",
                               strings=option == "measurements")
    design = _design(structure, args)
    print(design)
    if args.method == "lqr":
        print(f"closed-loop poles [1/s]: {_poles(design.E)}")
    else:
        poles = np.linalg.eigvals(np.asarray(design.closed_loop.A))
        print(f"closed-loop poles [1/s]: {_poles(poles[np.lexsort((poles.imag, poles.real))])}")
    controller = _sampled(design, args)
    save_controller(controller, out)
    print(f"wrote {out} ({type(controller).__name__} on strings "
          f"{', '.join(map(str, controller.strings))})")
    return 0
