"""Observability of a sensor set and sensor placement (docs/theory.md, "Minimal realization").

:func:`observability` works on the exact elastic model (structural projection: constraint and
rigid-body modes are not part of it), scaled as the minimal realization is (time by the
reference frequency w, positions by the structure's size L, velocities by ``L w``) and each
signal divided by its noise std (by 1 where the std is 0), so that the rank decision and the
Gramian compare signal-to-noise, not units. :func:`place_sensors` chooses k of a candidate set
greedily: by the Gramian (``"logdet"``: ``log det(W_o + eps I)``, eps = 1e-9 trace of the
candidates' Gramian; ``"trace"``) or by the H2 norm of the LQG loop
(:func:`tenscontrol.estimation.lqg.loop_h2`, ``"h2"``).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from tenscontrol import validation
from tenscontrol.linear import norms
from tenscontrol.linear.greedy import greedy_subset
from tenscontrol.estimation.lqg import kalman_gain, noise_density, reduced_model, loop_h2
from tenscontrol.estimation.rank import observed_rank, scaled_elastic
from tenscontrol.design.synthesis import lqr
from tenscontrol.mechanics.sensors import SensorSet
from tenscontrol.model.tables import Presentable, titled_table

__all__ = ["Observability", "Placement", "observability", "place_sensors"]

_LOGDET_EPS = 1e-9


@dataclass(frozen=True, eq=False)
class Observability(Presentable):
    """Result of :func:`observability`.

    Attributes
    ----------
    rank, order : int
        Dimension of the observable subspace (PBH, cluster by cluster) and of the elastic model.
    gramian : ndarray, shape (order, order)
        Observability Gramian of the scaled elastic model [dimensionless].
    min_eigenvalue, trace, log_det : float
        Of `gramian` (log_det of ``gramian + eps I``, eps = 1e-9 trace).
    """

    rank: int
    order: int
    gramian: np.ndarray
    min_eigenvalue: float
    trace: float
    log_det: float

    @property
    def observable(self) -> bool:
        return self.rank == self.order

    def __repr__(self) -> str:
        return (f"Observability(rank={self.rank}, order={self.order}, "
                f"min_eigenvalue={self.min_eigenvalue:.4g}, trace={self.trace:.4g})")

    def summary(self) -> str:
        """The rank against the order and the Gramian's figures as a table."""
        return titled_table("Observability", [
            ("rank / order", f"{self.rank} / {self.order} "
                             f"({'observable' if self.observable else 'not observable'})"),
            ("Gramian min eigenvalue", f"{self.min_eigenvalue:.4g}"),
            ("Gramian trace", f"{self.trace:.4g}"), ("Gramian log det", f"{self.log_det:.6g}")])


def _gramian(A, C) -> np.ndarray:
    if not norms.is_hurwitz(A):
        raise ValueError("observability: the elastic model is not asymptotically stable "
                         "(add damping to the strings), so it has no observability Gramian")
    X = scipy.linalg.solve_continuous_lyapunov(A.T, -C.T @ C)
    return 0.5 * (X + X.T)


def _log_det(X, eps) -> float:
    return float(np.linalg.slogdet(X + eps * np.eye(X.shape[0]))[1])


def observability(model, sensors: SensorSet) -> Observability:
    """Rank and Gramian of the elastic model observed through `sensors`.

    Parameters
    ----------
    model : LinearModel
        At an equilibrium; its strings follow their laws (passive) or the commands (control).
    sensors : SensorSet

    Returns
    -------
    Observability
        The rank counts the modes the sensors see (a PBH test on each eigenvalue cluster of the
        scaled model: singular values of C V above 1e-9, each row of C divided by its size on
        the Cartesian state, so a sensor the constraints blind counts 0); the Gramian needs a
        damped model.
    """
    A, C, rows = scaled_elastic(model, sensors, "observability")
    n = A.shape[0]
    rank = observed_rank(A, C, rows)
    X = _gramian(A, C)
    ev = np.linalg.eigvalsh(X)
    tr = float(np.trace(X))
    return Observability(rank, n, X, float(ev.min()) if n else 0.0, tr,
                         _log_det(X, _LOGDET_EPS * tr))


@dataclass(frozen=True, eq=False)
class Placement(Presentable):
    """Result of :func:`place_sensors`.

    Attributes
    ----------
    sensors : SensorSet
        The chosen sensors, in the order they were picked.
    indices : tuple of int
        Their indices in the candidate set.
    criterion : str
    figure : float
        The criterion of the chosen set (log det, trace, or the loop's H2 norm).
    full : float
        The same figure with every candidate.
    history : tuple of float
        The figure after each pick.
    """

    sensors: SensorSet
    indices: tuple
    criterion: str
    figure: float
    full: float
    history: tuple

    def __repr__(self) -> str:
        return (f"Placement(criterion={self.criterion!r}, chosen={len(self.indices)}, "
                f"figure={self.figure:.6g}, full={self.full:.6g})")

    def summary(self) -> str:
        """The criterion, the chosen sensors and the figure against every candidate's."""
        return titled_table("Placement", [
            ("criterion", self.criterion), ("chosen", f"{len(self.indices)}: "
                                                    + ", ".join(map(str, self.indices))),
            ("signals", textwrap.shorten(" ".join(self.sensors.names), 70, placeholder=" ...")),
            ("figure", f"{self.figure:.6g}"), ("with every candidate", f"{self.full:.6g}"),
            ("after each pick", ", ".join(f"{h:.4g}" for h in self.history))])


def place_sensors(model, candidates: SensorSet, k: int, *, criterion="h2",
                  process_noise=None, Q=None, R=None, effort=1.0, order=None) -> Placement:
    """Choose `k` sensors of `candidates` greedily.

    Parameters
    ----------
    model : LinearModel
        At an equilibrium, damped.
    candidates : SensorSet
        The sensors to choose from (their noise std weighs them).
    k : int
        How many to choose (1 <= k <= candidates.n_sensors).
    criterion : {"h2", "logdet", "trace"}
        ``"h2"`` minimizes the LQG loop's H2 norm (needs `process_noise` [N^2 s] and the
        sensors' std; Q, R, effort, order as for :func:`tenscontrol.lqr`); ``"logdet"`` and
        ``"trace"`` maximize the scaled observability Gramian's log det / trace (the Gramian of
        a set is the sum of its sensors').

    Returns
    -------
    Placement
    """
    validation.choice("place_sensors: criterion", criterion, ("h2", "logdet", "trace"))
    k = validation.integer("place_sensors: k", k, minimum=1,
                           maximum=getattr(candidates, "n_sensors", None), error=ValueError)
    n = candidates.n_sensors if isinstance(candidates, SensorSet) else 0
    if criterion == "h2":
        score, full = _h2_score(model, candidates, process_noise, Q, R, effort, order)
    else:
        A, C, _ = scaled_elastic(model, candidates, "place_sensors")
        parts = [_gramian(A, C[candidates.rows(i)]) for i in range(n)]
        eps = _LOGDET_EPS * sum(np.trace(X) for X in parts)
        figure = ((lambda X: _log_det(X, eps)) if criterion == "logdet"
                  else (lambda X: float(np.trace(X))))
        score = lambda S: figure(sum(parts[i] for i in S))                  # noqa: E731
        full = score(list(range(n)))
    chosen, history = greedy_subset(n, k, score)
    sign = -1.0 if criterion == "h2" else 1.0
    return Placement(candidates.select(list(chosen)), chosen, criterion, sign * history[-1],
                     sign * full, tuple(sign * h for h in history))


def _h2_score(model, candidates, process_noise, Q, R, effort, order):
    """score(S) = -H2 of the LQG loop with sensors S, and the full set's score."""
    from tenscontrol.estimation.lqg import sensor_measurement

    if process_noise is None:
        raise ValueError("place_sensors: criterion='h2' needs process_noise, the spectral "
                         "density of the nodal forces [N^2 s]")
    w = validation.real("place_sensors: process_noise", process_noise, positive=True,
                        expected="a positive spectral density [N^2 s]")
    design = lqr(model, Q=Q, R=R, effort=effort, order=order)
    A, _, E = reduced_model(design)
    W = w * np.eye(E.shape[1])
    Cr = sensor_measurement(model, candidates).C @ design.minimal.basis
    V = noise_density(candidates, "place_sensors")
    rows = [candidates.rows(i) for i in range(candidates.n_sensors)]

    def score(S):
        r = np.concatenate([rows[i] for i in S])
        P = kalman_gain(A, E, Cr[r], W, np.diag(V[r]))[1]
        return -loop_h2(design, Cr[r], P, W)
    return score, score(list(range(candidates.n_sensors)))
