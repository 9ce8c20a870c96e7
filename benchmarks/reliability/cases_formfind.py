"""Reliability cases of form-finding (issue 21): bad topologies, densities, groups, fixed nodes.

Each case prints what it got, or ends with the exception it raised (see benchmarks/reliability.py).
A prism (6 nodes, bars k -> k+3, rings and sides; its bars and rings solved for) is the base
that each case breaks in one place.
"""

_PRISM = ("B = [(0, 3), (1, 4), (2, 5)]\n"
          "S = [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3), (0, 5), (1, 3), (2, 4)]\n"
          "G = [range(3), range(3, 9)]\n"
          "def show(f):\n"
          "    print(f, 'node 3 at', np.round(f.nodes[3], 3).tolist())\n")

CASES = [
    ("valid prism (the base of the cases)", _PRISM + "show(tc.form_find(6, B, S, solve_for=G))"),
    # node indices and pairs
    ("float index 0.7", _PRISM + "show(tc.form_find(6, [(0.7, 3)] + B[1:], S, solve_for=G))"),
    ("bool index", _PRISM + "show(tc.form_find(6, [(True, 3)] + B[1:], S, solve_for=G))"),
    ("string index '3'", _PRISM + "show(tc.form_find(6, [(0, '3')] + B[1:], S, solve_for=G))"),
    ("bars as triples", _PRISM + "show(tc.form_find(6, [(0, 3, 1), (4, 2, 5)], S, solve_for=G))"),
    ("bars as a flat list", _PRISM + "show(tc.form_find(6, [0, 3, 1, 4, 2, 5], S, solve_for=G))"),
    ("bars as a string", _PRISM + "show(tc.form_find(6, '031425', S, solve_for=G))"),
    ("index out of range", _PRISM + "show(tc.form_find(6, [(0, 9)] + B[1:], S, solve_for=G))"),
    ("negative index", _PRISM + "show(tc.form_find(6, [(0, -3)] + B[1:], S, solve_for=G))"),
    ("member joining a node to itself", _PRISM +
     "show(tc.form_find(6, B, [(1, 1)] + S[1:], solve_for=G))"),
    ("no members", "print(tc.form_find(6, [], []))"),
    # topology
    ("two disconnected prisms", _PRISM +
     "B2 = B + [(i + 6, j + 6) for i, j in B]\nS2 = S + [(i + 6, j + 6) for i, j in S]\n"
     "show(tc.form_find(12, B2, S2, solve_for=[range(6), range(6, 12)]))"),
    ("node in no member", _PRISM + "show(tc.form_find(7, B, S, solve_for=G))"),
    ("two prisms stacked (a family of shapes)",
     "b = [(s * 3 + k, (s + 1) * 3 + k) for s in range(2) for k in range(3)]\n"
     "r = [(L * 3 + k, L * 3 + (k + 1) % 3) for L in range(3) for k in range(3)]\n"
     "d = [(s * 3 + k, (s + 1) * 3 + (k - 1) % 3) for s in range(2) for k in range(3)]\n"
     "print(tc.form_find(9, b, r + d, solve_for=[range(6), range(6, 15)]))"),
    ("4 free-standing nodes", "print(tc.form_find(4, [(0, 2), (1, 3)], "
     "[(0, 1), (1, 2), (2, 3), (3, 0)]))"),
    # densities
    ("all densities zero", _PRISM + "show(tc.form_find(6, B, S, string_force_densities=0.0, "
     "bar_force_densities=0.0, solve_for=[]))"),
    ("one string density zero", _PRISM + "show(tc.form_find(6, B, S, solve_for=G, "
     "string_force_densities=[0] + [1] * 8))"),
    ("NaN density", _PRISM + "show(tc.form_find(6, B, S, solve_for=G, "
     "bar_force_densities=float('nan')))"),
    ("inf density", _PRISM + "show(tc.form_find(6, B, S, solve_for=G, "
     "string_force_densities=float('inf')))"),
    ("densities of the wrong length", _PRISM + "show(tc.form_find(6, B, S, solve_for=G, "
     "string_force_densities=[1, 2]))"),
    ("density '1'", _PRISM + "show(tc.form_find(6, B, S, solve_for=G, "
     "string_force_densities='1'))"),
    ("densities without a self-stress", _PRISM + "show(tc.form_find(6, B, S, solve_for=[]))"),
    # solve_for
    ("solve_for out of range", _PRISM + "show(tc.form_find(6, B, S, solve_for=[[99]]))"),
    ("solve_for a string", _PRISM + "show(tc.form_find(6, B, S, solve_for='bars'))"),
    ("solve_for an int", _PRISM + "show(tc.form_find(6, B, S, solve_for=3))"),
    ("solve_for a flat list", _PRISM + "show(tc.form_find(6, B, S, solve_for=[0, 1, 2]))"),
    ("solve_for an empty group", _PRISM + "show(tc.form_find(6, B, S, solve_for=[[], [0]]))"),
    ("solve_for overlapping groups", _PRISM +
     "show(tc.form_find(6, B, S, solve_for=[range(4), range(3, 9)]))"),
    ("solve_for with fixed nodes", _PRISM +
     "show(tc.form_find(6, B, S, solve_for=G, fixed={0: (0, 0, 0)}))"),
    # fixed nodes
    ("fixed node with two coordinates", _PRISM +
     "show(tc.form_find(6, B, S, fixed={0: (1, 0), 1: (0, 1, 0), 2: (-1, 0, 0)}))"),
    ("fixed node NaN", _PRISM +
     "show(tc.form_find(6, B, S, fixed={0: (1, 0, float('nan'))}))"),
    ("fixed node index 9", _PRISM + "show(tc.form_find(6, B, S, fixed={9: (0, 0, 0)}))"),
    ("fixed node index 1.0", _PRISM + "show(tc.form_find(6, B, S, fixed={1.0: (0, 0, 0)}))"),
    ("fixed as a list", _PRISM + "show(tc.form_find(6, B, S, fixed=[(0, 0, 0)]))"),
    ("fixed nodes all at one point", "print(tc.form_find(3, [], [(0, 1), (1, 2)], "
     "fixed={0: (1, 1, 1), 2: (1, 1, 1)}))"),
    ("fixed: free nodes coincide",
     "s = [(3, 0), (3, 1), (3, 2), (4, 0), (4, 1), (4, 2), (3, 4)]\n"
     "print(tc.form_find(5, [], s, fixed={0: (0, 0, 0), 1: (1, 0, 0), 2: (0, 1, 0)}))"),
    ("fixed: a part with no fixed node", "print(tc.form_find(5, [], [(0, 1), (0, 2), (3, 4)], "
     "fixed={0: (0, 0, 0), 1: (1, 0, 0)}))"),
    ("fixed: prism top held by its base", _PRISM +
     "print(tc.form_find(6, B, S, fixed={k: (np.cos(2 * np.pi * k / 3), "
     "np.sin(2 * np.pi * k / 3), 0) for k in range(3)}))"),
    # n_nodes
    ("n_nodes -6", _PRISM + "show(tc.form_find(-6, B, S, solve_for=G))"),
    ("n_nodes 6.0", _PRISM + "show(tc.form_find(6.0, B, S, solve_for=G))"),
    ("n_nodes True", _PRISM + "show(tc.form_find(True, B, S, solve_for=G))"),
    # size: memory grows with the members (sparse)
    ("60,000-node prism (30,000 bars)",
     "n = 30000\nb = [(k, n + k) for k in range(n)]\n"
     "s = ([(k, (k + 1) % n) for k in range(n)] + [(n + k, n + (k + 1) % n) for k in range(n)]"
     " + [(k, n + (k - 1) % n) for k in range(n)])\n"
     "print(tc.form_find(2 * n, b, s, solve_for=[range(n), range(n, 3 * n)]))"),
    ("60,025-node cable net on a saddle (fixed edge)",
     "m = 245\nidx = np.arange(m * m).reshape(m, m)\n"
     "s = list(zip(idx[:, :-1].ravel().tolist(), idx[:, 1:].ravel().tolist()))\n"
     "s += list(zip(idx[:-1].ravel().tolist(), idx[1:].ravel().tolist()))\n"
     "u = np.linspace(-1, 1, m)\n"
     "edge = np.unique(np.concatenate([idx[0], idx[-1], idx[:, 0], idx[:, -1]])).tolist()\n"
     "fx = {k: (u[k // m], u[k % m], u[k // m] ** 2 - u[k % m] ** 2) for k in edge}\n"
     "print(tc.form_find(m * m, [], s, fixed=fx))"),
    # the frame
    ("frame: prism on its first ring", _PRISM +
     "f = tc.form_find(6, B, S, solve_for=G)\n"
     "print('z of nodes 0-2:', np.round(f.nodes[:3, 2], 12).tolist(), 'node 0:', "
     "np.round(f.nodes[0], 12).tolist())"),
    ("with_base on a string triangle", "s = tc.catalog.icosahedron().with_base([0, 6, 11])\n"
     "print('base z', s.nodes[[0, 6, 11], 2].tolist(), 'lowest other', "
     "round(float(np.delete(s.nodes[:, 2], [0, 6, 11]).min()), 6))"),
    ("with_base through the middle", "tc.catalog.icosahedron().with_base([0, 1, 2])"),
    ("with_scale -1", "tc.catalog.icosahedron().with_scale(-1)"),
]
