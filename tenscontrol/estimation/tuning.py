"""The noise an estimator is tuned for, from what the user knows (issue 32, item 4).

A Kalman filter needs two spectral densities nobody measures: the white nodal force on every
force direction (``process_noise`` W [N^2 s]) and, when the load is a filter state, its random
walk on each direction (``load_drift`` q [N^2/s]). The user knows the load instead: roughly
how large (an amplitude F [N], the magnitude of the nodal-force vector) and how fast (an
angular frequency w [rad/s]). The sensors' noise comes from the
:class:`tenscontrol.SensorSet` (std per sample, rate).

The rule: one spectrum for the load, matched at its frequency, its power F^2 spread evenly
over the n_d force directions that move the reduced model (the rank of its E: the filter does
not know where the load acts):

- a load of amplitude F at frequency w is a random walk whose drift over ``1/w`` is F:
  ``q = F^2 w / n_d`` on each direction (its spectrum ``q / omega^2`` is ``F^2 / (n_d w)`` at
  omega = w);
- above the band ``Omega = max(w, w_1)`` (w_1 the model's lowest natural frequency: below it
  a slow load moves the structure quasi-statically) the walk's falling spectrum is replaced
  by white force at its value there, ``W = q / Omega^2 = F^2 w / (n_d Omega^2)``, so that the
  modes are excited no more than the load's own spectrum says;
- a filter without load states (:func:`tenscontrol.lqg`, :func:`tenscontrol.extended_lqg`)
  models the load as white force alone: its power ``F^2 / 2`` over a band of width ~w,
  ``W = F^2 / (n_d w)``.

Spreading the power matters: with F^2 on every direction (24 on the ball) the ball's LQG
(1 mm, 200 Hz, effort 0.01, 30 sin t N, ExpectedLoad(30, 1)) reached 3.19 mm at 1.53 times
the open loop's cost ``z^T Q z + u^T R u`` (the noise fed back), spread 2.35 mm at 0.53; the
icosahedron on a face 2.94 mm at 14.9 times, spread 2.64 mm at 2.9 (linear sampled loop).

Nothing given: :func:`default_load`, the largest load the linear model can take (in its worst
direction a larger one slackens a string: :func:`slackening_load`, at most the weakest
string's tension), quasi-static: a decade below the lowest natural frequency. The weakest
tension alone (1.1's rule) was 14 times the 0.5 N that moves the soft 2 x 4-prism tower by
5.8 mm; its LQG trusted the readings so much that the nonlinear loop diverged.

What the load lets a loop gain (:class:`LoadReach`, in every LQG design's summary): the
full-state LQR's reduction of the response to it and its signal in the sensors. Where full
state gains little (the icosahedron on a face: 1.2 %), no filter makes up for the noise it
feeds back, and the summary says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tenscontrol import validation
from tenscontrol.model.loads import ExpectedLoad

__all__ = ["ExpectedLoad", "LITTLE_REACH", "LoadReach", "NoiseTuning", "check_noise",
           "default_load", "force_directions", "load_reach", "lowest_frequency", "noise_tuning",
           "slackening_load"]

#: Eigenvalue moduli below this fraction of the largest are rigid or constraint round-off
#: (control-notes 2: split as +-sqrt(eps ||A||), 1e-11 to 5e-5 relative), not a natural frequency.
_RIGID = 1e-6

#: The default load's frequency is the lowest natural frequency over this: a quasi-static load,
#: which the structure follows statically and a random walk models well. In the linear sampled
#: loop (1 mm string lengths, 200 Hz, effort 0.01) the ball's default LQG under 30 sin t N
#: peaked at 3.23 mm with 1.65 times the open loop's cost at ratio 1, 2.52 mm and 0.72 at 10
#: (open loop 5.68 mm); the fed-back noise grows with the load's band.
QUASI_STATIC = 10.0

#: Below this fraction, full-state control barely lowers the response to the expected load, and
#: the sensor noise an output-feedback loop feeds back can cost more than it gains. Measured
#: (string lengths at 1 mm, 200 Hz, effort 0.01, default load): the 2 x 4-prism tower 0.0 %
#: and the icosahedron on a face 1.2 %, whose default LQGs were worse than the open loop or
#: diverged with 1.0's default load; the ball 25 % and the T-bar 37 %, whose LQGs halve the
#: open loop's peak.
LITTLE_REACH = 0.05


@dataclass(frozen=True)
class LoadReach:
    """What the expected load lets a loop gain: the full-state LQR's reduction of its response
    and its signal in the sensors, at the load's frequency and in its worst direction.

    Attributes
    ----------
    frequency : float
        The load's angular frequency [rad/s] the figures are taken at.
    reduction : float
        ``1 - |Q^1/2 H_c E| / |Q^1/2 H_o E|`` [-]: how much the design's full-state LQR lowers
        the weighted outputs' response to the worst force direction (largest singular value;
        ``H = (jw I - A)^-1``, closed loop ``A - B K``). The most an output-feedback loop on
        the same weights can expect.
    signal_to_noise : float
        The expected load's largest sensor signal (amplitude, worst direction, the
        best-placed sensor) over that sensor's noise std per sample [-].
    """

    frequency: float
    reduction: float
    signal_to_noise: float

    def __repr__(self) -> str:
        return (f"LoadReach(frequency={self.frequency:.4g} rad/s, reduction="
                f"{100 * self.reduction:.3g} %, signal_to_noise={self.signal_to_noise:.3g})")

    @property
    def little(self) -> bool:
        """Whether full-state control gains less than :data:`LITTLE_REACH` on this load."""
        return self.reduction < LITTLE_REACH

    def rows(self) -> list:
        """(label, value) rows for a design's summary."""
        rows = [("full-state reach", f"LQR leaves {100 * (1 - self.reduction):.3g} % of the "
                                     f"open loop's response to the load (worst direction, "
                                     f"{self.frequency:.4g} rad/s)"),
                ("load signal / noise", f"{self.signal_to_noise:.3g} (the best sensor, per "
                                        "sample)")]
        if self.little:
            rows.append(("expect", f"little or nothing: full-state control gains under "
                                   f"{100 * LITTLE_REACH:g} % on this load and the sensor "
                                   "noise fed back can make the loop worse than the open "
                                   "loop; check it with verify"))
        return rows


def load_reach(A, B, K, Cz, Cr, std, load: ExpectedLoad, E) -> LoadReach:
    """:class:`LoadReach` of a full-state gain K on the reduced model.

    Parameters
    ----------
    A, B, E : ndarray, shapes (r, r), (r, nu), (r, nd)
        The reduced model [1/s] with its input and force maps.
    K : ndarray, shape (nu, r)
        The full-state gain on the reduced coordinates.
    Cz : ndarray, shape (nz, r)
        The weighted outputs (``Q_r^1/2``).
    Cr : ndarray, shape (ny, r)
        The sensors on the reduced coordinates.
    std : ndarray, shape (ny,)
        Each signal's noise std per sample.
    load : ExpectedLoad
    """
    jw = 1j * load.frequency * np.eye(A.shape[0])
    open_ = np.linalg.solve(jw - A, E)
    closed = np.linalg.solve(jw - A + B @ K, E)
    top = np.linalg.norm(Cz @ open_, 2)
    reduction = 1.0 - np.linalg.norm(Cz @ closed, 2) / top if top > 0 else 0.0
    signal = load.amplitude * np.linalg.norm(Cr @ open_, axis=1) / np.asarray(std, float)
    return LoadReach(float(load.frequency), float(reduction), float(signal.max(initial=0.0)))


@dataclass(frozen=True)
class NoiseTuning:
    """The densities a Kalman filter was designed with, and where each came from.

    Attributes
    ----------
    process_noise : float
        White nodal-force density on every force channel [N^2 s].
    load_drift : float or None
        Random-walk density of the load states [N^2/s]; None: no load states.
    load : ExpectedLoad or None
        The load the derived densities follow (given or :func:`default_load`); None when both
        densities were given.
    sources : tuple of str
        Where ``process_noise`` and ``load_drift`` came from: ``"given"``,
        ``"expected_load"`` (derived from the user's load) or ``"default"`` (derived from
        :func:`default_load`); ``load_drift``'s is ``"none"`` without load states.
    band : float
        ``Omega`` of the rule [rad/s] (module docstring).
    directions : int
        n_d of the rule: the force directions the load's power is spread over.
    reach : LoadReach or None
        What that load lets the design's loop gain (None without a load).
    """

    process_noise: float
    load_drift: float | None
    load: ExpectedLoad | None
    sources: tuple
    band: float
    directions: int
    reach: LoadReach | None = None

    def __repr__(self) -> str:
        drift = "None" if self.load_drift is None else f"{self.load_drift:.4g} N^2/s"
        return (f"NoiseTuning(process_noise={self.process_noise:.4g} N^2 s, load_drift={drift}, "
                f"sources={self.sources[0]}/{self.sources[1]})")

    def rows(self) -> list:
        """(label, value) rows for a design's summary."""
        where = {"given": "given", "expected_load": "from expected_load",
                 "default": "default load: the largest that keeps every string taut, "
                                "a decade below the lowest mode"}
        rows = [("process noise W",
                 f"{self.process_noise:.4g} N^2 s ({where[self.sources[0]]})"),
                ("load drift", "none (white forces only)" if self.load_drift is None else
                 f"{self.load_drift:.4g} N^2/s ({where[self.sources[1]]})")]
        if self.load is not None:
            rows.append(("load the noise follows", f"{self.load.amplitude:.4g} N at "
                                                   f"{self.load.frequency:.4g} rad/s over "
                                                   f"{self.directions} force directions"))
        return rows + ([] if self.reach is None else self.reach.rows())


def lowest_frequency(A: np.ndarray) -> float:
    """The smallest eigenvalue modulus of A [rad/s] above rigid round-off (1 if none): the
    lowest natural frequency of a reduced elastic model."""
    m = np.abs(np.linalg.eigvals(np.asarray(A, dtype=float)))
    m = m[m > _RIGID * m.max()] if m.size and m.max() > 0 else m[:0]
    return float(m.min()) if m.size else 1.0


def _tensions(model) -> np.ndarray:
    """(n_strings,) tension ``gamma l`` of every string at `model`'s operating point [N]."""
    s = model.structure
    N = np.asarray(model.q, dtype=float).reshape(-1, 3)
    p = s.string_nodes
    return np.asarray(model.gamma, dtype=float)[:s.n_strings] * np.linalg.norm(
        N[p[:, 1]] - N[p[:, 0]], axis=1)


def slackening_load(model, A: np.ndarray, E: np.ndarray, basis: np.ndarray) -> float:
    """The smallest static load [N] (magnitude of the nodal-force vector, in its worst
    direction) that slackens a taut string in the linear model: ``min_i t_i / ||k_i G_i||``
    over the taut strings i, G the strings' length change per unit force of the reduced
    model's quasi-static response ``basis (-A)^+ E`` [m/N], t the tension [N] and k the
    axial stiffness [N/m]. inf when no force stretches a taut string.

    Parameters
    ----------
    model : LinearModel
    A, E : ndarray, shapes (r, r), (r, nd)
        The reduced model [1/s] and its force map.
    basis : ndarray, shape (2 nq, r)
        The reduced coordinates' Cartesian state ``x - x* = basis z``.
    """
    s = model.structure
    N = np.asarray(model.q, dtype=float).reshape(-1, 3)
    p = s.string_nodes
    d = N[p[:, 1]] - N[p[:, 0]]
    u = d / np.linalg.norm(d, axis=1)[:, None]
    # dl_i = u_i . (dq_head - dq_tail): the lengths' gradient on the nodal coordinates
    J = np.zeros((s.n_strings, N.size))
    rows = np.arange(s.n_strings)
    for axis in range(3):
        J[rows, 3 * p[:, 1] + axis] += u[:, axis]
        J[rows, 3 * p[:, 0] + axis] -= u[:, axis]
    static = np.linalg.lstsq(-np.asarray(A, dtype=float), np.asarray(E, dtype=float),
                             rcond=None)[0]
    G = J @ np.asarray(basis, dtype=float)[:N.size] @ static
    pull = np.asarray(s.string_stiffness, dtype=float) * np.linalg.norm(G, axis=1)
    tension = _tensions(model)
    moved = (tension > 0) & (pull > _RIGID * pull.max(initial=0.0))
    return float((tension[moved] / pull[moved]).min()) if np.any(moved) else float("inf")


def default_load(model, A: np.ndarray, E: np.ndarray, basis: np.ndarray) -> ExpectedLoad:
    """The load assumed when the user states none: the largest the linear model can take,
    amplitude the least of the weakest taut string's tension and :func:`slackening_load` [N]
    (a larger load, in its worst direction, slackens a string), frequency
    :func:`lowest_frequency` of the reduced model A over :data:`QUASI_STATIC` [rad/s] (a
    quasi-static load).

    Parameters
    ----------
    model : LinearModel
    A, E, basis : ndarray
        The reduced model the filter is designed on [1/s], its force map and its Cartesian
        basis (:func:`slackening_load`).
    """
    tension = _tensions(model)
    taut = tension[tension > 0]
    # no string in tension (a bar-only model): 1 N, the scale of nothing in particular
    weakest = float(taut.min()) if taut.size else 1.0
    return ExpectedLoad(min(weakest, slackening_load(model, A, E, basis)),
                        lowest_frequency(A) / QUASI_STATIC)


def _given(who: str, name: str, value, unit: str):
    if value is None:
        return None
    return validation.real(f"{who}: {name}", value, positive=True,
                           expected=f"a positive spectral density [{unit}], or None to derive "
                                    "it from expected_load")


def check_noise(who: str, process_noise, load_drift, expected_load) -> tuple:
    """(process_noise, load_drift, expected_load) checked at a design's boundary: positive
    densities or None, an :class:`ExpectedLoad` or None."""
    if expected_load is not None and not isinstance(expected_load, ExpectedLoad):
        raise TypeError(f"{who}: expected_load must be a tenscontrol.ExpectedLoad(amplitude=N, "
                        f"frequency=rad/s), e.g. ExpectedLoad(30.0, 1.0) for 30 sin t N on one "
                        f"coordinate; got {validation.describe(expected_load)}")
    return (_given(who, "process_noise", process_noise, "N^2 s"),
            _given(who, "load_drift", load_drift, "N^2/s"), expected_load)


def force_directions(E: np.ndarray) -> int:
    """n_d: the rank of the reduced model's force map E (r, nd), singular values above
    :data:`_RIGID` of the largest (at least 1)."""
    sv = np.linalg.svd(np.asarray(E, dtype=float), compute_uv=False)
    return max(int(np.sum(sv > _RIGID * sv[0])) if sv.size and sv[0] > 0 else 0, 1)


def noise_tuning(model, A, E, basis, *, process_noise=None, load_drift=None,
                 expected_load=None, load_states: bool) -> NoiseTuning:
    """The densities of a filter on the reduced model A (module docstring's rule), from the
    arguments :func:`check_noise` passed.

    Parameters
    ----------
    model : LinearModel
    A : ndarray, shape (r, r)
        The reduced model [1/s].
    E : ndarray, shape (r, nd)
        Its force map (:func:`force_directions`).
    basis : ndarray, shape (2 nq, r)
        Its Cartesian basis (:func:`default_load`).
    process_noise, load_drift : float, optional
        Given densities [N^2 s], [N^2/s]; each overrides its derived value.
    expected_load : ExpectedLoad, optional
        The user's load; :func:`default_load` if None.
    load_states : bool
        Whether the design can carry load states (:func:`tenscontrol.discrete_lqg`). Without
        them a derived W follows ``F^2 / (n_d w)``; with them, the load states are used unless
        `process_noise` is given without `load_drift` and `expected_load` (1.0's white-force
        filter, unchanged).
    """
    w, drift = process_noise, load_drift
    legacy = w is not None and drift is None and expected_load is None
    use_states = load_states and not legacy
    derived = "expected_load" if expected_load is not None else "default"
    load = expected_load or default_load(model, A, E, basis)
    n_d = force_directions(E)
    F2, freq = load.amplitude ** 2 / n_d, load.frequency
    band = max(freq, lowest_frequency(A))
    if use_states:
        sources = ("given" if w is not None else derived,
                   "given" if drift is not None else derived)
        w = F2 * freq / band**2 if w is None else w
        drift = F2 * freq if drift is None else drift
    else:
        sources = ("given" if w is not None else derived, "none")
        w = F2 / freq if w is None else w
    if derived not in sources:
        load = None
    return NoiseTuning(float(w), None if drift is None else float(drift), load, sources,
                       float(band), n_d)
