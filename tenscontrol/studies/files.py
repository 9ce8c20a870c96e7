"""Studies from a file: a TOML (Python >= 3.11) or JSON description run by :func:`run_study_file`.

An example (``study.toml``)::

    pipeline = "norms"                  # a ready-made pipeline: "norms" or "lqr"
    out = "tbar-robustness"             # the output folder (relative to this file)

    [structure]                         # a catalog structure and its arguments ...
    catalog = "tbar"
    arguments = { variant = "stedy", damping = 5.0 }
    # path = "my_structure.json"        # ... or a tenscontrol.structure/1 file

    [settings]                          # the pipeline's keyword arguments
    prestress = 10.0
    disturbances = { nodes = 2, axes = "z" }
    outputs = { nodes = [2, 3], axes = "xz" }

    [parameters.samples]                # or: [parameters.grid] material = ["hdpe", "aluminium"]
    n = 100
    seed = 1
    designs = { material = ["hdpe", "aluminium"] }
    distributions = { rest_length_error = { uniform = [-0.03, 0.03] } }

    [executor]                          # "serial" | "processes" (workers) | "dask" (address)
    kind = "processes"
    workers = 2

A mistake raises :class:`StudyFileError` naming the file and the key at fault.
"""

from __future__ import annotations

import pathlib
import textwrap

from tenscontrol import fileio
from tenscontrol.model import catalog
from tenscontrol.model.io import load_structure
from tenscontrol.model.selection import Selection
from tenscontrol.studies.cases import Choice, LogUniform, Normal, Uniform, grid, samples
from tenscontrol.studies.pipelines import LQRPipeline, NormsPipeline
from tenscontrol.studies.runner import process_pool, run_study

__all__ = ["PIPELINES", "StudyFileError", "read_study_file", "run_study_file"]

PIPELINES = {"norms": NormsPipeline, "lqr": LQRPipeline}
_DISTRIBUTIONS = {"uniform": Uniform, "loguniform": LogUniform, "normal": Normal}
_CATALOG = ("tbar", "dbar", "arm", "ball", "prism", "prism_tower")


class StudyFileError(ValueError):
    """A study file that cannot be run: the message names the file and the key at fault."""

    def __repr__(self) -> str:
        # str() is the whole message; the repr keeps one line
        return f"StudyFileError({textwrap.shorten(str(self), 150, placeholder=' ...')!r})"


class _Reader:
    """Typed access to the file's tables; every error names the dotted key."""

    def __init__(self, path: pathlib.Path, data: dict):
        self.path, self.data = path, data

    def fail(self, key: str, message: str) -> StudyFileError:
        return StudyFileError(f"{self.path.name}: key '{key}': {message}")

    def get(self, key: str, kind, default=..., where=None):
        table = self.data if where is None else where
        name = key.rsplit(".", 1)[-1]
        if name not in table:
            if default is ...:
                raise self.fail(key, "is missing")
            return default
        value, kinds = table[name], (kind if isinstance(kind, tuple) else (kind,))
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            names = " or ".join(k.__name__ for k in kinds)
            raise self.fail(key, f"must be {names}, got {value!r}")
        return value


#: Largest study file read [bytes]; a study file is a page of settings.
MAX_STUDY_FILE_BYTES = 2**20


def _load(path: pathlib.Path) -> dict:
    if path.suffix not in (".toml", ".json"):
        raise StudyFileError(f"study file {path}: expected a .toml or .json file")
    text = fileio.read_text(path, max_bytes=MAX_STUDY_FILE_BYTES, what="a study file",
                            error=StudyFileError, hint="a study file is a page of settings")
    if path.suffix == ".toml":
        return fileio.parse_toml(text, path.name, error=StudyFileError)
    data = fileio.parse_json(text, path.name, error=StudyFileError)
    if not isinstance(data, dict):
        raise StudyFileError(f"{path.name}: the top level must be an object")
    return data


def _structure(r: _Reader):
    table = r.get("structure", dict)
    if ("catalog" in table) == ("path" in table):
        raise r.fail("structure", "give one of 'catalog' (a catalog name) or 'path' (a "
                                  "structure JSON file)")
    if "path" in table:
        file = r.path.parent / r.get("structure.path", str, where=table)
        try:
            return load_structure(file)
        except (OSError, ValueError, TypeError) as exc:
            raise r.fail("structure.path", str(exc)) from None
    name = r.get("structure.catalog", str, where=table)
    if name not in _CATALOG:
        raise r.fail("structure.catalog", f"unknown structure {name!r}; one of {_CATALOG}")
    arguments = r.get("structure.arguments", dict, {}, where=table)
    try:
        return getattr(catalog, name)(**arguments)
    except (TypeError, ValueError) as exc:
        raise r.fail("structure.arguments", str(exc)) from None


def _selection(r: _Reader, key: str, value):
    if not isinstance(value, dict) or set(value) - {"nodes", "axes", "strings"}:
        raise r.fail(key, f"must be a table of nodes, axes (and strings), e.g. "
                          f"{{ nodes = 2, axes = \"z\" }}, got {value!r}")
    try:
        return Selection(**value)
    except (TypeError, ValueError) as exc:
        raise r.fail(key, str(exc)) from None


def _pipeline(r: _Reader, structure):
    name = r.get("pipeline", str)
    if name not in PIPELINES:
        raise r.fail("pipeline", f"unknown pipeline {name!r}; one of {sorted(PIPELINES)}")
    settings = dict(r.get("settings", dict, {}))
    for key in ("disturbances", "outputs"):
        if key in settings:
            settings[key] = _selection(r, f"settings.{key}", settings[key])
    try:
        return PIPELINES[name](structure, **settings)
    except (TypeError, ValueError) as exc:
        raise r.fail("settings", str(exc)) from None


def _distribution(r: _Reader, key: str, spec):
    if not isinstance(spec, dict):
        return spec                             # a constant
    if len(spec) != 1 or next(iter(spec)) not in (*_DISTRIBUTIONS, "choice"):
        raise r.fail(key, f"must be one of {{ uniform = [low, high] }}, {{ loguniform = [low, "
                          f"high] }}, {{ normal = [mean, std] }}, {{ choice = [...] }} or a "
                          f"constant, got {spec!r}")
    kind, args = next(iter(spec.items()))
    try:
        if kind == "choice":
            return Choice(tuple(args))
        if not isinstance(args, list) or len(args) != 2:
            raise ValueError(f"{kind} takes a list of two numbers, got {args!r}")
        return _DISTRIBUTIONS[kind](*args)
    except (TypeError, ValueError) as exc:
        raise r.fail(key, str(exc)) from None


def _cases(r: _Reader):
    table = r.get("parameters", dict)
    if ("grid" in table) == ("samples" in table):
        raise r.fail("parameters", "give one of 'grid' or 'samples'")
    try:
        if "grid" in table:
            return grid(r.get("parameters.grid", dict, where=table))
        s = r.get("parameters.samples", dict, where=table)
        dists = r.get("parameters.samples.distributions", dict, where=s)
        dists = {k: _distribution(r, f"parameters.samples.distributions.{k}", v)
                 for k, v in dists.items()}
        return samples(dists, r.get("parameters.samples.n", int, where=s),
                       r.get("parameters.samples.seed", int, where=s),
                       r.get("parameters.samples.designs", dict, None, where=s))
    except (TypeError, ValueError) as exc:
        if isinstance(exc, StudyFileError):
            raise
        raise r.fail("parameters", str(exc)) from None


def read_study_file(path):
    """The pipeline, the cases, the output folder and the executor table of a study file.

    Returns
    -------
    pipeline, cases, out, executor : NormsPipeline or LQRPipeline, tuple of Case, Path or
    None, dict
    """
    path = pathlib.Path(path)
    r = _Reader(path, _load(path))
    known = {"pipeline", "out", "structure", "settings", "parameters", "executor"}
    extra = sorted(set(r.data) - known)
    if extra:
        raise r.fail(extra[0], f"unknown key; the keys are {sorted(known)}")
    pipeline = _pipeline(r, _structure(r))
    cases = _cases(r)
    out = r.get("out", str, None)
    executor = r.get("executor", dict, {"kind": "serial"})
    return pipeline, cases, (path.parent / out if out is not None else None), executor


def _executor_spec(r: _Reader, spec) -> tuple:
    """(kind, workers, address) from the file's or the caller's executor."""
    if isinstance(spec, str):
        spec = {"kind": spec}
    kind = r.get("executor.kind", str, "serial", where=spec)
    if kind not in ("serial", "processes", "dask"):
        raise r.fail("executor.kind", f"must be 'serial', 'processes' or 'dask', got {kind!r}")
    workers = r.get("executor.workers", int, 2, where=spec)
    if workers < 1:
        raise r.fail("executor.workers", f"must be >= 1, got {workers}")
    address = r.get("executor.address", str, "local", where=spec)
    return kind, workers, address


def run_study_file(path, *, out=None, executor=None, progress: bool = True):
    """Run the study a TOML or JSON file describes (see the module docstring for the format).

    Parameters
    ----------
    path : str or path-like
        The study file (``.toml`` on Python >= 3.11, or ``.json``).
    out : str or path-like, optional
        The output folder; the file's ``out`` (relative to the file) by default; with neither,
        nothing is written (no resume).
    executor : str or dict, optional
        Overrides the file's ``[executor]``: ``"serial"``, ``"processes"``, ``"dask"``, or a
        dict such as ``{"kind": "processes", "workers": 2}`` or ``{"kind": "dask", "address":
        "tcp://scheduler:8786"}`` (``"local"``: a LocalCluster of `workers` processes).
    progress : bool
        Show a progress bar over the cases.

    Returns
    -------
    StudyResult

    Raises
    ------
    StudyFileError
        A key of the file is missing or wrong (the message names it).
    StudyInterrupted
        On Ctrl-C; the finished cases stay in the output folder.
    """
    path = pathlib.Path(path)
    pipeline, cases, file_out, spec = read_study_file(path)
    kind, workers, address = _executor_spec(_Reader(path, {}), spec if executor is None
                                            else executor)
    folder = out if out is not None else file_out
    if kind == "serial":
        return run_study(pipeline, cases, out=folder, progress=progress)
    if kind == "processes":
        pool = process_pool(workers)
        try:
            return run_study(pipeline, cases, out=folder, executor=pool, progress=progress)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
    return _run_on_dask(pipeline, cases, folder, workers, address, progress)


def _run_on_dask(pipeline, cases, folder, workers: int, address: str, progress: bool):
    try:
        import distributed
    except ImportError:
        raise ImportError("a Dask executor needs dask.distributed: pip install "
                          "'tenscontrol[studies]'") from None
    if address == "local":
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=":0") as cluster, \
                distributed.Client(cluster) as client:
            return run_study(pipeline, cases, out=folder, executor=client, progress=progress)
    with distributed.Client(address) as client:
        return run_study(pipeline, cases, out=folder, executor=client, progress=progress)
