"""Reliability cases that document the runner's format (see benchmarks/reliability.py)."""

CASES = [
    ("a negative end time", "tc.simulate(tc.catalog.tbar(), -1.0)"),
    ("the T-bar simulates", "print(tc.simulate(tc.catalog.tbar(), 0.1))"),
]
