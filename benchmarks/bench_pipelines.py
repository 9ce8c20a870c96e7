"""The ready-made pipelines on ordinary cases: how many fail and why; LQRPipeline's bar models.

(1) NormsPipeline on the T-bar (catalog "stedy", dampers 5 N s/m, prestress design 5 N/m, a
    60 N doublet on node 2 z) and on the 4-prism (catalog, dampers 1 N s/m, prestress designs
    of 10 and 100 N/m, a 1 N doublet on node 4 x) over string-stiffness errors -0.3, -0.2, ...,
    0.3, each with `--draws` draws of independent rest-length errors of every string, uniform
    in [-5 %, 5 %] (seeded): per structure and bar model the cases that fail, grouped by the
    error type and the start of its message. A checkout whose pipelines have no `bars` option
    runs its only model, compressible bars.
(2) LQRPipeline on the aluminium T-bar (one case, {"material": "aluminium"}): CPU time of the
    whole chain with bars="rigid" and bars="compressible" (compressible only without `bars`).

Figures are counts and CPU seconds (time.process_time, after a warm-up that compiles the
kernels); the load average is printed.

Usage: python benchmarks/bench_pipelines.py [--draws 3] [--t-final 0.5] [--skip-lqr]
"""

import argparse
import inspect
import itertools
import os
import re
import time
import warnings
from collections import Counter

import numpy as np

import tenscontrol as tc

STIFFNESS_ERRORS = np.round(np.linspace(-0.3, 0.3, 7), 10)
REST_LENGTH_ERROR = 0.05


def structures():
    """(label, structure, pipeline settings) of the T-bar and the 4-prisms."""
    tbar = tc.catalog.tbar("stedy", damping=5.0)
    prism = tc.catalog.prism(4, damping=1.0)
    prism_settings = dict(amplitude=1.0, disturbances=tc.Selection(4, "x"),
                          outputs=tc.Selection(nodes=[4, 5, 6, 7]))
    return [("T-bar", tbar, dict(prestress=5.0, amplitude=60.0,
                                 outputs=tc.Selection(nodes=[2, 3], axes="xz"))),
            ("4-prism 10", prism, dict(prestress=10.0, **prism_settings)),
            ("4-prism 100", prism, dict(prestress=100.0, **prism_settings))]


def bar_models(pipeline_class) -> tuple:
    """The bar models this checkout's pipelines take (without `bars`: None, compressible)."""
    if "bars" in inspect.signature(pipeline_class).parameters:
        return ("rigid", "compressible")
    return (None,)


def cases(n_strings: int, draws: int) -> list:
    """Every stiffness error with `draws` seeded rest-length error vectors."""
    out = []
    for d in range(draws):
        rng = np.random.default_rng([7, d])
        errors = rng.uniform(-REST_LENGTH_ERROR, REST_LENGTH_ERROR, n_strings)
        for k_error in STIFFNESS_ERRORS:
            case = {f"rest_length_error_{k}": float(e) for k, e in enumerate(errors)}
            case["string_stiffness_error"] = float(k_error)
            out.append(case)
    return out


def _reason(error: Exception) -> str:
    """The error's type and the start of its message, numbers replaced by # (to group)."""
    text = re.sub(r"(?<![\w_])[-+]?\d[\d.]*(e[-+]?\d+)?", "#", str(error).split(". ")[0])
    return f"{type(error).__name__}: {text[:120]}"


def _run(pipeline, case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pipeline(case)


def norms_table(draws: int, t_final: float) -> None:
    print(f"NormsPipeline: string_stiffness_error in {STIFFNESS_ERRORS.tolist()} x {draws} "
          f"draws of rest_length_error_<k> ~ U(-{REST_LENGTH_ERROR}, {REST_LENGTH_ERROR}); "
          f"t_final {t_final} s")
    print(f"{'structure':<13}{'bars':<14}{'cases':>6}{'failed':>8}{'slack runs':>12}"
          f"{'CPU/case [s]':>14}")
    reasons = {}
    for (name, structure, settings), bars in itertools.product(
            structures(), bar_models(tc.NormsPipeline)):
        options = {} if bars is None else {"bars": bars}
        pipeline = tc.NormsPipeline(structure, t_final=t_final, **settings, **options)
        label = f"{name:<13}{bars or 'compressible':<14}"
        try:
            _run(pipeline, {})           # compiles the kernels; it may fail as a case does
        except Exception:  # noqa: BLE001
            pass
        todo = cases(structure.n_strings, draws)
        failed, slack, why = 0, 0, Counter()
        start = time.process_time()
        for case in todo:
            try:
                slack += bool(_run(pipeline, case)["slack"])
            except Exception as error:  # noqa: BLE001 - counting every failure is the point
                failed += 1
                why[_reason(error)] += 1
        cpu = (time.process_time() - start) / len(todo)
        print(f"{label}{len(todo):>6}{failed:>8}{slack:>12}{cpu:>14.3f}")
        reasons[" ".join(label.split())] = why
    for label, why in reasons.items():
        for text, count in why.most_common():
            print(f"  {label}: {count} x {text}")


def equilibrium_tests(draws: int) -> None:
    """Of the settled compressible T-bar cases, those linearize accepts as equilibria: with
    its test (1e-8 of the acceleration scale, or twice the forces' rounding floor) and with
    the relative test alone (the floor switched off through the private constant)."""
    from tenscontrol.linear import linearization

    if not hasattr(linearization, "_ROUNDING_FACTOR"):
        return
    from tenscontrol.mechanics.scales import force_rounding

    pipeline = tc.NormsPipeline(tc.catalog.tbar("stedy", damping=5.0), prestress=5.0,
                                bars="compressible")
    accepted = Counter()
    todo = cases(4, draws)
    factor = linearization._ROUNDING_FACTOR
    for case in todo:
        _, settled = pipeline._built(case)
        for label, value in (("floor", factor), ("relative only", 0.0)):
            linearization._ROUNDING_FACTOR = value
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                accepted[label] += tc.linearize(settled, bars="compressible",
                                                at_rest="taut").at_equilibrium
    linearization._ROUNDING_FACTOR = factor
    floor = force_rounding(pipeline.structure, "compressible")
    print(f"linearize's equilibrium test on the {len(todo)} settled compressible T-bar cases "
          f"(force rounding floor {floor:.3g} N): accepted {accepted['floor']} with the floor, "
          f"{accepted['relative only']} by the relative 1e-8 test alone")


def lqr_times() -> None:
    tbar = tc.catalog.tbar("stedy", damping=5.0)
    models = bar_models(tc.LQRPipeline)
    print("LQRPipeline, aluminium T-bar (prestress 5 N/m, 60 N doublet, t_final 3 s)")
    print(f"{'bars':<14}{'CPU [s]':>9}{'open peak [m]':>15}{'closed peak [m]':>17}"
          f"{'reduction':>11}")
    for bars in models:
        options = {} if bars is None else {"bars": bars}
        pipeline = tc.LQRPipeline(tbar, prestress=5.0, amplitude=60.0, t_final=3.0,
                                  outputs=tc.Selection(nodes=[2, 3], axes="xz"), **options)
        pipeline.warm()
        start = time.process_time()
        r = _run(pipeline, {"material": "aluminium"})
        cpu = time.process_time() - start
        print(f"{bars or 'compressible':<14}{cpu:>9.2f}{r['open_peak']:>15.4g}"
              f"{r['closed_peak']:>17.4g}{r['peak_reduction']:>11.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=3)
    parser.add_argument("--t-final", type=float, default=0.5)
    parser.add_argument("--skip-lqr", action="store_true")
    args = parser.parse_args()
    print(f"tenscontrol from {os.path.dirname(tc.__file__)}; load average "
          f"{os.getloadavg()[0]:.2f}")
    norms_table(args.draws, args.t_final)
    equilibrium_tests(args.draws)
    if not args.skip_lqr:
        lqr_times()
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
