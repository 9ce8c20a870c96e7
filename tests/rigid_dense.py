"""The dense rigid-bar path of version 1.0, in numpy: the oracle of the sparse kernels.

`accelerations` forms W = M^-1 (on the free coordinates), S = J W J^T and solves
S lambda = -(J W xi + Jdot qd) by least squares (rcond 1e-12; the Cholesky solution when S is
positive definite); `correction_step` is one minimum-norm Newton step of the direct correction
by SVD least squares on the dense (2c+1) x (6n+1) matrix A_c (docs/theory.md, "The direct
correction with the energy row"), the columns no row involves left out.
"""

from __future__ import annotations

import numpy as np

from tenscontrol.mechanics.rigid import kernels as K


def _bar_rows(model, q):
    """J (nc, 3n) of the constrained bars at q."""
    bi, bj, _ = model.bars
    J = np.zeros((len(bi), q.size))
    for r, (i, j) in enumerate(zip(bi, bj)):
        b = q[3 * j:3 * j + 3] - q[3 * i:3 * i + 3]
        J[r, 3 * j:3 * j + 3] = 2 * b
        J[r, 3 * i:3 * i + 3] = -2 * b
    return J


def accelerations(model, q, qd, f):
    """(qdd (3n,), lam (nc,)) by the dense path."""
    W, G = model.W, model.G
    xi = G + f
    K.member_forces(q, qd, model.members, np.empty(model.members.i.size), xi)
    J = _bar_rows(model, q)
    Jd = _bar_rows(model, qd)
    S = J @ W @ J.T
    rhs = -(J @ W @ xi + Jd @ qd)   # Jdot qd: row k is 2 bd_k . bd_k
    lam = np.linalg.lstsq(S, rhs, rcond=1e-12)[0]
    return W @ (xi + J.T @ lam), lam


def correction_step(model, y, E0, energy=True):
    """One minimum-norm correction step dx (6n+1,) at y by dense SVD least squares."""
    nq = (y.size - 1) // 2
    q, qd = y[:nq], y[nq:2 * nq]
    free = model.col >= 0
    bi, bj, bl = model.bars
    J, Xv = _bar_rows(model, q), _bar_rows(model, qd)
    Z = np.zeros_like(J)
    rows = [np.hstack([J, Z, np.zeros((len(bi), 1))]), np.hstack([Xv, J, np.zeros((len(bi), 1))])]
    l2 = np.array([np.sum((q[3 * j:3 * j + 3] - q[3 * i:3 * i + 3]) ** 2) for i, j in zip(bi, bj)])
    r = [bl ** 2 - l2, -J @ qd]
    if energy:
        fq = model.G.copy()
        K.elastic_forces(q, model.members, np.empty(model.members.i.size), fq)
        rows.append(np.hstack([-fq, model.M @ qd, [-1.0]])[None, :])
        r.append([E0 + y[2 * nq] - float(K.total_energy(q, qd, model.kernel))])
    A, r = np.vstack(rows), np.concatenate(r)
    A[:, np.concatenate([~free, ~free, [False]])] = 0.0
    used = np.flatnonzero(np.any(A != 0.0, axis=0))
    dx = np.zeros(A.shape[1])
    dx[used] = np.linalg.lstsq(A[:, used], r, rcond=1e-12)[0]
    return dx
