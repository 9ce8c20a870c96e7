"""Estimation: the Kalman gains and the LQG designs (lqg, discrete_lqg), the extended Kalman
filter on the rigid-bar model and the ExtendedLQG built on it, observability and sensor
placement. Sits on the design package (LQG's regulator is an LQR) and the linear analysis."""
