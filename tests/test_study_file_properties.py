"""Property-based tests of study files (hypothesis).

Generated JSON study files, valid and broken:
- valid ones (a ready-made pipeline on the T-bar, random settings, a grid or seeded samples of
  known parameters, an executor table) load: the pipeline, as many cases as the grid or the
  samples make, the output folder and the executor;
- broken ones (one change to a valid file: an unknown key in any table, a number that is NaN
  or infinite, a string where a number belongs) raise a StudyFileError whose message names the
  file and the dotted key at fault.

Only ``read_study_file`` runs (nothing is simulated), so the module takes a few seconds.
"""

import json
import math
import pathlib
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tenscontrol as tc
from tenscontrol.studies.files import read_study_file
from depth import examples

QUICK = settings(max_examples=examples(80), deadline=None, database=None,
                 suppress_health_check=[HealthCheck.too_slow])

NUMERIC_SETTINGS = {"prestress": (1.0, 50.0), "amplitude": (0.1, 100.0),
                    "half_period": (0.1, 2.0), "t_final": (0.05, 5.0)}
NUMERIC_PARAMETERS = ["prestress", "damping", "rest_length_error", "string_stiffness_error",
                      "bar_youngs_modulus_error", "amplitude", "rest_length_error_1"]
finite = st.floats(-0.1, 0.1, allow_nan=False).map(lambda x: round(x, 6))


@st.composite
def grids(draw):
    names = draw(st.lists(st.sampled_from(NUMERIC_PARAMETERS), min_size=1, max_size=3,
                          unique=True))
    grid = {name: draw(st.lists(finite, min_size=1, max_size=3)) for name in names}
    if draw(st.booleans()):
        grid["material"] = draw(st.lists(st.sampled_from(["hdpe", "aluminium"]), min_size=1,
                                         max_size=2, unique=True))
    return {"grid": grid}, math.prod(len(v) for v in grid.values())


@st.composite
def sample_tables(draw):
    names = draw(st.lists(st.sampled_from(NUMERIC_PARAMETERS), min_size=1, max_size=3,
                          unique=True))
    dists = {}
    for name in names:
        low = draw(finite)
        dists[name] = draw(st.sampled_from([{"uniform": [low, low + 0.5]},
                                            {"normal": [low, 0.01]}, low]))
    table = {"n": draw(st.integers(1, 5)), "seed": draw(st.integers(0, 1000)),
             "distributions": dists}
    n_designs = 1
    if draw(st.booleans()):
        table["designs"] = {"material": ["hdpe", "aluminium"]}
        n_designs = 2
    return {"samples": table}, table["n"] * n_designs


@st.composite
def study_files(draw):
    """(a valid study file as a dict, its number of cases)."""
    pipeline = draw(st.sampled_from(["norms", "lqr"]))
    doc = {"pipeline": pipeline,
           "structure": {"catalog": "tbar",
                         "arguments": {"variant": draw(st.sampled_from(["stedy", "paper"])),
                                       "damping": draw(st.floats(0.0, 10.0))}}}
    chosen = draw(st.lists(st.sampled_from(sorted(NUMERIC_SETTINGS)), unique=True))
    doc["settings"] = {k: draw(st.floats(*NUMERIC_SETTINGS[k])) for k in chosen}
    if pipeline == "lqr" and draw(st.booleans()):
        doc["settings"]["effort"] = draw(st.floats(1e-4, 1.0))
    if draw(st.booleans()):
        doc["settings"]["outputs"] = {"nodes": [2, 3], "axes": "xz"}
    doc["parameters"], n_cases = draw(st.one_of(grids(), sample_tables()))
    doc["executor"] = {"kind": draw(st.sampled_from(["serial", "processes", "dask"])),
                       "workers": draw(st.integers(1, 4))}
    if draw(st.booleans()):
        doc["executor"]["case_timeout"] = draw(st.floats(0.1, 1e4))
    if draw(st.booleans()):
        doc["out"] = "results"
    return doc, n_cases


def _tables(doc):
    """(dotted key, table) of every table of `doc` a user writes keys into."""
    found = [("", doc), ("structure", doc["structure"]),
             ("structure.arguments", doc["structure"]["arguments"]),
             ("settings", doc["settings"]), ("parameters", doc["parameters"]),
             ("executor", doc["executor"])]
    kind = next(iter(doc["parameters"]))
    found.append((f"parameters.{kind}", doc["parameters"][kind]))
    return found


def _numbers(doc):
    """(dotted key, table, key) of every number a user writes that must be finite."""
    found = [(f"settings.{k}", doc["settings"], k) for k in doc["settings"]
             if k in NUMERIC_SETTINGS]
    if "grid" in doc["parameters"]:
        grid = doc["parameters"]["grid"]
        found += [(f"parameters.grid.{k}", grid, k) for k in grid if k != "material"]
    if "case_timeout" in doc["executor"]:
        found.append(("executor.case_timeout", doc["executor"], "case_timeout"))
    return found


def _load(doc):
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "study.json"
        path.write_text(json.dumps(doc))
        return read_study_file(path)


@QUICK
@given(study_files())
def test_a_valid_study_file_loads(drawn):
    doc, n_cases = drawn
    pipeline, cases, out, executor = _load(doc)
    assert pipeline.name == doc["pipeline"] and len(cases) == n_cases
    assert [c.index for c in cases] == list(range(n_cases))
    assert (out is None) == ("out" not in doc) and executor == doc["executor"]


@QUICK
@given(study_files(), st.data())
def test_an_unknown_key_in_any_table_is_named(drawn, data):
    doc, _ = drawn
    where, table = data.draw(st.sampled_from(_tables(doc)))
    key = data.draw(st.from_regex(r"[a-z]{2,8}_q", fullmatch=True))
    table[key] = 1.0
    dotted = f"{where}.{key}" if where else key
    try:
        _load(doc)
    except tc.StudyFileError as exc:
        assert str(exc).startswith(f"study.json: key '{dotted}': unknown"), str(exc)
    else:
        raise AssertionError(f"an unknown key {dotted!r} was accepted")


@QUICK
@given(study_files(), st.data())
def test_a_number_that_is_not_finite_or_not_a_number_is_named(drawn, data):
    doc, _ = drawn
    choices = _numbers(doc)
    if not choices:
        doc["settings"]["prestress"] = 10.0
        choices = _numbers(doc)
    dotted, table, key = data.draw(st.sampled_from(choices))
    bad = data.draw(st.sampled_from([math.nan, math.inf, -math.inf, "ten", True]))
    table[key] = [bad] if isinstance(table[key], list) else bad
    try:
        _load(doc)
    except tc.StudyFileError as exc:
        assert str(exc).startswith(f"study.json: key '{dotted}': "), str(exc)
    else:
        raise AssertionError(f"{dotted} = {bad!r} was accepted")
