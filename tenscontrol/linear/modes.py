"""Modal view of a linear model and of a design's closed loop (docs/api.md, "Modes").

:func:`modes` takes a :class:`tenscontrol.LinearModel` at an equilibrium and, optionally, a
design (or its controller), and returns a :class:`ModalView`: one row per elastic mode with its
natural frequency, damping ratio, what it moves (nodes, strings, bars), its reach from each
commanded string and disturbance and its visibility in each output (modal H2 norms, Gawronski,
*Dynamics and Control of Structures: A Modal Approach*, 1998, ch. 4), and, with a design, the
closed-loop mode matched to it.

Everything is computed on the exact elastic model (:func:`tenscontrol.elastic_model`):
constraint directions and rigid-body motion are not modes here (the view counts the rigid-body
fields it left out). A "mode" is one eigenvalue with ``Im >= 0`` of the elastic state matrix:
a complex pair (oscillatory), a negative real eigenvalue (overdamped), one numerically at zero
(static: a mechanism without stiffness) or one with ``Re > 0`` (unstable).

The closed loop is formed on the same elastic model from the runtime controller (state
feedback, output feedback, sampled linear feedback with its delay), so modes that the design's
reduced model left out appear with their true closed-loop value; a design whose loop is not
linear in this sense (an MPC) is represented by its unconstrained law, an estimator-based
sampled loop by its design eigenvalues. Each open-loop mode is matched to one closed-loop
eigenvalue by an assignment on mode-shape correlation (MAC) and eigenvalue distance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.optimize

from tenscontrol.control.controllers import OutputFeedback, StateFeedback
from tenscontrol.control.sampled import DiscreteFeedback
from tenscontrol.linear.reduction import ElasticModel, elastic_model
from tenscontrol.linear.sampling import exact_hold
from tenscontrol.model.tables import Presentable, html_table

__all__ = ["DEFAULT_DAMPING", "ModalView", "closed_loop_eigenvalues", "damping_ratios",
           "match_modes", "modal_analysis", "modes"]

#: The damping ratio a design is asked to reach on every mode, unless told otherwise: below
#: 2 % a mode rings for more than 1 / (2 pi 0.02) = 8 cycles before its amplitude falls by e
#: (structural control aims at a few per cent; bare tensegrity modes sit at 0.01-1 %).
DEFAULT_DAMPING = 0.02
#: An eigenvalue within this fraction of the largest |eigenvalue| of the model is static
#: (zero frequency): the damping ratio is not defined there.
STATIC_RTOL = 1e-9
#: Weight of the relative eigenvalue distance against (1 - MAC) when modes are matched.
_DISTANCE_WEIGHT = 0.3


@dataclass(frozen=True, eq=False)
class ModalView(Presentable):
    """Result of :func:`modes`: the elastic modes of a linear model (and of a closed loop).

    m is the number of modes (eigenvalues with Im >= 0 of the elastic model), sorted by
    natural frequency.

    Attributes
    ----------
    eigenvalues : ndarray, shape (m,), complex
        Open-loop eigenvalues [1/s].
    frequency : ndarray, shape (m,)
        Natural frequency |lambda| [rad/s] (``frequency / (2 pi)`` in Hz: :attr:`hertz`).
    damping : ndarray, shape (m,)
        Damping ratio -Re(lambda) / |lambda| (nan for a static mode).
    kind : tuple of str
        "oscillatory", "overdamped", "static" (zero frequency) or "unstable" per mode.
    shapes : ndarray, shape (m, nq), complex
        Displacement shape of each mode in Cartesian coordinates (node by node), scaled so
        that its largest nodal displacement is 1 m and real.
    node_share : ndarray, shape (m, n_nodes)
        Share of the mode's squared displacement at each node (rows sum to 1).
    string_stretch : ndarray, shape (m, n_strings)
        |change of length| of each string in the mode shape [m per m of largest nodal
        displacement]: a string's damper and its force-density command act on a mode only
        through this stretch.
    damper_share : ndarray, shape (m, n_strings)
        Share of the mode's damper dissipation in each string's damper, ``c_k stretch_k^2``
        normalized (rows sum to 1; 0 without dampers).
    bar_share : ndarray, shape (m, n_bars)
        Share of the bars' kinetic energy in each bar (uniform slender rods; rows sum to 1).
    authority : ndarray, shape (m,)
        The damping the commanded strings could add to each mode by a unit velocity feedback
        (``sum_j |phi^H F_j|^2 / (2 omega phi^H M phi)``), relative to the largest over the
        modes [0..1]: about 0 means the strings cannot reach the mode.
    reach : ndarray, shape (m, nu)
        Modal H2 norm from each commanded string [N/m] to all the outputs.
    disturbance_reach : ndarray, shape (m, nd)
        Modal H2 norm from each nodal-force disturbance [N] to all the outputs.
    visibility : ndarray, shape (m, ny)
        Modal H2 norm from all the disturbances to each output.
    closed_eigenvalues : ndarray, shape (m,), complex, or None
        With a design: the closed-loop eigenvalue matched to each mode [1/s] (nan if none).
    closed_frequency, closed_damping : ndarray, shape (m,), or None
        Its natural frequency [rad/s] and damping ratio.
    target : float
        The damping ratio a design is asked to reach (:data:`DEFAULT_DAMPING` by default).
    input_names, disturbance_names, output_names : tuple of str
    n_rigid : int
        Rigid-body fields of a free-floating structure, left out of the elastic model.
    closed_loop : str or None
        How the closed loop was formed ("state feedback on the elastic model", ...).
    structure : Structure or None
    q : ndarray, shape (nq,)
        The operating point [m].

    Notes
    -----
    The modal H2 norm of mode i is the H2 norm of its 2 x 2 (1 x 1 for a real eigenvalue)
    block of the real modal form, ``||G_i||_2 ~= ||B_i|| ||C_i|| / (2 sqrt(zeta_i omega_i))``
    for a lightly damped mode (Gawronski 1998, sec. 4.2); inf for a mode on or right of the
    imaginary axis that is both reached and seen. For repeated frequencies (symmetric
    structures) the split between the modes of one frequency is the eigensolver's.
    """

    eigenvalues: np.ndarray
    frequency: np.ndarray
    damping: np.ndarray
    kind: tuple
    shapes: np.ndarray
    node_share: np.ndarray
    string_stretch: np.ndarray
    damper_share: np.ndarray
    bar_share: np.ndarray
    authority: np.ndarray
    reach: np.ndarray
    disturbance_reach: np.ndarray
    visibility: np.ndarray
    closed_eigenvalues: np.ndarray | None
    target: float
    input_names: tuple
    disturbance_names: tuple
    output_names: tuple
    n_rigid: int
    closed_loop: str | None
    structure: object
    q: np.ndarray

    def __post_init__(self):
        for name, value in vars(self).items():
            if isinstance(value, np.ndarray):
                value.setflags(write=False)

    @property
    def hertz(self) -> np.ndarray:
        """Natural frequencies [Hz]."""
        return self.frequency / (2 * np.pi)

    @property
    def closed_frequency(self):
        return None if self.closed_eigenvalues is None else np.abs(self.closed_eigenvalues)

    @property
    def closed_damping(self):
        return None if self.closed_eigenvalues is None else damping_ratios(
            self.closed_eigenvalues, STATIC_RTOL * max(1.0, float(self.frequency.max(
                initial=0.0))))

    @property
    def below_target(self) -> np.ndarray:
        """Indices of the modes below :attr:`target` damping: closed loop if there is one."""
        z = self.damping if self.closed_eigenvalues is None else self.closed_damping
        return np.flatnonzero(~(z >= self.target))            # nan (static) counts as below

    def __len__(self) -> int:
        return self.eigenvalues.size

    def __repr__(self) -> str:
        head = (f"ModalView(modes={len(self)}, frequency={_span(self.frequency, 'rad/s')}, "
                f"least damping={_least(self.damping)}")
        if self.closed_eigenvalues is not None:
            head += f", closed loop least damping={_least(self.closed_damping)}"
        return head + f", below {self.target:g}: {self.below_target.size})"

    def _rows(self):
        """(header, rows) of the table: one row per mode."""
        header = ["mode", "f [Hz]", "w [rad/s]", "zeta", "kind", "moves most",
                  "top string stretch", "authority", "reach (best string)", "seen most by"]
        closed = self.closed_eigenvalues is not None
        if closed:
            header[4:4] = ["zeta closed", "w closed"]
        rows = []
        for i in range(len(self)):
            row = [str(i), f"{self.hertz[i]:.4g}", f"{self.frequency[i]:.4g}",
                   _ratio(self.damping[i]), self.kind[i], _top(self.node_share[i], "node"),
                   _stretch(self.string_stretch[i]), f"{self.authority[i]:.2g}",
                   _best(self.reach[i], self.input_names),
                   _best(self.visibility[i], self.output_names)]
            if closed:
                row[4:4] = [_ratio(self.closed_damping[i]),
                            f"{self.closed_frequency[i]:.4g}"]
            rows.append(row)
        return header, rows

    def _notes(self) -> list:
        notes = []
        if self.n_rigid:
            notes.append(f"{self.n_rigid} rigid-body motions (free-floating) are not modes "
                         "here: no string command moves them")
        below = self.below_target
        where = "closed loop" if self.closed_eigenvalues is not None else "open loop"
        if below.size:
            notes.append(f"{below.size} of {len(self)} modes below {self.target:g} damping "
                         f"({where}): " + ", ".join(f"{i} ({self.frequency[i]:.4g} rad/s)"
                                                    for i in below[:6])
                         + (" ..." if below.size > 6 else ""))
        if self.closed_loop:
            notes.append(f"closed loop: {self.closed_loop}")
        return notes

    def summary(self) -> str:
        """One line per mode (frequency, damping, what it moves, reach and visibility)."""
        header, rows = self._rows()
        widths = [max(len(h), *(len(r[c]) for r in rows)) if rows else len(h)
                  for c, h in enumerate(header)]
        line = lambda cells: "  ".join(f"{c:>{w}}" for c, w in zip(cells, widths))  # noqa: E731
        name = getattr(self.structure, "name", "model")
        out = [f"ModalView of {name}: {len(self)} elastic modes", line(header)]
        out += [line(r) for r in rows]
        return "\n".join(out + self._notes())

    def _repr_html_(self) -> str:
        header, rows = self._rows()
        name = getattr(self.structure, "name", "model")
        caption = f"ModalView of {name}: " + "; ".join(
            [f"{len(self)} elastic modes"] + self._notes())
        return html_table(rows, header=header, caption=caption)

    def mode(self, i: int) -> str:
        """A text table of mode i: every node's share, string's stretch and bar's share."""
        i = int(i)
        if not 0 <= i < len(self):
            raise IndexError(f"ModalView.mode: mode {i} out of range 0..{len(self) - 1}")
        lines = [f"mode {i}: {self.frequency[i]:.6g} rad/s ({self.hertz[i]:.6g} Hz), damping "
                 f"{_ratio(self.damping[i])}, {self.kind[i]}"]
        if self.closed_eigenvalues is not None:
            lines.append(f"  closed loop: {self.closed_frequency[i]:.6g} rad/s, damping "
                         f"{_ratio(self.closed_damping[i])}")
        for label, values, fmt in (("node share", self.node_share[i], "{:.3f}"),
                                   ("string stretch [m/m]", self.string_stretch[i], "{:.3g}"),
                                   ("damper share", self.damper_share[i], "{:.3f}"),
                                   ("bar share", self.bar_share[i], "{:.3f}")):
            lines.append(f"  {label}: " + ", ".join(fmt.format(v) for v in values))
        lines.append("  reach from strings: " + ", ".join(
            f"{n} {v:.3g}" for n, v in zip(self.input_names, self.reach[i])))
        lines.append("  visibility: " + ", ".join(
            f"{n} {v:.3g}" for n, v in zip(self.output_names, self.visibility[i])))
        return "\n".join(lines)


# ---- formatting -------------------------------------------------------------------------------


def _span(values, unit: str) -> str:
    return f"{values.min():.4g}..{values.max():.4g} {unit}" if values.size else "none"


def _least(z) -> str:
    z = np.asarray(z, dtype=float)
    return "none" if not np.isfinite(z).any() else f"{np.nanmin(z):.2g}"


def _ratio(z: float) -> str:
    return "-" if np.isnan(z) else f"{z:.2g}"


def _top(share, what: str) -> str:
    if not share.size or share.max() <= 0:
        return "-"
    order = np.argsort(-share)[:2]
    return ", ".join(f"{what} {k} {100 * share[k]:.0f}%" for k in order if share[k] >= 0.05)


def _stretch(values) -> str:
    if not values.size:
        return "-"
    k = int(np.argmax(values))
    return f"string {k}: {values[k]:.2g}"


def _best(values, names) -> str:
    if not values.size:
        return "-"
    k = int(np.argmax(values))
    return f"{names[k]} {values[k]:.2g}"


# ---- the computations -------------------------------------------------------------------------


def damping_ratios(eigenvalues, static: float) -> np.ndarray:
    """-Re / |lambda| of continuous eigenvalues; nan where |lambda| <= `static` [1/s]."""
    lam = np.asarray(eigenvalues, dtype=complex)
    w = np.abs(lam)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(w > static, -lam.real / np.where(w > 0, w, 1.0), np.nan)


def _eig(A: np.ndarray):
    """Eigenvalues with Im >= 0 (one per pair), sorted by |lambda|, their right eigenvectors, and
    the real modal blocks: (lam, V, blocks) with blocks[i] the columns of the real modal basis
    (2 for a pair, 1 for a real eigenvalue) and their rows of its inverse."""
    lam, V = scipy.linalg.eig(A)
    scale = max(float(np.abs(lam).max(initial=0.0)), np.finfo(float).tiny)
    keep = lam.imag >= -1e-12 * scale
    real = np.abs(lam.imag) <= 1e-12 * scale
    lam, V = np.where(real, lam.real, lam)[keep], V[:, keep]
    order = np.lexsort((lam.real, np.abs(lam)))
    lam, V = lam[order], V[:, order]
    cols, sizes = [], []
    for k in range(lam.size):
        if lam[k].imag == 0:
            cols.append(V[:, k].real)
            sizes.append(1)
        else:
            cols += [V[:, k].real, V[:, k].imag]
            sizes.append(2)
    T = np.column_stack(cols) if cols else np.zeros((A.shape[0], 0))
    Ti = np.linalg.solve(T, np.eye(T.shape[0])) if T.size else T.T
    starts = np.concatenate([[0], np.cumsum(sizes)])
    blocks = [(T[:, a:b], Ti[a:b]) for a, b in zip(starts[:-1], starts[1:])]
    return lam, V, blocks


def _block_h2(L: np.ndarray, Bm: np.ndarray, Cm: np.ndarray) -> float:
    """H2 norm of (L, Bm, Cm), L a 1 x 1 or 2 x 2 modal block; inf if it is not stable and
    both Bm and Cm are nonzero."""
    if not (np.any(Bm) and np.any(Cm)):
        return 0.0
    if np.linalg.eigvals(L).real.max() >= 0:
        return np.inf
    P = scipy.linalg.solve_continuous_lyapunov(L, -Bm @ Bm.T)
    return float(np.sqrt(max(np.trace(Cm @ P @ Cm.T), 0.0)))


def _modal_h2(L, Bm, Cm) -> np.ndarray:
    """Modal H2 norm from each input column of Bm to all the outputs Cm."""
    return np.array([_block_h2(L, Bm[:, [j]], Cm) for j in range(Bm.shape[1])])


def _classify(lam: np.ndarray, static: float) -> tuple:
    kinds = []
    for value in lam:
        if abs(value) <= static:
            kinds.append("static")
        elif value.real > static * 1e-3 and value.real > 0:
            kinds.append("unstable")
        elif value.imag == 0:
            kinds.append("overdamped")
        else:
            kinds.append("oscillatory")
    return tuple(kinds)


def modal_analysis(em: ElasticModel) -> dict:
    """The structure-free modal figures of an elastic model.

    Returns a dict with lam (m,), V (2 n_e, m) eigenvectors, blocks, frequency, damping, kind,
    authority (m,), reach (m, nu), disturbance_reach (m, nd), visibility (m, ny) and the
    static threshold [1/s]; see :class:`ModalView` for their meaning.
    """
    A = np.asarray(em.A, dtype=float)
    lam, V, blocks = _eig(A)
    static = STATIC_RTOL * max(1.0, float(np.abs(lam).max(initial=0.0)))
    n_e = em.n_e
    B, E, C = (np.asarray(X, dtype=float) for X in (em.B, em.E, em.C))
    reach = np.zeros((lam.size, B.shape[1]))
    dreach = np.zeros((lam.size, E.shape[1]))
    vis = np.zeros((lam.size, C.shape[0]))
    authority = np.zeros(lam.size)
    forces = em.M_e @ B[n_e:]                 # Z^T F_u: generalized forces per unit command
    for i, (Tm, Tim) in enumerate(blocks):
        L = Tim @ A @ Tm
        Bm, Em, Cm = Tim @ B, Tim @ E, C @ Tm
        reach[i] = _modal_h2(L, Bm, Cm)
        dreach[i] = _modal_h2(L, Em, Cm)
        vis[i] = [_block_h2(L, Em, Cm[[k]]) for k in range(C.shape[0])]
        phi = V[:n_e, i]
        mass = float(np.real(phi.conj() @ em.M_e @ phi))
        w = max(abs(lam[i]), static)
        if mass > 0:
            authority[i] = float(np.sum(np.abs(phi.conj() @ forces) ** 2)) / (2 * w * mass)
    if authority.max(initial=0.0) > 0:
        authority = authority / authority.max()
    return dict(lam=lam, V=V, blocks=blocks, frequency=np.abs(lam),
                damping=damping_ratios(lam, static), kind=_classify(lam, static),
                authority=authority, reach=reach, disturbance_reach=dreach, visibility=vis,
                static=static)


def _participation(structure, q, shapes: np.ndarray) -> tuple:
    """(node_share, string_stretch, damper_share, bar_share) of Cartesian shapes (m, nq)."""
    m = shapes.shape[0]
    n = structure.n_nodes
    U = shapes.reshape(m, n, 3)
    sq = np.sum(np.abs(U) ** 2, axis=2)
    node = sq / np.maximum(sq.sum(axis=1, keepdims=True), np.finfo(float).tiny)
    X = np.asarray(q, dtype=float).reshape(n, 3)
    s = structure.string_nodes
    stretch = np.zeros((m, structure.n_strings))
    if structure.n_strings:
        d = X[s[:, 1]] - X[s[:, 0]]
        unit = d / np.linalg.norm(d, axis=1)[:, None]
        stretch = np.abs(np.einsum("mkc,kc->mk", U[:, s[:, 1]] - U[:, s[:, 0]], unit))
    diss = structure.string_damping[None, :] * stretch ** 2
    total = diss.sum(axis=1, keepdims=True)
    damper = np.divide(diss, total, out=np.zeros_like(diss), where=total > 0)
    b = structure.bar_nodes
    bar = np.zeros((m, structure.n_bars))
    if structure.n_bars:
        ui, uj = U[:, b[:, 0]], U[:, b[:, 1]]
        # kinetic energy of a uniform rod with end velocities v_i, v_j: m/6 (|v_i|^2 + |v_j|^2
        # + Re v_i . conj(v_j)); the common factor omega^2 cancels in the share
        ke = structure.bar_masses[None, :] / 6 * (
            np.sum(np.abs(ui) ** 2, axis=2) + np.sum(np.abs(uj) ** 2, axis=2)
            + np.real(np.sum(ui * uj.conj(), axis=2)))
        tot = ke.sum(axis=1, keepdims=True)
        bar = np.divide(ke, tot, out=np.zeros_like(ke), where=tot > 0)
    return node, stretch, damper, bar


def _unit_shapes(Z: np.ndarray, V: np.ndarray, n_e: int) -> np.ndarray:
    """Cartesian displacement shapes (m, nq) with the largest nodal displacement 1 m, real."""
    S = (Z @ V[:n_e]).T
    out = np.zeros_like(S)
    for i, row in enumerate(S):
        nodal = np.sqrt(np.sum(np.abs(row.reshape(-1, 3)) ** 2, axis=1))
        k = int(np.argmax(np.abs(row)))
        if nodal.max() > 0:
            out[i] = row * (abs(row[k]) / row[k]) / nodal.max()
    return out


def match_modes(lam_o, V_o, lam_c, V_c, n_e: int, M_e) -> np.ndarray:
    """The closed-loop eigenvalue assigned to each open-loop mode (nan where none).

    Cost: (1 - MAC) of the position parts (mass-weighted), plus a weighted relative eigenvalue
    distance; without closed-loop vectors the distance alone."""
    cand = lam_c[lam_c.imag >= -1e-12 * max(1.0, float(np.abs(lam_c).max(initial=0.0)))]
    idx = np.flatnonzero(lam_c.imag >= -1e-12 * max(1.0, float(np.abs(lam_c).max(
        initial=0.0))))
    out = np.full(lam_o.size, np.nan + 0j)
    if not cand.size or not lam_o.size:
        return out
    ref = np.maximum(np.abs(lam_o), 1e-12)[:, None]
    dist = np.minimum(np.abs(lam_o[:, None] - cand[None, :]) / ref, 1.0)
    cost = dist.copy()
    if V_c is not None:
        Po, Pc = V_o[:n_e], V_c[:n_e, idx]
        Mo, Mc = M_e @ Po, M_e @ Pc
        cross = np.abs(Po.conj().T @ Mc) ** 2
        no = np.real(np.sum(Po.conj() * Mo, axis=0))
        nc = np.real(np.sum(Pc.conj() * Mc, axis=0))
        mac = cross / np.maximum(np.outer(no, nc), np.finfo(float).tiny)
        cost = (1 - mac) + _DISTANCE_WEIGHT * dist
    rows, cols = scipy.optimize.linear_sum_assignment(cost)
    out[rows] = cand[cols]
    return out


def _controller_of(design):
    """(controller, note): the linear law whose loop represents the design."""
    dlqr = getattr(design, "dlqr", None)
    if dlqr is not None:                         # an MPC: its unconstrained law
        return dlqr.controller, "the MPC's unconstrained law (bounds inactive)"
    return getattr(design, "controller", design), None


def closed_loop_eigenvalues(em: ElasticModel, design) -> tuple:
    """(eigenvalues [1/s], eigenvectors or None, description) of `design`'s loop.

    The controller closes the loop on the elastic model `em` (its inputs must be the
    controller's strings): ``u = -K T x_e`` for state feedback, the controller's states added
    for output feedback, the exact zero-order hold with the delay for sampled linear feedback
    (eigenvalues mapped to ``log(z) / period``). Other designs give their own ``E``.
    """
    c, note = _controller_of(design)
    A, B, T = (np.asarray(X, dtype=float) for X in (em.A, em.B, em.T))
    if isinstance(c, StateFeedback):
        lam, V = scipy.linalg.eig(A - B @ c.K @ T)
        how = "state feedback on the elastic model"
    elif isinstance(c, OutputFeedback):
        Cm = c.measurement.C @ T
        DK, CK = -c.DK, -c.CK
        Acl = np.block([[A + B @ DK @ Cm, B @ CK], [c.BK @ Cm, c.AK]])
        lam, V = scipy.linalg.eig(Acl)
        how = f"output feedback ({c.n_states} controller states) on the elastic model"
    elif isinstance(c, DiscreteFeedback):
        lam, V = _sampled_loop(A, B, T, c)
        how = (f"sampled feedback every {c.period:g} s (delay {c.delay:g} s) on the elastic "
               "model, log(z)/T")
    else:
        E = np.asarray(getattr(design, "E"), dtype=complex)
        period = getattr(c, "period", None)
        lam = np.log(E.astype(complex)) / period if period else E
        return lam, None, "the design's own closed-loop eigenvalues (reduced model)"
    return lam, V, how if note is None else f"{note}: {how}"


def _sampled_loop(A, B, T, c: DiscreteFeedback):
    """Eigenvalues (as log(z)/T) and vectors of a DiscreteFeedback around the exact ZOH of
    (A, B) with its delay: states [x_e; xc; u_k-1]."""
    period, delay = c.period, c.delay
    n, nu, nk = A.shape[0], B.shape[1], c.n_states
    Phi_d, G_d = exact_hold(A, B, delay)
    Phi_r, G_r = exact_hold(A, B, period - delay)
    Phi, G0, G1 = Phi_r @ Phi_d, G_r, Phi_r @ G_d
    Cs = T if c.measurement is None else c.measurement.C @ T
    DKs, CK = c.DK @ Cs, c.CK
    Acl = np.block([
        [Phi - G0 @ DKs, -G0 @ CK, G1],
        [c.BK @ Cs, c.AK, np.zeros((nk, nu))],
        [-DKs, -CK, np.zeros((nu, nu))]])
    z, V = scipy.linalg.eig(Acl)
    # a delay-free loop's u_k-1 states are exact zeros (z = 0): no continuous counterpart
    live = np.abs(z) > 1e-12
    return np.log(z[live]) / period, V[:, live]


def modes(model, design=None, *, damping: float = DEFAULT_DAMPING) -> ModalView:
    """The elastic modes of a linear model, and of a design's closed loop.

    Parameters
    ----------
    model : LinearModel
        Linearization at an equilibrium (:func:`tenscontrol.linearize`), with the outputs of
        interest; its commanded strings are the design's (``design.controller.strings``) or
        ``structure.actuated_strings``.
    design : Design or Controller, optional
        E.g. ``lqr(model)``: its loop is closed on the same elastic model and each mode gets
        its closed-loop eigenvalue.
    damping : float
        The damping ratio target (0 < damping < 1) that :attr:`ModalView.below_target`
        counts against.

    Returns
    -------
    ModalView
        ``print(view)`` shows one row per mode, ``view.mode(i)`` one mode in full;
        :func:`tenscontrol.plotting.plot_mode_shape` draws a mode on the structure and
        :func:`tenscontrol.plotting.plot_damping_map` the damping map.

    Examples
    --------
    >>> view = tc.modes(model, tc.lqr(model, effort=1e-2))    # doctest: +SKIP
    >>> print(view)                                            # doctest: +SKIP
    """
    from tenscontrol import validation

    damping = validation.real("modes: damping", damping, positive=True,
                              expected="a damping ratio in (0, 1)")
    if damping >= 1:
        raise ValueError(f"modes: damping must be a damping ratio in (0, 1), got {damping:g}")
    if not hasattr(model, "actuated") or not hasattr(model, "structure"):
        raise TypeError(f"modes: expected a tenscontrol LinearModel, got {type(model).__name__}")
    strings = None
    if design is not None:
        c, _ = _controller_of(design)
        strings = getattr(c, "strings", None)
    actuated = model.actuated(strings)
    em = elastic_model(actuated)
    fig = modal_analysis(em)
    shapes = _unit_shapes(em.Z, fig["V"], em.n_e)
    node, stretch, damper, bar = _participation(model.structure, model.q, shapes)
    closed, how = None, None
    if design is not None:
        lam_c, V_c, how = closed_loop_eigenvalues(em, design)
        closed = match_modes(fig["lam"], fig["V"], lam_c, V_c, em.n_e, em.M_e)
    return ModalView(fig["lam"], fig["frequency"], fig["damping"], fig["kind"], shapes, node,
                     stretch, damper, bar, fig["authority"], fig["reach"],
                     fig["disturbance_reach"], fig["visibility"], closed, float(damping),
                     tuple(actuated.input_names), tuple(actuated.disturbance_names),
                     tuple(actuated.output_names), int(em.R_t.shape[1]), how,
                     model.structure, np.array(model.q, dtype=float))
