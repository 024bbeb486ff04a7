"""No secret is stored or printed: runs made with an API key (option, environment, config and nightly matrix
`api_key_env`) and an attempt with a password in the URL, then every Parquet file, log, state file, Prefect database
and artifact, and every printed line is searched for both secrets. The server is a fake on 127.0.0.1 that demands
the Bearer token (tests/faults/fakes.py), because the point is what tcobench sends and keeps, not the server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.fakes import MODEL, fake_server
from tests.faults.harness import fault_env, files_with, one_error_line, store_rows, tcobench

KEY = "sk-tcobench-test-7f3a9c"
OTHER_KEY = "sk-tcobench-other-1b2d4e"
PASSWORD = "hunter2-tcobench-pw"
ARGS = ("--model", MODEL, "--requests", "2", "--warmup", "0", "--concurrency", "1")


@pytest.mark.prefect
def test_no_secret_reaches_any_file_or_printed_line(tmp_path: Path) -> None:
    env = fault_env(tmp_path)
    printed: list[str] = []

    def run(*args: str, code: int, **extra: str) -> str:
        done = tcobench("run", *args, env={**env, **extra})
        printed.extend([done.stdout, done.stderr])
        assert done.returncode == code, done.stderr[-3000:]
        return done.stderr

    with fake_server("ok", token=KEY) as server:
        host = server.url.removeprefix("http://")
        # 1. a password in the URL is refused, and not repeated in the message
        err = run("--endpoint", f"http://bench:{PASSWORD}@{host}", *ARGS, "--no-prefect", code=1)
        assert one_error_line(err) == (
            f"ConfigError: command line: engine.url: 'http://***@{host}' carries user info (user:password@), which "
            "would be stored with every run; give the URL without it and the credential as an API key (--api-key, "
            "TCOBENCH_API_KEY or api_key_env)"
        )
        # 2. no key: the server refuses, before anything is measured
        err = run("--endpoint", server.url, *ARGS, "--no-prefect", code=1)
        assert one_error_line(err).startswith(f"EngineError: {server.url}/v1/models answered HTTP 401")
        # 3. --api-key, with Prefect on: flow parameters, task runs and the run artifact go to Prefect's database
        run("--endpoint", server.url, *ARGS, "--api-key", KEY, code=0)
        # 4. TCOBENCH_API_KEY from the environment
        run("--endpoint", server.url, *ARGS, "--no-prefect", code=0, TCOBENCH_API_KEY=KEY)
        # 5. a config file naming the variable (never the key itself)
        config = tmp_path / "bench.toml"
        config.write_text(f'[engine]\nkind = "endpoint"\nurl = "{server.url}"\napi_key_env = "BENCH_KEY"\n')
        run("--config", str(config), *ARGS, "--no-prefect", code=0, BENCH_KEY=KEY)
        assert server.seen_auth[-2:] == [f"Bearer {KEY}"] * 2
        # 6. a nightly matrix engine naming the variable next to its endpoint
        inventory = tmp_path / "inventory.toml"
        inventory.write_text('[[hosts]]\nname = "h1"\nvendor = "cpu"\nhardware = "cpu-generic-2c"\n')
        matrix = tmp_path / "matrix.toml"
        matrix.write_text(f'[[engines]]\nname = "e"\nendpoint = "{server.url}"\napi_key_env = "NIGHT_KEY"\n'
                          f'[[models]]\nname = "{MODEL}"\n[[workloads]]\nname = "w"\nrequests = 2\n'
                          "warmup_requests = 0\nconcurrency = [1]\n")  # fmt: skip
        done = tcobench("nightly", "-i", str(inventory), "-m", str(matrix), "--no-prefect",
                        env={**env, "NIGHT_KEY": KEY})  # fmt: skip
        printed.extend([done.stdout, done.stderr])
        assert done.returncode == 0, done.stderr[-3000:]
        assert server.seen_auth[-2:] == [f"Bearer {KEY}"] * 2
    # 7. a server that echoes the credential in its error body: the stored error masks it
    with fake_server("echo_auth_500") as echo:
        err = run("--endpoint", echo.url, *ARGS, "--no-prefect", code=3, TCOBENCH_API_KEY=OTHER_KEY)
        assert "rejected credentials Bearer ***" in one_error_line(err)

    store = tmp_path / "store"
    runs = store_rows(store, "SELECT status, engine_url FROM runs ORDER BY started_ns")
    assert [r["status"] for r in runs] == ["ok", "ok", "ok", "ok", "failed"]
    errors = store_rows(store, "SELECT DISTINCT error FROM requests WHERE error IS NOT NULL")
    assert errors == [{"error": 'HTTP 500: {"error": "rejected credentials Bearer ***"}'}]
    assert files_with([tmp_path / "prefect"], server.url)  # the search reaches what Prefect stored (flow parameters)
    roots = [store, tmp_path / "state", tmp_path / "prefect", config, matrix]
    for secret in (KEY, OTHER_KEY, PASSWORD):
        assert files_with(roots, secret) == [], f"{secret} was written to a file"
        assert not [text for text in printed if secret in text], f"{secret} was printed"
