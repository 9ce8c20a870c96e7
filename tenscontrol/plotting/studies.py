"""Robustness plots of a study: the figures of many cases, by group or against a parameter.

Each function takes a :class:`~tenscontrol.studies.StudyResult` (any object with ``records``, each
with ``parameters`` and ``figures`` dicts) and returns a matplotlib Figure:

- :func:`plot_distribution`: a figure's distribution per group (box plot with the cases as
  jittered points), e.g. the H-inf norm per bar material;
- :func:`plot_against`: a figure against a parameter, one colour per group;
- :func:`plot_slack_fraction`: the fraction of cases with slack strings per group, or against
  a parameter in bins.

Axis labels carry units from :data:`UNITS` (the ready-made pipelines' figures and
parameters); give `units` for others.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from tenscontrol.plotting.common import integer_ticks, new_figure

__all__ = ["UNITS", "plot_against", "plot_distribution", "plot_slack_fraction"]

UNITS = {
    "bar_mass": "kg", "offset": "m", "h2": "m/(N s^0.5)", "hinf": "m/N", "frequency": "Hz",
    "peak": "m", "min_tension": "N", "open_peak": "m", "closed_peak": "m", "effort_peak": "N/m",
    "peak_reduction": "-", "linear_error": "-", "order": "-",
    "bar_radius": "m", "damping": "N s/m", "payload_mass": "kg", "prestress": "N/m",
    "amplitude": "N", "rest_length_error": "-", "string_stiffness_error": "-",
    "bar_youngs_modulus_error": "-", "effort": "-",
}


def _label(name: str, units: dict | None) -> str:
    unit = (units or {}).get(name, UNITS.get(name))
    if unit is None and name.startswith("rest_length_error_"):
        unit = "-"
    return f"{name} [{unit}]" if unit else name


def _value(record, name: str):
    if name in record.figures:
        return record.figures[name]
    if name in record.parameters:
        return record.parameters[name]
    raise KeyError(f"{name!r} is neither a figure nor a parameter of case {record.index}; "
                   f"figures: {sorted(record.figures)}, parameters: {sorted(record.parameters)}")


def _number(value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return math.nan
    return float(value)


def _grouped_axes(result, by: str | None, box_per_group: bool = False):
    """(groups, figure, axes): the records grouped by the value of `by` (one group "all"
    without it) and a new figure's axes, wider by a box per group with `box_per_group`."""
    if not result.records:
        raise ValueError("the study has no finished case to plot")
    groups = {}
    for r in result.records:
        key = "all" if by is None else str(_value(r, by))
        groups.setdefault(key, []).append(r)
    width = 1.6 + 1.4 * len(groups) if box_per_group else 6.0
    fig = new_figure(figsize=(width, 4.0))
    return groups, fig, fig.subplots()


def _counts_ticks(axis, values) -> None:
    """Integer ticks on `axis` when every finite value of `values` (arrays) is a whole number
    (a figure or parameter that counts things: an order, a number of stages)."""
    v = np.concatenate([np.ravel(a) for a in values]) if len(values) else np.zeros(0)
    v = v[np.isfinite(v)]
    if v.size and np.all(v == np.round(v)):
        integer_ticks(axis)


def plot_distribution(result, figure: str, by: str | None = "material", *,
                      units: dict | None = None):
    """A box plot of `figure` per value of the parameter `by`, with every case as a point.

    Parameters
    ----------
    result : StudyResult
    figure : str
        A figure name (e.g. ``"hinf"``) or a parameter name.
    by : str or None
        The parameter that groups the cases (e.g. ``"material"``); None: one group.
    units : dict, optional
        Units of names :data:`UNITS` does not know.

    Returns
    -------
    matplotlib.figure.Figure
    """
    groups, fig, ax = _grouped_axes(result, by, box_per_group=True)
    data = [np.array([_number(_value(r, figure)) for r in rs]) for rs in groups.values()]
    data = [d[np.isfinite(d)] for d in data]
    ax.boxplot(data, showfliers=False)
    ax.set_xticks(range(1, len(groups) + 1), list(groups))
    rng = np.random.default_rng(0)     # fixed jitter: the same plot every time
    for k, d in enumerate(data, start=1):
        ax.plot(k + rng.uniform(-0.15, 0.15, d.size), d, ".", alpha=0.4, markersize=4)
    _counts_ticks(ax.yaxis, data)
    ax.set_ylabel(_label(figure, units))
    ax.set_xlabel(by or "")
    ax.set_title(f"{figure}: {sum(d.size for d in data)} cases")
    return fig


def plot_against(result, figure: str, parameter: str, by: str | None = "material", *,
                 units: dict | None = None):
    """`figure` against `parameter`, one colour per value of `by`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    groups, fig, ax = _grouped_axes(result, by)
    xs, ys = [], []
    for name, rs in groups.items():
        x = np.array([_number(_value(r, parameter)) for r in rs])
        y = np.array([_number(_value(r, figure)) for r in rs])
        ax.plot(x, y, ".", alpha=0.6, label=name)
        xs.append(x)
        ys.append(y)
    _counts_ticks(ax.xaxis, xs)
    _counts_ticks(ax.yaxis, ys)
    ax.set_xlabel(_label(parameter, units))
    ax.set_ylabel(_label(figure, units))
    if by is not None:
        ax.legend(title=by)
    ax.grid(True, alpha=0.3)
    return fig


def plot_slack_fraction(result, by: str | None = "material", against: str | None = None, *,
                        slack: str = "slack", bins: int = 8, units: dict | None = None):
    """The fraction of cases in which a string went slack (the figure `slack`, a bool).

    Parameters
    ----------
    result : StudyResult
    by : str or None
        The parameter that groups the cases: one bar per group, or one line with `against`.
    against : str, optional
        A numeric parameter: the fraction per bin of it (`bins` equal bins).
    slack : str
        The boolean figure that says a case had a slack string.

    Returns
    -------
    matplotlib.figure.Figure
    """
    groups, fig, ax = _grouped_axes(result, by)
    if against is None:
        counts = [(sum(bool(_value(r, slack)) for r in rs), len(rs)) for rs in groups.values()]
        bars = ax.bar(list(groups), [k / n for k, n in counts])
        ax.bar_label(bars, [f"{k} of {n}" for k, n in counts])
        ax.set_xlabel(by or "")
    else:
        x_all = np.array([_number(_value(r, against)) for r in result.records])
        edges = np.linspace(np.nanmin(x_all), np.nanmax(x_all), bins + 1)
        for name, rs in groups.items():
            x = np.array([_number(_value(r, against)) for r in rs])
            s = np.array([bool(_value(r, slack)) for r in rs])
            where = np.clip(np.digitize(x, edges) - 1, 0, bins - 1)
            frac = [s[where == b].mean() if np.any(where == b) else np.nan for b in range(bins)]
            ax.plot(0.5 * (edges[:-1] + edges[1:]), frac, "o-", label=name)
        ax.set_xlabel(_label(against, units))
        if by is not None:
            ax.legend(title=by)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("fraction of cases with a slack string [-]")
    ax.grid(True, alpha=0.3)
    return fig
