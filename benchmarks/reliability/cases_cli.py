"""Reliability cases of the ``tenscontrol`` command (issue 13, "Data loss in the CLI", and the
CLI side of the unclear errors): each runs the command as a shell user would, in a subprocess
of ``python -m tenscontrol``, and prints its exit status, how many stderr lines it printed and
the last one, and what happened to the files.
"""

# Shared by every case: `cli(*args)` runs the command in TMP; S is the T-bar as JSON.
_SETUP = '''
import json, os, signal, subprocess, time
S = TMP / "s.json"
tc.save_structure(tc.catalog.tbar("stedy", damping=1.0), S)

def cli(*args, **kw):
    p = subprocess.run([sys.executable, "-m", "tenscontrol", *map(str, args)], cwd=TMP,
                       capture_output=True, text=True, **kw)
    err = p.stderr.strip().splitlines() or ["(no stderr)"]
    return p.returncode, err

def said(rc, err):
    tb = " TRACEBACK" if any("Traceback" in line for line in err) else ""
    return f"exit {rc}, {len(err)} line(s){tb}: {err[-1]}"

def files():
    return sorted(p.name for p in TMP.iterdir())

def samples(path):
    with np.load(path) as data:
        return f"{path.name}: {len(data['t'])} samples, t = {data['t'][0]:g}..{data['t'][-1]:.6g} s"

def doc(**changes):
    data = json.loads(S.read_text())
    for key, value in changes.items():
        data[key] = value
    return data
'''

_INJECTED_FAILURE = '''
import contextlib, io
from tenscontrol import cli as C
real = C.simulate
def failing(structure, t_final, **kw):  # a run that fails 0.2 s in, as a SimulationError does
    traj = real(structure, 0.2, **kw)
    raise tc.SimulationError(0.2, "the step size fell below 1e-14 s (try a larger rtol)", traj)
C.simulate = failing
err = io.StringIO()
with contextlib.redirect_stderr(err):
    rc = C.main(["simulate", str(S), "--t-final", "1", "--out", str(TMP / "o.npz")])
print(said(rc, err.getvalue().strip().splitlines()), "|", files(), "|",
      samples(TMP / "o.partial.npz"))
'''

_CTRL_C = '''
outcomes, reached = [], []
G = TMP / "g.json"  # the undamped T-bar under gravity keeps swinging: small steps to the end
G.write_text(json.dumps(doc(gravity=[0.0, 0.0, -9.81], strings=[
    dict(member, damping=0.0) for member in doc()["strings"]])))
for delay in (0.0, 0.1, 0.3, 0.6, 1.0, 1.5):  # after the progress bar shows the run has begun
    for name in files():
        if name not in ("s.json", "g.json"):
            (TMP / name).unlink()
    p = subprocess.Popen([sys.executable, "-m", "tenscontrol", "simulate", str(G), "--t-final",
                          "2000", "--dt-out", "0.01", "--progress", "--out", str(TMP / "o.npz")],
                         cwd=TMP, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    first = p.stderr.read(1)  # blocks until the progress bar starts
    time.sleep(delay)
    p.send_signal(signal.SIGINT)
    rest = p.communicate(timeout=60)[1]
    err = [line for line in (first + rest).splitlines() if not line.startswith("\\r")]
    err = [line.split("\\r")[-1] for line in err if line.split("\\r")[-1].strip()]
    said_lines = [line for line in err if line.startswith("tenscontrol:")]
    partial = TMP / "o.partial.npz"
    ok = (p.returncode == 130 and len(said_lines) == 1 and partial.exists()
          and "o.npz" not in files() and not any(n.endswith(".part") for n in files())
          and not any("Traceback" in line for line in err))
    if partial.exists():
        with np.load(partial) as data:  # every array as long as t, t increasing
            ok = ok and len({len(data[key]) for key in data.files}) == 1
            ok = ok and bool(np.all(np.diff(data["t"]) > 0))
            reached.append(f"{data['t'][-1]:.4g}")
    else:
        reached.append(f"(none: {err[-1:]})")
    outcomes.append(ok)
    last = said(p.returncode, said_lines or ["(nothing)"])
print(f"{sum(outcomes)}/{len(outcomes)} runs: exit 130, one line, a consistent partial, no o.npz;",
      f"stopped at t = {', '.join(reached)} of 2000 s (200,001 output points); last: {last}")
'''

CASES = [
    ("--out is the structure file",
     _SETUP + 'rc, err = cli("simulate", "s.json", "--t-final", "1", "--out", "s.json")\n'
              'tc.load_structure(S)\n'
              'print(said(rc, err), "| s.json still loads |", files())'),
    ("--out is a hard link to the structure file",
     _SETUP + 'os.link(S, TMP / "o.npz")\n'
              'rc, err = cli("simulate", S, "--t-final", "1", "--out", TMP / "o.npz")\n'
              'tc.load_structure(S)\n'
              'print(said(rc, err), "| s.json still loads")'),
    ("--t-final 1 --dt-out 2.5 (final state)",
     _SETUP + 'rc, err = cli("simulate", S, "--t-final", "1", "--dt-out", "2.5", "--out", "o.npz")\n'
              'print(f"exit {rc} |", samples(TMP / "o.npz"))'),
    ("--t-final 1 --dt-out 0.3 (final state)",
     _SETUP + 'rc, err = cli("simulate", S, "--t-final", "1", "--dt-out", "0.3", "--out", "o.npz")\n'
              'with np.load(TMP / "o.npz") as d:\n'
              '    print(f"exit {rc} | t =", np.round(d["t"], 12).tolist())'),
    ("--dt-out 1e-12 (output size)",
     _SETUP + 'rc, err = cli("simulate", S, "--t-final", "1", "--dt-out", "1e-12", "--out", "o.npz")\n'
              'print(said(rc, err), "|", files())'),
    ("--dt-out 1e-7 (output size)",
     _SETUP + 'rc, err = cli("simulate", S, "--t-final", "1", "--dt-out", "1e-7", "--out", "o.npz")\n'
              'print(said(rc, err), "|", files())'),
    ("--t-final 1e300 --dt-out 1e-300 (output size)",
     _SETUP + 'rc, err = cli("simulate", S, "--t-final", "1e300", "--dt-out", "1e-300", '
              '"--out", "o.npz")\nprint(said(rc, err))'),
    ("--out in a missing folder (100 s run)",
     _SETUP + 'rc, err = cli("simulate", S, "--t-final", "100", "--out", "nodir/o.npz")\n'
              'print(said(rc, err), "|", files())'),
    ("--out in an unwritable folder (/proc, as root too)",
     _SETUP + 'rc, err = cli("simulate", S, "--t-final", "100", "--out", "/proc/o.npz")\n'
              'print(said(rc, err))'),
    ("--out is a directory",
     _SETUP + 'rc, err = cli("simulate", S, "--t-final", "100", "--out", TMP)\nprint(said(rc, err))'),
    ("--out /dev/null (not a regular file)",
     _SETUP + 'rc, err = cli("simulate", S, "--t-final", "1", "--out", "/dev/null")\n'
              'print(said(rc, err), "| /dev/null is a char device:",\n'
              '      __import__("stat").S_ISCHR(os.stat("/dev/null").st_mode))'),
    ("a failed simulation saves the partial (injected)", _SETUP + _INJECTED_FAILURE),
    ("Ctrl-C (SIGINT) during 200k --dt-out points, 6 runs", _SETUP + _CTRL_C),
    ("usage: no command",
     _SETUP + 'print(said(*cli()))'),
    ("usage: simulate without --t-final and --out",
     _SETUP + 'print(said(*cli("simulate", S)))'),
    ("usage: --bars sideways",
     _SETUP + 'print(said(*cli("simulate", S, "--t-final", "1", "--out", "o.npz", "--bars", '
              '"sideways")))'),
    ("usage: an unknown option",
     _SETUP + 'print(said(*cli("simulate", S, "--t-final", "1", "--out", "o.npz", "--fast")))'),
    ("usage: demo with a stray argument",
     _SETUP + 'print(said(*cli("demo", "now")))'),
    ("--help stays as it is",
     _SETUP + 'p = subprocess.run([sys.executable, "-m", "tenscontrol", "simulate", "--help"], '
              'capture_output=True, text=True)\n'
              'print(f"exit {p.returncode}, {len(p.stdout.splitlines())} lines of help on stdout")'),
    ("bad numbers: nan -1 inf 1e400 0 1e-400 x, 4 options",
     _SETUP + 'bad = []\n'
              'for opt in ("--t-final", "--rtol", "--atol", "--dt-out"):\n'
              '    for v in ("nan", "-1", "inf", "1e400", "0", "1e-400", "x"):\n'
              '        argv = ["simulate", S, "--t-final", "1", "--out", "o.npz", f"{opt}={v}"]\n'
              '        rc, err = cli(*argv)\n'
              '        if not (rc == 2 and len(err) == 1 and f"argument {opt}:" in err[0]):\n'
              '            bad.append((opt, v, rc, err[-1]))\n'
              '        last = said(rc, err)\n'
              'print(f"{28 - len(bad)}/28 one line, exit 2, naming the option; {bad[:2]}; e.g.", last)'),
    ("a missing structure file",
     _SETUP + 'print(said(*cli("simulate", "nope.json", "--t-final", "1", "--out", "o.npz")))'),
    ("a directory as the structure",
     _SETUP + 'print(said(*cli("simulate", TMP, "--t-final", "1", "--out", "o.npz")))'),
    ("a binary (non-JSON) structure file",
     _SETUP + '(TMP / "b.json").write_bytes(bytes(range(256)) * 4)\n'
              'print(said(*cli("simulate", "b.json", "--t-final", "1", "--out", "o.npz")))'),
    ("an npz given as the structure",
     _SETUP + 'cli("simulate", S, "--t-final", "0.1", "--out", "o.npz")\n'
              'print(said(*cli("simulate", "o.npz", "--t-final", "1", "--out", "p.npz")))'),
    ("a 400-digit integer radius, via the CLI",
     _SETUP + 'd = doc(); d["bars"][0]["radius"] = 10**400\n'
              '(TMP / "big.json").write_text(json.dumps(d))\n'
              'print(said(*cli("simulate", "big.json", "--t-final", "1", "--out", "o.npz")))'),
    ("JSON nested 100,000 deep, via the CLI",
     _SETUP + '(TMP / "deep.json").write_text("[" * 100_000 + "]" * 100_000)\n'
              'print(said(*cli("simulate", "deep.json", "--t-final", "1", "--out", "o.npz")))'),
    ("bar E = 1e308 (stiffness inf), via the CLI",
     _SETUP + 'd = doc(); d["bars"][0]["youngs_modulus"] = 1e308; d["bars"][0]["radius"] = 1.0\n'
              '(TMP / "e.json").write_text(json.dumps(d))\n'
              'print(said(*cli("simulate", "e.json", "--t-final", "1", "--bars", "compressible", '
              '"--out", "o.npz")), "|", files())'),
]
