"""The observability rank of a sensor set on the elastic model (docs/theory.md, "Minimal
realization"): the PBH test of :func:`tenscontrol.observability`, scaled as the minimal
realization is (time by the reference frequency w, positions by the structure's size L,
velocities by ``L w``) and each signal divided by its noise std (by 1 where it is 0), so that
the rank compares signal-to-noise, not units. Below the LQG designs, which warn with it
(:func:`warn_unobservable`), and the observability Gramian and sensor placement that use it.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg

from tenscontrol.linear.modal import eigenspaces
from tenscontrol.linear.reduction import elastic_model
from tenscontrol.mechanics.sensors import SensorSet

__all__ = ["observed_rank", "scaled_elastic", "warn_unobservable"]

_RANK_TOL = 1e-9   # PBH tolerance on rows scaled by their Cartesian size


def scaled_elastic(model, sensors: SensorSet, who: str):
    """(A, C, row scale) of the scaled elastic model with the sensors' rows divided by their
    std; the row scale is each row's size on the Cartesian (unprojected) state."""
    if not isinstance(sensors, SensorSet):
        raise TypeError(f"{who}: sensors must be a tenscontrol SensorSet, got "
                        f"{type(sensors).__name__}")
    sensed = model.actuated().with_sensors(sensors)
    em = elastic_model(sensed)
    std = np.where(sensors.std > 0, sensors.std, 1.0)[sensors.signal_sensor]
    C = em.C / std[:, None]
    N = np.asarray(model.q, dtype=float).reshape(-1, 3)
    L = float(np.sqrt(np.mean(np.sum((N - N.mean(axis=0)) ** 2, axis=1)))) or 1.0
    w = _frequency(em)
    s = np.concatenate([np.full(em.n_e, L), np.full(em.n_e, L * w)])
    nq = sensed.q.size
    rows = (np.linalg.norm(sensed.C[:, :nq], axis=1) * L
            + np.linalg.norm(sensed.C[:, nq:], axis=1) * L * w) / std
    return em.A * s[None, :] / s[:, None] / w, C * s[None, :], rows


def observed_rank(A, C, rows) -> int:
    """Observable modes: per eigenspace (:func:`tenscontrol.linear.modal.eigenspaces`), the
    rank of C V (V its orthonormal eigenvectors, C's rows divided by their Cartesian size) at
    1e-9."""
    if A.shape[0] == 0:
        return 0
    Cn = C / np.where(rows > 0, rows, 1.0)[:, None]
    _, V, groups = eigenspaces(A)
    rank = 0
    for idx in groups:
        Q = np.linalg.qr(V[:, idx])[0]
        sv = np.linalg.svd(Cn @ Q, compute_uv=False)
        rank += int(np.sum(sv > _RANK_TOL))
    return rank


def warn_unobservable(model, sensors: SensorSet, who: str) -> int:
    """The number of modes of the elastic model `sensors` observe (the rank of
    :func:`tenscontrol.observability`, without its Gramian); a UserWarning naming the rank if
    some are not observed (an LQG design then leaves them to the model and their damping)."""
    A, C, rows = scaled_elastic(model, sensors, who)
    rank, order = observed_rank(A, C, rows), A.shape[0]
    if rank < order:
        warnings.warn(f"{who}: the sensors observe {rank} of the {order} modes of the elastic "
                      f"model (observability rank {rank} < {order}): the Kalman filter cannot "
                      f"correct its estimate of the other {order - rank}, which follow the "
                      "model alone; add sensors (tenscontrol.place_sensors chooses them, "
                      "tenscontrol.observability gives the rank)", UserWarning, stacklevel=3)
    return rank


def _frequency(em) -> float:
    """The reference frequency w [rad/s]: the geometric mean of the extreme elastic ones."""
    if em.n_e == 0:
        return 1.0
    mag = np.abs(scipy.linalg.eigvalsh(0.5 * (em.K_e + em.K_e.T), em.M_e))
    mag = mag[mag > 1e-12 * mag.max()] if mag.max() > 0 else mag[:0]
    return float(np.sqrt(np.sqrt(mag.min() * mag.max()))) if mag.size else 1.0
