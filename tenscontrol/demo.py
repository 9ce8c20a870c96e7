"""The ``tenscontrol demo``: the whole pipeline on the T-bar, stage by stage.

Each stage is a function of one :class:`DemoContext`; :data:`DEMO_STEPS` runs them in order
(:data:`DEMO_DESCRIPTION` says what each does; ``tenscontrol demo --help`` prints it). Every
stage prints its figures and may write plots into ``ctx.out_dir``; later work appends stages.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from tenscontrol.mechanics.kernels import aot
from tenscontrol.mechanics.kernels.notice import compile_seconds
from tenscontrol.model.selection import Selection
from tenscontrol.simulation.simulator import Trajectory, simulate
from tenscontrol.simulation.trajectory import max_abs

__all__ = ["DEMO_DESCRIPTION", "DEMO_STEPS", "DemoContext", "run_demo"]

DEMO_DESCRIPTION = """\
Run the whole pipeline on the catalog T-bar (stedy strings with 1 N s/m dampers), printing
each stage's figures and writing PNG plots to --out-dir, in seven stages:
(1) compile or load the rigid and compressible kernels, so that the wall times below are the
runs alone; (2) simulate the rigid T-bar for 10 s with and without the energy correction and
compare the bar-length and energy drift (node-path and violation plots); (3) the same T-bar
with compressible HDPE and aluminium bars against rigid bars; (4) prestress: the least total
force density with every string at 10 N/m or more, rigid and compressible; (5) linear models
about that equilibrium: orders, H2 and H-infinity norms, Hankel singular values (rigid bars,
listed and plotted); (6) soft against metallic bars (the paper's Table 2 study); (7) an LQR
design on the string force densities, checked in closed loop on the nonlinear model under a
10 N doublet. Takes about 10 s of CPU once the kernels are compiled."""


@dataclass
class DemoContext:
    """What the demo's stages share.

    Attributes
    ----------
    out_dir : Path
        Where the stages write their files (created before the first stage).
    structure : Structure or None
        The structure under study, set by the first stage.
    runs : dict of str to Trajectory
        Simulation results by name.
    files : list of Path
        Files written so far.
    equilibria : dict of str to Equilibrium
        The prestressed T-bar by bar model.
    models : dict of str to MinimalRealization
        Reduced linear models by bar model.
    """

    out_dir: Path
    structure: object = None
    runs: dict = field(default_factory=dict)
    files: list = field(default_factory=list)
    equilibria: dict = field(default_factory=dict)
    models: dict = field(default_factory=dict)


DEMO_T_FINAL = 10.0
DEMO_TOL = 1e-10


def _demo_structure(ctx: DemoContext) -> None:
    from tenscontrol.model import catalog

    ctx.structure = catalog.tbar("stedy", damping=1.0)
    s = ctx.structure
    print(f"T-bar '{s.name}': {s.n_nodes} nodes, {s.n_bars} bars, {s.n_strings} strings, "
          f"mass {s.total_mass:.4g} kg; released from rest with strings m1, m3 pre-stretched")


def _demo_run(ctx: DemoContext, correction: str) -> Trajectory:
    traj = simulate(ctx.structure, DEMO_T_FINAL, rtol=DEMO_TOL, atol=DEMO_TOL,
                    correction=correction)
    ctx.runs[correction] = traj
    print(f"\n== {DEMO_T_FINAL:g} s, rtol = atol = {DEMO_TOL:g}, correction = {correction} ==")
    print(traj.summary())
    return traj


def _demo_warm_up(ctx: DemoContext) -> None:
    from tenscontrol.model import catalog

    start, compiled = time.perf_counter(), compile_seconds()
    simulate(ctx.structure, 1e-3)
    # the compressible kernels too: else the first compressible run's wall time is mostly
    # their compilation (42.9 s reported for a 2.1 s run)
    simulate(catalog.tbar("stedy", damping=1.0, bar_material="hdpe"), 1e-3, bars="compressible")
    compiled = compile_seconds() - compiled
    if compiled:
        how = (f"compiled in {compiled:.3g} s CPU (the first run on this machine; later runs "
               "load them from the on-disk cache)")
    elif aot.STATUS.endswith("loaded"):
        how = "loaded"
    else:
        how = "loaded from the on-disk cache"
    print(f"compiled at install (numba's ahead-of-time compiler): {aot.STATUS}")
    print(f"rigid and compressible kernels {how}, ready in {time.perf_counter() - start:.2g} s; "
          "the wall times below are the runs alone")


def _demo_energy_correction(ctx: DemoContext) -> None:
    _demo_run(ctx, "energy")


def _demo_drift(ctx: DemoContext) -> None:
    free = _demo_run(ctx, "none")
    corrected = ctx.runs["energy"]
    tiny = np.finfo(float).tiny
    bar = max_abs(free.bar_violation) / max(max_abs(corrected.bar_violation), tiny)
    energy = max_abs(free.energy_violation) / max(max_abs(corrected.energy_violation), tiny)
    print(f"  without correction the bars drift {bar:.3g}x and the energy {energy:.3g}x "
          "further than with it")


def _demo_plots(ctx: DemoContext) -> None:
    from tenscontrol.plotting import plot_node_paths, plot_violations

    name = ctx.structure.name
    figures = [(f"{name}-node-paths.png", plot_node_paths(ctx.runs["energy"]))]
    figures += [(f"{name}-violations-{c}.png", plot_violations(traj))
                for c, traj in ctx.runs.items()]
    print("\nplots:")
    for filename, fig in figures:
        _save(ctx, filename, fig)


def _save(ctx: DemoContext, filename: str, fig) -> None:
    from tenscontrol.plotting import save_figure
    path = save_figure(fig, ctx.out_dir / filename)
    ctx.files.append(path)
    print(f"  plot: {path}")


def _demo_compressible(ctx: DemoContext) -> None:
    from tenscontrol.model import catalog
    from tenscontrol.plotting import plot_bar_models

    rigid = ctx.runs["energy"]
    runs = []
    for material in ("hdpe", "aluminium"):
        s = catalog.tbar("stedy", damping=1.0, bar_material=material)
        traj = simulate(s, DEMO_T_FINAL, bars="compressible", t_eval=rigid.t, rtol=1e-8,
                        atol=1e-8)
        ctx.runs[f"compressible-{material}"] = traj
        runs.append(traj)
        k_b = s.bar_stiffness[0]
        print(f"\n== compressible {material} bars (E = {s.bars[0].youngs_modulus / 1e9:g} GPa, "
              f"k_b = {k_b:.4g} N/m), {DEMO_T_FINAL:g} s, rtol = atol = 1e-8 ==")
        print(traj.summary())
        same = simulate(s, DEMO_T_FINAL, t_eval=rigid.t, rtol=1e-8, atol=1e-8)
        diff = np.linalg.norm(traj.nodes - same.nodes, axis=2).max()
        print(f"  max node distance to rigid {material} bars  {diff:.3e} m")
    _save(ctx, "tbar-compressible-hdpe-vs-aluminium.png",
          plot_bar_models(runs, ["HDPE", "aluminium"], nodes=[2, 3]))


DEMO_GAMMA_MIN = 10.0  # N/m, the prestress floor of the demo's T-bar


def _demo_prestress(ctx: DemoContext) -> None:
    from tenscontrol.statics.prestress import equilibrium

    for bars in ("rigid", "compressible"):
        eq = equilibrium(ctx.structure, gamma_min=DEMO_GAMMA_MIN, bars=bars)
        ctx.equilibria[bars] = eq
        print(f"\n== prestress, {bars} bars: minimum total force density with gamma >= "
              f"{DEMO_GAMMA_MIN:g} N/m ==")
        print(eq.summary())


def _demo_linear_model(ctx: DemoContext) -> None:
    from tenscontrol.linear.linearization import linearize
    from tenscontrol.linear.norms import h2_norm, hinf_norm
    from tenscontrol.plotting import plot_hankel_singular_values
    from tenscontrol.linear.reduction import minimal_realization

    print("\n== linear models about the prestressed equilibrium (passive: strings elastic) ==")
    print(f"{'bars':<14}{'full order':>11}{'structural':>11}{'minimal':>9}{'theory':>8}"
          f"{'H2 d->y':>12}{'H-inf d->y':>12}")
    for bars in ("rigid", "compressible"):
        s = ctx.equilibria[bars].structure
        model = linearize(s, bars=bars, kind="passive")
        minimal = minimal_realization(model)
        ctx.models[bars] = minimal
        n_c = model.constraint_jacobian.shape[0]
        theory = 2 * (3 * s.n_nodes - n_c)
        sys = minimal.sys[list(model.output_names), list(model.disturbance_names)]
        print(f"{bars:<14}{minimal.full_order:>11}{minimal.structural_order:>11}"
              f"{minimal.order:>9}{theory:>8}{h2_norm(sys):>12.4g}{hinf_norm(sys):>12.4g}")
    print("  theory: 2 (3n - fixed coordinates - independent bar constraints); norms from all "
          "nodal forces [N] to all node positions [m]")
    rigid = ctx.models["rigid"]
    print(f"  Hankel singular values (rigid bars, plotted): "
          f"{np.array2string(rigid.hsv, precision=4)}")
    fig = plot_hankel_singular_values(rigid)
    fig.axes[0].set_title(f"T-bar, rigid bars: balanced truncation, full order "
                          f"{rigid.full_order}, structural {rigid.structural_order}, minimal "
                          f"{rigid.order}", fontsize="medium")
    _save(ctx, "tbar-hankel-singular-values-rigid.png", fig)


def _demo_materials(ctx: DemoContext) -> None:
    from tenscontrol.model import catalog
    from tenscontrol.studies.comparison import compare_materials

    # compare_materials' defaults (atol 1e-8, a 10 ms grid): the table prints the same digits
    # as with 0.3's atol 1e-10 on a 1 ms grid, at a third of the CPU time
    table = compare_materials(catalog.tbar("table2", damping=100.0), ("hdpe", "aluminium"))
    print("\n== soft against metallic bars (the paper's Table 2 study) ==")
    print(table)
    _save(ctx, "tbar-soft-vs-metallic.png", table.plot())


DEMO_EFFORT = 1e-2      # LQR: a force-density change of 1/10 of the prestress costs as much
DEMO_DOUBLET = 10.0     # as a deflection of 1/10 of a bar length; the doublet amplitude [N]
DEMO_OUTPUTS = Selection(nodes=[2, 3], axes="xz")


def _demo_control(ctx: DemoContext) -> None:
    from tenscontrol.model.loads import doublet
    from tenscontrol.linear.linearization import linearize
    from tenscontrol.design.synthesis import lqr
    from tenscontrol.studies.verification import verify

    s = ctx.equilibria["rigid"].structure
    model = linearize(s, kind="passive", outputs=DEMO_OUTPUTS)
    start = time.perf_counter()
    design = lqr(model, effort=DEMO_EFFORT)
    elapsed = time.perf_counter() - start
    print(f"\n== LQR on the string force densities (passive model, effort {DEMO_EFFORT:g}), "
          f"designed in {elapsed:.2g} s ==")
    print(f"  closed-loop poles [1/s]: {np.array2string(design.E, precision=4)}")
    print(f"  gain ||K||_F = {np.linalg.norm(design.K):.4g} (N/m per m, N/m per m/s)")
    print(f"\n== closed-loop check on the corrected nonlinear model: {DEMO_DOUBLET:g} N doublet "
          "on node 2 along z ==")
    report = verify(s, design.controller, doublet(s, Selection(2, "z"), DEMO_DOUBLET),
                    DEMO_T_FINAL, outputs=DEMO_OUTPUTS, rtol=1e-9, atol=1e-9)  # 0.3's tolerances
    ctx.runs["closed-loop"] = report.closed_loop
    print(report)
    _save(ctx, "tbar-lqr-closed-loop.png", report.plot())


DEMO_STEPS: list[Callable[[DemoContext], None]] = [
    _demo_structure, _demo_warm_up, _demo_energy_correction, _demo_drift, _demo_plots,
    _demo_compressible, _demo_prestress, _demo_linear_model, _demo_materials, _demo_control,
]
"""The demo's stages, run in order on one :class:`DemoContext`; append to extend the demo."""


def run_demo(out_dir) -> DemoContext:
    """Run every stage of :data:`DEMO_STEPS` with plots written to `out_dir` (created)."""
    ctx = DemoContext(Path(out_dir))
    ctx.out_dir.mkdir(parents=True, exist_ok=True)
    for step in DEMO_STEPS:
        step(ctx)
    if compile_seconds():
        print(f"\nnumba compiled the kernels of this demo in {compile_seconds():.3g} s CPU "
              "(once per machine: later runs load them from the on-disk cache)")
    return ctx


