"""Controller synthesis on the linear models: the Design result shape, lqr and hinfsyn (with the
checked Riccati solver and the H-infinity bisection), dlqr and the sampled-data tools, the
tension-bounded mpc, and shape change along a path of equilibria; each returns a design whose
controller is a runtime law of tenscontrol.control. Also actuator placement, which strings to
command (place_actuators). Imports python-control."""

from tenscontrol.exports import lazy_exports

_EXPORTS = {
    "Design": "result", "DiscreteLQGDesign": "result", "ExtendedLQGDesign": "result",
    "MPCDesign": "result",
    "HinfDesign": "synthesis", "LQRDesign": "synthesis", "hinfsyn": "synthesis",
    "lqr": "synthesis",
    "DiscreteLQRDesign": "discrete", "ZOHModel": "discrete", "discrete_closed_loop": "discrete",
    "discretize": "discrete", "dlqr": "discrete", "gain_margin": "discrete", "zoh": "discrete",
    "mpc": "predictive",
    "ActuatorPlacement": "placement", "place_actuators": "placement",
    "DampingVerdict": "verdict", "EffortChoice": "effort",
    "ShapeChange": "shape", "ShapePath": "shape", "shape_change": "shape", "shape_path": "shape",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
