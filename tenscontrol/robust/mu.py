"""Bounds of the structured singular value mu for real scalar parameters.

See docs/theory.md, "Structured uncertainty and mu". With ``Delta = diag(delta_i I_{r_i})`` real,
``|delta_i| <= 1``:

- one parameter: exact, mu = the largest |real eigenvalue| of M (:func:`real_eigenvalue_mu`).
- upper bound: the D-G scaling bound of Fan, Tits and Doyle (1991), computed by SLICOT's AB13MD
  (slycot.ab13md) at one frequency. AB13MD takes real blocks of size 1 only, so a repeated real
  scalar (r_i > 1) is covered by r_i independent real scalars: the bound stays an upper bound
  (the set of perturbations grows), possibly a looser one.
- lower bound: the power iteration of Young and Doyle (1990) for real scalars gives a direction
  at one frequency; the destabilizing perturbation is then found in the state space (the
  smallest scaling of a direction that puts a closed-loop eigenvalue on the imaginary axis) and
  improved by moving to the vertex that the crossing eigenvalue's sensitivities point at
  (:func:`polished_crossing`). Every perturbation returned puts an eigenvalue on the axis, so
  ``1 / max|delta|`` is a certified lower bound of the peak of mu.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg
import scipy.optimize
import slycot
import slycot.exceptions

__all__ = ["Crossing", "balanced", "crossing", "mu_upper", "polished_crossing", "power_iteration",
           "scaled_norm_bound"]

#: Iterations of the Young-Doyle power iteration; it converges in tens when it does, and for
#: purely real problems it often cycles, so it only proposes a direction here.
POWER_ITERATIONS = 60
#: Steps of the vertex polish; each is a bracketed root find of the crossing along a direction.
POLISH_STEPS = 30
#: Relative accuracy of the crossing scale (brentq's xtol relative to the scale): far below the
#: 1e-8 required of Re(lambda) on the axis.
SCALE_RTOL = 1e-13
#: An eigenvalue is on the imaginary axis when |Re| <= this times ||A|| of the nominal loop (the
#: issue's 1e-8; not the perturbed ||A||, which blows up near a singular point, nor |lambda|,
#: which is 0 at a 0 rad/s crossing): brentq's crossings sit near 1e-15, while the singular
#: point of a point mass at zero, where the abscissa jumps from < 0 to +inf, leaves the
#: rightmost finite eigenvalue far off the axis (T-bar: 0.8 1/s; ball: -1.3 1/s).
AXIS_RTOL = 1e-8
#: Growth factor of the scan for the first destabilizing scale along a direction: small enough
#: not to step over a short unstable interval, at most this many steps.
SCAN_FACTOR, SCAN_STEPS = 1.15, 200
#: An eigenvalue of M(j w) with |Im| below this times its modulus is real (round-off of a
#: real eigenvalue of a complex matrix is ~1e-15; a genuine crossing found by brentq ~1e-12).
REAL_RTOL = 1e-9


def mu_upper(M: np.ndarray, blocks, performance: int = 0) -> float:
    """Upper bound of mu of `M` for real blocks `blocks` (sizes r_i) and a complex block.

    Parameters
    ----------
    M : ndarray, shape (r + p, r + p)
        Complex matrix, e.g. ``UncertainLoop.response(omega)``.
    blocks : sequence of int
        Sizes of the repeated real scalar blocks (each covered by r_i independent real scalars).
    performance : int
        Size p of a full complex block appended after the real ones (0: none).

    Returns
    -------
    float

    Notes
    -----
    Always a cold start: AB13MD warm-started from the previous frequency's state (its ``x``)
    ran for minutes on the ball's 30 x 30 matrices where a cold call takes about 1 s.
    """
    r = int(sum(blocks))
    if len(blocks) == 1 and not performance:
        return real_eigenvalue_mu(M)
    nblock = np.ones(r + (performance > 0), dtype=np.int64)
    itype = np.ones_like(nblock)
    if performance:
        nblock[-1], itype[-1] = performance, 2
    # a diagonal similarity leaves mu unchanged; AB13MD ran for minutes (killed) on the
    # ball's unbalanced M at 6436 rad/s (sigma_max 1.3e4, balanced 0.50) and takes 1.3 s balanced
    M = np.ascontiguousarray(balanced(M), dtype=complex)
    try:
        return float(slycot.ab13md(M, nblock, itype)[0])
    except slycot.exceptions.SlycotError:
        pass
    # AB13MD's eigenvalue step can fail (info 6, seen on the 3-prism); complex blocks contain
    # the real ones, so their bound is still an upper bound, and sigma_max bounds every mu
    try:
        return float(slycot.ab13md(M, nblock, np.full_like(itype, 2))[0])
    except slycot.exceptions.SlycotError:
        return float(np.linalg.norm(M, 2))


def balanced(M: np.ndarray) -> np.ndarray:
    """``T^-1 M T`` with T diagonal (LAPACK gebal's scaling, powers of 2, no permutation).

    A diagonal T commutes with every diagonal Delta, so mu (real or complex, any scalar blocks)
    is unchanged; the balanced matrix is far better conditioned for AB13MD.
    """
    M = np.asarray(M)
    _, (t, _) = scipy.linalg.matrix_balance(M, permute=False, separate=True)
    return M / t[:, None] * t[None, :]


def scaled_norm_bound(M: np.ndarray) -> float:
    """A cheap upper bound of mu for scalar blocks: sigma_max of the balanced M.

    ``det(I - M Delta) = det(I - T^-1 M T Delta)`` for diagonal T, and a singular ``I - X Delta``
    needs ``sigma_max(X) max|delta_i| >= 1``; one SVD, against AB13MD's D-G optimization (about
    1 s at 33 channels). It never undercuts :func:`mu_upper` by more than AB13MD's accuracy.
    """
    return float(np.linalg.norm(balanced(M), 2))


def real_eigenvalue_mu(M: np.ndarray) -> float:
    """Exact mu of `M` for one repeated real scalar ``delta I``: the largest |real eigenvalue|.

    ``det(I - delta M) = 0`` for real delta exactly when 1/delta is a real eigenvalue of M; an
    eigenvalue counts as real when ``|Im| <= REAL_RTOL |lambda|``. Zero where M has none (real
    mu is discontinuous in frequency: nonzero at isolated frequencies for one parameter).
    """
    lam = np.linalg.eigvals(M)
    real = lam[np.abs(lam.imag) <= REAL_RTOL * np.abs(lam)]
    return float(np.abs(real).max(initial=0.0))


def power_iteration(M: np.ndarray, blocks, iterations: int = POWER_ITERATIONS,
                    seed: int = 0) -> tuple:
    """Young and Doyle's (1990) power iteration for real scalar blocks at one frequency.

    Parameters
    ----------
    M : ndarray, shape (r, r)
    blocks : sequence of int

    Returns
    -------
    (q, beta) : (ndarray (m,), float)
        The real scalars q_i in [-1, 1] of the fixed point (a direction of perturbation) and
        the iteration's estimate beta. At a fixed point with every |q_i| = 1,
        ``det(I - M diag(q_i I) / beta) = 0``.
    """
    r = M.shape[0]
    edges = np.cumsum(np.r_[0, blocks])
    rng = np.random.default_rng(seed)
    b = rng.standard_normal(r) + 1j * rng.standard_normal(r)
    w = rng.standard_normal(r) + 1j * rng.standard_normal(r)
    b, w = b / np.linalg.norm(b), w / np.linalg.norm(w)
    q, beta = np.zeros(len(blocks)), 0.0

    def align(a, w):
        """q_i and the mixed vectors: b_i = q a_i + sqrt(1-q^2) |a_i|/|w_i| w_i, z likewise."""
        bb, zz = np.empty_like(a), np.empty_like(w)
        for i, (s, e) in enumerate(zip(edges[:-1], edges[1:])):
            ai, wi = a[s:e], w[s:e]
            na, nw, c = np.linalg.norm(ai), np.linalg.norm(wi), np.vdot(wi, ai)
            q[i] = c.real / abs(c) if abs(c) > 0 else 0.0
            t = np.sqrt(max(0.0, 1.0 - q[i] ** 2))
            bb[s:e] = q[i] * ai + (t * na / nw * wi if nw > 0 else 0.0)
            zz[s:e] = q[i] * wi + (t * nw / na * ai if na > 0 else 0.0)
        return bb, zz

    for _ in range(iterations):
        a = M @ b
        beta = float(np.linalg.norm(a))
        if beta == 0.0:
            break
        a /= beta
        _, z = align(a, w)
        w = M.conj().T @ z
        nw = np.linalg.norm(w)
        if nw == 0.0:
            break
        w /= nw
        b, _ = align(a, w)
        b /= max(np.linalg.norm(b), np.finfo(float).tiny)
    return q.copy(), beta


class Crossing:
    """A perturbation that puts a closed-loop eigenvalue on the imaginary axis.

    Attributes: ``delta`` (m,), ``size`` = max |delta|, ``eigenvalue`` (complex, 1/s),
    ``residual`` = |Re eigenvalue| / ||A(delta)||.
    """

    __slots__ = ("delta", "size", "eigenvalue", "residual")

    def __init__(self, delta, eigenvalue, residual):
        self.delta = np.asarray(delta, dtype=float)
        self.size = float(np.abs(self.delta).max())
        self.eigenvalue, self.residual = complex(eigenvalue), float(residual)

    def __repr__(self) -> str:
        return (f"Crossing(size={self.size:.6g}, eigenvalue={self.eigenvalue:.4g}, "
                f"residual={self.residual:.1e})")


def _abscissa(loop, delta) -> float:
    try:
        return float(np.linalg.eigvals(loop.closed_loop(delta)).real.max())
    except np.linalg.LinAlgError:   # I - D_zw Delta singular: a mass at zero, not a loop
        return np.inf


def crossing(loop, direction, start: float = 0.0) -> Crossing | None:
    """The smallest t > start with an eigenvalue of ``loop.closed_loop(t d)`` on the axis.

    `direction` d is normalized to max |d| = 1; `start` is a scale known to be stable (e.g.
    the certified margin). None if the scan finds no instability up to its end.
    """
    d = np.asarray(direction, dtype=float)
    if not np.any(d):
        return None
    d = d / np.abs(d).max()
    lo = max(start, 1e-6)
    if _abscissa(loop, lo * d) >= 0.0:
        lo = 0.0
    hi = None
    t = max(lo, 1e-3) * SCAN_FACTOR
    for _ in range(SCAN_STEPS):
        if _abscissa(loop, t * d) >= 0.0:
            hi = t
            break
        lo, t = t, t * SCAN_FACTOR
    if hi is None:
        return None
    t = scipy.optimize.brentq(lambda s: _abscissa(loop, s * d), lo, hi,
                              xtol=SCALE_RTOL * hi, rtol=4 * np.finfo(float).eps, maxiter=200)
    A = loop.closed_loop(t * d)
    lam = np.linalg.eigvals(A)
    k = int(np.argmax(lam.real))
    if abs(lam[k].real) > AXIS_RTOL * np.linalg.norm(loop.A, 2):
        # the abscissa jumped over 0 instead of crossing it: a singular I - D_zw Delta (a
        # point mass at zero) sends eigenvalues to infinity there, no eigenvalue is on the axis
        return None
    return Crossing(t * d, lam[k], abs(lam[k].real) / np.linalg.norm(A, 2))


def sensitivities(loop, delta) -> np.ndarray:
    """d Re(lambda)/d delta_i of the eigenvalue of ``closed_loop(delta)`` with largest real part.

    ``dA/d delta_i = B_w (I - Delta D)^-1 E_i (I - D Delta)^-1 C_z`` (E_i selects block i).
    """
    d = loop.expand(delta)
    A = loop.closed_loop(delta)
    lam, vl, vr = scipy.linalg.eig(A, left=True, right=True)
    k = int(np.argmax(lam.real))
    u, v = vr[:, k], vl[:, k]
    eye = np.eye(d.size)
    # the row v^H B_w (I - Delta D_zw)^-1, transposed
    left = np.linalg.solve((eye - d[:, None] * loop.D_zw).T, loop.B_w.T @ v.conj())
    right = np.linalg.solve(eye - loop.D_zw * d, loop.C_z @ u)
    per_channel = left * right / (v.conj() @ u)
    edges = np.cumsum(np.r_[0, loop.blocks])
    return np.array([per_channel[s:e].sum().real for s, e in zip(edges[:-1], edges[1:])])


def polished_crossing(loop, first: Crossing, start: float = 0.0,
                      deadline: float | None = None) -> Crossing:
    """Walk from `first` toward the smallest destabilizing perturbation (max-norm).

    On the crossing surface Re(lambda(delta)) = 0 with gradient g, the smallest max-norm point
    of the tangent plane ``g . delta = g . delta_c`` is the vertex ``(g . delta_c / |g|_1)
    sign(g)``: each real scalar at its bound with the sign of its sensitivity, the real-block
    step of the power iteration. Each step keeps a better exact crossing along the new direction.
    Stops early once ``time.process_time()`` passes `deadline` (CPU seconds), keeping the best.
    """
    best = first
    for _ in range(POLISH_STEPS):
        if deadline is not None and time.process_time() > deadline:
            break
        g = sensitivities(loop, best.delta)
        if not np.any(g):
            break
        target = np.sign(g) * (g @ best.delta) / np.abs(g).sum()
        improved = None
        for mix in (1.0, 0.5, 0.25):      # damped when the linear step overshoots
            trial = crossing(loop, mix * target + (1 - mix) * best.delta, start)
            if trial is not None and trial.size < best.size * (1 - 1e-12):
                improved = trial
                break
        if improved is None:
            break
        converged = improved.size > best.size * (1 - 1e-9)
        best = improved
        if converged:
            break
    return best
