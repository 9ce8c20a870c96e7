"""Estimation: the Kalman gains and the LQG designs (lqg, discrete_lqg), the extended Kalman
filter on the rigid-bar model and the ExtendedLQG built on it, observability and sensor
placement. Sits on the design package (LQG's regulator is an LQR) and the linear analysis."""

from tenscontrol.exports import lazy_exports

_EXPORTS = {
    "LQGDesign": "lqg", "discrete_lqg": "lqg",
    "ExtendedKalman": "ekf", "extended_kalman": "ekf",
    "ExtendedLQG": "extended_lqg",
    "Observability": "observability", "Placement": "observability",
    "place_sensors": "observability",
    "ExpectedLoad": "tuning", "NoiseTuning": "tuning",
}
# lqg, extended_lqg and observability name modules of this package: those functions are
# tenscontrol.lqg, tenscontrol.extended_lqg and tenscontrol.observability
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
