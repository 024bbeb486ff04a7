"""`tcobench metrics` (issue 46 item 4): the exposition printed, or written to --textfile; --textfile with --port, a
bad --interactivity or a missing store is one line and a non-zero exit, and no file is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from tcobench.cli import app
from tests.unit.factories import write_fleet

runner = CliRunner()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("metrics-cli")
    write_fleet(folder, nights=1, concurrency=(1,), requests=8)
    return folder


def test_prints_the_exposition_and_writes_the_same_to_the_textfile(store: Path, tmp_path: Path) -> None:
    printed = runner.invoke(app, ["metrics", "--store", str(store)])
    assert printed.exit_code == 0, printed.stderr
    names = {f.name for f in text_string_to_metric_families(printed.stdout)}
    assert {"tcobench_ttft_seconds", "tcobench_cost_per_million_output_tokens_usd", "tcobench_last_night_runs"} <= names
    path = tmp_path / "tcobench.prom"
    written = runner.invoke(app, ["metrics", "--store", str(store), "--textfile", str(path)])
    assert written.exit_code == 0, written.stderr
    assert written.stdout == "" and path.read_text("utf-8") == printed.stdout


@pytest.mark.parametrize(
    ("args", "code", "line"),
    [
        (["--textfile", "{tmp}/m.prom", "--port", "0"], 2, "--textfile"),
        (["--textfile", "{tmp}/m.prom", "--interactivity", "20,fast"], 1, "ConfigError: --interactivity '20,fast'"),
    ],
)
def test_bad_options_are_one_line_and_write_nothing(
    store: Path, tmp_path: Path, args: list[str], code: int, line: str
) -> None:
    done = runner.invoke(app, ["metrics", "--store", str(store), *(a.format(tmp=tmp_path) for a in args)])
    assert done.exit_code == code
    assert line in done.stderr
    assert not (tmp_path / "m.prom").exists()


def test_a_missing_store_is_one_line(tmp_path: Path) -> None:
    done = runner.invoke(app, ["metrics", "--store", str(tmp_path / "nowhere")])
    assert done.exit_code == 1
    assert done.stderr.startswith("StoreError: ") and len(done.stderr.strip().splitlines()) == 1
