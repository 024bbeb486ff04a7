"""GPU passthrough without GPUs: containers are CREATED (never started) and the daemon's own inspect output is
checked, so what reaches dockerd is exactly what a GPU host would get. Also: a GPU container that cannot start
(no /dev/kfd here) fails with one line naming the container, and leaves nothing behind.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tcobench.errors import EngineError
from tcobench.schemas import BenchmarkConfig, GpuConfig, GpuVendor
from tcobench.tasks.engine import launch_engine
from tcobench.tasks.host.docker_client import LABEL_BATCH, tcobench_labels
from tcobench.tasks.host.gpu import vendor_for

pytestmark = pytest.mark.docker


@pytest.fixture
def created(docker_api: Any) -> Iterator[list[Any]]:
    """Containers a test creates; always removed."""
    containers: list[Any] = []
    try:
        yield containers
    finally:
        for container in containers:
            container.remove(force=True)


def _create(docker_api: Any, base_image: str, created: list[Any], gpu: GpuConfig) -> dict[str, Any]:
    options = vendor_for(gpu.vendor).options(gpu, local=True)
    container = docker_api.containers.create(
        base_image,
        ["true"],
        labels=tcobench_labels("test"),
        network_mode="host",
        environment=options.environment,
        **options.create_kwargs,
    )
    created.append(container)
    container.reload()
    assert container.status == "created"
    return dict(container.attrs)


def test_nvidia_device_requests(docker_api: Any, base_image: str, created: list[Any]) -> None:
    every = _create(docker_api, base_image, created, GpuConfig(vendor=GpuVendor.nvidia))
    (request,) = every["HostConfig"]["DeviceRequests"]
    assert request["Count"] == -1 and request["Capabilities"] == [["gpu"]] and not request.get("DeviceIDs")
    assert every["HostConfig"]["Privileged"] is False
    assert "NVIDIA_DRIVER_CAPABILITIES=compute,utility" in every["Config"]["Env"]
    chosen = _create(docker_api, base_image, created, GpuConfig(vendor=GpuVendor.nvidia, device_ids=("0", "GPU-1a2b")))
    (request,) = chosen["HostConfig"]["DeviceRequests"]
    assert request["DeviceIDs"] == ["0", "GPU-1a2b"] and request["Capabilities"] == [["gpu"]]


def test_amd_devices_groups_ipc_and_shm(docker_api: Any, base_image: str, created: list[Any]) -> None:
    gpu = GpuConfig(vendor=GpuVendor.amd, group_add=(44, 109), shm_size="2g")
    host = _create(docker_api, base_image, created, gpu)["HostConfig"]
    devices = {(d["PathOnHost"], d["PathInContainer"], d["CgroupPermissions"]) for d in host["Devices"]}
    assert devices == {("/dev/kfd", "/dev/kfd", "rwm"), ("/dev/dri", "/dev/dri", "rwm")}
    assert host["GroupAdd"] == ["44", "109"] and host["IpcMode"] == "host" and host["ShmSize"] == 2 * 2**30
    assert host["Privileged"] is False and not host.get("CapAdd")
    nodes = GpuConfig(vendor=GpuVendor.amd, device_ids=("/dev/dri/renderD128",), group_add=(109,), ipc_host=False)
    host = _create(docker_api, base_image, created, nodes)["HostConfig"]
    assert [d["PathOnHost"] for d in host["Devices"]] == ["/dev/kfd", "/dev/dri/renderD128"]
    assert host["IpcMode"] != "host"


def test_gpu_container_that_cannot_start_is_removed(
    cpu_image: dict[str, str], docker_host: str, docker_api: Any, model_cache: Path, tmp_path: Path
) -> None:
    """No /dev/kfd on this machine: the daemon refuses to start the container; nothing may be left."""
    config = BenchmarkConfig.model_validate_json(
        json.dumps(
            {
                "engine": {
                    "kind": "container",
                    "startup_timeout_s": 30,
                    "container": {
                        "image": cpu_image["reference"],
                        "docker_host": docker_host,
                        "gpu": {"vendor": "amd", "group_add": [44]},
                    },
                },
                "workload": {"concurrency": [1]},
            }
        )
    )
    with pytest.raises(EngineError) as info:
        launch_engine(config, tmp_path / "logs", model_cache, batch_id="gpu-start-failure")
    message = str(info.value)
    assert message.startswith("engine container tcobench-gpu-start-fa") and "\n" not in message
    assert "could not start" in message or "exited with code" in message
    assert docker_api.containers.list(all=True, filters={"label": f"{LABEL_BATCH}=gpu-start-failure"}) == []
