"""Spectral splitting of a real Schur form: marginal modes kept exactly, the rest reducible.

A tensegrity's elastic model can hold modes that are damped, but so lightly that they count as
on the imaginary axis (prism towers: one mode per stage whose strings do not stretch to first
order, relative damping 1e-9 with string damping 1 N s/m). Balanced truncation is undefined
for them, yet the rest of the model can be truncated. :func:`marginal_split` reorders the real
Schur form (LAPACK ``trsen``) so that the marginal eigenvalues come first and decouples the two
blocks with the Sylvester equation of the quasi-triangular factors (LAPACK ``trsyl``), the
construction of MATLAB's ``stabsep``. It runs after the structural projection, so no rigid
or constraint mode reaches it (docs/theory.md, "Minimal realization"). :func:`complex_schur`
turns a real Schur form into a complex one in O(n^2) work, for frequency responses by
triangular solves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
from scipy.linalg import lapack

__all__ = ["MarginalSplit", "complex_schur", "marginal_split"]


@dataclass(frozen=True, eq=False)
class MarginalSplit:
    """``A = V diag(A_m, A_s) W`` with ``W V = I``; A_m holds the marginal eigenvalues.

    Attributes
    ----------
    k : int
        Number of marginal states (order of A_m).
    S : ndarray (n, n)
        Reordered real Schur form, marginal block first.
    U : ndarray (n, n)
        Its orthogonal factor: ``A = U S U^T``.
    X : ndarray (k, n - k)
        Decoupling: ``S11 X - X S22 + S12 = 0``.
    conditioning : float
        ``1 + ||X||_2``: how much the split amplifies errors (report it when large).
    """

    k: int
    S: np.ndarray
    U: np.ndarray
    X: np.ndarray
    conditioning: float

    def __repr__(self) -> str:
        return (f"MarginalSplit(k={self.k}, n={self.S.shape[0]}, "
                f"conditioning={self.conditioning:.3g})")

    def right(self, V2: np.ndarray) -> np.ndarray:
        """``U [[I, X V2], [0, V2]]``: right basis of (marginal part, stable part's V2)."""
        k = self.k
        top = np.hstack([np.eye(k), self.X @ V2])
        bottom = np.hstack([np.zeros((V2.shape[0], k)), V2])
        return self.U @ np.vstack([top, bottom])

    def left(self, W2: np.ndarray) -> np.ndarray:
        """``[[I, -X], [0, W2]] U^T``: left basis matching :meth:`right`."""
        k, n = self.k, self.S.shape[0]
        top = np.hstack([np.eye(k), -self.X])
        bottom = np.hstack([np.zeros((W2.shape[0], k)), W2])
        return np.vstack([top, bottom]) @ self.U.T if n else np.zeros((k + W2.shape[0], 0))


def _block_select(S: np.ndarray, marginal) -> np.ndarray:
    """LAPACK select flags (both rows of a 2x2 block agree) from a per-eigenvalue predicate."""
    n = S.shape[0]
    sel = np.zeros(n, dtype=np.int32)
    i = 0
    while i < n:
        if i + 1 < n and S[i + 1, i] != 0.0:
            # standardized 2x2 block (LAPACK): equal diagonal, eigenvalues a +- sqrt(b c)
            lam = complex(S[i, i], np.sqrt(abs(S[i, i + 1] * S[i + 1, i])))
            sel[i:i + 2] = marginal(lam)
            i += 2
        else:
            sel[i] = marginal(complex(S[i, i]))
            i += 1
    return sel


def marginal_split(S: np.ndarray, U: np.ndarray, thresh: float, radius: float) -> MarginalSplit:
    """Marginal/stable split of ``A = U S U^T`` (S real Schur).

    Parameters
    ----------
    S, U : ndarray (n, n)
        Real Schur form and its orthogonal factor.
    thresh : float
        Eigenvalues with ``Re >= thresh`` are marginal (callers pass ``-MARGIN * scale``).
    radius : float
        Eigenvalues within ``radius`` of a marginal one join it, so that a numerically split
        cluster is never cut in two.

    Returns
    -------
    MarginalSplit
    """
    eigs = np.linalg.eigvals(S) if S.size else np.zeros(0, complex)
    bad = eigs[eigs.real >= thresh]
    while bad.size:                         # close the set under the cluster radius
        near = np.min(np.abs(eigs[:, None] - bad[None, :]), axis=1) <= radius
        grown = eigs[near | (eigs.real >= thresh)]
        if grown.size == bad.size:
            break
        bad = grown

    def marginal(lam):
        return bool(bad.size) and bool(np.min(np.abs(lam - bad)) <= radius / 2 + 1e-300)

    n = S.shape[0]
    sel = _block_select(S, marginal)
    if 0 < sel.sum() < n:
        Ts, Us, _, _, k, _, _, info = lapack.dtrsen(sel, S, U, job="N")
        if info != 0:
            raise np.linalg.LinAlgError(f"dtrsen failed to reorder the Schur form (info {info})")
    else:
        Ts, Us, k = S, U, int(sel.sum())
    X = np.zeros((k, n - k))
    if 0 < k < n:                           # S11 X - X S22 = -S12
        X, scale, info = lapack.dtrsyl(Ts[:k, :k], Ts[k:, k:], -Ts[:k, k:], isgn=-1)
        if info < 0:
            raise np.linalg.LinAlgError(f"dtrsyl failed (info {info})")
        X = X / scale
    cond = 1.0 + (np.linalg.norm(X, 2) if X.size else 0.0)
    return MarginalSplit(int(k), Ts, Us, X, float(cond))


def complex_schur(S: np.ndarray, U: np.ndarray):
    """Complex Schur form ``(T, Z)`` of ``U S U^T`` from the real one (scipy ``rsf2csf``)."""
    if S.size == 0:
        return S.astype(complex), U.astype(complex)
    return scipy.linalg.rsf2csf(S, U)
