"""Closed-loop simulation: controllers, actuators (clipping, nodal forces), records, the Radau
Jacobian with a controller, to_iosystem and verify().

Operating point throughout: the damped STEDY T-bar prestressed to gamma_min = 10 N/m
(``equilibrium(tbar, gamma_min=10)``), where every string carries exactly 10 N/m. The LQR gain
is built here by hand from python-control (not from ``tenscontrol.lqr``) on the minimal
realization of the passive actuated model: Q = basis^T basis (state cost in physical units),
R = 1e-3 I, K = K_r left_inverse.
"""

import dataclasses

import matplotlib

matplotlib.use("Agg")

import control  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import scipy.integrate  # noqa: E402
import scipy.interpolate  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import tenscontrol as tc  # noqa: E402
from tenscontrol.simulation import models  # noqa: E402
from tenscontrol.simulation import simulator  # noqa: E402
from tenscontrol.simulation.actuation import Actuators, ClosedLoop  # noqa: E402
from tenscontrol.control.controllers import (Controller, OutputFeedback, StateFeedback,  # noqa: E402
                                     measurement)
from tenscontrol.simulation.iosystem import to_iosystem  # noqa: E402
from tenscontrol.studies.verification import verify  # noqa: E402

GAMMA = 10.0          # prestress of every string at the operating point [N/m]
NODE, AXIS = 2, 2     # the loaded and watched coordinate: node 2 along z


# ---------------------------------------------------------------- fixtures and helpers

def _lqr(structure, bars="rigid"):
    """Hand-built LQR StateFeedback about the structure's nodes (passive, actuated strings)."""
    model = tc.linearize(structure, kind="passive", bars=bars).actuated()
    mr = tc.minimal_realization(model)
    nu = model.B.shape[1]
    Kr, _, _ = control.lqr(mr.sys.A, mr.sys.B[:, :nu], mr.basis.T @ mr.basis,
                           1e-3 * np.eye(nu))
    strings = structure.actuated_strings
    return StateFeedback(np.asarray(Kr) @ mr.left_inverse, structure.nodes.reshape(-1), strings,
                         model.gamma[strings], "passive")


@pytest.fixture(scope="module")
def tbar():
    s = tc.catalog.tbar("stedy", damping=1.0)
    return tc.equilibrium(s, gamma_min=GAMMA).structure


@pytest.fixture(scope="module")
def lqr(tbar):
    return _lqr(tbar)


def _zero_gain(structure, kind="passive"):
    strings = structure.actuated_strings
    nq = structure.nodes.size
    return StateFeedback(np.zeros((strings.size, 2 * nq)), structure.nodes.reshape(-1), strings,
                         np.full(strings.size, GAMMA), kind)


def _doublet(structure, amplitude):
    return tc.doublet(structure, tc.Selection(NODE, "z"), amplitude)


def _peak(traj, structure):
    return np.abs(traj.nodes[:, NODE, AXIS] - structure.nodes[NODE, AXIS]).max()


class Constant(Controller):
    """A static law: the same force-density change on every commanded string."""

    def __init__(self, structure, value, kind="passive"):
        self.strings = structure.actuated_strings
        self.gamma_ref = np.full(self.strings.size, GAMMA)
        self.kind = kind
        self.value = value

    def force_densities(self, t, q, qd, xc):
        return np.full(self.strings.size, self.value)


def test_operating_point_is_prestressed(tbar):
    # the premise of every reference value below: all four strings at 10 N/m, all actuated
    law = Actuators(tbar, tbar.actuated_strings, np.zeros(4), "passive").law(
        tbar.nodes.reshape(-1))[1]
    np.testing.assert_allclose(law, GAMMA, rtol=1e-9)
    np.testing.assert_array_equal(tbar.actuated_strings, [0, 1, 2, 3])


# ---------------------------------------------------------------- 1. zero gain = open loop

def test_zero_gain_equals_open_loop(tbar):
    t_eval = np.linspace(0.0, 2.0, 41)
    force = _doublet(tbar, 10.0)
    ol = tc.simulate(tbar, 2.0, loads=force, t_eval=t_eval, max_step=0.02)
    cl = tc.simulate(tbar, 2.0, loads=force, t_eval=t_eval, max_step=0.02,
                     controller=_zero_gain(tbar))
    assert ol.control is None
    # u = 0 adds a zero nodal force: the same arithmetic, hence the same trajectory
    assert np.abs(cl.nodes - ol.nodes).max() <= 1e-12
    assert np.abs(cl.velocities - ol.velocities).max() <= 1e-12
    assert np.abs(cl.work - ol.work).max() <= 1e-12
    c = cl.control
    np.testing.assert_array_equal(c.t, t_eval)
    np.testing.assert_array_equal(c.strings, tbar.actuated_strings)
    assert c.u.shape == (41, 4) and np.all(c.u == 0.0)
    # passive kind: commanded = applied = elastic law; at t = 0 that is the prestress
    np.testing.assert_allclose(c.applied[0], GAMMA, rtol=1e-9)
    np.testing.assert_array_equal(c.applied, c.commanded)
    assert not c.slack.any() and not c.saturated.any()
    assert np.all(c.slack_time == 0) and np.all(np.isnan(c.first_slack()))
    assert c.controller_states.shape == (41, 0)


def test_zero_gain_at_rest_records_prestress(tbar):
    # without a load the structure stays at its equilibrium, so applied == 10 N/m throughout
    traj = tc.simulate(tbar, 0.5, t_eval=np.linspace(0, 0.5, 6), controller=_zero_gain(tbar))
    np.testing.assert_allclose(traj.control.applied, GAMMA, rtol=1e-9)
    assert np.all(traj.control.u == 0.0)
    assert not traj.control.slack.any()


# ---------------------------------------------------------------- 2. energy balance

def test_closed_loop_energy_balance_with_correction(tbar, lqr):
    traj = tc.simulate(tbar, 3.0, loads=_doublet(tbar, 10.0), controller=lqr, max_step=0.01)
    assert traj.correction == "energy"
    assert np.abs(traj.energy_violation).max() < 1e-8
    assert np.abs(traj.bar_violation).max() < 1e-10
    # the controller did work: it is part of w (else the energy balance above would be off)
    assert np.abs(traj.control.u).max() > 0.1


def test_closed_loop_energy_balance_without_correction(tbar, lqr):
    kw = dict(loads=_doublet(tbar, 10.0), max_step=0.01, rtol=1e-10, atol=1e-10)
    raw = tc.simulate(tbar, 3.0, correction="none", controller=lqr, **kw)
    assert raw.stats.correction_iterations == 0
    # only the integrator's error remains; the work integral includes the actuators' work
    assert np.abs(raw.energy_violation).max() < 1e-6
    # and the actuators' work is not negligible: the open-loop run on the same load does
    # different work by far more than that tolerance
    ol = tc.simulate(tbar, 3.0, correction="none", **kw)
    assert abs(ol.work[-1] - raw.work[-1]) > 1e-3


# ---------------------------------------------------------------- 3. peak reduction

def test_lqr_reduces_peak_deflection(tbar, lqr):
    t_eval = np.linspace(0.0, 4.0, 401)
    kw = dict(loads=_doublet(tbar, 10.0), t_eval=t_eval, max_step=0.01)
    ol = tc.simulate(tbar, 4.0, **kw)
    cl = tc.simulate(tbar, 4.0, controller=lqr, **kw)
    p_open, p_closed = _peak(ol, tbar), _peak(cl, tbar)
    assert p_open == pytest.approx(0.235, rel=0.01)              # measured 0.2350 m
    assert p_closed / p_open == pytest.approx(0.122, abs=0.01)   # measured 0.0286 m: 88 % lower
    assert not cl.control.slack.any()


# ---------------------------------------------------------------- 4. clipping

def test_negative_command_makes_strings_slack(tbar):
    t_eval = np.linspace(0.0, 0.5, 51)
    load = _doublet(tbar, 10.0)
    traj = tc.simulate(tbar, 0.5, t_eval=t_eval, loads=load, controller=Constant(tbar, -50.0))
    c = traj.control
    # law <= k (1 - l0/l) stays far below 50 N/m here, so every command is negative
    assert np.all(c.commanded < 0)
    assert c.slack.all()
    np.testing.assert_array_equal(c.applied, 0.0)
    np.testing.assert_allclose(c.slack_time, 0.5, rtol=1e-12)
    np.testing.assert_array_equal(c.first_slack(), 0.0)
    assert not c.saturated.any()
    # the catalog T-bar has no gravity; under the load the free bars swing further than
    # the prestressed ones (strings in the dynamics really removed)
    ol = tc.simulate(tbar, 0.5, t_eval=t_eval, loads=load)
    assert _peak(traj, tbar) > 1.1 * _peak(ol, tbar)   # measured 0.091 vs 0.073 m
    # the strings' pull is removed, not reversed: total energy still balances
    assert np.abs(traj.energy_violation).max() < 1e-8


def test_commanded_slack_strings_carry_no_damper_force(tbar):
    # with every string slack no string force acts, so the strings' damping cannot matter:
    # the damped (c = 1 N s/m) and undamped T-bars must move alike (measured: 2.4e-3 m apart
    # after 0.5 s, and 0.1 J more dissipated in the damped one)
    undamped = tc.equilibrium(tc.catalog.tbar("stedy", damping=0.0), gamma_min=GAMMA).structure
    np.testing.assert_array_equal(undamped.nodes, tbar.nodes)
    np.testing.assert_array_equal(undamped.string_rest_lengths, tbar.string_rest_lengths)
    t_eval = np.linspace(0.0, 0.5, 51)
    load = _doublet(tbar, 10.0)
    damped = tc.simulate(tbar, 0.5, t_eval=t_eval, loads=load, controller=Constant(tbar, -50.0))
    free = tc.simulate(undamped, 0.5, t_eval=t_eval, loads=load,
                       controller=Constant(undamped, -50.0))
    assert damped.control.slack.all() and free.control.slack.all()
    assert np.abs(damped.nodes - free.nodes).max() < 1e-9


def _with_gamma_max(structure, gamma_max):
    strings = tuple(dataclasses.replace(s, gamma_max=gamma_max) for s in structure.strings)
    return dataclasses.replace(structure, strings=strings)


def test_large_command_saturates_at_gamma_max(tbar):
    capped = _with_gamma_max(tbar, 12.0)
    np.testing.assert_array_equal(capped.string_gamma_max, 12.0)
    t_eval = np.linspace(0.0, 0.5, 51)
    traj = tc.simulate(capped, 0.5, t_eval=t_eval, controller=Constant(capped, 50.0))
    c = traj.control
    assert np.all(c.applied <= 12.0)
    np.testing.assert_allclose(c.applied, 12.0)  # 10 + 50 is way above the cap everywhere
    assert c.saturated.all()
    assert np.all(c.saturated_time > 0)
    np.testing.assert_allclose(c.saturated_time, 0.5, rtol=1e-12)
    assert not c.slack.any()
    # the cap holds in the dynamics too: the run equals a zero-gain run with applied 12 N/m,
    # i.e. a "control" kind command of +2 N/m on the uncapped structure
    ref = tc.simulate(tbar, 0.5, t_eval=t_eval, controller=Constant(tbar, 2.0, kind="control"))
    assert np.abs(traj.nodes - ref.nodes).max() < 1e-9


def test_actuator_nodal_force_by_hand(tbar):
    rng = np.random.default_rng(3)
    q = tbar.nodes.reshape(-1) + 0.05 * rng.standard_normal(12) * ~tbar.fixed.reshape(-1)
    u = np.array([1.5, -3.0, 40.0, -200.0])
    acts = Actuators(tbar, tbar.actuated_strings, np.full(4, GAMMA), "passive")
    f, applied, cmd = acts.apply(q, u)
    N = q.reshape(-1, 3)
    expected = np.zeros((4, 3))
    for c, k in enumerate(tbar.actuated_strings):
        i, j = tbar.string_nodes[k]
        s = N[j] - N[i]
        length = np.linalg.norm(s)
        st = tbar.strings[k]
        l0 = tbar.string_rest_lengths[k]
        law = tbar.string_stiffness[k] * (1 - l0 / length) if length > l0 else 0.0
        assert st.kind == "string"
        assert cmd[c] == pytest.approx(law + u[c], rel=1e-12)
        want = min(max(law + u[c], 0.0), np.inf)
        assert applied[c] == pytest.approx(want, rel=1e-12, abs=1e-12)
        # a string of force density g pulls node i towards j with g s: the extra part of it
        expected[i] += (want - law) * s
        expected[j] -= (want - law) * s
    np.testing.assert_allclose(f.reshape(4, 3), expected, rtol=1e-12, atol=1e-12)
    assert applied[3] == 0.0                     # -200 N/m cannot be applied: slack
    # the same in the "control" kind: commanded = gamma_ref + u regardless of the law
    _, applied_c, cmd_c = Actuators(tbar, [2], [GAMMA], "control").apply(q, np.array([-4.0]))
    assert cmd_c[0] == pytest.approx(6.0) and applied_c[0] == pytest.approx(6.0)


# ---------------------------------------------------------------- 5. kind="control" at rest

def test_control_kind_zero_gain_stays_at_rest(tbar):
    ctrl = _zero_gain(tbar, kind="control")
    traj = tc.simulate(tbar, 1.0, t_eval=np.linspace(0, 1, 21), controller=ctrl)
    assert np.abs(traj.nodes - tbar.nodes).max() < 1e-9
    np.testing.assert_allclose(traj.control.commanded, GAMMA, rtol=1e-12)
    np.testing.assert_allclose(traj.control.applied, GAMMA, rtol=1e-12)


def test_control_kind_holds_force_density_under_load(tbar):
    # kind "control" replaces the elastic law by gamma_ref + u: with zero gain the strings
    # carry 10 N/m whatever their length, so the response differs from the passive one
    t_eval = np.linspace(0, 2, 41)
    kw = dict(loads=_doublet(tbar, 10.0), t_eval=t_eval, max_step=0.02)
    passive = tc.simulate(tbar, 2.0, **kw)
    held = tc.simulate(tbar, 2.0, controller=_zero_gain(tbar, kind="control"), **kw)
    np.testing.assert_allclose(held.control.applied, GAMMA, rtol=1e-12)
    assert np.abs(held.nodes - passive.nodes).max() > 1e-3
    assert np.abs(held.energy_violation).max() < 1e-8


# ---------------------------------------------------------------- 6. output feedback

def _output_feedback(structure, BK_scale, seed=0, cls=OutputFeedback):
    meas = measurement(structure, tc.Selection(nodes=[2, 3], axes="xz"))
    rng = np.random.default_rng(seed)
    AK = -5.0 * np.eye(2)
    BK = BK_scale * rng.standard_normal((2, 4))
    CK = 0.5 * rng.standard_normal((4, 2))
    DK = np.zeros((4, 4))
    strings = structure.actuated_strings
    return cls(AK, BK, CK, DK, meas, strings, np.full(4, GAMMA), "passive")


def test_output_feedback_states_follow_their_ode(tbar):
    ctrl = _output_feedback(tbar, 20.0)
    assert ctrl.measurement.names == ("x2", "z2", "x3", "z3")
    t_eval = np.linspace(0.0, 1.0, 1001)

    def load(t, q, qd):
        f = np.zeros((4, 3))
        f[NODE, AXIS] = 5.0 * np.sin(4.0 * t)
        return f

    traj = tc.simulate(tbar, 1.0, loads=load, t_eval=t_eval, controller=ctrl)
    xc = traj.control.controller_states
    assert xc.shape == (1001, 2)
    assert np.abs(xc).max() > 1e-3           # the states are driven
    # y_m from the recorded positions, and xc' = AK xc + BK y_m integrated independently
    ym = np.array([ctrl.measurement(q) for q in traj.nodes.reshape(1001, -1)])
    spline = scipy.interpolate.CubicSpline(t_eval, ym)
    sol = scipy.integrate.solve_ivp(lambda t, x: ctrl.AK @ x + ctrl.BK @ spline(t), (0, 1),
                                    np.zeros(2), t_eval=t_eval, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(xc, sol.y.T, rtol=0, atol=1e-4 * np.abs(xc).max())
    # the command is u = -(CK xc + DK y_m) = -CK xc (DK = 0), negative feedback, as recorded
    np.testing.assert_allclose(traj.control.u, -xc @ ctrl.CK.T, rtol=1e-12, atol=1e-14)


class _Started(OutputFeedback):
    """An OutputFeedback that starts from a nonzero internal state."""

    def initial_state(self):
        return np.array([1.0, -2.0])


def test_output_feedback_states_decay_from_initial_state(tbar):
    ctrl = _output_feedback(tbar, 0.0, cls=_Started)
    t_eval = np.linspace(0.0, 1.0, 11)
    traj = tc.simulate(tbar, 1.0, t_eval=t_eval, controller=ctrl)
    xc = traj.control.controller_states
    # with BK = 0: xc(t) = exp(-5 t) xc(0), exactly up to the integrator's tolerance
    expected = np.exp(-5.0 * t_eval)[:, None] * np.array([1.0, -2.0])
    np.testing.assert_allclose(xc, expected, rtol=1e-7, atol=1e-10)
    # the decaying command -CK xc moved the structure
    assert _peak(traj, tbar) > 1e-6


# ---------------------------------------------------------------- 7. compressible bars

@pytest.fixture(scope="module")
def compressible():
    s = tc.catalog.tbar("stedy", damping=1.0)
    st = tc.equilibrium(s, gamma_min=GAMMA, bars="compressible").structure
    return st, _lqr(st, bars="compressible")


@pytest.mark.slow
def test_compressible_closed_loop_reduces_peak(compressible):
    st, ctrl = compressible
    t_eval = np.linspace(0.0, 1.0, 101)
    kw = dict(bars="compressible", rtol=1e-8, atol=1e-8, loads=_doublet(st, 10.0),
              t_eval=t_eval, max_step=0.01)
    ol = tc.simulate(st, 1.0, **kw)
    cl = tc.simulate(st, 1.0, controller=ctrl, **kw)
    assert cl.stats.integrator == "radau5" and cl.bars == "compressible"
    assert cl.control.u.shape == (101, 4)
    # the controller's coupling comes from central differences: counted, not warned
    assert cl.stats.finite_difference_jacobians == cl.stats.jacobian_evaluations > 0
    assert ol.stats.finite_difference_jacobians == 0
    assert _peak(cl, st) < _peak(ol, st)
    # compressible bars: the energy balance holds at the integrator's tolerance
    assert np.abs(cl.energy_violation).max() < 1e-5


@pytest.mark.slow
def test_banded_closed_loop_counts_its_dense_jacobians(compressible):
    st, ctrl = compressible
    tr = tc.simulate(st, 0.05, bars="compressible", controller=ctrl, linear_algebra="banded",
                     loads=_doublet(st, 10.0))
    s = tr.stats
    assert s.linear_algebra == "banded"
    assert s.dense_jacobians == s.finite_difference_jacobians == s.jacobian_evaluations > 0


def _compressible_run(structure, controller, loads=None):
    n = structure.n_nodes
    run = models.CompressibleRun(structure, "consistent", False)
    loop = ClosedLoop(structure, controller)
    y0 = np.concatenate([simulator._initial_state(structure, None, ()), loop.xc0])
    fext = simulator._with_control(simulator._force_function(loads, n), loop)
    run.start(y0, fext, loop)
    return run, y0


def _fd_jacobian(fun, t, y):
    """Central differences of fun(t, y) (m,) with respect to y (n,): shape (m, n)."""
    J = np.zeros((fun(t, y).size, y.size))
    for c in range(y.size):
        h = 1e-6 * max(1.0, abs(y[c]))
        yp, ym = y.copy(), y.copy()
        yp[c] += h
        ym[c] -= h
        J[:, c] = (fun(t, yp) - fun(t, ym)) / (2 * h)
    return J


@pytest.mark.parametrize("which", ["lqr", "output"])
def test_compressible_jacobian_with_controller(compressible, which):
    st, ctrl = compressible
    if which == "output":
        ctrl = _output_feedback(st, 20.0)
    run, y0 = _compressible_run(st, ctrl)
    # a state away from equilibrium: free coordinates moved, nonzero velocities and xc
    rng = np.random.default_rng(7)
    nq = 3 * st.n_nodes
    free = ~st.fixed.reshape(-1)
    y = y0.copy()
    y[:nq] += 1e-3 * rng.standard_normal(nq) * free
    y[nq:2 * nq] += 1e-2 * rng.standard_normal(nq) * free
    y[2 * nq + 1:] = rng.standard_normal(y.size - 2 * nq - 1)
    J = run.jac(0.3, y)
    assert J.shape == (y.size, y.size)
    Jfd = _fd_jacobian(run.fun, 0.3, y)
    # column by column, relative to each column's size (the axial-bar columns are many
    # orders larger than the controller's)
    for c in range(y.size):
        scale = max(np.abs(Jfd[:, c]).max(), 1e-8)
        assert np.abs(J[:, c] - Jfd[:, c]).max() <= 1e-5 * scale, f"column {c}"
    # the controller's own share (J minus the open-loop analytic Jacobian) is small next to
    # the bar stiffness, so check it separately against differences of the controller's
    # share of the derivative: it must be right to 1e-5 of its own size
    nb = 2 * nq + 1
    plain = models.CompressibleRun(st, "consistent", False)
    plain.start(y[:nb].copy(), simulator._force_function(None, st.n_nodes), None)
    share = J[:nb, :nb] - plain.jac(0.3, y[:nb].copy())
    share_fd = _fd_jacobian(lambda t, yy: run.fun(t, yy)[:nb] - plain.fun(t, yy[:nb]),
                            0.3, y)[:nb, :nb]
    assert np.abs(share).max() > 0.1              # measured 103 (LQR), 0.57 (output)
    assert np.abs(share - share_fd).max() <= 1e-5 * np.abs(share).max()


# ---------------------------------------------------------------- 8. errors

def test_non_actuated_string_is_rejected(tbar):
    strings = list(tbar.strings)
    strings[1] = dataclasses.replace(strings[1], actuated=False)
    partial = dataclasses.replace(tbar, strings=tuple(strings))
    np.testing.assert_array_equal(partial.actuated_strings, [0, 2, 3])
    with pytest.raises(ValueError, match="string 1 .*not actuated"):
        tc.simulate(partial, 0.1, controller=_zero_gain(tbar))


def test_wrong_output_shape_is_a_value_error_at_start(tbar):
    class Short(Constant):
        def force_densities(self, t, q, qd, xc):
            return np.zeros(3)

    with pytest.raises(ValueError, match="force_densities"):
        tc.simulate(tbar, 0.1, controller=Short(tbar, 0.0))


def test_controller_failing_mid_run(tbar):
    class Breaks(Constant):
        def force_densities(self, t, q, qd, xc):
            if t > 0.5:
                raise RuntimeError("sensor lost")
            return np.zeros(self.strings.size)

    with pytest.raises(tc.SimulationError, match="sensor lost") as info:
        tc.simulate(tbar, 1.0, controller=Breaks(tbar, 0.0), max_step=0.01)
    traj = info.value.trajectory
    assert 0.49 - 1e-12 <= traj.t[-1] <= 0.5
    assert info.value.time == pytest.approx(traj.t[-1])
    assert traj.control is not None and traj.control.u.shape == (traj.t.size, 4)


def test_interrupt_in_the_controller_reaches_the_caller(tbar):
    class Interrupted(Constant):
        def force_densities(self, t, q, qd, xc):
            if t > 0.5:
                raise KeyboardInterrupt  # Ctrl-C while the controller runs
            return np.zeros(self.strings.size)

    with pytest.raises(tc.SimulationInterrupted) as info:
        tc.simulate(tbar, 1.0, controller=Interrupted(tbar, 0.0), max_step=0.01)
    traj = info.value.trajectory
    assert 0.49 - 1e-12 <= info.value.time == traj.t[-1] <= 0.5
    assert traj.control is not None and traj.control.u.shape == (traj.t.size, 4)


def test_nonfinite_command_mid_run(tbar):
    class Blows(Constant):
        def force_densities(self, t, q, qd, xc):
            return np.full(self.strings.size, np.nan if t > 0.2 else 0.0)

    with pytest.raises(tc.SimulationError, match="non-finite") as info:
        tc.simulate(tbar, 1.0, controller=Blows(tbar, 0.0), max_step=0.01)
    assert info.value.trajectory.t[-1] <= 0.2


def test_object_lacking_methods_is_a_type_error(tbar):
    class Bare:
        strings = np.arange(4)
        gamma_ref = np.full(4, GAMMA)
        kind = "passive"

    with pytest.raises(TypeError, match="n_states"):
        tc.simulate(tbar, 0.1, controller=Bare())


def test_bad_initial_state_shape(tbar):
    class Wrong(Constant):
        def initial_state(self):
            return np.zeros(2)

    with pytest.raises(ValueError, match="initial_state"):
        tc.simulate(tbar, 0.1, controller=Wrong(tbar, 0.0))


# ---------------------------------------------------------------- 9. to_iosystem

def test_iosystem_matches_simulate(tbar):
    sys = to_iosystem(tbar, outputs=tc.Selection(nodes=[2], axes="z"))
    assert sys.ninputs == 4 + 12 and sys.noutputs == 1 and sys.nstates == 24
    T = np.linspace(0.0, 2.0, 2001)
    col = sys.input_labels.index("fz2")
    U = np.zeros((sys.ninputs, T.size))
    U[col] = 5.0 * np.sin(2.0 * T)
    X0 = np.concatenate([tbar.nodes.reshape(-1), np.zeros(12)])
    opts = dict(solve_ivp_method="DOP853", solve_ivp_kwargs=dict(rtol=1e-10, atol=1e-10,
                                                                 max_step=0.01))
    resp = control.input_output_response(sys, T, U, X0, **opts)

    def load(t, q, qd):
        f = np.zeros((4, 3))
        f[NODE, AXIS] = 5.0 * np.sin(2.0 * t)
        return f

    traj = tc.simulate(tbar, 2.0, loads=load, correction="none", t_eval=T)
    z = traj.nodes[:, NODE, AXIS] - tbar.nodes[NODE, AXIS]
    assert np.abs(z).max() > 1e-2
    np.testing.assert_allclose(resp.outputs[0], z, rtol=0, atol=1e-5)

    # a constant command on string 2 is wired to the dynamics
    U2 = U.copy()
    U2[sys.input_labels.index("gamma2")] = 3.0
    resp2 = control.input_output_response(sys, T, U2, X0, **opts)
    assert np.abs(resp2.outputs - resp.outputs).max() > 1e-3
    # ... and equals the simulator with the same constant controller (+3 on string 2)

    class OnTwo(Constant):
        def __init__(self):
            super().__init__(tbar, 0.0)
            self.strings = np.array([2])
            self.gamma_ref = np.array([GAMMA])

        def force_densities(self, t, q, qd, xc):
            return np.array([3.0])

    traj2 = tc.simulate(tbar, 2.0, loads=load, correction="none", t_eval=T, controller=OnTwo())
    z2 = traj2.nodes[:, NODE, AXIS] - tbar.nodes[NODE, AXIS]
    np.testing.assert_allclose(resp2.outputs[0], z2, rtol=0, atol=1e-5)


# ---------------------------------------------------------------- 10. verify

def test_verify_report(tbar, lqr):
    report = verify(tbar, lqr, _doublet(tbar, 0.1), 3.0, t_eval=np.linspace(0, 3.0, 301),
                    outputs=tc.Selection(nodes=[2], axes="z"), rtol=1e-9, atol=1e-9)
    assert report.output_names == ("z2",)
    assert report.y_open.shape == report.y_closed.shape == report.y_linear.shape == (301, 1)
    # measured 87.2 % and 1.0e-4 (0.1 N keeps the motion small: linear is accurate)
    assert report.peak_reduction == pytest.approx(0.872, abs=0.01)
    assert report.linear_error < 1e-3
    assert report.closed.slack_time == {} and report.closed.saturated_time == {}
    assert report.closed.energy_violation < 1e-8
    assert report.open.effort_peak == 0.0 and report.closed.effort_peak > 0.0
    # the figures are consistent with the arrays they summarize
    assert report.closed.peak == pytest.approx(np.abs(report.y_closed).max())
    assert report.peak_reduction == pytest.approx(1 - report.closed.peak / report.open.peak)
    text = str(report)
    assert "peak deflection" in text and "peak reduction" in text
    fig = report.plot()
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 2


def test_verify_user_controller_has_no_linear_prediction(tbar):
    report = verify(tbar, _StaticGain(tbar), _doublet(tbar, 0.1), 1.0,
                    t_eval=np.linspace(0, 1.0, 51), rtol=1e-9, atol=1e-9)
    assert np.isnan(report.linear_error)
    assert np.all(np.isnan(report.y_linear))
    assert "-" in str(report)


class _StaticGain(Controller):
    """A user's static law (not a StateFeedback): damp node 2's vertical velocity."""

    def __init__(self, structure):
        self.strings = structure.actuated_strings
        self.gamma_ref = np.full(self.strings.size, GAMMA)
        self.q_ref = structure.nodes.reshape(-1)

    def force_densities(self, t, q, qd, xc):
        return np.full(self.strings.size, -0.5 * qd[3 * NODE + AXIS])


def test_verify_output_feedback_linear_prediction(tbar):
    # the OutputFeedback branch of the linear prediction (negative feedback u = -(CK xc + DK y_m),
    # xc' = AK xc + BK y_m): the nonlinear closed loop must match it far better than the
    # controller's own effect on the response (a sign slip would make them comparable)
    report = verify(tbar, _output_feedback(tbar, 100.0), _doublet(tbar, 0.1), 3.0,
                    t_eval=np.linspace(0, 3.0, 301), rtol=1e-9, atol=1e-9)
    effect = np.abs(report.y_closed - report.y_open).max()        # measured 1.0e-3 m
    mismatch = np.abs(report.y_closed - report.y_linear).max()    # measured 3.7e-6 m
    assert effect > 1e-4
    assert mismatch < 0.05 * effect
    assert report.linear_error < 5e-3                             # measured 9.1e-4
    assert report.closed_loop.control.controller_states.shape == (301, 2)


class _Minimal(Controller):
    """Only what the Controller protocol names (no q_ref, no measurement)."""

    def __init__(self, structure):
        self.strings = structure.actuated_strings
        self.gamma_ref = np.full(self.strings.size, GAMMA)

    def force_densities(self, t, q, qd, xc):
        return np.full(self.strings.size, -0.5 * qd[3 * NODE + AXIS])


def test_verify_accepts_a_plain_controller(tbar):
    # simulate() accepts this controller (the protocol of controllers.Controller) ...
    traj = tc.simulate(tbar, 0.1, controller=_Minimal(tbar))
    assert traj.control.u.shape[1] == 4
    # ... so verify(), documented as taking a Controller, should too
    report = verify(tbar, _Minimal(tbar), _doublet(tbar, 0.1), 1.0,
                    t_eval=np.linspace(0, 1.0, 51), rtol=1e-9, atol=1e-9)
    assert np.isnan(report.linear_error)


def test_state_feedback_from_lists(tbar):
    K = np.zeros((4, 24))
    K[:, 3 * NODE + AXIS] = 1.0
    ref = StateFeedback(K, tbar.nodes.reshape(-1), tbar.actuated_strings, np.full(4, GAMMA))
    # lists are accepted, as numpy arrays are, and stored as read-only float arrays
    ctrl = StateFeedback(K.tolist(), tbar.nodes.reshape(-1).tolist(), [0, 1, 2, 3], [GAMMA] * 4)
    for name in ("K", "q_ref", "gamma_ref"):
        value = getattr(ctrl, name)
        assert value.dtype == float and not value.flags.writeable
        np.testing.assert_array_equal(value, getattr(ref, name))
    assert ctrl.strings.dtype.kind == "i"
    np.testing.assert_array_equal(ctrl.strings, ref.strings)
    q = tbar.nodes.reshape(-1) + 0.01
    np.testing.assert_allclose(ctrl.force_densities(0, q, 0 * q, None),
                               ref.force_densities(0, q, 0 * q, None))
