"""Controller synthesis on the linear models: the Design result shape, lqr and hinfsyn (with the
checked Riccati solver and the H-infinity bisection), dlqr and the sampled-data tools, the
tension-bounded mpc, and shape change along a path of equilibria. Each returns a design whose
controller is a runtime law of tenscontrol.control. Imports python-control."""
