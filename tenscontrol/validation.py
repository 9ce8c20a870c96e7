"""Validation of arguments, shared by every layer: numbers, integers, booleans, choices,
index arrays and arrays of a shape.

This module sits below every other (it imports nothing of tenscontrol; an import-linter
contract keeps it so), so the integrators, the model, the linear tools, the simulation and the
command line refuse a wrong argument the same way: a value of the wrong type raises TypeError
and a value of the right type out of range raises ValueError, with a message that starts with
the argument's `name` (which may carry the caller's name or the item's place, e.g.
``"lqr: effort"`` or ``"bar 3 (nodes 2->5): radius"``) and says what was expected.

Numbers are strict: a bool, a string, a complex number, an array or None given for a number is
refused, never converted, so that ``rtol=True`` or ``effort="1e-2"`` fails here with the
argument's name instead of computing with 1.0 or failing deep inside numpy. The model layer,
whose contract is "every check raises ValueError", passes ``error=ValueError`` for wrong types.
"""

from __future__ import annotations

import difflib
import math
import numbers
import reprlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["callable_value", "choice", "describe", "flag", "fraction", "indices", "integer",
           "number", "per_item", "real", "real_array", "reject_unknown_keys", "show"]


class _ShortRepr(reprlib.Repr):
    """reprlib with integers too long for repr() summarized by their digit count."""

    def repr_int(self, x, level):
        if x.bit_length() > 100:  # repr() of over 4300 digits raises, and 400 digits help no one
            return f"<an integer of about {int(x.bit_length() * math.log10(2)) + 1} digits>"
        return repr(x)


_SHORT = _ShortRepr()
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother = 3, 40, 40
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = 6


def show(value) -> str:
    """A short repr of `value` for error messages (nesting and long items summarized)."""
    if isinstance(value, np.ndarray):
        return np.array2string(value, threshold=8, edgeitems=2)[:80]
    return _SHORT.repr(value)


def describe(value) -> str:
    """A wrong value with its type: ``str '1e-6'``, ``bool True``; type and shape if long."""
    text = repr(value)
    if len(text) <= 40:
        return f"{type(value).__name__} {text}"
    shape = getattr(value, "shape", None)
    return type(value).__name__ + (f" of shape {shape}" if shape is not None else "")


def _is_bool(value) -> bool:
    return isinstance(value, (bool, np.bool_))


def _is_real(value) -> bool:
    if _is_bool(value):
        return False
    if isinstance(value, np.ndarray):  # a 0-d numeric array is a number, as in numpy
        return value.ndim == 0 and value.dtype.kind in "iuf"
    return isinstance(value, numbers.Real)


def _shown(value, typed: bool) -> str:
    """The wrong value: with its type (`typed`), or its short repr and what it is."""
    if typed:
        return describe(value)
    if isinstance(value, (str, bytes)):
        return f"{show(value)} (a string: write the number without quotes)"
    if _is_bool(value):
        return f"{show(value)} (a bool)"
    return show(value)


def _figure(value, x: float) -> str:
    """The number as the user wrote it if it is a Python int or float, else as a float."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(value)
    return repr(x)


def number(name: str, value, *, what: str = "a number", error: type = TypeError,
           typed: bool = True) -> float:
    """`value` as a float if it is a real number (Python or numpy, or a 0-d numeric array).

    A bool, a string, a complex number, an array, None or any other object raises `error`
    (TypeError by default) naming `name`; `typed` shows the wrong value with its type
    (``got str '1e-6'``), else as its repr with a hint (``got '1e-6' (a string: ...)``). An
    integer too large for a float raises ValueError.
    """
    if not _is_real(value):
        complex_ = isinstance(value, np.ndarray) and value.dtype.kind == "c"
        if complex_ or (isinstance(value, numbers.Complex) and not _is_bool(value)):
            raise error(f"{name} must be a real number, got {_shown(value, typed)}")
        raise error(f"{name} must be {what}, got {_shown(value, typed)}")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{name} must be a finite number (magnitude below 1.8e308), "
                         f"got {show(value)}") from None


def fraction(name: str, value, *, error: type = TypeError) -> float:
    """`value` as a float strictly between 0 and 1 (a relative tolerance)."""
    x = number(name, value, error=error)
    if not 0 < x < 1:
        raise ValueError(f"{name} must be in (0, 1), got {_figure(value, x)}")
    return x


def real(name: str, value, *, what: str = "a number", positive: bool = False,
         finite: bool = True, low: float | None = None, high: float | None = None,
         open_low: bool = False, expected: str | None = None, error: type = TypeError,
         typed: bool = True) -> float:
    """`value` as a float, checked to be a real number (:func:`number`) and in range.

    Parameters
    ----------
    name : str
        The argument as the message names it.
    value
        What the user gave.
    what : str
        What a number here is, for the type error (``"a number of seconds"``).
    positive : bool
        Require ``value > 0`` ("must be positive"; NaN is not positive).
    finite : bool
        Refuse inf and NaN ("must be finite").
    low, high : float, optional
        Require ``low <= value <= high`` (``low < value`` with `open_low`): "must be >= low".
        NaN passes these two when `finite` is False.
    expected : str, optional
        What a valid value is, said by the range messages instead (``"a number >= 1"``).
    error, typed
        As for :func:`number`.

    Raises
    ------
    TypeError
        `value` is not a real number (or `error`).
    ValueError
        Out of range, or not finite.
    """
    x = number(name, value, what=what, error=error, typed=typed)
    try:
        return _in_range(name, value, x, positive, finite, low, high, open_low)
    except ValueError:
        if expected is None:
            raise
        raise ValueError(f"{name} must be {expected}, got {_figure(value, x)}") from None


def _in_range(name, value, x, positive, finite, low, high, open_low) -> float:
    """x, or ValueError saying which bound of :func:`real` it breaks."""
    if positive and not x > 0:
        raise ValueError(f"{name} must be positive, got {_figure(value, x)}")
    if finite and not math.isfinite(x):
        hint = " (a magnitude beyond 1.8e308 reads as inf)" if math.isinf(x) else ""
        raise ValueError(f"{name} must be finite, got {x}{hint}")
    if low is not None and (x <= low if open_low else x < low):  # NaN passes if not finite
        raise ValueError(f"{name} must be {'>' if open_low else '>='} {low:g}, got {x:g}")
    if high is not None and x > high:
        raise ValueError(f"{name} must be <= {high:g}, got {x:g}")
    return x


def integer(name: str, value, *, minimum: int | None = None, maximum: int | None = None,
            error: type = TypeError, typed: bool = True) -> int:
    """`value` as an int: a Python or numpy integer, not a bool nor a float such as 2.0.

    With `minimum`/`maximum` the message reads "must be an integer >= minimum"; `error`
    (TypeError by default) for a wrong type, ValueError out of range.
    """
    bounds = " and ".join(f"{op} {b}" for op, b in ((">=", minimum), ("<=", maximum))
                          if b is not None)
    what = "an integer" + (f" {bounds}" if bounds else "")
    if _is_bool(value) or not isinstance(value, numbers.Integral):
        raise error(f"{name} must be {what}, got {describe(value) if typed else show(value)}")
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return int(value)


def flag(name: str, value, *, error: type = TypeError, typed: bool = True) -> bool:
    """`value` as a bool: True or False only (a string such as "no" is truthy, so refused)."""
    if not _is_bool(value):
        raise error(f"{name} must be True or False, got "
                    f"{describe(value) if typed else show(value)}")
    return bool(value)


def choice(name: str, value, choices: Sequence[str], *, error: type = ValueError) -> str:
    """`value` if it is one of `choices`; else `error` listing them, with the closest match."""
    if isinstance(value, str) and value in choices:
        return value
    close = difflib.get_close_matches(str(value), list(choices), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise error(f"{name} must be one of {', '.join(map(repr, choices))}, got "
                f"{show(value)}{hint}")


def reject_unknown_keys(where: str, given: Mapping[str, Any], allowed: Sequence[str]) -> None:
    """ValueError naming the first key of `given` not in `allowed` (with a close match)."""
    for key in given:
        if key not in allowed:
            close = difflib.get_close_matches(key, allowed, n=1) if isinstance(key, str) else []
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(
                f"{where}: unknown key {show(key)}{hint}; allowed keys: {', '.join(allowed)}"
            )


def callable_value(name: str, f, signature: str) -> None:
    """TypeError unless `f` is callable (the message shows how it is called)."""
    if not callable(f):
        raise TypeError(f"{name} must be callable as {signature}, got {type(f).__name__}")


def real_array(name: str, value, unit: str, *, shape: tuple | None = None,
               finite: bool = False) -> np.ndarray:
    """`value` as a new float array of real numbers (no strings, bools, complex or objects).

    With `shape` (a tuple, -1 for any length) its shape is checked; with `finite` its
    entries. TypeError for a wrong type, ValueError for a wrong shape or a non-finite entry.
    """
    try:
        a = np.asarray(value)
    except (TypeError, ValueError):  # ragged nested lists
        raise TypeError(f"{name} must be an array of numbers [{unit}], got "
                        f"{describe(value)}") from None
    if a.dtype.kind not in "iuf":
        kind = "complex numbers" if a.dtype.kind == "c" else f"dtype {a.dtype}"
        raise TypeError(f"{name} must be an array of real numbers [{unit}], got {kind}"
                        + ("" if a.dtype.kind == "c" else f" ({describe(value)})"))
    if shape is not None and (a.ndim != len(shape) or any(
            s not in (-1, n) for s, n in zip(shape, a.shape))):
        want = "(" + ", ".join("n" if s == -1 else str(s) for s in shape) \
               + ("," if len(shape) == 1 else "") + ")"
        raise ValueError(f"{name} must have shape {want} [{unit}], got shape {a.shape}")
    if finite and not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite [{unit}]; entries "
                         f"{np.flatnonzero(~np.isfinite(a.reshape(-1)))[:6].tolist()} are not")
    return a.astype(float)


def per_item(name: str, value, n: int, unit: str, *, positive: bool = False,
              items: str = "") -> np.ndarray:
    """`value`, a real number or `n` of them, as a float array of shape (n,), finite (and > 0
    with `positive`); `items` says what they are for (``" (one per string)"``)."""
    sign = "positive" if positive else "finite"
    want = f"a {sign} number or {n} {sign} numbers{items} [{unit}]"
    try:
        a = np.asarray(None if isinstance(value, (str, bytes)) else value)
    except (TypeError, ValueError):  # ragged nested lists
        a = np.asarray(None)
    if a.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be {want}, got {describe(value)}")
    a = np.full(n, float(a)) if a.ndim == 0 else a.astype(float).reshape(-1)
    if a.shape != (n,) or not np.all(np.isfinite(a)) or (positive and np.any(a <= 0)):
        raise ValueError(f"{name} must be {want}, got {show(value)}")
    return a


def indices(name: str, value, size: int | None, *, what: str = "index") -> np.ndarray:
    """`value` (an integer or a sequence of them) as a 1-D int64 array of indices into
    ``range(size)``: integers only (not bools, floats or strings), each in [0, size). With
    `size` None only the type is checked (the caller says what a valid range is)."""
    items = [value] if np.ndim(value) == 0 else list(np.asarray(value, dtype=object).reshape(-1))
    within = "" if size is None else f" in [0, {size})"
    for v in items:
        if _is_bool(v) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{name} must be {what} integers{within}, got {show(v)}")
        if size is not None and not 0 <= v < size:
            raise ValueError(f"{name}: {what} {int(v)} out of range; there are {size} "
                             f"(0 to {size - 1})")
    return np.array([int(v) for v in items], dtype=np.int64)
