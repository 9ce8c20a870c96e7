"""Modal view of a linear model and of a design's closed loop: :func:`modes`.

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

The computations are in :mod:`tenscontrol.linear.modal`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tenscontrol import validation
from tenscontrol.linear.modal import (DEFAULT_DAMPING, closed_loop_eigenvalues, controller_of,
                                      damping_ratios, match_modes, modal_analysis,
                                      static_threshold)
from tenscontrol.linear.reduction import elastic_model
from tenscontrol.model.tables import Presentable, html_table

__all__ = ["ModalView", "modes"]


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
        """Natural frequency [rad/s] of the closed-loop eigenvalue matched to each mode (None
        without a design)."""
        return None if self.closed_eigenvalues is None else np.abs(self.closed_eigenvalues)

    @property
    def closed_damping(self):
        """Damping ratio of the closed-loop eigenvalue matched to each mode (None without a
        design; nan where it is static)."""
        return None if self.closed_eigenvalues is None else damping_ratios(
            self.closed_eigenvalues, static_threshold(self.eigenvalues))

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
                  "top string stretch", "authority", "H2 from (best string)",
                  "H2 to (best output)"]
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
        """One line per mode: frequency, damping (open and closed loop), kind, the two nodes it
        moves most, the string it stretches most [m per m], the commanded strings' authority
        (relative), the largest modal H2 norm from a commanded string and into an output
        (a lightly damped mode's H2 norm is large because it rings, not because it is easy
        to reach: read it with the authority)."""
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


# ---- participation ----------------------------------------------------------------------------


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


def _check_design(model, controller) -> None:
    """The controller was designed on this kind of model at this operating point."""
    kind = getattr(controller, "kind", model.kind)
    if kind != model.kind:
        raise ValueError(f"modes: the design is for a {kind!r} model, the model is "
                         f"{model.kind!r}: linearize with kind={kind!r}")
    q_ref = getattr(controller, "q_ref", None)
    if q_ref is None and getattr(controller, "measurement", None) is not None:
        q_ref = getattr(controller.measurement, "q_ref", None)
    if q_ref is not None:
        q_ref = np.asarray(q_ref, dtype=float).reshape(-1)
        q = np.asarray(model.q, dtype=float)
        if q_ref.shape != q.shape or np.abs(q_ref - q).max() > 1e-9 * max(1.0, np.abs(q).max()):
            raise ValueError("modes: the design was made at another operating point than the "
                             "model's (its q_ref differs from model.q); pass the model it was "
                             "designed on")


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
    damping = validation.real("modes: damping", damping, positive=True,
                              expected="a damping ratio in (0, 1)")
    if damping >= 1:
        raise ValueError(f"modes: damping must be a damping ratio in (0, 1), got {damping:g}")
    if not hasattr(model, "actuated") or not hasattr(model, "structure"):
        raise TypeError(f"modes: expected a tenscontrol LinearModel, got {type(model).__name__}")
    strings = None
    if design is not None:
        c, _ = controller_of(design)
        strings = getattr(c, "strings", None)
        _check_design(model, c)
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
