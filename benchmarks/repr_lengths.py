"""How long the repr of every public type is, and what print() and summary() give.

Builds one instance of each public type (tests/public_types.py: the T-bar, 1 s runs; about
5 s once the kernels are compiled) and prints a table:

    type | repr chars | repr lines | str lines | summary() lines

The instances use the top-level API only, so the script also measures older versions:
``PYTHONPATH=/path/to/old/checkout python benchmarks/repr_lengths.py``.
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))

import tenscontrol as tc  # noqa: E402
from public_types import build_all  # noqa: E402


def _lines(text: str) -> int:
    return text.count("\n") + 1


def main() -> None:
    instances = build_all()
    print(f"tenscontrol {tc.__version__} from {pathlib.Path(tc.__file__).parent}")
    head = f"{'type':<26} | {'repr chars':>10} | {'repr lines':>10} | {'str lines':>9} | " \
           f"{'summary() lines':>15}"
    print(head)
    print("-" * len(head))
    for name, obj in instances.items():
        text = repr(obj)
        summary = getattr(obj, "summary", None)
        summary_lines = str(_lines(summary())) if callable(summary) else "-"
        print(f"{name:<26} | {len(text):>10} | {_lines(text):>10} | {_lines(str(obj)):>9} | "
              f"{summary_lines:>15}")


if __name__ == "__main__":
    main()
