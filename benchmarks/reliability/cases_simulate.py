"""Reliability cases of simulate() and the integrators (issue 13): wrong option types, runs
that never ended, numerical failures inside the step loop, Ctrl-C, a read-only install.

Each prints what it got on its last line, or ends with the exception it raised; see
benchmarks/reliability.py for the format.
"""

_TBAR = "s = tc.catalog.tbar('stedy')\n"

_EXPECT = """
def expect(f):
    try:
        f()
        print("accepted (no error)")
    except tc.SimulationError as e:
        tr = e.trajectory
        print(f"SimulationError at t = {e.time:.3g} s, partial trajectory of {len(tr.t)} samples "
              f"up to {tr.t[-1]:.3g} s: {e.cause[:230]}")
"""

_LIGHT_NODE = """
s = tc.Structure(nodes=[[0, 0, 0], [1, 0, 0], [1, 0.5, 0], [0, 0.5, 0]],
    bars=[tc.Bar((0, 1), radius=0.01, material="steel")],
    strings=[tc.String((1, 2), "spring", stiffness=1e8, rest_length=0.45),
             tc.String((2, 3), "spring", stiffness=1e8, rest_length=0.95),
             tc.String((3, 1), "spring", stiffness=100.0, rest_length=1.0)],
    point_masses=[tc.PointMass(2, 1e-6)], fixed={0: "xyz", 3: "xyz"}, name="light-node")
"""

_INTERRUPT = """
import signal, subprocess, time, os
child = '''
import numpy as np, tenscontrol as tc
s = tc.catalog.tbar("stedy", damping=1.0, bar_material="hdpe")
tc.simulate(s, 0.01, bars="compressible")
print("ready", flush=True)
try:
    tc.simulate(s, 1000.0, bars="compressible", t_eval=np.linspace(0, 1000.0, 200_001),
                max_steps=10**8)
except tc.SimulationInterrupted as exc:
    tr = exc.trajectory
    n = len(tr.t)
    print(n, all(len(a) == n for a in (tr.nodes, tr.velocities, tr.energy, tr.work)))
'''
good = 0
for delay in (0.05, 0.2, 0.4, 0.7, 1.0):
    p = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    p.stdout.readline()
    time.sleep(delay)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    words = out.split()
    good += p.returncode == 0 and len(words) == 2 and words[1] == "True"
    if p.returncode:
        print("failed:", err.strip().splitlines()[-1])
print(f"{good} of 5 SIGINTs: SimulationInterrupted with a consistent partial trajectory")
"""

_READ_ONLY = """
import os, shutil, subprocess
site, home, tmp = TMP / "site", TMP / "home", TMP / "tmp"
shutil.copytree(pathlib.Path(tc.__file__).parent, site / "tenscontrol",
                ignore=shutil.ignore_patterns("__pycache__"))
subprocess.run(["chmod", "-R", "a-w", str(site)], check=True)
home.mkdir(); home.chmod(0o500); tmp.mkdir()
child = '''
import os
allowed = os.environ["TMPDIR"]
if os.getuid() == 0:  # root writes anywhere: numba sees only the temporary folder writable
    from numba.core import caching
    ensure = caching._CacheLocator.ensure_cache_path
    def only_temporary(self):
        if not self.get_cache_path().startswith(allowed):
            raise PermissionError("read-only (simulated)")
        ensure(self)
    caching._CacheLocator.ensure_cache_path = only_temporary
import tenscontrol as tc
from numba.core import config
print(tc.__file__, "cache:", config.CACHE_DIR, tc.simulate(tc.catalog.tbar(), 0.05))
'''
env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
env.update(PYTHONPATH=str(site), HOME=str(home), TMPDIR=str(tmp), XDG_CACHE_HOME=str(home))
run = subprocess.run([sys.executable, "-c", child], env=env, cwd=str(tmp), capture_output=True,
                     text=True)
print(run.stdout.strip() or run.stderr.strip().splitlines()[-1])
"""

_VERIFY = """
import dataclasses
s = tc.equilibrium(tc.catalog.tbar("stedy", damping=1.0), gamma_min=10).structure
c = tc.lqr(tc.linearize(s, kind="passive")).controller
bad = dataclasses.replace(c, K=-100 * c.K)   # positive feedback: destabilizing
expect(lambda: tc.verify(s, bad, tc.doublet(s, tc.Selection(2, "z"), 1.0, 0.1), 5.0))
"""

CASES = [
    ("t_final='1.0'", _TBAR + "tc.simulate(s, '1.0')"),
    ("t_final=None", _TBAR + "tc.simulate(s, None)"),
    ("t_final an array", _TBAR + "tc.simulate(s, np.array([1.0, 2.0]))"),
    ("rtol='1e-6'", _TBAR + "tc.simulate(s, 1.0, rtol='1e-6')"),
    ("atol a list", _TBAR + "tc.simulate(s, 1.0, atol=[1e-8, 1e-8])"),
    ("t_eval=['a']", _TBAR + "tc.simulate(s, 1.0, t_eval=['a'])"),
    ("max_step='0.1'", _TBAR + "tc.simulate(s, 1.0, max_step='0.1')"),
    ("correction_tol=-1", _TBAR + "tc.simulate(s, 1.0, correction_tol=-1)"),
    ("correction_tol=NaN", _TBAR + "tc.simulate(s, 1.0, correction_tol=float('nan'))"),
    ("max_correction_iterations=0", _TBAR + "tc.simulate(s, 1.0, max_correction_iterations=0)"),
    ("max_correction_iterations=2.5",
     _TBAR + "tc.simulate(s, 1.0, max_correction_iterations=2.5)"),
    ("include_radius='no'", _TBAR + "tc.simulate(s, 1.0, include_radius='no')"),
    ("progress='yes'", _TBAR + "tc.simulate(s, 1.0, progress='yes')"),
    ("complex loads array", _TBAR + "tc.simulate(s, 1.0, loads=np.ones((4, 3)) * (1 + 1j))"),
    ("loads callable returning complex",
     _TBAR + "tc.simulate(s, 1.0, loads=lambda t, q, qd: np.ones((4, 3)) * 1j)"),
    ("loads callable returning shape (3, 4)",
     _TBAR + "tc.simulate(s, 1.0, loads=lambda t, q, qd: np.zeros((3, 4)))"),
    ("loads callable returning NaN",
     _TBAR + "tc.simulate(s, 1.0, loads=lambda t, q, qd: np.full((4, 3), np.nan))"),
    ("verify(t_final='1.0')", _TBAR + "tc.verify(s, None, None, '1.0')"),
    ("compare_materials(t_final='10')", _TBAR + "tc.compare_materials(s, t_final='10')"),
    ("compare_closed_loop(t_eval=['a'])", _TBAR + "tc.compare_closed_loop(s, t_eval=['a'])"),
    ("force of 1e300 N after 0.1 s", _EXPECT + _TBAR + """
def f(t, q, qd):
    out = np.zeros((4, 3)); out[2, 0] = 1e300 if t > 0.1 else 0.0; return out
expect(lambda: tc.simulate(s, 1.0, loads=f))"""),
    ("1e-6 kg node on 1e8 N/m springs", _EXPECT + _LIGHT_NODE
     + "expect(lambda: tc.simulate(s, 1.0))"),
    ("damping 1e12 N s/m", _EXPECT
     + "expect(lambda: tc.simulate(tc.catalog.tbar('stedy', damping=1e12), 1.0))"),
    ("force growing as exp(50 t)", _EXPECT + _TBAR + """
def f(t, q, qd):
    out = np.zeros((4, 3)); out[2, 0] = np.exp(50 * t); return out
expect(lambda: tc.simulate(s, 1.0, loads=f))"""),
    ("destabilizing controller in verify", _EXPECT + _VERIFY),
    ("Ctrl-C in a compressible run with 200k t_eval points", _INTERRUPT),
    ("read-only package, HOME not writable", _READ_ONLY),
]
