"""Studies over runs: closed-loop verification and soft-against-metallic comparisons."""

from tenscontrol.exports import lazy_exports

_EXPORTS = {
    "ClosedLoopReport": "verification", "verify": "verification",
    "ShapeChangeReport": "shape_change", "verify_shape_change": "shape_change",
    "MaterialComparison": "comparison", "MaterialFigures": "comparison",
    "compare_materials": "comparison",
    "ClosedLoopComparison": "closed_loop_materials",
    "compare_closed_loop": "closed_loop_materials",
    "Case": "cases", "Choice": "cases", "LogUniform": "cases", "Normal": "cases",
    "Uniform": "cases", "grid": "cases", "samples": "cases",
    "CaseFailure": "results", "CaseResult": "results", "StudyInterrupted": "results",
    "StudyResult": "results",
    "process_pool": "runner", "run_study": "runner",
    "StudyFolderError": "store",
    "LQRPipeline": "pipelines", "NormsPipeline": "pipelines",
    "StudyFileError": "files", "run_study_file": "files",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
