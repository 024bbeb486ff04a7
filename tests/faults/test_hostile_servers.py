"""`tcobench run` against servers that fail: real `tcobench` processes, fake servers on 127.0.0.1 (tests/faults/
fakes.py: a real server cannot be made to hang or send malformed SSE on demand).

Each test asserts the exit status (docs/failures.md, "Errors and exit status"), the one error line, what the store holds
afterwards and that no process of the run is left (by pid)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tcobench.tasks.host.procs import ProcessId
from tests.faults.fakes import MODEL, fake_server
from tests.faults.harness import descendants, fault_env, one_error_line, start, still_running
from tests.store_helpers import store_rows

ARGS = ("--model", MODEL, "--protocol", "openai", "--no-prefect", "--warmup", "1", "--concurrency", "1")


def _run(tmp_path: Path, url: str, *args: str, **env: str) -> tuple[int, str, str, list[ProcessId]]:
    """Run to the end; (exit status, stdout, stderr, the processes it had started, seen while it ran)."""
    seen: dict[int, ProcessId] = {}
    with start(tmp_path, "run", "--endpoint", url, *ARGS, *args, env=fault_env(tmp_path, None, **env)) as run:
        while run.proc.poll() is None:
            seen.update({p.pid: p for p in descendants(run.pid)})
            time.sleep(0.05)
        code, out, err = run.finish()
    return code, out, err, list(seen.values())


def _no_process_left(processes: list[ProcessId], tmp_path: Path) -> None:
    assert still_running(processes, timeout_s=60) == []
    assert not list((tmp_path / "state" / "procs").glob("*.json"))  # its pid file is gone too


FAILING = [
    ("hang", ("--request-timeout", "1"), "timed out after 1 s"),
    ("endless", ("--request-timeout", "2"), "timed out after 2 s"),
    ("http_500", (), 'HTTP 500: {"error": {"message": "internal boom"}}'),
    ("malformed", (), "malformed SSE data line: '{not json at all'"),
    ("no_newline", (), "stream refused: no line end within 1,048,576 bytes of the stream"),
    ("throttled_forever", (), 'HTTP 503: {"error": "overloaded"} (gave up after 3 retries)'),
]


@pytest.mark.parametrize(("behaviour", "args", "needle"), FAILING, ids=[f[0] for f in FAILING])
def test_a_run_whose_requests_all_fail_exits_3(
    tmp_path: Path, behaviour: str, args: tuple[str, ...], needle: str
) -> None:
    with fake_server(behaviour) as server:
        code, _, err, processes = _run(tmp_path, server.url, "--requests", "2", *args)
    assert code == 3, err[-3000:]
    line = one_error_line(err)
    assert line.startswith("RunError: run ") and " (concurrency 1) failed: all 2 measured requests failed; " in line
    assert needle in line
    store = tmp_path / "store"
    runs = store_rows(store, "SELECT status, error FROM runs")
    assert [r["status"] for r in runs] == ["failed"]
    requests = store_rows(store, "SELECT phase, error, retries FROM requests ORDER BY phase, request_index")
    assert [r["phase"] for r in requests] == ["measure", "measure", "warmup"]
    assert all(needle in (r["error"] or "") for r in requests)
    if behaviour == "throttled_forever":
        assert [r["retries"] for r in requests] == [3, 3, 3]
    _no_process_left(processes, tmp_path)


def test_throttling_with_retry_after_is_retried_and_recorded(tmp_path: Path) -> None:
    with fake_server("throttled_then_ok") as server:
        code, out, err, processes = _run(tmp_path, server.url, "--requests", "2")
        # every request (keyed by its seed): 429, 429, then served; the tokenizer probes (POST /tokenize, no seed)
        # are not requests of the run
        assert {n for seed, n in server.attempts.items() if seed is not None} == {3}
    assert code == 0, err[-3000:]
    assert "stored 1 run(s)" in out
    rows = store_rows(tmp_path / "store", "SELECT error, retries FROM requests")
    assert rows == [{"error": None, "retries": 2}] * 3
    _no_process_left(processes, tmp_path)


@pytest.mark.parametrize(("threshold", "code"), [(None, 4), ("0.5", 0)])
def test_failed_requests_over_the_partial_threshold_exit_4(tmp_path: Path, threshold: str | None, code: int) -> None:
    with fake_server("every_fourth_fails") as server:  # seeds 42..49: 44 and 48 fail, 25%
        args = ("--requests", "8", *(("--partial-threshold", threshold) if threshold else ()))
        got, _, err, processes = _run(tmp_path, server.url, *args)
    assert got == code, err[-3000:]
    if code == 4:
        line = one_error_line(err)
        assert line.startswith("RunError: run ") and "partial: 2 of 8 measured requests failed" in line
        assert line.endswith("(25% failed, over the 5% partial threshold)")
    runs = store_rows(
        tmp_path / "store", "SELECT r.status, s.n, s.errors FROM runs r JOIN run_summary s USING (run_id)"
    )
    assert runs == [{"status": "partial", "n": 8, "errors": 2}]
    _no_process_left(processes, tmp_path)


def test_the_run_deadline_bounds_a_hanging_server(tmp_path: Path) -> None:
    with fake_server("hang") as server:
        code, _, err, processes = _run(
            tmp_path,
            server.url,
            "--requests",
            "5",
            "--request-timeout",
            "600",
            "--deadline",
            "2",
            TCOBENCH_STOP_GRACE_S="0.5",
        )
    assert code == 3, err[-3000:]  # nothing finished: the run failed
    line = one_error_line(err)
    assert line.startswith("RunError: run ")
    assert (
        " (concurrency 1) interrupted: run deadline of 2 s reached: kept 0 of 5 measured requests (0 ok); 1 in "
        "flight cancelled" in line
    )
    runs = store_rows(tmp_path / "store", "SELECT status, error FROM runs")
    assert [r["status"] for r in runs] == ["interrupted"] and "run deadline of 2 s reached" in runs[0]["error"]
    assert store_rows(tmp_path / "store", "SELECT count(*) AS n FROM requests") == [{"n": 0}]
    _no_process_left(processes, tmp_path)


def test_a_failing_nightly_cell_exits_3_and_a_partial_one_4(tmp_path: Path) -> None:
    inventory = tmp_path / "inventory.toml"
    inventory.write_text('[[hosts]]\nname = "h1"\nvendor = "cpu"\nhardware = "cpu-generic-2c"\n')
    with fake_server("http_500") as bad, fake_server("every_fourth_fails") as flaky:
        for url, code, what in ((bad.url, 3, "failed"), (flaky.url, 4, "lost more than 5% of a run's requests")):
            matrix = tmp_path / "matrix.toml"
            workload = '[[workloads]]\nname = "w"\nrequests = 8\nwarmup_requests = 0\nconcurrency = [1]\n'
            matrix.write_text(f'[[engines]]\nname = "e"\nendpoint = "{url}"\n[[models]]\nname = "{MODEL}"\n{workload}')
            with start(
                tmp_path, "nightly", "-i", str(inventory), "-m", str(matrix), "--no-prefect", env=fault_env(tmp_path)
            ) as run:
                got, _, err = run.finish()
            assert got == code, err[-3000:]
            assert one_error_line(err) == f"NightlyError: 1 cell(s) {what}: h1/e/{MODEL}/w"
    statuses = store_rows(tmp_path / "store", "SELECT status FROM runs ORDER BY started_ns")
    assert [r["status"] for r in statuses] == ["failed", "partial"]
