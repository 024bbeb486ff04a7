"""`tcobench fleet init DIR`: the fleet's set-up files from the installed package (no source checkout)."""

from __future__ import annotations

import stat
from pathlib import Path

import yaml
from typer.testing import CliRunner

from tcobench.cli import app
from tcobench.tasks.fleet.setup_files import write_fleet_files
from tcobench.tasks.inventory import load_plan
from tcobench.tasks.prices import load_prices

ROOT = Path(__file__).resolve().parents[4]
runner = CliRunner()


def test_fleet_init_writes_the_files_from_the_package(tmp_path: Path) -> None:
    target = tmp_path / "fleet"
    done = runner.invoke(app, ["fleet", "init", str(target), "--host", "gpu-nv-01"])
    assert done.exit_code == 0, done.output
    compose = target / "compose.fleet.yaml"
    assert compose.read_text() == (ROOT / "docker" / "compose.fleet.yaml").read_text()
    services = yaml.safe_load(compose.read_text())["services"]
    assert {"postgres", "prefect-server", "s3"} <= set(services)
    context = target / services["prefect-server"]["build"]["context"]  # the compose file's build context came too
    assert (context / services["prefect-server"]["build"]["dockerfile"]).is_file()
    assert (target / "fleet" / "initdb" / "10-lake.sql").read_text() == (
        ROOT / "docker" / "fleet" / "initdb" / "10-lake.sql"
    ).read_text()
    unit = (target / "tcobench-worker.service").read_text()
    assert "ExecStart=" in unit and " worker --host gpu-nv-01\n" in unit and "@" not in unit
    assert "Description=tcobench worker for GPU host gpu-nv-01" in unit
    for env in ("fleet.env", "worker.env"):  # templates of secrets: this user only
        assert stat.S_IMODE((target / env).stat().st_mode) == 0o600
    names = {
        line.split("=")[0]
        for line in (target / "fleet.env").read_text().splitlines()
        if "=" in line and not line.startswith("#")
    }
    needed = {"TCOBENCH_PG_PASSWORD", "PREFECT_SERVER_API_AUTH_STRING", "TCOBENCH_S3_IDENTITIES", "TCOBENCH_FLEET_BIND"}
    assert names == needed and all(n in compose.read_text() for n in needed)
    # the smoke night's matrix is valid for a fleet inventory: every host gets the loopback zero endpoint
    plan = load_plan(ROOT / "examples" / "inventory-fleet.toml", [target / "smoke-matrix.toml"], load_prices(None))
    assert {c.host.name for c in plan.cells} == {"gpu-nv-01", "gpu-amd-01"}
    assert "wrote" in done.stdout and str(compose) in done.stdout


def test_fleet_init_overwrites_nothing_unless_forced(tmp_path: Path) -> None:
    (tmp_path / "fleet.env").write_text("TCOBENCH_PG_PASSWORD=kept\n")
    done = runner.invoke(app, ["fleet", "init", str(tmp_path)])
    assert done.exit_code == 1 and done.stderr.startswith("ConfigError: fleet init:") and "--force" in done.stderr
    assert (tmp_path / "fleet.env").read_text() == "TCOBENCH_PG_PASSWORD=kept\n"
    assert not (tmp_path / "compose.fleet.yaml").exists()  # nothing half-written
    written = write_fleet_files(tmp_path, "h1", "/usr/bin/tcobench", force=True)
    assert tmp_path / "fleet.env" in written and "kept" not in (tmp_path / "fleet.env").read_text()


def test_a_bad_host_name_is_a_usage_error(tmp_path: Path) -> None:
    done = runner.invoke(app, ["fleet", "init", str(tmp_path), "--host", "a b"])
    assert done.exit_code == 2 and "'a b' is not a host name" in done.stderr
