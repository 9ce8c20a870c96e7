"""The subcommands on structures and models: info, catalog, equilibrium, linearize, verify."""

from __future__ import annotations

import argparse
import functools
import inspect
import math
from pathlib import Path

import numpy as np

from tenscontrol import fileio
from tenscontrol.cli.common import (SELECTION_SYNTAX, check_selection_on, check_target,
                                    positive_float, read_controller, read_loads, selection,
                                    shell_words)
from tenscontrol.model import catalog
from tenscontrol.model.io import load_structure, save_structure
from tenscontrol.model.selection import Selection
from tenscontrol.model.tables import titled_table

__all__ = ["CATALOG", "add_structure_commands", "add_verify", "catalog_entry", "fixed_text",
           "structure_info"]

#: The catalog structures ``tenscontrol catalog NAME`` writes: the functions of
#: :mod:`tenscontrol.model.catalog` with their default arguments, or the ones given here.
CATALOG = {
    "tbar": catalog.tbar,
    "dbar": catalog.dbar,
    "arm": catalog.arm,
    "ball": catalog.ball,
    "prism": catalog.prism,
    "prism_tower": functools.partial(catalog.prism_tower, 2),
    "icosahedron": catalog.icosahedron,
    "icosahedron_on_face": functools.partial(catalog.icosahedron, on_face=True),
}
_BARS = ("rigid", "compressible")


def _non_negative(text: str) -> float:
    """argparse type: a finite number >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return value


def add_structure_commands(commands) -> None:
    """Register info, catalog, equilibrium and linearize."""
    info = commands.add_parser(
        "info", help="describe a structure file, or this installation",
        description="Print a structure's counts, masses, member lengths, fixed coordinates, "
                    "materials and prestress figures; without a file, this installation: "
                    "versions and whether the kernels compiled at install loaded.")
    info.add_argument("file", metavar="FILE.json", nargs="?", default=None,
                      help="the structure file (none: the installation)")
    info.set_defaults(run=_cmd_info)

    cat = commands.add_parser(
        "catalog", help="write a catalog structure to a JSON file",
        description="Write one of tenscontrol's ready-made structures (tenscontrol.catalog, "
                    "default arguments) as a tenscontrol.structure/1 JSON file; --list "
                    "describes each: counts, fixed coordinates and gravity.")
    cat.add_argument("name", nargs="?", choices=list(CATALOG), metavar="NAME",
                     help=f"one of {', '.join(CATALOG)}")
    cat.add_argument("--list", action="store_true", help="describe every structure and exit")
    cat.add_argument("--out", metavar="FILE.json", help="the structure file to write")
    cat.set_defaults(run=_cmd_catalog)

    eq = commands.add_parser(
        "equilibrium", help="design a prestress and write the prestressed structure",
        description="Design the prestress of least total force density (or least norm) with "
                    "every string at least --gamma-min, in equilibrium under gravity and "
                    "--loads, and write the structure with those rest lengths: at its node "
                    "positions (--configuration fixed), or at the configuration it sags to "
                    "under the loads (--configuration free; the structure file then has the "
                    "sagged node positions). tenscontrol.equilibrium.")
    eq.add_argument("file", metavar="FILE.json", help="the structure file")
    eq.add_argument("--gamma-min", type=_non_negative, required=True, metavar="G",
                    help="smallest string force density [N/m]")
    eq.add_argument("--configuration", choices=("fixed", "free"), default="fixed",
                    help="fixed: hold the node positions; free: let the structure sag under "
                         "gravity and --loads first, for one whose built geometry cannot "
                         "hold them (default: %(default)s)")
    eq.add_argument("--objective", choices=("min_sum", "min_norm"), default="min_sum",
                    help="least total force density (an LP) or least norm (a QP; for "
                         "structures with springs) (default: %(default)s)")
    eq.add_argument("--bars-in-compression", action="store_true",
                    help="require every bar in compression (strict tensegrity)")
    eq.add_argument("--loads", metavar="LOADS.npy|json",
                    help="external nodal forces [N] to hold besides gravity, an (n_nodes, 3) "
                         "array as for simulate (default: none)")
    eq.add_argument("--bars", choices=_BARS, default="rigid",
                    help="bar model (default: %(default)s)")
    eq.add_argument("--out", required=True, metavar="PRESTRESSED.json",
                    help="the prestressed structure file to write")
    eq.set_defaults(run=_cmd_equilibrium)

    lin = commands.add_parser(
        "linearize", help="linearize about the structure's node positions and save the model",
        description="Linearize the structure about its node positions at rest and save A, B, "
                    "E, C, D, the signal names and units and the operating point: .mat for "
                    "MATLAB (ss(S.A, S.B, S.C, S.D, 'InputName', S.InputName, ...)), .npz for "
                    "numpy (the same variables).")
    lin.add_argument("file", metavar="FILE.json", help="the structure file")
    lin.add_argument("--kind", choices=("passive", "control"), default="passive",
                     help="passive: strings follow their elastic law and the inputs add to it; "
                          "control: the inputs are the force densities (default: %(default)s)")
    lin.add_argument("--bars", choices=_BARS, default="rigid",
                     help="bar model (default: %(default)s)")
    lin.add_argument("--outputs", type=selection, metavar="SELECTION",
                     help="the output coordinates (C picks their deviations; fixed ones are "
                          f"left out): {SELECTION_SYNTAX}. Default: every node position, "
                          "fixed ones included")
    lin.add_argument("--out", required=True, metavar="MODEL.npz|MODEL.mat",
                     help="the model file to write")
    lin.set_defaults(run=_cmd_linearize)


def add_verify(commands) -> None:
    """Register verify."""
    ver = commands.add_parser(
        "verify", help="check a controller in closed loop on the nonlinear model",
        description="Simulate the structure open loop and closed loop with the controller "
                    "file under a doublet or constant loads, and compare with the linear "
                    "prediction (tenscontrol.verify).")
    ver.add_argument("file", metavar="FILE.json",
                     help="the structure file, at the controller's operating point")
    ver.add_argument("--controller", required=True, metavar="K.npz",
                     help="a controller file written by tenscontrol.save_controller")
    load = ver.add_mutually_exclusive_group(required=True)
    load.add_argument("--doublet", nargs=2, metavar=("NODE", "AXIS"),
                      help="a doublet force on one node along x, y or z")
    load.add_argument("--loads", metavar="LOADS.npy|json",
                      help="constant nodal forces [N], an (n_nodes, 3) array")
    ver.add_argument("--amplitude", type=positive_float, default=10.0, metavar="N",
                     help="doublet amplitude [N] (default: %(default)s)")
    ver.add_argument("--half-period", type=positive_float, default=1.0, metavar="S",
                     help="doublet half period [s] (default: %(default)s)")
    ver.add_argument("--t-final", type=positive_float, default=10.0, metavar="T",
                     help="simulated time [s] (default: %(default)s)")
    ver.add_argument("--bars", choices=_BARS, default="rigid",
                     help="bar model (default: %(default)s)")
    ver.add_argument("--outputs", type=selection, metavar="SELECTION",
                     help="the deflections compared: node coordinates and string lengths "
                          f"('strings:0,1'); {SELECTION_SYNTAX}. Default: every free "
                          "coordinate")
    ver.add_argument("--plot", metavar="REPORT.png", help="also write the report's plot")
    ver.set_defaults(run=_cmd_verify)


def _range(values, unit: str, digits: int = 4) -> str:
    if not np.size(values):
        return "none"
    lo, hi = float(np.min(values)), float(np.max(values))
    return (f"{lo:.{digits}g} {unit}" if lo == hi else f"{lo:.{digits}g} .. {hi:.{digits}g} {unit}")


def _materials(members, what: str) -> str:
    """Members grouped by their material (or 'given' properties), with counts."""
    groups: dict[str, int] = {}
    for m in members:
        if m.material is not None:
            key = m.material
        elif what == "bar":
            key = f"density {m.density:g} kg/m^3, E {m.youngs_modulus:g} Pa"
        elif m.youngs_modulus is not None:
            key = f"E {m.youngs_modulus:g} Pa"
        else:
            key = "stiffness given"
        groups[key] = groups.get(key, 0) + 1
    return "; ".join(f"{key} ({n})" for key, n in groups.items()) or "none"


def fixed_text(s) -> str:
    """The fixed coordinates of `s` node by node, e.g. ``0 xyz, 1 xyz, 2 y, 3 y (8
    coordinates)``."""
    fixed = [f"{i} {''.join(a for a, f in zip('xyz', row) if f)}"
             for i, row in enumerate(s.fixed) if row.any()]
    return (f"{', '.join(fixed)} ({s.fixed_coordinates.size} coordinates)" if fixed
            else "nothing (free-floating)")


def _gravity(s) -> str:
    return f"({', '.join(f'{g:g}' for g in s.gravity)}) m/s^2"


def structure_info(s) -> str:
    """What ``tenscontrol info`` prints: the structure's table (:meth:`Structure.summary`,
    as ``print(structure)`` shows it), then the details that table leaves out, in the same
    form."""
    springs = int(s.string_is_spring.sum())
    point = sum(pm.mass for pm in s.point_masses)
    return s.summary() + "\n" + titled_table("details", [
        ("one-sided strings", f"{s.n_strings - springs} of {s.n_strings}"),
        ("mass", f"bars {float(s.bar_masses.sum()):.6g} kg, point masses {point:.6g} kg"),
        ("string lengths", _range(s.string_lengths, "m")),
        ("stiffness", _range(s.string_stiffness, "N/m")),
        ("damping", _range(s.string_damping, "N s/m")),
        ("fixed", fixed_text(s)),
        ("bar materials", _materials(s.bars, "bar")),
        ("string materials", _materials(s.strings, "string")),
    ])


def catalog_entry(name: str) -> str:
    """The lines ``catalog --list`` prints for `name`: the first line of its catalog
    function's docstring, then the structure's own counts, fixed coordinates and gravity."""
    make = CATALOG[name]
    function = make.func if isinstance(make, functools.partial) else make
    what = function.__doc__.strip().splitlines()[0].replace("`", "")
    if isinstance(make, functools.partial):  # the arguments given, by their names
        given = inspect.signature(function).bind_partial(*make.args, **make.keywords)
        arguments = ", ".join(f"{key} {value}" for key, value in given.arguments.items())
        what = f"{what.rstrip('.')} ({arguments})."
    s = make()
    return "\n".join([
        f"{name:<20} {what}",
        f"{'':<20} {s.name}: {s.n_nodes} nodes, {s.n_bars} bars, {s.n_strings} strings, "
        f"{len(s.point_masses)} point mass{'' if len(s.point_masses) == 1 else 'es'}",
        f"{'':<20} fixed: {fixed_text(s)}; gravity {_gravity(s)}"])


def installation_info() -> str:
    """tenscontrol's, Python's and numba's versions and the compiled kernels' status."""
    import platform

    import numba

    from tenscontrol import __version__
    from tenscontrol.mechanics.kernels import aot
    return "\n".join([f"tenscontrol {__version__}",
                      f"Python {platform.python_version()} ({platform.machine()})",
                      f"numba {numba.__version__}",
                      f"compiled kernels: {aot.STATUS}"])


def _cmd_info(args) -> int:
    if args.file is None:
        print(installation_info())
        return 0
    print(structure_info(load_structure(args.file)))
    return 0


def _cmd_catalog(args) -> int:
    if args.list:
        print("\n".join(catalog_entry(name) for name in CATALOG))
        return 0
    if args.name is None or args.out is None:
        raise ValueError("catalog: give a NAME and --out FILE.json, or --list")
    out = Path(args.out)
    check_target(out, "--out", suffixes=(".json",))
    structure = CATALOG[args.name]()
    save_structure(structure, out)
    print(f"{structure.name}: {structure.n_nodes} nodes, {structure.n_bars} bars, "
          f"{structure.n_strings} strings")
    print(f"wrote {out}")
    return 0


def _cmd_equilibrium(args) -> int:
    from tenscontrol.statics.prestress import equilibrium

    source, out = Path(args.file), Path(args.out)
    check_target(out, "--out", source, suffixes=(".json",))
    structure = load_structure(source)
    loads = None if args.loads is None else read_loads(args.loads, structure)
    try:
        eq = equilibrium(structure, gamma_min=args.gamma_min, loads=loads,
                         objective=args.objective, bars=args.bars,
                         bars_in_compression=args.bars_in_compression,
                         configuration=args.configuration)
    except ValueError as exc:  # PrestressError included: say it in the command's options
        raise ValueError(shell_words(str(exc))) from None
    save_structure(eq.structure, out)
    print(eq.summary())
    if eq.configuration == "free":
        print(f"sagged {eq.displacement:.6g} m at most to its loaded configuration "
              f"({eq.rounds} static solves)")
    print(f"wrote {out}")
    return 0


def _cmd_linearize(args) -> int:
    from tenscontrol.linear.linearization import linearize
    from tenscontrol.linear.matlab import mat_arrays, save_mat

    source, out = Path(args.file), Path(args.out)
    check_target(out, "--out", source, suffixes=(".npz", ".mat"))
    structure = load_structure(source)
    if args.outputs is not None:  # the option's name in the message, not linearize's
        check_selection_on(structure, args.outputs, "--outputs")
    model = linearize(structure, kind=args.kind, bars=args.bars, outputs=args.outputs)
    if out.suffix.lower() == ".mat":
        save_mat(model, out)
    else:
        arrays = {key: np.array(value, dtype=str) if isinstance(value, (list, str)) else value
                  for key, value in mat_arrays(model).items()}
        fileio.write_file(out, lambda f: np.savez(f, **arrays))
    print(model)
    print(f"wrote {out}")
    return 0


def _verify_loads(args, structure):
    from tenscontrol.model.loads import doublet

    if args.loads is not None:
        return read_loads(args.loads, structure)
    node, axis = args.doublet
    try:
        node = int(node)
    except ValueError:
        raise ValueError(f"--doublet {node} {axis}: NODE must be a node index, got "
                         f"{node!r}") from None
    if axis not in ("x", "y", "z"):
        raise ValueError(f"--doublet {node} {axis}: AXIS must be x, y or z")
    if not 0 <= node < structure.n_nodes:
        raise ValueError(f"--doublet {node} {axis}: node {node} does not exist; the structure "
                         f"has nodes 0 to {structure.n_nodes - 1}")
    return doublet(structure, Selection(node, axis), args.amplitude, args.half_period)


def _cmd_verify(args) -> int:
    from tenscontrol.studies.verification import verify

    source = Path(args.file)
    if args.plot is not None:
        check_target(Path(args.plot), "--plot", source, suffixes=(".png", ".pdf", ".svg"))
    structure = load_structure(source)
    controller = read_controller(args.controller, structure)
    if args.outputs is not None:
        check_selection_on(structure, args.outputs, "--outputs", strings=True)
    report = verify(structure, controller, _verify_loads(args, structure), args.t_final,
                    bars=args.bars, outputs=args.outputs)
    print(report)
    if args.plot is not None:
        from tenscontrol.plotting import save_figure
        save_figure(report.plot(), args.plot)
        print(f"wrote {args.plot}")
    return 0
