"""No secret is stored or printed: runs made with an API key (option, environment, config and nightly matrix
`api_key_env`), a secret-named key in `--extra-body`, and an attempt with a password in the URL, then every Parquet
file, log, state file, Prefect database and artifact, and every printed line is searched for the secrets; a run
killed by SIGKILL mid-request leaves its state behind, and every file is searched again, for each secret raw, in
base64 (standard and URL-safe alphabets, at each of the three alignments) and in hex. The server is a fake on
127.0.0.1 that demands the Bearer token (tests/faults/fakes.py), because the point is what tcobench sends and keeps,
not the server."""

from __future__ import annotations

import base64
import json
import signal
from pathlib import Path

import pytest

from tests.faults.fakes import MODEL, fake_server
from tests.faults.harness import fault_env, files_with, one_error_line, start, tcobench, wait_for
from tests.store_helpers import store_rows

KEY = "sk-tcobench-test-7f3a9c"
OTHER_KEY = "sk-tcobench-other-1b2d4e"
PASSWORD = "hunter2-tcobench-pw"
BODY_SECRET = "body-secret-tcobench-4c8e"
EXTRA_BODY = json.dumps({"api_key": BODY_SECRET, "x_tag": "kept"})
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
        run("--endpoint", server.url, *ARGS, "--api-key", KEY, "--extra-body", EXTRA_BODY, code=0)
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
        matrix.write_text(
            f'[[engines]]\nname = "e"\nendpoint = "{server.url}"\napi_key_env = "NIGHT_KEY"\n'
            f'[[models]]\nname = "{MODEL}"\n[[workloads]]\nname = "w"\nrequests = 2\n'
            "warmup_requests = 0\nconcurrency = [1]\n"
        )
        done = tcobench(
            "nightly", "-i", str(inventory), "-m", str(matrix), "--no-prefect", env={**env, "NIGHT_KEY": KEY}
        )
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
    for secret in (KEY, OTHER_KEY, PASSWORD, BODY_SECRET):
        assert files_with(roots, secret) == [], f"{secret} was written to a file"
        assert not [text for text in printed if secret in text], f"{secret} was printed"
    assert store_rows(store, "SELECT DISTINCT extra_body FROM runs WHERE extra_body IS NOT NULL") == [
        {"extra_body": '{"api_key": "***", "x_tag": "kept"}'}
    ]


def encodings(secret: str) -> list[bytes]:
    """How ``secret`` can sit in a file: raw, hex (either case), and base64 in both alphabets at each of the three
    alignments a surrounding encoded text can give it (only the characters that depend on the secret alone)."""
    raw = secret.encode()
    found = [raw, raw.hex().encode(), raw.hex().upper().encode()]
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        for pad in range(3):
            text = encode(b"\0" * pad + raw)
            first, last = -(-pad * 8 // 6), (pad + len(raw)) * 8 // 6  # characters of the secret's bits only
            found.append(text[first:last])
    return found


def files_with_any(roots: list[Path], secret: str) -> list[tuple[Path, bytes]]:
    needles = encodings(secret)
    hits = []
    for root in roots:
        for path in sorted(root.rglob("*")) if root.exists() else []:
            data = path.read_bytes() if path.is_file() else b""
            hits += [(path, n) for n in needles if n in data]
    return hits


def test_the_encodings_searched_find_an_encoded_secret() -> None:
    """The search can fail: each encoding of a secret, inside other text, is found."""
    for pad in range(3):
        wrapped = b"x" * pad + KEY.encode() + b"tail"
        for text in (base64.b64encode(wrapped), base64.urlsafe_b64encode(wrapped), wrapped.hex().encode()):
            assert any(n in text for n in encodings(KEY)), text


def test_a_run_killed_mid_request_leaves_no_secret_in_any_file(tmp_path: Path) -> None:
    """SIGKILL while a request streams (the pid file and the open store are left as a crash leaves them), then a
    clean run over the same store and state: no file under the state folder, the store (catalog, data, logs) or the
    Prefect home holds either secret in any encoding."""
    env = {**fault_env(tmp_path), "TCOBENCH_PREFECT": "off"}
    procs = tmp_path / "state" / "procs"
    with fake_server("slow_ok", token=KEY) as server:
        args = (
            "run",
            "--endpoint",
            server.url,
            "--model",
            MODEL,
            "--requests",
            "20",
            "--warmup",
            "0",
            "--concurrency",
            "1",
            "--api-key",
            KEY,
            "--extra-body",
            EXTRA_BODY,
            "--no-prefect",
        )
        with start(tmp_path, *args, env=env) as running:
            wait_for(lambda: list(procs.glob("*.json")) and len(server.seen_auth) >= 2, 120, "a request in flight")
            left = {p: p.read_bytes() for p in procs.glob("*.json")}  # as the run holds it mid-request
            running.signal(signal.SIGKILL)
            code, out, err = running.finish(60)
        assert code == -signal.SIGKILL
        assert set(procs.glob("*.json")) == set(left), "the killed run's pid file is left behind, as a crash leaves it"
        again = tcobench(
            "run",
            "--endpoint",
            server.url,
            *ARGS,
            "--api-key",
            KEY,
            "--extra-body",
            EXTRA_BODY,
            "--no-prefect",
            env=env,
        )
        assert again.returncode == 0, again.stderr[-3000:]
    store = tmp_path / "store"
    assert list(store.rglob("*.parquet")), "the search reaches the store's data files"
    for secret in (KEY, BODY_SECRET):
        assert [n for n in encodings(secret) for data in left.values() if n in data] == []
        assert files_with_any([tmp_path / "state", store, tmp_path / "prefect"], secret) == []
        assert secret not in out + err + again.stdout + again.stderr
