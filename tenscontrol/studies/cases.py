"""The cases of a study: a parameter grid, or random samples drawn reproducibly from a seed.

A case is one set of parameters (a dict of names to numbers, booleans or strings) with its
index in the study. :func:`grid` takes every combination of given values; :func:`samples`
draws `n` cases from distributions, case ``k`` from its own generator
``numpy.random.default_rng([seed, k])``, so a case's parameters depend only on the seed and
its index: not on `n`, on the other cases or on the executor that runs them.

A study holds at most :data:`MAX_CASES` cases: :func:`grid` and :func:`samples` count them
before building any (the count is a product, cheap even for 1e12) and refuse a larger study
with a ValueError naming the count and the bound, instead of building Case objects until the
memory runs out. A study is built whole, not lazily, because its manifest and hash name every
case (that is what makes a resume safe); split a larger one into several studies.
"""

from __future__ import annotations

import itertools
import math
import numbers
from dataclasses import dataclass

import numpy as np

__all__ = ["Case", "Choice", "LogUniform", "MAX_CASES", "Normal", "Uniform", "grid",
           "parameter_value", "samples"]

# the largest study: its manifest is then about 100 MB and its folder holds a million files
MAX_CASES = 1_000_000


def parameter_value(name: str, value):
    """`value` as a plain JSON scalar (bool, int, float or str), or a TypeError naming `name`."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, str):
        return value
    raise TypeError(f"parameter {name!r}: values must be numbers, booleans or strings, got "
                    f"{type(value).__name__} {value!r}")


@dataclass(frozen=True)
class Case:
    """One case of a study.

    Attributes
    ----------
    index : int
        Its position in the study (0, 1, ...); the name of its result file.
    parameters : dict of str to (float, int, bool or str)
        What the pipeline gets.
    """

    index: int
    parameters: dict

    def __post_init__(self):
        if isinstance(self.index, bool) or not isinstance(self.index, numbers.Integral) \
                or self.index < 0:
            raise ValueError(f"Case: index must be an int >= 0, got {self.index!r}")
        if not isinstance(self.parameters, dict):
            raise TypeError(f"Case {self.index}: parameters must be a dict of names to values, "
                            f"got {type(self.parameters).__name__}")
        clean = {}
        for name, value in self.parameters.items():
            if not isinstance(name, str) or not name:
                raise TypeError(f"Case {self.index}: parameter names must be non-empty "
                                f"strings, got {name!r}")
            clean[name] = parameter_value(name, value)
        object.__setattr__(self, "index", int(self.index))
        object.__setattr__(self, "parameters", clean)

    def __repr__(self) -> str:
        text = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v!r}"
                         for k, v in self.parameters.items())
        if len(text) > 150:
            text = text[:146] + " ..."
        return f"Case(index={self.index}, {text})"


def _finite(who: str, **values) -> None:
    for label, v in values.items():
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
            raise ValueError(f"{who}: {label} must be a finite number, got {v!r}")


@dataclass(frozen=True)
class Uniform:
    """Uniform on [low, high)."""

    low: float
    high: float

    def __post_init__(self):
        _finite("Uniform", low=self.low, high=self.high)
        if not self.low < self.high:
            raise ValueError(f"Uniform: low must be < high, got {self.low!r} >= {self.high!r}")

    def draw(self, rng: np.random.Generator) -> float:
        """One value."""
        return float(rng.uniform(self.low, self.high))


@dataclass(frozen=True)
class LogUniform:
    """log-uniform on [low, high), both > 0 (a stiffness or a weight over decades)."""

    low: float
    high: float

    def __post_init__(self):
        _finite("LogUniform", low=self.low, high=self.high)
        if not 0 < self.low < self.high:
            raise ValueError(f"LogUniform: need 0 < low < high, got low={self.low!r}, "
                             f"high={self.high!r}")

    def draw(self, rng: np.random.Generator) -> float:
        """One value."""
        return float(np.exp(rng.uniform(np.log(self.low), np.log(self.high))))


@dataclass(frozen=True)
class Normal:
    """Normal with the given mean and standard deviation."""

    mean: float
    std: float

    def __post_init__(self):
        _finite("Normal", mean=self.mean, std=self.std)
        if self.std <= 0:
            raise ValueError(f"Normal: std must be > 0, got {self.std!r}")

    def draw(self, rng: np.random.Generator) -> float:
        """One value."""
        return float(rng.normal(self.mean, self.std))


@dataclass(frozen=True)
class Choice:
    """One of `values`, each equally likely."""

    values: tuple

    def __post_init__(self):
        if isinstance(self.values, str) or len(self.values) == 0:
            raise ValueError(f"Choice: values must be a non-empty sequence, got {self.values!r}")
        object.__setattr__(self, "values", tuple(parameter_value("Choice", v)
                                                 for v in self.values))

    def draw(self, rng: np.random.Generator):
        """One value."""
        return self.values[int(rng.integers(len(self.values)))]

    def __repr__(self) -> str:
        text = ", ".join(map(repr, self.values))
        return f"Choice(values=({text if len(text) <= 150 else text[:146] + ' ...'}))"


DISTRIBUTIONS = (Uniform, LogUniform, Normal, Choice)


def _levels(parameters: dict, who: str) -> dict:
    """Each grid parameter's values as a tuple (a scalar is one level)."""
    if not isinstance(parameters, dict) or not parameters:
        raise TypeError(f"{who}: expected a non-empty dict of parameter names to lists of "
                        f"values, e.g. {{'material': ['hdpe', 'aluminium']}}, got {parameters!r}")
    levels = {}
    for name, values in parameters.items():
        if isinstance(values, (str, numbers.Number)):
            values = (values,)
        values = tuple(itertools.islice(values, MAX_CASES + 1))    # a bound for generators
        if len(values) > MAX_CASES:
            raise ValueError(f"{who}: parameter {name!r} has more than {MAX_CASES:,} values, "
                             f"the most cases a study holds (MAX_CASES)")
        if not values:
            raise ValueError(f"{who}: parameter {name!r} has no values")
        levels[name] = tuple(parameter_value(name, v) for v in values)
    return levels


def grid(parameters: dict) -> tuple:
    """Every combination of the given values, the last parameter varying fastest.

    Parameters
    ----------
    parameters : dict of str to sequence
        Each parameter's values, e.g. ``{"material": ["hdpe", "aluminium"], "prestress":
        [5.0, 10.0, 20.0]}`` (6 cases); a scalar is a parameter with one value.

    Returns
    -------
    tuple of Case

    Raises
    ------
    ValueError
        Over :data:`MAX_CASES` (1,000,000) combinations: the message gives the count.
    """
    levels = _levels(parameters, "grid")
    count = math.prod(len(v) for v in levels.values())
    if count > MAX_CASES:
        sizes = " x ".join(f"{len(v)} {k}" for k, v in levels.items())
        raise ValueError(f"grid: {count:,} cases ({sizes}) exceeds the bound of {MAX_CASES:,} "
                         "cases per study (tenscontrol.studies.cases.MAX_CASES); split it into "
                         "several studies")
    names = list(levels)
    return tuple(Case(k, dict(zip(names, combo)))
                 for k, combo in enumerate(itertools.product(*levels.values())))


def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"samples: seed must be an int >= 0 (the same seed gives the same "
                         f"cases), got {seed!r}")
    return int(seed)


def samples(distributions: dict, n: int, seed: int, designs: dict | None = None) -> tuple:
    """`n` random cases (Monte Carlo), reproducible from `seed`.

    Parameters
    ----------
    distributions : dict of str to Uniform, LogUniform, Normal, Choice or a constant
        How each parameter is drawn; a plain number, bool or string is a constant.
    n : int
        Number of samples, >= 1.
    seed : int
        Sample ``k`` is drawn from ``numpy.random.default_rng([seed, k])``, the parameters in
        sorted name order: the same seed gives the same cases whatever `n` and the executor.
    designs : dict of str to sequence, optional
        A grid crossed with every sample (paired comparisons): e.g. ``{"material": ["hdpe",
        "aluminium"]}`` runs each sampled imperfection once per material. Case
        ``k * n_designs + j`` is sample ``k`` with design ``j`` (grid order).

    Returns
    -------
    tuple of Case
        ``n`` cases, or ``n * n_designs`` with `designs`.

    Raises
    ------
    ValueError
        Over :data:`MAX_CASES` (1,000,000) cases: the message gives the count.
    """
    if not isinstance(distributions, dict) or not distributions:
        raise TypeError("samples: distributions must be a non-empty dict of parameter names to "
                        "distributions, e.g. {'rest_length_error': Uniform(-0.05, 0.05)}, got "
                        f"{distributions!r}")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"samples: n must be an int >= 1, got {n!r}")
    seed = _check_seed(seed)
    for name, d in distributions.items():
        if not isinstance(d, DISTRIBUTIONS):
            parameter_value(name, d)   # a constant, or a TypeError naming the parameter
    design_cases = grid(designs) if designs is not None else (Case(0, {}),)
    if n * len(design_cases) > MAX_CASES:
        raise ValueError(f"samples: {n * len(design_cases):,} cases ({n:,} samples x "
                         f"{len(design_cases)} designs) exceeds the bound of {MAX_CASES:,} cases "
                         "per study (tenscontrol.studies.cases.MAX_CASES); split it into "
                         "several studies (case k depends only on the seed and k)")
    clash = set(distributions) & set(design_cases[0].parameters)
    if clash:
        raise ValueError(f"samples: {sorted(clash)} appear in both distributions and designs")
    cases = []
    for k in range(int(n)):
        rng = np.random.default_rng([seed, k])
        drawn = {name: (distributions[name].draw(rng)
                        if isinstance(distributions[name], DISTRIBUTIONS)
                        else distributions[name]) for name in sorted(distributions)}
        for design in design_cases:
            cases.append(Case(len(cases), {**design.parameters, **drawn}))
    return tuple(cases)
