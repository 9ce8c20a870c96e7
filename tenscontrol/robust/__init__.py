"""Robustness to uncertain parameters: the closed loop with real uncertain parameters as an
M-Delta form (uncertain_loop, from string_stiffness and point_masses), mu bounds over frequency
with the robust stability margin and the worst perturbation as a Structure (robust_stability),
random sampling inside a box (monte_carlo) and the worst H-inf gain found in it
(worst_case_gain), each within a CPU budget; a multi-model LQR grown from the worst cases
(robust_lqr). Imports python-control and slycot."""

from tenscontrol.exports import lazy_exports

_EXPORTS = {
    "Uncertainty": "parameters", "point_masses": "parameters", "string_stiffness": "parameters",
    "UncertainLoop": "lft", "uncertain_loop": "lft",
    "MonteCarlo": "analysis", "RobustStability": "analysis", "monte_carlo": "analysis",
    "robust_stability": "analysis", "WorstCaseGain": "analysis", "worst_case_gain": "analysis",
    "RobustLQRDesign": "design", "robust_lqr": "design",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
