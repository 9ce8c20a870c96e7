"""The result of a study: one record per case, the failures with their errors, the timings."""

from __future__ import annotations

import pathlib
from dataclasses import dataclass

import numpy as np

from tenscontrol.model.tables import Presentable, html_table

__all__ = ["CaseFailure", "CaseResult", "StudyInterrupted", "StudyResult", "study_result"]


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 4] + " ..."


@dataclass(frozen=True)
class CaseResult:
    """One finished case.

    Attributes
    ----------
    index : int
    parameters : dict
        The case's parameters.
    figures : dict of str to (float, int, bool or str)
        What the pipeline returned.
    wall_time, cpu_time : float
        The pipeline's run [s] in its worker (warm-up excluded).
    worker : str
        ``host:pid`` of the process that ran it.
    """

    index: int
    parameters: dict
    figures: dict
    wall_time: float
    cpu_time: float
    worker: str

    def __repr__(self) -> str:
        figs = _short(", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v!r}"
                                for k, v in self.figures.items()), 120)
        return f"CaseResult(index={self.index}, {figs}, cpu_time={self.cpu_time:.3g} s)"


@dataclass(frozen=True)
class CaseFailure:
    """A case whose pipeline raised, or that its executor could not run.

    Attributes
    ----------
    index : int
    parameters : dict
    error_type, message : str
        The exception's class name and message.
    where : str
        ``file:line in function`` where it was raised ("" when the executor failed).
    recorded : bool
        True when the pipeline raised (the failure is written to the case's file and a rerun
        keeps it); False when the executor failed (a crashed worker, a cancelled task): a
        rerun with the same folder runs the case again.
    """

    index: int
    parameters: dict
    error_type: str
    message: str
    where: str
    recorded: bool

    def __repr__(self) -> str:
        return (f"CaseFailure(index={self.index}, {self.error_type}: "
                f"{_short(self.message, 120)!r})")


@dataclass(frozen=True, eq=False)
class StudyResult(Presentable):
    """The result of :func:`tenscontrol.run_study`; ``print()`` it for a summary.

    Attributes
    ----------
    pipeline : str
        The pipeline's name.
    records : tuple of CaseResult
        The finished cases, by index.
    failures : tuple of CaseFailure
        The failed cases, by index.
    n_cases : int
        Cases in the study (finished + failed + not run, after an interrupt).
    n_resumed : int
        Cases read back from the output folder instead of run.
    wall_time : float
        The study's wall-clock time in this call [s].
    cpu_time : float
        Sum of the cases' CPU times [s] (those run in this call).
    out : pathlib.Path or None
        The output folder.
    """

    pipeline: str
    records: tuple
    failures: tuple
    n_cases: int
    n_resumed: int
    wall_time: float
    cpu_time: float
    out: pathlib.Path | None

    def __repr__(self) -> str:
        return (f"StudyResult(pipeline={_short(self.pipeline, 40)!r}, cases={self.n_cases}, "
                f"finished={len(self.records)}, failed={len(self.failures)}, "
                f"resumed={self.n_resumed}, wall_time={self.wall_time:.3g} s)")

    @property
    def complete(self) -> bool:
        """True when every case finished or failed (nothing left to run)."""
        return len(self.records) + len(self.failures) == self.n_cases

    def figure(self, name: str) -> np.ndarray:
        """One figure over the finished cases, in index order, as an array."""
        missing = [r.index for r in self.records if name not in r.figures]
        if missing:
            known = sorted({k for r in self.records for k in r.figures})
            raise KeyError(f"figure {name!r} is missing in case {missing[0]}; the figures are "
                           f"{known}")
        return np.array([r.figures[name] for r in self.records])

    def _head(self) -> list:
        """The counts and the timings, two lines."""
        cpu = self.cpu_time / max(1, len(self.records) + len(self.failures) - self.n_resumed)
        return [f"study {self.pipeline}: {self.n_cases} cases, {len(self.records)} finished, "
                 f"{len(self.failures)} failed, {self.n_resumed} read back from "
                 f"{self.out if self.out is not None else '-'}",
                 f"wall time {self.wall_time:.3f} s, CPU time {self.cpu_time:.3f} s "
                 f"({cpu:.3f} s per case run)"]

    def summary(self) -> str:
        """Counts, timings, and each failure with its error."""
        lines = self._head()
        for f in self.failures:
            lines.append(f"  case {f.index} {f.parameters}: {f.error_type}: "
                         f"{_short(f.message, 160)}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = [(f"case {f.index}", f.parameters, f"{f.error_type}: {_short(f.message, 160)}")
                for f in self.failures]
        return html_table(rows, header=["failed case", "parameters", "error"],
                          caption="; ".join(self._head()))

    def plot_distribution(self, figure: str, by: str | None = "material"):
        """A box plot of `figure` per value of the parameter `by` (a matplotlib Figure); see
        :func:`tenscontrol.plotting.studies.plot_distribution`."""
        from tenscontrol.plotting.studies import plot_distribution

        return plot_distribution(self, figure, by)

    def plot_against(self, figure: str, parameter: str, by: str | None = "material"):
        """`figure` against `parameter`, one colour per value of `by` (a matplotlib Figure)."""
        from tenscontrol.plotting.studies import plot_against

        return plot_against(self, figure, parameter, by)

    def plot_slack_fraction(self, by: str | None = "material", against: str | None = None):
        """The fraction of cases with a slack string, per group or against a parameter."""
        from tenscontrol.plotting.studies import plot_slack_fraction

        return plot_slack_fraction(self, by, against)

    def to_dataframe(self, failures: bool = True):
        """One row per case: index, parameters, figures, status, error, timings.

        Parameters
        ----------
        failures : bool
            Include the failed cases (figures missing: NaN; `error` holds ``"Type: message"``).

        Returns
        -------
        pandas.DataFrame
            Indexed by the case index.
        """
        try:
            import pandas
        except ImportError:
            raise ImportError("StudyResult.to_dataframe needs pandas: pip install "
                              "'pandas>=2.2.2' (or, in a checkout of tenscontrol, pip install "
                              "'.[pandas]')") from None
        rows = [{"index": r.index, **r.parameters, **r.figures, "status": "ok", "error": "",
                 "wall_time": r.wall_time, "cpu_time": r.cpu_time, "worker": r.worker}
                for r in self.records]
        if failures:
            rows += [{"index": f.index, **f.parameters, "status": "failed",
                      "error": f"{f.error_type}: {f.message}"} for f in self.failures]
        frame = pandas.DataFrame(rows)
        if frame.empty:
            return frame
        return frame.sort_values("index").set_index("index")


class StudyInterrupted(KeyboardInterrupt):
    """Ctrl-C (or a KeyboardInterrupt) stopped a study; `result` holds what was done.

    A ``KeyboardInterrupt``, not an ``Exception``, like
    :class:`~tenscontrol.SimulationInterrupted`. The finished cases are also on disk when the
    study has an output folder: run it again with the same folder to finish it.
    """

    def __init__(self, result: StudyResult):
        super().__init__(f"study {result.pipeline} interrupted after {len(result.records)} "
                         f"finished and {len(result.failures)} failed of {result.n_cases} cases")
        self.result = result

    def __repr__(self) -> str:
        r = self.result
        return (f"StudyInterrupted(pipeline={_short(r.pipeline, 40)!r}, cases={r.n_cases}, "
                f"finished={len(r.records)}, failed={len(r.failures)})")


def _record(data: dict):
    if data["status"] == "ok":
        return CaseResult(data["index"], data["parameters"], data["figures"],
                          float(data.get("wall_time", np.nan)), float(data.get("cpu_time", np.nan)),
                          str(data.get("worker", "")))
    err = data["error"]
    return CaseFailure(data["index"], data["parameters"], err["type"], err["message"],
                       err.get("where", ""), bool(data.get("recorded", True)))


def study_result(pipeline: str, n_cases: int, done: dict, n_resumed: int, wall_time: float,
                 out) -> StudyResult:
    """A StudyResult from the result dicts `done` (by case index)."""
    items = [_record(done[k]) for k in sorted(done)]
    cpu = sum(d.get("cpu_time", 0.0) for d in done.values() if not d.get("resumed"))
    return StudyResult(pipeline, tuple(r for r in items if isinstance(r, CaseResult)),
                       tuple(r for r in items if isinstance(r, CaseFailure)), n_cases, n_resumed,
                       float(wall_time), float(cpu),
                       None if out is None else pathlib.Path(out))
