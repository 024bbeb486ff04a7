"""`run --image/--docker-host/--gpu-vendor/--gpus` parsing and the one-line errors of the Docker commands."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from tcobench.cli import app
from tcobench.cli.images import container_overrides
from tcobench.schemas import GpuVendor

runner = CliRunner()


def test_container_overrides() -> None:
    assert container_overrides(None, None, None, None) is None
    assert container_overrides("llama-cpp-cpu", "unix:///x.sock", None, None) == {
        "image": "llama-cpp-cpu",
        "docker_host": "unix:///x.sock",
        "gpu": {"vendor": None},
    }
    nvidia = container_overrides("img", None, GpuVendor.nvidia, "all")
    assert nvidia is not None and nvidia["gpu"] == {"vendor": "nvidia", "count": -1}
    assert container_overrides("img", None, GpuVendor.nvidia, "2")["gpu"]["count"] == 2  # type: ignore[index]
    amd = container_overrides("img", None, GpuVendor.amd, "device=/dev/dri/renderD128,/dev/dri/renderD129")
    assert amd is not None and amd["gpu"]["device_ids"] == ["/dev/dri/renderD128", "/dev/dri/renderD129"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ((None, "unix:///x.sock", None, None), "--docker-host needs --image"),
        ((None, None, GpuVendor.amd, None), "--gpu-vendor needs --image"),
        (("img", None, None, "all"), "--gpus needs --gpu-vendor"),
        (("img", None, GpuVendor.amd, "2"), "use all, a count"),
    ],
)
def test_container_overrides_refuse_inconsistent_flags(args: tuple[object, ...], needle: str) -> None:
    with pytest.raises(typer.BadParameter, match=needle):
        container_overrides(*args)  # type: ignore[arg-type]


def test_images_list_without_a_daemon_lists_the_catalog_and_says_so_in_one_line() -> None:
    from tcobench.images import load_catalog

    done = runner.invoke(
        app, ["images", "list", "--docker-host", "unix:///nonexistent/tcobench.sock"], env={"COLUMNS": "200"}
    )
    assert done.exit_code == 0, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("warning: Docker daemon at unix:///nonexistent/tcobench.sock is not reachable (")
    assert line.endswith("the catalog is listed without what the host has built (built: ?)")
    rows = [row for row in done.stdout.splitlines() if row.startswith("│")]
    names = [spec.name for spec in load_catalog().images]
    assert len(rows) == len(names) and all(any(f"│ {n} " in row for row in rows) for n in names)
    assert all(row.split("│")[5].strip() == "?" for row in rows), done.stdout  # built: not known


def test_unreachable_docker_host_is_one_line() -> None:
    """A command that needs the daemon (push) says so in one line."""
    args = ["images", "push", "llama-cpp-cpu", "--registry", "127.0.0.1:5000"]
    done = runner.invoke(app, [*args, "--docker-host", "unix:///nonexistent/tcobench.sock"])
    assert done.exit_code == 1
    assert done.stderr.startswith("ImageError:") and len(done.stderr.strip().splitlines()) == 1
    assert "unix:///nonexistent/tcobench.sock" in done.stderr


def test_unknown_image_name_and_bad_build_arg() -> None:
    unknown = runner.invoke(
        app,
        [
            "images",
            "push",
            "vllm",
            "--registry",
            "127.0.0.1:5000",
            "--docker-host",
            "unix:///nonexistent/tcobench.sock",
        ],
    )
    assert unknown.exit_code == 1 and unknown.stderr.startswith("ImageError: unknown image 'vllm'")
    bad = runner.invoke(app, ["images", "build", "--build-arg", "NOEQUALS", "--no-prefect"])
    assert bad.exit_code == 2 and "KEY=VALUE" in bad.output
    no_registry = runner.invoke(app, ["images", "push", "llama-cpp-cpu"], env={"TCOBENCH_REGISTRY": ""})
    assert no_registry.exit_code == 2 and "--registry" in no_registry.output


def test_doctor_exits_1_when_the_daemon_is_missing() -> None:
    done = runner.invoke(app, ["doctor", "--docker-host", "unix:///nonexistent/tcobench.sock"])
    assert done.exit_code == 1 and "not reachable" in done.stdout
    assert done.stderr.strip().startswith("DoctorError: 1 check(s) failed: Docker daemon")
