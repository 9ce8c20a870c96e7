"""Studies from a file: a TOML (Python >= 3.11) or JSON description run by :func:`run_study_file`.

An example (``study.toml``)::

    pipeline = "norms"                  # a ready-made pipeline: "norms" or "lqr"
    out = "tbar-robustness"             # the output folder (relative to this file)

    [structure]                         # a catalog structure and its arguments ...
    catalog = "tbar"
    arguments = { variant = "stedy", damping = 5.0 }
    # path = "my_structure.json"        # ... or a tenscontrol.structure/1 file

    [settings]                          # the pipeline's keyword arguments
    bars = "compressible"               # the bar model: "rigid" (default) or "compressible"
    prestress = 10.0
    disturbances = { nodes = 2, axes = "z" }
    outputs = { nodes = [2, 3], axes = "xz" }
    # period = 0.005                    # "lqr": the LQR sampled at 200 Hz (zero-order hold)

    [parameters.samples]                # or: [parameters.grid] material = ["hdpe", "aluminium"]
    n = 100
    seed = 1
    designs = { material = ["hdpe", "aluminium"] }
    distributions = { rest_length_error = { uniform = [-0.03, 0.03] } }

    [executor]                          # "serial" | "processes" (workers) | "dask" (address)
    kind = "processes"
    workers = 2
    case_timeout = 600.0                # optional: seconds a case may run before it is failed

A mistake raises :class:`StudyFileError` naming the file and the key at fault: a missing key, a
value of the wrong type, a number that is not finite, and an unknown key in any table (with the
closest known key, for a misspelling). Every key, a
complete example (``examples/study.toml``) and the parameters a pipeline varies: docs/studies.md.
"""

from __future__ import annotations

import concurrent.futures as cf
import difflib
import inspect
import math
import multiprocessing
import pathlib
import re
import textwrap

from tenscontrol import fileio, validation
from tenscontrol.model import catalog
from tenscontrol.model.io import load_structure
from tenscontrol.model.selection import Selection
from tenscontrol.studies.cases import Choice, LogUniform, Normal, Uniform, grid, samples
from tenscontrol.studies.pipelines import PARAMETERS, LQRPipeline, NormsPipeline
from tenscontrol.studies.runner import process_pool, run_study

__all__ = ["PIPELINES", "StudyFileError", "read_study_file", "run_study_file"]

PIPELINES = {"norms": NormsPipeline, "lqr": LQRPipeline}
_DISTRIBUTIONS = {"uniform": Uniform, "loguniform": LogUniform, "normal": Normal}
_TOP = ("pipeline", "out", "structure", "settings", "parameters", "executor")
_EXECUTOR = ("kind", "workers", "address", "case_timeout")
# the case parameters of the ready-made pipelines that are numbers (material is a name)
_NUMERIC = ("bar_radius", "damping", "payload_mass", "prestress", "rest_length_error",
            "string_stiffness_error", "bar_youngs_modulus_error", "amplitude", "effort",
            "period", "delay")
_PER_STRING = re.compile(r"rest_length_error_\d+")


class StudyFileError(ValueError):
    """A study file that cannot be run: the message names the file and the key at fault."""

    def __repr__(self) -> str:
        # str() is the whole message; the repr keeps one line
        return f"StudyFileError({textwrap.shorten(str(self), 150, placeholder=' ...')!r})"


def _hint(word, choices) -> str:
    """The hint " (did you mean 'x'?)" with the choice closest to `word`, else ""."""
    close = difflib.get_close_matches(str(word), list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


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
            raise self.fail(key, f"must be {names}, got {validation.show(value)}")
        return value

    def known(self, key: str, table: dict, allowed) -> None:
        """Refuse a key of `table` (the table at `key`) that is not in `allowed`."""
        for name in table:
            if name not in allowed:
                raise self.fail(f"{key}.{name}" if key else str(name),
                                f"unknown key{_hint(name, allowed)}; the keys are "
                                f"{sorted(allowed)}")


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
        r.known("structure", table, ("path",))
        file = r.path.parent / r.get("structure.path", str, where=table)
        try:
            return load_structure(file)
        except (OSError, ValueError, TypeError) as exc:
            raise r.fail("structure.path", str(exc)) from None
    r.known("structure", table, ("catalog", "arguments"))
    name = r.get("structure.catalog", str, where=table)
    if name not in catalog.STRUCTURES:
        raise r.fail("structure.catalog", f"unknown structure {name!r}; one of {catalog.STRUCTURES}")
    arguments = r.get("structure.arguments", dict, {}, where=table)
    r.known("structure.arguments", arguments,
            tuple(inspect.signature(getattr(catalog, name)).parameters))
    try:
        return getattr(catalog, name)(**arguments)
    except (TypeError, ValueError) as exc:
        raise r.fail("structure.arguments", str(exc)) from None


def _selection(r: _Reader, key: str, value):
    if not isinstance(value, dict):
        raise r.fail(key, f"must be a table of nodes, axes (and strings), e.g. "
                          f"{{ nodes = 2, axes = \"z\" }}, got {validation.show(value)}")
    r.known(key, value, ("nodes", "axes", "strings"))
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


def _check_settings(r: _Reader) -> None:
    """The [settings] table: keys the pipeline takes, finite numbers where it takes numbers."""
    settings, name = r.get("settings", dict, {}), r.get("pipeline", str)
    if name not in PIPELINES:
        return                                  # _pipeline names the unknown pipeline
    accepted = inspect.signature(PIPELINES[name]).parameters
    r.known("settings", settings, tuple(k for k in accepted if k != "structure"))
    for key, value in settings.items():
        annotation = accepted[key].annotation
        kind = annotation if isinstance(annotation, str) else getattr(annotation, "__name__",
                                                                      str(annotation))
        if value is None or not kind.startswith(("float", "int")):
            continue                            # selections, names: the pipeline checks them
        try:
            if kind.startswith("int"):
                validation.integer(f"settings.{key}", value, minimum=0)
            else:
                validation.real(f"settings.{key}", value)
        except (TypeError, ValueError) as exc:
            raise r.fail(f"settings.{key}", str(exc).split(" ", 1)[1]) from None


def _check_parameter(r: _Reader, key: str, name, values) -> None:
    """A case parameter of a study file: a name the pipelines know, finite numbers."""
    if not isinstance(name, str) or not (name in PARAMETERS or _PER_STRING.fullmatch(name)):
        raise r.fail(f"{key}.{name}", f"unknown parameter{_hint(name, PARAMETERS)}; the "
                                      f"pipelines know {sorted(PARAMETERS)}")
    numeric = name in _NUMERIC or _PER_STRING.fullmatch(name)
    for value in values if isinstance(values, list) else [values]:
        if isinstance(value, dict):
            continue                            # a distribution: _distribution checks it
        if isinstance(value, float) and not math.isfinite(value):
            raise r.fail(f"{key}.{name}", f"must be finite, got {value}")
        if numeric and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise r.fail(f"{key}.{name}", f"must be a number ({PARAMETERS.get(name, name)}), "
                                          f"got {validation.show(value)}")


def _distribution(r: _Reader, key: str, spec):
    if not isinstance(spec, dict):
        return spec                             # a constant
    if len(spec) != 1 or next(iter(spec)) not in (*_DISTRIBUTIONS, "choice"):
        hint = _hint(next(iter(spec)), [*_DISTRIBUTIONS, "choice"]) if len(spec) == 1 else ""
        raise r.fail(key, f"must be one of {{ uniform = [low, high] }}, {{ loguniform = [low, "
                          f"high] }}, {{ normal = [mean, std] }}, {{ choice = [...] }} or a "
                          f"constant, got {validation.show(spec)}{hint}")
    kind, args = next(iter(spec.items()))
    try:
        if kind == "choice":
            return Choice(tuple(args))
        if not isinstance(args, list) or len(args) != 2 or any(
                isinstance(a, bool) or not isinstance(a, (int, float)) for a in args):
            raise ValueError(f"{kind} takes a list of two numbers, got {args!r}")
        return _DISTRIBUTIONS[kind](*args)
    except (TypeError, ValueError) as exc:
        raise r.fail(key, str(exc)) from None


def _cases(r: _Reader):
    table = r.get("parameters", dict)
    r.known("parameters", table, ("grid", "samples"))
    if ("grid" in table) == ("samples" in table):
        raise r.fail("parameters", "give one of 'grid' or 'samples'")
    try:
        if "grid" in table:
            levels = r.get("parameters.grid", dict, where=table)
            for name, values in levels.items():
                _check_parameter(r, "parameters.grid", name, values)
            return grid(levels)
        s = r.get("parameters.samples", dict, where=table)
        r.known("parameters.samples", s, ("n", "seed", "designs", "distributions"))
        dists = r.get("parameters.samples.distributions", dict, where=s)
        for key in ("designs", "distributions"):
            for name, values in r.get(f"parameters.samples.{key}", dict, {}, where=s).items():
                _check_parameter(r, f"parameters.samples.{key}", name, values)
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
    r.known("", r.data, _TOP)
    _check_settings(r)
    pipeline = _pipeline(r, _structure(r))
    cases = _cases(r)
    out = r.get("out", str, None)
    executor = r.get("executor", dict, {"kind": "serial"})
    _executor_spec(r, executor)
    return pipeline, cases, (path.parent / out if out is not None else None), executor


def _executor_spec(r: _Reader, spec) -> tuple:
    """(kind, workers, address, case_timeout) from the file's or the caller's executor."""
    if isinstance(spec, str):
        spec = {"kind": spec}
    if not isinstance(spec, dict):
        raise r.fail("executor", f"must be a table (or a kind: 'serial', 'processes' or "
                                 f"'dask'), got {validation.show(spec)}")
    r.known("executor", spec, _EXECUTOR)
    kind = r.get("executor.kind", str, "serial", where=spec)
    if kind not in ("serial", "processes", "dask"):
        raise r.fail("executor.kind", f"must be 'serial', 'processes' or 'dask', got "
                                      f"{kind!r}{_hint(kind, ['serial', 'processes', 'dask'])}")
    workers = r.get("executor.workers", int, 2, where=spec)
    if workers < 1:
        raise r.fail("executor.workers", f"must be >= 1, got {workers}")
    address = r.get("executor.address", str, "local", where=spec)
    timeout = r.get("executor.case_timeout", (int, float), None, where=spec)
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        raise r.fail("executor.case_timeout", f"must be a positive number of seconds, got "
                                              f"{timeout}")
    return kind, workers, address, timeout


def run_study_file(path, *, out=None, executor=None, progress: bool = True,
                   case_timeout: float | None = None):
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
        "tcp://scheduler:8786"}`` (``"local"``: a LocalCluster of `workers` processes), with
        an optional ``"case_timeout"`` in seconds (see :func:`~tenscontrol.run_study`).
    progress : bool
        Show a progress bar over the cases.
    case_timeout : float, optional
        The most seconds a case may run (see :func:`~tenscontrol.run_study`); replaces the
        executor table's ``case_timeout``.

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
    kind, workers, address, limit = _executor_spec(_Reader(path, {}), spec if executor is None
                                                   else executor)
    folder = out if out is not None else file_out
    if case_timeout is not None:
        limit = validation.real("run_study_file: case_timeout", case_timeout,
                                what="a number of seconds", positive=True)
    if kind == "serial":
        return run_study(pipeline, cases, out=folder, progress=progress, case_timeout=limit)
    if kind == "processes":
        # with a case_timeout run_study runs the cases on supervised processes of its own (as
        # many as the pool's workers): the pool is then never started
        pool = (process_pool(workers) if limit is None else
                cf.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")))
        try:
            return run_study(pipeline, cases, out=folder, executor=pool, progress=progress,
                             case_timeout=limit)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
    return _run_on_dask(pipeline, cases, folder, workers, address, progress, limit)


def _run_on_dask(pipeline, cases, folder, workers: int, address: str, progress: bool,
                 limit):
    try:
        import distributed
    except ImportError:
        raise ImportError("a Dask executor needs dask.distributed: pip install "
                          "'dask[distributed]>=2024.1' (or, in a checkout of tenscontrol, "
                          "pip install '.[studies]')") from None
    if address == "local":
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=":0") as cluster, \
                distributed.Client(cluster) as client:
            return run_study(pipeline, cases, out=folder, executor=client, progress=progress,
                             case_timeout=limit)
    with distributed.Client(address) as client:
        return run_study(pipeline, cases, out=folder, executor=client, progress=progress,
                         case_timeout=limit)
