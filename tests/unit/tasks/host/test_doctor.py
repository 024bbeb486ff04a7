"""Doctor checks that need no daemon: disk space, and an unreachable daemon as a failed check."""

from __future__ import annotations

from pathlib import Path

from tcobench.tasks.host.doctor import disk_check, run_doctor
from tcobench.tasks.host.gpu import CheckStatus


def test_disk_check(tmp_path: Path) -> None:
    assert disk_check(str(tmp_path), True, 0).status is CheckStatus.ok
    short = disk_check(str(tmp_path / "missing" / "docker"), True, 2**60)  # walks up to an existing folder
    assert short.status is CheckStatus.fail and str(tmp_path) in short.message and "GiB" in short.message
    assert disk_check(None, False, 0).status is CheckStatus.skip


def test_unreachable_daemon_is_a_failed_check_not_an_exception() -> None:
    (check,) = run_doctor("unix:///nonexistent/tcobench-test.sock")
    assert check.name == "Docker daemon" and check.status is CheckStatus.fail and "not reachable" in check.message
