"""Tracking a planned shape change: feedforward along a path of equilibria, scheduled feedback.

A shape change moves a structure from one static equilibrium to another along a path of
equilibria ``(q(s), gamma(s))``, s in [0, 1] (planned by :func:`tenscontrol.shape_change`, whose
points are certified static equilibria with every string at or above gamma_min). The path is
traversed by the quintic time law

    s(t) = 10 tau^3 - 15 tau^4 + 6 tau^5,    tau = clip(t / T, 0, 1),

which starts and stops with zero velocity and acceleration, so the reference and its force
densities are smooth and the structure is at rest at both ends. :class:`ShapeTracking` commands
(``kind="control"``: the strings are force-density actuators)

    gamma = gamma(s) - K(s) [q - q(s); qd - q'(s) s'(t)],

the static feedforward gamma(s) plus a state feedback about the moving reference; the gain K(s)
is interpolated linearly between LQR designs at a few points of the path (each about that
point's equilibrium). With the path points' self-stresses (:mod:`tenscontrol.feedback.allocation`)
the command is allocated at the two planned points around s and blended with the same weights:
each allocated command keeps the bounds, so their blend does (the bounds are a box), and both
move u only along self-stresses of configurations within one path step of q(s).

The feedforward holds the path's statics only: the inertial forces of the motion, of the order
of ``M q'(s) s''``, are left to the feedback, which is why a slow time law (T long against the
structure's slowest closed-loop mode) tracks best.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.interpolate

from tenscontrol.feedback.controllers import Controller

__all__ = ["ShapeTracking", "quintic"]


def quintic(t, duration: float) -> tuple[float, float, float]:
    """(s, ds/dt [1/s], d2s/dt2 [1/s^2]) of the quintic time law at t [s] over `duration` [s]."""
    tau = min(max(t / duration, 0.0), 1.0)
    s = tau ** 3 * (10.0 - 15.0 * tau + 6.0 * tau ** 2)
    inside = 0.0 < t / duration < 1.0
    ds = 30.0 * tau ** 2 * (1.0 - tau) ** 2 / duration if inside else 0.0
    dds = 60.0 * tau * (1.0 - tau) * (1.0 - 2.0 * tau) / duration ** 2 if inside else 0.0
    return s, ds, dds


@dataclass(frozen=True, eq=False)
class ShapeTracking(Controller):
    """Feedforward along a path of equilibria plus interpolated state feedback.

    Attributes
    ----------
    path_s : ndarray, shape (m,)
        Path parameters of the planned points, increasing from 0 to 1.
    path_nodes : ndarray, shape (m, 3n)
        Their configurations q(s) [m] (interpolated by a cubic spline in s).
    path_gamma : ndarray, shape (m, nu)
        Their force densities of the commanded strings [N/m] (interpolated linearly).
    design_s : ndarray, shape (p,)
        Path parameters of the feedback designs.
    gains : ndarray, shape (p, nu, 2 * 3n)
        The state-feedback gains there [N/m per m, N/m per m/s] (interpolated linearly).
    duration : float
        T, the time of the motion [s]; the reference rests at q(1) after it.
    strings : ndarray of int, shape (nu,)
        The commanded strings.
    self_stresses : tuple of SelfStress
        The commanded strings' self-stresses and bounds at each path point (empty: no
        allocation).
    """

    path_s: np.ndarray
    path_nodes: np.ndarray
    path_gamma: np.ndarray
    design_s: np.ndarray
    gains: np.ndarray
    duration: float
    strings: np.ndarray
    self_stresses: tuple = ()
    kind = "control"
    n_states = 0

    def __post_init__(self):
        for name in ("path_s", "path_nodes", "path_gamma", "design_s", "gains"):
            a = np.array(getattr(self, name), dtype=float)
            a.setflags(write=False)
            object.__setattr__(self, name, a)
        object.__setattr__(self, "strings", np.asarray(self.strings, dtype=np.int64))
        m, nu = self.path_gamma.shape
        if (self.path_s.shape != (m,) or self.path_nodes.shape[0] != m or m < 2
                or np.any(np.diff(self.path_s) <= 0) or self.path_s[0] != 0.0
                or self.path_s[-1] != 1.0):
            raise ValueError("ShapeTracking: path_s must increase from 0 to 1, one per path "
                             f"point ({m}), got {self.path_s.tolist()}")
        nx = 2 * self.path_nodes.shape[1]
        if self.gains.shape != (self.design_s.size, nu, nx) or nu != self.strings.size:
            raise ValueError(f"ShapeTracking: gains must have shape ({self.design_s.size}, "
                             f"{nu}, {nx}), got {self.gains.shape}")
        if len(self.self_stresses) not in (0, m):
            raise ValueError(f"ShapeTracking: self_stresses must hold one SelfStress per path "
                             f"point ({m}) or none, got {len(self.self_stresses)}")
        if not self.duration > 0:
            raise ValueError(f"ShapeTracking: duration must be > 0 [s], got {self.duration!r}")
        object.__setattr__(self, "_spline", scipy.interpolate.CubicSpline(
            self.path_s, self.path_nodes, axis=0, bc_type="natural"))

    @property
    def gamma_ref(self) -> np.ndarray:
        """The start's force densities [N/m]: the command u is the change from them."""
        return self.path_gamma[0]

    @property
    def q_ref(self) -> np.ndarray:
        """The start configuration q(0) [m]."""
        return self.path_nodes[0]

    def __repr__(self) -> str:
        return (f"ShapeTracking(law='u = gamma(s) - gamma(0) - K(s) (x - x_ref(s))', "
                f"kind='control', commanded_strings={self.strings.size}, "
                f"duration={self.duration:.4g} s, path_points={self.path_s.size}, "
                f"designs={self.design_s.size})")

    def reference(self, t: float) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        """(s, q_ref (3n,) [m], qd_ref (3n,) [m/s], gamma_ff (nu,) [N/m]) at time t [s]."""
        s, ds, _ = quintic(t, self.duration)
        q = self._spline(s)
        qd = self._spline(s, 1) * ds
        gamma = np.array([np.interp(s, self.path_s, g) for g in self.path_gamma.T])
        return s, q, qd, gamma

    def gain(self, s: float) -> np.ndarray:
        """K(s) (nu, 2 * 3n), linear between the designs (the nearest outside them)."""
        d = self.design_s
        if d.size == 1 or s <= d[0]:
            return self.gains[0]
        if s >= d[-1]:
            return self.gains[-1]
        k = int(np.searchsorted(d, s)) - 1
        w = (s - d[k]) / (d[k + 1] - d[k])
        return (1.0 - w) * self.gains[k] + w * self.gains[k + 1]

    def force_densities(self, t, q, qd, xc):
        s, q_ref, qd_ref, gamma = self.reference(t)
        nq = q_ref.size
        K = self.gain(s)
        u = gamma - self.gamma_ref - (K[:, :nq] @ (q - q_ref) + K[:, nq:] @ (qd - qd_ref))
        return self._allocated(s, u) if self.self_stresses else u

    def _allocated(self, s: float, u: np.ndarray) -> np.ndarray:
        """u allocated at the path points around s, blended linearly in s."""
        k = min(int(np.searchsorted(self.path_s, s, side="right")) - 1, self.path_s.size - 2)
        w = (s - self.path_s[k]) / (self.path_s[k + 1] - self.path_s[k])
        a = self.self_stresses[k].allocate(u, self.gamma_ref).command
        b = self.self_stresses[k + 1].allocate(u, self.gamma_ref).command
        return (1.0 - w) * a + w * b
