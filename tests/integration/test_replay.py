"""`tcobench run --trace`: a recorded trace replayed end to end through the command, against the OpenAI stub
(openai_stub.py: a real HTTP server whose tokenizer is a small BPE trained on the corpus, tests/small_tokenizer.py).

A Mooncake trace's requests go out at their recorded offsets with prompts of exactly their input length (the
server's own count) and their output lengths; requests that name the same hash_ids blocks share those blocks'
tokens as a prefix; goodput is computed as for any run, and the steady fields are null with the reason. A bad
trace stops the run with one line naming the file and the line before anything is sent (not even the tokenizer
probe) and before anything is stored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import one_line_error, tcobench
from openai_stub import StubServer

from tests.small_tokenizer import train_tokenizer

pytestmark = [pytest.mark.engine]  # starts subprocesses of the real CLI (no llama.cpp here)

BLOCK = 512
TRACE = [  # (timestamp ms, input tokens, output tokens, hash ids)
    (1_000, 1100, 8, (1, 2, 3)),
    (1_200, 1200, 8, (1, 2, 4)),
    (1_400, 700, 4, (5, 6)),
    (1_600, 600, 4, (1, 7)),
]


@pytest.fixture(scope="module")
def stub_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(train_tokenizer(tmp_path_factory.mktemp("stub-tokenizer"))))


def mooncake(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    return path


def query(sql: str, env: dict[str, str]) -> list[dict[str, Any]]:
    done = tcobench("query", sql, "--format", "json", env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_a_mooncake_trace_is_replayed_at_its_times_with_shared_prefixes(
    env: dict[str, str], stub: StubServer, tmp_path: Path
) -> None:
    rows = [{"timestamp": t, "input_length": i, "output_length": o, "hash_ids": list(h)} for t, i, o, h in TRACE]
    trace = mooncake(tmp_path / "mooncake.jsonl", rows)
    base = ("run", "--no-prefect", "--endpoint", stub.url, "--model", "stub-model", "--trace", str(trace))
    done = tcobench(*base, "--warmup", "0", "--concurrency", "4", "--slo-ttft-ms", "0.001", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    got = query(
        "select request_index, prompt_tokens, output_tokens, requested_input_tokens, scheduled_ns, sent_ns, "
        "send_lateness_ns from requests where phase = 'measure' order by request_index",
        env,
    )
    assert [(r["prompt_tokens"], r["output_tokens"]) for r in got] == [(i, o) for _, i, o, _ in TRACE]
    assert [r["requested_input_tokens"] for r in got] == [i for _, i, _, _ in TRACE]
    first = got[0]["scheduled_ns"]
    assert [r["scheduled_ns"] - first for r in got] == [(t - TRACE[0][0]) * 1_000_000 for t, *_ in TRACE]
    assert all(r["sent_ns"] - r["scheduled_ns"] == r["send_lateness_ns"] for r in got)
    (run,) = query(
        "select load_mode, prompt_source, measured_requests, stop_rule, dataset_path, dataset_records from runs", env
    )
    assert run == {
        "load_mode": "replay",
        "prompt_source": "trace",
        "measured_requests": 4,
        "stop_rule": "requests",
        "dataset_path": str(trace),
        "dataset_records": 4,
    }
    (goodput,) = query("select n, good, slo_met from goodput", env)  # no request answers in a microsecond
    assert goodput == {"n": 4, "good": 0, "slo_met": False}
    (steady,) = query("select steady_share, steady_output_tok_s, steady_note from run_summary", env)
    assert steady["steady_share"] is None and steady["steady_output_tok_s"] is None
    assert steady["steady_note"].startswith("replay: a replayed trace has no steady window")
    sent = [b["prompt"] for b in stub.bodies if b.get("max_tokens") in (4, 8)]
    assert len(sent) == 4
    a, b, c, d = (stub.config.tokenizer.encode(text, add_special_tokens=False).ids for text in sent)
    assert a[: 2 * BLOCK] == b[: 2 * BLOCK]  # blocks 1 and 2
    assert a[2 * BLOCK : 2 * BLOCK + 7] != b[2 * BLOCK : 2 * BLOCK + 7]  # 3 and 4 differ at once
    assert a[:BLOCK] == d[:BLOCK] and a[BLOCK : BLOCK + 7] != d[BLOCK : BLOCK + 7]  # block 1, then 2 against 7
    assert a[:7] != c[:7]  # no block in common


@pytest.mark.parametrize(
    ("lines", "options", "needle"),
    [
        ([(0, 10), (100, 10), (50, 10)], (), "line 3: timestamp 50 ms is earlier than line 2's 100 ms"),
        ([(0, 10), (100, -5)], (), "line 2: input_length = -5"),
        ([(0, 10), (100, 10), (200, 10)], ("--max-requests", "2"), "line 3: the trace has more than --max-requests 2"),
        ([(0, 10), (100, 10)], ("--trace-window", "5,1"), "trace window 5,1: needs 0 <= START < END"),
        ([(0, 10), (100, 10)], ("--trace-window", "5,9"), "the window 5,9 holds no requests to replay"),
    ],
)
def test_a_bad_trace_stops_the_run_before_anything_starts(
    env: dict[str, str],
    stub: StubServer,
    tmp_path: Path,
    lines: list[tuple[int, int]],
    options: tuple[str, ...],
    needle: str,
) -> None:
    rows = [{"timestamp": t, "input_length": n, "output_length": 4, "hash_ids": []} for t, n in lines]
    trace = mooncake(tmp_path / "bad.jsonl", rows)
    done = tcobench(
        "run", "--no-prefect", "--endpoint", stub.url, "--model", "stub-model", "--trace", str(trace), *options, env=env
    )
    assert done.returncode == 1, (done.returncode, done.stderr)
    line = one_line_error(done.stderr)
    assert line.startswith("ConfigError:") and needle in line, line
    assert "bad.jsonl" in line or "trace window" in line, line
    assert stub.running is not None and stub.running.requests == []  # nothing sent: not even the tokenizer probe
    assert not list(Path(env["TCOBENCH_STORE"]).rglob("*.parquet"))
