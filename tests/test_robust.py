"""Robustness to uncertain parameters (tenscontrol.robust): the M-Delta form against the
structure linearized again at a perturbation and against finite differences, the mu bounds
(upper >= lower, the lower bound's eigenvalue on the axis, ab13md against a brute-force mu),
Monte Carlo inside the margin, and every validation error."""

from __future__ import annotations

import warnings

import control as ct
import numpy as np
import pytest
import scipy.optimize

import tenscontrol as tc
from tenscontrol import robust
from tenscontrol.linear.reduction import elastic_model
from tenscontrol.robust.lft import contributions
from tenscontrol.robust import design as rdesign
from tenscontrol.robust import mu as rmu
from tenscontrol.robust.mu import balanced, mu_upper, scaled_norm_bound

TBAR_OUTPUTS = tc.Selection(nodes=[2, 3], axes="xz")


@pytest.fixture(scope="module")
def tbar():
    """The damped T-bar at a prestress gamma >= 10 N/m with a 1 kg payload on node 2 (no
    gravity, so the payload leaves the equilibrium alone), its passive model and LQR."""
    s = tc.equilibrium(tc.catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
    s = s.with_point_masses([tc.PointMass(2, 1.0)])
    model = tc.linearize(s, kind="passive", outputs=TBAR_OUTPUTS)
    return s, model, tc.lqr(model, effort=1e-2)


def relinearized_loop(structure, design):
    """Closed-loop A on the elastic coordinates of `structure` linearized again, closed with
    the nominal gain (the independent oracle of UncertainLoop.closed_loop)."""
    m = tc.linearize(structure, kind="passive", outputs=TBAR_OUTPUTS)
    em = elastic_model(m.actuated(design.controller.strings))
    return em.A - em.B @ design.controller.K @ em.T, em


def test_lft_matches_relinearized_structure(tbar):
    s, model, design = tbar
    loop = robust.uncertain_loop(model, design, robust.string_stiffness(0.3)
                                 + robust.point_masses(0.5))
    # rank 1 per string; string 0 joins the two fixed nodes and is left out; the payload moves
    # along one elastic direction only (rank 1 of 3)
    assert loop.blocks == (1, 1, 1, 1) and loop.ignored == ("k0",)
    rng = np.random.default_rng(1)
    for _ in range(3):
        delta = rng.uniform(-1, 1, loop.n_parameters)
        A_ref, _ = relinearized_loop(loop.perturbed(delta), design)
        e_ref = np.sort_complex(np.linalg.eigvals(A_ref))
        e_lft = np.sort_complex(np.linalg.eigvals(loop.closed_loop(delta)))
        assert np.abs(e_lft - e_ref).max() <= 1e-9 * np.abs(e_ref).max()


def test_perturbed_structure_keeps_prestress_and_equilibrium(tbar):
    s, model, design = tbar
    loop = robust.uncertain_loop(model, design, robust.string_stiffness(0.3))
    p = loop.perturbed([-0.7, 0.2, -1.0])
    assert np.allclose(p.string_stiffness, s.string_stiffness * (1 + 0.3 * np.array(
        [0.0, -0.7, 0.2, -1.0])), rtol=1e-14)
    gamma = p.string_stiffness * (1 - p.string_rest_lengths / p.string_lengths)
    assert np.allclose(gamma, model.gamma, rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # no "not in equilibrium" warning
        assert tc.linearize(p, kind="passive").at_equilibrium


def test_contributions_match_finite_differences(tbar):
    # the analytic change of K_e (strings) and M_e (payload) over the range against central
    # differences of the elastic model of structures linearized again
    s, model, design = tbar
    loop = robust.uncertain_loop(model, design, robust.string_stiffness(0.3)
                                 + robust.point_masses(0.5))
    _, em0 = relinearized_loop(s, design)
    analytic = contributions(s, model.q, model.gamma, em0.Z, loop.parameters)
    h = 1e-4
    for i, p in enumerate(loop.parameters):
        e = np.zeros(loop.n_parameters)
        e[i] = h
        _, hi = relinearized_loop(loop.perturbed(e), design)
        _, lo = relinearized_loop(loop.perturbed(-e), design)
        name = "K_e" if p.kind == "string_stiffness" else "M_e"
        fd = (getattr(hi, name) - getattr(lo, name)) / (2 * h)
        assert np.abs(fd - analytic[i]).max() <= 1e-6 * np.abs(analytic[i]).max(), p.name


@pytest.fixture(scope="module")
def tbar_stability(tbar):
    s, model, design = tbar
    loop = robust.uncertain_loop(model, design, robust.string_stiffness(0.5))
    return loop, robust.robust_stability(loop)


def test_lower_bound_puts_an_eigenvalue_on_the_axis(tbar_stability):
    loop, r = tbar_stability
    A = loop.closed_loop(r.delta)
    lam = np.linalg.eigvals(A)
    assert np.abs(lam.real).min() <= 1e-8 * np.linalg.norm(A, 2)
    assert r.axis_residual <= 1e-8
    assert np.abs(r.delta).max() == pytest.approx(r.margin_upper, rel=1e-12)
    # stable just inside along the same direction: the crossing is the first one
    assert np.linalg.eigvals(loop.closed_loop(0.999 * r.delta)).real.max() < 0


def test_upper_bound_covers_lower_bound(tbar_stability):
    _, r = tbar_stability
    assert r.peak_upper >= r.peak_lower * (1 - 1e-9)
    assert np.all(r.mu_upper >= r.mu_lower * (1 - 1e-6))
    assert r.margin <= r.margin_upper * (1 + 1e-9)
    # the T-bar's loop fails only where the strings' stiffness falls below the prestress
    assert r.worst_structure is None and "k <= gamma*" in r.unphysical
    assert "RobustStability" in str(r) and "\n" not in repr(r)


def test_ab13md_against_brute_force_mu(tbar_stability):
    # at w = 0 M is real: mu over real diagonal Delta is the largest real eigenvalue of
    # M diag(d) over directions d on the box boundary (vertices and random faces)
    loop, _ = tbar_stability
    M = loop.response(0.0).real
    rng = np.random.default_rng(0)
    m = M.shape[0]
    vertices = np.array(np.meshgrid(*[[-1.0, 1.0]] * m)).reshape(m, -1).T
    faces = rng.uniform(-1, 1, (4000, m))
    faces[np.arange(4000), rng.integers(0, m, 4000)] = rng.choice([-1.0, 1.0], 4000)
    brute = 0.0
    for d in np.vstack([vertices, faces]):
        lam = np.linalg.eigvals(M * d)
        brute = max(brute, np.abs(lam[np.abs(lam.imag) < 1e-12]).max(initial=0.0))
    upper = mu_upper(loop.response(0.0), loop.blocks)
    assert brute <= upper * (1 + 1e-9)
    assert upper <= brute * 1.01


def test_one_real_scalar_against_a_1d_search(tbar):
    # one grouped parameter: mu is exact; the margin equals the smallest destabilizing |delta|
    # found by scanning delta in both directions and bisecting on the spectral abscissa
    s, model, design = tbar
    loop = robust.uncertain_loop(model, design, robust.string_stiffness(0.5, grouped=True))
    r = robust.robust_stability(loop)

    def abscissa(d):
        return np.linalg.eigvals(loop.closed_loop([d])).real.max()

    smallest = np.inf
    for sign in (1.0, -1.0):
        grid = sign * np.linspace(0, 10, 2001)
        values = np.array([abscissa(d) for d in grid])
        k = np.flatnonzero(values >= 0)
        if k.size:
            smallest = min(smallest, abs(scipy.optimize.brentq(abscissa, grid[k[0] - 1],
                                                               grid[k[0]], xtol=1e-14)))
    assert r.margin == pytest.approx(smallest, rel=1e-9)
    assert r.gap == pytest.approx(0.0, abs=1e-9)


def test_monte_carlo_inside_the_margin_is_stable(tbar_stability):
    loop, r = tbar_stability
    mc = robust.monte_carlo(loop, 1000, scale=0.99 * r.margin, seed=3, gains=False)
    assert mc.unstable == 0 and mc.abscissa.shape == (1000,)
    mc = robust.monte_carlo(loop, 20, scale=0.99 * r.margin, seed=3)
    assert np.all(np.isfinite(mc.gains)) and "MonteCarlo" in str(mc)


@pytest.mark.parametrize("spread", [0.0, 1.0, 1.5, -0.2, np.nan])
def test_bad_spread_names_the_parameter_and_the_fix(spread):
    with pytest.raises(ValueError, match=r"k2: spread .* must be in \(0, 1\).*spread=0.2"):
        robust.string_stiffness(spread, [2])


def test_bad_members_are_named(tbar):
    s, model, design = tbar
    with pytest.raises(ValueError, match=r"k\[0,7\]: strings \[7\] out of range; the structure "
                                         r"has 4"):
        robust.uncertain_loop(model, design, robust.string_stiffness(0.2, [0, 7], grouped=True))
    with pytest.raises(ValueError, match="m3: point masses .*out of range"):
        robust.uncertain_loop(model, design, robust.point_masses(0.2, [3]))
    bare = tc.linearize(s.with_point_masses([]), kind="passive", outputs=TBAR_OUTPUTS)
    with pytest.raises(ValueError, match="has no point masses; add one"):
        robust.uncertain_loop(bare, design, robust.point_masses(0.2))
    with pytest.raises(ValueError, match="must be a passive LinearModel"):
        robust.uncertain_loop(tc.linearize(s, kind="control"), design,
                              robust.string_stiffness(0.2))
    with pytest.raises(TypeError, match="Uncertainty objects"):
        robust.uncertain_loop(model, design, [0.2])


def test_delta_outside_the_physical_range_is_refused(tbar):
    s, model, design = tbar
    loop = robust.uncertain_loop(model, design, robust.string_stiffness(0.5))
    with pytest.raises(ValueError, match=r"strings \[1\] would have a stiffness at or below"):
        loop.perturbed([-1.99, 0.0, 0.0])
    with pytest.raises(ValueError, match="delta must be 3 finite real numbers"):
        loop.closed_loop([0.0, 1.0])


def test_worst_case_gain_covers_the_samples(tbar_stability):
    loop, r = tbar_stability
    scale = 0.9 * r.margin
    mc = robust.monte_carlo(loop, 30, scale=scale, seed=5)
    w = robust.worst_case_gain(loop, scale)
    assert w.gain >= mc.gains.max() * (1 - 1e-6) and w.gain >= w.nominal
    assert np.abs(w.delta).max() <= scale * (1 + 1e-12)
    A, B, C = loop.performance(w.delta)
    assert w.gain == pytest.approx(tc.hinf_norm(ct.ss(A, B, C, 0)), rel=1e-5)
    with pytest.raises(ValueError, match="scale must be a positive number"):
        robust.worst_case_gain(loop, -1.0)


# ---- bounded time (budgets) -----------------------------------------------------------------


def test_scaled_norm_bound_covers_ab13md_and_brute_force(tbar_stability):
    # the balanced sigma_max is an upper bound of mu: never below AB13MD's D-G bound (beyond
    # AB13MD's optimizer accuracy, 1e-6 relative) nor the lower bound on the grid
    loop, r = tbar_stability
    for w, low in zip(r.frequencies, r.mu_lower):
        M = loop.response(w)
        cheap = scaled_norm_bound(M)
        assert cheap >= mu_upper(M, loop.blocks) * (1 - 1e-6)
        assert cheap >= low * (1 - 1e-9)
        assert np.allclose(np.sort_complex(np.linalg.eigvals(balanced(M))),
                           np.sort_complex(np.linalg.eigvals(M)), rtol=1e-10, atol=1e-12)


def test_budget_out_keeps_a_certified_partial_result(tbar, tbar_stability):
    # with no time for AB13MD every frequency keeps the balanced sigma_max bound: the margin
    # is smaller (more conservative) but still certified: Monte Carlo inside it finds nothing
    loop, full = tbar_stability
    assert full.complete and full.note == "" and full.evaluated.any()
    part = robust.robust_stability(loop, budget=1e-9)
    assert not part.complete and "budget=" in part.note and "partial" in repr(part)
    assert part.peak_upper >= full.peak_upper * (1 - 1e-6)
    assert part.margin <= full.margin * (1 + 1e-6)
    assert part.axis_residual <= 1e-8                 # the +-1 directions are always searched
    mc = robust.monte_carlo(loop, 200, scale=0.99 * part.margin, seed=7, gains=False)
    assert mc.unstable == 0 and mc.complete
    with pytest.raises(ValueError, match="budget must be a positive number of CPU seconds"):
        robust.robust_stability(loop, budget=0.0)


def test_monte_carlo_and_worst_gain_stop_at_their_budget(tbar_stability):
    loop, r = tbar_stability
    mc = robust.monte_carlo(loop, 100000, scale=0.5 * r.margin, budget=1e-9)
    assert not mc.complete and mc.requested == 100000 and 1 <= mc.abscissa.size < 100000
    assert mc.deltas.shape == (mc.abscissa.size, loop.n_parameters) and "partial" in repr(mc)
    full = robust.monte_carlo(loop, mc.abscissa.size, scale=0.5 * r.margin)
    assert np.array_equal(full.deltas, mc.deltas)    # the same seed continues the same draws
    w = robust.worst_case_gain(loop, 0.5 * r.margin, budget=1e-9)
    assert not w.complete and w.gain == w.nominal and "partial" in repr(w)
    with pytest.raises(ValueError, match="monte_carlo: budget must be a positive"):
        robust.monte_carlo(loop, 10, budget=-1.0)


# ---- robust design ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tbar_robust_design(tbar):
    s, model, design = tbar
    params = robust.string_stiffness(0.5)
    return robust.robust_lqr(model, design, params, rounds=2), params


def test_cost_gradient_against_central_differences(tbar):
    s, model, design = tbar
    loop = robust.uncertain_loop(model, design, robust.string_stiffness(0.5))
    models = rdesign._models(model, design.controller, robust.string_stiffness(0.5),
                             [np.zeros(3), np.array([0.3, -0.5, 0.8])])
    em = elastic_model(model.actuated(design.controller.strings))
    Q, R = em.T.T @ design.Q @ em.T, design.R
    K = design.K @ loop.T + 0.05 * np.random.default_rng(2).standard_normal(
        (R.shape[0], loop.T.shape[1]))
    for m in models:
        J, G = rdesign.cost(m, K, Q, R)
        h = 1e-6 * np.abs(K).max()
        E = np.random.default_rng(4).standard_normal(K.shape)
        fd = (rdesign.cost(m, K + h * E, Q, R, False)[0]
              - rdesign.cost(m, K - h * E, Q, R, False)[0]) / (2 * h)
        assert fd == pytest.approx(np.sum(G * E), rel=1e-6)


def test_lqr_gain_is_optimal_for_the_nominal_cost(tbar):
    # oracle: the LQR cost-to-go x^T S x gives J_0(K_lqr) = trace(B^T S_e B), and the LQR gain
    # is a stationary point of J_0
    s, model, design = tbar
    params = robust.string_stiffness(0.5)
    (m,) = rdesign._models(model, design.controller, params, [np.zeros(3)])
    em = elastic_model(model.actuated(design.controller.strings))
    Q = em.T.T @ design.Q @ em.T
    assert np.allclose(m.U, em.B, atol=1e-12 * np.abs(em.B).max())
    J, G = rdesign.cost(m, design.K @ em.T, Q, design.R)
    assert J == pytest.approx(np.trace(m.B.T @ em.T.T @ design.S @ em.T @ m.B), rel=1e-8)
    assert np.abs(G).max() <= 1e-6 * np.abs(design.R @ design.K @ em.T).max()


def test_robust_lqr_widens_the_margin_and_stabilizes_its_models(tbar, tbar_robust_design):
    s, model, design = tbar
    rd, params = tbar_robust_design
    assert rd.margins[rd.chosen] > rd.margins[0] * 1.2     # T-bar: 2.49 -> about 6.3
    assert rd.margins[rd.chosen] == rd.margins.max()
    nominal = robust.robust_stability(robust.uncertain_loop(model, design, params))
    assert rd.margins[0] == pytest.approx(nominal.margin, rel=1e-12)
    loop = robust.uncertain_loop(model, rd.controller, params)
    again = robust.robust_stability(loop)                 # the returned gain's own analysis
    assert again.margin == pytest.approx(rd.stability.margin, rel=1e-9)
    assert rd.stability.margin == pytest.approx(rd.margins[rd.chosen], rel=1e-12)
    for d in rd.deltas:                                   # oracle: eigenvalues of each model
        assert np.linalg.eigvals(loop.closed_loop(d)).real.max() < 0
    assert rd.nominal_loss >= -1e-9 and rd.costs[0] >= 1 - 1e-9
    assert "RobustLQRDesign" in str(rd) and "\n" not in repr(rd)
    # the design runs in the simulator like every design
    nq, n_e = s.nodes.size, loop.T.shape[1] // 2
    qd = 1e-3 * loop.T[:nq, :n_e] @ np.ones(n_e)          # an elastic velocity
    qd[np.asarray(s.fixed_coordinates)] = 0.0             # Z's round-off there
    traj = tc.simulate(s, 0.2, controller=rd, qd=qd)
    assert np.all(np.isfinite(traj.nodes))
    with pytest.raises(ValueError, match="rounds must be a positive integer"):
        robust.robust_lqr(model, design, params, rounds=0)
    with pytest.raises(TypeError, match="nominal must be the LQR design"):
        robust.robust_lqr(model, design.controller, params)


#: Envelope fit of the nonlinear runs: windows after the first tenth of the run (the other
#: modes' transients), and the agreement with the linear Re(lambda): the runs start 1e-4 of a
#: bar length per unit |lambda| off equilibrium, so the nonlinear terms stay far below this.
ENVELOPE_WINDOWS, RATE_RTOL = 30, 0.05


def envelope_growth(traj):
    """Least-squares slope [1/s] of log(max speed in each window) against time, and the first
    and last windows' max speed [m/s]."""
    speed = np.linalg.norm(traj.velocities.reshape(traj.t.size, -1), axis=1)
    idx = np.array_split(np.flatnonzero(traj.t >= 0.1 * traj.t[-1]), ENVELOPE_WINDOWS)
    peaks = np.array([speed[i].max() for i in idx])
    slope = np.polyfit([traj.t[i].mean() for i in idx], np.log(peaks), 1)[0]
    return slope, peaks[0], peaks[-1]


@pytest.mark.slow
def test_nonlinear_loop_at_the_worst_case_follows_the_linear_growth():
    """The 48-bar tower with one stiffness scale (+-50 %), the cheapest physical worst case:
    the nominal LQR on loop.perturbed(s delta*) in tc.simulate stays bounded at s = 0.95 and
    diverges at s = 1.01 (1.05 is no structure: its stiffness would fall below the force
    density), the speed envelope growing at the closed-loop eigenvalue's real part."""
    s = tc.equilibrium(tc.catalog.prism_tower(16, damping=1.0), gamma_min=10.0).structure
    model = tc.linearize(s, kind="passive")
    design = tc.lqr(model)
    loop = robust.uncertain_loop(model, design, robust.string_stiffness(0.5, grouped=True))
    r = robust.robust_stability(loop)
    assert r.worst_structure is not None
    with pytest.raises(ValueError, match="at or below their force density"):
        loop.perturbed(1.05 * r.delta)
    n_e = loop.A.shape[0] // 2
    for factor, diverges in ((0.95, False), (1.01, True)):
        lam, V = np.linalg.eig(loop.closed_loop(factor * r.delta))
        k = int(np.argmax(lam.real))
        assert (lam[k].real > 0) == diverges
        # a small velocity along the rightmost mode, mapped from elastic to node coordinates
        v = np.real(V[n_e:, k] / np.abs(V[n_e:, k]).max())
        qd = 1e-4 * s.bar_lengths.max() * abs(lam[k]) * (loop.T[:loop.T.shape[0] // 2, :n_e] @ v)
        t_final = min(4.0 / abs(lam[k].real), 20.0)
        n_t = int(16 * t_final * abs(lam[k].imag) / (2 * np.pi)) + 1001
        traj = tc.simulate(loop.perturbed(factor * r.delta), t_final,
                           controller=design.controller, qd=qd,
                           t_eval=np.linspace(0.0, t_final, n_t))
        rate, first, last = envelope_growth(traj)
        assert rate == pytest.approx(lam[k].real, rel=RATE_RTOL)
        assert (last > 10 * first) if diverges else (last < first)


def test_singular_point_mass_is_no_crossing(tbar):
    """Along a lighter payload the abscissa jumps from < 0 to > 0 where the payload's mass
    cancels the bars' share of node 2 (I - D_zw Delta singular) without an eigenvalue on the
    axis (the jump's right side has a real eigenvalue near 0.8 1/s): no crossing, and no
    destabilizing perturbation at all."""
    s, model, design = tbar
    loop = robust.uncertain_loop(model, design, robust.point_masses(0.5))
    assert rmu.crossing(loop, [-1.0]) is None
    with pytest.raises(ValueError, match="no destabilizing perturbation found"):
        robust.robust_stability(loop)
