"""Actuator placement: which k of the candidate strings to command (the dual of
:func:`tenscontrol.place_sensors`).

The figure of a set S of commanded strings is the figure of the loop closed on them: the H2
norm from the nodal-force disturbances d to the regulated output
``z = [Q^1/2 (x - x*); R^1/2 u]`` of :func:`tenscontrol.lqr` designed with S commanded (its
default or given weights), ``J(S) = sqrt(trace(E_r^T S_r E_r))`` with S_r the reduced Riccati
solution: the optimal LQR cost under unit white noise on every free nodal force. It is what the
LQR itself minimizes. On a passive model it never grows when a string is added (the smaller
set's optimal law is still available, the added input at zero); on a control model a commanded
string no longer follows its elastic law, so the plant changes with the set and J may grow. A
set that leaves a lightly damped mode out of reach has no stabilizing LQR and ``J = inf``.

:func:`place_actuators` chooses greedily (:func:`tenscontrol.linear.greedy.greedy_subset`):

- ``"h2"``: the string whose addition lowers J most; while no extension is finite (a
  near-undamped mode that no chosen string reaches yet), the one that raises the modal index;
- ``"modal"``: the modal index alone, a Gawronski-type placement index normalized per mode so
  that every mode counts (W. Gawronski, *Advanced Structural Dynamics and Active Control of
  Structures*, Springer 2004, actuator and sensor placement: the H2 norm of the pole lambda_i
  from input k is about ``|w_i^T b_k| ||C v_i|| / sqrt(2 |Re lambda_i|)``; normalized by the
  same mode's norm from every candidate, the output and damping factors cancel). For each
  eigenspace of the open-loop design model A_r (eigenvalues within 1e-6 ||A_r|| of each other,
  so that a symmetric structure's double modes are one space and the index does not depend on
  the eigenvectors chosen in it), with left eigenvectors W_c and the inputs scaled by their LQR
  weight: ``G = W_c B diag(R)^-1/2`` over the candidates, ``H = G G^H``, and the share of S is
  ``det(H^-1/2 G_S G_S^H H^-1/2 + eps I)`` on the range of H (eps = 1e-12). The index is the
  geometric mean of the shares over the modes the candidates reach, 1 for the full set, near
  0 for a set that misses a mode.

The result names the chosen strings and carries the linear model whose structure commands
exactly them (``String.actuated``), which is how every design function is told which strings
to command: ``tc.lqr(placement.model)``, ``tc.dlqr(placement.model, period)``,
``tc.hinfsyn(placement.model, ...)``, ``tc.lqg(placement.model, sensors, ...)``, ``tc.mpc``,
and :func:`tenscontrol.shape_change` or :func:`tenscontrol.simulate` with
``placement.structure``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from tenscontrol import validation
from tenscontrol.design.synthesis import lqr
from tenscontrol.linear.greedy import greedy_subset
from tenscontrol.linear.modal import eigenspaces
from tenscontrol.model.tables import Presentable, titled_table

__all__ = ["ActuatorPlacement", "place_actuators"]

#: Directions of an eigenspace whose reach from every candidate is below this fraction of the
#: largest are reached by no candidate set; they are left out of the index (no choice helps).
_UNREACHED = 1e-12
#: The regularization eps of each share's det: a set that misses a mode scores eps there, not
#: 0, so that two sets missing modes still compare by the rest.
_SHARE_FLOOR = 1e-12
CRITERIA = ("h2", "modal")


@dataclass(frozen=True, eq=False)
class ActuatorPlacement(Presentable):
    """Result of :func:`place_actuators`.

    Attributes
    ----------
    strings : tuple of int
        The chosen strings (indices into ``structure.strings``), in the order they were picked.
    candidates : tuple of int
        The strings chosen from.
    criterion : str
    figure : float
        ``"h2"``: the LQR loop's H2 norm J from the disturbances d [N] to z (dimensionless)
        with the chosen strings [s^1/2]; ``"modal"``: their modal index (in (0, 1]).
    full : float
        The same figure with every candidate commanded.
    history : tuple of float
        The figure after each pick (``inf``: the set had no stabilizing LQR yet).
    model : LinearModel
        The model placed on, its structure commanding exactly the chosen strings: pass it to
        any design function (``tc.lqr(placement.model)``).
    """

    strings: tuple
    candidates: tuple
    criterion: str
    figure: float
    full: float
    history: tuple
    model: object

    @property
    def structure(self):
        """The structure with ``String.actuated`` True on the chosen strings only."""
        return self.model.structure

    @property
    def kept(self) -> float:
        """The fraction of the full set's figure the chosen strings keep, in [0, 1]:
        ``full / figure`` for ``"h2"`` (a norm: smaller is better), ``figure / full`` for
        ``"modal"``."""
        if self.criterion == "h2":
            return self.full / self.figure if np.isfinite(self.figure) else 0.0
        return self.figure / self.full

    def __repr__(self) -> str:
        return (f"ActuatorPlacement(criterion={self.criterion!r}, "
                f"chosen={len(self.strings)} of {len(self.candidates)}, "
                f"figure={self.figure:.6g}, full={self.full:.6g}, kept={self.kept:.3f})")

    def summary(self) -> str:
        """The criterion, the chosen strings and the figure against every candidate's."""
        return titled_table("ActuatorPlacement", [
            ("criterion", self.criterion),
            ("chosen strings", f"{len(self.strings)} of {len(self.candidates)}: "
                               + ", ".join(map(str, self.strings))),
            ("figure", f"{self.figure:.6g}"), ("with every candidate", f"{self.full:.6g}"),
            ("kept", f"{self.kept:.3f}"),
            ("after each pick", ", ".join(f"{h:.4g}" for h in self.history))])


def _commanding(model, strings):
    """`model` with its structure commanding exactly `strings` (``String.actuated``); the
    design functions then take those as the inputs."""
    st = model.structure.with_strings(actuated=False)
    if len(strings):
        st = st.with_strings(sorted(int(k) for k in strings), actuated=True)
    return dataclasses.replace(model, structure=st)


# ---- inputs ---------------------------------------------------------------------------------


def _check_model(model) -> None:
    structure = getattr(model, "structure", None)
    if structure is None or not hasattr(model, "actuated"):
        raise TypeError(f"place_actuators: model must be a tenscontrol LinearModel "
                        f"(tc.linearize(structure)), got {type(model).__name__}")
    full = tuple(f"gamma{k}" for k in range(structure.n_strings))
    if tuple(model.input_names[:len(full)]) != full:
        raise ValueError(f"place_actuators: model must have one input per string, as "
                         f"tc.linearize returns it, got {len(model.input_names)} inputs for "
                         f"{structure.n_strings} strings; pass the model before .actuated(...)")


def _candidates(structure, candidates) -> tuple:
    """The candidate strings, checked: existing, distinct and ``String.actuated``."""
    if candidates is None:
        return tuple(int(k) for k in structure.actuated_strings)
    values = np.asarray(candidates).reshape(-1)
    if values.size and not np.issubdtype(values.dtype, np.integer):
        raise TypeError(f"place_actuators: candidates must be string indices (int), got "
                        f"{validation.show(candidates)}")
    n, commanded = structure.n_strings, set(int(k) for k in structure.actuated_strings)
    seen = set()
    for k in (int(v) for v in values):
        if not 0 <= k < n:
            raise ValueError(f"place_actuators: candidates: string {k} does not exist (the "
                             f"structure has {n} strings, 0..{n - 1}); leave it out")
        a, b = structure.string_nodes[k]
        if k not in commanded:
            raise ValueError(f"place_actuators: candidates: string {k} (nodes {a}->{b}) is not "
                             "commanded (String.actuated is False); leave it out, or mark it "
                             f"with structure.with_strings([{k}], actuated=True) and linearize "
                             "again")
        if k in seen:
            raise ValueError(f"place_actuators: candidates: string {k} (nodes {a}->{b}) is "
                             "listed twice; list each string once")
        seen.add(k)
    return tuple(int(v) for v in values)


def _k(k, n: int) -> int:
    k = validation.integer("place_actuators: k (the number of strings to choose)", k)
    if not 1 <= k <= n:
        raise ValueError(f"place_actuators: k must be from 1 to {n} (the number of candidate "
                         f"strings), got {k}; choose fewer strings or give more candidates")
    return k


def _weight(R, n: int):
    """The candidates' input weight (n, n) or None; lqr checks its definiteness."""
    if R is None:
        return None
    X = np.asarray(R, dtype=float)
    if X.shape != (n, n):
        raise ValueError(f"place_actuators: R must be a ({n}, {n}) matrix, one row and column "
                         f"per candidate string in the order of candidates; got shape {X.shape}")
    return X


# ---- the figures ----------------------------------------------------------------------------


def _loop(model, strings, R, pos, options) -> tuple:
    """The LQR design with `strings` commanded and its figure J; R restricted to them in the
    design's input order (ascending string index)."""
    order = sorted(strings)
    Rs = None if R is None else R[np.ix_([pos[k] for k in order], [pos[k] for k in order])]
    design = lqr(_commanding(model, order), R=Rs, **options)
    nu = design.K.shape[0]
    E = np.asarray(design.minimal.sys.B, dtype=float)[:, nu:]
    J = np.trace(E.T @ np.asarray(design.riccati.X, dtype=float) @ E)
    return design, float(np.sqrt(max(J, 0.0)))


def _modal_spaces(design, candidates) -> list:
    """Per eigenspace of the design model's A_r: the candidates' reach X (p, n_candidates),
    normalized so that ``X X^H = I`` (module docstring)."""
    sys, nu = design.minimal.sys, design.K.shape[0]
    A = np.asarray(sys.A, dtype=float)
    inputs = np.asarray(sys.B, dtype=float)[:, :nu] / np.sqrt(np.diag(design.R))[None, :]
    col = {k: i for i, k in enumerate(sorted(candidates))}   # the design's input order
    B = inputs[:, [col[k] for k in candidates]]
    _, V, groups = eigenspaces(A)
    W = np.linalg.inv(V)
    spaces = []
    for idx in groups:
        G = W[idx] @ B
        mu, U = np.linalg.eigh(G @ G.conj().T)
        spaces.append((mu, U, G))
    top = max((mu.max() for mu, _, _ in spaces), default=0.0)
    out = []
    for mu, U, G in spaces:
        keep = mu > _UNREACHED * top
        if keep.any():
            out.append((U[:, keep] / np.sqrt(mu[keep])[None, :]).conj().T @ G)
    return out


def _modal_log(spaces, idx) -> float:
    """log of the modal index of the candidates at positions `idx` (module docstring)."""
    total, count = 0.0, 0
    for X in spaces:
        Xs = X[:, list(idx)]
        H = Xs @ Xs.conj().T + _SHARE_FLOOR * np.eye(X.shape[0])
        total += float(np.linalg.slogdet(H)[1])
        count += X.shape[0]
    return total / count if count else 0.0


def _full_loop(model, cands, R, pos, options) -> tuple:
    """:func:`_loop` with every candidate; no stabilizing LQR is the candidates' fault."""
    try:
        return _loop(model, cands, R, pos, options)
    except ValueError as exc:
        if "no stabilizing solution" not in str(exc):
            raise
        raise ValueError(f"place_actuators: the LQR with every candidate commanded has no "
                         f"stabilizing solution, so there is no figure to place by: a lightly "
                         f"damped mode is out of reach of the candidates {list(cands)} or not "
                         f"weighted by Q; add candidates that reach it, weight it, or add "
                         f"damping [{exc}]") from None


# ---- the placement --------------------------------------------------------------------------


def place_actuators(model, k: int, *, candidates=None, criterion: str = "h2", Q=None, R=None,
                    effort=1.0, order=None) -> ActuatorPlacement:
    """Choose `k` strings to command out of `candidates`, greedily.

    Parameters
    ----------
    model : LinearModel
        At an equilibrium, damped, with one input per string (as :func:`tenscontrol.linearize`
        returns it), kind "passive" or "control"; its outputs (``model.with_outputs(...)``)
        set the default Q.
    k : int
        How many strings to choose, 1 <= k <= the number of candidates.
    candidates : sequence of int, optional
        The strings to choose from, each ``String.actuated``; ``structure.actuated_strings``
        by default.
    criterion : {"h2", "modal"}
        ``"h2"`` (default): minimize the H2 norm J of the LQR loop closed on the chosen strings
        (module docstring), with Q, R [weight on u, (n_candidates, n_candidates) in the
        order of `candidates`, restricted to the chosen ones], effort and order as for
        :func:`tenscontrol.lqr`; while no set of the current size has a stabilizing LQR, the
        modal index decides. ``"modal"``: maximize the modal index (every mode reached; the
        inputs weighted by the LQR's R, the default scaling each string by its prestress).

    Returns
    -------
    ActuatorPlacement
        The chosen strings, the figure with them and with every candidate (``kept`` their
        ratio) and ``model``, the model commanding them, for any design function.

    Raises
    ------
    TypeError
        A model that is not a LinearModel; k or the candidates not integers.
    ValueError
        k out of range; a candidate that does not exist, is not commanded
        (``String.actuated`` False) or is listed twice; a model without one input per string;
        R of the wrong shape; no stabilizing LQR with every candidate (a lightly damped
        mode out of their reach or not weighted); and as :func:`tenscontrol.lqr` (bad
        weights, a model off equilibrium).

    Notes
    -----
    Each ``"h2"`` evaluation is one LQR design: about ``k n`` of them for n candidates (the
    32-string ball, k = 16: 392 designs, about 8 s of CPU).
    """
    _check_model(model)
    validation.choice("place_actuators: criterion", criterion, CRITERIA)
    cands = _candidates(model.structure, candidates)
    k = _k(k, len(cands))
    R = _weight(R, len(cands))
    pos = {s: i for i, s in enumerate(cands)}
    options = dict(Q=Q, effort=effort, order=order)
    full_design, full_J = _full_loop(model, cands, R, pos, options)
    spaces = _modal_spaces(full_design, cands)
    if criterion == "modal":
        chosen, scores = greedy_subset(len(cands), k, lambda idx: _modal_log(spaces, idx))
        history = tuple(float(np.exp(s)) for s in scores)
        full = float(np.exp(_modal_log(spaces, range(len(cands)))))
    else:
        def score(idx):
            try:
                J = _loop(model, [cands[i] for i in idx], R, pos, options)[1]
            except ValueError:          # no stabilizing LQR: a mode out of reach of the set
                return (False, _modal_log(spaces, idx))
            return (True, -J)
        chosen, scores = greedy_subset(len(cands), k, score)
        history = tuple(-s if ok else float("inf") for ok, s in scores)
        full = full_J
    strings = tuple(cands[i] for i in chosen)
    return ActuatorPlacement(strings, cands, criterion, history[-1], full, history,
                             _commanding(model, strings))
