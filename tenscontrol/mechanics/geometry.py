"""Member geometry shared by the statics, stiffness, linearization and compressible-bar code.

Plain numpy, no compiled kernels and no python-control, so every module may use it. The
matrices are the theory's Yhat_k (strings) and H_k (bars) applied to a nodal vector
(docs/theory.md, "The Lagrangian model in Cartesian nodal coordinates"): for a member from node i
to node j, ``Yhat_k v`` holds
``-(v_j - v_i)`` on node i's three rows and ``+(v_j - v_i)`` on node j's.
"""

from __future__ import annotations

import numpy as np

__all__ = ["member_columns", "nodal_vector", "state_vectors", "weighted_laplacian"]


def member_columns(pairs: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The columns ``[Yhat_0 v, ..., Yhat_{m-1} v]``, shape (3n, m), n = v.size // 3.

    Parameters
    ----------
    pairs : ndarray of int, shape (m, 2)
        Start and end node of each member.
    v : ndarray, shape (3n,) or (n, 3)
        A nodal vector, node by node: positions q [m] (then column k is the nodal force per
        unit force density of member k, with a minus sign), velocities, accelerations.
    """
    V = np.asarray(v, dtype=float).reshape(-1, 3)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    d = V[pairs[:, 1]] - V[pairs[:, 0]]
    out = np.zeros((len(V), 3, len(pairs)))
    k = np.arange(len(pairs))
    out[pairs[:, 0], :, k] = -d
    out[pairs[:, 1], :, k] = d
    return out.reshape(3 * len(V), len(pairs))


def weighted_laplacian(C: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``sum_k w_k Yhat_k = (C^T diag(w) C) kron I_3`` (3n, 3n) for a connectivity C (m, n)."""
    return np.kron(C.T @ (np.asarray(w, dtype=float)[:, None] * C), np.eye(3))


def nodal_vector(n_nodes: int, name: str, value, default=None) -> np.ndarray:
    """A finite nodal vector (3n,) from (n_nodes, 3) or (3n,) input, as a new array.

    `value` None gives a copy of `default` (zeros if None too). Errors name the argument:
    "q must have shape (4, 3) or (12,) (3 per node), got (11,)".
    """
    nq = 3 * n_nodes
    if value is None:
        value = np.zeros(nq) if default is None else default
    try:
        a = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of numbers, got {type(value).__name__}") \
            from None
    if a.shape not in ((n_nodes, 3), (nq,)):
        raise ValueError(f"{name} must have shape ({n_nodes}, 3) or ({nq},) (3 per node), "
                         f"got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite")
    return np.ascontiguousarray(a.reshape(nq))


def state_vectors(structure, q=None, qd=None, loads=None):
    """(q, qd, loads), each a new contiguous (3n,) array, checked by :func:`nodal_vector`.

    Defaults: the structure's nodes, at rest, no loads.
    """
    n = structure.n_nodes
    return (nodal_vector(n, "q", q, structure.nodes.reshape(-1)), nodal_vector(n, "qd", qd),
            nodal_vector(n, "loads", loads))
