"""Tests for tenscontrol.model.io: JSON round trips and clear errors for bad files."""

import json

import numpy as np
import pytest

import tenscontrol
from tenscontrol import PointMass, Structure, load_structure
from tenscontrol.model.io import FORMAT, save_structure, structure_from_dict, structure_to_dict

C = 5 * np.cos(np.pi / 4)
NODES = [[0.0, 0.0, 0.0], [C, 0.0, 0.0], [C, 0.0, C], [0.0, 0.0, C]]

# The example file of the issue: the T-bar in the tenscontrol.structure/1 format.
EXAMPLE = {
    "format": "tenscontrol.structure/1",
    "name": "tbar",
    "gravity": [0, 0, 0],
    "nodes": NODES,
    "fixed": [{"node": 0, "axes": "xyz"}, {"node": 1, "axes": "xyz"},
              {"node": 2, "axes": "y"}, {"node": 3, "axes": "y"}],
    "bars": [
        {"nodes": [0, 2], "density": 500, "radius": 0.05, "youngs_modulus": 2e11, "poisson": 0.3},
        {"nodes": [1, 3], "density": 500, "radius": 0.05, "youngs_modulus": 2e11, "poisson": 0.3},
    ],
    "strings": [
        {"nodes": [0, 1], "kind": "string", "youngs_modulus": 7e7, "radius": 0.001,
         "rest_fraction": 1.0, "damping": 1.0},
        {"nodes": [1, 2], "kind": "string", "youngs_modulus": 7e7, "radius": 0.001,
         "rest_fraction": 0.7, "damping": 1.0},
        {"nodes": [2, 3], "kind": "string", "youngs_modulus": 7e7, "radius": 0.001,
         "rest_fraction": 1.0, "damping": 1.0},
        {"nodes": [3, 0], "kind": "string", "youngs_modulus": 7e7, "radius": 0.001,
         "rest_fraction": 0.7, "damping": 1.0},
    ],
}


def write_json(path, data):
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def example(**changes):
    d = json.loads(json.dumps(EXAMPLE))  # deep copy
    d.update(changes)
    return d


@pytest.fixture
def rich():
    """A structure using every field: materials, springs, rest lengths, point masses, gravity."""
    return Structure(
        nodes=NODES + [[2 * C, 0.0, 0.0]],
        bars=[{"nodes": (0, 2), "material": "steel", "radius": 0.01},
              {"nodes": (1, 3), "density": 500.0, "radius": 0.05, "poisson": 0.25}],
        strings=[
            {"nodes": (0, 1), "stiffness": 62.5, "rest_length": 3.0, "damping": 0.5},
            {"nodes": (1, 2), "material": "nylon", "radius": 1e-3, "rest_fraction": 0.7},
            {"nodes": (2, 3), "youngs_modulus": 7e7, "radius": 1e-3, "kind": "spring"},
            {"nodes": (3, 0), "stiffness": 10.0},
            {"nodes": (1, 4), "stiffness": 5.0, "rest_fraction": 0.9},
        ],
        fixed={0: "xyz", 1: "xz", 3: "y"},
        point_masses=[PointMass(4, 1.25), {"node": 2, "mass": 0.5}],
        gravity=(0.0, 0.0, -9.806),
        name="rich t-bar",
    )


ARRAYS = ["nodes", "fixed", "gravity", "bar_nodes", "string_nodes", "bar_lengths", "bar_masses",
          "node_masses", "string_rest_lengths", "string_stiffness", "string_damping",
          "string_is_spring", "fixed_coordinates"]


def assert_same_structure(a, b):
    assert structure_to_dict(a) == structure_to_dict(b)
    assert a.bars == b.bars and a.strings == b.strings and a.point_masses == b.point_masses
    assert a.name == b.name
    for name in ARRAYS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


# ---- round trips -------------------------------------------------------------------------------


def test_save_load_round_trip(tmp_path, rich):
    path = tmp_path / "rich.json"
    save_structure(rich, path)
    loaded = tenscontrol.load_structure(path)
    assert_same_structure(rich, loaded)
    assert structure_to_dict(loaded) == structure_to_dict(rich)


def test_round_trip_with_str_path_and_module_functions(tmp_path, rich):
    path = str(tmp_path / "rich.json")
    save_structure(rich, path)
    assert_same_structure(rich, load_structure(path))


def test_saved_file_is_plain_json_in_the_format(tmp_path, rich):
    path = tmp_path / "rich.json"
    save_structure(rich, path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == FORMAT == "tenscontrol.structure/1"
    assert data["name"] == "rich t-bar"
    assert data["nodes"] == rich.nodes.tolist()
    assert data["fixed"] == [{"node": 0, "axes": "xyz"}, {"node": 1, "axes": "xz"},
                             {"node": 3, "axes": "y"}]
    assert data["point_masses"] == [{"node": 4, "mass": 1.25}, {"node": 2, "mass": 0.5}]
    # fields left at None are omitted, tuples become lists
    assert data["strings"][3] == {"nodes": [3, 0], "kind": "string", "stiffness": 10.0,
                                  "rest_fraction": 1.0, "damping": 0.0}


def test_dict_round_trip(rich):
    d = structure_to_dict(rich)
    assert structure_to_dict(structure_from_dict(d)) == d
    assert json.loads(json.dumps(d)) == d


def test_second_round_trip_is_identical(tmp_path, rich):
    save_structure(rich, tmp_path / "a.json")
    save_structure(load_structure(tmp_path / "a.json"), tmp_path / "b.json")
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text()


# ---- the example file --------------------------------------------------------------------------


def test_example_file_loads(tmp_path):
    s = load_structure(write_json(tmp_path / "tbar.json", EXAMPLE))
    assert s.name == "tbar"
    assert (s.n_nodes, s.n_bars, s.n_strings) == (4, 2, 4)
    np.testing.assert_allclose(s.nodes, NODES)
    np.testing.assert_allclose(s.bar_lengths, [5.0, 5.0])
    np.testing.assert_allclose(s.bar_masses, [19.634954] * 2, rtol=1e-7)
    assert [(b.youngs_modulus, b.poisson) for b in s.bars] == [(2e11, 0.3)] * 2
    np.testing.assert_allclose(s.string_rest_lengths, [C, 0.7 * C, C, 0.7 * C])
    np.testing.assert_allclose(s.string_stiffness, [62.2004, 88.8577, 62.2004, 88.8577], rtol=1e-5)
    np.testing.assert_array_equal(s.string_damping, 1.0)
    np.testing.assert_array_equal(s.string_is_spring, False)
    assert s.fixed_coordinates.tolist() == [0, 1, 2, 3, 4, 5, 7, 10]
    assert s.free_coordinates.tolist() == [6, 8, 9, 11]
    np.testing.assert_array_equal(s.gravity, 0.0)


def test_minimal_file_uses_defaults(tmp_path):
    data = {"nodes": NODES[:2], "bars": [{"nodes": [0, 1], "density": 1.0, "radius": 0.1}]}
    s = load_structure(write_json(tmp_path / "min.json", data))
    assert s.name == "structure" and s.n_strings == 0 and s.point_masses == ()
    assert s.fixed_coordinates.size == 0
    np.testing.assert_array_equal(s.gravity, 0.0)


# ---- file-level errors -------------------------------------------------------------------------


def assert_clean(info):
    message = str(info.value)
    assert type(info.value) is ValueError
    assert "\n" not in message and "Traceback" not in message
    assert info.value.__cause__ is None


def test_missing_file(tmp_path):
    path = tmp_path / "nope.json"
    with pytest.raises(ValueError, match="no such file") as info:
        load_structure(path)
    assert str(path) in str(info.value)
    assert_clean(info)


def test_directory(tmp_path):
    with pytest.raises(ValueError, match="is a directory") as info:
        load_structure(tmp_path)
    assert str(tmp_path) in str(info.value)
    assert_clean(info)


def test_not_utf8(tmp_path):
    path = tmp_path / "binary.json"
    path.write_bytes(b"\xff\xfe\x00{")
    with pytest.raises(ValueError, match="cannot read the file") as info:
        load_structure(path)
    assert_clean(info)


def test_malformed_json_gives_line_and_column(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{\n "nodes": [[0, 0, 0]],\n "bars": [,]\n}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"not valid JSON at line 3 column 11") as info:
        load_structure(path)
    assert str(path) in str(info.value)
    assert_clean(info)


def test_empty_file(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match=r"not valid JSON at line 1 column 1"):
        load_structure(path)


def test_json_list_not_object(tmp_path):
    path = write_json(tmp_path / "list.json", [EXAMPLE])
    with pytest.raises(ValueError, match=r"a structure must be a JSON object, got list") as info:
        load_structure(path)
    assert str(path) in str(info.value)
    assert_clean(info)


# ---- content errors ----------------------------------------------------------------------------


BAD_CONTENT = {
    "wrong format tag": (example(format="tenscontrol.structure/3"),
                         r"format must be 'tenscontrol.structure/1' or "
                         r"'tenscontrol.structure/2', got 'tenscontrol.structure/3'"),
    "unknown top-level key": ({**{k: v for k, v in example().items() if k != "strings"},
                               "strngs": EXAMPLE["strings"]},
                              r"structure: unknown key 'strngs' \(did you mean 'strings'\?\)"),
    "unknown key in string": (example(strings=EXAMPLE["strings"][:2]
                                      + [{**EXAMPLE["strings"][2], "dampnig": 1.0}]
                                      + EXAMPLE["strings"][3:]),
                              r"string 2: unknown key 'dampnig' \(did you mean 'damping'\?\)"),
    "unknown key in bar": (example(bars=[{**EXAMPLE["bars"][0], "length": 5}, EXAMPLE["bars"][1]]),
                           r"bar 0: unknown key 'length'"),
    "unknown key in fixed": (example(fixed=[{"node": 0, "axes": "xyz", "value": 0}]),
                             r"fixed entry 0: unknown key 'value'"),
    "bars not a list": (example(bars={"nodes": [0, 2], "density": 500, "radius": 0.05}),
                        r"'bars' must be a list, got dict"),
    "strings null": (example(strings=None), r"'strings' must be a list, got NoneType"),
    "fixed as object": (example(fixed={"0": "xyz"}), r"'fixed' must be a list, got dict"),
    "missing nodes": ({k: v for k, v in example().items() if k != "nodes"},
                      r"structure: missing key 'nodes'"),
    "invalid member value": (example(bars=[{**EXAMPLE["bars"][0], "radius": -1}, EXAMPLE["bars"][1]]),
                             r"bar 0 \(nodes 0->2\): radius must be > 0, got -1"),
    "member missing key": (example(bars=[{"nodes": [0, 2], "density": 500}, EXAMPLE["bars"][1]]),
                           r"bar 0: missing key 'radius'"),
    "fixed node as text": (example(fixed=[{"node": "0", "axes": "xyz"}]),
                           r"fixed entry 0: node must be an integer node index"),
    "nan node via JSON NaN": (example(nodes=[[0, 0, float("nan")]] + NODES[1:]),
                              r"node 0: coordinates must be finite"),
    "gravity text": (example(gravity="down"), r"gravity must be three finite numbers"),
}


@pytest.mark.parametrize("data, pattern", BAD_CONTENT.values(), ids=BAD_CONTENT.keys())
def test_bad_content_from_file(tmp_path, data, pattern):
    path = write_json(tmp_path / "s.json", data)
    with pytest.raises(ValueError, match=pattern) as info:
        load_structure(path)
    assert str(info.value).startswith(f"{path}: ")
    assert_clean(info)


@pytest.mark.parametrize("data, pattern", BAD_CONTENT.values(), ids=BAD_CONTENT.keys())
def test_bad_content_from_dict(data, pattern):
    with pytest.raises(ValueError, match=pattern) as info:
        structure_from_dict(data)
    assert_clean(info)


def test_structure_from_dict_rejects_non_dict():
    with pytest.raises(ValueError, match="a structure must be a JSON object, got str"):
        structure_from_dict("nodes")


# ---- bar rest lengths --------------------------------------------------------------------------


def test_bar_rest_length_survives_a_round_trip(tmp_path):
    bars = [dict(b, rest_length=l0) for b, l0 in zip(EXAMPLE["bars"], (5.0000123, 4.99))]
    s = structure_from_dict(example(bars=bars))
    path = tmp_path / "prestressed-bars.json"
    save_structure(s, path)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert [b["rest_length"] for b in saved["bars"]] == [5.0000123, 4.99]
    loaded = load_structure(path)
    assert_same_structure(s, loaded)
    assert [b.rest_length for b in loaded.bars] == [5.0000123, 4.99]
    np.testing.assert_array_equal(loaded.bar_rest_lengths, [5.0000123, 4.99])
    np.testing.assert_array_equal(loaded.bar_stiffness, s.bar_stiffness)


def test_bar_without_rest_length_writes_none_and_loads_as_length(tmp_path):
    path = tmp_path / "tbar.json"
    save_structure(structure_from_dict(example()), path)
    assert all("rest_length" not in b for b in json.loads(path.read_text())["bars"])
    loaded = load_structure(path)
    assert all(b.rest_length is None for b in loaded.bars)
    np.testing.assert_allclose(loaded.bar_rest_lengths, 5.0, rtol=1e-14)


def test_bad_bar_rest_length_in_a_file_names_the_file_and_bar(tmp_path):
    bars = [EXAMPLE["bars"][0], dict(EXAMPLE["bars"][1], rest_length=-1)]
    path = write_json(tmp_path / "bad.json", example(bars=bars))
    with pytest.raises(ValueError, match=r"bad\.json: bar 1 \(nodes 1->3\): rest_length must be "
                                         r"> 0, got -1"):
        load_structure(path)


# ---- bounded reading, duplicate keys, deep nesting, huge numbers (issue 13) --------------------


def write_text(tmp_path, text, name="s.json"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def load_text(tmp_path, text):
    return load_structure(write_text(tmp_path, text))


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="no FIFOs on this system")
def test_fifo_is_refused_without_blocking(tmp_path):
    import os
    path = tmp_path / "fifo"
    os.mkfifo(path)
    with pytest.raises(ValueError, match=r"fifo: not a regular file \(a pipe, FIFO or device\)"):
        load_structure(path)


@pytest.mark.skipif(not __import__("os").path.exists("/dev/zero"), reason="no /dev/zero")
def test_device_is_refused_without_reading():
    with pytest.raises(ValueError, match=r"/dev/zero: not a regular file") as info:
        load_structure("/dev/zero")
    assert_clean(info)


def test_file_over_the_size_limit(tmp_path):
    path = write_json(tmp_path / "s.json", EXAMPLE)
    with pytest.raises(ValueError, match=r"s\.json: the file is larger than the limit of "
                       r"100 bytes \(9.537e-05 MiB, max_bytes\); a structure of 100k nodes") as info:
        load_structure(path, max_bytes=100)
    assert_clean(info)
    assert load_structure(path, max_bytes=path.stat().st_size).n_nodes == 4


def test_default_size_limit_is_256_mib(tmp_path):
    from tenscontrol.model.io import MAX_FILE_BYTES
    assert MAX_FILE_BYTES == 256 * 2**20
    path = tmp_path / "sparse.json"
    with open(path, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk space used
    with pytest.raises(ValueError, match=r"larger than the limit of 268435456 bytes \(256 MiB"):
        load_structure(path)


@pytest.mark.parametrize("value", [0, -1, 1.5, True, "100"])
def test_bad_max_bytes(tmp_path, value):
    with pytest.raises(ValueError, match=r"max_bytes must be a positive integer"):
        load_structure(write_json(tmp_path / "s.json", EXAMPLE), max_bytes=value)


DUPLICATES = {
    "in a bar, hiding a negative radius": (
        '"radius": 0.05', '"radius": -1, "radius": 0.05', r"bar 0: duplicate key 'radius'"),
    "at the top": ('"name": "tbar"', '"name": "a", "name": "tbar"',
                   r": structure: duplicate key 'name'"),
    "in a string": ('"rest_fraction": 0.7', '"rest_fraction": 0.7, "rest_fraction": 0.7',
                    r"string 1: duplicate key 'rest_fraction'"),
    "in a fixed entry": ('"node": 2, "axes": "y"', '"node": 2, "axes": "y", "axes": "xyz"',
                         r"fixed entry 2: duplicate key 'axes'"),
}


@pytest.mark.parametrize("old, new, pattern", DUPLICATES.values(), ids=DUPLICATES.keys())
def test_duplicate_keys_are_an_error(tmp_path, old, new, pattern):
    text = json.dumps(EXAMPLE)
    assert old in text
    with pytest.raises(ValueError, match=pattern + r"; give each key once") as info:
        load_text(tmp_path, text.replace(old, new, 1))
    assert_clean(info)


def test_duplicate_key_deep_inside_is_located(tmp_path):
    text = json.dumps(example(name={"a": [{"b": 1, "b": 2}]}))
    text = text.replace('{"b": 2}', '{"b": 1, "b": 2}')
    with pytest.raises(ValueError, match=r"structure\['name'\]\['a'\]\[0\]: duplicate key 'b'"):
        load_text(tmp_path, text)


@pytest.mark.parametrize("text", [
    "[" * 100_000 + "]" * 100_000,
    "{" + '"a": {' * 50_000 + "}" * 50_001,
    json.dumps(EXAMPLE).replace('"nodes": [[', '"nodes": ' + "[" * 2000, 1)
    .replace(']], "fixed"', "]" * 2000 + ', "fixed"', 1),
], ids=["list 100k deep", "objects 50k deep", "nodes 2000 deep"])
def test_deep_nesting_is_a_clear_error(tmp_path, text):
    with pytest.raises(ValueError, match=r"s\.json: the JSON nests too deeply to read") as info:
        load_text(tmp_path, text)
    assert_clean(info)


def test_moderate_nesting_reaches_the_field_check(tmp_path):
    text = json.dumps(EXAMPLE).replace('"gravity": [0, 0, 0]',
                                       '"gravity": [0, 0, ' + "[" * 300 + "0" + "]" * 300 + "]")
    with pytest.raises(ValueError, match=r"gravity must be three finite numbers .*z must be a "
                       r"number, got \[\[\[\[\.\.\.\]\]\]\]") as info:
        load_text(tmp_path, text)
    assert_clean(info)


HUGE_NUMBERS = {
    "400-digit radius": ('"radius": 0.05', '"radius": 1' + "0" * 399,
                         r"bar 0 \(nodes 0->2\): radius must be a finite number \(magnitude below "
                         r"1.8e308\), got <an integer of about 400 digits>"),
    "400-digit coordinate": ("[0.0, 0.0, 0.0]", "[0.0, -1" + "0" * 399 + ", 0.0]",
                             r"node 0: coordinate y must be a finite number"),
    "400-digit gravity": ('"gravity": [0, 0, 0]', '"gravity": [0, 0, 1' + "0" * 399 + "]",
                          r"gravity must be three finite numbers .*; z must be a finite number"),
    "5000-digit radius": ('"radius": 0.05', '"radius": 1' + "0" * 4999,
                          r"bar 0 \(nodes 0->2\): radius must be finite, got inf \(a magnitude "
                          r"beyond 1.8e308 reads as inf\)"),
    "5000-digit node index": ('"nodes": [1, 3]', '"nodes": [1, 3' + "0" * 4999 + "]",
                              r"bar 1: nodes must be two node indices, got \[1, inf\]"),
    "1e400 density": ('"density": 500', '"density": 1e400', r"density must be finite, got inf"),
    "NaN damping": ('"damping": 1.0', '"damping": NaN', r"string 0 \(nodes 0->1\): damping must "
                                                       r"be finite, got nan"),
}


@pytest.mark.parametrize("old, new, pattern", HUGE_NUMBERS.values(), ids=HUGE_NUMBERS.keys())
def test_huge_numbers_in_a_file_name_the_field(tmp_path, old, new, pattern):
    text = json.dumps(EXAMPLE)
    assert old in text
    with pytest.raises(ValueError, match=pattern) as info:
        load_text(tmp_path, text.replace(old, new, 1))
    assert_clean(info)


STRICT_JSON = {
    "radius as text": ({"radius": "0.05"}, r"bar 0 \(nodes 0->2\): radius must be a number, "
                                           r"got '0.05' \(a string"),
    "indices as text": ({"nodes": ["0", "2"]}, r"bar 0: nodes must be two node indices"),
    "indices as one text": ({"nodes": "02"}, r"bar 0: nodes must be two node indices, got '02'"),
    "indices as bools": ({"nodes": [False, True]}, r"bar 0: nodes must be two node indices"),
    "density as bool": ({"density": True}, r"bar 0 \(nodes 0->2\): density must be a number, "
                                           r"got True \(a bool\)"),
}


@pytest.mark.parametrize("change, pattern", STRICT_JSON.values(), ids=STRICT_JSON.keys())
def test_strict_types_in_a_file(tmp_path, change, pattern):
    bars = [dict(EXAMPLE["bars"][0], **change), EXAMPLE["bars"][1]]
    with pytest.raises(ValueError, match=pattern) as info:
        load_structure(write_json(tmp_path / "s.json", example(bars=bars)))
    assert_clean(info)


def test_large_file_loads_in_linear_time(tmp_path):
    """A 4-prism tower of 2000 nodes loads; the timing itself is in benchmarks/bench_load.py."""
    import importlib.util
    import pathlib
    spec = importlib.util.spec_from_file_location(
        "bench_load", pathlib.Path(__file__).parents[1] / "benchmarks" / "bench_load.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    s = load_structure(write_json(tmp_path / "t.json", bench.tower_dict(500)))
    assert (s.n_nodes, s.n_bars, s.n_strings) == (2000, 1996, 3996)
    assert s.node_masses[4:].min() > 0
    assert s.bars[7] == tenscontrol.Bar(**{**bench.tower_dict(3)["bars"][0], "nodes": (7, 11)})


def test_path_must_be_a_path():
    with pytest.raises(TypeError, match=r"load_structure: path must be a file path .*got None"):
        load_structure(None)
