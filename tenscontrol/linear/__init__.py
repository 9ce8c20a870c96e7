"""Linear analysis: linearize (the one bridge from the mechanics), minimal realizations and
elastic models, H2 and H-infinity norms, the marginal/stable split, the integrals of
sampled-data design (exact hold, Van Loan), MATLAB export and the BLAS thread policy. Imports
python-control."""

from tenscontrol.exports import lazy_exports

_EXPORTS = {
    "LinearModel": "linearization", "linearize": "linearization",
    "ElasticModel": "reduction", "MinimalRealization": "reduction", "elastic_model": "reduction",
    "minimal_realization": "reduction",
    "ModalView": "modal_view", "modes": "modal_view",
    "h2_norm": "norms", "hinf_norm": "norms",
    "save_mat": "matlab",
    "blas_threads": "threads",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
