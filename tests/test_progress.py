"""simulate(..., progress=True): tqdm's bar over simulated time, silent for short runs, shown
after DELAY seconds, closed when the run ends or fails."""

import numpy as np
import pytest

import tenscontrol as tc
from tenscontrol.model import catalog
from tenscontrol.simulation import progress, simulator


def test_a_run_shorter_than_the_delay_prints_nothing(capsys, monkeypatch):
    assert progress.DELAY == 1.0  # the documented default
    # a delay no run reaches, so that the test does not hang on the machine's speed
    monkeypatch.setattr(progress, "DELAY", 1e6)
    tc.simulate(catalog.tbar("stedy"), 0.5, progress=True)
    assert capsys.readouterr().err == ""


def test_a_run_longer_than_the_delay_shows_the_bar(capsys, monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0.0)  # every run is "long"
    tc.simulate(catalog.tbar("stedy"), 0.5, progress=True)
    err = capsys.readouterr().err
    assert "simulate:" in err and "/0.5 s" in err  # counted in simulated seconds
    assert err.count("\n") <= 1  # one line redrawn in place, not one line per percent


def test_the_bar_counts_simulated_time(capsys):
    bar = progress.ProgressBar(2.0, delay=0.0)
    for t in (0.5, 1.0, 2.5):  # a last step beyond t_final is counted as t_final
        bar(t)
    assert bar.bar.n == 2.0
    bar.close()
    assert "simulate:" in capsys.readouterr().err


class _Recording(progress.ProgressBar):
    closed = []

    def close(self):
        super().close()
        self.closed.append(self.t_final)


def test_the_bar_is_closed_when_the_run_fails(monkeypatch):
    monkeypatch.setattr(simulator, "ProgressBar", _Recording)

    def force(t, q, qd):
        if t > 0.2:
            raise RuntimeError("actuator fault")
        return np.zeros((4, 3))

    with pytest.raises(tc.SimulationError):
        tc.simulate(catalog.tbar("stedy"), 1.0, loads=force, progress=True)
    assert _Recording.closed == [1.0]
    tc.simulate(catalog.tbar("stedy"), 0.1, progress=True)
    assert _Recording.closed == [1.0, 0.1]
