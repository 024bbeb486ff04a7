"""tasks/redact.py: the one redaction used wherever tcobench records a command line, a body or parameters."""

from __future__ import annotations

import pytest

from tcobench.tasks.redact import MASK, is_secret_name, redact, redact_args, redact_text

KEY = "sk-redact-test-91ab"


@pytest.mark.parametrize(
    "name",
    [
        "api_key",
        "apiKey",
        "API-KEY",
        "--api-key",
        "x-api-key",
        "HF_TOKEN",
        "access_token",
        "password",
        "client_secret",
        "Authorization",
        "private_key",
        "aws_secret_access_key",
        "db.passwd",
        "credentials",
    ],
)
def test_names_like_secrets(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name", ["max_tokens", "token_count", "num_predict", "model", "--port", "tokenizer", "key", "cache_key", "author"]
)
def test_names_that_are_not_secrets(name: str) -> None:
    assert not is_secret_name(name)


def test_command_lines_lose_every_secret_and_keep_the_rest() -> None:
    argv = [
        "tcobench",
        "run",
        "--api-key",
        KEY,
        "--hf-token=" + KEY,
        "--endpoint",
        f"http://u:{KEY}@h:1/v1",
        "--max-tokens",
        "64",
        "-H",
        f"Authorization: Bearer {KEY}",
    ]
    out = redact_args(argv)
    assert KEY not in " ".join(out)
    assert out[:4] == ["tcobench", "run", "--api-key", MASK] and out[4] == f"--hf-token={MASK}"
    assert out[6] == "http://***@h:1/v1" and out[7:9] == ["--max-tokens", "64"]


def test_text_and_nested_values() -> None:
    assert KEY not in redact_text(f"llama-server --port 8 --api-key {KEY} --api-key={KEY}")
    body = {
        "api_key": KEY,
        "max_tokens": 5,
        "nested": [{"Authorization": f"Bearer {KEY}"}, f"Bearer {KEY}"],
        "env": {"HF_TOKEN": KEY, "PATH": "/bin"},
        "args": ("--api-key", KEY),
    }
    out = redact(body)
    assert KEY not in repr(out)
    assert out["max_tokens"] == 5 and out["env"]["PATH"] == "/bin" and out["api_key"] == MASK
    assert out["args"] == ("--api-key", MASK)


def test_prose_and_tables_are_left_alone() -> None:
    text = "| cost $/token | $ per 1M output tokens |\nBasic setup, bearer of news; max_tokens=64 --port 8080"
    assert redact_text(text) == text
    assert redact_text("Authorization: Basic dXNlcjpwYXNz") == "Authorization: Basic ***"
