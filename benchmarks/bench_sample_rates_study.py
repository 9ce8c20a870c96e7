"""A sample-rate sweep through a study: LQRPipeline's continuous LQR discretized at 1 kHz, 200 Hz
and 50 Hz against the continuous loop, on the T-bar (issue 23).

The README's T-bar (catalog "stedy", dampers 1 N s/m, prestress design 10 N/m), the LQR on the
passive model with outputs x and z of nodes 2 and 3 at the README's effort 1e-2 and at a
hundred times stiffer 1e-4, sampled and held without delay (and, for 50 Hz, with a 5 ms
computation delay), verified on the nonlinear rigid-bar model under a 10 N doublet on node 2
along z (half period 1 s, 5 s simulated). Cases run by ``tenscontrol.run_study`` on the
pipeline: the continuous reference is the case without ``period``. Figures are the pipeline's:
``closed_peak`` [m], ``effort_peak`` [N/m], ``linear_error``, ``spectral_radius`` and
``gain_margin`` of the discrete loop on the design model (scanned up to 100). The continuous
loop's margin is checked here on the same model: the largest loop gain up to 100 (a grid of
400 gains) with every eigenvalue of ``A - g B K`` in the left half plane.

Run: ``python benchmarks/bench_sample_rates_study.py``
"""

import os
import time

import numpy as np

import tenscontrol as tc
from tenscontrol.studies.cases import Case

EFFORTS = (1e-2, 1e-4)
TIMINGS = ((None, 0.0), (1e-3, 0.0), (5e-3, 0.0), (2e-2, 0.0), (2e-2, 5e-3))


def continuous_margin(structure, pipeline, effort, upper=100.0) -> float:
    """The largest g <= upper (grid) with the continuous loop A - g B K stable."""
    design = tc.equilibrium(structure, gamma_min=pipeline.prestress).structure
    d = tc.lqr(tc.linearize(design, kind="passive", outputs=pipeline.outputs), effort=effort)
    mr, nu = d.minimal, d.controller.strings.size
    A, B = np.asarray(mr.sys.A), np.asarray(mr.sys.B)[:, :nu]
    Kr = d.controller.K @ mr.basis
    last = 1.0
    for g in np.geomspace(1.0, upper, 400):
        if np.linalg.eigvals(A - g * B @ Kr).real.max() >= 0:
            return last
        last = g
    return float(upper)


def main():
    structure = tc.catalog.tbar("stedy", damping=1.0)
    pipeline = tc.LQRPipeline(structure, outputs=tc.Selection(nodes=[2, 3], axes="xz"),
                              prestress=10.0, amplitude=10.0, half_period=1.0, t_final=5.0)
    cases, index = [], 0
    for effort in EFFORTS:
        for period, delay in TIMINGS:
            params = {"effort": effort}
            if period is not None:
                params.update(period=period, delay=delay)
            cases.append(Case(index, params))
            index += 1
    pipeline.warm()
    start = time.process_time()
    result = tc.run_study(pipeline, cases, progress=False)
    cpu = time.process_time() - start
    assert result.complete and not result.failures, result.summary()
    print(f"load average {os.getloadavg()[0]:.2f}; {len(cases)} cases, CPU {cpu:.2f} s")
    head = (f"{'effort':>7} {'rate':>9} {'delay':>7} {'closed peak':>12} {'vs cont.':>9} "
            f"{'peak |u|':>9} {'lin err':>8} {'rho':>9} {'gain margin':>11}")
    print(head)
    print("-" * len(head))
    for effort in EFFORTS:
        rows = [r for r in result.records if r.parameters["effort"] == effort]
        ref = next(r for r in rows if np.isnan(r.figures["period"]))
        margin = continuous_margin(structure, pipeline, effort)
        for r in rows:
            f = r.figures
            cont = np.isnan(f["period"])
            rate = "cont." if cont else f"{1 / f['period']:.0f} Hz"
            gm = f">={margin:.0f} (cap)" if cont and margin >= 100 else (
                f"{margin:.3g}" if cont else f"{f['gain_margin']:.3g}")
            rho = "-" if cont else f"{f['spectral_radius']:.5f}"
            print(f"{effort:>7.0e} {rate:>9} {f['delay'] * 1e3:>5.1f}ms "
                  f"{f['closed_peak']:>12.5f} {f['closed_peak'] / ref.figures['closed_peak'] - 1:>+9.2%} "
                  f"{f['effort_peak']:>9.3f} {f['linear_error']:>8.4f} {rho:>9} {gm:>11}")
    print(f"open-loop peak {ref.figures['open_peak']:.5f} m")


if __name__ == "__main__":
    main()
