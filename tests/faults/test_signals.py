"""Real signals to a real `tcobench run`: what finished is kept, the exit status says which signal, and nothing it
started outlives it, even SIGKILL; a later run reclaims, by proof, what a crashed one left.

The embedded engine is the real llama.cpp `llama-server`; the other tests use a fake server on 127.0.0.1
(tests/faults/fakes.py) whose streams take long enough for a signal to land mid-run. Processes are checked by pid
and start time, never by name (tests/faults/harness.py)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tcobench.tasks.host.procs import ProcessId
from tests.faults.fakes import MODEL, fake_server
from tests.faults.harness import (
    SIGNAL_EXIT,
    Run,
    cpu_hog,
    descendants,
    fault_env,
    model_cache,
    one_error_line,
    start,
    still_running,
    tcobench,
    wait_for,
)
from tests.store_helpers import store_rows

__all__ = ["model_cache"]  # the session fixture, imported for the engine tests

EXIT_BOUND_S = 15.0  # a signal to a run of the embedded engine: stopped, stored and summarised within this
LOAD_PER_CORE = 5  # the loaded machine of the promise: load average 5 per core (10 on 2 cores)
# the hog's size, in targets, while the 1-minute average builds: 4 reaches the target from an idle machine in
# 60 * ln(4 / 3) s, where 2 took 60 * ln(2) s (CI time: docs/dev/performance.md#hog-ramp)
HOG_RAMP = 4
ENDPOINT_ARGS = ("--model", MODEL, "--protocol", "openai", "--no-prefect")
KEPT = re.compile(
    r"^Interrupted: (SIG\w+): kept 1 run\(s\) of batch \w{8} in .+: run \w{8} \(concurrency (\d+)\) "
    r"interrupted: (\d+) of (\d+) measured requests ok$"
)


def _pid_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "state" / "procs").glob("*.json"))


def _engine_port(processes: list[ProcessId]) -> int | None:
    for p in processes:
        if "--port" in p.cmdline and "--model" in p.cmdline:  # llama-server's command line, as tcobench builds it
            return int(p.cmdline[p.cmdline.index("--port") + 1])
    return None


def _tokens_served(port: int) -> int:
    """llama-server's own count of generated tokens (GET /metrics; started with --metrics)."""
    try:
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5, trust_env=False).text
    except httpx.HTTPError:
        return 0
    found = re.search(r"^llamacpp:tokens_predicted_total\s+([\d.e+]+)", text, re.M)
    return int(float(found.group(1))) if found else 0


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGHUP], ids=["SIGINT", "SIGHUP"])
def test_a_signal_mid_run_keeps_the_finished_requests(tmp_path: Path, signum: int) -> None:
    """SIGINT goes to the whole process group, as a terminal's Ctrl-C does: what tcobench started runs in sessions
    of its own and is not hit, so the requests in flight can still finish."""
    with fake_server("slow_ok") as server:  # each stream takes about 1.5 s
        args = ("run", "--endpoint", server.url, *ENDPOINT_ARGS, "--requests", "40", "--concurrency", "2")
        env = fault_env(tmp_path, TCOBENCH_STOP_GRACE_S="120")  # the requests in flight finish, however loaded
        with start(tmp_path, *args, env=env, own_group=True) as run:
            wait_for(
                lambda: sum(n for seed, n in server.attempts.items() if seed is not None) >= 4,
                120,
                "a few requests to be served",
            )
            processes = descendants(run.pid)
            run.signal_group(signum) if signum == signal.SIGINT else run.signal(signum)
            code, _, err = run.finish(timeout=120)
    assert code == SIGNAL_EXIT[signum], err[-3000:]
    found = KEPT.match(one_error_line(err))
    assert found is not None, one_error_line(err)
    name, concurrency, ok, kept = found.groups()
    assert name == signal.Signals(signum).name and concurrency == "2" and ok == kept and int(kept) >= 2
    rows = store_rows(tmp_path / "store", "SELECT status, error FROM runs")
    assert rows == [
        {"status": "interrupted", "error": f"interrupted by {name}: kept {kept} of 40 measured requests ({kept} ok)"}
    ]
    counts = store_rows(tmp_path / "store", "SELECT phase, count(*) AS n FROM requests GROUP BY 1 ORDER BY 1")
    assert counts == [{"phase": "measure", "n": int(kept)}, {"phase": "warmup", "n": 1}]
    assert processes and still_running(processes) == [] and _pid_files(tmp_path) == []


def test_a_second_signal_ends_the_grace_period(tmp_path: Path) -> None:
    env = fault_env(tmp_path, TCOBENCH_STOP_GRACE_S="300")
    with fake_server("hang") as server:
        args = ("run", "--endpoint", server.url, *ENDPOINT_ARGS, "--requests", "5", "--request-timeout", "600")
        with start(tmp_path, *args, env=env) as run:
            wait_for(
                lambda: sum(n for seed, n in server.attempts.items() if seed is not None) >= 1,
                120,
                "the warm-up request to be in flight",
            )
            run.signal(signal.SIGINT)
            # the first signal is handled (not merged with the second) once tcobench says what it will do
            wait_for(lambda: "SIGINT: stopping;" in run.err.read_text(), 60, "the stop notice")
            assert run.proc.poll() is None  # the request in flight has its grace period
            run.signal(signal.SIGINT)
            code, _, err = run.finish(timeout=120)  # well before the 300 s grace
    assert code == 130, err[-3000:]
    assert one_error_line(err).endswith("(concurrency 1) interrupted: 0 of 0 measured requests ok")
    rows = store_rows(tmp_path / "store", "SELECT status, error FROM runs")
    assert rows == [
        {
            "status": "interrupted",
            "error": "interrupted by SIGINT: kept 0 of 5 measured requests (0 ok); "
            "1 in flight cancelled after the grace period (not stored)",
        }
    ]


@pytest.mark.engine
@pytest.mark.prefect
@pytest.mark.parametrize("how", ["SIGTERM", "Ctrl-C"])
def test_a_signal_stops_the_engine_and_prefect_and_keeps_the_run(tmp_path: Path, model_cache: Path, how: str) -> None:
    """SIGTERM to tcobench (Prefect's flow engine replaces that handler during a flow; tcobench takes it back while
    it measures), or SIGINT to the whole process group as a terminal's Ctrl-C (the engine and Prefect's server,
    in sessions of their own, keep serving until tcobench has stored the run)."""
    env = fault_env(tmp_path, model_cache)
    args = (
        "run",
        "--yes",
        "--requests",
        "200",
        "--warmup",
        "1",
        "--max-tokens",
        "16",
        "--concurrency",
        "1",
        "--concurrency",
        "2",
    )
    with start(tmp_path, *args, env=env, own_group=True) as run:
        port = wait_for(lambda: _engine_port(descendants(run.pid)), 900, "llama-server to start")
        # llama-server counts a request's tokens when it completes: over the warm-up's 16, a measured one is done
        wait_for(lambda: _tokens_served(port) > 16, 900, "a measured request to be served")
        processes = descendants(run.pid)
        assert len(processes) >= 3  # the engine, Prefect's API server, the watchdog
        assert all(os.getsid(p.pid) == p.pid for p in processes)  # each in its own session
        signalled = time.monotonic()
        run.signal(signal.SIGTERM) if how == "SIGTERM" else run.signal_group(signal.SIGINT)
        code, out, err = run.finish(timeout=600)
        exit_s = time.monotonic() - signalled
    name = "SIGTERM" if how == "SIGTERM" else "SIGINT"
    assert code == SIGNAL_EXIT[getattr(signal, name)], err[-3000:]
    # the acceptance of issue 29: the grace period (5 s) plus the engine's stop (2 s, then SIGKILL) and one store
    # connection for the summary; 15 s is the bound, with room for a loaded 2-core CI
    assert exit_s <= EXIT_BOUND_S, f"exit took {exit_s:.1f} s after {name}: {err[-3000:]}"
    assert "Measured runs (warm-up excluded)" in out and "where each field came from" in out, out[-3000:]
    found = KEPT.match(one_error_line(err))
    assert found is not None and found.group(1) == name and found.group(2) == "1", one_error_line(err)
    rows = store_rows(tmp_path / "store", "SELECT status, error, engine_name FROM runs")
    assert len(rows) == 1 and rows[0]["status"] == "interrupted" and rows[0]["engine_name"] == "llama.cpp"
    assert rows[0]["error"].startswith(f"interrupted by {name}: kept {found.group(4)} of 200 measured requests")
    assert int(found.group(4)) >= 1  # requests finished before the signal were stored
    assert still_running(processes) == [] and _pid_files(tmp_path) == []


def _runnable() -> int:
    """Processes runnable now (/proc/loadavg's fourth field), this one not counted."""
    return int(Path("/proc/loadavg").read_text().split()[3].split("/")[0]) - 1


def _signal_under_load(run: Run, port: int, how: str) -> tuple[int, float, str]:
    """Once a measured request is served, load the machine to LOAD_PER_CORE per core, and with the run still
    measuring send the signal (``how``: "SIGTERM" to tcobench, "Ctrl-C": SIGINT to its process group). (exit status,
    seconds from the signal to the exit, the hog's size and /proc/loadavg at the signal.)

    The load of the promise is both the 1-minute average and the processes runnable at the signal: a hog of
    HOG_RAMP times the target brings the average there within seconds (it approaches its level from below, 1 - e^(-t/60)
    of the way in t seconds), then the hog shrinks to what the run and the rest of the machine leave to the target, and
    the signal follows once the runnable count has settled (an average still climbing towards the hog's level would be
    a heavier load than promised). The exit's time depends on the processes runnable at the signal, the target."""
    # llama-server counts a request's tokens when it completes: over the warm-up's 32, a measured one is done
    wait_for(lambda: _tokens_served(port) > 32, 900, "a measured request to be served", interval_s=0.5)
    cores = os.cpu_count() or 1
    target = LOAD_PER_CORE * cores
    with cpu_hog(HOG_RAMP * target) as hog:
        started = time.monotonic()
        while os.getloadavg()[0] < target:
            assert time.monotonic() - started < 600, f"the load average did not reach {target}"
            time.sleep(1)
        others = []
        for _ in range(5):  # what runs beside the hog: the run, its engine, the rest of the machine
            others.append(_runnable() - len(hog.processes))
            time.sleep(0.2)
        hog.remove(len(hog.processes) - max(0, target - sorted(others)[2]))
        time.sleep(3)
        assert run.proc.poll() is None, "the run ended before the load built up"
        load = f"hog of {len(hog.processes)}, /proc/loadavg {Path('/proc/loadavg').read_text().strip()}"
        signalled = time.monotonic()
        run.signal(signal.SIGTERM) if how == "SIGTERM" else run.signal_group(signal.SIGINT)
        try:
            code = run.proc.wait(timeout=120)
        finally:
            exit_s = time.monotonic() - signalled
    return code, exit_s, load


@pytest.mark.engine
@pytest.mark.prefect
@pytest.mark.hog
@pytest.mark.parametrize("how", ["Ctrl-C"])  # SIGTERM under load: the night's test (CI time: one hog test each)
def test_a_signal_under_load_ends_the_run_within_the_bound(tmp_path: Path, model_cache: Path, how: str) -> None:
    """The promise of docs/run-behaviour.md#interrupts-ctrl-c-sigterm-sighup on a loaded machine (issue 43: it took
    28 s and 37 s at load average 11 on 2 cores): at a load average of LOAD_PER_CORE per core, made by a CPU hog
    that this test starts at the default priority, SIGTERM or a Ctrl-C ends the run within EXIT_BOUND_S, the run it
    interrupted stored and the kept summary printed. EXIT_BOUND_S is the documented promise, not the timing of a quiet
    machine: asserting it under the hog is the acceptance. The hog starts once measuring has (the engine's start is
    not what is promised, and on 2 cores under the hog it takes minutes)."""
    env = fault_env(tmp_path, model_cache)
    args = ("run", "--yes", "--requests", "200", "--warmup", "1", "--max-tokens", "32", "--concurrency", "1")
    with start(tmp_path, *args, env=env, own_group=True) as run:
        port = wait_for(lambda: _engine_port(descendants(run.pid)), 900, "llama-server to start")
        processes = descendants(run.pid)
        code, exit_s, load = _signal_under_load(run, port, how)
        _, out, err = run.finish()
    name = "SIGTERM" if how == "SIGTERM" else "SIGINT"
    print(f"{how}: exit {exit_s:.1f} s after the signal; at the signal: {load}")
    assert code == SIGNAL_EXIT[getattr(signal, name)], err[-3000:]
    assert exit_s <= EXIT_BOUND_S, f"exit took {exit_s:.1f} s after {name} ({load}): {err[-3000:]}"
    assert "Measured runs (warm-up excluded)" in out and "where each field came from" in out, out[-3000:]
    found = KEPT.match(one_error_line(err))
    assert found is not None and found.group(1) == name and found.group(2) == "1", one_error_line(err)
    assert int(found.group(4)) >= 1  # the requests finished before the signal were stored
    rows = store_rows(tmp_path / "store", "SELECT status, n FROM run_summary")
    assert rows == [{"status": "interrupted", "n": int(found.group(4))}]
    assert still_running(processes) == [] and _pid_files(tmp_path) == []


NIGHT_INVENTORY = '[[hosts]]\nname = "cpu-1"\nvendor = "cpu"\nhardware = "cpu-generic-2c"\n'
NIGHT_MATRIX = """[[engines]]
name = "llama"
embedded = true
[[models]]
name = "gemma-3-270m-q4_k_m"
[[workloads]]
name = "w"
requests = 200
warmup_requests = 1
max_tokens = 32
concurrency = [1]
"""


@pytest.mark.engine
@pytest.mark.prefect
@pytest.mark.hog
@pytest.mark.parametrize(("how", "prefect"), [("SIGTERM", False)], ids=["SIGTERM-no-prefect"])  # Ctrl-C: the run's
def test_a_signal_under_load_ends_the_night_within_the_bound(
    tmp_path: Path, model_cache: Path, how: str, prefect: bool
) -> None:
    """As for a run, for `tcobench nightly` (its cell runs in a host thread; the night ends once every host's run in
    progress is stored), SIGTERM with Prefect off and a Ctrl-C with Prefect on: under the hog, the signal ends the
    night within EXIT_BOUND_S, the cell's run stored as interrupted, and nothing it started outlives it."""
    (tmp_path / "inventory.toml").write_text(NIGHT_INVENTORY)
    (tmp_path / "matrix.toml").write_text(NIGHT_MATRIX)
    args = ["nightly", "-i", str(tmp_path / "inventory.toml"), "-m", str(tmp_path / "matrix.toml")]
    args += [] if prefect else ["--no-prefect"]
    with start(tmp_path, *args, env=fault_env(tmp_path, model_cache), own_group=True) as run:
        port = wait_for(lambda: _engine_port(descendants(run.pid)), 900, "llama-server to start")
        processes = descendants(run.pid)
        code, exit_s, load = _signal_under_load(run, port, how)
        _, _, err = run.finish()
    name = "SIGTERM" if how == "SIGTERM" else "SIGINT"
    mode = "Prefect on" if prefect else "Prefect off"
    print(f"nightly {how} ({mode}): exit {exit_s:.1f} s after the signal; at the signal: {load}")
    assert code == SIGNAL_EXIT[getattr(signal, name)], err[-3000:]
    assert exit_s <= EXIT_BOUND_S, f"exit took {exit_s:.1f} s after {name} ({load}): {err[-3000:]}"
    assert one_error_line(err) == f"Interrupted: {name}: the run in progress is stored as interrupted"
    rows = store_rows(tmp_path / "store", "SELECT status, cell, error FROM runs")
    assert len(rows) == 1 and rows[0]["status"] == "interrupted", rows
    assert rows[0]["cell"] == "cpu-1/llama/gemma-3-270m-q4_k_m/w", rows
    assert rows[0]["error"].startswith(f"interrupted by {name}: kept "), rows
    assert still_running(processes) == [] and _pid_files(tmp_path) == []


@pytest.mark.engine
@pytest.mark.prefect
def test_sigkill_leaves_no_process_and_the_next_run_clears_its_pid_file(tmp_path: Path, model_cache: Path) -> None:
    env = fault_env(tmp_path, model_cache)
    args = ("run", "--yes", "--requests", "200", "--max-tokens", "16", "--concurrency", "1")
    with start(tmp_path, *args, env=env) as run:
        port = wait_for(lambda: _engine_port(descendants(run.pid)), 900, "llama-server to start")
        wait_for(lambda: _tokens_served(port) > 0, 900, "a request to be served")
        processes = descendants(run.pid)
        assert any("prefect.server.api.server:create_app" in p.cmdline for p in processes)
        run.signal(signal.SIGKILL)  # no code of tcobench runs after this
        run.proc.wait(timeout=60)
        assert still_running(processes, timeout_s=30) == []  # death signal and watchdog
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=5, trust_env=False)
    (left,) = _pid_files(tmp_path)
    assert json.loads(left.read_text())["owner"]["pid"] == run.pid
    with fake_server("ok") as server:
        done = tcobench("run", "--endpoint", server.url, *ENDPOINT_ARGS, "--requests", "1", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _pid_files(tmp_path) == []  # nothing to reclaim (all gone), so the dead run's file goes


def test_the_next_run_reclaims_what_a_crashed_run_left(tmp_path: Path) -> None:
    """Both tcobench and its watchdog were killed (say, by the OOM killer): its engine still runs. The next run
    ends it, because the pid file proves it is that engine; a process whose command line differs is left alone."""
    ours = subprocess.Popen(["sleep", "300"], start_new_session=True)
    stranger = subprocess.Popen(["sleep", "301"], start_new_session=True)
    try:
        # just started: their command lines may not be set up yet (ProcessId.of reads an empty one; seen in CI)
        left, other = ProcessId.of(ours.pid, settle_s=10.0), ProcessId.of(stranger.pid, settle_s=10.0)
        assert left is not None and other is not None
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        record = {
            "boot_id": boot,
            "owner": {"pid": 999_999_999, "start": 1, "cmdline": ["tcobench", "run"]},
            "children": [
                {"what": "llama-server", "pid": left.pid, "start": left.start, "cmdline": list(left.cmdline)},
                {
                    "what": "llama-server",
                    "pid": other.pid,
                    "start": other.start,
                    "cmdline": ["llama-server", "--port", "8080"],
                },
            ],
        }
        (tmp_path / "state" / "procs").mkdir(parents=True)
        (tmp_path / "state" / "procs" / "crashed.json").write_text(json.dumps(record))
        with fake_server("ok") as server:
            done = tcobench("run", "--endpoint", server.url, *ENDPOINT_ARGS, "--requests", "1", env=fault_env(tmp_path))
        assert done.returncode == 0, done.stderr[-3000:]
        assert (
            f"reclaimed a leftover of a crashed run: llama-server sleep (pid {ours.pid}) of tcobench pid 999999999"
        ) in done.stderr
        assert ours.wait(timeout=30) is not None
        assert stranger.poll() is None  # not provably ours
        assert _pid_files(tmp_path) == []
    finally:
        for proc in (ours, stranger):
            proc.kill()
            proc.wait()


@pytest.mark.engine
def test_an_engine_that_dies_mid_run_exits_3(tmp_path: Path, model_cache: Path) -> None:
    env = fault_env(tmp_path, model_cache)
    # --yes: a long run on purpose (it is stopped midway), whatever the estimate on a loaded machine
    # 16 tokens a request, not the default 64: the engine is killed once its first request is served, and what is
    # asserted is the death, not the length of that request
    args = ("run", "--yes", "--no-prefect", "--requests", "200", "--max-tokens", "16", "--concurrency", "1")
    with start(tmp_path, *args, env=env) as run:
        port = wait_for(lambda: _engine_port(descendants(run.pid)), 900, "llama-server to start")
        wait_for(lambda: _tokens_served(port) > 0, 900, "a request to be served")
        processes = descendants(run.pid)
        engine = next(p for p in processes if "--port" in p.cmdline)
        os.kill(engine.pid, signal.SIGKILL)
        code, _, err = run.finish(timeout=600)
    assert code == 3, err[-3000:]
    line = one_error_line(err)
    assert line.startswith("EngineError: llama-server was killed by SIGKILL; log ")
    rows = store_rows(tmp_path / "store", "SELECT status, error FROM runs")
    assert len(rows) == 1 and rows[0]["status"] == "failed"
    assert rows[0]["error"].startswith("llama-server was killed by SIGKILL")
    assert still_running(processes) == [] and _pid_files(tmp_path) == []


@pytest.mark.prefect
def test_a_signal_while_prefect_starts_stops_at_once_and_leaves_nothing(tmp_path: Path) -> None:
    """Nothing is measured yet, so nothing waits: the signal ends the command, and Prefect's API server with it."""
    with fake_server("ok") as server:
        args = ("run", "--endpoint", server.url, "--model", MODEL, "--protocol", "openai", "--requests", "5")
        with start(tmp_path, *args, env=fault_env(tmp_path)) as run:
            prefect = wait_for(
                lambda: [p for p in descendants(run.pid) if "create_app" in " ".join(p.cmdline)],
                900,
                "Prefect's API server to start",
            )
            run.signal(signal.SIGTERM)
            code, _, err = run.finish(timeout=600)
        assert sum(n for seed, n in server.attempts.items() if seed is not None) == 0, (
            "a request was sent after the signal"
        )
    assert code == 143, err[-3000:]
    assert one_error_line(err) == "Interrupted: SIGTERM: stopped at once; runs finished before it are stored"
    assert not list((tmp_path / "store").rglob("*.parquet"))
    assert still_running(prefect, timeout_s=60) == [] and _pid_files(tmp_path) == []
