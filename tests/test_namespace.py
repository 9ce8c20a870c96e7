"""The top-level namespace, grouped (issue 30, item 5): what a user calls first is at the top,
the rest in the subpackages that hold it; a name that left the top level still works there,
with a DeprecationWarning that names its new place."""

import importlib
import pathlib
import subprocess
import sys
import warnings

import pytest

import tenscontrol as tc

SUBPACKAGES = ("control", "design", "estimation", "linear", "robust", "simulation", "statics",
               "studies")


@pytest.mark.parametrize("name", sorted(tc._MOVED))
def test_a_moved_name_warns_and_is_the_subpackage_s(name):
    package = importlib.import_module(tc._MOVED[name])
    assert name in package.__all__ and name not in tc.__all__
    with pytest.warns(DeprecationWarning, match=rf"tenscontrol\.{name} has moved to "
                                                rf"{package.__name__}\.{name}"):
        old = getattr(tc, name)
    assert old is getattr(package, name)


def test_the_top_level_names_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        for name in tc.__all__:
            getattr(tc, name)
        for sub in SUBPACKAGES:
            package = getattr(tc, sub)
            for name in package.__all__:
                getattr(package, name)


def test_the_top_level_is_grouped():
    # 136 names before the grouping; the result types left for their subpackages; 96 with
    # place_actuators (issue 32); 97 with ExpectedLoad (issue 32, item 4)
    public = [n for n in tc.__all__ if n not in SUBPACKAGES]
    # then modes (issue 32: the first call of a modal analysis) and ExpectedLoad
    assert len(public) == 98
    assert {"simulate", "lqr", "Structure", "linearize", "equilibrium", "dlqr", "lqg",
            "Design", "Trajectory", "verify"} <= set(public)
    with pytest.raises(AttributeError, match="has no attribute 'LQRDesigns'"):
        tc.LQRDesigns


def test_a_subpackage_export_never_hides_one_of_its_modules():
    # tc.estimation.lqg is the module estimation/lqg.py; the function is tc.lqg
    for sub in SUBPACKAGES:
        package = getattr(tc, sub)
        modules = {p.stem for p in pathlib.Path(package.__file__).parent.glob("*.py")}
        assert not modules & set(package.__all__), (sub, modules & set(package.__all__))


def test_import_tenscontrol_loads_no_python_control():
    code = ("import sys, tenscontrol as tc; tc.design; tc.estimation; "
            "print('control' in sys.modules, 'tenscontrol.design.synthesis' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert run.stdout.split() == ["False", "False"], run.stdout + run.stderr
