"""The two bar models in simulate()'s step loop: state layout, derivative, correction, output.

:class:`RigidRun` (the compiled kernels of :mod:`tenscontrol.mechanics.rigid.kernels`, with the direct
correction of docs/theory.md, "The direct correction with the energy row" after every accepted
step) and :class:`CompressibleRun` (:mod:`tenscontrol.mechanics.compressible.kernels` with the
analytic Jacobian for the implicit integrator) share :class:`Run`: the state ``y = [q, qd, w, xc]``
with the closed loop's controller states xc last. The output states come from
:class:`tenscontrol.simulation.recording.Recorder`; :func:`trajectory` assembles the
:class:`tenscontrol.Trajectory`.
"""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np

from tenscontrol.mechanics.compressible import banded as CB
from tenscontrol.mechanics.compressible import kernels as CK
from tenscontrol.mechanics.rigid import kernels as K
from tenscontrol.mechanics.compressible.model import compressible_model
from tenscontrol.mechanics.kernels.records import Correction, rigid_bars_record
from tenscontrol.mechanics.rigid.model import rigid_model
from tenscontrol.mechanics.scales import Scales, structure_scales
from tenscontrol.simulation.trajectory import SimulationStats, Trajectory

__all__ = ["CompressibleRun", "RigidRun", "Run", "correction_tolerances", "trajectory",
           "warn_fallbacks"]

# A residual cannot be corrected below the rounding of the terms it sums (8 eps of them).
_ROUNDING = 8.0 * np.finfo(float).eps


def correction_tolerances(structure, scales: Scales, energy: bool, tol: float,
                          max_iterations: int, content: float) -> Correction:
    """The correction's settings with its relative tolerance `tol` turned into residual norms.

    With the run's length L, time T and energy E (`scales`, from :func:`tenscontrol.mechanics.
    scales.structure_scales`), the structure's n_b bars and its largest coordinate Q: the bar
    rows' norm |l^2 - l0^2| to sqrt(n_b) L max(tol L, 8 eps Q) [m^2] (tol L^2 a bar, or the rounding of
    l^2 from coordinates of size Q), their rates' to that over T [m^2/s], the energy row to
    tol E [J], but not below its rounding, 8 eps times the run's energy `content`
    T + sum |G_a q_a| + V_s [J]. Each is the same fraction of its own scale for a structure
    and its similar copies (docs/theory.md, "Scales"). The correction kernel also keeps the
    energy tolerance above 8 eps of the energy content at the state it corrects (loads and
    controllers add energy as the run goes).
    """
    L = scales.length
    reach = max(float(np.abs(structure.nodes).max()), L)
    position = np.sqrt(structure.n_bars) * L * max(tol * L, _ROUNDING * reach)
    return Correction(energy=energy, position_tol=position, velocity_tol=position / scales.time,
                      energy_tol=max(tol * scales.energy, _ROUNDING * content),
                      max_iterations=max_iterations)


class Run:
    """What the rigid and compressible runs share: the state layout, the closed loop and the
    fallback counts (``counts``, named as the SimulationStats fields)."""

    loop = None
    nb = 0
    # what a nonzero return of kernel_rhs means: the SimulationStats counter it adds to
    RHS_FALLBACKS: dict = {}

    def _attach(self, y0, fext, loop):
        """Take the run's closed loop, and its scales with the loads at the start."""
        self.loop, self.n_state = loop, y0.size
        self.nb = y0.size - (loop.n_states if loop is not None else 0)
        self.counts = Counter()
        nq = 3 * self.structure.n_nodes
        self.scales = structure_scales(self.structure, loads=np.asarray(fext(0.0, y0))[:nq])

    def _count(self, code):
        if code:
            self.counts[self.RHS_FALLBACKS[code]] += 1

    def base_rhs(self, y, f):
        dy = np.empty(self.nb)
        self._count(self.kernel_rhs(y[:self.nb], f, self.kernel, dy))
        return dy

    def fun(self, t, y):
        dy = np.empty_like(y)
        nb = self.nb
        self._count(self.kernel_rhs(y[:nb], self.fext(t, y), self.kernel, dy[:nb]))
        if self.loop is not None:
            dy[nb:] = self.loop.derivative(t, y)
        return dy

    def _control_record(self, t, Y):
        return None if self.loop is None else self.loop.record(t, Y)


class RigidRun(Run):
    """The rigid-bar model in the step loop: derivative, correction and output quantities."""

    RHS_FALLBACKS = {1: "dependent_constraint_solves"}
    linear_algebra = "sparse"   # the envelope LDL^T of the KKT system (mechanics.rigid.sparse)

    def __init__(self, structure, include_radius, correction, tol, max_iterations):
        self.structure, self.correction = structure, correction
        self.model = rigid_model(structure, include_radius)
        self.kernel = self.model.kernel
        self.constrained_bars = self.model.constrained_bars
        self.tol, self.max_iterations, self.failures = tol, max_iterations, 0
        self.project = None if correction == "none" else self._correct

    kernel_rhs = staticmethod(K.rhs_lazily)

    def start(self, y0, fext, loop):
        m = self.model
        self.fext = fext
        self._attach(y0, fext, loop)
        nq = m.n_coordinates
        self.E0 = float(K.total_energy(y0[:nq], y0[nq:2 * nq], self.kernel))
        self.correction_record = correction_tolerances(
            self.structure, self.scales, self.correction == "energy", self.tol,
            self.max_iterations, self._energy_content(y0))

    def _energy_content(self, y0):
        """T + sum |G_a q_a| + V_s at y0 [J]: the size of the terms the energy row sums.

        Etot = T - G^T q + V_s is a sum of terms much larger than itself in a tall structure
        (a 768-bar tower's 1.1e6 J), so its rounding, and the residual the correction can
        reach, is a few eps times this content, not eps times Etot.
        """
        m, nq = self.model, self.model.n_coordinates
        q, qd = y0[:nq], y0[nq:2 * nq]
        return (float(K.kinetic_energy(qd, self.kernel)) + float(np.abs(m.G * q).sum())
                + float(K.spring_potential(q, m.members)))

    def _correct(self, t, y):
        it, ok, svd = K.correct_lazily(y[:self.nb], self.E0, self.correction_record,
                                       self.kernel)
        if svd:
            self.counts["svd_correction_steps"] += svd
        if not ok:
            if self.failures == 0:
                warnings.warn(f"correction did not converge in {self.max_iterations} "
                              f"iterations at t = {t:.6g} s; tighten rtol/atol or raise "
                              "max_correction_iterations", RuntimeWarning, stacklevel=5)
            self.failures += 1
        if not np.all(np.isfinite(y)):
            raise FloatingPointError("the corrected state is not finite")
        return it, it > 0

    def trajectory(self, recorder, stats, wall):
        s, m = self.structure, self.model
        t, Y = recorder.arrays(self.n_state)
        energy = K.energies(Y, m.kernel)
        viol = K.bar_violations(Y, rigid_bars_record(s))
        failures = self.failures + recorder.correction_failures
        counts = self.counts + Counter(recorder.fallbacks)
        return trajectory(s, t, Y, energy, viol, self.E0, stats, failures, wall,
                           self.correction, "rigid", None, self._control_record(t, Y),
                           linear_algebra=self.linear_algebra, **counts)


class CompressibleRun(Run):
    """The compressible-bar model in the step loop: derivative and its analytic Jacobian.

    With ``linear_algebra="banded"`` (by default, ``"auto"``, for a model with at least
    ``compressible.banded.BANDED_MIN_COORDINATES`` coordinates) the run takes the band path
    of :mod:`tenscontrol.mechanics.compressible.banded`: band mass solves in the derivative
    and, without a controller, a structured Jacobian whose Newton solves cost O(n) (the
    closed loop keeps the dense Jacobian, to which the controller's coupling is added; each
    such Jacobian is counted in ``dense_jacobians``). ``"dense"`` takes the dense path.
    """

    constrained_bars = ()
    project = None
    RHS_FALLBACKS = {1: "dense_mass_solves", 2: "singular_mass_solves"}

    def __init__(self, structure, kinetic, include_radius, linear_algebra="auto"):
        self.structure, self.kinetic = structure, kinetic
        self.model = compressible_model(structure, kinetic, include_radius)
        self.kernel = self.model.kernel
        self.pattern = None
        if linear_algebra == "auto":
            large = self.model.n_coordinates >= CB.BANDED_MIN_COORDINATES
            linear_algebra = "banded" if large else "dense"
        self.linear_algebra = linear_algebra
        if linear_algebra == "banded":
            self.pattern = pattern = CB.band_pattern(self.model)
            self.kernel_rhs = lambda y, f, kernel, dy: CB.rhs(y, f, kernel, pattern, dy)

    kernel_rhs = staticmethod(CK.rhs_lazily)

    def start(self, y0, fext, loop):
        self.fext = fext
        self._attach(y0, fext, loop)
        self.E0 = float(self._energies(y0[None, :])[0])

    def _energies(self, Y):
        if self.pattern is None:
            return CK.energies(Y, self.kernel)
        return CB.energies(Y, self.kernel, self.pattern)

    def jac(self, t, y):
        nb, f = self.nb, self.fext(t, y)
        if self.loop is None and self.pattern is not None:
            banded = self._banded_jac(y, f)
            if banded is not None:
                return banded
        if self.pattern is not None:    # closed loop, or M(q) singular: the dense Jacobian
            self.counts["dense_jacobians"] += 1
        if self.loop is None:
            J = np.empty((nb, nb))
            CK.jacobian_lazily(y, f, self.kernel, J)
            return J
        J = np.zeros((y.size, y.size))
        Jp = np.empty((nb, nb))
        CK.jacobian_lazily(np.ascontiguousarray(y[:nb]), f, self.kernel, Jp)
        J[:nb, :nb] = Jp
        return J + self._coupling(t, y, f)

    def _banded_jac(self, y, f):
        """The structured Jacobian at y, or None when M(q) is singular there (dense then)."""
        p, nq = self.pattern, self.model.n_coordinates
        Mb = np.empty((nq, 2 * p.width + 1))
        Bq, Bqd, pw = np.empty_like(Mb), np.empty_like(Mb), np.empty(2 * nq)
        if not CB.jacobian_parts(y, f, self.kernel, p, Mb, Bq, Bqd, pw):
            return None
        if not (np.all(np.isfinite(Bq)) and np.all(np.isfinite(Bqd)) and np.all(np.isfinite(pw))):
            raise FloatingPointError("the Jacobian has non-finite entries")

        y = y.copy()        # the integrator may reuse its array before dense() is called

        def dense():
            J = np.empty((y.size, y.size))
            CK.jacobian(y, f, self.kernel, J)
            return J
        return CB.BandedJacobian(Mb, Bq, Bqd, pw, p.perm, dense, self.counts)

    def _coupling(self, t, y, f0):
        """The controller's (and load's) dependence on the state, for the Newton matrix.

        The derivative is affine in the nodal load (qdd = W (... + f)), so its load columns come
        exactly from unit loads; the loads' and the controller's own derivatives with respect to
        the state come from central differences (counted in ``finite_difference_jacobians``).
        """
        self.counts["finite_difference_jacobians"] += 1
        nq, nb = f0.size, self.nb
        base = self.base_rhs(y, f0)
        Jf = np.zeros((nb, nq))
        for a in self.structure.free_coordinates:
            f = f0.copy()
            f[a] += 1.0
            Jf[:, a] = self.base_rhs(y, f) - base
        g = lambda yy: np.concatenate([self.fext(t, yy), self.loop.derivative(t, yy)])  # noqa
        D = np.zeros((nq + self.loop.n_states, y.size))
        for c in range(y.size):
            if c == 2 * nq:
                continue                     # the work state drives nothing
            h = 1e-6 * max(1.0, abs(y[c]))
            yp, ym = y.copy(), y.copy()
            yp[c] += h
            ym[c] -= h
            D[:, c] = (g(yp) - g(ym)) / (2 * h)
        out = np.zeros((y.size, y.size))
        out[:nb] = Jf @ D[:nq]
        out[nb:] = D[nq:]
        return out

    def trajectory(self, recorder, stats, wall):
        s = self.structure
        t, Y = recorder.arrays(self.n_state)
        energy = self._energies(Y)
        return trajectory(s, t, Y, energy, np.zeros((len(t), 0)), self.E0, stats, 0, wall,
                           "none", "compressible", self.kinetic, self._control_record(t, Y),
                           linear_algebra=self.linear_algebra, **self.counts)


def trajectory(structure, t, Y, energy, viol, E0, stats, failures, wall, correction, bars,
                kinetic, control=None, **paths):
    """The Trajectory of output times t and states Y; `stats` is ``(integrator name,
    IntegratorStats, keep_step)``; `paths` the run's linear_algebra and fallback counts (the
    SimulationStats fields of those names). Warns once for each fallback that costs accuracy."""
    nq = 3 * structure.n_nodes
    work = Y[:, 2 * nq].copy()
    name, s, keep_step = stats
    st = SimulationStats(s.accepted, s.rejected, s.rhs_evaluations, s.correction_iterations,
                         failures, wall, name, s.jacobian_evaluations, s.lu_decompositions,
                         s.newton_iterations, s.newton_failures, keep_step=keep_step, **paths)
    warn_fallbacks(st)
    n = structure.n_nodes
    return Trajectory(t, Y[:, :nq].reshape(-1, n, 3), Y[:, nq:2 * nq].reshape(-1, n, 3), energy,
                      work, viol, energy - work - E0, E0, st, structure, correction, bars, kinetic,
                      control)


# The fallbacks that change the answer, not only the cost: what to say about them
_ACCURACY = {
    "dependent_constraint_solves": (
        "derivative evaluation(s) found the bar constraints (nearly) dependent and took the "
        "accelerations from rank-truncated least squares (singular values below 1e-12 of the "
        "largest dropped) instead of the KKT solve: the bar force multipliers are not unique "
        "there and the accelerations hold the bar lengths only to that truncation (the "
        "correction restores them); check for collinear or repeated bars"),
    "singular_mass_solves": (
        "derivative evaluation(s) met a singular mass matrix and used its pseudo-inverse "
        "(rcond 1e-12): accelerations along the massless directions are set to zero, not "
        "given by the dynamics; use kinetic='consistent' or give every free node mass"),
}


def warn_fallbacks(stats: SimulationStats) -> None:
    """One RuntimeWarning per fallback of `stats` that changes accuracy, with its count."""
    for name, meaning in _ACCURACY.items():
        count = getattr(stats, name)
        if count:
            warnings.warn(f"simulate: {count} {meaning} (stats.{name} = {count})",
                          RuntimeWarning, stacklevel=6)  # at the caller of simulate()
