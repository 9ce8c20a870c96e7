"""A study's output folder: its manifest and one small JSON file per finished case.

Layout::

    out/manifest.json           the study: format, pipeline name, definition hash, every case
    out/cases/case-000017.json  one finished case: parameters, figures or error, timings

Every file is written to ``<name>.part`` and renamed (atomic on POSIX and Windows), so a study
killed at any moment leaves only whole files; a leftover ``.part`` is ignored and overwritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import textwrap

__all__ = ["FORMAT", "StudyFolderError", "case_path", "definition_hash", "finished_cases",
           "open_folder", "write_case", "write_json"]

FORMAT = "tenscontrol.study/1"


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


def write_json(path: pathlib.Path, data) -> None:
    """Write `data` to `path` atomically (``.part`` then rename)."""
    part = path.with_name(path.name + ".part")
    part.write_text(json.dumps(data, indent=1, allow_nan=True))
    os.replace(part, path)


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
    if path.exists():
        old = _read_manifest(path)
        if old.get("hash") != manifest["hash"]:
            raise StudyFolderError(
                f"out: {out} holds a different study (pipeline {old.get('pipeline')!r}, "
                f"{len(old.get('cases', []))} cases, hash {str(old.get('hash'))[:12]}) than this "
                f"one (pipeline {manifest['pipeline']!r}, {len(manifest['cases'])} cases, hash "
                f"{manifest['hash'][:12]}); give another folder, or delete it to start again")
        return out
    (out / "cases").mkdir(parents=True, exist_ok=True)
    write_json(path, manifest)
    return out


def finished_cases(out: pathlib.Path, cases) -> dict:
    """The result dicts already on disk, by case index (unreadable or foreign files skipped)."""
    done = {}
    for case in cases:
        path = case_path(out, case.index)
        if not path.exists():
            continue
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue        # a damaged file: the case runs again
        if isinstance(data, dict) and data.get("parameters") == case.parameters:
            done[case.index] = data
    return done


def write_case(out: pathlib.Path, data: dict) -> None:
    """Write one finished case's result dict."""
    write_json(case_path(out, data["index"]), data)
