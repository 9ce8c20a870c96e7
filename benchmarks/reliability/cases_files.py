"""Reliability cases of files in and out (issue 21: "Study files", "Saved trajectories and
controllers", "Exports", "CLI outputs", "Edits"): each prints what the reader or writer gave
(the exception's type and message, or the exit status and stderr line of the command) and,
for the writers, which files are left in the folder afterwards.
"""

# Shared by every case: `got(f)` runs f and prints its outcome on one line; the T-bar, one of
# its trajectories and an LQR controller saved in TMP; `cli(...)` runs the command.
_SETUP = '''
import json, os, resource, signal, subprocess, time, zipfile
from tenscontrol.model import catalog
S = catalog.tbar("stedy", damping=1.0)

def got(f):
    try:
        value = f()
    except BaseException as exc:
        return f"{type(exc).__name__}: {' '.join(str(exc).replace(str(TMP), 'TMP').split())}"
    return f"returned {type(value).__name__}"

def files():
    return sorted(p.name for p in TMP.iterdir() if p.name not in INPUTS)

def cli(*args, limit=None):
    cap = (lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))) if limit else None
    p = subprocess.run([sys.executable, "-m", "tenscontrol", *map(str, args)], cwd=TMP,
                       capture_output=True, text=True, preexec_fn=cap, stdin=subprocess.DEVNULL,
                       timeout=300)
    err = p.stderr.strip().splitlines() or ["(no stderr)"]
    return f"exit {p.returncode}: {err[-1].replace(str(TMP), 'TMP')}"

def entries(path):
    with np.load(path) as data:
        return {k: data[k] for k in data.files}

def npz(name, arrays):
    with open(TMP / name, "wb") as f:
        np.savez(f, **arrays)
    return TMP / name

INPUTS = {"s.json", "t.npz", "k.npz"}
tc.save_structure(S, TMP / "s.json")
'''
_SAVED = _SETUP + '''
TRAJ = tc.simulate(S, 0.05)
TRAJ.save(TMP / "t.npz")
K = tc.lqr(tc.linearize(tc.equilibrium(S, gamma_min=10.0).structure), effort=1e-2).controller
tc.save_controller(K, TMP / "k.npz")
'''


def _fifo(reader: str) -> str:
    return _SETUP + f'''
os.mkfifo(TMP / "fifo.json")
print({reader})
'''


def _study(data: str, name: str) -> str:
    """A study file `name` holding the bytes the expression `data` makes."""
    return _SETUP + f'''
(TMP / "{name}").write_bytes({data})
print(got(lambda: tc.run_study_file(TMP / "{name}", progress=False)))
'''


def _broken_trajectory(change: str) -> str:
    return _SAVED + f'''
e = entries(TMP / "t.npz")
{change}
path = npz("broken.npz", e)
print(got(lambda: tc.load_trajectory(path)), "|", cli("plot", path, "--out", "p.png"))
'''


def _broken_controller(change: str) -> str:
    return _SAVED + f'''
e = entries(TMP / "k.npz")
{change}
path = npz("broken.npz", e)
print(got(lambda: tc.load_controller(path)))
'''


def _cut(name: str, size: str, loader: str) -> str:
    return _SAVED + f'''
data = (TMP / "{name}").read_bytes()
(TMP / "cut.npz").write_bytes(data[:{size}])
print(got(lambda: {loader}(TMP / "cut.npz")), "|",
      cli("plot", "cut.npz", "--out", "p.png") if "{name}" == "t.npz" else
      cli("verify", "s.json", "--controller", "cut.npz", "--doublet", "2", "z"))
'''


def _full(call: str) -> str:
    """`call` writing TMP/out.* with the file size limit at half its size (ulimit -f)."""
    return _SAVED + f'''
def write():
    return {call}
write()
size = max(p.stat().st_size for p in TMP.iterdir() if p.name.startswith("out"))
for p in TMP.iterdir():
    if p.name.startswith("out"):
        p.unlink()
resource.setrlimit(resource.RLIMIT_FSIZE, (size // 2, resource.RLIM_INFINITY))
outcome = got(write)
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
print(outcome, "| left:", files())
'''


def _cli_full(*args: str) -> str:
    """The command writing --out with the file size limit at half its output's size."""
    quoted = ", ".join(repr(a) for a in args)
    return _SAVED + f'''
first = cli({quoted})
size = max(p.stat().st_size for p in TMP.iterdir() if p.name.startswith("out"))
for p in TMP.iterdir():
    if p.name.startswith("out"):
        p.unlink()
(TMP / "{args[-1]}").write_text("OLD")
said = cli({quoted}, limit=size // 2)
print(said, "| old file kept:", (TMP / "{args[-1]}").read_text() == "OLD", "| left:", files())
'''


_ANIMATE_CTRL_C = _SAVED + '''
long = tc.simulate(S, 20.0)
long.save(TMP / "long.npz")
INPUTS.add("long.npz")
p = subprocess.Popen([sys.executable, "-m", "tenscontrol", "animate", "long.npz", "--out",
                      "ball.gif", "--max-frames", "300"], cwd=TMP, stderr=subprocess.PIPE,
                     stdout=subprocess.DEVNULL, text=True)
start = time.time()
while not any(".part" in n for n in files()) and time.time() - start < 120:
    time.sleep(0.02)  # the part file appears when the movie starts being written
time.sleep(0.5)
p.send_signal(signal.SIGINT)
err = p.communicate(timeout=120)[1].strip().splitlines() or ["(no stderr)"]
print(f"exit {p.returncode}: {err[-1]} | left: {files()}")
'''

CASES = [
    # ---- study files
    ("run_study_file on a FIFO", _fifo('got(lambda: tc.run_study_file(TMP / "fifo.json"))')),
    ("tenscontrol sweep on a FIFO", _fifo('cli("sweep", "fifo.json")')),
    ("run_study_file on /dev/zero",
     _SETUP + 'os.symlink("/dev/zero", TMP / "zero.json")\n'
              'print(got(lambda: tc.run_study_file(TMP / "zero.json")))'),
    ("study file: 100k-deep JSON", _study('b"[" * 100_000 + b"]" * 100_000', "deep.json")),
    ("study file: 600-deep JSON", _study('b\'{"a": \' + b"[" * 600 + b"]" * 600 + b"}"', "d.json")),
    ("study file: 100k-deep TOML", _study('b"a = " + b"[" * 100_000 + b"]" * 100_000', "d.toml")),
    ("study file: non-UTF-8 JSON", _study('b\'{"pipeline": "\\xff"}\'', "bytes.json")),
    ("study file: non-UTF-8 TOML", _study('b\'pipeline = "\\xfe"\'', "bytes.toml")),
    ("study file: 2 MB", _study('b" " * 2_000_000 + b"{}"', "big.json")),
    # ---- saved trajectories and controllers
    ("trajectory: empty file", _cut("t.npz", "0", "tc.load_trajectory")),
    ("trajectory: cut in half", _cut("t.npz", "len(data) // 2", "tc.load_trajectory")),
    ("trajectory: last byte missing", _cut("t.npz", "-1", "tc.load_trajectory")),
    ("controller: empty file", _cut("k.npz", "0", "tc.load_controller")),
    ("controller: cut in half", _cut("k.npz", "len(data) // 2", "tc.load_controller")),
    ("trajectory: pickled object array",
     _broken_trajectory('e["energy"] = np.array([None, 1], dtype=object)')),
    ("trajectory: missing 'work'", _broken_trajectory('del e["work"]')),
    ("trajectory: nodes of the wrong shape", _broken_trajectory('e["nodes"] = np.zeros((2, 3))')),
    ("trajectory: nodes hold strings",
     _broken_trajectory('e["nodes"] = np.full(e["nodes"].shape, "x")')),
    ("trajectory: unknown bar model", _broken_trajectory(
        'st = json.loads(str(e["settings"])); st["bars"] = "elastic"\n'
        'e["settings"] = np.array(json.dumps(st))')),
    ("trajectory: settings a number", _broken_trajectory('e["settings"] = np.array(1.0)')),
    ("trajectory: stats a list", _broken_trajectory(
        'st = json.loads(str(e["settings"])); st["stats"] = [1]\n'
        'e["settings"] = np.array(json.dumps(st))')),
    ("controller: pickled object array",
     _broken_controller('e["K"] = np.array([None], dtype=object)')),
    ("controller: missing 'q_ref'", _broken_controller('del e["q_ref"]')),
    ("controller: header a number", _broken_controller('e["header"] = np.array(2.0)')),
    ("controller: K holds strings", _broken_controller('e["K"] = np.full(e["K"].shape, "x")')),
    ("controller: K of the wrong shape", _broken_controller('e["K"] = np.zeros((2, 3))')),
    ("controller: strings as floats", _broken_controller('e["strings"] = e["strings"] + 0.5')),
    # ---- exports
    ("save_mat to a missing folder",
     _SAVED + 'print(got(lambda: tc.save_mat(K, TMP / "no" / "k.mat")), "| left:", files())'),
    ("save_mat to an existing directory",
     _SAVED + 'print(got(lambda: tc.save_mat(K, TMP)), "| left:", files())'),
    ("save_mat to an unwritable place (/proc)",
     _SAVED + 'print(got(lambda: tc.save_mat(K, "/proc/k.mat")))'),
    ("save_mat, disk full (ulimit -f)", _full('tc.save_mat(K, TMP / "out.mat")')),
    ("to_mjcf, disk full (ulimit -f)", _full('tc.to_mjcf(catalog.ball(), TMP / "out.xml")')),
    ("save_controller, disk full (ulimit -f)", _full('tc.save_controller(K, TMP / "out.npz")')),
    ("Trajectory.save, disk full (ulimit -f)", _full('TRAJ.save(TMP / "out.npz")')),
    ("save_structure, disk full (ulimit -f)",
     _full('tc.save_structure(catalog.ball(), TMP / "out.json")')),
    # ---- CLI outputs
    ("cli catalog, disk full", _cli_full("catalog", "ball", "--out", "out.json")),
    ("cli equilibrium, disk full",
     _cli_full("equilibrium", "s.json", "--gamma-min", "10", "--out", "out.json")),
    ("cli linearize .npz, disk full", _cli_full("linearize", "s.json", "--out", "out.npz")),
    ("cli linearize .mat, disk full", _cli_full("linearize", "s.json", "--out", "out.mat")),
    ("cli animate, Ctrl-C while writing", _ANIMATE_CTRL_C),
    # ---- edits
    ("with_nodes with 3 rows for 4 nodes",
     _SETUP + 'print(got(lambda: S.with_nodes(np.zeros((3, 3)))))'),
    ("with_strings([0, 0], damping=[1, 2])",
     _SETUP + 'print(got(lambda: S.with_strings([0, 0], damping=[1, 2])))'),
]
