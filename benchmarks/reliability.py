"""Run the reliability cases (issue: every bad input a clear error, every run bounded, nothing
lost), each in a fresh process with a time limit, and print one line per case.

The cases live in ``benchmarks/reliability/cases_*.py``; each module defines
``CASES = [(name, code), ...]``, where `code` is Python run as ``python -c`` with
``import numpy as np``, ``import tenscontrol as tc`` and ``TMP`` (an empty temporary folder,
a ``pathlib.Path``) already defined. A case prints what it got on its last stdout line, or
ends with an exception, whose type and first line are shown.

    python benchmarks/reliability.py              # every case
    python benchmarks/reliability.py cli json     # only cases_cli.py and cases_json.py
    python benchmarks/reliability.py --timeout 60
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
PRELUDE = "import pathlib, sys\nimport numpy as np\nimport tenscontrol as tc\nTMP = pathlib.Path(sys.argv[1])\n"


def load_cases(groups):
    """(group, name, code) of every case, in file order."""
    out = []
    for path in sorted((HERE / "reliability").glob("cases_*.py")):
        group = path.stem[len("cases_"):]
        if groups and group not in groups:
            continue
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        out += [(group, name, code) for name, code in module.CASES]
    return out


def outcome(run: subprocess.CompletedProcess) -> str:
    """One line: the exception's last traceback line, else the last line printed."""
    err = [line for line in run.stderr.splitlines() if line.strip()]
    if run.returncode != 0 and err:
        return f"exit {run.returncode}: {err[-1].strip()}"
    out = [line for line in run.stdout.splitlines() if line.strip()]
    return (out[-1].strip() if out else "(nothing printed)") + (
        f" [exit {run.returncode}]" if run.returncode else "")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("groups", nargs="*", help="case files to run (cli, json, ...); all by default")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    args = ap.parse_args(argv)
    cases = load_cases(set(args.groups))
    width = max((len(f"{g}: {n}") for g, n, _ in cases), default=10)
    print(f"{'case':<{width}}  {'time [s]':>8}  what it gives")
    for group, name, code in cases:
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            try:
                run = subprocess.run([sys.executable, "-c", PRELUDE + code, tmp],
                                     capture_output=True, text=True, timeout=args.timeout,
                                     stdin=subprocess.DEVNULL)
                what = outcome(run)
            except subprocess.TimeoutExpired:
                what = f"TIMEOUT after {args.timeout:g} s"
            wall = time.perf_counter() - start
        print(f"{f'{group}: {name}':<{width}}  {wall:8.2f}  {what[:300]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
