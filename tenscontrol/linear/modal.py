"""Modal analysis of an elastic model and of a controller's loop closed around it.

The numbers behind :func:`tenscontrol.modes` (:mod:`tenscontrol.linear.modal_view`), the
designs' damping verdict (:mod:`tenscontrol.design.verdict`) and :func:`tenscontrol.verify`'s:
each elastic mode's eigenvalue, natural frequency, damping ratio and kind, its authority (how
much damping the commanded strings can add to it) and its modal H2 norms (Gawronski,
*Dynamics and Control of Structures: A Modal Approach*, 1998, ch. 4); the closed loop of a
runtime controller on the same elastic model; and the matching of open- to closed-loop modes.

A "mode" is one eigenvalue with ``Im >= 0`` of the elastic state matrix: a complex pair
(oscillatory), a negative real eigenvalue (overdamped), one numerically at zero (static: a
mechanism without stiffness) or one with ``Re > 0`` (unstable). Constraint directions and
rigid-body motion are not in the elastic model (:func:`tenscontrol.elastic_model`).

The closed loop is formed on the elastic model from the runtime controller (state feedback,
output feedback, sampled linear feedback with its delay), so modes the design's reduced model
left out appear with their true closed-loop value; an MPC is represented by its unconstrained
law, an estimator-based sampled loop by its design eigenvalues. Each open-loop mode is matched
to one closed-loop eigenvalue by an assignment on mode-shape correlation (MAC) and eigenvalue
distance.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg
import scipy.optimize

from tenscontrol.control.controllers import OutputFeedback, StateFeedback
from tenscontrol.control.sampled import DiscreteFeedback
from tenscontrol.linear.sampling import exact_hold

if TYPE_CHECKING:   # the reduction imports python-control; importing a design must not
    from tenscontrol.linear.reduction import ElasticModel

__all__ = ["CLUSTER", "DEFAULT_DAMPING", "STATIC_RTOL", "closed_loop_eigenvalues",
           "controller_of", "damping_ratios", "eigenspaces", "match_modes", "modal_analysis",
           "static_threshold"]

#: (structural control aims at a few per cent; bare tensegrity modes sit at 0.01-1 %).
DEFAULT_DAMPING = 0.02
#: An eigenvalue within this fraction of the largest |eigenvalue| of the model is static
#: (zero frequency): the damping ratio is not defined there.
STATIC_RTOL = 1e-9
#: Weight of the relative eigenvalue distance (saturating, d / (1 + d)) against (1 - MAC) when
#: modes are matched.
_DISTANCE_WEIGHT = 1.0
#: A modal block whose eigenvalues' real part is within this fraction of their modulus of
#: the imaginary axis is marginal: its H2 norm is infinite.
_AXIS_RTOL = 1e-13
#: A modal basis this ill-conditioned belongs to a defective eigenvalue (Jordan block).
_DEFECTIVE_COND = 1e12
#: Discrete eigenvalues of modulus below this are the exact zeros of held-command states.
_ZERO_Z = 1e-12
#: Eigenvalues within this fraction of ||A||_F of each other are one eigenspace: a symmetric
#: structure's double modes split only by round-off, so a figure computed per space does not
#: depend on the eigenvectors the solver chose in it.
CLUSTER = 1e-6


def eigenspaces(A, rtol: float = CLUSTER) -> tuple:
    """The eigenvalues of A grouped into eigenspaces: (lam (n,), V (n, n) right eigenvectors,
    as numpy's ``eig`` gives them, groups), groups a list of index arrays: in order, each
    unassigned eigenvalue with every unassigned one within ``rtol ||A||_F`` of it (so a
    conjugate pair falls in two groups, one per eigenvalue). The one clustering of the actuator
    placement's modal index (:mod:`tenscontrol.design.placement`) and the sensors'
    observability rank (:func:`tenscontrol.estimation.rank.observed_rank`).

    Parameters
    ----------
    A : ndarray, shape (n, n)
    rtol : float
        The clustering radius relative to ``||A||_F``.
    """
    A = np.asarray(A, dtype=float)
    lam, V = np.linalg.eig(A)
    radius, done = rtol * np.linalg.norm(A), np.zeros(lam.size, dtype=bool)
    groups = []
    for i in range(lam.size):
        if done[i]:
            continue
        idx = np.flatnonzero(~done & (np.abs(lam - lam[i]) <= radius))
        done[idx] = True
        groups.append(idx)
    return lam, V, groups


def static_threshold(eigenvalues) -> float:
    """|lambda| [1/s] at or below which an eigenvalue counts as static: :data:`STATIC_RTOL`
    times the largest |lambda| (0 if every eigenvalue is 0)."""
    return STATIC_RTOL * float(np.abs(np.asarray(eigenvalues)).max(initial=0.0))


def damping_ratios(eigenvalues, static: float) -> np.ndarray:
    """-Re / |lambda| of continuous eigenvalues; nan where |lambda| <= `static` [1/s]."""
    lam = np.asarray(eigenvalues, dtype=complex)
    w = np.abs(lam)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(w > static, -lam.real / np.where(w > 0, w, 1.0), np.nan)


def _eig(A: np.ndarray):
    """Eigenvalues with Im >= 0 (one per pair), sorted by |lambda|, their right eigenvectors, and
    the real modal blocks: (lam, V, blocks) with blocks[i] the columns of the real modal basis
    (2 for a pair, 1 for a real eigenvalue) and their rows of its inverse."""
    lam, V = scipy.linalg.eig(A)
    scale = max(float(np.abs(lam).max(initial=0.0)), np.finfo(float).tiny)
    keep = lam.imag >= -1e-12 * scale
    real = np.abs(lam.imag) <= 1e-12 * scale
    lam, V = np.where(real, lam.real, lam)[keep], V[:, keep]
    order = np.lexsort((lam.real, np.abs(lam)))
    lam, V = lam[order], V[:, order]
    cols, sizes = [], []
    for k in range(lam.size):
        if lam[k].imag == 0:
            cols.append(V[:, k].real)
            sizes.append(1)
        else:
            cols += [V[:, k].real, V[:, k].imag]
            sizes.append(2)
    T = np.column_stack(cols) if cols else np.zeros((A.shape[0], 0))
    if not T.size:
        Ti = T.T
    elif np.linalg.cond(T) < _DEFECTIVE_COND:
        Ti = np.linalg.solve(T, np.eye(T.shape[0]))
    else:
        # a defective eigenvalue (a mechanism with a singular damping matrix, at zero
        # frequency): no modal basis exists; the pseudo-inverse keeps the other modes' blocks
        Ti = np.linalg.pinv(T)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    blocks = [(T[:, a:b], Ti[a:b]) for a, b in zip(starts[:-1], starts[1:])]
    return lam, V, blocks


def _gramian_map(L: np.ndarray):
    """The linear map b b^T -> P of the block's Lyapunov equation ``L P + P L^T + b b^T = 0``
    as a (k^2, k^2) matrix on row-major vec (k = 1 or 2), or None if the block is not
    asymptotically stable (its H2 norm is infinite)."""
    lam = np.linalg.eigvals(L)
    # on the axis to rounding (an undamped mode's -1e-17) counts as on it: the map is singular
    if lam.real.max() >= -_AXIS_RTOL * np.abs(lam).max():
        return None
    k = L.shape[0]
    eye = np.eye(k)
    try:
        return -np.linalg.inv(np.kron(L, eye) + np.kron(eye, L))
    except np.linalg.LinAlgError:
        return None


def _modal_h2(L: np.ndarray, Bm: np.ndarray, Cm: np.ndarray, per: str) -> np.ndarray:
    """Modal H2 norms of the block (L, Bm, Cm): from each input column to all the outputs
    (`per` "input") or to each output row from all the inputs ("output").

    One Lyapunov map per block, applied to every column at once: ``||G||_2^2 = vec(C^T C) .
    vec(P)``; inf where the block is not stable and both gains are nonzero, 0 where one is."""
    G = _gramian_map(L)
    if per == "input":
        gain_in = np.any(Bm != 0, axis=0)
        gain_out = np.full(Bm.shape[1], bool(np.any(Cm)))
    else:
        gain_in = np.full(Cm.shape[0], bool(np.any(Bm)))
        gain_out = np.any(Cm != 0, axis=1)
    live = gain_in & gain_out
    if G is None:
        return np.where(live, np.inf, 0.0)
    if per == "input":
        outer = np.einsum("aj,bj->abj", Bm, Bm).reshape(-1, Bm.shape[1])   # vec(b_j b_j^T)
        P = G @ outer                                                     # (k^2, nu)
        w = (Cm.T @ Cm).reshape(-1)
        h2 = w @ P
    else:
        P = (G @ (Bm @ Bm.T).reshape(-1)).reshape(L.shape)
        h2 = np.einsum("ka,ab,kb->k", Cm, P, Cm)
    return np.where(live, np.sqrt(np.maximum(h2, 0.0)), 0.0)


def _classify(lam: np.ndarray, static: float) -> tuple:
    kinds = []
    for value in lam:
        if abs(value) <= static:
            kinds.append("static")
        elif value.real > static * 1e-3 and value.real > 0:
            kinds.append("unstable")
        elif value.imag == 0:
            kinds.append("overdamped")
        else:
            kinds.append("oscillatory")
    return tuple(kinds)


def modal_analysis(em: ElasticModel) -> dict:
    """The structure-free modal figures of an elastic model.

    Returns a dict with lam (m,), V (2 n_e, m) eigenvectors, blocks, frequency, damping, kind,
    authority (m,), reach (m, nu), disturbance_reach (m, nd), visibility (m, ny) and the
    static threshold [1/s]; see :class:`ModalView` for their meaning.
    """
    A = np.asarray(em.A, dtype=float)
    lam, V, blocks = _eig(A)
    static = static_threshold(lam)
    n_e = em.n_e
    B, E, C = (np.asarray(X, dtype=float) for X in (em.B, em.E, em.C))
    reach = np.zeros((lam.size, B.shape[1]))
    dreach = np.zeros((lam.size, E.shape[1]))
    vis = np.zeros((lam.size, C.shape[0]))
    authority = np.zeros(lam.size)
    forces = em.M_e @ B[n_e:]                 # Z^T F_u: generalized forces per unit command
    for i, (Tm, Tim) in enumerate(blocks):
        L = Tim @ A @ Tm
        Bm, Em, Cm = Tim @ B, Tim @ E, C @ Tm
        reach[i] = _modal_h2(L, Bm, Cm, "input")
        dreach[i] = _modal_h2(L, Em, Cm, "input")
        vis[i] = _modal_h2(L, Em, Cm, "output")
        phi = V[:n_e, i]
        mass = float(np.real(phi.conj() @ em.M_e @ phi))
        w = max(abs(lam[i]), static, np.finfo(float).tiny)
        if mass > 0:
            authority[i] = float(np.sum(np.abs(phi.conj() @ forces) ** 2)) / (2 * w * mass)
    if authority.max(initial=0.0) > 0:
        authority = authority / authority.max()
    return dict(lam=lam, V=V, blocks=blocks, frequency=np.abs(lam),
                damping=damping_ratios(lam, static), kind=_classify(lam, static),
                authority=authority, reach=reach, disturbance_reach=dreach, visibility=vis,
                static=static)


def match_modes(lam_o, V_o, lam_c, V_c, n_e: int, M_e) -> np.ndarray:
    """The closed-loop eigenvalue assigned to each open-loop mode (nan where none).

    An assignment (each closed-loop eigenvalue used once) minimizing, per pair, ``1 - MAC``
    plus a relative eigenvalue distance ``d / (1 + d)``, ``d = |lam_c - lam_o| / |lam_o|``.
    MAC is the mass-weighted correlation of the position parts, times the share of the
    closed-loop vector in the structure's states (2 n_e first entries): a controller's own
    fast pole has almost none, whatever the direction of its tiny plant part. Without
    closed-loop vectors (`V_c` None) the distance alone decides."""
    scale = max(1.0, float(np.abs(lam_c).max(initial=0.0)))
    idx = np.flatnonzero(lam_c.imag >= -1e-12 * scale)
    cand = lam_c[idx]
    out = np.full(lam_o.size, np.nan + 0j)
    if not cand.size or not lam_o.size:
        return out
    d = np.abs(lam_o[:, None] - cand[None, :]) / np.maximum(np.abs(lam_o), 1e-12)[:, None]
    cost = _DISTANCE_WEIGHT * d / (1 + d)
    if V_c is not None:
        Po, Pc = V_o[:n_e], V_c[:n_e, idx]
        Mo, Mc = M_e @ Po, M_e @ Pc
        cross = np.abs(Po.conj().T @ Mc) ** 2
        no = np.real(np.sum(Po.conj() * Mo, axis=0))
        nc = np.real(np.sum(Pc.conj() * Mc, axis=0))
        mac = cross / np.maximum(np.outer(no, nc), np.finfo(float).tiny)
        full = np.sum(np.abs(V_c[:, idx]) ** 2, axis=0)
        plant = np.sum(np.abs(V_c[:2 * n_e, idx]) ** 2, axis=0) / np.maximum(
            full, np.finfo(float).tiny)
        cost = cost + (1 - mac * plant[None, :])
    rows, cols = scipy.optimize.linear_sum_assignment(cost)
    out[rows] = cand[cols]
    return out


def controller_of(design):
    """(controller, note): the linear law whose loop represents the design."""
    dlqr = getattr(design, "dlqr", None)
    if dlqr is not None:                         # an MPC: its unconstrained law
        return dlqr.controller, "the MPC's unconstrained law (bounds inactive)"
    return getattr(design, "controller", design), None


def closed_loop_eigenvalues(em: ElasticModel, design) -> tuple:
    """(eigenvalues [1/s], eigenvectors or None, description) of `design`'s loop.

    The controller closes the loop on the elastic model `em` (its inputs must be the
    controller's strings): ``u = -K T x_e`` for state feedback, the controller's states added
    for output feedback, the exact zero-order hold with the delay for sampled linear feedback
    (eigenvalues mapped to ``log(z) / period``). Other designs give their own ``E``.
    """
    c, note = controller_of(design)
    A, B, T = (np.asarray(X, dtype=float) for X in (em.A, em.B, em.T))
    if isinstance(c, StateFeedback):
        lam, V = scipy.linalg.eig(A - B @ c.K @ T)
        how = "state feedback on the elastic model"
    elif isinstance(c, OutputFeedback):
        Cm = c.measurement.C @ T
        DK, CK = -c.DK, -c.CK
        Acl = np.block([[A + B @ DK @ Cm, B @ CK], [c.BK @ Cm, c.AK]])
        lam, V = scipy.linalg.eig(Acl)
        how = f"output feedback ({c.n_states} controller states) on the elastic model"
    elif isinstance(c, DiscreteFeedback):
        lam, V = _sampled_loop(A, B, T, c)
        how = (f"sampled feedback every {c.period:g} s (delay {c.delay:g} s) on the elastic "
               "model, log(z)/T")
    else:
        E = np.asarray(getattr(design, "E"), dtype=complex)
        period = getattr(c, "period", None)
        if period:      # z = 0 (a delay-free hold's u_k-1 states) has no continuous counterpart
            E = E[np.abs(E) > _ZERO_Z]
        lam = np.log(E) / period if period else E
        return lam, None, "the design's own closed-loop eigenvalues (reduced model)"
    return lam, V, how if note is None else f"{note}: {how}"


def _sampled_loop(A, B, T, c: DiscreteFeedback):
    """Eigenvalues (as log(z)/T) and vectors of a DiscreteFeedback around the exact ZOH of
    (A, B) with its delay: states [x_e; xc; u_k-1]."""
    period, delay = c.period, c.delay
    nu, nk = B.shape[1], c.n_states
    Phi_d, G_d = exact_hold(A, B, delay)
    Phi_r, G_r = exact_hold(A, B, period - delay)
    Phi, G0, G1 = Phi_r @ Phi_d, G_r, Phi_r @ G_d
    Cs = T if c.measurement is None else c.measurement.C @ T
    DKs, CK = c.DK @ Cs, c.CK
    Acl = np.block([
        [Phi - G0 @ DKs, -G0 @ CK, G1],
        [c.BK @ Cs, c.AK, np.zeros((nk, nu))],
        [-DKs, -CK, np.zeros((nu, nu))]])
    z, V = scipy.linalg.eig(Acl)
    # a delay-free loop's u_k-1 states are exact zeros (z = 0): no continuous counterpart
    live = np.abs(z) > _ZERO_Z
    return np.log(z[live]) / period, V[:, live]
