"""linear.modal.eigenspaces: the one clustering of eigenvalues into eigenspaces, shared by the
actuator placement's modal index and the sensors' observability rank (issue 32, item 4)."""

import numpy as np
import pytest
import scipy.linalg

import tenscontrol as tc
from tenscontrol.estimation.rank import observed_rank, scaled_elastic
from tenscontrol.linear.modal import CLUSTER, eigenspaces


def oscillator(w: float, c: float) -> np.ndarray:
    return np.array([[0.0, 1.0], [-w * w, -c]])


def test_a_double_mode_split_by_round_off_is_one_space():
    # two oscillators at 2 rad/s, one detuned by 1e-9 (far below 1e-6 ||A||), and one at 5
    A = scipy.linalg.block_diag(oscillator(2.0, 0.01), oscillator(2.0 + 1e-9, 0.01),
                                oscillator(5.0, 0.01))
    lam, V, groups = eigenspaces(A)
    np.testing.assert_allclose(A @ V, V * lam[None, :], atol=1e-12)
    assert sorted(len(g) for g in groups) == [1, 1, 2, 2]      # each sign of Im: one space
    assert sorted(np.concatenate(groups).tolist()) == list(range(6))
    for g in groups:
        assert np.ptp(lam[g].real) + np.ptp(lam[g].imag) <= CLUSTER * np.linalg.norm(A)
    # detuned by more than the radius: four spaces of one
    far = scipy.linalg.block_diag(oscillator(2.0, 0.01), oscillator(2.1, 0.01))
    assert [len(g) for g in eigenspaces(far)[2]] == [1, 1, 1, 1]


@pytest.fixture(scope="module")
def prism():
    s = tc.equilibrium(tc.catalog.prism(3, damping=1.0), gamma_min=10.0).structure
    return s, tc.linearize(s, outputs=tc.Selection(nodes=[3, 4, 5]))


def test_placement_and_rank_are_unchanged_by_the_shared_routine(prism):
    # measured at commit 46875f1, before placement.py and rank.py shared eigenspaces (each had
    # its own copy of the loop): the same figures to the last bit
    s, model = prism
    p = tc.place_actuators(model, 4, criterion="modal")
    assert p.strings == (7, 8, 6, 3)
    assert p.figure == pytest.approx(0.7300429158761468, rel=1e-12)
    assert p.history[0] == pytest.approx(4.1661857742865856e-05, rel=1e-9)
    ss = tc.sensors(s, string_lengths=range(9), std=1e-3, rate=200.0)
    assert observed_rank(*scaled_elastic(model, ss, "test")) == 12


def test_the_3_prisms_double_modes_are_one_space_each(prism):
    # the 3-prism's modes at 57.52 and 154.2 rad/s are double (symmetry): their eigenvalues
    # share a space, so the placement index does not depend on the solver's eigenvectors
    design = tc.lqr(prism[1])
    lam, _, groups = eigenspaces(design.minimal.sys.A)
    sizes = {round(float(abs(lam[g[0]])), 1): len(g) for g in groups if lam[g[0]].imag > 0}
    assert sizes[57.5] == 2 and sizes[154.2] == 2 and sizes[8.5] == 1
