"""Two `tenscontrol sweep` processes on one study folder at the same time, repeated: is any case
lost, is any file corrupt?

Each trial writes a norms study of the T-bar (a grid of `--cases` cases, serial executor) to a
fresh folder and starts two `python -m tenscontrol sweep STUDY.json --quiet` processes on it at
once. Afterwards it checks every file of the folder: the manifest and each case file parse as
JSON and are a whole record of their case (index, parameters, status ok, figures); no case is
missing; no part file is left; both processes exit 0 and report every case. One table row per
trial; the cases each process ran itself come from the files' ``worker`` field (host:pid).

Usage: python benchmarks/study_concurrency.py [--trials 10] [--cases 6]
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

STUDY = {
    "pipeline": "norms", "out": "results",
    "structure": {"catalog": "tbar", "arguments": {"variant": "stedy", "damping": 5.0}},
    "settings": {"t_final": 0.2},
    "executor": {"kind": "serial"},
}


def check_folder(out: pathlib.Path, n_cases: int) -> tuple:
    """(corrupt files, lost cases, leftover part files, pids that wrote case files)."""
    corrupt, lost, writers = [], [], {}
    try:
        manifest = json.loads((out / "manifest.json").read_text())
        cases = {c["index"]: c["parameters"] for c in manifest["cases"]}
    except (OSError, ValueError, KeyError) as exc:
        return [f"manifest.json ({exc})"], list(range(n_cases)), [], {}
    for k in range(n_cases):
        path = out / "cases" / f"case-{k:06d}.json"
        if not path.exists():
            lost.append(k)
            continue
        try:
            data = json.loads(path.read_text())
            whole = (data["index"] == k and data["parameters"] == cases[k]
                     and data["status"] == "ok" and isinstance(data["figures"], dict))
        except (ValueError, KeyError, TypeError):
            whole = False
        if not whole:
            corrupt.append(path.name)
        else:
            pid = data["worker"].rsplit(":", 1)[-1]
            writers[pid] = writers.get(pid, 0) + 1
    parts = [p.name for p in out.rglob("*.part")]
    return corrupt, lost, parts, writers


def trial(folder: pathlib.Path, n_cases: int) -> dict:
    study = dict(STUDY, parameters={"grid": {"prestress": [5.0 + k for k in range(n_cases)]}})
    path = folder / "study.json"
    path.write_text(json.dumps(study))
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-m", "tenscontrol", "sweep", str(path), "--quiet"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(2)]
    outputs = [p.communicate(timeout=600) for p in procs]
    wall = time.perf_counter() - start
    corrupt, lost, parts, writers = check_folder(folder / "results", n_cases)
    reported = [f"{n_cases} finished" in out for out, _ in outputs]
    return {"exit": [p.returncode for p in procs], "reported": reported, "corrupt": corrupt,
            "lost": lost, "parts": parts, "ran": sorted(writers.values(), reverse=True),
            "wall": wall, "stderr": [err.strip().splitlines()[-1:] for _, err in outputs]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--cases", type=int, default=6)
    args = ap.parse_args(argv)
    print(f"load average at start: {os.getloadavg()[0]:.2f} (2 cores)")
    print(f"{'trial':>5}  {'exit codes':>10}  {'all cases reported':>18}  {'corrupt':>7}  "
          f"{'lost':>4}  {'.part left':>10}  {'case files by writer':>20}  {'wall [s]':>8}")
    bad = 0
    for k in range(args.trials):
        with tempfile.TemporaryDirectory() as tmp:
            r = trial(pathlib.Path(tmp), args.cases)
        ok = (r["exit"] == [0, 0] and all(r["reported"]) and not r["corrupt"] and not r["lost"]
              and not r["parts"])
        bad += not ok
        print(f"{k + 1:>5}  {str(r['exit']):>10}  {str(all(r['reported'])):>18}  "
              f"{len(r['corrupt']):>7}  {len(r['lost']):>4}  {len(r['parts']):>10}  "
              f"{' + '.join(map(str, r['ran'])):>20}  {r['wall']:8.1f}", flush=True)
        if not ok:
            print("       ", r["corrupt"], r["lost"], r["parts"], r["stderr"])
    print(f"{args.trials - bad} of {args.trials} trials: no corrupt file, no lost case, both "
          f"processes exit 0; load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
