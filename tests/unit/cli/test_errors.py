"""Errors that say what to do (issue 41, item 5), as a user meets them on the command line: one `Kind: message` line
that names the bad value and the fix, a documented exit status, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tcobench.cli import app

runner = CliRunner()

READS = [
    ["summary"],
    ["query", "select count(*) from runs"],
    ["compare", "--a", "vendor=nvidia", "--b", "vendor=amd"],
    ["history"],
    ["report", "--out", "{tmp}/r.html"],
    ["store", "info"],
    ["store", "snapshots"],
    ["store", "verify"],
    ["store", "compact"],
]


@pytest.mark.parametrize("command", READS, ids=[" ".join(c[:2]) for c in READS])
def test_a_read_of_a_missing_store_says_it_does_not_exist(tmp_path: Path, command: list[str]) -> None:
    missing = tmp_path / "no-such-store"
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    done = runner.invoke(app, [*args, "--store", str(missing)])
    assert done.exit_code == 1, done.output
    assert done.stderr.strip() == (
        f"StoreError: store {missing} does not exist (given by --store): name the store your runs were stored in "
        f"(--store PATH or TCOBENCH_STORE), or measure into this one first: tcobench run --store {missing}"
    )
    assert not missing.exists() and not (tmp_path / "r.html").exists()


def test_the_missing_store_names_where_its_path_came_from(tmp_path: Path) -> None:
    from_env = runner.invoke(app, ["summary"], env={"TCOBENCH_STORE": str(tmp_path / "env-store")})
    assert from_env.exit_code == 1
    assert from_env.stderr.startswith(
        f"StoreError: store {tmp_path / 'env-store'} does not exist (from TCOBENCH_STORE)"
    )
    default = runner.invoke(app, ["summary"], env={"TCOBENCH_STORE": None, "XDG_DATA_HOME": str(tmp_path)})
    assert default.exit_code == 1
    store = tmp_path / "tcobench" / "store"
    assert default.stderr.startswith(f"StoreError: store {store} does not exist (the default store)")


def test_an_endpoint_ending_in_v1_is_refused_with_the_base_url(tmp_path: Path) -> None:
    store = tmp_path / "store"
    done = runner.invoke(app, ["run", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--store", str(store)])
    assert done.exit_code == 1
    assert done.stderr.strip() == (
        "ConfigError: command line: engine.url: 'http://127.0.0.1:9/v1' ends in /v1, a path tcobench adds itself "
        "(/v1/... for protocol openai, /api/... for ollama); give the server's base URL: http://127.0.0.1:9"
    )
    assert not store.exists()


def test_basis_lists_the_values_to_type(tmp_path: Path) -> None:
    done = runner.invoke(app, ["compare", "--a", "vendor=a", "--b", "vendor=b", "--basis", "rented"])
    assert done.exit_code == 2
    assert done.stderr.strip() == (
        "UsageError: Invalid value for --basis: unknown cost basis 'rented': choose owned, hyperscaler-own, "
        "neocloud-own, rental-3yr, rental-1yr, on-demand (see `tcobench compare --help`)"
    )
    assert "rented:" not in done.stderr.split("choose")[1]


def test_prefects_queue_services_print_nothing_beside_the_one_line(tmp_path: Path) -> None:
    """Prefect's queue services log on loggers named after their class (EventsWorker: "Still processing items: 8
    items remaining..." while it drains at exit), outside the `prefect` logger tree; CI once saw that warning as a
    second line under `run`'s one-line EngineError, and a CI preview the in-process server's task_run_recorder
    ("Error flushing 1 events", logger prefect.server). With the CLI's Prefect defaults they are silent, and our own
    warnings still print. A fresh process: Prefect configures logging once, at import (without our defaults the
    warning prints in Prefect's format: the check fails)."""
    import subprocess
    import sys

    script = (
        "import logging\n"
        "from tcobench.cli._common import prefect_defaults, show_warnings\n"
        "prefect_defaults()\n"
        "from prefect import flow  # configures Prefect's logging, as tcobench.flows' import does\n"
        "from prefect.events.worker import EventsWorker\n"
        "assert logging.getLogger().handlers, 'Prefect did not configure logging'\n"
        "show_warnings()\n"
        "logging.getLogger(EventsWorker.__name__).warning('Still processing items: 8 items remaining...')\n"
        "logging.getLogger('prefect.server.services.task_run_recorder').error('Error flushing 1 events')\n"
        "logging.getLogger('tcobench.store').warning('ours')\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PREFECT_HOME": str(tmp_path / "prefect")}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Still processing" not in done.stderr + done.stdout and "Error flushing" not in done.stderr + done.stdout
    assert done.stderr.strip() == "warning: ours"
