"""`tcobench fleet init DIR`: the fleet's set-up files from the installed package (no source checkout)."""

from __future__ import annotations

import socket
import stat
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tcobench.cli import app
from tcobench.tasks.fleet.setup_files import FleetTarget, write_fleet_files
from tcobench.tasks.inventory import load_plan
from tcobench.tasks.prices import load_prices

ROOT = Path(__file__).resolve().parents[4]
runner = CliRunner()


HOSTS = ["--host", "gpu-nv-01", "--host", "gpu-amd-01"]
VENV = ["--venv", "/opt/tcobench/venv"]


def test_fleet_init_writes_the_files_from_the_package(tmp_path: Path) -> None:
    target = tmp_path / "fleet"
    done = runner.invoke(app, ["fleet", "init", str(target), *HOSTS, *VENV])
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
    for env in ("fleet.env", "worker.env"):  # templates of secrets: this user only
        assert stat.S_IMODE((target / env).stat().st_mode) == 0o600
    names = {
        line.split("=")[0]
        for line in (target / "fleet.env").read_text().splitlines()
        if "=" in line and not line.startswith("#")
    }
    needed = {"TCOBENCH_PG_PASSWORD", "PREFECT_SERVER_API_AUTH_STRING", "TCOBENCH_S3_IDENTITIES", "TCOBENCH_FLEET_BIND"}
    assert names == needed and all(n in compose.read_text() for n in needed)
    # the smoke night's matrix is valid for a fleet inventory: every host gets the loopback zero endpoint, and the
    # endpoint itself came along (a wheel has no bench/ folder)
    plan = load_plan(ROOT / "examples" / "inventory-fleet.toml", [target / "smoke-matrix.toml"], load_prices(None))
    assert {c.host.name for c in plan.cells} == {"gpu-nv-01", "gpu-amd-01"}
    assert (target / "zero_endpoint.py").read_text() == (ROOT / "bench" / "mock_engine.py").read_text()
    assert "wrote" in done.stdout and str(compose) in done.stdout
    assert "CHECKLIST.md" in done.stdout and "tcobench docs fleet" in done.stdout and "docs/fleet.md" not in done.stdout


def test_each_host_gets_a_unit_for_that_host_and_its_venv_not_this_machine(tmp_path: Path) -> None:
    done = runner.invoke(app, ["fleet", "init", str(tmp_path), *HOSTS, *VENV, "--user", "bench"])
    assert done.exit_code == 0, done.output
    for host in ("gpu-nv-01", "gpu-amd-01"):
        unit = (tmp_path / "hosts" / host / "tcobench-worker.service").read_text()
        assert f"\nExecStart=/opt/tcobench/venv/bin/tcobench worker --host {host}\n" in unit
        assert f"Description=tcobench worker for GPU host {host}\n" in unit
        assert "\nUser=bench\nGroup=bench\n" in unit and "@" not in unit.replace("`", "")
        assert sys.executable not in unit and socket.gethostname() not in unit
    assert not (tmp_path / "tcobench-worker.service").exists()


def test_the_checklist_covers_user_images_weights_ports_and_a_smoke_night(tmp_path: Path) -> None:
    runner.invoke(app, ["fleet", "init", str(tmp_path), *HOSTS, *VENV])
    checklist = (tmp_path / "CHECKLIST.md").read_text()
    assert "@" not in checklist.replace("USER@HOST", "").replace("root@HOST", "")  # every placeholder filled in
    assert "gpu-nv-01, gpu-amd-01" in checklist and "/opt/tcobench/venv/bin/tcobench doctor" in checklist
    assert "useradd --system" in checklist and "usermod -aG docker tcobench" in checklist  # the service user
    assert "docker save" in checklist and "docker load" in checklist  # images, no registry pull
    assert "rsync -a --partial /srv/models/" in checklist  # model weights
    assert all(port in checklist for port in ("4200/tcp", "5432/tcp", "8333/tcp"))  # the ports to open
    assert "smoke-matrix.toml" in checklist and "zero_endpoint.py" in checklist  # a smoke night
    compose = (ROOT / "docker" / "compose.fleet.yaml").read_text()
    assert all(f":{port}:{port}" in compose for port in ("4200", "5432", "8333"))  # the ports it names are these
    assert "docs/fleet.md" not in checklist.replace("the page docs/fleet.md", "")  # only `tcobench docs fleet`


def test_the_unit_in_docs_fleet_md_is_the_one_fleet_init_writes(tmp_path: Path) -> None:
    write_fleet_files(tmp_path, FleetTarget(("gpu-nv-01",), "/opt/tcobench/venv"))
    documented = (ROOT / "docs" / "fleet.md").read_text().split("```ini\n", 1)[1].split("```", 1)[0]
    assert documented == (tmp_path / "hosts" / "gpu-nv-01" / "tcobench-worker.service").read_text()


def test_fleet_init_overwrites_nothing_unless_forced(tmp_path: Path) -> None:
    (tmp_path / "fleet.env").write_text("TCOBENCH_PG_PASSWORD=kept\n")
    done = runner.invoke(app, ["fleet", "init", str(tmp_path), *HOSTS, *VENV])
    assert done.exit_code == 1 and done.stderr.startswith("ConfigError: fleet init:") and "--force" in done.stderr
    assert (tmp_path / "fleet.env").read_text() == "TCOBENCH_PG_PASSWORD=kept\n"
    assert not (tmp_path / "compose.fleet.yaml").exists()  # nothing half-written
    written = write_fleet_files(tmp_path, FleetTarget(("h1",), "/usr/local/tcobench"), force=True)
    assert tmp_path / "fleet.env" in written and "kept" not in (tmp_path / "fleet.env").read_text()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ([*VENV], "Invalid value for --host: give --host NAME for each GPU host"),
        ([*HOSTS], "Invalid value for --venv: give --venv PATH, where tcobench is installed on the GPU hosts"),
        (["--host", "a b", *VENV], "--host 'a b' is not a host name (letters, digits, . _ -; not control)"),
        (["--host", "control", *VENV], "--host control is not a host name"),
        (["--host", "g1", "--host", "g1", *VENV], "--host names a host twice: g1 g1"),
        (["--host", "g1", "--venv", "opt/venv"], "--venv opt/venv is not an absolute path"),
        (["--host", "g1", "--venv", "/opt/my venv"], "--venv '/opt/my venv' is not an absolute path"),
        (["--host", "g1", "--venv", "/opt/%h/venv"], "--venv /opt/%h/venv is not an absolute path"),
        (["--host", "g1", "--venv", "/opt/v/bin/tcobench"], "names the program, not its venv: give /opt/v"),
        (["--host", "g1", *VENV, "--user", "Bench"], "--user Bench is not a user name"),
    ],
)
def test_missing_or_bad_options_are_one_usage_line_and_nothing_written(
    tmp_path: Path, args: list[str], needle: str
) -> None:
    done = runner.invoke(app, ["fleet", "init", str(tmp_path / "out"), *args])
    assert done.exit_code == 2, done.output
    assert needle in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "out").exists()
