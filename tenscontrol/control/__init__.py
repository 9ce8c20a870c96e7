"""The runtime laws the simulator calls: the Controller protocol, StateFeedback, OutputFeedback
and Measurement; the sampled-data protocol and DiscreteFeedback; the sampled DiscreteLQG with
its DiscreteKalman filter; the tension-bounded PredictiveController; ShapeTracking; self-stress
allocation around any of them; and their files. Imports the model, the mechanics and the
statics; never the design, estimation or linear packages, and python-control only where a
controller is asked for its StateSpace."""

from tenscontrol.exports import lazy_exports

_EXPORTS = {
    "Controller": "controllers", "Measurement": "controllers", "OutputFeedback": "controllers",
    "StateFeedback": "controllers", "measurement": "controllers",
    "DiscreteFeedback": "sampled", "SampledController": "sampled",
    "DiscreteKalman": "estimators", "DiscreteLQG": "estimators", "SensorMeasurement": "estimators",
    "PredictiveController": "mpc",
    "ShapeTracking": "shape",
    "AllocatedController": "allocation", "AllocatedSampled": "allocation",
    "allocated": "allocation",
    "load_controller": "storage", "save_controller": "storage",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
