"""simulate(): the bar models in the step loop, the correction, actuation, Trajectory, and the
nonlinear model as a python-control system."""

# before any kernel runs: flush the cached kernels whose compiled-in sources changed
from tenscontrol.simulation import cache_guard as _cache_guard  # noqa: F401
from tenscontrol.exports import lazy_exports

_EXPORTS = {
    "simulate": "simulator", "ControlRecord": "actuation", "SampledControlRecord": "sampled_loop",
    "SimulationError": "trajectory", "SimulationInterrupted": "trajectory",
    "SimulationStats": "trajectory", "Trajectory": "trajectory",
    "load_trajectory": "trajectory_io", "to_iosystem": "iosystem",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
