"""Reliability cases of the model layer: describing and loading a structure (issue 13).

Each case prints what it got, or ends with the exception it raised (see benchmarks/reliability.py).
"""

_TBAR = "d = tc.structure_to_dict(tc.catalog.tbar())\n"
_LOAD = ("import json\n"
         "def load(text):\n"
         "    p = TMP / 's.json'\n"
         "    p.write_text(text)\n"
         "    return tc.load_structure(p)\n")
_SIM = ("s = tc.structure_from_dict(d)\n"
        "print(tc.simulate(s, 0.1))\n")

CASES = [
    # numbers beyond Python's or the floats' limits
    ("400-digit integer as a bar radius", _TBAR + _LOAD +
     "t = json.dumps(d).replace('\"radius\": 0.05', '\"radius\": 1' + '0' * 399, 1)\nload(t)"),
    ("400-digit integer as a coordinate", _TBAR + "d['nodes'][1][0] = 10**399\n" + _SIM),
    ("400-digit integer as gravity", _TBAR + "d['gravity'] = [0, 0, -10**399]\n" + _SIM),
    ("5000-digit integer as a point mass", _TBAR + _LOAD +
     "d['point_masses'] = [{'node': 2, 'mass': 1}]\n"
     "t = json.dumps(d).replace('\"mass\": 1}', '\"mass\": 1' + '0' * 4999 + '}')\nload(t)"),
    ("1e400 in a file as a density", _TBAR + _LOAD +
     "load(json.dumps(d).replace('\"density\": 500.0', '\"density\": 1e400', 1))"),
    # strict types
    ("'0.05' as a bar radius", _TBAR + "d['bars'][0]['radius'] = '0.05'\n" + _SIM),
    ("'1.0' as a coordinate", _TBAR + "d['nodes'][2][0] = '1.0'\n" + _SIM),
    ("true as a coordinate", _TBAR + "d['nodes'][2][1] = True\n" + _SIM),
    ("node indices ['0', '2']", _TBAR + "d['bars'][0]['nodes'] = ['0', '2']\n" + _SIM),
    ("node indices '02'", _TBAR + "d['bars'][0]['nodes'] = '02'\n" + _SIM),
    ("node indices [false, true]", _TBAR + "d['strings'][0]['nodes'] = [False, True]\n" + _SIM),
    ("fixed node true", _TBAR + "d['fixed'][0]['node'] = True\n" + _SIM),
    ("point mass node false", _TBAR + "d['point_masses'] = [{'node': False, 'mass': 1.0}]\n"
     + _SIM),
    ("complex stiffness", _TBAR + "d['strings'][0] = {'nodes': [0, 1], 'stiffness': 1+2j}\n"
     + _SIM),
    ("complex coordinates", "s = tc.Structure(nodes=np.array(tc.catalog.tbar().nodes, "
     "dtype=complex) + 1j, bars=tc.catalog.tbar().bars, strings=tc.catalog.tbar().strings)"),
    ("actuated 'no'", _TBAR + "d['strings'][0]['actuated'] = 'no'\n" + _SIM),
    ("name not a string", _TBAR + "d['name'] = ['a', 'b']\n" + _SIM),
    # JSON reading
    ("duplicate key hides a negative radius", _TBAR + _LOAD +
     "load(json.dumps(d).replace('\"radius\": 0.05', '\"radius\": -1, \"radius\": 0.05', 1))"),
    ("duplicate top-level key", _TBAR + _LOAD +
     "t = json.dumps(d)\nload(t[:-1] + ', \"name\": \"again\"}')"),
    ("'[' nested 100,000 deep", _LOAD + "load('[' * 100000 + ']' * 100000)"),
    ("nodes nested 2000 deep", _TBAR + _LOAD +
     "t = json.dumps(d)\nload(t.replace('\"nodes\": [[', '\"nodes\": ' + '[' * 2000, 1)"
     ".replace(']], \"fixed\"', ']' * 2000 + ', \"fixed\"', 1))"),
    ("nodes nested 500 deep (a dict)", _TBAR + "x = 1.0\nfor _ in range(500):\n    x = [x]\n"
     "d['nodes'][0] = x\n" + _SIM),
    ("a FIFO", "import os, threading\np = TMP / 'fifo'\nos.mkfifo(p)\ntc.load_structure(p)"),
    ("/dev/zero", "tc.load_structure('/dev/zero')"),
    ("a 300 MB file", "p = TMP / 'big.json'\n"
     "with open(p, 'wb') as f:\n    f.truncate(300 * 2**20)\ntc.load_structure(p)"),
    # derived quantities out of range
    ("rest_fraction 1e-320", _TBAR + "d['strings'][1]['rest_fraction'] = 1e-320\n" + _SIM),
    ("string E=1e308 radius 1 (stiffness inf)", _TBAR +
     "d['strings'][0]['youngs_modulus'] = 1e308\nd['strings'][0]['radius'] = 1.0\n" + _SIM),
    ("bar E=1e308 radius 1 (stiffness inf)", _TBAR +
     "d['bars'][0]['youngs_modulus'] = 1e308\nd['bars'][0]['radius'] = 1.0\n" + _SIM),
    ("bar density 1e308 (mass inf)", _TBAR + "d['bars'][1]['density'] = 1e308\n" + _SIM),
    ("bar radius 1e-160", _TBAR + "d['bars'][0]['radius'] = 1e-160\n" + _SIM),
    ("coordinates times 1e160", _TBAR +
     "d['nodes'] = (np.array(d['nodes']) * 1e160).tolist()\n" + _SIM),
    ("point mass 1e-300 kg", _TBAR + "d['point_masses'] = [{'node': 2, 'mass': 1e-300}]\n"
     + _SIM),
    # the rank test of the bar constraints
    ("bar of 10 pm (node 2 1e-11 m from node 0)", _TBAR +
     "d['nodes'][2] = [1e-11, 0.0, 0.0]\n" + _SIM),
    ("bar of 1 um in a 5 m T-bar", _TBAR +
     "d['nodes'][2] = [1e-6, 0.0, 0.0]\n" + _SIM),
    ("5 mm T-bar (scaled by 1e-3) keeps both bars", _TBAR +
     "import warnings\nwarnings.simplefilter('error')\n"
     "d['nodes'] = (np.array(d['nodes']) * 1e-3).tolist()\n"
     "s = tc.structure_from_dict(d)\nfrom tenscontrol.mechanics.rigid.model import rigid_model\n"
     "print('dropped bars:', rigid_model(s).dropped_bars)"),
    ("redundant bar (both ends fixed) still dropped", _TBAR +
     "d['bars'].append({'nodes': [0, 1], 'density': 500, 'radius': 0.05})\n"
     "s = tc.structure_from_dict(d)\nfrom tenscontrol.mechanics.rigid.model import rigid_model\n"
     "import warnings\nwith warnings.catch_warnings(record=True):\n"
     "    warnings.simplefilter('always')\n"
     "    print('dropped bars:', rigid_model(s).dropped_bars)"),
    # linear-time validation
    ("100k-node JSON: load and validate", "import subprocess, sys, time\n"
     "sys.path.insert(0, 'benchmarks')\nimport bench_load, json\n"
     "p = TMP / 't.json'\np.write_text(json.dumps(bench_load.tower_dict(25000), indent=1))\n"
     "t = time.perf_counter()\ns = tc.load_structure(p)\n"
     "print(f'{s.n_nodes} nodes, {s.n_bars + s.n_strings} members, "
     "{p.stat().st_size / 1e6:.0f} MB: {time.perf_counter() - t:.2f} s')"),
]

CASES += [
    ("include_radius='no' to the rigid model", "from tenscontrol.mechanics.rigid.model import "
     "rigid_model\nrigid_model(tc.catalog.tbar(), include_radius='no')"),
    ("a valid file still loads and simulates", _TBAR + _LOAD +
     "s = load(json.dumps(d))\nprint(tc.simulate(s, 0.1))"),
]
