"""Reliability cases of issues 20 and 21 on the statics surface: the pendulum's stability and
the bad arguments of static_equilibrium, unbalanced_force, static_tangent, tangent_stiffness,
compliance and to_mjcf (each runs in a fresh process; see benchmarks/reliability.py)."""

_PEND = (
    "import warnings\n"
    "def pendulum(deg):\n"
    "    a = np.radians(deg)\n"
    "    return tc.Structure([[0, 0, 0], [np.sin(a), 0, -np.cos(a)]],\n"
    "        bars=[{'nodes': (0, 1), 'density': 500.0, 'radius': 0.01}], fixed={0: 'xyz'},\n"
    "        point_masses=[{'node': 1, 'mass': 2.0}], gravity=(0, 0, -9.806))\n"
    "def show(r):\n"
    "    s = r.structure\n"
    "    W = 9.806 * (2.0 + 0.5 * s.bar_masses[0])  # oracle: W / L, L = 1 m\n"
    "    print(f'tip {np.round(r.q[3:], 12).tolist()}, stable={r.stable}, min stiffness '\n"
    "          f'{r.min_stiffness:.10g} N/m (W/L = {W:.10g}), {r.history.iterations} steps')\n"
)
_PRISM = "s = tc.equilibrium(tc.catalog.prism(3), gamma_min=20.0).structure\nn = s.n_nodes\n"
_SOLVE = "from tenscontrol.statics.solve import static_tangent, unbalanced_force\n" + _PRISM

CASES = [
    # issue 20: a pendulum hanging from a pin
    ("pendulum hanging (was 'stable False, eigenvalue 0')",
     _PEND + "show(tc.static_equilibrium(pendulum(0)))"),
    ("pendulum built at 30 deg (was a 'mechanism')",
     _PEND + "show(tc.static_equilibrium(pendulum(30)))"),
    ("pendulum built horizontal, q= hanging (q was ignored)",
     _PEND + "show(tc.static_equilibrium(pendulum(90), q=[0, 0, 0, 0, 0, -1.0]))"),
    ("pendulum inverted: unstable, eigenvalue named",
     _PEND + "with warnings.catch_warnings(record=True) as w:\n"
             "    warnings.simplefilter('always')\n"
             "    r = tc.static_equilibrium(pendulum(180))\n"
             "print(f'tip {r.q[3:].tolist()}, stable={r.stable}, min stiffness '\n"
             "      f'{r.min_stiffness:.10g} N/m; warns: ' + str(w[0].message)[11:100])"),
    ("free icosahedron under gravity: still a mechanism",
     "tc.static_equilibrium(tc.catalog.icosahedron().with_gravity((0, 0, -9.806)))"),
    # issue 21: statics edge and the statics surface's arguments
    ("static_equilibrium complex loads (imaginary part dropped)",
     _PRISM + "print(tc.static_equilibrium(s, loads=np.zeros((n, 3)) + 1j))"),
    ("static_equilibrium complex q", _PRISM + "print(tc.static_equilibrium(s, q=s.nodes + 0j))"),
    ("static_equilibrium loads='heavy'", _PRISM + "print(tc.static_equilibrium(s, loads='heavy'))"),
    ("static_equilibrium bool q",
     _PRISM + "print(tc.static_equilibrium(s, q=np.ones((n, 3), bool)))"),
    ("static_equilibrium loads of shape (n, 2)",
     _PRISM + "print(tc.static_equilibrium(s, loads=np.zeros((n, 2))))"),
    ("static_equilibrium NaN loads",
     _PRISM + "print(tc.static_equilibrium(s, loads=np.full((n, 3), np.nan)))"),
    ("static_equilibrium bars='rigd'", _PRISM + "print(tc.static_equilibrium(s, bars='rigd'))"),
    ("static_equilibrium of a list", "print(tc.static_equilibrium([1, 2]))"),
    ("static_equilibrium rtol=True", _PRISM + "print(tc.static_equilibrium(s, rtol=True))"),
    ("static_equilibrium max_iterations=2.0",
     _PRISM + "print(tc.static_equilibrium(s, max_iterations=2.0))"),
    ("unbalanced_force complex q", _SOLVE + "print(unbalanced_force(s, q=s.nodes + 1j))"),
    ("unbalanced_force 1 bar force density for 3 bars",
     _SOLVE + "print(unbalanced_force(s, bar_force_densities=[1.0]))"),
    ("unbalanced_force bars=None", _SOLVE + "print(unbalanced_force(s, bars=None))"),
    ("static_tangent psi=None", _SOLVE + "print(static_tangent(s, s.nodes, None))"),
    ("static_tangent q of 5 numbers",
     _SOLVE + "print(static_tangent(s, np.zeros(5), np.zeros(3)))"),
    ("tangent_stiffness complex gamma",
     _PRISM + "print(tc.tangent_stiffness(s, gamma=np.full(9, 1 + 1j)))"),
    ("tangent_stiffness NaN gamma",
     _PRISM + "print(tc.tangent_stiffness(s, gamma=np.full(9, np.nan)))"),
    ("tangent_stiffness string bar force densities",
     _PRISM + "print(tc.tangent_stiffness(s, bar_force_densities=['a', 'b', 'c']))"),
    ("compliance bars=1", _PRISM + "print(tc.compliance(s, bars=1))"),
    ("compliance complex loads", _PRISM + "print(tc.compliance(s, loads=np.zeros((n, 3)) + 0j))"),
    ("Compliance.displacement complex loads",
     _PRISM + "print(tc.compliance(s).displacement(np.zeros((n, 3)) + 1j))"),
    ("to_mjcf timestep=True (was a 1 s step)",
     "print(tc.to_mjcf(tc.catalog.tbar(), timestep=True)[:80])"),
]
