"""Files in and out, one way for the whole package: what is read, and how a file is written.

Reading (structure files, study files, saved trajectories and controllers): regular files only
(a FIFO or a device could block or never end), at most a given size, text as UTF-8, documents
nested at most :data:`MAX_DEPTH` levels; every failure is a ``ValueError`` (or the caller's
subclass, e.g. ``StudyFileError``) whose message starts with the file's path and names the
entry at fault. An ``.npz`` file is read lazily: :func:`npz_entry` names the entry that is
truncated, corrupt, pickled or of the wrong type or shape.

Writing (every output of the library and the ``tenscontrol`` command): :func:`check_folder`
before the work, then :func:`write_file` (or :func:`part_file` for writers that need a path)
writes to a unique ``<name>.<token>.part`` beside the target and renames it over the target
only when it is complete (``os.replace``, atomic on POSIX and Windows). A full disk, an error
or Ctrl-C leaves the target as it was and no ``.part`` behind; the ``OSError`` names the
target.

This module sits at the bottom of the package with :mod:`tenscontrol.validation`, and imports
nothing else of tenscontrol.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

__all__ = ["MAX_DEPTH", "check_folder", "check_depth", "npz_entry", "open_npz", "open_regular",
           "parse_json", "parse_toml", "part_file", "read_text", "write_file"]

#: Deepest nesting of a JSON or TOML document read (a structure file nests 4 levels, a study
#: file 5): half of Python's default recursion limit, so that what recurses over a document
#: (the parser, numpy, repr) never meets a RecursionError.
MAX_DEPTH = 500
# what a lazily read .npz entry raises when the file is truncated, corrupt or crafted
_NPZ_ERRORS = (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error, KeyError,
               NotImplementedError, RuntimeError)


def open_regular(path, *, max_bytes: int, what: str, error=ValueError, hint: str = ""):
    """The binary file object of `path`, opened only if it is a regular file of at most
    `max_bytes` bytes; `error` (naming the path and `what` it should be) otherwise. `hint`
    follows the message of a file over the limit."""
    try:
        # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except IsADirectoryError:
        raise error(f"{path}: is a directory, not {what}") from None
    except OSError as exc:
        raise error(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise error(f"{path}: is a directory, not {what}")
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{path}: not a regular file (a pipe, FIFO or device), which could "
                        f"block or never end; {what} must be a regular file")
        if info.st_size > max_bytes:
            raise error(too_big(path, max_bytes, hint))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def too_big(path, max_bytes: int, hint: str = "") -> str:
    """The message for a file over its size limit, `hint` appended."""
    return (f"{path}: the file is larger than the limit of {max_bytes} bytes "
            f"({max_bytes / 2**20:.4g} MiB, max_bytes)" + (f"; {hint}" if hint else ""))


def read_text(path, *, max_bytes: int, what: str, error=ValueError, hint: str = "") -> str:
    """The UTF-8 text of the regular file `path` of at most `max_bytes` bytes (see
    :func:`open_regular`)."""
    try:
        with open_regular(path, max_bytes=max_bytes, what=what, error=error, hint=hint) as f:
            data = f.read(max_bytes + 1)  # bounded even if the file grows while we read
    except OSError as exc:
        raise error(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise error(too_big(path, max_bytes, hint))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: cannot read the file: not UTF-8 text (byte {exc.start} is "
                    f"{data[exc.start]:#04x}); "
                    f"save {what} as UTF-8") from None


def check_depth(data, name: str, error=ValueError, kind: str = "JSON",
                limit: int = MAX_DEPTH) -> None:
    """`error` if the parsed `kind` document `data` nests lists and dicts deeper than `limit`."""
    stack = [(data, 1)]
    while stack:  # iterative: the check must not recurse itself
        value, depth = stack.pop()
        if isinstance(value, dict):
            value = list(value.values())
        if not isinstance(value, list):
            continue
        if depth > limit:
            raise error(f"{name}: the {kind} nests too deeply to read (more than {limit} "
                        "levels); no tenscontrol file does")
        stack.extend((v, depth + 1) for v in value if isinstance(v, (list, dict)))


def parse_json(text: str, name: str, *, error=ValueError, object_pairs_hook=None,
               on_retry=None):
    """The JSON document `text` of the file `name`, nested at most :data:`MAX_DEPTH` levels;
    `error` with the line and column otherwise.

    `object_pairs_hook` is :func:`json.loads`'. An integer too long for Python's int() (over
    4300 digits) reads as a float (+-inf), so that the field's own check names it: the text is
    parsed again for that, after calling `on_retry` (e.g. to forget what the hook noted).
    """
    try:
        try:
            data = json.loads(text, object_pairs_hook=object_pairs_hook)
        except json.JSONDecodeError:
            raise
        except ValueError:  # an integer of over 4300 digits
            if on_retry is not None:
                on_retry()
            data = json.loads(text, object_pairs_hook=object_pairs_hook, parse_int=_long_int)
    except json.JSONDecodeError as exc:
        raise error(f"{name}: not valid JSON at line {exc.lineno} column {exc.colno}: "
                    f"{exc.msg}") from None
    except RecursionError:
        raise error(f"{name}: the JSON nests too deeply to read (more than {MAX_DEPTH} "
                    "levels); no tenscontrol file does") from None
    check_depth(data, name, error)
    return data


def _long_int(digits: str):
    """parse_int of the retry: an integer too long for Python's int() is +-inf as a float."""
    return int(digits) if len(digits) < 4000 else float(digits)


def parse_toml(text: str, name: str, *, error=ValueError) -> dict:
    """The TOML document `text` of the file `name` (Python >= 3.11), nested at most
    :data:`MAX_DEPTH` levels; `error` with the cause otherwise."""
    try:
        import tomllib
    except ImportError:
        raise error(f"{name}: reading TOML needs Python >= 3.11 (tomllib); write the file as "
                    "JSON") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{name}: not valid TOML: {exc}") from None
    except RecursionError:
        raise error(f"{name}: the TOML nests too deeply to read (more than {MAX_DEPTH} "
                    "levels); no tenscontrol file does") from None
    check_depth(data, name, error, "TOML")
    return data


@contextlib.contextmanager
def open_npz(path, *, max_bytes: int, what: str, error=ValueError) -> Iterator:
    """The ``.npz`` archive `path` (no pickles) as a context manager, its entries at most
    `max_bytes` bytes in all once unpacked; `error` naming the file if it is not a readable
    .npz archive. The file is closed when the block ends."""
    with open_regular(path, max_bytes=max_bytes, what=what, error=error) as f:
        try:
            data = np.load(f, allow_pickle=False)
            unpacked = (sum(info.file_size for info in data.zip.infolist())
                        if isinstance(data, np.lib.npyio.NpzFile) else 0)
        except _NPZ_ERRORS as exc:
            raise error(f"{path}: not {what}: not an .npz archive, or a truncated one "
                        f"({_cause(exc)})") from None
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise error(f"{path}: a single .npy array, not {what} (an .npz archive)")
        with data:  # np.load leaves a file object it was given open: `with f` closes it
            if unpacked > max_bytes:
                raise error(too_big(path, max_bytes, f"{what} unpacks to {unpacked} bytes"))
            yield data


def _cause(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def npz_entry(data, key: str, path, *, kind: str, ndim=None, error=ValueError) -> np.ndarray:
    """The entry `key` of the open archive `data`, checked to hold numbers or text.

    `kind` is a string of numpy dtype kinds accepted: ``"f"`` floats (integers are
    converted), ``"i"`` integers, ``"b"`` bools, ``"U"`` text; `ndim` the number of dimensions
    (None: any). `error` names the file and the entry when it is missing, unreadable (truncated,
    corrupt, pickled objects) or of another type or dimension.
    """
    if key not in data.files:
        raise error(f"{path}: entry '{key}' is missing")
    try:
        value = data[key]
    except _NPZ_ERRORS as exc:
        why = ("holds pickled objects, which are never loaded" if "allow_pickle" in str(exc)
               else f"cannot be read ({_cause(exc)}); the file is truncated or corrupt")
        raise error(f"{path}: entry '{key}' {why}") from None
    accepted = {"f": "fiu", "i": "iu", "b": "b", "U": "U"}
    if value.dtype.kind not in "".join(accepted[k] for k in kind):
        names = {"f": "numbers", "i": "integers", "b": "booleans", "U": "text"}
        raise error(f"{path}: entry '{key}' must hold {' or '.join(names[k] for k in kind)}, "
                    f"got a {value.dtype} array")
    if ndim is not None and value.ndim != ndim:
        raise error(f"{path}: entry '{key}' must have {ndim} dimension(s), got shape "
                    f"{value.shape}")
    if kind == "f" and value.dtype.kind != "f":
        value = value.astype(float)
    return value


def check_folder(path, name: str = "path") -> Path:
    """`path` as a Path, after checking that a file can be created in its folder (before the
    work that produces it). ValueError naming `name`, the path and the fix otherwise.

    Creates nothing: an anonymous temporary file is tried (on Linux no name ever appears),
    since os.access passes for root even where no file can be created (/proc, /sys).
    """
    path = Path(os.fspath(path))
    if path.is_dir():
        raise ValueError(f"{name} {path}: is a directory; give a file name")
    if path.exists() and not path.is_file():
        raise ValueError(f"{name} {path}: is not a regular file; give a file name to write")
    folder = path.parent
    if not folder.is_dir():
        what = "is not a directory" if folder.exists() else "does not exist"
        raise ValueError(f"{name} {path}: the folder {folder} {what}; create it or choose "
                         f"another {name}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"{name} {path}: the folder {folder} is not writable; choose another "
                         f"{name}")
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise ValueError(f"{name} {path}: the folder {folder} is not writable "
                         f"({exc.strerror or exc}); choose another {name}") from None
    return path


def _new_part(path: Path, keep_suffix: bool) -> tuple[Path, int]:
    """A new, unique part file beside `path` and its open descriptor (mode from the umask)."""
    for _ in range(100):
        token = secrets.token_hex(4)
        name = (f"{path.stem}.{token}.part{path.suffix}" if keep_suffix
                else f"{path.name}.{token}.part")
        part = path.with_name(name)
        try:
            return part, os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
    raise FileExistsError(f"{path}: no free part-file name beside it")


def _target(path) -> tuple[Path, bool]:
    """The file to replace for `path` (a symbolic link's target, so that the link stays) and
    whether it is a device, FIFO or socket, which is written in place (nothing to replace)."""
    path = Path(os.fspath(path))
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    if path.is_dir():  # os.replace would refuse it, but only after all the work
        raise IsADirectoryError(errno.EISDIR, "is a directory; give a file name", str(path))
    return path, path.exists() and not path.is_file()


@contextlib.contextmanager
def part_file(path, *, keep_suffix: bool = False) -> Iterator[Path]:
    """The unique part file to write `path` through, renamed over `path` when the block ends
    without an exception, removed otherwise. For writers that take a file name (matplotlib);
    `keep_suffix` keeps the target's suffix last (``ball.1f3a.part.gif``), for writers that
    choose the format by it. An OSError names `path`. A symbolic link is kept and its target
    replaced; a device or FIFO (``/dev/null``) is written directly."""
    path, special = _target(path)
    if special:
        yield path
        return
    try:
        part, fd = _new_part(path, keep_suffix)
        os.close(fd)
    except OSError as exc:
        raise _named(exc, path) from None
    try:
        yield part
        os.replace(part, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            part.unlink()
        if isinstance(exc, OSError):
            raise _named(exc, path) from None
        raise


def write_file(path, write: Callable) -> Path:
    """Write `path` whole or not at all: ``write(f)`` fills a binary file object opened on a
    unique part file, which replaces `path` once complete and synced to the disk.

    Returns the Path written; an OSError (full disk, missing folder, ...) names `path`, and
    leaves `path` as it was and no part file behind. A symbolic link is kept and its target
    replaced; a device or FIFO (``/dev/null``) is written directly.
    """
    given = Path(os.fspath(path))
    with part_file(given) as part:
        with open(part, "wb") as f:
            write(f)
            f.flush()
            if os.path.isfile(part):  # a device or FIFO has nothing to sync
                os.fsync(f.fileno())
    return given


def _named(exc: OSError, path: Path) -> OSError:
    """`exc` as an OSError of the same type naming `path` (not the part file), with the fix."""
    why = exc.strerror or str(exc)
    if exc.errno == errno.ENOENT and not path.parent.is_dir():
        why += f" (the folder {path.parent} does not exist; create it first)"
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT):
        why += f" (no file can be created in {path.parent})"
    elif exc.errno in (errno.EFBIG, errno.ENOSPC, errno.EDQUOT):
        why += " (the disk or the file size limit is full; the file is unchanged)"
    if not exc.errno:
        return OSError(f"{path}: {why}")
    return type(exc)(exc.errno, why, str(path))
