"""The Structure.with_* methods: new validated structures, the old one unchanged."""

import numpy as np
import pytest

import tenscontrol as tc


@pytest.fixture(scope="module")
def tbar():
    return tc.catalog.tbar("stedy", damping=1.0)


def test_with_bars_material_resets_the_preset_properties(tbar):
    soft = tbar.with_bars(material="hdpe")
    hdpe = tc.materials.material("hdpe")
    assert [b.density for b in soft.bars] == [hdpe.density] * tbar.n_bars
    assert [b.youngs_modulus for b in soft.bars] == [hdpe.youngs_modulus] * tbar.n_bars
    # given in the same call, a property overrides the preset's
    dense = tbar.with_bars(material="hdpe", density=1000.0)
    assert [b.density for b in dense.bars] == [1000.0] * tbar.n_bars
    assert tbar.bars[0].density == 500.0            # the original is untouched


def test_with_bars_per_member_values_and_selection(tbar):
    thick = tbar.with_bars([1], radius=0.07)
    assert [b.radius for b in thick.bars] == [0.05, 0.07]
    np.testing.assert_allclose(thick.bar_masses[1] / tbar.bar_masses[1], (0.07 / 0.05) ** 2)
    both = tbar.with_bars(radius=[0.01, 0.02])
    assert [b.radius for b in both.bars] == [0.01, 0.02]


def test_with_strings_rest_length_replaces_the_fraction(tbar):
    l0 = tbar.string_rest_lengths * 0.95
    short = tbar.with_strings(rest_length=l0)
    np.testing.assert_array_equal(short.string_rest_lengths, l0)
    assert all(s.rest_fraction is None for s in short.strings)
    back = short.with_strings(rest_fraction=[s.rest_fraction for s in tbar.strings])
    np.testing.assert_allclose(back.string_rest_lengths, tbar.string_rest_lengths, rtol=1e-15)


def test_with_strings_stiffness_replaces_the_modulus(tbar):
    springy = tbar.with_strings([0, 2], stiffness=123.0, kind="spring")
    assert springy.string_stiffness[0] == springy.string_stiffness[2] == 123.0
    assert springy.strings[0].youngs_modulus is None
    assert springy.string_is_spring.tolist() == [True, False, True, False]
    np.testing.assert_array_equal(springy.string_stiffness[[1, 3]], tbar.string_stiffness[[1, 3]])


def test_with_nodes_keeps_the_rest_lengths_unless_asked(tbar):
    moved = tbar.with_nodes(tbar.nodes * 1.01)
    np.testing.assert_array_equal(moved.nodes, tbar.nodes * 1.01)
    np.testing.assert_allclose(moved.string_rest_lengths, tbar.string_rest_lengths, rtol=1e-15)
    np.testing.assert_allclose(moved.bar_rest_lengths, tbar.bar_rest_lengths, rtol=1e-15)
    redesigned = tbar.with_nodes(tbar.nodes * 1.01, keep_rest_lengths=False)
    np.testing.assert_allclose(redesigned.string_rest_lengths, tbar.string_rest_lengths * 1.01,
                               rtol=1e-14)


def test_with_gravity_fixed_and_point_masses(tbar):
    assert tbar.with_gravity((0, 0, -9.81)).gravity.tolist() == [0.0, 0.0, -9.81]
    loose = tbar.with_fixed({0: "xyz"})
    assert len(loose.fixed_coordinates) == 3
    heavy = tbar.with_point_masses([tc.PointMass(2, 1.5)])
    assert heavy.total_mass == pytest.approx(tbar.total_mass + 1.5)


@pytest.mark.parametrize("edit, match", [
    (lambda s: s.with_strings([9], damping=1.0), r"which: string 9 does not exist; the "
                                                  r"structure has 4 strings"),
    (lambda s: s.with_strings(damping=[1.0, 2.0]), r"damping: got 2 values for 4 selected"),
    (lambda s: s.with_strings(damping=-1.0), r"string 0 \(nodes 0->1\): damping must be >= 0"),
    (lambda s: s.with_bars("0", radius=0.1), r"which: expected bar indices"),
    (lambda s: s.with_bars(material="unobtainium"), r"bar 0 \(nodes 0->2\): .*unobtainium"),
    (lambda s: s.with_nodes(np.zeros((3, 3))), r"nodes|bar|string"),
])
def test_bad_edits_name_the_field_and_member(tbar, edit, match):
    with pytest.raises(ValueError, match=match):
        edit(tbar)
