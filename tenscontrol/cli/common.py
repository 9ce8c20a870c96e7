"""What the ``tenscontrol`` subcommands share: the one-line parser, failures put in words,
argument types, output checks and the readers of loads, velocities and controllers."""

from __future__ import annotations

import argparse
import json
import math
import os
from pathlib import Path

import numpy as np

from tenscontrol import fileio
from tenscontrol.feedback.storage import load_controller

__all__ = ["Failed", "Parser", "check_folder", "check_target", "nonzero", "one_line", "os_error",
           "positive_float", "read_controller", "read_loads", "read_velocities", "same_file",
           "whole_number"]

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
    q_ref = controller.q_ref if hasattr(controller, "q_ref") else controller.measurement.q_ref
    if q_ref.size != nq:
        raise ValueError(f"--controller {path}: designed for {q_ref.size // 3} nodes, the "
                         f"structure has {structure.n_nodes}")
    return controller
