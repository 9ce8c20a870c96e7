"""Greedy choice of k items out of n by a set function: the one selection loop of sensor placement
(:func:`tenscontrol.place_sensors`) and actuator placement (:func:`tenscontrol.place_actuators`).

Greedy selection adds, one at a time, the item whose addition scores best. For a monotone
submodular score (the log det of a Gramian that is a sum of per-item Gramians) it reaches at
least (1 - 1/e) of the optimum's gain (Nemhauser, Wolsey and Fisher, 1978); for the loop
figures used here no such bound holds, and the tests compare it with the brute-force optimum
on small structures.
"""

from __future__ import annotations

__all__ = ["greedy_subset"]


def greedy_subset(n: int, k: int, score) -> tuple:
    """Indices picked one by one out of ``range(n)``, each maximizing ``score``.

    Parameters
    ----------
    n, k : int
        The number of items and of picks (0 <= k <= n; the caller validates them).
    score : callable
        ``score(list of int) -> comparable`` (a float, or a tuple compared lexicographically);
        larger is better. Ties go to the lower index.

    Returns
    -------
    chosen : tuple of int, length k
        In the order they were picked.
    scores : tuple, length k
        ``score`` of the chosen set after each pick.
    """
    chosen, scores = [], []
    for _ in range(k):
        best, best_score = None, None
        for i in range(n):
            if i in chosen:
                continue
            s = score(chosen + [i])
            if best is None or s > best_score:        # strict: the first of equals stays
                best, best_score = i, s
        chosen.append(best)
        scores.append(best_score)
    return tuple(chosen), tuple(scores)
