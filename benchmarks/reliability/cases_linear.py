"""Reliability cases of issue 13 in the linear layer, statics and stiffness (each runs in a
fresh process; see benchmarks/reliability.py)."""

_TBAR = "import dataclasses, warnings\nwarnings.simplefilter('ignore')\nt = tc.catalog.tbar()\n"
_STRINGS = _TBAR + ("def strings(**kw):\n    return dataclasses.replace(t, strings=tuple("
                    "dataclasses.replace(s, **kw) for s in t.strings))\n")
_BARS = _TBAR + ("def bars(**kw):\n    return dataclasses.replace(t, bars=tuple("
                 "dataclasses.replace(b, **kw) for b in t.bars))\n")
_CT = "import control as ct\n"

CASES = [
    # norms: NaN and inf (silent garbage, or a hang inside slycot)
    ("hinf_norm(ss(-1, inf, 1, 0)) (was 0.0)", _CT + "print(tc.hinf_norm(ct.ss(-1, np.inf, 1, 0)))"),
    ("hinf_norm, inf in C (was 0.0)", _CT + "print(tc.hinf_norm(ct.ss(-1, 1, np.inf, 0)))"),
    ("hinf_norm, NaN in D (was nan)", _CT + "print(tc.hinf_norm(ct.ss(-1, 1, 1, np.nan)))"),
    ("hinf_norm, NaN in B (hung 133 s in slycot)",
     _CT + "print(tc.hinf_norm(ct.ss(-1, np.nan, 1, 0)))"),
    ("hinf_norm, NaN in C (hung in slycot)", _CT + "print(tc.hinf_norm(ct.ss(-1, 1, np.nan, 0)))"),
    ("h2_norm, NaN in B (scipy's message)", _CT + "print(tc.h2_norm(ct.ss(-1, np.nan, 1, 0)))"),
    ("h2_norm, inf in A (scipy's message)", _CT + "print(tc.h2_norm(ct.ss(-np.inf, 1, 1, 0)))"),
    ("hinf_norm of a 1e600 gain (was 0.0)", _CT + "print(tc.hinf_norm(ct.ss(-1, 1e300, 1e300, 0)))"),
    ("h2_norm with A = -1e-300 (was 0.0)", _CT + "print(tc.h2_norm(ct.ss(-1e-300, 1, 1, 0)))"),
    # linearize: derived quantities that overflow, round-off on fixed coordinates
    ("linearize, string E=1e308 r=1 (A had 288 non-finite)",
     _STRINGS + "print(tc.linearize(strings(youngs_modulus=1e308, radius=1.0)))"),
    ("linearize, rest_fraction 1e-320", _STRINGS + "print(tc.linearize(strings(rest_fraction=1e-320)))"),
    ("linearize, bar density 1e308", _BARS + "print(tc.linearize(bars(density=1e308)))"),
    ("linearize, bar radius 1e-160", _BARS + "print(tc.linearize(bars(radius=1e-160)))"),
    ("linearize compressible, bar radius 1e-160 (96 non-finite)",
     _BARS + "print(tc.linearize(bars(radius=1e-160), bars='compressible'))"),
    ("linearize, coordinates x 1e160",
     _TBAR + "print(tc.linearize(dataclasses.replace(t, nodes=t.nodes * 1e160)))"),
    ("linearize, loads 1e308", _TBAR + "print(tc.linearize(t, loads=np.full(12, 1e308)))"),
    ("linearize, qd = 9.8e-15 on fixed z0 (was refused)",
     _TBAR + "t = tc.equilibrium(t, gamma_min=10.0).structure\nqd = np.zeros(12); qd[2] = 9.8e-15\n"
     "m = tc.linearize(t, qd=qd); print('accepted, qd[2] =', m.qd[2], m)"),
    ("linearize, qd = 1e-3 on fixed z0 (real motion)",
     _TBAR + "qd = np.zeros(12); qd[2] = 1e-3\nprint(tc.linearize(t, qd=qd))"),
    # reduction and synthesis on a poisoned model
    ("minimal_realization, NaN in A",
     _TBAR + "m = tc.linearize(tc.equilibrium(t, gamma_min=10.0).structure)\n"
     "A = m.A.copy(); A[20, 1] = np.nan\n"
     "print(tc.minimal_realization(dataclasses.replace(m, A=A)))"),
    ("elastic_model, inf in stiffness",
     _TBAR + "m = tc.linearize(tc.equilibrium(t, gamma_min=10.0).structure)\n"
     "K = m.stiffness.copy(); K[2, 2] = np.inf\n"
     "print(tc.elastic_model(dataclasses.replace(m, stiffness=K)))"),
    ("lqr, NaN in B",
     _TBAR + "m = tc.linearize(tc.equilibrium(t, gamma_min=10.0).structure)\n"
     "B = m.B.copy(); B[14, 0] = np.nan\nprint(tc.lqr(dataclasses.replace(m, B=B)))"),
    ("hinfsyn, NaN in A",
     _TBAR + "m = tc.linearize(tc.equilibrium(t, gamma_min=10.0).structure)\n"
     "A = m.A.copy(); A[20, 1] = np.nan\nprint(tc.hinfsyn(dataclasses.replace(m, A=A)))"),
    # statics
    ("equilibrium(gamma_min=1e12) (rest lengths 2.2e-10 m)",
     _TBAR + "print(tc.equilibrium(t, gamma_min=1e12).structure.string_rest_lengths)"),
    ("equilibrium, bar density 1e308 (Invalid input for linprog)",
     _BARS + "print(tc.equilibrium(bars(density=1e308), gamma_min=1.0))"),
    ("equilibrium, coordinates x 1e160 (Invalid input for linprog)",
     _TBAR + "print(tc.equilibrium(dataclasses.replace(t, nodes=t.nodes * 1e160)))"),
    ("equilibrium, string E=1e308 r=1 (rest lengths nan)",
     _STRINGS + "print(tc.equilibrium(strings(youngs_modulus=1e308, radius=1.0), gamma_min=1.0))"),
    ("equilibrium, gamma_min 1e25 (HiGHS 'Model error' read as infeasible)",
     "print(tc.equilibrium(tc.catalog.arm(), gamma_min=1e25))"),
    # stiffness
    ("compliance, a pinned bar, no strings (IndexError)",
     "s = tc.Structure([[0, 0, 0], [1, 0, 0]], bars=[dict(nodes=(0, 1), radius=0.01, "
     "density=100)], fixed={0: 'xyz'})\nprint(tc.compliance(s))"),
    ("compliance, two bars, no strings",
     "s = tc.Structure([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], bars=[dict(nodes=(0, 1), "
     "radius=0.01, density=100), dict(nodes=(2, 3), radius=0.01, density=100)], "
     "fixed={0: 'xyz', 2: 'xyz'}, name='two')\nprint(tc.compliance(s))"),
    ("compliance, string E=1e308 r=1 (blamed a mechanism)",
     _STRINGS + "print(tc.compliance(strings(youngs_modulus=1e308, radius=1.0)))"),
    ("compliance, rest_fraction 1e-320 (blamed a mechanism)",
     _STRINGS + "print(tc.compliance(strings(rest_fraction=1e-320)))"),
    ("compliance, bar density 1e308 (blamed a mechanism)",
     _BARS + "print(tc.compliance(bars(density=1e308)))"),
    ("compliance, coordinates x 1e160 (LinAlgError)",
     _TBAR + "print(tc.compliance(dataclasses.replace(t, nodes=t.nodes * 1e160)))"),
    ("compliance, gamma 1e308", _TBAR + "print(tc.compliance(t, gamma=np.full(4, 1e308)))"),
]
