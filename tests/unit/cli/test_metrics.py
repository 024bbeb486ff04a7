"""`tcobench metrics` (issue 46 item 4): the exposition printed, or written to --textfile; --textfile with --port, a
bad --interactivity or a missing store is one line and a non-zero exit, and no file is written; --port serves until
Ctrl-C, which ends it with the one Interrupted line."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx
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


def test_ctrl_c_stops_the_endpoint_with_the_interrupted_line_after_a_failed_scrape_warned(
    store: Path, tmp_path: Path
) -> None:
    """A real `tcobench metrics --port 0` in a session of its own: a scrape of a damaged store is one warning line on
    its stderr (no traceback), then SIGINT, as a terminal's Ctrl-C sends it, ends it with the one Interrupted line."""
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    command = [sys.executable, "-m", "tcobench", "metrics", "--store", str(copy), "--port", "0"]
    # started with SIGINT ignored, as a background job of a script inherits it: the command must stop on it all the same
    proc = subprocess.Popen(
        command,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # the child has no thread yet
    )
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", first)
        assert found, first
        url = f"http://127.0.0.1:{found.group(1)}/metrics"
        assert httpx.get(url, timeout=60).status_code == 200
        (copy / "catalog.ducklake").write_bytes(b"not a catalog")
        assert httpx.get(url, timeout=60).status_code == 500
        proc.send_signal(signal.SIGINT)
        _, rest = proc.communicate(timeout=60)
        code = proc.returncode
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 130
    lines = rest.splitlines()
    assert len(lines) == 2, rest
    assert lines[0].startswith(f"warning: metrics scrape: cannot read the store: store {copy}: its catalog ")
    assert lines[1] == "Interrupted: stopped by Ctrl-C"
