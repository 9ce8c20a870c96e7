"""Linearization of structures with clustered cables (issue 34, item 5; rigid bars).

Oracles: central finite differences of the library's own accelerations (tc.accelerations runs
the cable law of the rigid-bar kernels, itself checked against an independent oracle in
tests/test_cables.py), a cable force written here in a few lines (sum of the segments' unit
vectors), and the nonlinear simulation of a small perturbation against the linear model's
modal solution.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
import scipy.linalg

import tenscontrol as tc

# analytic against central differences (h = 1e-6 m, 1e-3 N): measured 7.4e-11 to 1.5e-10 for
# A and 1.1e-12 for B (relative to their max); the differences' truncation and round-off
FD_TOL = 1e-7
# nonlinear against linear over two periods at an amplitude of 1e-6 m: the error is second
# order in the amplitude (measured 5.3e-6 of the peak, 2.3e-7 on the mode's coordinate); 1e-3
# leaves room and still fails for a wrong frequency (1 % off gives 6 % after two periods)
MODAL_TOL = 1e-3
SIM_TOL = 1e-11  # integrator tolerance of the modal comparison (rtol = atol)


def _unit_sum(structure, q, cable):
    """g = dL/dq (3n,) and L of one cable, from its node sequence (minimal code)."""
    N = np.asarray(q, dtype=float).reshape(-1, 3)
    g, L = np.zeros_like(N), 0.0
    nodes = structure.cable_nodes[cable]
    for a, b in zip(nodes[:-1], nodes[1:]):
        s = N[b] - N[a]
        l = np.linalg.norm(s)
        g[b] += s / l
        g[a] -= s / l
        L += l
    return g.reshape(-1), L


def damped_prism():
    """tc.catalog.prism(clustered=True) with dampers on its cables (not an equilibrium)."""
    s = tc.catalog.prism(clustered=True)
    return dataclasses.replace(s, cables=tuple(dataclasses.replace(c, damping=0.7)
                                               for c in s.cables))


def prestressed_clustered_prism():
    """The 3-prism at its self-stress, bottom fixed, its top ring one cable (an equilibrium).

    The self-stress is the null vector of the equilibrium matrix built here from the node
    differences (docs/theory.md, "Prestress"); by symmetry the three top-ring strings share one
    force density and one length, so one cable tension T = gamma l carries them.
    """
    base = tc.catalog.prism(3)
    N = base.nodes
    cols = []
    for pairs in (base.string_nodes, base.bar_nodes):
        for i, j in pairs:
            c = np.zeros_like(N)
            c[i], c[j] = N[i] - N[j], N[j] - N[i]
            cols.append(c.reshape(-1))
    w = scipy.linalg.null_space(np.column_stack(cols))[:, 0]
    w = w * 10 / np.abs(w).max() * np.sign(w[0])
    gamma = w[:base.n_strings]
    k, l = base.string_stiffness, base.string_lengths
    strings = [{"nodes": tuple(p), "kind": "string", "stiffness": kk,
                "rest_length": ll * (1 - g / kk), "damping": 0.3}
               for p, kk, ll, g in zip(base.string_nodes, k, l, gamma)]
    top = (3, 4, 5)
    T = gamma[3] * l[3]
    kc = k[3] / 3  # the whole ring stretches: a third of one segment's stiffness
    cable = {"strings": top, "stiffness": kc, "rest_length": l[list(top)].sum() - T / kc,
             "damping": 0.3}
    bars = [{"nodes": tuple(p), "radius": 0.01, "material": "aluminium"} for p in base.bar_nodes]
    return tc.Structure(N, bars, strings, fixed={0: "xyz", 1: "xyz", 2: "xyz"},
                        cables=[cable], name="prism-3-cable-prestressed")


def _quiet(fun, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the catalog prism is not an equilibrium
        return fun(*args, **kw)


def _fd(fun, v0, h):
    cols = []
    for i in range(v0.size):
        e = np.zeros_like(v0)
        e[i] = h
        cols.append((fun(v0 + e) - fun(v0 - e)) / (2 * h))
    return np.column_stack(cols)


def _moving(s, seed=0):
    rng = np.random.default_rng(seed)
    qd = 0.1 * rng.standard_normal(3 * s.n_nodes)
    qd[s.fixed_coordinates] = 0.0
    return qd


def _rel(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


# ---- step 1: the cable law's stiffness and damping -----------------------------------------


@pytest.mark.parametrize("moving", [False, True])
@pytest.mark.parametrize("make", [damped_prism, prestressed_clustered_prism])
def test_passive_A_is_the_derivative_of_the_library_accelerations(make, moving):
    s = make()
    qd = _moving(s) if moving else None
    model = _quiet(tc.linearize, s, qd=qd, kind="passive")
    nq = model.q.size
    x0 = np.concatenate([model.q, model.qd])
    fd = _fd(lambda x: tc.accelerations(s, x[:nq], x[nq:])[0], x0, 1e-6)
    assert _rel(model.A[nq:], fd) < FD_TOL


def test_the_cable_material_stiffness_is_rank_one_over_all_its_nodes():
    """Passive minus tension-held stiffness is k_c g g^T (docs/theory.md, "Clustered cables"),
    with g written here; separate strings would give one rank-one term per segment."""
    s = prestressed_clustered_prism()
    model = tc.linearize(s, kind="passive")
    assert model.at_equilibrium
    held = tc.linearize(s, kind="control").actuated(cables=[0])   # verticals held too
    g, _ = _unit_sum(s, model.q, 0)
    kc = s.cable_stiffness[0]
    material = model.stiffness - held.stiffness
    top = np.arange(9, 18)
    expected = kc * np.outer(g, g) + _vertical_material(s, model.q)
    np.testing.assert_allclose(material[np.ix_(top, top)], expected[np.ix_(top, top)],
                               atol=1e-9 * kc)
    ring = material[np.ix_(top, top)] - _vertical_material(s, model.q)[np.ix_(top, top)]
    assert np.linalg.matrix_rank(ring, tol=1e-9 * kc) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        separate = tc.linearize(dataclasses.replace(s, cables=()), kind="passive")
    assert np.abs(model.stiffness - separate.stiffness).max() > 1e-3 * kc


def _vertical_material(s, q):
    """The material stiffness (k l0 / l^3) s s^T of the separate strings (minimal code)."""
    N = q.reshape(-1, 3)
    K = np.zeros((q.size, q.size))
    for k, (i, j) in enumerate(s.string_nodes):
        if s.string_cable[k] >= 0 or k < 3:  # cable segments; the bottom ring sits on fixed nodes
            continue
        d = N[j] - N[i]
        l = np.linalg.norm(d)
        block = s.string_stiffness[k] * s.string_rest_lengths[k] / l**3 * np.outer(d, d)
        for a, b, sign in ((i, i, 1), (j, j, 1), (i, j, -1), (j, i, -1)):
            K[3 * a:3 * a + 3, 3 * b:3 * b + 3] += sign * block
    return K


def test_eigenvalues_match_the_nonlinear_simulation():
    """A small start along a mode's velocities: the nonlinear simulation follows the linear
    solution expm(A t) x0, and its coordinate along the mode's left eigenvector w grows as
    exp(lambda t) (the eigenvalue itself)."""
    s = prestressed_clustered_prism()
    model = tc.linearize(s, kind="passive")
    assert model.at_equilibrium
    nq, free = model.q.size, model.free_states
    lam, W, V = scipy.linalg.eig(model.A[np.ix_(free, free)], left=True)
    # the slowest oscillation that is not a constraint direction's near-zero eigenvalue, with
    # no twin (the prism's 3.6 rad/s pair is double): 6.44 rad/s
    simple = [j for j in range(lam.size) if lam[j].imag > 1.0
              and np.sum(np.abs(lam - lam[j]) < 1e-6 * abs(lam[j])) == 1]
    i = min(simple, key=lambda j: lam[j].imag)
    nf = free.size // 2
    qd0 = np.zeros(nq)
    qd0[free[:nf]] = V[nf:, i].real
    J = model.constraint_jacobian              # on the bar constraints exactly, not to round-off
    qd0 -= np.linalg.pinv(J) @ (J @ qd0)
    qd0[s.fixed_coordinates] = 0.0
    qd0 *= 1e-6 * abs(lam[i]) / np.abs(qd0).max()   # about 1e-6 m of motion
    x0 = np.concatenate([np.zeros(nq), qd0])
    t = np.linspace(0.0, 4 * np.pi / lam[i].imag, 41)   # two periods
    lin = np.array([scipy.linalg.expm(model.A * tk) @ x0 for tk in t])
    traj = tc.simulate(s, t[-1], t_eval=t, qd=qd0, rtol=SIM_TOL, atol=SIM_TOL)
    x = np.hstack([traj.nodes.reshape(t.size, -1) - model.q, traj.velocities.reshape(t.size, -1)])
    peak = np.abs(lin).max()
    assert np.abs(x - lin).max() < MODAL_TOL * peak
    z = x[:, free] @ W[:, i].conj()
    assert abs(z[0]) > 0.1 * np.abs(W[:, i]).max() * np.abs(x0).max()  # the mode is excited
    np.testing.assert_allclose(z, z[0] * np.exp(lam[i] * t), atol=MODAL_TOL * np.abs(z).max())


# ---- step 2: cable tensions as inputs -------------------------------------------------------


def test_cable_inputs_are_named_and_exclude_their_segments():
    s = prestressed_clustered_prism()
    model = tc.linearize(s, kind="control").actuated(cables=[0])
    assert model.input_names == tuple(f"gamma{k}" for k in (0, 1, 2, 6, 7, 8)) + ("cable0",)
    # by default no cable is an input (as for the controllers): the cables follow their law
    assert tc.linearize(s).actuated().input_names[-1] == "gamma8"
    assert "cables N" in model.summary()


@pytest.mark.parametrize("kind", ["control", "passive"])
def test_cable_input_B_and_held_tension_match_finite_differences(kind):
    """The control model holds T_c: its A is the derivative of the accelerations under the
    force of a held tension (written here); B is the derivative in T_c of the same."""
    s = prestressed_clustered_prism()
    qd = _moving(s, 3)
    model = _quiet(tc.linearize, s, qd=qd, kind=kind).actuated(strings=[], cables=[0])
    nq = model.q.size
    k, L0 = s.cable_stiffness[0], s.cable_rest_lengths[0]
    T_ref = k * (_unit_sum(s, model.q, 0)[1] - L0)

    def qdd(x, u):
        g, L = _unit_sum(s, x[:nq], 0)
        law = k * (L - L0)
        # control: the motor holds T_ref + u (minus the law the kernels apply); passive: u adds
        extra = (T_ref + u - law) if kind == "control" else u
        return tc.accelerations(s, x[:nq], x[nq:], loads=-extra * g)[0]

    x0 = np.concatenate([model.q, model.qd])
    A_fd = _fd(lambda x: qdd(x, 0.0), x0, 1e-6)
    B_fd = _fd(lambda u: qdd(x0, u[0]), np.zeros(1), 1e-3)
    # the other strings follow their law: in the control model their material stiffness is in A
    assert _rel(model.A[nq:], A_fd) < FD_TOL
    assert _rel(model.B[nq:], B_fd) < FD_TOL


def test_passive_cable_input_is_a_rest_length_change():
    """An added tension dT acts as the rest-length change dL0 = -dT / k_c (the library's own
    cable law, no force written here)."""
    s = prestressed_clustered_prism()
    model = tc.linearize(s, kind="passive").actuated(strings=[], cables=[0])
    nq, k, L0 = model.q.size, s.cable_stiffness[0], s.cable_rest_lengths[0]

    def qdd(dL0):
        cab = dataclasses.replace(s.cables[0], rest_length=L0 + dL0)
        return tc.accelerations(dataclasses.replace(s, cables=(cab,)))[0]

    h = 1e-6 * L0
    fd = (qdd(h) - qdd(-h)) / (2 * h)
    assert _rel(model.B[nq:, 0] * -k, fd) < FD_TOL


def test_passive_of_the_actuated_control_model_is_the_actuated_passive_model():
    s = prestressed_clustered_prism()
    a = tc.linearize(s, kind="control").actuated(strings=[6], cables=[0]).passive()
    b = tc.linearize(s, kind="passive").actuated(strings=[6], cables=[0])
    scale = np.abs(b.A).max()
    assert np.abs(a.A - b.A).max() < 1e-12 * scale
    np.testing.assert_array_equal(a.B, b.B)
    np.testing.assert_allclose(a.force_density_gradient, b.force_density_gradient, rtol=1e-14)


@pytest.mark.parametrize("call, match", [
    (lambda m: m.actuated(strings=[3]), r"actuated: string 3 is a segment of cable 0, .* "
                                        r"command the cable instead \(cables=\[0\]\)"),
    (lambda m: m.actuated(cables=[1]), r"actuated: cables must be cable indices below 1"),
    (lambda m: m.actuated(cables=[0, 0]), r"actuated: a cable appears twice"),
])
def test_bad_cable_commands_are_named(call, match):
    model = tc.linearize(prestressed_clustered_prism())
    with pytest.raises(ValueError, match=match):
        call(model)


def test_segment_force_densities_must_share_one_tension():
    s = prestressed_clustered_prism()
    gamma = tc.linearize(s).gamma.copy()
    gamma[4] *= 1.01
    with pytest.raises(ValueError, match=r"gamma: cable 0 \(strings \[3, 4, 5\]\) carries one "
                                         r"tension"):
        tc.linearize(s, gamma=gamma, kind="control")


def test_compressible_linearization_still_refuses_cables():
    with pytest.raises(ValueError, match=r"linearize\(bars='compressible'\): structure "
                                         r"'prism-3-clustered' has 2 clustered cable"):
        tc.linearize(tc.catalog.prism(clustered=True), bars="compressible")


# ---- step 3: a controller commanding the cable in simulate ----------------------------------


def _radial_doublet(structure, amplitude=0.05, half=0.2):
    """A doublet pushing the top nodes 3, 4, 5 outward, then inward [N] (the ring's breathing,
    which its cable reaches; a one-node doublet mostly moves modes the cable cannot stretch)."""
    radial = np.zeros((structure.n_nodes, 3))
    for n in (3, 4, 5):
        radial[n, :2] = structure.nodes[n, :2] / np.linalg.norm(structure.nodes[n, :2])

    def load(t, q, qd):
        return (amplitude if t < half else -amplitude if t < 2 * half else 0.0) * radial
    return load


def test_the_runtime_applies_a_cable_command_as_the_linear_model():
    """At q*: a unit tension command is the nodal force -g (written here) = force_input."""
    from tenscontrol.simulation.actuation import Actuators

    s = prestressed_clustered_prism()
    model = tc.linearize(s, kind="passive").actuated(strings=[], cables=[0])
    T = s.cable_stiffness[0] * (s.cable_lengths[0] - s.cable_rest_lengths[0])
    for kind in ("passive", "control"):
        act = Actuators(s, [], [], kind, cables=[0], tension_ref=[T])
        f, applied, cmd = act.apply(model.q, np.array([1.0]), np.zeros_like(model.q))
        g, _ = _unit_sum(s, model.q, 0)
        np.testing.assert_allclose(f, -g, atol=1e-12)
        np.testing.assert_allclose(f, model.force_input[:, 0], atol=1e-12)
        np.testing.assert_allclose(applied, [T + 1.0], rtol=1e-12)
        f, applied, _ = act.apply(model.q, np.array([-2 * T]), np.zeros_like(model.q))
        np.testing.assert_allclose(f, T * g, atol=1e-9)   # clipped at 0: the law's T removed
        assert applied[0] == 0.0


@pytest.mark.parametrize("kind", ["passive", "control"])
def test_lqr_on_the_cable_closes_the_loop_as_predicted(kind, tmp_path):
    """lqr on the top ring's cable tension alone; verify runs it on the nonlinear model."""
    s = prestressed_clustered_prism()
    out = tc.Selection(nodes=[3, 4, 5], axes="xy")
    model = tc.linearize(s, kind=kind, outputs=out).actuated(strings=[], cables=[0])
    assert model.input_names == ("cable0",)
    ctrl = tc.lqr(model, effort=1e-2).controller
    T = s.cable_stiffness[0] * (s.cable_lengths[0] - s.cable_rest_lengths[0])
    assert ctrl.strings.size == 0 and list(ctrl.cables) == [0]
    assert "commanded_cables=1" in repr(ctrl) and "commanded cables   0" in ctrl.summary()
    np.testing.assert_allclose(ctrl.tension_ref, [T], rtol=1e-12)
    report = tc.verify(s, ctrl, _radial_doublet(s), 2.0, outputs=out,
                       t_eval=np.linspace(0.0, 2.0, 201), rtol=1e-9, atol=1e-9)
    # nonlinear against linear closed loop at 0.05 N: measured 1.4e-3 (passive) and 6.2e-5
    # (control) of the peak; it falls tenfold with the load (3.5e-3 -> 3.3e-4 for a one-node
    # doublet of 0.05 -> 0.005 N), so it is the nonlinearity, not a model error
    assert report.linear_error < 5e-3
    record = report.closed_loop.control
    assert record.u.shape == (201, 1) and list(record.cables) == [0]
    assert record.summary().splitlines()[1].split()[0] == "c0"
    loaded = tc.load_trajectory(report.closed_loop.save(tmp_path / "run.npz")).control
    assert list(loaded.cables) == [0]
    np.testing.assert_array_equal(loaded.applied, record.applied)
    if kind == "passive":
        # the cable in series with its law: the peak falls by 27 % (measured 0.270). With
        # kind="control" the command replaces the cable's elasticity, and this weak gain
        # leaves the ring softer than the open loop's elastic cable (as for strings)
        assert report.peak_reduction > 0.1


def test_designs_other_than_lqr_refuse_cable_structures_and_saving_refuses_cables(tmp_path):
    s = prestressed_clustered_prism()
    model = tc.linearize(s, kind="passive", outputs=tc.Selection(nodes=[3], axes="x"))
    with pytest.raises(ValueError, match=r"hinfsyn: structure 'prism-3-cable-prestressed' has 1 "
                                         r"clustered cable\(s\); of the designs only lqr"):
        tc.hinfsyn(model.actuated(cables=[0]))
    ctrl = tc.lqr(model.actuated(strings=[], cables=[0]), effort=1e-2).controller
    with pytest.raises(ValueError, match=r"save_controller: a controller commanding clustered "
                                         r"cables cannot be saved yet"):
        tc.save_controller(ctrl, tmp_path / "c.npz")


def test_a_slack_cable_has_no_force_no_input_and_matches_finite_differences():
    """The top ring squeezed below its rest length (tests/test_cables.py's configuration): the
    whole cable is slack, its segments' columns and law rows vanish, A still matches."""
    s = damped_prism()
    N = s.nodes.copy()
    N[3:] *= [0.9, 0.9, 1.0]
    N[1] += [0.02, 0.01, 0.0]
    q = N.reshape(-1)
    model = _quiet(tc.linearize, s, q=q, qd=_moving(s, 5), kind="passive")
    nq = q.size
    top = list(s.cables[1].strings)
    assert not model.B[:, top].any() and not model.force_density_gradient[top].any()
    assert model.gamma[top].max() == 0.0 and model.gamma[list(s.cables[0].strings)].min() > 0
    assert not model.actuated(cables=[1]).B[:, -1].any()
    x0 = np.concatenate([model.q, model.qd])
    fd = _fd(lambda x: tc.accelerations(s, x[:nq], x[nq:])[0], x0, 1e-6)
    assert _rel(model.A[nq:], fd) < FD_TOL


@pytest.mark.parametrize("at_rest, expected", [("slack", 0), ("taut", 1)])
def test_a_cable_at_its_rest_length_follows_at_rest(at_rest, expected):
    s = prestressed_clustered_prism()
    cab = dataclasses.replace(s.cables[0], rest_length=float(s.cable_lengths[0]))
    s = dataclasses.replace(s, cables=(cab,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = tc.linearize(s, kind="passive", at_rest=at_rest)
    named = [w for w in caught if "cable 0 (strings [3, 4, 5])" in str(w.message)]
    assert len(named) == 1 - expected
    column = model.actuated(cables=[0]).B[:, -1]
    assert bool(np.abs(column).max() > 0) == bool(expected)
