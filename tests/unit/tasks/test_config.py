from __future__ import annotations

from pathlib import Path

import pytest

from tcobench.errors import ConfigError
from tcobench.schemas import EngineKind, LoadMode, Protocol
from tcobench.tasks.config import load_config


def test_defaults_are_the_embedded_job() -> None:
    config = load_config()
    assert config.engine.kind is EngineKind.embedded and config.engine.protocol is Protocol.openai
    assert config.workload.requests == 20 and config.workload.warmup_requests == 1
    assert config.workload.concurrency == (1, 2) and config.workload.max_tokens == 64
    assert config.workload.prompts[0] == "用一句话解释什么是成本效率"


def test_file_then_overrides(tmp_path: Path) -> None:
    path = tmp_path / "bench.toml"
    text = (
        '[engine]\nkind = "endpoint"\nurl = "http://127.0.0.1:11434/"\nprotocol = "ollama"\n'
        '[model]\nname = "llama3.2"\n[workload]\nrequests = 5\nconcurrency = [1, 4]\n'
    )
    path.write_text(text, "utf-8")
    config = load_config(path, {"workload": {"requests": 7, "mode": "poisson", "rate": 2.5, "max_tokens": None}})
    assert config.engine.url == "http://127.0.0.1:11434" and config.engine.protocol is Protocol.ollama
    assert config.workload.requests == 7 and config.workload.concurrency == (1, 4)
    assert config.workload.mode is LoadMode.poisson and config.workload.rate == 2.5
    assert config.workload.max_tokens == 64  # None means "not given on the command line"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[workload]\nrequests = 0\n", "workload.requests: 0 is not > 0"),
        ("[workload]\nrequest_timeout_s = -1.5\n", "workload.request_timeout_s: -1.5 is not > 0"),
        ("[workload]\nconcurrency = [1, 0]\n", "workload.concurrency.1"),
        ('[workload]\nmode = "poisson"\n', "workload.rate is required"),
        ('[engine]\nkind = "endpoint"\n', "engine.url is required"),
        ('[engine]\nurl = "ftp://x"\n', "engine.url: must start with http"),
        ('[engine]\nprotocol = "grpc"\n', "engine.protocol: input should be 'openai' or 'ollama', got 'grpc'"),
        ("[workload]\nbogus = 1\n", "workload.bogus: unknown field (given 1)"),
        ('[model]\nname = "llama-70b"\n', "unknown model 'llama-70b' for the embedded engine"),
        ("[workload\n", "not valid TOML"),
        (
            '[engine]\nkind = "endpoint"\nurl = "http://me:hunter2@h:8080"\n',
            "engine.url: 'http://***@h:8080' carries user info",
        ),
        (
            '[engine]\nkind = "endpoint"\nurl = "http://h"\napi_key_env = "sk-live-123"\n',
            "engine.api_key_env: must be the NAME",
        ),
        ('[engine]\napi_key_env = "KEY"\n', "api_key_env is only valid with engine.kind 'endpoint'"),
        ("[workload.extra_body]\nstream = false\n", "workload.extra_body: stream: set by tcobench"),
        ("[workload.extra_body]\noptions = 3\n", '"options" must be an object'),
        ("[workload.extra_body.options]\nnum_ctx = 8\n", "options.num_ctx: set by tcobench"),
        ('[workload]\nmode = "replay"\n', "workload.mode 'replay' and workload.trace (--trace) go together"),
        ('[workload.trace]\npath = "t.jsonl"\nwindow_s = [5, 1]\n', "trace window 5,1: needs 0 <= START < END"),
        ('[workload]\nrate = 3.0\n[workload.trace]\npath = "t.jsonl"\n', "a replay keeps the trace's times"),
        ('[workload]\ninput_tokens = 512\n[workload.trace]\npath = "t.jsonl"\n', "input_tokens cannot be given"),
        ('[workload]\nduration_s = 60\n[workload.trace]\npath = "t.jsonl"\n', "duration_s cannot be given"),
    ],
)
def test_bad_config_is_one_line_naming_file_and_field(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "bench.toml"
    path.write_text(text, "utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(str(path)) and needle in message and "\n" not in message
    assert "hunter2" not in message and "sk-live" not in message


def test_a_trace_sets_the_replay_mode_and_reads_the_command_lines_window() -> None:
    """--trace sets mode replay (and ignore_eos: the trace's output lengths are asked for exactly); --trace-window
    START,END is the window in seconds."""
    given = {"workload": {"trace": {"path": "t.jsonl", "window_s": "60,120.5", "time_scale": 0.5}}}
    w = load_config(None, given).workload
    assert w.mode is LoadMode.replay and w.ignore_eos and w.prompt_source == "trace"
    assert w.trace is not None and w.trace.window_s == (60.0, 120.5) and w.trace.time_scale == 0.5
    with pytest.raises(ConfigError, match="trace window '60': give START,END in seconds"):
        load_config(None, {"workload": {"trace": {"path": "t.jsonl", "window_s": "60"}}})


def test_every_problem_is_listed_with_its_value() -> None:
    with pytest.raises(ConfigError) as info:
        load_config(None, {"workload": {"rate": -1, "mode": "poisson", "requests": 0, "concurrency": [2, 0]}})
    assert str(info.value) == (
        "command line: workload.requests: 0 is not > 0; workload.concurrency.1: 0 is not > 0; "
        "workload.rate: -1 is not > 0"
    )


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.toml")


def test_extra_body_from_file_and_command_line(tmp_path: Path) -> None:
    path = tmp_path / "bench.toml"
    path.write_text('[workload.extra_body]\nsamplers = ["temperature"]\n', "utf-8")
    config = load_config(path, {"workload": {"extra_body": {"top_k": 1}}})
    assert config.workload.extra_body == {"samplers": ["temperature"], "top_k": 1}
    assert load_config().workload.extra_body == {}
