"""`tcobench worker`, `tcobench fleet ...` and the fleet branch of `tcobench nightly`: what is refused before anything
starts (the working paths run against a real Prefect server in tests/integration/test_fleet.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tcobench.cli import app
from tcobench.cli._common import store_parameter

runner = CliRunner()
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
FLEET = [
    "-i",
    str(EXAMPLES / "inventory-fleet.toml"),
    "-m",
    str(EXAMPLES / "matrix-nvidia.toml"),
    "-m",
    str(EXAMPLES / "matrix-amd.toml"),
]
NO_SERVER = {k: "" for k in os.environ if k.startswith("PREFECT_API_")} | {"PREFECT_API_URL": ""}


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["worker"], "give --host NAME (a GPU host) or --control"),
        (["worker", "--host", "a", "--control"], "give --host NAME (a GPU host) or --control"),
        (["worker", "--host", "control"], "'control' is not a host name"),
        (["worker", "--host", "a b"], "'a b' is not a host name"),
    ],
)
def test_worker_usage_errors(args: list[str], needle: str) -> None:
    done = runner.invoke(app, args)
    assert done.exit_code == 2 and done.stderr.startswith("UsageError:") and needle in done.stderr, done.stderr


def test_worker_needs_a_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    done = runner.invoke(app, ["worker", "--host", "gpu-nv-01", "--allow-root"])
    assert done.exit_code == 1 and done.stderr.startswith("ConfigError: tcobench worker needs the fleet's Prefect")


def test_fleet_nightly_needs_prefect_a_server_and_a_shared_store(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    monkeypatch.delenv("TCOBENCH_STORE", raising=False)
    no_store = runner.invoke(app, ["nightly", *FLEET])
    assert (
        no_store.exit_code == 1 and "give the store every host writes to (--store or TCOBENCH_STORE)" in no_store.stderr
    )
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    no_prefect = runner.invoke(app, ["nightly", *FLEET, "--store", str(tmp_path), "--no-prefect"])
    assert no_prefect.exit_code == 1 and "fleet mode runs on Prefect; drop --no-prefect" in no_prefect.stderr
    no_server = runner.invoke(app, ["nightly", *FLEET, "--store", str(tmp_path)])
    assert no_server.exit_code == 1 and "has a [fleet] table: set PREFECT_API_URL" in no_server.stderr
    assert not any(tmp_path.iterdir())  # nothing started, nothing written


def test_fleet_deploy_refuses_an_inventory_without_fleet_and_a_missing_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.delenv("TCOBENCH_STORE", raising=False)
    plain = ["-i", str(EXAMPLES / "inventory.toml"), *FLEET[2:]]
    done = runner.invoke(app, ["fleet", "deploy", *plain])
    assert done.exit_code == 1 and "no [fleet] table; fleet mode is opt-in" in done.stderr
    done = runner.invoke(app, ["fleet", "deploy", *FLEET])
    assert done.exit_code == 1 and "give the store every host writes to" in done.stderr
    done = runner.invoke(app, ["fleet", "deploy", *FLEET, "--store", "/srv/store"])
    assert done.exit_code == 1 and "tcobench fleet deploy needs the fleet's Prefect server" in done.stderr
    done = runner.invoke(app, ["fleet", "status"])
    assert done.exit_code == 1 and "tcobench fleet status needs the fleet's Prefect server" in done.stderr


def test_store_parameter_keeps_uris_and_makes_paths_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert store_parameter(Path("store")) == str(tmp_path / "store")
    assert store_parameter("ducklake:postgres:dbname=lake host=db") == "ducklake:postgres:dbname=lake host=db"
    assert store_parameter("s3://bucket/lake/") == "s3://bucket/lake/"
    assert store_parameter(None) is None


def test_serve_refuses_a_password_in_the_store_before_prefect(monkeypatch: pytest.MonkeyPatch) -> None:
    """A deployment's parameters live in Prefect's database: a store URI with a password never gets there."""
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    plain = ["-i", str(EXAMPLES / "inventory.toml"), *FLEET[2:]]
    done = runner.invoke(app, ["serve", *plain, "--store", "postgresql://lake:hunter2@db/lake?data=s3://b/p"])
    assert done.exit_code != 0 and done.stderr.startswith("StoreError:"), done.stderr
    assert "password in the URI is refused" in done.stderr and "hunter2" not in done.stderr
