"""equilibrium(configuration="free") (issue 12 item 2): prestress where the built geometry is a
mechanism under gravity. Every existing test of tests/test_statics.py is unchanged."""

import numpy as np
import pytest

import tenscontrol as tc

G = (0.0, 0.0, -9.806)


def structures():
    return {"icosahedron": tc.catalog.icosahedron(on_face=True),
            "prism": tc.catalog.prism(3, gravity=G),
            "tower": tc.catalog.prism_tower(2, gravity=G)}


@pytest.mark.parametrize("name", ["icosahedron", "prism", "tower"])
def test_free_configuration_meets_the_goal_and_is_an_equilibrium(name):
    s = structures()[name]
    with pytest.raises(tc.PrestressError, match="configuration='free'"):
        tc.equilibrium(s, gamma_min=20.0)
    eq = tc.equilibrium(s, gamma_min=20.0, configuration="free")
    assert eq.configuration == "free" and eq.displacement > 1e-3
    assert eq.gamma.min() >= 20.0 - 1e-9
    qdd, _ = tc.accelerations(eq.structure)
    assert np.abs(qdd).max() <= 1e-9
    again = tc.static_equilibrium(eq.structure)  # the configuration does not move
    assert again.displacement <= 1e-12


def test_fixed_is_the_default_and_unchanged():
    s = tc.catalog.prism(3)
    a, b = tc.equilibrium(s, gamma_min=5.0), tc.equilibrium(s, gamma_min=5.0,
                                                             configuration="fixed")
    assert np.array_equal(a.gamma, b.gamma) and a.configuration == "fixed"
    with pytest.raises(ValueError, match="configuration must be"):
        tc.equilibrium(s, configuration="sag")


@pytest.mark.slow
def test_simulation_started_at_the_free_equilibrium_stays():
    eq = tc.equilibrium(tc.catalog.prism(3, gravity=G), gamma_min=20.0, configuration="free")
    traj = tc.simulate(eq.structure, 2.0)
    assert np.linalg.norm(traj.nodes - eq.structure.nodes, axis=2).max() <= 1e-9
