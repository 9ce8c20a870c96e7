"""The modal view and the damping verdict on the structures of issue 32 (items 1 and 5).

3-prism: ``catalog.prism(3, damping=1.0)``, ``equilibrium(gamma_min=10)``, outputs nodes 3-5,
a 20 N doublet on node 3 along x (half period 1 s, 10 s simulated). Printed: the modal table
open loop, with ``lqr(model, effort=1e-2)`` and with ``effort=1e-6``, the LQR's summary (its
damping verdict), and ``verify``'s report for the LQR and for ``mpc(model, 0.01, effort=1e-2,
gamma_min=1.0)``. Issue 32 measured: open loop peak 136.7 mm, LQR 130.2 mm with strings slack
for 0.11 s, MPC 149.4 mm; the twisting mode at 8.47 rad/s with damping 3e-8 open loop, 9e-4
after the LQR, 0.06 at effort 1e-6.

Ball: ``catalog.ball(damping=1.0)``, ``equilibrium(gamma_min=40)``, output node 12: the modal
table with ``lqr(effort=1e-2)`` and the LQR's verdict; then a sampled LQG on the 32 string
lengths (0.1 mm noise, 200 Hz, 1 ms delay) checked by ``verify`` under ``ball_load(30)``
(issue 32 reports a ball with string-length sensors 32 % worse than open loop; its exact
case is not given, this is one like it).

4-prism tower of 2 stages (``catalog.prism_tower(2, n=4, damping=1.0)``, gamma_min 20, outputs
the top nodes): the modal table open loop and with ``lqr(effort=1e-2)``.

Run: ``python benchmarks/bench_modal.py`` (about a minute; ``--quick`` skips the simulations).
"""

import sys
import time

import numpy as np

import tenscontrol as tc


def prism(quick: bool) -> None:
    s = tc.equilibrium(tc.catalog.prism(3, damping=1.0), gamma_min=10.0).structure
    outputs = tc.Selection(nodes=[3, 4, 5])
    model = tc.linearize(s, outputs=outputs)
    start = time.process_time()
    view = tc.modes(model)
    print(f"== 3-prism, open loop ({1e3 * (time.process_time() - start):.0f} ms CPU)")
    print(view)
    print(view.mode(0))
    for effort in (1e-2, 1e-6):
        design = tc.lqr(model, effort=effort)
        print(f"\n== 3-prism, lqr(effort={effort:g})")
        print(tc.modes(model, design))
        if effort == 1e-2:
            print(design)
            lqr_design = design
    if quick:
        return
    loads = tc.doublet(s, tc.Selection(3, "x"), 20.0)
    for name, design in (("lqr(effort=1e-2)", lqr_design),
                         ("mpc(0.01 s, effort=1e-2, gamma_min=1)",
                          tc.mpc(model, 0.01, effort=1e-2, gamma_min=1.0))):
        report = tc.verify(s, design, loads, 10.0, outputs=outputs)
        print(f"\n== 3-prism, verify {name}")
        print(report)


def ball(quick: bool) -> None:
    s = tc.equilibrium(tc.catalog.ball(damping=1.0), gamma_min=40.0).structure
    outputs = tc.Selection(nodes=[12])
    model = tc.linearize(s, outputs=outputs)
    design = tc.lqr(model, effort=1e-2)
    print("\n== ball, lqr(effort=1e-2)")
    print(tc.modes(model, design))
    print(design)
    if quick:
        return
    # string-length sensors on every string (0.1 mm noise), sampled LQG at 200 Hz
    sensors = tc.sensors(s, string_lengths=range(s.n_strings), std=1e-4, rate=200.0)
    lqg = tc.discrete_lqg(model, sensors, 0.005, process_noise=4.0, delay=0.001, effort=1e-2)
    report = tc.verify(s, lqg, tc.catalog.ball_load(30.0), 3.0, outputs=outputs,
                       t_eval=np.linspace(0.0, 3.0, 301))
    print("\n== ball, discrete_lqg on 32 string lengths, verify under ball_load(30)")
    print(lqg)
    print(report)


def tower() -> None:
    t = tc.catalog.prism_tower(2, n=4, damping=1.0)
    s = tc.equilibrium(t, gamma_min=20.0).structure
    top = list(range(s.n_nodes - 4, s.n_nodes))
    model = tc.linearize(s, outputs=tc.Selection(nodes=top))
    design = tc.lqr(model, effort=1e-2)
    print("\n== 2-stage 4-prism tower, lqr(effort=1e-2)")
    print(tc.modes(model, design))
    print(design.damping_verdict())


if __name__ == "__main__":
    np.set_printoptions(precision=4)
    quick = "--quick" in sys.argv
    prism(quick)
    ball(quick)
    tower()
