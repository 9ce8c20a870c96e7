"""The progress bar of ``simulate(..., progress=True)``: tqdm's, a widget in a notebook and a
text bar on stderr elsewhere, counting simulated seconds, shown only once a run has taken
longer than :data:`DELAY` seconds (a short run prints nothing).

In a notebook the widget needs the ``ipywidgets`` package; without it tqdm falls back to the
text bar.
"""

from __future__ import annotations

import warnings

__all__ = ["DELAY", "ProgressBar"]

#: Seconds of wall time before the bar appears.
DELAY = 1.0


def _tqdm_class():
    """tqdm.auto's class: the widget in a notebook that has ipywidgets, else the text bar.

    Imported on first use, and quietly: in a notebook without ipywidgets tqdm.auto warns
    ("IProgress not found") and falls back to the text bar, which is what we want anyway.
    """
    from tqdm import TqdmWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TqdmWarning)
        from tqdm.auto import tqdm
    return tqdm


class ProgressBar:
    """A progress bar over simulated time [0, t_final]: call it with the time reached, then
    :meth:`close` it (also when the run fails: the bar must not stay half-drawn).

    Parameters
    ----------
    t_final : float
        The end time [s].
    delay : float, optional
        Wall-clock seconds before the bar shows; :data:`DELAY` by default.
    """

    def __init__(self, t_final: float, delay: float | None = None):
        tqdm = _tqdm_class()
        self.t_final = t_final
        self.bar = tqdm(total=t_final, desc="simulate", unit="s",
                        delay=DELAY if delay is None else delay, leave=False,
                        bar_format="{desc}: {percentage:3.0f}%|{bar}| t = {n:.4g}/{total:.4g} s "
                                   "[{elapsed}<{remaining}]")

    def __call__(self, t: float) -> None:
        # tqdm redraws at most every mininterval (0.1 s), so a call per step costs little
        self.bar.update(min(t, self.t_final) - self.bar.n)

    def close(self) -> None:
        self.bar.close()
