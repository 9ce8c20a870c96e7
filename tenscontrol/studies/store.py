"""A study's output folder: its manifest and one small JSON file per finished case.

Layout::

    out/manifest.json           the study: format, pipeline name, definition hash, every case
    out/cases/case-000017.json  one finished case: parameters, figures or error, timings

Every file is written to a part file of its own (a random ``.part`` name) and renamed (atomic on POSIX
and Windows), so a study killed at any moment leaves only whole files, and two processes running
the same study into one folder never write into the same part file: each case file is one
process's whole result (the last rename wins), never an interleaving of two. The manifest is
created exclusively (a hard link of the finished part file), so two processes starting different
studies in one empty folder cannot both claim it. A leftover ``.part`` (a process killed
between its write and its rename) is ignored, and removed when the study is resumed once it is
older than :data:`STALE_PART_SECONDS` (a part file lives for the milliseconds between the two,
so an old one belongs to no running process, on this machine or another sharing the folder).
A case file that is not a whole record of its case (damaged, another case's parameters, an
unknown status) is run again.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import secrets
import textwrap
import time

from tenscontrol import fileio

__all__ = ["FORMAT", "STALE_PART_SECONDS", "StudyFolderError", "case_path", "definition_hash",
           "finished_cases", "open_folder", "read_case", "same_parameters", "write_case", "write_json"]

FORMAT = "tenscontrol.study/1"
#: Age [s] past which a resumed study removes a leftover part file of its folder.
STALE_PART_SECONDS = 60.0


class StudyFolderError(ValueError):
    """The output folder holds another study, or a manifest that cannot be read."""

    def __repr__(self) -> str:
        # str() is the whole message; the repr keeps one line
        return f"StudyFolderError({textwrap.shorten(str(self), 150, placeholder=' ...')!r})"


def definition_hash(pipeline_name: str, pipeline_definition, cases) -> str:
    """sha256 of the study's definition: the pipeline's name and settings, every case."""
    text = json.dumps({"pipeline": pipeline_name, "definition": pipeline_definition,
                       "cases": [[c.index, c.parameters] for c in cases]},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _canonical(parameters) -> str:
    """The parameters as canonical JSON text: NaN, -0.0, 1 and 1.0 each have one spelling."""
    return json.dumps(parameters, sort_keys=True, allow_nan=True)


def same_parameters(a, b) -> bool:
    """True when two parameter dicts are the same case: compared by their canonical JSON text,
    so that a NaN equals itself (``nan != nan`` would rerun the case on every resume)."""
    return _canonical(a) == _canonical(b)


def _write_part(path: pathlib.Path, data) -> pathlib.Path:
    """`data` as JSON in a part file of this process's own (pid and random) name."""
    part = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(4)}.part")
    try:
        with open(part, "x", encoding="utf-8") as f:
            f.write(json.dumps(data, indent=1, allow_nan=True))
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return part


def write_json(path: pathlib.Path, data) -> None:
    """Write `data` to `path` atomically, through the library's one writing path (a part file
    of its own, synced, then one rename; an OSError names `path`)."""
    text = json.dumps(data, indent=1, allow_nan=True).encode("utf-8")
    fileio.write_file(path, lambda f: f.write(text))


def _create_json(path: pathlib.Path, data) -> bool:
    """Write `data` to `path` whole if `path` does not exist yet; False if it does."""
    part = _write_part(path, data)
    try:
        os.link(part, path)     # atomic and exclusive: fails if another process made it first
    except FileExistsError:
        return False
    except OSError:             # a file system without hard links: an atomic rename instead
        if path.exists():
            return False
        os.replace(part, path)
        return True
    finally:
        part.unlink(missing_ok=True)
    return True


def case_path(out: pathlib.Path, index: int) -> pathlib.Path:
    """The result file of case `index`."""
    return out / "cases" / f"case-{index:06d}.json"


def _read_manifest(path: pathlib.Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise StudyFolderError(f"out: cannot read the study manifest {path} ({exc}); use another "
                               "folder or delete this one") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise StudyFolderError(f"out: {path} is not a {FORMAT} manifest; use another folder")
    return data


def open_folder(out, manifest: dict) -> pathlib.Path:
    """Create `out` with `manifest`, or check that the manifest already there is the same study.

    Raises
    ------
    StudyFolderError
        If `out` holds a different study (another pipeline, other settings or other cases),
        or is a file.
    """
    out = pathlib.Path(out)
    if out.exists() and not out.is_dir():
        raise StudyFolderError(f"out: {out} is a file; give a folder for the study's results")
    path = out / "manifest.json"
    if not path.exists():
        (out / "cases").mkdir(parents=True, exist_ok=True)
        if _create_json(path, manifest):
            return out
    old = _read_manifest(path)      # made before, or by another process just now
    if old.get("hash") != manifest["hash"]:
        raise StudyFolderError(
            f"out: {out} holds a different study (pipeline {old.get('pipeline')!r}, "
            f"{len(old.get('cases', []))} cases, hash {str(old.get('hash'))[:12]}) than this "
            f"one (pipeline {manifest['pipeline']!r}, {len(manifest['cases'])} cases, hash "
            f"{manifest['hash'][:12]}); give another folder, or delete it to start again")
    (out / "cases").mkdir(exist_ok=True)
    _remove_stale_parts(out)
    return out


def _remove_stale_parts(out: pathlib.Path) -> list:
    """Remove the part files of the study's folder older than STALE_PART_SECONDS; their names."""
    removed, now = [], time.time()
    for part in [*out.glob("manifest.json*.part"), *(out / "cases").glob("case-*.json*.part")]:
        try:
            if now - part.stat().st_mtime > STALE_PART_SECONDS:
                part.unlink()
                removed.append(part.name)
        except OSError:   # removed by another process meanwhile, or not ours to remove
            pass
    return removed


def _is_record(data, case) -> bool:
    """True if `data` is a whole result of `case`: its index and parameters, a known status
    with its figures or its error."""
    if not isinstance(data, dict) or data.get("index") != case.index \
            or not isinstance(data.get("parameters"), dict) \
            or not same_parameters(data["parameters"], case.parameters):
        return False
    if data.get("status") == "ok":
        return isinstance(data.get("figures"), dict)
    error = data.get("error")
    return (data.get("status") == "failed" and isinstance(error, dict)
            and isinstance(error.get("type"), str) and isinstance(error.get("message"), str))


def read_case(out: pathlib.Path, case):
    """The result dict of `case` on disk, or None if it has none that is whole and its own."""
    path = case_path(out, case.index)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None         # missing, or damaged: the case runs again
    return data if _is_record(data, case) else None


def finished_cases(out: pathlib.Path, cases) -> dict:
    """The result dicts already on disk, by case index (unreadable, foreign or unknown-status
    files skipped: those cases run again)."""
    done = {}
    for case in cases:
        data = read_case(out, case)
        if data is not None:
            done[case.index] = data
    return done


def write_case(out: pathlib.Path, data: dict) -> None:
    """Write one finished case's result dict."""
    write_json(case_path(out, data["index"]), data)
