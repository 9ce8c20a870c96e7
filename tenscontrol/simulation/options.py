"""Validation of the options of the functions that simulate (simulate, verify, compare_materials,
compare_closed_loop): strict types, so that a string, a bool, a list or a complex number given
for a number is refused with a message that names the argument, never converted or passed on to
numpy.

Every function here raises TypeError for a value of the wrong type and ValueError for a value
of the right type out of range; messages start with `name` (which may carry the caller's name,
e.g. ``"verify: t_final"``). The checks themselves are :mod:`tenscontrol.validation`'s, which
every layer shares; this module gives them the simulation's names and adds the time grids.
"""

from __future__ import annotations

import math

import numpy as np

from tenscontrol import validation

__all__ = ["real_number", "positive_number", "duration", "positive_count", "flag", "real_array",
           "times", "output_times"]


def real_number(name: str, value, what: str = "a number") -> float:
    """`value` as a float: a real number (Python or numpy; not a bool, a string, an array or a
    complex number)."""
    return validation.number(name, value, what=what)


def positive_number(name: str, value, what: str = "a number", finite: bool = True) -> float:
    """A real number > 0 (and finite unless `finite` is False)."""
    return validation.real(name, value, what=what, positive=True, finite=finite)


def duration(name: str, value) -> float:
    """A positive, finite number of seconds (an end time)."""
    v = real_number(name, value, "a number of seconds")
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
    return v


def positive_count(name: str, value) -> int:
    """An integer >= 1 (not a bool, not a float such as 2.5 or 2.0)."""
    return validation.integer(name, value, minimum=1)


def flag(name: str, value) -> bool:
    """`value` as a bool: True or False only (a string such as "no" is truthy, so refused)."""
    return validation.flag(name, value)


real_array = validation.real_array


def times(name: str, value, t_final: float) -> np.ndarray:
    """Output times: a non-empty, strictly increasing array of finite times within [0, t_final]."""
    t = real_array(name, value, "s").reshape(-1)
    if t.size == 0 or not np.all(np.isfinite(t)):
        raise ValueError(f"{name} must be a non-empty array of finite times [s]")
    if np.any(np.diff(t) <= 0):
        raise ValueError(f"{name} must be strictly increasing")
    if t[0] < 0 or t[-1] > t_final * (1 + 1e-12):
        raise ValueError(f"{name} must lie within [0, t_final] = [0, {t_final:g}] s")
    return t


def output_times(t_final, t_eval, who: str) -> tuple[float, np.ndarray]:
    """(t_final, t_eval) of a study: t_final checked, t_eval by default 1001 points on
    [0, t_final], else at least 2 increasing times from 0; messages start with `who`."""
    t_final = duration(f"{who}: t_final", t_final)
    if t_eval is None:
        return t_final, np.linspace(0.0, t_final, 1001)
    t = real_array(f"{who}: t_eval", t_eval, "s").reshape(-1)
    if t.size < 2 or not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0) or t[0] != 0.0 \
            or t[-1] > t_final * (1 + 1e-12):
        raise ValueError(f"{who}: t_eval must be at least 2 increasing times [s] from 0 "
                         f"(the runs start at rest at t = 0) to at most t_final = {t_final:g}, "
                         f"e.g. np.linspace(0, {t_final:g}, 1001)")
    return t_final, t
