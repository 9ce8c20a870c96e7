"""simulate(): the bar models in the step loop, the correction, actuation, Trajectory, and the
nonlinear model as a python-control system."""

# before any kernel runs: flush the cached kernels whose compiled-in sources changed
from tenscontrol.simulation import cache_guard as _cache_guard  # noqa: F401
