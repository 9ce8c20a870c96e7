"""tenscontrol.Selection: construction, validation, `+`, coordinates, repr, and the TypeError
that every public Selection argument raises for the 0.3 spellings (dicts, (node, axis) pairs,
"fz2" names)."""

import dataclasses

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol import Selection
from tenscontrol.model import catalog
from tenscontrol.model.selection import check_selection


@pytest.fixture(scope="module")
def tbar():
    # nodes 0, 1 fixed; nodes 2, 3 free in x and z (fixed in y): q indices 6, 8, 9, 11 are free
    return catalog.tbar("stedy", damping=1.0)


@pytest.fixture(scope="module")
def prestressed(tbar):
    return tc.equilibrium(tbar, gamma_min=10.0).structure


# ---- construction and validation ---------------------------------------------------------------


def test_defaults_and_normalized_fields():
    s = Selection()
    assert (s.nodes, s.axes, s.strings) == ("all", "xyz", ())
    assert Selection(2).nodes == 2 and Selection(np.int64(2)).nodes == 2
    assert Selection([3, 2], "zx").nodes == (3, 2)
    assert Selection(range(2)).nodes == (0, 1)
    assert Selection([], strings=[4, 1]).strings == (4, 1)
    assert Selection(2, "z") == Selection(2, "z")
    assert hash(Selection([2, 3])) == hash(Selection((2, 3)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        Selection().axes = "x"


@pytest.mark.parametrize("kwargs, error, match", [
    ({"nodes": "2"}, TypeError, r"Selection: nodes must be 'all', an int or a sequence of ints, "
                                r"got '2'"),
    ({"nodes": [1.5]}, TypeError, r"Selection: nodes must be ints, got 1\.5 in \[1\.5\]"),
    ({"nodes": True}, TypeError, r"Selection: nodes must be a sequence of ints, got True"),
    ({"nodes": [True]}, TypeError, r"Selection: nodes must be ints, got True"),
    ({"nodes": -1}, ValueError, r"Selection: nodes must be >= 0, got -1"),
    ({"nodes": [0, -2]}, ValueError, r"Selection: nodes must be >= 0, got -2"),
    ({"axes": "xw"}, ValueError, r"Selection: axes must be distinct letters from 'xyz', got 'xw'"),
    ({"axes": "xx"}, ValueError, r"axes must be distinct letters from 'xyz', got 'xx'"),
    ({"axes": ""}, ValueError, r"axes must be distinct letters from 'xyz', got ''"),
    ({"axes": "X"}, ValueError, r"axes must be distinct letters from 'xyz', got 'X'"),
    ({"axes": 2}, ValueError, r"axes must be distinct letters from 'xyz', got 2"),
    ({"strings": 3}, TypeError, r"Selection: strings must be a sequence of ints, got 3"),
    ({"strings": "01"}, TypeError, r"Selection: strings must be a sequence of ints, got '01'"),
    ({"strings": [0.0]}, TypeError, r"Selection: strings must be ints, got 0\.0"),
    ({"strings": [-1]}, ValueError, r"Selection: strings must be >= 0, got -1"),
])
def test_invalid_fields_are_named(kwargs, error, match):
    with pytest.raises(error, match=match):
        Selection(**kwargs)


# ---- sums and repr ------------------------------------------------------------------------------


def test_sum_keeps_the_order_and_its_terms():
    s = Selection(3, "x") + Selection(6, "y") + Selection(7, "z")
    assert [(t.nodes, t.axes) for t in s.terms] == [(3, "x"), (6, "y"), (7, "z")]
    assert (s.nodes, s.axes) == (3, "x")          # the first term's
    assert Selection(2).terms == (Selection(2),)
    both = Selection([], strings=[1]) + Selection(2, "z", strings=[0])
    assert both.all_strings == (1, 0)
    assert s == Selection(3, "x") + (Selection(6, "y") + Selection(7, "z"))
    assert s != Selection(3, "x")
    with pytest.raises(TypeError):
        Selection(2) + {"nodes": [3]}


@pytest.mark.parametrize("selection, text", [
    (Selection(nodes=[2, 3], axes="xz"), "Selection(nodes=[2, 3], axes='xz')"),
    (Selection(), "Selection(nodes='all', axes='xyz')"),
    (Selection(4, "y"), "Selection(nodes=4, axes='y')"),
    (Selection([], strings=[0, 1]), "Selection(nodes=[], axes='xyz', strings=[0, 1])"),
    (Selection(3, "x") + Selection(6, "y"),
     "Selection(nodes=3, axes='x') + Selection(nodes=6, axes='y')"),
])
def test_repr_is_one_line_and_evaluates_back(selection, text):
    assert repr(selection) == text and "\n" not in text
    assert eval(text, {"Selection": Selection}) == selection


# ---- coordinates --------------------------------------------------------------------------------


def test_coordinates_in_order_with_fixed_ones_left_out(tbar):
    assert Selection([2, 3], "xz").coordinates(tbar).tolist() == [6, 8, 9, 11]
    assert Selection([3, 2], "zx").coordinates(tbar).tolist() == [11, 9, 8, 6]
    assert Selection().coordinates(tbar).tolist() == [6, 8, 9, 11]
    assert Selection([0, 2]).coordinates(tbar).tolist() == [6, 8]     # node 0 and y2 are fixed
    sel = Selection(3, "x") + Selection(2, "z")
    assert sel.coordinates(tbar).tolist() == [9, 8]
    assert sel.coordinates(tbar).dtype == np.int64
    # string lengths only: no coordinate, and that is allowed
    assert Selection([], strings=[1]).coordinates(tbar).size == 0


@pytest.mark.parametrize("selection, match", [
    (Selection(0), r"hinfsyn: disturbances: every selected coordinate \(nodes \[0\], axes 'xyz'\) "
                   r"is fixed; choose free coordinates"),
    (Selection([2, 3], "y"), r"every selected coordinate \(nodes \[2, 3\], axes 'y'\) is fixed"),
    (Selection(0) + Selection(1, "z"), r"every selected coordinate \(Selection\(nodes=0, "
                                       r"axes='xyz'\) \+ Selection\(nodes=1, axes='z'\)\) is fixed"),
    (Selection(4), r"hinfsyn: disturbances: node 4 is not a node index; the structure has 4 nodes "
                   r"\(indices 0 to 3\)"),
    (Selection(2, "z") + Selection([3, 2], "z"),
     r"coordinate z2 is selected twice in .*; select each coordinate once"),
    (Selection([]), r"Selection\(nodes=\[\], axes='xyz'\) selects nothing"),
])
def test_coordinate_errors_name_the_argument_node_and_fix(tbar, selection, match):
    with pytest.raises(ValueError, match=match):
        selection.coordinates(tbar, "hinfsyn: disturbances")


# ---- check_selection and the public arguments ---------------------------------------------------


@pytest.mark.parametrize("value, hint", [
    ({"nodes": [2, 3], "axes": "xz"}, r"write Selection\(nodes=\[2, 3\], axes='xz'\) for dict"),
    ({"strings": [0, 1]}, r"write Selection\(nodes=\[\], axes='xyz', strings=\[0, 1\]\) for dict"),
    ([(2, "x"), (3, "z")], r"write Selection\(nodes=2, axes='x'\) \+ Selection\(nodes=3, "
                           r"axes='z'\) for list"),
    ((2, "z"), r"write Selection\(nodes=2, axes='z'\) for tuple \(2, 'z'\)"),
    ("fz2", r"write Selection\(nodes=2, axes='z'\) for str 'fz2'"),
    (["fx3", "fy6", "fz7"], r"write Selection\(nodes=3, axes='x'\) \+ Selection\(nodes=6, "
                            r"axes='y'\) \+ Selection\(nodes=7, axes='z'\) for list"),
    ([2, 3], r"e\.g\. Selection\(nodes=\[2, 3\], axes='xz'\), or Selection\(3, 'x'\) \+ "
             r"Selection\(6, 'y'\); got list \[2, 3\]"),
    (12, r"e\.g\. Selection\(nodes=\[2, 3\], axes='xz'\).*; got int 12"),
])
def test_wrong_types_show_the_selection_spelling(value, hint):
    with pytest.raises(TypeError, match=r"^outputs must be a tenscontrol\.Selection[:,] .*" + hint):
        check_selection(value, "outputs")


def test_strings_only_where_allowed():
    sel = Selection([2], "z") + Selection([], strings=[1])
    assert check_selection(sel, "measurements", strings=True) is sel
    assert check_selection(None, "outputs") is None
    with pytest.raises(ValueError, match=r"outputs selects node coordinates only, got string "
                                         r"lengths in .*strings=\[1\]"):
        check_selection(sel, "outputs")


def _zero_gain(structure):
    strings = structure.actuated_strings
    return tc.StateFeedback(np.zeros((strings.size, 6 * structure.n_nodes)),
                            structure.nodes.reshape(-1), strings, np.full(strings.size, 10.0))


def _calls(s):
    """(argument, call taking the bad value) for every public Selection argument."""
    model = tc.linearize(s)
    return [
        ("linearize: outputs", lambda v: tc.linearize(s, outputs=v)),
        ("with_outputs: outputs", lambda v: model.with_outputs(v)),
        ("lqr: outputs", lambda v: tc.lqr(model, outputs=v)),
        ("hinfsyn: disturbances", lambda v: tc.hinfsyn(model, disturbances=v)),
        ("hinfsyn: outputs", lambda v: tc.hinfsyn(model, outputs=v)),
        ("hinfsyn: measurements", lambda v: tc.hinfsyn(model, measurements=v)),
        ("measurement: measurements", lambda v: tc.measurement(s, v)),
        ("verify: outputs", lambda v: tc.verify(s, _zero_gain(s), None, 1.0, outputs=v)),
        ("compare_materials: disturbances", lambda v: tc.compare_materials(s, disturbances=v)),
        ("compare_materials: outputs", lambda v: tc.compare_materials(s, outputs=v)),
        ("compare_closed_loop: disturbances", lambda v: tc.compare_closed_loop(s, disturbances=v)),
        ("compare_closed_loop: outputs", lambda v: tc.compare_closed_loop(s, outputs=v)),
        ("to_iosystem: outputs", lambda v: tc.to_iosystem(s, outputs=v)),
        ("doublet: disturbances", lambda v: tc.doublet(s, v)),
    ]


@pytest.mark.parametrize("value, spelled", [
    ({"nodes": [2, 3], "axes": "xz"}, "Selection(nodes=[2, 3], axes='xz')"),
    ([(2, "z")], "Selection(nodes=2, axes='z')"),
    ("fz2", "Selection(nodes=2, axes='z')"),
])
def test_every_public_selection_argument_rejects_the_old_spellings(prestressed, value, spelled):
    for argument, call in _calls(prestressed):
        with pytest.raises(TypeError) as info:
            call(value)
        message = str(info.value)
        assert message.startswith(f"{argument} must be a tenscontrol.Selection"), message
        assert spelled in message, message


def test_only_measured_signals_take_string_lengths(prestressed):
    # measurements, and the outputs that verify and to_iosystem measure the same way, take
    # string lengths; the outputs and disturbances of linear models are node coordinates
    strings = Selection([], strings=[0])
    for argument, call in _calls(prestressed):
        if argument.endswith("measurements") or argument in ("verify: outputs",
                                                              "to_iosystem: outputs"):
            continue
        with pytest.raises(ValueError, match=f"^{argument} selects node coordinates only"):
            call(strings)
    meas = tc.measurement(prestressed, Selection(2, "z") + strings)
    assert meas.names == ("z2", "l0")
    assert list(tc.to_iosystem(prestressed, outputs=strings).output_labels) == ["l0"]
