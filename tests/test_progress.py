"""Progress bars (jitcoop.progress): shown only after DELAY seconds, only on a terminal unless
asked, never when told to be quiet; a dispatch drives one with its workgroup count."""
import io

import numpy as np
import pytest

import jitcoop
from jitcoop import progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def now(monkeypatch):
    """Bars appear at once and redraw at every update."""
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "MININTERVAL", 0.0)
    monkeypatch.delenv("JITCOOP_PROGRESS", raising=False)
    progress.set_enabled(None)
    yield
    progress.set_enabled(None)


def test_bar_on_a_terminal_counts_done_of_total(now):
    out = Terminal()
    with progress.Progress(10, "compile", unit="function", stream=out) as p:
        p.update(3)
        assert "compile:  30%" in out.getvalue() and "3/10" in out.getvalue()
        p.update(7)
        assert "7/10" in out.getvalue()
        p.update(99)                      # clamped to the total
        assert "10/10" in out.getvalue()


def test_nothing_before_the_delay(monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 60.0)
    out = Terminal()
    with progress.Progress(10, "dispatch", stream=out) as p:
        p.update(5)
    assert out.getvalue() == ""


@pytest.mark.parametrize("env, tty, shown", [("", False, False), ("", True, True), ("0", True, False),
                                              ("1", False, True), ("off", True, False)])
def test_terminal_and_environment_decide(now, monkeypatch, env, tty, shown):
    if env:
        monkeypatch.setenv("JITCOOP_PROGRESS", env)
    out = Terminal() if tty else io.StringIO()
    with progress.Progress(4, "dispatch", stream=out) as p:
        p.update(2)
    assert ("2/4" in out.getvalue()) == shown


def test_set_enabled_overrides_the_terminal(now):
    progress.set_enabled(False)
    out = Terminal()
    with progress.Progress(4, "dispatch", stream=out) as p:
        p.update(2)
    assert out.getvalue() == ""


def test_dispatch_shows_workgroups(now, capsys, kc):
    """A dispatch that spins until its timeout (0.5 s) stops it: meanwhile the bar counts the
    workgroups handed out of the grid's 6. The captured stderr is not a terminal, so the bar is
    asked for."""
    progress.set_enabled(True)
    k = kc("barrier_spin", spec={0: True})
    flag = np.zeros(6 * 16, np.uint32)
    with pytest.raises(jitcoop.ExecutionError, match="timeout"):
        k.dispatch(6, {0: flag}, timeout=0.5)
    err = capsys.readouterr().err
    assert "dispatch:" in err and "/6 " in err and "workgroup" in err
