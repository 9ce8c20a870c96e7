"""How many examples a property test draws: the number it asks for, ten times that under the
``deep`` hypothesis profile (``HYPOTHESIS_PROFILE=deep``, see conftest.py)."""

import os

DEEP_FACTOR = 10


def examples(n: int) -> int:
    """`n`, or ``DEEP_FACTOR * n`` under the deep profile."""
    return n * DEEP_FACTOR if os.environ.get("HYPOTHESIS_PROFILE") == "deep" else n
