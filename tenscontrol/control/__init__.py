"""The runtime laws the simulator calls: the Controller protocol, StateFeedback, OutputFeedback
and Measurement; the sampled-data protocol and DiscreteFeedback; the sampled DiscreteLQG with
its DiscreteKalman filter; the tension-bounded PredictiveController; ShapeTracking; self-stress
allocation around any of them; and their files. Imports the model, the mechanics and the
statics; never the design, estimation or linear packages, and python-control only where a
controller is asked for its StateSpace."""
