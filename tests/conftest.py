"""The test loop's settings: which tests run by default, and how hypothesis draws its examples.

``pytest`` runs the quick tests (a few minutes of CPU); ``pytest --runslow`` runs every test,
as CI does. A test is marked ``@pytest.mark.slow`` when it takes more than about 3 s on a
2-core machine (compiling kernels afresh, long closed-loop or compressible runs, subprocesses
that import tenscontrol, studies on several workers).

Hypothesis profiles (``HYPOTHESIS_PROFILE=NAME``; CI sets ``ci``):

- ``dev`` (default): random examples, as hypothesis draws them;
- ``ci``: derandomized (the same examples on every run, so a CI result can be reproduced),
  no example database, no deadline;
- ``deep``: ten times the examples each test asks for (:func:`examples`), random, for a
  search before a release.
"""

import os

import pytest
from hypothesis import settings

settings.register_profile("dev", deadline=None)
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
settings.register_profile("deep", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="also run the tests marked slow (CI runs them all)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
