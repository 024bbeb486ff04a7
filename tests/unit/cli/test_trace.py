"""`tcobench trace stats`: the profile printed (table or JSON) and stored with its provenance; a bad trace or option
is one line and stores nothing."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from typer.testing import CliRunner

from tcobench.cli import app
from tests.store_helpers import lake_rows

runner = CliRunner()
LINES = [
    {"timestamp": 0, "input_length": 600, "output_length": 10, "hash_ids": [1, 2]},
    {"timestamp": 30_000, "input_length": 1000, "output_length": 20, "hash_ids": [1, 3]},
    {"timestamp": 70_000, "input_length": 512, "output_length": 30, "hash_ids": [1]},
]


def trace(tmp_path: Path) -> Path:
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    return path


def test_stats_prints_json_and_stores_the_row_with_the_file_sha256(tmp_path: Path) -> None:
    path, store = trace(tmp_path), tmp_path / "store"
    done = runner.invoke(app, ["trace", "stats", str(path), "--format", "json", "--store", str(store)])
    assert done.exit_code == 0, done.stderr
    shown = json.loads(done.stdout)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    assert (shown["requests"], shown["minutes"], shown["request_rate_peak"], shown["sha256"]) == (3, 2, 2, sha)
    assert lake_rows(store, "SELECT stats_id, format, sha256, requests FROM lake.trace_stats") == [
        (shown["stats_id"], "mooncake", sha, 3)
    ]


def test_stats_table_names_each_figure(tmp_path: Path) -> None:
    done = runner.invoke(
        app, ["trace", "stats", str(trace(tmp_path)), "--time-scale", "0.5", "--store", str(tmp_path / "s")]
    )
    assert done.exit_code == 0, done.stderr
    for words in ("mooncake, 3 requests", "time scale 0.5", "requests per minute", "input tokens", "prefix sharing"):
        assert words in done.stdout


def test_a_bad_line_is_one_line_and_stores_nothing(tmp_path: Path) -> None:
    path = trace(tmp_path)
    with path.open("a") as handle:
        handle.write('{"timestamp": 1, "input_length": 5, "output_length": 1}\n')
    done = runner.invoke(app, ["trace", "stats", str(path), "--store", str(tmp_path / "store")])
    assert done.exit_code == 1 and done.stderr.strip() == (
        f"ConfigError: trace {path}: line 4: timestamp 1 ms is earlier than line 3's 70000 ms: timestamps go "
        "backwards (give --sort to read them in time order)"
    )
    assert not (tmp_path / "store").exists()
    assert (
        runner.invoke(app, ["trace", "stats", str(path), "--sort", "--store", str(tmp_path / "store")]).exit_code == 0
    )


def test_bad_options_are_usage_errors(tmp_path: Path) -> None:
    path = str(trace(tmp_path))
    for args, words in (
        (["--trace-window", "5"], "Invalid value for --trace-window: '5': give START,END"),
        (["--trace-window", "9,3"], "needs 0 <= START < END"),
        (["--time-scale", "0"], "the time scale must be above 0"),
        (["--trace-format", "csv"], "choose mooncake, azure, tcobench"),
    ):
        done = runner.invoke(app, ["trace", "stats", path, *args, "--store", str(tmp_path / "s")])
        assert done.exit_code == 2 and words in done.stderr and len(done.stderr.strip().splitlines()) == 1
