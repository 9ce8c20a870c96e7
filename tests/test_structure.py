"""Tests for tenscontrol.model.structure: derived quantities, immutability, materials, validation."""

import dataclasses

import numpy as np
import pytest

from tenscontrol import MATERIALS, Bar, PointMass, String, Structure

# T-bar of catalog.tbar (paper Fig. 1a): two crossing bars of length 5 in the x-z plane, a square of strings.
C = 5 * np.cos(np.pi / 4)
NODES = [[0.0, 0.0, 0.0], [C, 0.0, 0.0], [C, 0.0, C], [0.0, 0.0, C]]
STRING_PAIRS = [(0, 1), (1, 2), (2, 3), (3, 0)]
REST_FRACTIONS = [1.0, 0.7, 1.0, 0.7]
FIXED = {0: "xyz", 1: "xyz", 2: "y", 3: "y"}


def tbar_bars():
    return [
        {"nodes": (0, 2), "density": 500.0, "radius": 0.05},
        {"nodes": (1, 3), "density": 500.0, "radius": 0.05},
    ]


def tbar_strings():
    return [
        {"nodes": p, "youngs_modulus": 7e7, "radius": 1e-3, "rest_fraction": f}
        for p, f in zip(STRING_PAIRS, REST_FRACTIONS)
    ]


def tbar(**overrides):
    kwargs = dict(nodes=NODES, bars=tbar_bars(), strings=tbar_strings(), fixed=FIXED)
    kwargs.update(overrides)
    return Structure(**kwargs)


@pytest.fixture
def s():
    return tbar()


# ---- derived quantities ------------------------------------------------------------------------


def test_counts(s):
    assert (s.n_nodes, s.n_bars, s.n_strings) == (4, 2, 4)
    assert s.bar_nodes.tolist() == [[0, 2], [1, 3]]
    assert s.string_nodes.tolist() == [list(p) for p in STRING_PAIRS]


@pytest.mark.parametrize("name", ["bar_connectivity", "string_connectivity"])
def test_connectivity_rows_have_one_minus_one_and_one_plus_one(s, name):
    Cm = getattr(s, name)
    assert Cm.shape[1] == s.n_nodes
    for row in Cm:
        assert np.count_nonzero(row == -1) == 1
        assert np.count_nonzero(row == 1) == 1
        assert np.count_nonzero(row) == 2
    np.testing.assert_array_equal(Cm.sum(axis=1), 0.0)


def test_connectivity_gives_member_vectors(s):
    N = s.nodes.T  # (3, n_nodes), the theory's N
    B = N @ s.bar_connectivity.T
    S = N @ s.string_connectivity.T
    for k, (i, j) in enumerate(s.bar_nodes):
        np.testing.assert_allclose(B[:, k], s.nodes[j] - s.nodes[i])
    for k, (i, j) in enumerate(s.string_nodes):
        np.testing.assert_allclose(S[:, k], s.nodes[j] - s.nodes[i])
    np.testing.assert_allclose(np.linalg.norm(B, axis=0), s.bar_lengths)
    np.testing.assert_allclose(np.linalg.norm(S, axis=0), s.string_lengths)


def test_bar_lengths_and_masses(s):
    np.testing.assert_allclose(s.bar_lengths, [5.0, 5.0])
    # rho pi r^2 l = 500 * pi * 0.05^2 * 5 = 19.634954 kg
    np.testing.assert_allclose(s.bar_masses, [19.634954, 19.634954], rtol=1e-7)
    np.testing.assert_allclose(s.total_mass, 2 * 19.634954, rtol=1e-7)


def test_node_masses_are_half_bars(s):
    np.testing.assert_allclose(s.node_masses, [19.634954 / 2] * 4, rtol=1e-7)
    np.testing.assert_allclose(s.node_masses.sum(), s.total_mass)


def test_point_masses_add_to_node_and_total_mass():
    s = tbar(point_masses=[{"node": 2, "mass": 1.5}, PointMass(0, 0.5)])
    base = 19.634954 / 2
    np.testing.assert_allclose(s.node_masses, [base + 0.5, base, base + 1.5, base], rtol=1e-7)
    np.testing.assert_allclose(s.total_mass, 2 * 19.634954 + 2.0, rtol=1e-7)
    assert s.point_masses == (PointMass(2, 1.5), PointMass(0, 0.5))


def test_string_lengths_rest_lengths_and_stiffness(s):
    np.testing.assert_allclose(s.string_lengths, [C] * 4)
    np.testing.assert_allclose(s.string_rest_lengths, [C, 0.7 * C, C, 0.7 * C])
    # k = E pi r^2 / l0 with E = 7e7, r = 1e-3 (hand-computed reference values)
    np.testing.assert_allclose(
        s.string_stiffness, [62.2004, 88.8577, 62.2004, 88.8577], rtol=1e-5
    )
    np.testing.assert_allclose(s.string_stiffness, 7e7 * np.pi * 1e-6 / s.string_rest_lengths)


def test_string_defaults(s):
    np.testing.assert_array_equal(s.string_damping, 0.0)
    np.testing.assert_array_equal(s.string_is_spring, False)
    assert all(m.kind == "string" for m in s.strings)


def test_explicit_stiffness_rest_length_damping_and_spring():
    strings = tbar_strings()
    strings[0] = {"nodes": (0, 1), "stiffness": 100.0, "rest_length": 2.0, "damping": 3.0,
                  "kind": "spring"}
    s = tbar(strings=strings)
    assert s.string_stiffness[0] == 100.0
    assert s.string_rest_lengths[0] == 2.0
    assert s.string_damping.tolist() == [3.0, 0.0, 0.0, 0.0]
    assert s.string_is_spring.tolist() == [True, False, False, False]


def test_rest_fraction_defaults_to_one():
    strings = [{"nodes": p, "stiffness": 10.0} for p in STRING_PAIRS]
    s = tbar(strings=strings)
    np.testing.assert_allclose(s.string_rest_lengths, s.string_lengths)


def test_fixed_and_free_coordinates(s):
    assert s.fixed_coordinates.tolist() == [0, 1, 2, 3, 4, 5, 7, 10]
    assert s.free_coordinates.tolist() == [6, 8, 9, 11]
    assert s.fixed.shape == (4, 3) and s.fixed.dtype == bool


@pytest.mark.parametrize("fixed", [
    [{"node": 0, "axes": "xyz"}, {"node": 1}, {"node": 2, "axes": "y"}, {"node": 3, "axes": "y"}],
    np.array([[1, 1, 1], [1, 1, 1], [0, 1, 0], [0, 1, 0]], dtype=bool),
])
def test_fixed_accepts_list_and_mask(fixed):
    assert tbar(fixed=fixed).fixed_coordinates.tolist() == [0, 1, 2, 3, 4, 5, 7, 10]


def test_no_fixed_and_gravity():
    s = tbar(fixed=None, gravity=(0, 0, -9.806))
    assert s.fixed_coordinates.size == 0
    assert s.free_coordinates.tolist() == list(range(12))
    np.testing.assert_array_equal(s.gravity, [0.0, 0.0, -9.806])


def test_members_given_as_dataclasses_equal_dicts(s):
    s2 = tbar(bars=[Bar(**b) for b in tbar_bars()], strings=[String(**m) for m in tbar_strings()])
    assert s2.bars == s.bars and s2.strings == s.strings
    assert all(isinstance(b, Bar) for b in s.bars)
    assert all(isinstance(m, String) for m in s.strings)
    assert s.bars[0].nodes == (0, 2)


def test_repr(s):
    r = repr(s)
    assert "n_nodes=4" in r and "n_bars=2" in r and "n_strings=4" in r


# ---- immutability ------------------------------------------------------------------------------


ARRAYS = [
    "nodes", "fixed", "gravity", "bar_nodes", "string_nodes", "bar_connectivity",
    "string_connectivity", "bar_lengths", "string_lengths", "bar_masses", "node_masses",
    "string_rest_lengths", "string_stiffness", "string_damping", "string_is_spring",
    "fixed_coordinates", "free_coordinates",
]


@pytest.mark.parametrize("name", ARRAYS)
def test_arrays_are_read_only(s, name):
    a = getattr(s, name)
    assert isinstance(a, np.ndarray)
    assert not a.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        a[...] = a


@pytest.mark.parametrize("name", ["nodes", "bars", "strings", "fixed", "gravity", "name",
                                  "bar_lengths", "new_attribute"])
def test_attributes_cannot_be_set(s, name):
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(s, name, None)


def test_members_are_frozen(s):
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.bars[0].radius = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.strings[0].stiffness = 1.0
    assert isinstance(s.bars, tuple) and isinstance(s.strings, tuple)


def test_inputs_are_copied():
    nodes = np.array(NODES)
    mask = np.array([[1, 1, 1], [1, 1, 1], [0, 1, 0], [0, 1, 0]], dtype=bool)
    gravity = np.array([0.0, 0.0, -9.8])
    bars = tbar_bars()
    s = Structure(nodes, bars, tbar_strings(), fixed=mask, gravity=gravity)
    nodes[:] = 99.0
    mask[:] = False
    gravity[:] = 1.0
    bars[0]["radius"] = 7.0
    bars.append({"nodes": (0, 1), "density": 1.0, "radius": 1.0})
    np.testing.assert_allclose(s.nodes, NODES)
    assert s.fixed_coordinates.tolist() == [0, 1, 2, 3, 4, 5, 7, 10]
    np.testing.assert_array_equal(s.gravity, [0.0, 0.0, -9.8])
    assert s.n_bars == 2 and s.bars[0].radius == 0.05
    np.testing.assert_allclose(s.bar_lengths, [5.0, 5.0])


def test_replace_keeps_validated_copy(s):
    moved = dataclasses.replace(s, nodes=np.array(NODES) * 2)
    np.testing.assert_allclose(moved.bar_lengths, [10.0, 10.0])
    np.testing.assert_allclose(s.bar_lengths, [5.0, 5.0])


# ---- materials ---------------------------------------------------------------------------------


def test_bar_material_preset():
    s = tbar(bars=[{"nodes": (0, 2), "material": "steel", "radius": 0.05},
                   {"nodes": (1, 3), "material": "aluminium", "radius": 0.05}])
    steel, alu = s.bars
    assert (steel.density, steel.youngs_modulus, steel.poisson) == (7850.0, 200e9, 0.30)
    assert steel.material == "steel"
    assert (alu.density, alu.youngs_modulus, alu.poisson) == (2700.0, 68e9, 0.33)
    np.testing.assert_allclose(s.bar_masses, np.array([7850.0, 2700.0]) * np.pi * 0.05**2 * 5)


def test_bar_explicit_values_override_preset():
    s = tbar(bars=[Bar((0, 2), 0.05, density=1000.0, poisson=0.25, material="steel"),
                   Bar((1, 3), 0.05, youngs_modulus=1e9, material="steel")])
    b0, b1 = s.bars
    assert (b0.density, b0.youngs_modulus, b0.poisson) == (1000.0, 200e9, 0.25)
    assert (b1.density, b1.youngs_modulus, b1.poisson) == (7850.0, 1e9, 0.30)


def test_bar_without_material_keeps_optional_fields_none(s):
    assert s.bars[0].youngs_modulus is None and s.bars[0].poisson is None


def test_string_material_preset_gives_stiffness():
    r = 2e-3
    strings = [String(p, material="nylon", radius=r, rest_fraction=f)
               for p, f in zip(STRING_PAIRS, REST_FRACTIONS)]
    s = tbar(strings=strings)
    E = MATERIALS["nylon"].youngs_modulus
    assert E == 2e9
    np.testing.assert_allclose(s.string_stiffness, E * np.pi * r**2 / s.string_rest_lengths)
    assert s.strings[0].youngs_modulus == E


def test_string_explicit_modulus_overrides_material():
    strings = tbar_strings()
    strings[0] = {"nodes": (0, 1), "material": "nylon", "youngs_modulus": 1e8, "radius": 1e-3}
    s = tbar(strings=strings)
    np.testing.assert_allclose(s.string_stiffness[0], 1e8 * np.pi * 1e-6 / C)


def test_unknown_bar_material_did_you_mean():
    with pytest.raises(ValueError, match=r"bar 0 .*unknown material 'steal' \(did you mean 'steel'\?\)"):
        tbar(bars=[{"nodes": (0, 2), "material": "steal", "radius": 0.05}, tbar_bars()[1]])


def test_unknown_string_material_did_you_mean():
    strings = tbar_strings()
    strings[2] = {"nodes": (2, 3), "material": "nylom", "radius": 1e-3}
    with pytest.raises(ValueError, match=r"string 2 .*unknown material 'nylom' \(did you mean 'nylon'\?\)"):
        tbar(strings=strings)


# ---- validation --------------------------------------------------------------------------------


def bars_with(k, **changes):
    bars = tbar_bars()
    bars[k] = {**bars[k], **changes}
    return bars


def strings_with(k, **changes):
    strings = tbar_strings()
    strings[k] = {**strings[k], **changes}
    return strings


def without(d, key):
    return {k: v for k, v in d.items() if k != key}


def nodes_with(i, value):
    nodes = [list(p) for p in NODES]
    nodes[i] = value
    return nodes


def two_strings(k, d):
    """The T-bar strings with string k replaced by the dict d."""
    strings = tbar_strings()
    strings[k] = d
    return strings


INVALID = {
    # nodes
    "nan coordinate": (dict(nodes=nodes_with(2, [C, np.nan, C])),
                       r"node 2: coordinates must be finite"),
    "inf coordinate": (dict(nodes=nodes_with(1, [np.inf, 0, 0])),
                       r"node 1: coordinates must be finite"),
    "nodes 2 columns": (dict(nodes=[[0, 0], [1, 0]]), r"nodes must be an \(n_nodes, 3\) array.*\(2, 2\)"),
    "nodes 1-d": (dict(nodes=[0.0, 1.0, 2.0]), r"nodes must be an \(n_nodes, 3\) array.*\(3,\)"),
    "nodes empty": (dict(nodes=np.zeros((0, 3))), r"nodes must be an \(n_nodes, 3\) array"),
    "nodes ragged": (dict(nodes=[[0, 0, 0], [1, 0]]), r"nodes must be an \(n_nodes, 3\) array"),
    "nodes text": (dict(nodes=[["a", 0, 0]]), r"node 0: coordinate x must be a number, got 'a'"),
    # node indices
    "bar node out of range": (dict(bars=bars_with(1, nodes=(1, 4))),
                              r"bar 1: node index 4 out of range; the structure has 4 nodes"),
    "bar negative node": (dict(bars=bars_with(0, nodes=(-1, 2))), r"bar 0: node index -1 out of range"),
    "string node out of range": (dict(strings=strings_with(3, nodes=(3, 9))),
                                 r"string 3: node index 9 out of range"),
    "point mass node out of range": (dict(point_masses=[{"node": 4, "mass": 1.0}]),
                                     r"point mass 0: node index 4 out of range"),
    "fixed node out of range": (dict(fixed={0: "xyz", 1: "xyz", 5: "y"}),
                                r"fixed entry 2: node index 5 out of range"),
    "fixed node not integer": (dict(fixed=[{"node": "0"}]),
                               r"fixed entry 0: node must be an integer node index, got '0'"),
    "point mass node not integer": (dict(point_masses=[{"node": 1.0, "mass": 1.0}]),
                                    r"point mass 0: node must be an integer node index, got 1.0"),
    "bar three nodes": (dict(bars=bars_with(0, nodes=(0, 1, 2))), r"bar 0: nodes must be two node indices"),
    "bar fractional node": (dict(bars=bars_with(0, nodes=(0, 1.5))), r"bar 0: nodes must be two node indices"),
    "bar infinite node": (dict(bars=bars_with(0, nodes=(0, np.inf))), r"bar 0: nodes must be two node indices"),
    "string nodes none": (dict(strings=strings_with(0, nodes=None)), r"string 0: nodes must be two node indices"),
    # self-joins and coincident nodes
    "bar self": (dict(bars=bars_with(0, nodes=(2, 2))), r"bar 0: joins node 2 to itself"),
    "string self": (dict(strings=strings_with(1, nodes=(1, 1))), r"string 1: joins node 1 to itself"),
    "zero-length bar": (dict(nodes=nodes_with(2, [0, 0, 0]), strings=[]),
                        r"bar 0 \(nodes 0->2\): zero length; nodes 0 and 2 coincide"),
    "zero-length string": (dict(nodes=nodes_with(1, [0, 0, 0]), bars=[tbar_bars()[0]],
                                fixed={0: "xyz", 1: "xyz", 3: "xyz"}),
                           r"string 0 \(nodes 0->1\): zero length; nodes 0 and 1 coincide"),
    # bar fields
    "bar zero density": (dict(bars=bars_with(0, density=0.0)), r"bar 0 \(nodes 0->2\): density must be > 0, got 0"),
    "bar negative density": (dict(bars=bars_with(1, density=-5)), r"bar 1 \(nodes 1->3\): density must be > 0, got -5"),
    "bar nan density": (dict(bars=bars_with(0, density=np.nan)), r"bar 0 \(nodes 0->2\): density must be finite"),
    "bar text density": (dict(bars=bars_with(0, density="heavy")), r"bar 0 \(nodes 0->2\): density must be a number, got 'heavy'"),
    "bar no density": (dict(bars=[without(tbar_bars()[0], "density"), tbar_bars()[1]]),
                       r"bar 0 \(nodes 0->2\): density is missing"),
    "bar zero radius": (dict(bars=bars_with(0, radius=0)), r"bar 0 \(nodes 0->2\): radius must be > 0, got 0"),
    "bar negative radius": (dict(bars=bars_with(1, radius=-0.1)), r"bar 1 \(nodes 1->3\): radius must be > 0, got -0.1"),
    "bar no radius": (dict(bars=[without(tbar_bars()[0], "radius"), tbar_bars()[1]]),
                      r"bar 0: missing key 'radius'"),
    "bar no nodes": (dict(bars=[without(tbar_bars()[0], "nodes"), tbar_bars()[1]]),
                     r"bar 0: missing key 'nodes'"),
    "bar zero modulus": (dict(bars=bars_with(0, youngs_modulus=0)), r"bar 0 \(nodes 0->2\): youngs_modulus must be > 0"),
    "bar poisson 0.5": (dict(bars=bars_with(0, poisson=0.5)), r"bar 0 \(nodes 0->2\): poisson must lie in \(-1, 0.5\), got 0.5"),
    "bar poisson -1": (dict(bars=bars_with(1, poisson=-1.0)), r"bar 1 \(nodes 1->3\): poisson must lie in \(-1, 0.5\), got -1"),
    "bar unknown key": (dict(bars=bars_with(1, denisty=3)), r"bar 1: unknown key 'denisty' \(did you mean 'density'\?\)"),
    "bar not a dict": (dict(bars=[tbar_bars()[0], (1, 3)]), r"bar 1: expected a Bar or a dict of its fields, got tuple"),
    # string fields
    "string zero stiffness": (dict(strings=two_strings(0, {"nodes": (0, 1), "stiffness": 0.0})),
                              r"string 0 \(nodes 0->1\): stiffness must be > 0, got 0"),
    "string negative stiffness": (dict(strings=two_strings(2, {"nodes": (2, 3), "stiffness": -3})),
                                  r"string 2 \(nodes 2->3\): stiffness must be > 0, got -3"),
    "string zero modulus": (dict(strings=strings_with(1, youngs_modulus=0)),
                            r"string 1 \(nodes 1->2\): youngs_modulus must be > 0"),
    "string zero radius": (dict(strings=strings_with(1, radius=0.0)),
                           r"string 1 \(nodes 1->2\): radius must be > 0, got 0"),
    "string negative radius": (dict(strings=strings_with(3, radius=-1e-3)),
                               r"string 3 \(nodes 3->0\): radius must be > 0, got -0.001"),
    "string zero rest length": (dict(strings=two_strings(0, {"nodes": (0, 1), "stiffness": 1.0, "rest_length": 0})),
                                r"string 0 \(nodes 0->1\): rest_length must be > 0, got 0"),
    "string negative rest length": (dict(strings=two_strings(0, {"nodes": (0, 1), "stiffness": 1.0, "rest_length": -2})),
                                    r"string 0 \(nodes 0->1\): rest_length must be > 0, got -2"),
    "string zero rest fraction": (dict(strings=strings_with(1, rest_fraction=0)),
                                  r"string 1 \(nodes 1->2\): rest_fraction must be > 0, got 0"),
    "string negative rest fraction": (dict(strings=strings_with(1, rest_fraction=-0.5)),
                                      r"string 1 \(nodes 1->2\): rest_fraction must be > 0, got -0.5"),
    "string negative damping": (dict(strings=strings_with(2, damping=-1.0)),
                                r"string 2 \(nodes 2->3\): damping must be >= 0, got -1"),
    "string bad kind": (dict(strings=strings_with(0, kind="cable")),
                        r"string 0 \(nodes 0->1\): kind must be 'string' or 'spring', got 'cable'"),
    "string stiffness and modulus": (dict(strings=strings_with(0, stiffness=10.0)),
                                     r"string 0 \(nodes 0->1\): give stiffness, or youngs_modulus .* not both"),
    "string stiffness and material": (dict(strings=two_strings(0, {"nodes": (0, 1), "stiffness": 1.0, "material": "nylon"})),
                                      r"string 0 \(nodes 0->1\): give stiffness, or youngs_modulus .* not both"),
    "string neither stiffness nor modulus": (dict(strings=two_strings(1, {"nodes": (1, 2), "radius": 1e-3})),
                                             r"string 1 \(nodes 1->2\): stiffness is missing"),
    "string modulus without radius": (dict(strings=two_strings(1, {"nodes": (1, 2), "youngs_modulus": 7e7})),
                                      r"string 1 \(nodes 1->2\): stiffness is missing"),
    "string rest length and fraction": (dict(strings=strings_with(3, rest_length=1.0)),
                                        r"string 3 \(nodes 3->0\): give rest_length or rest_fraction, not both"),
    "string unknown key": (dict(strings=strings_with(2, rest_lenght=1.0)),
                           r"string 2: unknown key 'rest_lenght' \(did you mean 'rest_length'\?\)"),
    "string no nodes": (dict(strings=two_strings(0, {"stiffness": 1.0})), r"string 0: missing key 'nodes'"),
    # fixed
    "fixed bad axes": (dict(fixed={0: "xyz", 1: "xyz", 2: "yw", 3: "y"}),
                       r"fixed entry 2 \(node 2\): axes must be letters from 'xyz', got 'yw'"),
    "fixed empty axes": (dict(fixed=[{"node": 0, "axes": ""}]),
                         r"fixed entry 0 \(node 0\): axes must be letters from 'xyz', got ''"),
    "fixed axes not text": (dict(fixed=[{"node": 0, "axes": 3}]),
                            r"fixed entry 0 \(node 0\): axes must be letters from 'xyz', got 3"),
    "fixed unknown key": (dict(fixed=[{"node": 0, "axis": "x"}]),
                          r"fixed entry 0: unknown key 'axis' \(did you mean 'axes'\?\)"),
    "fixed missing node": (dict(fixed=[{"axes": "x"}]), r"fixed entry 0: missing key 'node'"),
    "fixed entry not a dict": (dict(fixed=[(0, "xyz")]), r"fixed entry 0: expected \{'node': i, 'axes': 'xyz'\}"),
    "fixed mask wrong shape": (dict(fixed=np.ones((4, 2), dtype=bool)),
                               r"fixed: a boolean mask must have shape \(4, 3\), got \(4, 2\)"),
    # point masses
    "point mass zero": (dict(point_masses=[{"node": 1, "mass": 0.0}]),
                        r"point mass 0 \(node 1\): mass must be > 0, got 0"),
    "point mass negative": (dict(point_masses=[PointMass(0, 1.0), PointMass(3, -2.0)]),
                            r"point mass 1 \(node 3\): mass must be > 0, got -2"),
    "point mass unknown key": (dict(point_masses=[{"node": 1, "mass": 1.0, "radius": 2}]),
                               r"point mass 0: unknown key 'radius'"),
    "point mass missing mass": (dict(point_masses=[{"node": 1}]), r"point mass 0: missing key 'mass'"),
    # gravity
    "gravity two numbers": (dict(gravity=(0, -9.8)), r"gravity must be three finite numbers"),
    "gravity nan": (dict(gravity=(0, 0, np.nan)), r"gravity must be three finite numbers"),
    "gravity text": (dict(gravity=(0, 0, "down")), r"gravity must be three finite numbers"),
    "gravity ragged": (dict(gravity=[[0], [0, 1]]), r"gravity must be three finite numbers"),
    "gravity none": (dict(gravity=None), r"gravity must be three finite numbers"),
}


@pytest.mark.parametrize("overrides, pattern", INVALID.values(), ids=INVALID.keys())
def test_invalid_input_raises_clear_value_error(overrides, pattern):
    with pytest.raises(ValueError, match=pattern) as info:
        tbar(**overrides)
    assert type(info.value) is ValueError
    message = str(info.value)
    assert "\n" not in message
    assert "Traceback" not in message
    assert "numpy" not in message and "__init__" not in message
    assert info.value.__cause__ is None


def test_massless_node_not_fully_fixed_is_rejected():
    # Node 4 is touched only by a string: no inertia unless fully fixed or given a point mass.
    nodes = NODES + [[2 * C, 0.0, 0.0]]
    strings = tbar_strings() + [{"nodes": (1, 4), "stiffness": 10.0}]
    for fixed_4 in (None, "xz"):
        fixed = dict(FIXED) if fixed_4 is None else {**FIXED, 4: fixed_4}
        with pytest.raises(ValueError, match=r"node 4 has no mass .* not fully fixed"):
            tbar(nodes=nodes, strings=strings, fixed=fixed)


def test_massless_node_fully_fixed_or_with_point_mass_is_accepted():
    nodes = NODES + [[2 * C, 0.0, 0.0]]
    strings = tbar_strings() + [{"nodes": (1, 4), "stiffness": 10.0}]
    s = tbar(nodes=nodes, strings=strings, fixed={**FIXED, 4: "xyz"})
    assert s.node_masses[4] == 0.0 and s.n_nodes == 5
    s = tbar(nodes=nodes, strings=strings, point_masses=[{"node": 4, "mass": 2.0}])
    assert s.node_masses[4] == 2.0


def test_nodes_are_float_copies_of_integer_input():
    s = tbar(nodes=[[0, 0, 0], [4, 0, 0], [4, 0, 3], [0, 0, 3]])
    assert s.nodes.dtype == float
    np.testing.assert_allclose(s.bar_lengths, [5.0, 5.0])


def test_member_lists_none_and_non_lists():
    nodes = [[0, 0, 0], [1, 0, 0]]
    s = Structure(nodes=nodes, bars=None, strings=None, point_masses=None, fixed={0: "xyz", 1: "xyz"})
    assert s.n_bars == s.n_strings == 0
    with pytest.raises(ValueError, match="bars must be a list of members"):
        Structure(nodes=nodes, bars=5, fixed={0: "xyz", 1: "xyz"})
    with pytest.raises(ValueError, match="strings must be a list of members"):
        Structure(nodes=nodes, strings={"nodes": [0, 1]}, fixed={0: "xyz", 1: "xyz"})
    with pytest.raises(ValueError, match="fixed must be"):
        Structure(nodes=nodes, fixed=5)


# ---- bar rest lengths, stiffness and Poisson's ratio (docs/theory.md, "Compressible bars") ----


def elastic_bars(**changes_of_bar_1):
    """The T-bar's bars with Young's modulus and Poisson's ratio; bar 1 gets `changes_of_bar_1`."""
    bars = [{**b, "youngs_modulus": 7e10, "poisson": 0.33} for b in tbar_bars()]
    bars[1] = {**bars[1], **changes_of_bar_1}
    return bars


def test_bar_rest_length_defaults_to_the_configured_length(s):
    assert all(b.rest_length is None for b in s.bars)
    np.testing.assert_array_equal(s.bar_rest_lengths, s.bar_lengths)
    np.testing.assert_allclose(s.bar_rest_lengths, [5.0, 5.0], rtol=1e-15)


def test_bar_explicit_rest_length_and_stiffness():
    s = tbar(bars=elastic_bars(rest_length=5.2))
    assert s.bars[0].rest_length is None and s.bars[1].rest_length == 5.2
    np.testing.assert_allclose(s.bar_rest_lengths, [5.0, 5.2], rtol=1e-15)
    np.testing.assert_allclose(s.bar_lengths, [5.0, 5.0], rtol=1e-15)   # geometry unchanged
    # k_b = E pi r0^2 / l0 (docs/theory.md, "Compressible bars"), r0 = 0.05 m, with each bar's own
    # l0
    np.testing.assert_allclose(s.bar_stiffness, 7e10 * np.pi * 0.05**2 / np.array([5.0, 5.2]),
                               rtol=1e-14)
    np.testing.assert_array_equal(s.bar_poisson, [0.33, 0.33])
    # A Bar instance and an integer rest length are accepted the same way.
    s2 = tbar(bars=[Bar((0, 2), 0.05, density=500.0, youngs_modulus=7e10, poisson=0.33),
                    Bar((1, 3), 0.05, density=500.0, youngs_modulus=7e10, poisson=0.33,
                        rest_length=5)])
    assert s2.bars[1].rest_length == 5.0 and isinstance(s2.bars[1].rest_length, float)
    np.testing.assert_array_equal(s2.bar_stiffness, tbar(bars=elastic_bars()).bar_stiffness)


def test_bar_stiffness_and_poisson_from_a_material():
    s = tbar(bars=[{"nodes": (0, 2), "material": "hdpe", "radius": 0.05},
                   {"nodes": (1, 3), "material": "aluminium", "radius": 0.05, "poisson": 0.3}])
    np.testing.assert_allclose(s.bar_stiffness, [1.5708e6, 1.0681e8], rtol=5e-5)  # catalog.tbar docstring
    np.testing.assert_array_equal(s.bar_poisson, [0.46, 0.3])


@pytest.mark.parametrize("name", ["bar_rest_lengths", "bar_stiffness", "bar_poisson"])
def test_bar_elastic_arrays_are_read_only(name):
    a = getattr(tbar(bars=elastic_bars(rest_length=5.1)), name)
    assert a.shape == (2,)
    with pytest.raises(ValueError):
        a[0] = 1.0


@pytest.mark.parametrize("value, pattern", [
    (0.0, r"bar 1 \(nodes 1->3\): rest_length must be > 0, got 0"),
    (-5.0, r"bar 1 \(nodes 1->3\): rest_length must be > 0, got -5"),
    (np.inf, r"bar 1 \(nodes 1->3\): rest_length must be finite"),
    ("long", r"bar 1 \(nodes 1->3\): rest_length must be a number, got 'long'"),
])
def test_bar_bad_rest_length_names_the_bar(value, pattern):
    with pytest.raises(ValueError, match=pattern) as info:
        tbar(bars=elastic_bars(rest_length=value))
    assert type(info.value) is ValueError and info.value.__cause__ is None


def test_missing_youngs_modulus_is_reported_on_access(s):
    # Rigid-bar structures need no modulus: construction and rigid quantities work.
    np.testing.assert_allclose(s.bar_rest_lengths, [5.0, 5.0])
    with pytest.raises(ValueError, match=r"bar 0 \(nodes 0->2\): youngs_modulus is missing; .* "
                                         r"give youngs_modulus or a material"):
        s.bar_stiffness
    only_bar_1 = tbar(bars=[{**tbar_bars()[0], "youngs_modulus": 1e9, "poisson": 0.3},
                            {**tbar_bars()[1], "poisson": 0.3}])
    with pytest.raises(ValueError, match=r"bar 1 \(nodes 1->3\): youngs_modulus is missing"):
        only_bar_1.bar_stiffness
    np.testing.assert_array_equal(only_bar_1.bar_poisson, [0.3, 0.3])


def test_missing_poisson_is_reported_on_access():
    s = tbar(bars=elastic_bars(poisson=None))
    np.testing.assert_allclose(s.bar_stiffness, 7e10 * np.pi * 0.05**2 / 5.0, rtol=1e-14)
    with pytest.raises(ValueError, match=r"bar 1 \(nodes 1->3\): poisson is missing; .* "
                                         r"Poisson's ratio: give poisson or a material"):
        s.bar_poisson


# ---- strict types and numbers at the limits (issue 13) -----------------------------------------


BIG = 10**399        # 400 digits: float() overflows
HUGE = 10**4999      # 5000 digits: beyond repr()'s limit of 4300 digits

STRICT = {
    # a string is not a number, a bool is not a number or an index, complex is refused
    "radius as text": (dict(bars=bars_with(0, radius="0.05")),
                       r"bar 0 \(nodes 0->2\): radius must be a number, got '0.05' \(a string"),
    "coordinate as text": (dict(nodes=nodes_with(2, ["3.5", 0, C])),
                           r"node 2: coordinate x must be a number, got '3.5'"),
    "coordinate as bool": (dict(nodes=nodes_with(3, [0, True, C])),
                           r"node 3: coordinate y must be a number, got True \(a bool\)"),
    "bool coordinate array": (dict(nodes=np.ones((4, 3), dtype=bool)),
                              r"nodes must be .* got an array of bool values"),
    "complex coordinates": (dict(nodes=np.array(NODES, dtype=complex)),
                            r"nodes must be .* got an array of complex128 values"),
    "complex coordinate": (dict(nodes=nodes_with(1, [C, 1j, 0])),
                           r"node 1: coordinate y must be a real number, got 1j"),
    "complex stiffness": (dict(strings=two_strings(0, {"nodes": (0, 1), "stiffness": 1 + 2j})),
                          r"string 0 \(nodes 0->1\): stiffness must be a real number"),
    "bool density": (dict(bars=bars_with(1, density=True)),
                     r"bar 1 \(nodes 1->3\): density must be a number, got True \(a bool\)"),
    "node indices as text": (dict(bars=bars_with(0, nodes=("0", "2"))),
                             r"bar 0: nodes must be two node indices, got \('0', '2'\)"),
    "node indices as one text": (dict(bars=bars_with(0, nodes="02")),
                                 r"bar 0: nodes must be two node indices, got '02'"),
    "node indices as bools": (dict(strings=strings_with(0, nodes=[False, True])),
                              r"string 0: nodes must be two node indices, got \[False, True\]"),
    "numpy bool indices": (dict(strings=strings_with(0, nodes=np.array([False, True]))),
                           r"string 0: nodes must be two node indices"),
    "fixed node bool": (dict(fixed=[{"node": True, "axes": "xyz"}]),
                        r"fixed entry 0: node must be an integer node index, got True"),
    "point mass node bool": (dict(point_masses=[{"node": False, "mass": 1.0}]),
                             r"point mass 0: node must be an integer node index, got False"),
    "actuated as text": (dict(strings=strings_with(1, actuated="no")),
                         r"string 1 \(nodes 1->2\): actuated must be True or False, got 'no'"),
    "material not text": (dict(bars=bars_with(0, material=["steel"])),
                          r"bar 0 \(nodes 0->2\): material must be a preset name"),
    "kind not text": (dict(strings=strings_with(0, kind=["string"])),
                      r"string 0 \(nodes 0->1\): kind must be 'string' or 'spring'"),
    "name not text": (dict(name=["t", "bar"]), r"name must be a string, got \['t', 'bar'\]"),
    # integers beyond the floats and beyond repr()
    "400-digit radius": (dict(bars=bars_with(0, radius=BIG)),
                         r"bar 0 \(nodes 0->2\): radius must be a finite number .*about 400 digits"),
    "400-digit coordinate": (dict(nodes=nodes_with(1, [BIG, 0, 0])),
                             r"node 1: coordinate x must be a finite number .*about 400 digits"),
    "400-digit gravity": (dict(gravity=(0, 0, -BIG)),
                          r"gravity must be three finite numbers .*; z must be a finite number"),
    "5000-digit mass": (dict(point_masses=[{"node": 1, "mass": HUGE}]),
                        r"point mass 0 \(node 1\): mass must be a finite number .*5000 digits"),
    "huge node index": (dict(bars=bars_with(0, nodes=(0, BIG))),
                        r"bar 0: node index <an integer of about 400 digits> out of range"),
    "inf from a float": (dict(bars=bars_with(0, density=1e308 * 10)),
                         r"bar 0 \(nodes 0->2\): density must be finite, got inf"),
    # deep nesting is reported, not a RecursionError
    "deeply nested coordinate": (dict(nodes=nodes_with(0, [[[[[[[[1.0]]]]]]], 0, 0])),
                                 r"node 0: coordinate x must be a number, got \[\[\[\[\.\.\.\]\]\]\]"),
}


def nested(depth):
    x = 1.0
    for _ in range(depth):
        x = [x]
    return x


STRICT["nodes nested 5000 deep"] = (dict(nodes=nodes_with(0, [nested(5000), 0, 0])),
                                    r"node 0: coordinate x must be a number")
STRICT["gravity nested 5000 deep"] = (dict(gravity=[nested(5000), 0, 0]),
                                      r"gravity must be three finite numbers .*x must be a number")


@pytest.mark.parametrize("overrides, pattern", STRICT.values(), ids=STRICT.keys())
def test_strict_types_and_limits_raise_clear_value_error(overrides, pattern):
    test_invalid_input_raises_clear_value_error(overrides, pattern)


def test_numpy_numbers_and_integral_float_indices_are_accepted():
    bars = [dict(b, nodes=(np.int64(b["nodes"][0]), float(b["nodes"][1])),
                 radius=np.float32(0.05), density=np.array(500.0)) for b in tbar_bars()]
    s = tbar(bars=bars, nodes=np.array(NODES, dtype=np.float32), gravity=np.zeros((3, 1)))
    assert s.bar_nodes.tolist() == [[0, 2], [1, 3]]
    assert s.bars[0].radius == pytest.approx(0.05)
    assert type(s.bars[0].nodes[0]) is int


# ---- derived quantities finite and in range (issue 13) -----------------------------------------


RANGES = {
    "rest_fraction 1e-320": (dict(strings=strings_with(1, rest_fraction=1e-320)),
                             r"string 1 \(nodes 1->2\): rest length [0-9.e-]+ m \(rest_fraction "
                             r".* of the length 3.54 m\) is out of range; it must lie in "
                             r"\[1e-30, 1e\+30\] m"),
    "string rest length 1e40": (dict(strings=two_strings(0, {"nodes": (0, 1), "stiffness": 1.0,
                                                             "rest_length": 1e40})),
                                r"string 0 \(nodes 0->1\): rest length 1e\+40 m \(as given\)"),
    "string stiffness inf": (dict(strings=strings_with(0, youngs_modulus=1e308, radius=1.0)),
                             r"string 0 \(nodes 0->1\): stiffness inf N/m \(E pi r\^2 / l0 with "
                             r"youngs_modulus 1e\+308, radius 1, rest length 3.54 m\) is out of "
                             r"range"),
    "string stiffness given 1e31": (dict(strings=two_strings(2, {"nodes": (2, 3),
                                                                 "stiffness": 1e31})),
                                    r"string 2 \(nodes 2->3\): stiffness 1e\+31 N/m \(as given\)"),
    "string radius 1e-160": (dict(strings=strings_with(3, radius=1e-160)),
                             r"string 3 \(nodes 3->0\): radius 1e-160 m \(as given\) is out of "
                             r"range"),
    "string damping 1e31": (dict(strings=strings_with(0, damping=1e31)),
                            r"string 0 \(nodes 0->1\): damping 1e\+31 N s/m is out of range"),
    "gamma_max 1e-320": (dict(strings=strings_with(2, gamma_max=1e-320)),
                         r"string 2 \(nodes 2->3\): gamma_max [0-9.e-]+ N/m is out of range"),
    "bar stiffness inf": (dict(bars=bars_with(0, youngs_modulus=1e308, radius=1.0)),
                          r"bar 0 \(nodes 0->2\): stiffness E pi r\^2 / l0 inf N/m"),
    "bar mass inf": (dict(bars=bars_with(1, density=1e308)),
                     r"bar 1 \(nodes 1->3\): mass rho pi r\^2 l inf kg \(density 1e\+308, "
                     r"radius 0.05, length 5 m\) is out of range"),
    "bar radius 1e-160": (dict(bars=bars_with(0, radius=1e-160)),
                          r"bar 0 \(nodes 0->2\): radius 1e-160 m \(as given\) is out of range"),
    "bar mass underflows": (dict(bars=bars_with(0, density=1e-300)),
                            r"bar 0 \(nodes 0->2\): mass rho pi r\^2 l [0-9.e-]+ kg"),
    "bar rest length 1e-40": (dict(bars=bars_with(0, rest_length=1e-40)),
                              r"bar 0 \(nodes 0->2\): rest length 1e-40 m \(as given\)"),
    "coordinates times 1e160": (dict(nodes=(np.array(NODES) * 1e160).tolist()),
                                r"node 1: coordinates must lie within \+-1e\+30 m"),
    "coordinates times 1e-40": (dict(nodes=(np.array(NODES) * 1e-40).tolist()),
                                r"bar 0 \(nodes 0->2\): length 5e-40 m \(node distance\) is out "
                                r"of range"),
    "gravity 1e31": (dict(gravity=(0, 0, -1e31)),
                     r"gravity must be three finite numbers \[m/s\^2\] within \+-1e\+30"),
    "point mass 1e-300": (dict(point_masses=[{"node": 2, "mass": 1e-300}]),
                          r"point mass 0 \(node 2\): mass 1e-300 kg is out of range"),
    # members too short for the structure's size: their direction is lost in round-off
    "bar of 10 pm": (dict(nodes=nodes_with(2, [1e-11, 0.0, 0.0]), strings=[]),
                     r"bar 0 \(nodes 0->2\): length 1e-11 m is too short for a structure of "
                     r"size 5 m .*merge nodes 0 and 2 or move them apart"),
    "a 5 m bar 1e7 m from the origin": (
        dict(nodes=(np.array(NODES) + [0, 0, 1e7]).tolist()),
        r"bar 0 \(nodes 0->2\): length 5 m is too short for a structure of size 1e\+07 m"),
}


@pytest.mark.parametrize("overrides, pattern", RANGES.values(), ids=RANGES.keys())
def test_derived_quantities_out_of_range_name_the_member(overrides, pattern):
    test_invalid_input_raises_clear_value_error(overrides, pattern)


def test_ranges_leave_no_numpy_warnings(recwarn):
    with pytest.raises(ValueError):
        tbar(bars=bars_with(0, youngs_modulus=1e308, radius=1e300))
    with pytest.raises(ValueError):
        tbar(strings=strings_with(1, rest_fraction=1e-320))
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_small_and_large_but_sane_structures_are_accepted():
    for scale in (1e-6, 1e6):
        s = tbar(nodes=(np.array(NODES) * scale).tolist(),
                 bars=[dict(b, radius=0.01 * scale) for b in tbar_bars()])
        assert np.all(s.bar_lengths == pytest.approx(5 * scale))
    # a member a thousandth of the structure is fine
    tbar(nodes=nodes_with(2, [5e-3, 0.0, 0.0]), strings=[])
