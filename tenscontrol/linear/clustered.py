"""The clustered-cable terms of the linearization: the cable law's gradients and dampers.

See docs/theory.md, "Clustered cables". A cable c of segments k (lengths l_k, unit vectors
e_k) has the length ``L_c = sum_k l_k`` and the gradient ``g_c = dL_c/dq = sum_k Yhat_k q / l_k``
(3n,), the tension ``T_c = k_c (L_c - L0_c)`` while taut, and each segment the force density
``T_c / l_k``. Its nodal force ``-T_c g_c`` couples all its segments: the law's gradient
``d(T_c / l_k)/dq = (k_c / l_k) g_c^T - (T_c / l_k^3) (Yhat_k q)^T`` has a rank-one part over
every node of the cable. Its damper adds ``c_c dL_c/dt`` to the tension along the same g_c.

:func:`linearize` (:mod:`tenscontrol.linear.linearization`) replaces the segments' own string
law by these; :meth:`LinearModel.actuated` turns the segments' inputs into one tension input
per commanded cable with :func:`cable_input_columns`.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from tenscontrol.mechanics.geometry import member_columns, weighted_laplacian

__all__ = ["CableTerms", "cable_input_columns", "cable_terms", "tension_gradients"]

#: A cable within this relative distance of its rest length sits on the kink of its one-sided
#: law, as a string does (tenscontrol.statics.stiffness.string_activity uses the same 1e-12).
_AT_REST_TOL = 1e-12


class CableTerms(NamedTuple):
    """The cables' part of the linearization at (q, qd).

    Attributes
    ----------
    segment : ndarray of bool, shape (n_strings,)
        Which strings are cable segments (their own law is replaced by the cable's).
    active : ndarray of bool, shape (n_strings,)
        Segments of taut cables (their force, damper and input column on); False elsewhere.
    law : ndarray, shape (n_strings,)
        Segment force densities ``T_c / l_k`` [N/m] (0 off the segments and for slack cables).
    grad : ndarray, shape (n_strings, 3n)
        ``d (T_c / l_k)/dq`` [N/m^2] of the segments of taut cables, zero rows elsewhere.
    Dq, Dqd : ndarray, shape (3n, 3n)
        ``d f_d/dq`` [N/m], ``d f_d/dqd`` [N s/m] of the cables' dampers.
    fd : ndarray, shape (3n,)
        The cables' damper forces [N].
    """

    segment: np.ndarray
    active: np.ndarray
    law: np.ndarray
    grad: np.ndarray
    Dq: np.ndarray
    Dqd: np.ndarray
    fd: np.ndarray


def _gradients(structure, Yh: np.ndarray, l: np.ndarray) -> np.ndarray:
    """g_c^T = dL_c/dq (n_cables, 3n) from the string columns Yh (3n, ns) and lengths l (ns,)."""
    S = np.zeros((structure.n_cables, structure.n_strings))
    for c, cable in enumerate(structure.cables):
        S[c, list(cable.strings)] = 1.0
    return (S / l[None, :]) @ Yh.T


def cable_terms(structure, q: np.ndarray, qd: np.ndarray, at_rest: str) -> CableTerms:
    """The :class:`CableTerms` of `structure` at positions q and velocities qd (3n,).

    `at_rest` ("slack" or "taut") decides a cable within 1e-12 (relative) of its rest length
    as for a string (:func:`tenscontrol.linearize`); under "slack" such cables are named in a
    warning.
    """
    pairs, nq, ns = structure.string_nodes, q.size, structure.n_strings
    Yh = member_columns(pairs, q)
    l = np.sqrt(np.einsum("ik,ik->k", Yh, Yh) / 2.0) if ns else np.zeros(0)
    g = _gradients(structure, Yh, l)
    L, L0, k = g @ q, structure.cable_rest_lengths, structure.cable_stiffness
    # g_c . q = sum_k q^T Yhat_k q / l_k = sum_k l_k^2 / l_k = L_c
    kink = np.abs(L - L0) <= _AT_REST_TOL * L0
    if at_rest == "slack" and kink.any():
        names = ", ".join(f"cable {c} (strings {list(structure.cables[c].strings)})"
                          for c in np.flatnonzero(kink))
        warnings.warn(f"linearize: {names} of {structure.name} sit exactly at their rest length "
                      "and are treated as slack (tension 0, no material stiffness, no damper, "
                      "zero input columns); pass at_rest='taut' for the tension-side derivative",
                      stacklevel=5)  # caller, past linearize's helpers and the thread wrapper
    taut = (L > L0) & ~kink | (kink & (at_rest == "taut"))
    tension = np.where(taut & ~kink, k * (L - L0), 0.0)
    segment, active = structure.string_cable >= 0, np.zeros(ns, dtype=bool)
    law, grad = np.zeros(ns), np.zeros((ns, nq))
    c_damp = np.where(taut, structure.cable_damping, 0.0)
    rate = g @ qd                                           # dL_c/dt [m/s]
    Dq, Dqd, fd = np.zeros((nq, nq)), np.zeros((nq, nq)), np.zeros(nq)
    for c, cable in enumerate(structure.cables):
        segs = list(cable.strings)
        active[segs] = taut[c]
        if not taut[c]:
            continue
        law[segs] = tension[c] / l[segs]
        grad[segs] = (k[c] / l[segs])[:, None] * g[c][None, :] \
            - (tension[c] / l[segs] ** 3)[:, None] * Yh[:, segs].T
        if c_damp[c]:
            # f_d = -c g (g . qd); d/dqd = -c g g^T, d/dq = -c (Ld Hess L + g (Hess L qd)^T)
            w = np.zeros(ns)
            w[segs] = 1.0 / l[segs]
            hess = (weighted_laplacian(structure.string_connectivity, w)
                    - (Yh[:, segs] / l[segs] ** 3) @ Yh[:, segs].T)
            Dqd -= c_damp[c] * np.outer(g[c], g[c])
            Dq -= c_damp[c] * (rate[c] * hess + np.outer(g[c], hess @ qd))
            fd -= c_damp[c] * rate[c] * g[c]
    return CableTerms(segment, active, law, grad, Dq, Dqd, fd)


def cable_input_columns(structure, q: np.ndarray, cables) -> np.ndarray:
    """The matrix S (n_strings, n_commanded) that maps cable tensions to segment force densities.

    Column j holds ``1 / l_k`` on the segments k of cable ``cables[j]`` at q (3n,): a tension
    T_c [N] gives them the force densities ``T_c / l_k`` [N/m], so a model's string columns B
    become the cable's column ``B S`` (the nodal force ``-T_c g_c`` per unit tension).
    """
    pairs = structure.string_nodes
    Yh = member_columns(pairs, q)
    l = np.sqrt(np.einsum("ik,ik->k", Yh, Yh) / 2.0)
    S = np.zeros((structure.n_strings, len(cables)))
    for j, c in enumerate(cables):
        segs = list(structure.cables[c].strings)
        S[segs, j] = 1.0 / l[segs]
    return S


def tension_gradients(structure, q: np.ndarray, cables) -> np.ndarray:
    """``dT_c/dq = k_c g_c^T`` (n_commanded, 3n) [N/m] of the cables `cables` at q (3n,): the
    gradient of the taut cable law (the caller zeroes slack cables' rows)."""
    Yh = member_columns(structure.string_nodes, q)
    l = np.sqrt(np.einsum("ik,ik->k", Yh, Yh) / 2.0)
    g = _gradients(structure, Yh, l)[np.asarray(cables, dtype=np.int64)]
    return structure.cable_stiffness[np.asarray(cables, dtype=np.int64)][:, None] * g
