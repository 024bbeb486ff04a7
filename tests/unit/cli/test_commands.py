"""CLI paths that need no engine: argument and input errors, read-only query, empty store summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from tcobench.cli import app
from tcobench.tasks.store.store import write_results
from tests.unit.factories import make_request, make_run

runner = CliRunner()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    write_results(root, make_run(), [make_request(request_index=i) for i in range(3)])
    return root


def test_query_reads_and_refuses_writes(store: Path) -> None:
    ok = runner.invoke(app, ["query", "select count(*) as n from requests", "--store", str(store), "--format", "csv"])
    assert ok.exit_code == 0 and ok.stdout.splitlines() == ["n", "3"]
    for sql in ("delete from requests", "drop view runs", "copy requests to 'x.csv'", "select 1; select 2"):
        refused = runner.invoke(app, ["query", sql, "--store", str(store)])
        assert refused.exit_code == 1
        assert refused.stderr.startswith("QueryError:") and len(refused.stderr.strip().splitlines()) == 1
    assert not Path("x.csv").exists()


def test_bad_option_values_are_usage_errors(store: Path) -> None:
    done = runner.invoke(app, ["query", "select 1", "--store", str(store), "--format", "xml"])
    assert done.exit_code == 2 and len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.startswith("UsageError: Invalid value for --format: 'xml': choose table, csv or json")
    few = runner.invoke(app, ["report", "--resamples", "5", "--store", str(store)])
    assert few.exit_code == 2 and few.stderr.strip() == (
        "UsageError: Invalid value for --resamples: 5: must be at least 100 (see `tcobench report --help`)"
    )


def test_summary_empty_and_unknown_run(tmp_path: Path, store: Path) -> None:
    (tmp_path / "empty").mkdir()  # a folder with no catalog yet reads as an empty store
    empty = runner.invoke(app, ["summary", "--store", str(tmp_path / "empty")])
    assert empty.exit_code == 0 and "no runs stored" in empty.stdout
    missing = runner.invoke(app, ["summary", "--store", str(store), "--run", "zzz"])
    assert missing.exit_code == 1 and "no run matches zzz" in missing.stderr


def test_summary_run_prints_the_full_card_with_costs_and_assumptions(store: Path) -> None:
    done = runner.invoke(app, ["summary", "--store", str(store), "--run", "run0"], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.stderr
    for needle in ("cost per 1M output tokens", "Cost per month behind those numbers", "source: site"):
        assert needle in done.stdout


def test_run_rejects_bad_arguments_before_starting_anything(tmp_path: Path) -> None:
    store = tmp_path / "store"
    done = runner.invoke(app, ["run", "--requests", "0", "--store", str(store)])
    assert done.exit_code == 1 and done.stderr.startswith("ConfigError: command line: workload.requests")
    no_model = runner.invoke(app, ["run", "--endpoint", "http://127.0.0.1:9", "--store", str(store)])
    assert no_model.exit_code == 2 and "--model is required with --endpoint" in no_model.stderr
    bad_key = runner.invoke(app, ["run", "--hardware", "nvidia-b999", "--store", str(store)])
    assert bad_key.exit_code == 1 and bad_key.stderr.startswith("PricingError:") and "nvidia-b999" in bad_key.stderr
    not_json = runner.invoke(app, ["run", "--extra-body", "{top_k: 1}", "--store", str(store)])
    assert not_json.exit_code == 2 and "--extra-body: not JSON" in " ".join(not_json.stderr.split())
    not_object = runner.invoke(app, ["run", "--extra-body", "[1]", "--store", str(store)])
    assert not_object.exit_code == 2 and "must be a JSON object, got list" in " ".join(not_object.stderr.split())
    ours = runner.invoke(app, ["run", "--extra-body", '{"stream": false}', "--store", str(store)])
    assert ours.exit_code == 1 and ours.stderr.startswith("ConfigError: command line: workload.extra_body: stream:")
    assert not store.exists()


def _commands(command: Any) -> Any:
    yield command
    for sub in getattr(command, "commands", {}).values():
        yield from _commands(sub)


def test_help_texts_keep_their_brackets() -> None:
    """Typer renders help as rich markup: an unescaped "[auto]" is taken for a style tag and vanishes."""
    from rich.text import Text

    for command in _commands(typer.main.get_command(app)):
        for param in command.params:
            text = getattr(param, "help", None) or ""
            shown = Text.from_markup(text).plain
            assert shown.count("[") == text.replace("\\[", "[").count("["), f"{command.name} {param.name}: {text!r}"
