"""Soft (HDPE) against metallic (aluminium) bars under rest-length and stiffness uncertainty.

A Monte Carlo study on the prestressed T-bar (one-sided strings, E = 70 MPa, radius 1 mm,
dampers of 5 N s/m, least prestress 5 N/m, compressible bars): each sample draws the four
strings' rest-length errors (uniform, +-3 %) and a string stiffness error (uniform, +-20 %) and
is run once per bar material (paired). For each case tenscontrol.NormsPipeline designs the
prestress for the material, builds the structure with the errors, settles it, and reports the
settled offset, the H2 and H-inf norms from a vertical force on node 2 to the free node
coordinates, the lowest natural frequency, and, under a 60 N doublet, the peak deflection, the
least string tension and whether a string went slack.

Full size: 1000 cases (500 samples x 2 materials) on a Dask LocalCluster of two workers. The
results go to OUTPUT_DIR/study (one JSON file per case): run the script again and it resumes.

Usage: python examples/soft_vs_metallic_robustness.py [OUTPUT_DIR] [--samples 500]
       [--executor dask|processes|serial] [--workers 2]
"""

import argparse
import pathlib
import tempfile

import tenscontrol as tc


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=None, help="output folder (default: a temp dir)")
    parser.add_argument("--samples", type=int, default=500, help="samples (2 cases each)")
    parser.add_argument("--executor", choices=("dask", "processes", "serial"), default="dask")
    parser.add_argument("--workers", type=int, default=2)
    return parser.parse_args()


def robustness_study(n_samples: int, seed: int = 1):
    """The pipeline and the cases: n_samples imperfections, each on HDPE and aluminium bars."""
    tbar = tc.catalog.tbar("stedy", damping=5.0)
    pipeline = tc.NormsPipeline(tbar, prestress=5.0, outputs=tc.Selection(nodes=[2, 3], axes="xz"),
                                disturbances=tc.Selection(2, "z"), amplitude=60.0, t_final=3.0,
                                bars="compressible")
    uncertain = {f"rest_length_error_{k}": tc.Uniform(-0.03, 0.03) for k in range(4)}
    uncertain["string_stiffness_error"] = tc.Uniform(-0.2, 0.2)
    cases = tc.samples(uncertain, n_samples, seed=seed,
                       designs={"material": ["hdpe", "aluminium"]})
    return pipeline, cases


def run(pipeline, cases, folder, executor: str, workers: int):
    if executor == "serial":
        return tc.run_study(pipeline, cases, out=folder)
    if executor == "processes":
        with tc.process_pool(workers) as pool:
            return tc.run_study(pipeline, cases, out=folder, executor=pool)
    try:
        import distributed
    except ImportError:
        raise SystemExit("the Dask executor needs dask.distributed: pip install "
                         "'tenscontrol[studies]', or use --executor processes") from None
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        return tc.run_study(pipeline, cases, out=folder, executor=client)


def main() -> None:
    args = arguments()
    out = pathlib.Path(args.out or tempfile.mkdtemp(prefix="tbar-robustness-"))
    out.mkdir(parents=True, exist_ok=True)
    pipeline, cases = robustness_study(args.samples)
    result = run(pipeline, cases, out / "study", args.executor, args.workers)
    print(result)
    frame = result.to_dataframe()
    print(frame.groupby("material")[["offset", "hinf", "peak", "min_tension", "slack"]]
          .agg(["mean", "max"]).round(4).to_string())
    result.plot_distribution("hinf", by="material").savefig(out / "robustness_hinf.png", dpi=100)
    result.plot_against("peak", "string_stiffness_error", by="material").savefig(
        out / "robustness_peak_vs_stiffness_error.png", dpi=100)
    result.plot_slack_fraction(by="material").savefig(out / "robustness_slack.png", dpi=100)


if __name__ == "__main__":
    main()
