"""How a container engine's death during a run is read (tasks/engine/container.py ContainerHandle.exit_error).

The Docker daemon cannot run here in a unit test; the container is a stand-in with the docker SDK's documented
contract for ``Container``: ``reload()`` refreshes ``status`` and ``attrs["State"]`` from the daemon. The real
daemon's delay is covered by tests/integration/test_docker_run.py, which kills a real container mid-run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tcobench.tasks.engine.container import ContainerHandle


class _Container:
    """Reads "running" for ``running_reads`` reloads after the kill, then "exited" with code 137."""

    name, short_id = "tcobench-x-1", "abc123"

    def __init__(self, running_reads: int) -> None:
        self.left, self.status, self.attrs = running_reads, "running", dict[str, Any]()

    def reload(self) -> None:
        if self.left > 0:
            self.left -= 1
            return
        self.status, self.attrs = "exited", {"State": {"ExitCode": 137, "OOMKilled": False}}

    def logs(self, **_: Any) -> bytes:
        return b"llama: serving\n"


def _handle(container: _Container, tmp_path: Path) -> ContainerHandle:
    return ContainerHandle(
        client=None, container=container, log_path=tmp_path / "c.log", where="unix:///x", stop_timeout_s=1
    )


def test_a_kill_the_daemon_reports_late_is_found_within_the_settle_time(tmp_path: Path) -> None:
    container = _Container(running_reads=3)
    handle = _handle(container, tmp_path)
    assert handle.exit_error("during the run") is None  # no wait: the daemon still says running
    error = handle.exit_error("during the run", settle_s=5.0)
    assert error is not None and "tcobench-x-1 (abc123) on unix:///x exited with code 137 during the run" in error
    assert (tmp_path / "c.log").read_text() == "llama: serving\n"


def test_a_running_container_is_alive_after_the_settle_time(tmp_path: Path) -> None:
    assert _handle(_Container(running_reads=10**6), tmp_path).exit_error("during the run", settle_s=0.3) is None
