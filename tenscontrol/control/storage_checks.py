"""The value checks of a controller file (:mod:`tenscontrol.control.storage`): what a file
must hold beyond its entries' types and shapes for the controller it gives to run as designed.

A file that was edited or damaged can hold a NaN gain, a zero or negative period, a Kalman
filter whose period is no longer the controller's, a negative sensor noise or a covariance
that is not one; such a controller loads and runs and gives garbage (or fails deep in the
simulation). Each check raises a ValueError naming the file, the entry and the fix, on save
(a controller that could not run is not written) and on load.
"""

from __future__ import annotations

import numpy as np

from tenscontrol.control.sampled import check_timing

__all__ = ["check_finite", "check_lqg_timing", "check_noise", "check_covariance"]

#: Entries that may hold inf: a sensor's rate (inf = read continuously).
_MAY_BE_INFINITE = ("sensors_rate",)
_FIX = "the file was edited or damaged: save the controller again from its design"


def check_finite(name: str, value: np.ndarray, where: str) -> None:
    """Refuse NaN or inf in the number entry `name` (a sensor's rate may be inf)."""
    if value.dtype.kind != "f" or name in _MAY_BE_INFINITE:
        return
    bad = ~np.isfinite(value)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        at = f" at index {index[0] if len(index) == 1 else index}" if index else ""
        raise ValueError(f"{where}: entry '{name}' must be finite, got "
                         f"{value[bad].flat[0]}{at}; {_FIX}")


def check_noise(v: dict, where: str, *, positive_std: bool = False) -> None:
    """The noise model of a sensor set (entries ``sensors_<field>``): std >= 0 (> 0 with
    `positive_std`), quantization >= 0, rate > 0 (inf allowed)."""
    low = {"std": (v["std"] <= 0) if positive_std else (v["std"] < 0),
           "quantization": v["quantization"] < 0, "rate": ~(v["rate"] > 0)}
    for name, bad in low.items():
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            bound = "> 0" if name == "rate" or (name == "std" and positive_std) else ">= 0"
            raise ValueError(f"{where}: entry 'sensors_{name}' must be {bound} for every "
                             f"sensor, got {v[name][i]} for sensor {i}; {_FIX}")


def check_lqg_timing(header: dict, rates: np.ndarray, where: str) -> tuple[float, float]:
    """(period, delay) of a DiscreteLQG's header, checked: 0 <= delay < period finite, the
    Kalman filter's period and delay the controller's, every sensor read at least once per
    period."""
    period, delay = check_timing(header["period"], header["delay"], f"{where}: entry 'header'")
    for name, value in (("kalman_period", period), ("kalman_delay", delay)):
        if header[name] != value:
            raise ValueError(f"{where}: entry 'header' gives {name} = {header[name]!r}, but "
                             f"the controller's {name.split('_')[1]} is {value!r}: the Kalman "
                             f"filter was designed for the controller's timing; {_FIX}")
    slow = rates * period < 1.0 - 1e-9
    if slow.any():
        i = int(np.flatnonzero(slow)[0])
        raise ValueError(f"{where}: entry 'sensors_rate' gives sensor {i} {rates[i]:g} Hz, "
                         f"slower than the controller's 1/period = {1 / period:g} Hz (a "
                         f"DiscreteLQG reads every sensor at every sample); {_FIX}")
    return period, delay


def check_covariance(name: str, P: np.ndarray, where: str) -> None:
    """Refuse an error covariance that is not symmetric positive semidefinite."""
    scale = float(np.abs(P).max()) if P.size else 0.0
    if scale == 0.0:
        return
    asym = float(np.abs(P - P.T).max())
    if asym > 1e-8 * scale:
        raise ValueError(f"{where}: entry '{name}' must be a symmetric covariance, got "
                         f"|P - P^T| = {asym:.3g} (|P| = {scale:.3g}); {_FIX}")
    least = float(np.linalg.eigvalsh(0.5 * (P + P.T)).min())
    if least < -1e-8 * scale:
        raise ValueError(f"{where}: entry '{name}' must be positive semidefinite (a "
                         f"covariance), got an eigenvalue {least:.3g}; {_FIX}")
