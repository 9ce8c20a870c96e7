"""Tracking a planned shape change: feedforward along a path of equilibria, scheduled feedback.

A shape change moves a structure from one static equilibrium to another along a path of
equilibria ``(q(s), gamma(s))``, s in [0, 1] (planned by :func:`tenscontrol.shape_change`, whose
points are certified static equilibria with every string at or above gamma_min). The path is
traversed by the quintic time law

    s(t) = 10 tau^3 - 15 tau^4 + 6 tau^5,    tau = clip(t / T, 0, 1),

which starts and stops with zero velocity and acceleration, so the reference and its force
densities are smooth and the structure is at rest at both ends. :class:`ShapeTracking` commands
(``kind="control"``: the strings are force-density actuators)

    gamma = gamma(s) + F(s) qdd_ref - K(s) [q - q(s); qd - q'(s) s'(t)],
    qdd_ref = q''(s) s'^2 + q'(s) s'',

the static feedforward gamma(s), the inertial one (F(s) = -pinv(Z^T Yhat_c) Z^T M: the least
force densities whose nodal forces, net of the bar and support forces, accelerate the masses
along the reference; least squares where the strings cannot) and a state feedback about the
moving reference; the gain K(s)
is interpolated linearly between LQR designs at a few points of the path (each about that
point's equilibrium). With the path points' self-stresses (:mod:`tenscontrol.statics.self_stress`)
the command is allocated at the two planned points around s and blended with the same weights:
each allocated command keeps the bounds, so their blend does (the bounds are a box), and both
move u only along self-stresses of configurations within one path step of q(s).

The commanded strings' dampers pull ``c (s . sd) / l^2`` on top of the command along the moving
reference; the feedforward subtracts it. What the feedforward misses (the reference's geometry
between path points, the coupling of the motion with the deformation) is left to the feedback.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.interpolate

from tenscontrol.control.controllers import Controller, controller_table
from tenscontrol.mechanics.laws import damper_densities
from tenscontrol.model.tables import value_range

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
    inertia : ndarray, shape (m, nu, 3n) or (0,)
        F at each path point [N/m per m/s^2] (interpolated linearly; empty: no inertial
        feedforward).
    string_nodes : ndarray of int, shape (nu, 2)
        The commanded strings' end nodes (with `damping`: the dampers' feedforward).
    damping : ndarray, shape (nu,) or (0,)
        Their damper coefficients [N s/m]: the feedforward subtracts the dampers' force
        densities ``c (s . sd) / l^2`` along the reference (empty: none).
    """

    path_s: np.ndarray
    path_nodes: np.ndarray
    path_gamma: np.ndarray
    design_s: np.ndarray
    gains: np.ndarray
    duration: float
    strings: np.ndarray
    self_stresses: tuple = ()
    inertia: np.ndarray = field(default_factory=lambda: np.zeros(0))
    string_nodes: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int64))
    damping: np.ndarray = field(default_factory=lambda: np.zeros(0))
    kind = "control"
    n_states = 0

    def __post_init__(self):
        for name in ("path_s", "path_nodes", "path_gamma", "design_s", "gains", "inertia",
                     "damping"):
            a = np.array(getattr(self, name), dtype=float)
            a.setflags(write=False)
            object.__setattr__(self, name, a)
        object.__setattr__(self, "strings", np.asarray(self.strings, dtype=np.int64))
        object.__setattr__(self, "string_nodes",
                           np.asarray(self.string_nodes, dtype=np.int64).reshape(-1, 2))
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
        if self.inertia.size and self.inertia.shape != (m, nu, nx // 2):
            raise ValueError(f"ShapeTracking: inertia must have shape ({m}, {nu}, {nx // 2}) "
                             f"or be empty, got {self.inertia.shape}")
        if self.damping.size and (self.damping.shape != (nu,)
                                  or self.string_nodes.shape != (nu, 2)):
            raise ValueError(f"ShapeTracking: damping and string_nodes must have shapes ({nu},) "
                             f"and ({nu}, 2), got {self.damping.shape} and "
                             f"{self.string_nodes.shape}")
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

    def summary(self) -> str:
        """The motion, the path and the gains, and which feedforward parts act, as a table."""
        gains = np.linalg.norm(self.gains, axis=(1, 2))
        feedforward = ["gamma(s)"] + (["inertia"] if self.inertia.size else []) + (
            ["dampers"] if self.damping.size else [])
        return controller_table(
            self, ("duration", f"{self.duration:.4g} s"),
            ("path points", f"{self.path_s.size}"), ("designs", f"{self.design_s.size}"),
            ("||K(s)||_F", value_range(gains, "").rstrip()),
            ("feedforward", " + ".join(feedforward)),
            ("allocation", f"{len(self.self_stresses)} self-stresses" if self.self_stresses
             else "none"),
            law="u = gamma(s) - gamma(0) - K(s) (x - x_ref(s))")

    def reference(self, t: float) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        """(s, q_ref (3n,) [m], qd_ref (3n,) [m/s], gamma_ff (nu,) [N/m]) at time t [s]; the
        feedforward includes the inertial part F(s) qdd_ref."""
        s, ds, dds = quintic(t, self.duration)
        q = self._spline(s)
        dq = self._spline(s, 1)
        gamma = np.array([np.interp(s, self.path_s, g) for g in self.path_gamma.T])
        if self.inertia.size and ds != 0.0:
            qdd = self._spline(s, 2) * ds ** 2 + dq * dds
            k, w = self._segment(s)
            gamma = gamma + ((1.0 - w) * self.inertia[k] + w * self.inertia[k + 1]) @ qdd
        qd = dq * ds
        if self.damping.size and ds != 0.0:   # the dampers pull c (s . sd) / l^2 on their own
            i, j = self.string_nodes[:, 0], self.string_nodes[:, 1]
            N, V = q.reshape(-1, 3), qd.reshape(-1, 3)
            d = N[j] - N[i]
            gamma = gamma - damper_densities(self.damping, ((V[j] - V[i]) * d).sum(axis=1),
                                             (d * d).sum(axis=1))
        return s, q, qd, gamma

    def _segment(self, s: float) -> tuple[int, float]:
        """The path step [s_k, s_k+1] holding s and the weight of s_k+1."""
        k = min(int(np.searchsorted(self.path_s, s, side="right")) - 1, self.path_s.size - 2)
        return k, (s - self.path_s[k]) / (self.path_s[k + 1] - self.path_s[k])

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
        k, w = self._segment(s)
        a = self.self_stresses[k].allocate(u, self.gamma_ref).command
        b = self.self_stresses[k + 1].allocate(u, self.gamma_ref).command
        return (1.0 - w) * a + w * b
