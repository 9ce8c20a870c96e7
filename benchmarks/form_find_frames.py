"""Is form_find's frame the same on every machine? Node arrays of the n-prisms and the icosahedron.

Run it once per environment (e.g. two NumPy versions) with ``--save``, then compare the files:

    python benchmarks/form_find_frames.py --save /tmp/a.npz     # in one venv
    /other/venv/bin/python benchmarks/form_find_frames.py --save /tmp/b.npz
    python benchmarks/form_find_frames.py --compare /tmp/a.npz /tmp/b.npz

The comparison prints, per structure, a hash of each node array (sha256 of the float64 bytes,
first 12 hex digits), the largest coordinate difference, and the largest distance of a node from
its place in the other run after the best rotation or reflection (Kabsch), which is ~1e-15 when
the two differ only in their frame and only the frame test says whether the frame is the same.
Without arguments it prints the nodes' hashes of this environment. Another machine's BLAS can be
imitated on this one with OpenBLAS's kernel choice, e.g. ``OPENBLAS_CORETYPE=Prescott``; run with
``PYTHONPATH`` at an older checkout to see the frame before it was fixed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys

import numpy as np


def prism(n: int):
    """Bars, strings and solve_for of the n-prism: bars k -> n + k, two rings, sides."""
    bars = [(k, n + k) for k in range(n)]
    rings = [(k, (k + 1) % n) for k in range(n)] + [(n + k, n + (k + 1) % n) for k in range(n)]
    sides = [(k, n + (k - 1) % n) for k in range(n)]
    return bars, rings + sides, [range(n), range(n, 3 * n)]


def cases() -> dict:
    """Name -> form-found node array (n, 3) of this environment."""
    import tenscontrol as tc

    out = {}
    for n in range(3, 7):
        bars, strings, groups = prism(n)
        out[f"prism-{n}"] = tc.form_find(2 * n, bars, strings, solve_for=groups).nodes
    out["icosahedron"] = tc.form_find(12, tc.catalog.ICOSAHEDRON_BARS,
                                      tc.catalog.ICOSAHEDRON_STRINGS).nodes
    return out


def digest(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a, dtype="<f8").tobytes()).hexdigest()[:12]


def shape_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Largest node distance between a and b after the best orthogonal map of b onto a."""
    A, B = a - a.mean(axis=0), b - b.mean(axis=0)
    U, _, Vt = np.linalg.svd(B.T @ A)
    return float(np.linalg.norm(B @ (U @ Vt) - A, axis=1).max())


def environment() -> str:
    import scipy

    core = os.environ.get("OPENBLAS_CORETYPE")
    return (f"python {sys.version.split()[0]}, numpy {np.__version__}, scipy {scipy.__version__}"
            + (f", OPENBLAS_CORETYPE={core}" if core else ""))


def compare(path_a: str, path_b: str) -> None:
    a, b = np.load(path_a), np.load(path_b)
    print(f"A: {a['_env']}\nB: {b['_env']}")
    print(f"{'structure':<12} {'hash A':>12} {'hash B':>12} {'max |A - B| [m]':>16} "
          f"{'same shape to':>14}")
    for name in (k for k in a.files if not k.startswith("_")):
        print(f"{name:<12} {digest(a[name]):>12} {digest(b[name]):>12} "
              f"{np.abs(a[name] - b[name]).max():16.3g} {shape_distance(a[name], b[name]):14.3g}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--save", help="write this environment's node arrays to an .npz file")
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two saved files")
    args = ap.parse_args(argv)
    if args.compare:
        compare(*args.compare)
        return 0
    nodes = cases()
    if args.save:
        np.savez(args.save, _env=environment(), **nodes)
    print(environment())
    for name, a in nodes.items():
        print(f"{name:<12} {digest(a)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
