"""dlqr's sampled-data cost: the rectangle rule against the exact (Van Loan) cost (issue 30).

``dlqr`` minimizes the continuous LQR cost ``int z^T Q_r z + u^T R u dt`` over the sampled
loop. In 1.0 it weighted each period by the rectangle rule (``Q_r T``, ``R T``, no cross
term); ``cost="exact"`` (the default now) integrates the cost exactly over each period under
the hold: ``Qd, Rd, Nd`` from Van Loan's integrals (:func:`tenscontrol.linear.sampling.
sampled_cost`).

For the README's T-bar (``catalog.tbar("stedy", damping=1.0)`` at 10 N/m, passive model,
outputs x, z of nodes 2 and 3, effort 1e-2) at each period, against an independent exact design
(``Qd, Rd, Nd`` by ``scipy.integrate.quad_vec`` of matrix-exponential products, the gain by
python-control's ``dlqr`` with the cross term N), the table gives for each of dlqr's costs:

- the relative gain difference ``||K - K_exact||_F / ||K_exact||_F``;
- the true sampled-data cost of the gain, evaluated exactly: the closed loop's cost from the
  initial states z0 of unit covariance, ``trace P_K`` with ``P_K = Acl^T P_K Acl + Qd - Nd K
  - K^T Nd^T + K^T Rd K`` (discrete Lyapunov), and its excess over the optimum
  ``trace P_K / trace P_exact - 1``.

Run: PYTHONPATH=. python benchmarks/bench_dlqr_cost.py [--periods 0.005,0.2,0.5]
(about ten seconds)
"""

from __future__ import annotations

import argparse

import control as ct
import numpy as np
import scipy.integrate
import scipy.linalg

import tenscontrol as tc


def independent_weights(A, B, Q, R, period):
    """(Qd, Rd, Nd) of the cost over one period with u held, by adaptive quadrature of
    ``[Phi(s) Gamma(s); 0 I]^T diag(Q, R) [...]`` with Phi, Gamma from scipy's expm."""
    n, m = B.shape

    def integrand(s):
        big = np.zeros((n + m, n + m))
        big[:n, :n], big[:n, n:] = A * s, B * s
        E = scipy.linalg.expm(big)          # [[Phi(s), Gamma(s)], [0, I]]
        return E.T @ scipy.linalg.block_diag(Q, R) @ E

    W, _ = scipy.integrate.quad_vec(integrand, 0.0, period, epsabs=0.0, epsrel=1e-12)
    W = 0.5 * (W + W.T)
    return W[:n, :n], W[n:, n:], W[:n, n:]


def true_cost(Ad, Bd, Qd, Rd, Nd, K) -> float:
    """trace P_K: the exact sampled-data cost of u = -K z from unit-covariance initial states."""
    Acl = Ad - Bd @ K
    stage = Qd - Nd @ K - K.T @ Nd.T + K.T @ Rd @ K
    P = scipy.linalg.solve_discrete_lyapunov(Acl.T, 0.5 * (stage + stage.T))
    return float(np.trace(P))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--periods", default="0.005,0.2,0.5")
    args = parser.parse_args()
    s = tc.equilibrium(tc.catalog.tbar("stedy", damping=1.0), gamma_min=10.0).structure
    model = tc.linearize(s, kind="passive", outputs=tc.Selection(nodes=[2, 3], axes="xz"))
    print(f"{'period [s]':>10} {'cost':>10} {'|dK|/|K_exact|':>15} {'trace P_K':>12} "
          f"{'excess':>10}")
    for period in map(float, args.periods.split(",")):
        designs = {c: tc.dlqr(model, period, effort=1e-2, cost=c)
                   for c in ("rectangle", "exact")}
        exact = designs["exact"]
        mr, R = exact.continuous.minimal, exact.continuous.R
        nu = R.shape[0]
        A, B = np.asarray(mr.sys.A), np.asarray(mr.sys.B)[:, :nu]
        Qr = mr.basis.T @ exact.continuous.Q @ mr.basis
        Qd, Rd, Nd = independent_weights(A, B, 0.5 * (Qr + Qr.T), R, period)
        Ad, Bd = exact.model.Phi, exact.model.Gamma0
        K_ref, _, _ = ct.dlqr(Ad, Bd, Qd, Rd, Nd)
        K_ref = np.asarray(K_ref)
        best = true_cost(Ad, Bd, Qd, Rd, Nd, K_ref)
        for name, design in (("independent", None), *designs.items()):
            K = K_ref if design is None else design.K_reduced
            J = true_cost(Ad, Bd, Qd, Rd, Nd, K)
            dK = np.linalg.norm(K - K_ref) / np.linalg.norm(K_ref)
            print(f"{period:>10g} {name:>11} {dK:>14.3e} {J:>12.6g} {J / best - 1:>10.3e}")


if __name__ == "__main__":
    main()
