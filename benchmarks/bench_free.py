"""equilibrium(configuration="free") (issue 20, build item 1): the figures of its "Must show".

For two stacked 3-prisms sharing nodes (catalog.prism_tower(2), class-2 joints, base fixed,
gravity on), standing as built and hanging (gravity along +z, steel bars of radius 2 cm, HDPE
strings: the case where the former fixed-multiple update crept and failed), at gamma_min from
5 to 20 N/m in steps of 0.5: success, the smallest force density of a string with a free end
minus gamma_min, the
static solves ("rounds") and the CPU time of each call. Then a 3-prism with a payload hung
below its top ring by three strings, whose prestress at the built geometry without gravity is
infeasible (the strings all pull the payload up): success, rounds and CPU time.

Run it against another checkout (e.g. the code before issue 20) with PYTHONPATH: a column
reads "FAIL" where PrestressError was raised, and rounds "-" where Equilibrium has no count.

Usage: python benchmarks/bench_free.py
"""

import time
import warnings

import numpy as np

import tenscontrol as tc

G = (0.0, 0.0, -9.806)


def stacked_prisms(hanging: bool = False) -> tc.Structure:
    if not hanging:
        return tc.catalog.prism_tower(2, gravity=G)
    return tc.catalog.prism_tower(2, gravity=(0.0, 0.0, 9.806), bar_material="steel",
                                  bar_radius=0.02, string_material="hdpe")


def hung_payload(mass: float = 5.0, depth: float = 0.2) -> tc.Structure:
    """A 3-prism (base fixed) with a payload node `depth` below its top ring's centre."""
    p = tc.catalog.prism(3, gravity=G)
    nodes = np.vstack([p.nodes, [[0.0, 0.0, 1.0 - depth]]])
    hang = [{"nodes": (k, 6), "material": "nylon", "radius": 1e-3, "rest_fraction": 0.95}
            for k in (3, 4, 5)]
    return tc.Structure(nodes, p.bars, tuple(p.strings) + tuple(hang),
                        fixed={k: "xyz" for k in range(3)}, gravity=G,
                        point_masses=[tc.PointMass(node=6, mass=mass)], name="prism-payload")


def run(structure, gamma_min):
    """(min gamma - gamma_min or None, rounds, CPU seconds) of one call; the minimum over the
    strings with a free end (one between fixed nodes carries its designed force whatever the
    load)."""
    t = time.process_time()
    try:
        eq = tc.equilibrium(structure, gamma_min=gamma_min, configuration="free")
    except tc.PrestressError:
        return None, "-", time.process_time() - t
    cpu = time.process_time() - t
    held = structure.fixed.all(axis=1)[structure.string_nodes].all(axis=1)
    return eq.gamma[~held].min() - gamma_min, getattr(eq, "rounds", "-"), cpu


def cell(result) -> str:
    excess, rounds, cpu = result
    text = "FAIL" if excess is None else f"{excess:+.1e}"
    return f"{text:>10}{rounds!s:>4}{cpu:>8.3f}"


def stacked_table():
    print("equilibrium(prism_tower(2), gamma_min, configuration='free'): min gamma - gamma_min "
          "[N/m] of the strings with a free end, rounds (static solves), CPU [s]")
    print(f"{'gamma_min':>9} | {'standing (nylon, aluminium)':^22} | {'hanging (HDPE, steel)':^22}")
    totals = {False: [0, 0.0], True: [0, 0.0]}
    for g in np.arange(5.0, 20.0 + 1e-9, 0.5):
        cells = []
        for hanging in (False, True):
            result = run(stacked_prisms(hanging), g)
            totals[hanging][0] += result[0] is None
            totals[hanging][1] += result[2]
            cells.append(cell(result))
        print(f"{g:>9.1f} | {cells[0]} | {cells[1]}")
    for hanging, (fails, cpu) in totals.items():
        print(f"{'hanging' if hanging else 'standing'}: {31 - fails}/31 succeed, CPU {cpu:.2f} s")


def payload_table():
    s = hung_payload()
    try:
        tc.equilibrium(s.with_gravity((0.0, 0.0, 0.0)), gamma_min=1.0)
        unloaded = "feasible"
    except tc.PrestressError:
        unloaded = "infeasible"
    print(f"\n{s.name} (5 kg hung 0.2 m below the top ring): prestress at the built geometry "
          f"without gravity {unloaded}")
    print(f"{'gamma_min':>9} | {'min gamma - gamma_min':>10}{'rounds':>7}{'CPU [s]':>8}")
    for g in (1.0, 5.0, 20.0, 50.0, 100.0, 200.0):
        excess, rounds, cpu = run(s, g)
        text = "FAIL" if excess is None else f"{excess:+.1e}"
        print(f"{g:>9.1f} | {text:>10}{rounds!s:>7}{cpu:>8.3f}")


if __name__ == "__main__":
    warnings.simplefilter("ignore")  # unstable intermediate sags are reported, not needed here
    tc.equilibrium(stacked_prisms(), gamma_min=5.0, configuration="free")  # compile the kernels
    stacked_table()
    payload_table()
