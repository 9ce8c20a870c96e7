"""Every writer of the library and the ``tenscontrol`` command on a full disk (issue 21).

    python benchmarks/disk_full.py              # every writer
    python benchmarks/disk_full.py save_mat cli-linearize-mat

For each writer: one run without a limit gives the output's size S; then two runs in a child
process whose file size limit is S/2 bytes (RLIMIT_FSIZE, what ``ulimit -f`` sets, in bytes
instead of 1024-byte blocks so that small outputs are cut too; Python ignores SIGXFSZ, so a
write past the limit fails with EFBIG like a write to a full disk): one where the target
already holds an old file, one where it does not. A writer passes when the old file is kept
byte for byte, no new file appears, and no ``.part`` file is left in the folder. One line per
writer: what the run said (exception or exit status and the last stderr line) and the check.
"""

from __future__ import annotations

import argparse
import pathlib
import resource
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
SETUP = '''
import pathlib, sys
import numpy as np
import tenscontrol as tc
from tenscontrol.model import catalog
IN = pathlib.Path(sys.argv[1])
OUT = pathlib.Path(sys.argv[2])
'''
# inputs made once (without a limit) in the inputs folder
PREPARE = SETUP + '''
s = tc.equilibrium(catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
tc.save_structure(s, IN / "tbar.json")
tc.simulate(s, 0.5).save(IN / "traj.npz")
tc.save_controller(tc.lqr(tc.linearize(s, kind="passive"), effort=1e-2).controller, IN / "k.npz")
'''
PY = "python"
# name -> ("python", code writing OUT) or ("cli", [arguments], suffix of OUT)
WRITERS = {
    "Trajectory.save": (PY, 'tc.load_trajectory(IN / "traj.npz").save(OUT)', ".npz"),
    "save_structure": (PY, 'tc.save_structure(catalog.ball(), OUT)', ".json"),
    "save_controller": (PY, 'tc.save_controller(tc.load_controller(IN / "k.npz"), OUT)', ".npz"),
    "save_mat (model)": (PY, 'tc.save_mat(tc.linearize(tc.load_structure(IN / "tbar.json")), '
                             'OUT)', ".mat"),
    "save_mat (controller)": (PY, 'tc.save_mat(tc.load_controller(IN / "k.npz"), OUT)', ".mat"),
    "to_mjcf": (PY, 'tc.to_mjcf(catalog.ball(), OUT)', ".xml"),
    "plotting.save_figure": (PY, 'from tenscontrol import plotting\n'
                                 'plotting.save_figure(plotting.plot_node_paths('
                                 'tc.load_trajectory(IN / "traj.npz")), OUT)', ".png"),
    "plotting.save_animation": (PY, 'from tenscontrol import plotting\n'
                                    'plotting.save_animation(plotting.animate(tc.load_trajectory('
                                    'IN / "traj.npz"), max_frames=10), OUT)', ".gif"),
    "cli catalog": ("cli", ["catalog", "ball", "--out", "{OUT}"], ".json"),
    "cli equilibrium": ("cli", ["equilibrium", "{IN}/tbar.json", "--gamma-min", "10", "--out",
                                "{OUT}"], ".json"),
    "cli linearize (.npz)": ("cli", ["linearize", "{IN}/tbar.json", "--out", "{OUT}"], ".npz"),
    "cli linearize (.mat)": ("cli", ["linearize", "{IN}/tbar.json", "--out", "{OUT}"], ".mat"),
    "cli simulate": ("cli", ["simulate", "{IN}/tbar.json", "--t-final", "0.5", "--out",
                             "{OUT}"], ".npz"),
    "cli plot": ("cli", ["plot", "{IN}/traj.npz", "--out", "{OUT}"], ".png"),
    "cli animate": ("cli", ["animate", "{IN}/traj.npz", "--max-frames", "10", "--out", "{OUT}"],
                    ".gif"),
    "cli verify --plot": ("cli", ["verify", "{IN}/tbar.json", "--controller", "{IN}/k.npz",
                                  "--doublet", "2", "z", "--t-final", "0.5", "--plot", "{OUT}"],
                          ".png"),
}


def command(spec, inputs: pathlib.Path, out: pathlib.Path) -> list[str]:
    kind, what, _ = spec
    if kind == PY:
        return [sys.executable, "-c", SETUP + what, str(inputs), str(out)]
    return [sys.executable, "-m", "tenscontrol",
            *(a.format(IN=inputs, OUT=out) for a in what)]


def run(argv: list[str], limit: int | None) -> subprocess.CompletedProcess:
    def cap():  # in the child only: the file size limit of `ulimit -f`, in bytes
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          preexec_fn=cap if limit is not None else None, timeout=600)


def said(p: subprocess.CompletedProcess) -> str:
    lines = [line.strip() for line in p.stderr.splitlines() if line.strip()]
    return f"exit {p.returncode}: {lines[-1] if lines else '(no stderr)'}"


def outputs(folder: pathlib.Path, extra=()) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in extra)


def check(name: str, spec, inputs: pathlib.Path) -> str:
    suffix = spec[2]
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp)
        out = folder / f"out{suffix}"
        full = run(command(spec, inputs, out), None)
        if full.returncode != 0 or not out.exists():
            return f"{name:<24} without a limit it fails: {said(full)}"
        size = out.stat().st_size
        extra = outputs(folder, {out.name})  # e.g. plot's -violations file
        for p in folder.iterdir():
            p.unlink()
        limit = size // 2
        old = b"OLD FILE, must survive\n"
        out.write_bytes(old)
        kept = run(command(spec, inputs, out), limit)
        old_ok = out.read_bytes() == old and outputs(folder) == [out.name]
        left_old = outputs(folder)
        out.unlink()
        fresh = run(command(spec, inputs, out), limit)
        fresh_ok = outputs(folder) == []
        verdict = "OK" if old_ok and fresh_ok and kept.returncode and fresh.returncode else "FAIL"
        files = "" if verdict == "OK" else f" files: {left_old} / {outputs(folder)}"
        return (f"{name:<24} {size:>8} {limit:>8}  {verdict:<4} {said(fresh)[:150]}"
                f"{files}{'  (also ' + ', '.join(extra) + ')' if extra else ''}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("writers", nargs="*", help="names (spaces as dashes, lower case)")
    args = ap.parse_args(argv)
    wanted = {w.lower() for w in args.writers}
    with tempfile.TemporaryDirectory() as tmp:
        inputs = pathlib.Path(tmp)
        subprocess.run([sys.executable, "-c", PREPARE, str(inputs), ""], check=True)
        print(f"{'writer':<24} {'S [B]':>8} {'limit':>8}  {'check':<4} what the run said "
              "(no old file)")
        for name, spec in WRITERS.items():
            key = name.lower().replace(" ", "-").replace("(", "").replace(")", "")
            if wanted and key not in wanted:
                continue
            print(check(name, spec, inputs)[:400], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
