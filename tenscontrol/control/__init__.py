"""Feedback laws as plain matrices: the Controller protocol, StateFeedback, OutputFeedback and
Measurement. Used by the simulation (closed loop) and the linear layer (designs)."""
