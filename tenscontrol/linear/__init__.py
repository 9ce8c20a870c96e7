"""The linear layer: linearize (the one bridge from the mechanics), minimal realizations, norms,
LQR and H-infinity synthesis. Imports python-control."""
