"""simulate(): the bar models in the step loop, the correction, actuation, Trajectory, and the
nonlinear model as a python-control system."""
