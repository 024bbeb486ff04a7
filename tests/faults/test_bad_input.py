"""Bad input to a real `tcobench`: one line naming the field and the value (every problem of it), a documented exit
status, nothing written and nothing started."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.harness import error_lines, fault_env, tcobench

CASES = [
    (
        ("run", "--rate", "-1", "--requests", "0", "--no-prefect"),
        1,
        "ConfigError: command line: workload.requests: 0 is not > 0; workload.rate: -1 is not > 0",
    ),
    (
        ("run", "--request-timeout", "0", "--deadline", "-5", "--no-prefect"),
        1,
        "ConfigError: command line: workload.request_timeout_s: 0 is not > 0; workload.run_deadline_s: -5 is not > 0",
    ),
    (
        ("run", "--hardware", "nope", "--no-prefect"),
        1,
        "PricingError: --hardware: no row 'nope' in [hardware] of tcobench/data/prices.toml (valid: ",
    ),
    (
        ("run", "--endpoint", "http://me:s3cret-pw@127.0.0.1:9", "--model", "m", "--no-prefect"),
        1,
        "ConfigError: command line: engine.url: 'http://***@127.0.0.1:9' carries user info",
    ),
    (
        ("run", "--partial-threshold", "2"),
        2,
        "UsageError: Invalid value for '--partial-threshold': Input should be less than or equal to 1 (got '2')",
    ),
    (("run", "--request-timeout", "soon"), 2, "UsageError: Invalid value for '--request-timeout': "),
    (("images",), 2, "UsageError: Missing command. Commands: build, list, push."),
    (("history", "--fail-on-change", "--window", "x"), 2, "UsageError: Invalid value for '--window'"),
]


@pytest.mark.parametrize(("args", "code", "line"), CASES, ids=[" ".join(c[0][:2]) for c in CASES])
def test_bad_input_is_one_line_naming_the_value(tmp_path: Path, args: tuple[str, ...], code: int, line: str) -> None:
    done = tcobench(*args, env=fault_env(tmp_path))
    assert done.returncode == code, done.stderr[-3000:]
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and error_lines(done.stderr) == lines, done.stderr
    assert lines[0].startswith(line), lines[0]
    assert "s3cret-pw" not in done.stderr + done.stdout
    assert not (tmp_path / "store").exists()  # nothing half-written
    assert not (tmp_path / "state").exists()  # nothing started (no guard was even opened)
