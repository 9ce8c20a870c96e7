"""compare_closed_loop: the same LQR procedure on HDPE and aluminium T-bars, compressible bars."""

import numpy as np
import pytest

import tenscontrol as tc


@pytest.fixture(scope="module")
def table():
    tbar = tc.catalog.tbar("stedy", damping=1.0)
    prestressed = tc.equilibrium(tbar, gamma_min=10.0, bars="compressible").structure
    return tc.compare_closed_loop(prestressed, ("hdpe", "aluminium"), t_final=3.0,
                                  t_eval=np.linspace(0, 3.0, 301),
                                  outputs=tc.Selection(nodes=[2, 3], axes="xz"))


def test_each_material_is_designed_and_checked(table):
    assert [r.material for r in table.rows] == ["hdpe", "aluminium"]
    assert table.outputs == ("x2", "z2", "x3", "z3") and table.disturbance == "fz2"
    for row, report in zip(table.rows, table.reports):
        assert report.closed_loop.bars == "compressible"
        assert row.closed_peak < 0.5 * row.open_peak        # the controller works on both
        assert row.slowest_pole.real < 0 and row.slack_time == {}
        assert row.linear_error < 0.05                       # 10 N is a small amplitude here
        # the nonlinear L2 -> L-inf ratio cannot exceed the linear H2 norm by much (linear
        # single-input bound), nor the L2 ratio the H-inf norm
        assert row.peak_ratio <= 1.1 * row.h2 and row.energy_ratio <= 1.1 * row.hinf


def test_heavier_metal_bars_weigh_more_and_the_table_prints(table):
    hdpe, alu = table.rows
    # same radius and length, rho 960 against 2700 kg/m^3 (tenscontrol.model.materials; paper Table 2)
    assert alu.bar_mass / hdpe.bar_mass == pytest.approx(2700 / 960, rel=1e-9)
    text = str(table)
    for label in ("H2 norm, linear", "closed-loop peak [m]", "slack strings", "hdpe",
                  "aluminium"):
        assert label in text


def test_bad_materials_are_named():
    s = tc.catalog.tbar("stedy", damping=1.0)
    with pytest.raises(ValueError, match="non-empty sequence"):
        tc.compare_closed_loop(s, "hdpe")
    with pytest.raises(ValueError, match="unobtainium"):
        tc.compare_closed_loop(s, ("unobtainium",))


def test_old_spellings_are_type_errors_and_one_disturbance_coordinate():
    s = tc.catalog.tbar("stedy", damping=1.0)
    with pytest.raises(TypeError, match=r"compare_closed_loop: outputs must be a tenscontrol\."
                                        r"Selection: write Selection\(nodes=\[2, 3\], axes='xz'\)"):
        tc.compare_closed_loop(s, outputs={"nodes": [2, 3], "axes": "xz"})
    with pytest.raises(TypeError, match=r"compare_closed_loop: disturbances must be a tenscontrol"
                                        r"\.Selection: write Selection\(nodes=2, axes='z'\)"):
        tc.compare_closed_loop(s, disturbances=(2, "z"))
    with pytest.raises(ValueError, match=r"compare_closed_loop: disturbances must select one"):
        tc.compare_closed_loop(s, disturbances=tc.Selection(2, "xz"))
