"""Compiled pieces of the Dormand-Prince 5(4) step, for step loops compiled with numba.

:class:`tenscontrol.integrate.dopri.Dopri54` runs its step loop in Python and calls the
right-hand side through Python. A caller whose right-hand side is itself a numba function can
write the whole loop as one compiled function (:class:`tenscontrol.integrate.chunked.ChunkedDopri54`
drives such a loop in bounded chunks). These functions are that loop's Dormand-Prince parts,
with the same tableau (imported from :mod:`~tenscontrol.integrate.dopri`) and the same
arithmetic as :class:`~tenscontrol.integrate.dopri.Dopri54`, so that both loops take the same
steps: the stage states, the continuous extension and the smallest resolvable step here, and
the step to attempt, the max-norm error test and the step-size factors, which are Dopri54's
own njit functions (:func:`~tenscontrol.integrate.dopri.attempt`,
:func:`~tenscontrol.integrate.dopri.error_norm`,
:func:`~tenscontrol.integrate.dopri.rejected_step`,
:func:`~tenscontrol.integrate.dopri.grown_step`), re-exported.

Why pieces and not a generic compiled loop taking the right-hand side as an argument: numba
does not cache a function that takes, or closes over, another compiled function (its type holds
the function object, so every process would compile the loop afresh, seconds each time); the
loop therefore lives next to its right-hand side and calls these pieces, which cache.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tenscontrol.integrate.dopri import A, DENSE
# the step control is Dopri54's own, one definition for both loops
from tenscontrol.integrate.dopri import attempt, error_norm, grown_step, rejected_step

__all__ = ["attempt", "dense_state", "error_norm", "grown_step", "rejected_step", "stage_state",
           "step_too_small"]


@njit(cache=True)
def stage_state(y0, K, s, h, out):
    """out (n,) = y0 + h sum_j A[s, j] K[j]: the state of stage s (s = 6: the 5th-order
    solution)."""
    # one pass over the components, adding the stages in Dopri54's order (the same rounding);
    # an array expression per stage cost 4x as much on a small state
    for i in range(y0.shape[0]):
        v = y0[i]
        for j in range(s):
            a = A[s, j]
            if a != 0.0:
                v += (h * a) * K[j, i]
        out[i] = v


@njit(cache=True)
def step_too_small(h, t, t_final):
    """Whether h [s] is below the smallest step floating point resolves near t (16 ulps of the
    larger of |t|, |t_final|), as :func:`tenscontrol.integrate.base.smallest_step`."""
    return not (h >= 16 * np.spacing(max(abs(t), abs(t_final))))


@njit(cache=True)
def dense_state(y0, y1, y1_uncorrected, K, h, theta, out):
    """out (n,) = the state at t0 + theta h, theta in [0, 1], of an accepted step (as
    :meth:`tenscontrol.integrate.dopri.DopriStep.dense`): the continuous extension of dopri5
    from y0 to the uncorrected end point, plus the end point's correction blended in linearly."""
    th1 = 1.0 - theta
    for i in range(y0.shape[0]):
        dy = y1_uncorrected[i] - y0[i]
        bspl = h * K[0, i] - dy
        r4 = dy - h * K[6, i] - bspl
        r5 = 0.0
        for j in range(7):
            r5 += DENSE[j] * K[j, i]
        r5 *= h
        y = y0[i] + theta * (dy + th1 * (bspl + theta * (r4 + th1 * r5)))
        out[i] = y + theta * (y1[i] - y1_uncorrected[i])
