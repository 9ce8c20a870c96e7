"""Reliability cases of equilibrium(configuration="free") (issue 20): prestress at a loaded
configuration, found whenever one exists, and an error naming the failed step otherwise.

Each case prints what it got, or ends with the exception it raised (see benchmarks/reliability.py).
"""

_HANGING = ("s = tc.catalog.prism_tower(2, gravity=(0, 0, 9.806), bar_material='steel', "
            "bar_radius=0.02, string_material='hdpe')\n")
_PAYLOAD = ("p = tc.catalog.prism(3, gravity=(0, 0, -9.806))\n"
            "hang = [{'nodes': (k, 6), 'material': 'nylon', 'radius': 1e-3, "
            "'rest_fraction': 0.95} for k in (3, 4, 5)]\n"
            "s = tc.Structure(np.vstack([p.nodes, [[0, 0, 0.8]]]), p.bars, "
            "tuple(p.strings) + tuple(hang), fixed={k: 'xyz' for k in range(3)}, "
            "gravity=p.gravity, point_masses=[tc.PointMass(node=6, mass=5.0)])\n")
_SHOW = ("eq = tc.equilibrium(s, gamma_min=g, configuration='free')\n"
         "print(f'min gamma {eq.gamma.min():.9g} N/m, rounds {eq.rounds}, '\n"
         "      f'sag {eq.displacement:.3g} m, residual {eq.residual:.2g} N')\n")

CASES = [
    ("hanging 2-stage tower, gamma_min 8 (crept and failed before)", _HANGING + "g = 8.0\n" + _SHOW),
    ("hanging 2-stage tower, gamma_min 17.5", _HANGING + "g = 17.5\n" + _SHOW),
    ("hanging 2-stage tower, gamma_min 0", _HANGING + "g = 0.0\n" + _SHOW),
    ("standing 2-stage tower, gamma_min 20", "s = tc.catalog.prism_tower(2, gravity=(0, 0, "
     "-9.806))\ng = 20.0\n" + _SHOW),
    ("hung payload, no prestress without gravity, gamma_min 20", _PAYLOAD + "g = 20.0\n" + _SHOW),
    ("hung payload, gamma_min 200", _PAYLOAD + "g = 200.0\n" + _SHOW),
    ("hung payload, gamma_min 1e12 (no rest length gives it)", _PAYLOAD + "g = 1e12\n" + _SHOW),
]
