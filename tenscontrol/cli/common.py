"""What the ``tenscontrol`` subcommands share: the one-line parser, failures put in words,
argument types, output checks and the readers of loads, velocities and controllers."""

from __future__ import annotations

import argparse
import json
import math
import os
import re
from pathlib import Path

import numpy as np

from tenscontrol import fileio
from tenscontrol.control.storage import load_controller
from tenscontrol.model.selection import AXES, Selection

__all__ = ["SELECTION_SYNTAX", "Failed", "Parser", "check_folder", "check_selection_on",
           "check_target", "nonzero", "one_line", "os_error", "positive_float", "positive_floats",
           "read_controller", "read_loads", "read_matrix", "read_velocities", "same_file",
           "selection", "selection_text", "shell_words", "whole_number"]

#: Largest loads or velocities file read [bytes]: far above any structure's (n, 3) array.
INPUT_LIMIT = 64 * 2**20


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line, like every other error."""

    def error(self, message: str):
        self.exit(2, f"tenscontrol: error: {one_line(message)} (see '{self.prog} --help')\n")


class Failed(Exception):
    """A failure already put in words: the line to print after ``tenscontrol: `` and the exit
    status."""

    def __init__(self, status: int, line: str):
        super().__init__(line)
        self.status = status
        self.line = line


def one_line(exc) -> str:
    """The text of `exc` (or any object) on one line; its type's name if it has none."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def os_error(exc: OSError) -> str:
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}{exc.strerror or one_line(exc)}"


def nonzero(text: str) -> bool:
    """Whether a number written as `text` has a non-zero digit before its exponent."""
    mantissa = text.lower().split("e")[0]
    return any(c in "123456789" for c in mantissa) and not mantissa.strip().startswith("-")


def whole_number(minimum: int):
    """argparse type: an integer >= `minimum` (argparse prefixes the option's name)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a whole number >= {minimum}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {text!r}")
        return value
    return parse


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0 (argparse prefixes the option's name)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if math.isnan(value):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    if math.isinf(value):
        why = "" if "inf" in text.lower() else " (beyond the float range, about 1.8e308)"
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}{why}")
    if value <= 0:
        why = " (below the float range, it rounds to 0)" if nonzero(text) else ""
        raise argparse.ArgumentTypeError(f"must be > 0, got {text!r}{why}")
    return value


def positive_floats(text: str):
    """argparse type: one number > 0, or a comma-separated list of them (one per channel);
    a float or a 1-D array."""
    values = [positive_float(part) for part in text.split(",")]
    return values[0] if len(values) == 1 else np.array(values)


def check_target(out: Path, option: str, *sources: Path, suffixes=()) -> None:
    """Refuse an output file that could not be written or would replace an input, before any
    work. Creates nothing."""
    if suffixes and out.suffix.lower() not in suffixes:
        raise ValueError(f"{option} {out}: the file name must end in "
                         f"{' or '.join(suffixes)}")
    if out.is_dir():
        raise ValueError(f"{option} {out}: is a directory; give a file name")
    check_folder(out, option)
    for source in sources:
        if same_file(out, source):
            raise ValueError(f"{option} {out}: would replace the input file {source}; choose "
                             f"another {option}")


def check_folder(out: Path, option: str) -> None:
    """Refuse an output file that is a directory, or whose folder is missing or where no file
    can be created (:func:`tenscontrol.fileio.check_folder`). Creates nothing."""
    fileio.check_folder(out, option)


def same_file(a: Path, b: Path) -> bool:
    """Whether `a` and `b` name one file: the same resolved path, or a link to it."""
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and a.samefile(b))
    except (OSError, RuntimeError):  # e.g. a symlink loop: then it is not our input either
        return False


def _read_array(path: Path, option: str) -> np.ndarray:
    """A float array from a .npy file or a JSON file of nested lists."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ValueError(f"{option} {path}: {exc.strerror or one_line(exc)}") from None
    if size > INPUT_LIMIT:
        raise ValueError(f"{option} {path}: {size:,} bytes, more than the {INPUT_LIMIT:,} "
                         "allowed for an (n, 3) array")
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            value = np.load(path, allow_pickle=False)
        elif suffix == ".json":
            value = json.loads(path.read_text(encoding="utf-8"))
        else:
            raise ValueError(f"{option} {path}: expected a .npy or .json file")
        array = np.asarray(value, dtype=float)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{option} {path}: not valid JSON ({one_line(exc)})") from None
    except (TypeError, ValueError) as exc:
        if str(exc).startswith(option):
            raise
        raise ValueError(f"{option} {path}: not an array of numbers ({one_line(exc)})") from None
    return array


def _nodal_array(path, option: str, structure, what: str) -> np.ndarray:
    array = _read_array(Path(path), option)
    n = structure.n_nodes
    if array.shape not in ((n, 3), (3 * n,)):
        raise ValueError(f"{option} {path}: expected an ({n}, 3) array of {what}, one row per "
                         f"node, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{option} {path}: every entry must be finite")
    return array.reshape(n, 3)


def read_matrix(path, option: str, n: int, what: str) -> np.ndarray:
    """A finite (n, n) matrix from a .npy or .json file (`what` names it in errors)."""
    array = _read_array(Path(path), option)
    if array.shape != (n, n) or not np.all(np.isfinite(array)):
        raise ValueError(f"{option} {path}: expected a finite ({n}, {n}) matrix, {what}; got "
                         f"shape {array.shape}" + ("" if array.shape != (n, n)
                                                   else " with entries not finite"))
    return array


def read_loads(path, structure) -> np.ndarray:
    """Constant external nodal forces (n, 3) [N] from a .npy or .json file."""
    return _nodal_array(path, "--loads", structure, "nodal forces [N]")


def read_velocities(path, structure) -> np.ndarray:
    """Initial node velocities (n, 3) [m/s] from a .npy or .json file."""
    return _nodal_array(path, "--qd", structure, "node velocities [m/s]")


def read_controller(path, structure):
    """A controller file (:func:`tenscontrol.save_controller`) that fits `structure`."""
    if not os.path.isfile(path):
        raise ValueError(f"--controller {path}: no such file")
    try:
        controller = load_controller(path)
    except ValueError as exc:
        raise ValueError(f"--controller {one_line(exc)}") from None
    nq = 3 * structure.n_nodes
    # the operating point: its own, its measurement's, or its Kalman filter's (DiscreteLQG)
    q_ref = getattr(controller, "q_ref", None)
    if q_ref is None:
        owner = controller.kalman if hasattr(controller, "kalman") else controller
        q_ref = owner.measurement.q_ref
    if q_ref.size != nq:
        raise ValueError(f"--controller {path}: designed for {q_ref.size // 3} nodes, the "
                         f"structure has {structure.n_nodes}")
    return controller


#: The shell spelling of a :class:`tenscontrol.Selection`, as the options' help gives it.
SELECTION_SYNTAX = ("NODES[:AXES] terms joined by '+': NODES is 'all', an index, a list "
                    "'2,3' or a range '0-3', AXES letters of xyz (default xyz); e.g. '2,3:xz' "
                    "(x and z of nodes 2 and 3), '2:z+3:x'")


def _index_list(text: str, what: str) -> list:
    """'2,3' or '0-3' or '1,4-6' as a list of ints (ranges inclusive)."""
    items = []
    for part in text.split(","):
        low, dash, high = part.strip().partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            raise argparse.ArgumentTypeError(
                f"{what} {text!r}: expected indices such as 2 or 2,3 or 0-3, got {part!r}")
        items += list(range(int(low), int(high) + 1)) if dash else [int(low)]
    return items


def _term(text: str) -> Selection:
    """One term of the shell syntax: NODES[:AXES] or strings:INDICES."""
    nodes, colon, axes = text.strip().partition(":")
    nodes = nodes.strip()
    if nodes == "strings":
        return Selection(nodes=[], strings=_index_list(axes, "strings"))
    axes = axes.strip() if colon else AXES
    if not axes or any(a not in AXES for a in axes) or len(set(axes)) != len(axes):
        raise argparse.ArgumentTypeError(
            f"term {text.strip()!r}: AXES must be distinct letters of xyz, got {axes!r}")
    if nodes == "all":
        return Selection("all", axes)
    indices = _index_list(nodes, "NODES")
    return Selection(indices[0] if len(indices) == 1 else indices, axes)


def selection(text: str) -> Selection:
    """argparse type: a :class:`tenscontrol.Selection` in the shell syntax
    :data:`SELECTION_SYNTAX` (``strings:0,1`` selects string lengths, for measurements)."""
    terms = [_term(t) for t in text.split("+")] if text.strip() else []
    if not terms:
        raise argparse.ArgumentTypeError(f"expected a selection such as '2,3:xz', got {text!r}")
    return sum(terms[1:], terms[0])


def _shell_term(term: Selection) -> str:
    nodes = term.nodes if isinstance(term.nodes, (str, int)) else ",".join(map(str, term.nodes))
    strings = f"strings:{','.join(map(str, term.strings))}" if term.strings else ""
    coordinates = f"{nodes}:{term.axes}" if nodes != "" else ""
    return "+".join(t for t in (coordinates, strings) if t)


def selection_text(value: Selection) -> str:
    """`value` in the shell syntax of :func:`selection` (its inverse, up to ranges)."""
    return "+".join(_shell_term(t) for t in value.terms)


def check_selection_on(structure, value: Selection, option: str, strings: bool = False):
    """`value` checked against `structure` (its nodes, fixed coordinates and, where `strings`
    allows them, strings); a ValueError naming `option` and the selection as typed."""
    typed = selection_text(value)
    if value.all_strings and not strings:
        raise ValueError(f"{option} {typed}: selects node coordinates only; string lengths "
                         "(strings:...) are for --measurements")
    try:
        value.coordinates(structure, f"{option} {typed}")
    except ValueError as exc:
        raise ValueError(str(exc).replace(repr(value), repr(typed))) from None
    bad = [k for k in value.all_strings if k >= structure.n_strings]
    if bad:
        raise ValueError(f"{option} {typed}: string {bad[0]} does not exist; the structure has "
                         f"strings 0 to {structure.n_strings - 1}")
    return value


# The Python spellings in the library's messages, and what a shell user types instead.
_SHELL_WORDS = (
    (r"configuration='free'", "--configuration free"),
    (r"bars_in_compression=False", "leaving out --bars-in-compression"),
    (r"\(e\.g\. catalog\.prestressable_twist\)", "(e.g. tenscontrol catalog prism)"),
    (r" \(tenscontrol\.static_equilibrium solves it at given rest lengths\)", ""),
    (r"find one with tenscontrol\.equilibrium\(structure\) and linearize its \.structure",
     "prestress the structure file with tenscontrol equilibrium first"),
    (r"Use tenscontrol\.equilibrium\(\.\.\.\) to find a prestressed equilibrium first, or "
     r"tenscontrol\.static_equilibrium\(\.\.\.\) for the configuration its rest lengths hold",
     "Prestress the structure file with tenscontrol equilibrium first"),
    (r"; pass at_rest='taut' for the tension-side derivative", ""),
    (r" \((?:qd = 0, )?at_equilibrium=(?:True|False)\)", ""),
    (r"(?<![-\w])order must be", "--order must be"),
    (r"\bpass R\b", "give --R"),
    (r"\bpass order >=", "give --order >="),
    (r"\braise order\b", "raise --order"),
    (r"\border=(\d+)", r"--order \1"),
    (r"\brescale d_scale/y_scale, or raise rho/eps",
     "rescale --d-scale/--y-scale, or raise --rho/--eps"),
    (r"\b(?:lqr|hinfsyn|minimal_realization|linearize|with_outputs): ", ""),
    (r"\bgamma_min = 0\b", "--gamma-min 0"),
    (r"(?<![-\w])(gamma_min|effort|rho|eps|tol|backoff|d_scale|y_scale|u_scale|"
     r"disturbances|outputs|measurements)\b(?!\w)",
     lambda m: "--" + m.group(1).replace("_", "-")),
    (r"\bQ \(weight on x - x\* = \[dq; dqd\]\)", "--Q"),
    (r"\bR \(weight on u\)", "--R"),
)


def shell_words(text: str) -> str:
    """A library message with its Python spellings (``configuration='free'``,
    ``gamma_min``, ``hinfsyn: rho``) replaced by the command's options."""
    for pattern, replacement in _SHELL_WORDS:
        text = re.sub(pattern, replacement, text)
    return text
