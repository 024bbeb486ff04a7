"""How the embedded engine's end is put into words (tasks/engine/local.py _exit_reason)."""

from __future__ import annotations

import signal

from tcobench.tasks.engine.local import _exit_reason


def test_an_exit_code_is_named_as_one() -> None:
    assert _exit_reason(1) == "exited with code 1"


def test_a_signal_is_named() -> None:
    assert _exit_reason(-signal.SIGKILL) == "was killed by SIGKILL"
    assert _exit_reason(-200) == "was killed by signal 200"


def test_sigill_says_the_build_is_for_another_cpu_and_how_to_rebuild() -> None:
    reason = _exit_reason(-signal.SIGILL)
    assert reason.startswith("was killed by SIGILL (illegal instruction")
    assert "make install" in reason and "images/wheelhouse.py" in reason
