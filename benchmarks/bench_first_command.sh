#!/usr/bin/env bash
# The README's first command as a whole, as a new user meets it (issue 31): in a fresh clone
# of the checkout at REV (default HEAD), a new virtual environment, `pip install .` with no
# pip cache, then `tenscontrol demo` and a first rigid T-bar `simulate` in a new process, each
# with an empty numba cache. Prints CPU (user + sys, children included) and wall seconds of
# each part; measure before/after side by side (the machine is shared: CPU is the figure to
# compare). Usage: benchmarks/bench_first_command.sh [REV] [WORKDIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
rev="${1:-HEAD}"
work="${2:-$(mktemp -d "${TMPDIR:-/tmp}/tenscontrol-first.XXXXXX")}"
git clone -q "$root" "$work/clone"
cd "$work/clone"
git checkout -q "$rev"
echo "checkout: $(git log --oneline -1)"
export OPENBLAS_NUM_THREADS=1
export NUMBA_CACHE_DIR="$work/numba-demo"
/usr/bin/time -f "install (venv + pip install .): %U user %S sys %e wall" \
    bash -c 'python3 -m venv .venv && .venv/bin/pip install --no-cache-dir -q .'
/usr/bin/time -f "tenscontrol demo: %U user %S sys %e wall" \
    .venv/bin/tenscontrol demo --out-dir "$work/demo" > "$work/demo.txt"
grep -i "kernels" "$work/demo.txt" | head -2 || true
export NUMBA_CACHE_DIR="$work/numba-simulate"
(cd "$work" && /usr/bin/time -f "first rigid T-bar simulate (whole process): %U user %S sys %e wall" \
    "$work/clone/.venv/bin/python" -c \
    "import tenscontrol as tc; tc.simulate(tc.catalog.tbar('stedy', damping=1.0), 1.0)")
# The same from a wheel built once (not timed), as a user gets it from a package index: the
# compile is in the wheel, so what is left is pip's own work and the demo (issue 31's
# blocked target: see docs/install.md)
unset NUMBA_CACHE_DIR
"$work/clone/.venv/bin/pip" wheel -q --no-deps -w "$work/dist" "$work/clone" > "$work/wheel.txt" 2>&1
export NUMBA_CACHE_DIR="$work/numba-wheel-demo"
(cd "$work" && /usr/bin/time -f "install from the built wheel (venv + pip install WHEEL): %U user %S sys %e wall" \
    bash -c 'python3 -m venv wheel-venv && wheel-venv/bin/pip install --no-cache-dir -q dist/*.whl')
/usr/bin/time -f "tenscontrol demo (wheel install): %U user %S sys %e wall" \
    "$work/wheel-venv/bin/tenscontrol" demo --out-dir "$work/demo-wheel" > "$work/demo-wheel.txt"
