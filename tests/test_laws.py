"""The member laws (tenscontrol.mechanics.laws): values by hand, the slack rule at and around
the rest length, derivatives by central differences, the compiled and numpy forms in agreement,
and the kernels' force densities equal to the laws'."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tenscontrol as tc
from tenscontrol.mechanics import laws as L
from depth import examples

QUICK = settings(max_examples=examples(200), deadline=None, database=None)

# a string of k = 200 N/m, l0 = 0.9 m at l = 1.2 m, a damper c = 3 N s/m with s . sd = 0.6 m^2/s
K, L0, LEN, C, SDOT = 200.0, 0.9, 1.2, 3.0, 0.6


def test_values_by_hand():
    # gamma = 200 (1 - 0.9/1.2) = 50 N/m; k l0 / l^3 = 180 / 1.728; k l0 / l^2 = 180 / 1.44
    assert L.elastic_densities(K, L0, LEN) == pytest.approx(50.0, rel=1e-15)
    assert L.string_densities(K, L0, LEN, False) == pytest.approx(50.0, rel=1e-15)
    assert L.material_coefficients(K, L0, LEN) == pytest.approx(180.0 / 1.728, rel=1e-15)
    assert L.density_slopes(K, L0, LEN) == pytest.approx(125.0, rel=1e-15)
    # 1/2 200 0.3^2 = 9 J; tension 50 * 1.2 = 200 * 0.3 = 60 N
    assert L.string_energies(K, L0, LEN, False) == pytest.approx(9.0, rel=1e-14)
    assert L.string_tensions(K, L0, LEN, False) == pytest.approx(60.0, rel=1e-14)
    # damper: 3 * 0.6 / 1.44 = 1.25 N/m; dissipation 3 * 0.36 / 1.44 = 0.75 W
    assert L.damper_densities(C, SDOT, LEN**2) == pytest.approx(1.25, rel=1e-15)
    assert L.damper_dissipations(C, SDOT, LEN**2) == pytest.approx(0.75, rel=1e-15)
    # the inversions: l0 at gamma = 50 N/m
    assert L.rest_length_at_stiffness(K, LEN, 50.0) == pytest.approx(L0, rel=1e-15)
    EA = K * L0   # k = EA / l0
    assert L.rest_length_at_modulus(EA, LEN, 50.0) == pytest.approx(L0, rel=1e-15)


def test_slack_rule_at_and_around_the_rest_length():
    below, above = np.nextafter(L0, 0.0), np.nextafter(L0, 2.0)
    lengths = np.array([below, L0, above])
    string = L.active_set(lengths, L0, False)
    assert string.tolist() == [False, False, True]       # exactly at rest: slack
    gamma = L.string_densities(K, L0, lengths, False)
    assert gamma[0] == 0.0 and gamma[1] == 0.0 and 0.0 < gamma[2] < 1e-12 * K
    assert L.string_energies(K, L0, lengths, False)[:2].tolist() == [0.0, 0.0]
    assert L.string_tensions(K, L0, lengths, False)[:2].tolist() == [0.0, 0.0]
    for l, active in zip(lengths, [False, False, True]):
        assert L.is_active(l, L0, False) is active
        assert (L.string_density(K, L0, l, False) > 0.0) is active


def test_springs_are_two_sided():
    lengths = np.array([0.5, L0, 1.5])
    assert L.active_set(lengths, L0, True).all()
    gamma = L.string_densities(K, L0, lengths, True)
    assert gamma[0] < 0.0 and gamma[1] == 0.0 and gamma[2] > 0.0   # pushes when short
    assert L.string_tensions(K, L0, 0.5, True) == pytest.approx(K * (0.5 - L0))
    assert L.string_energies(K, L0, 0.5, True) == pytest.approx(0.5 * K * 0.4**2)
    assert all(L.is_active(l, L0, True) for l in lengths)
    assert L.string_density(K, L0, 0.5, True) == gamma[0]


def test_a_nan_length_is_active_so_that_nan_reaches_the_forces():
    assert L.active_set(np.nan, L0, False)
    assert L.is_active(np.nan, L0, False)
    assert np.isnan(L.string_densities(K, L0, np.nan, False))
    assert np.isnan(L.string_density(K, L0, np.nan, False))


def _central(f, x, h):
    return (f(x + h) - f(x - h)) / (2.0 * h)


@pytest.mark.parametrize("l", [0.95, 1.2, 3.0])
def test_derivatives_by_central_differences(l):
    h = 1e-5 * l
    # d gamma / dl; the potential's derivative is the tension gamma l
    assert L.density_slopes(K, L0, l) == pytest.approx(
        _central(lambda x: L.elastic_densities(K, L0, x), l, h), rel=1e-8)
    assert L.string_tensions(K, L0, l, False) == pytest.approx(
        _central(lambda x: L.string_energies(K, L0, x, False), l, h), rel=1e-8)
    # material coefficient: d gamma / dq = (k l0 / l^3) s^T on node j's coordinates
    s = l * np.array([0.6, -0.48, 0.64])                    # |s| = l
    grad = [_central(lambda x: L.elastic_densities(K, L0, np.linalg.norm(s + x * e)), 0.0,
                     1e-6) for e in np.eye(3)]
    np.testing.assert_allclose(grad, L.material_coefficients(K, L0, l) * s, rtol=1e-7)
    # the damper force density c ldot / l and its dissipation c ldot^2, ldot by differences
    sd = np.array([0.3, 0.1, 0.2])
    ldot = _central(lambda t: np.linalg.norm(s + t * sd), 0.0, 1e-5)
    assert L.damper_densities(C, s @ sd, s @ s) == pytest.approx(C * ldot / l, rel=1e-8)
    assert L.damper_dissipations(C, s @ sd, s @ s) == pytest.approx(C * ldot**2, rel=1e-8)


@given(k=st.floats(1e-3, 1e7), l0=st.floats(1e-3, 1e2), stretch=st.floats(0.2, 5.0))
@QUICK
def test_the_inversions_give_the_force_density_back(k, l0, stretch):
    l = l0 * stretch
    gamma = L.elastic_densities(k, l0, l)
    assert L.rest_length_at_stiffness(k, l, gamma) == pytest.approx(l0, rel=1e-9)
    EA = k * l0
    assert L.rest_length_at_modulus(EA, l, gamma) == pytest.approx(l0, rel=1e-9)


members = dict(k=st.floats(1e-3, 1e7), l0=st.floats(1e-3, 1e2),
               stretch=st.one_of(st.just(1.0), st.floats(0.2, 5.0)), spring=st.booleans(),
               c=st.floats(0.0, 1e3), rate=st.floats(-1e2, 1e2))


@given(**members)
@QUICK
def test_compiled_and_numpy_forms_agree(k, l0, stretch, spring, c, rate):
    l = l0 * stretch
    l2 = l * l
    sdot = rate * l2
    assert L.is_active(l, l0, spring) == bool(L.active_set(l, l0, spring))
    assert L.elastic_density(k, l0, l) == L.elastic_densities(k, l0, l)
    assert L.string_density(k, l0, l, spring) == L.string_densities(k, l0, l, spring)
    # the same code, but LLVM may contract a product and a sum into one fused multiply-add
    # (measured: 637.4557652617885 against ...884, one ulp), so the products agree to rounding
    ulps = dict(rel=4 * np.finfo(float).eps, abs=0.0)
    assert L.elastic_energy(k, l0, l) == pytest.approx(L.elastic_energies(k, l0, l), **ulps)
    assert L.string_energy(k, l0, l, spring) == pytest.approx(
        L.string_energies(k, l0, l, spring), **ulps)
    assert L.damper_density(c, sdot, l2) == pytest.approx(L.damper_densities(c, sdot, l2), **ulps)
    assert L.damper_dissipation(c, sdot, l2) == pytest.approx(
        L.damper_dissipations(c, sdot, l2), **ulps)
    # the compiled form forms l^3 as l2 l (the kernels' rounding): a few ulp apart
    assert L.material_coefficient(k, l0, l, l2) == pytest.approx(
        L.material_coefficients(k, l0, l), rel=8 * np.finfo(float).eps)


def test_numpy_forms_work_member_by_member():
    rng = np.random.default_rng(7)
    k, l0 = rng.uniform(10.0, 1e3, 50), rng.uniform(0.5, 2.0, 50)
    l = l0 * rng.choice([0.8, 1.0, 1.3], 50)
    spring = rng.random(50) < 0.3
    gamma = L.string_densities(k, l0, l, spring)
    assert gamma.shape == (50,)
    assert gamma.tolist() == [L.string_density(*a) for a in zip(k, l0, l, spring)]


def test_the_kernels_follow_the_laws():
    # the stedy T-bar's top string sits exactly at its rest length (slack), its sides are taut;
    # the compiled rigid kernel and the numpy laws give the same force densities bit for bit
    s = tc.catalog.tbar("stedy")
    gamma = tc.force_densities(s)
    law = L.string_densities(s.string_stiffness, s.string_rest_lengths, s.string_lengths,
                             s.string_is_spring)
    assert gamma.tolist() == law.tolist()
    assert (gamma == 0.0).any() and (gamma > 0.0).any()
    # the compressible kernel's bar force densities (bars 1 % longer than their rest length)
    b = s.with_bars(rest_length=0.99 * s.bar_lengths)
    _, psi = tc.accelerations(b, bars="compressible")
    law = L.elastic_densities(b.bar_stiffness, b.bar_rest_lengths, b.bar_lengths)
    assert psi.tolist() == law.tolist() and (psi > 0.0).all()
