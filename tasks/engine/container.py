"""An engine image started as a container on a Docker host (engine.kind = container).

- host networking; the engine binds 127.0.0.1 on a local Docker host (0.0.0.0 on a remote one) at a
  free port, and tcobench talks to it there;
- GPUs handed over by the vendor module (``tasks.host.gpu``), never privileged;
- the engine's own needs (command, mounts, pinned settings, model pull) come from its recipe
  (``tasks.engine.recipes``), chosen by ``engine.container.engine`` or the image's ``io.tcobench.engine`` label;
- labelled ``io.tcobench.managed``, ``io.tcobench.batch-id`` (the runs' batch id) and ``io.tcobench.owner``;
  containers left by a crashed earlier run of this machine are removed before a new one starts;
- always stopped and removed; its log is saved beside the run (``STORE/logs/container-<name>.log``),
  and a container that dies mid-run is reported with its name and exit code.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import httpx
from docker.errors import APIError, DockerException, ImageNotFound, NotFound
from docker.models.containers import Container
from docker.models.images import Image

from tcobench.errors import EngineError
from tcobench.schemas import (
    CONTAINER_PROTOCOLS,
    BenchmarkConfig,
    ClientPlacement,
    ContainerConfig,
    ContainerEngine,
    EngineKind,
    HostFactsSource,
)
from tcobench.tasks.engine.base import EngineEvent, EngineLauncher, LaunchOptions, Runner, RunningEngine, register
from tcobench.tasks.engine.local import free_port
from tcobench.tasks.engine.recipes import ContainerPlan, Recipe, recipe_for
from tcobench.tasks.host.docker_client import (
    describe_host,
    docker_client,
    engine_address,
    is_local,
    remove_container,
    remove_leftovers,
    tcobench_labels,
)
from tcobench.tasks.host.gpu import vendor_for
from tcobench.tasks.host.hostinfo import cpu_model_in
from tcobench.tasks.load.protocols import EngineInfo
from tcobench.tasks.tls import tls_context

__all__ = ["IMAGE_NAME_LABEL", "ContainerHandle", "ContainerLauncher", "daemon_host_facts", "find_image"]

IMAGE_NAME_LABEL = "io.tcobench.image-name"  # catalog name, on every image `tcobench images build` makes
_ENGINE_LABEL = "io.tcobench.engine"
_TAIL_LINES = 15
_TAIL_CHARS = 800


@dataclass
class ContainerHandle:
    """The launcher's handle: the client, the container, where its log goes."""

    client: docker.DockerClient
    container: Container
    log_path: Path
    where: str
    stop_timeout_s: int
    local: bool = True  # the Docker host is this machine

    def exec_stdout(self, cmd: list[str]) -> str:
        """Run a command inside the engine container (telemetry: nvidia-smi); OSError when it cannot."""
        try:
            code, output = self.container.exec_run(cmd, demux=False)
        except (DockerException, OSError) as exc:
            raise OSError(f"docker exec {cmd[0]} in {self.container.name}: {exc}") from exc
        text = (output or b"").decode("utf-8", "replace")
        if code != 0:
            raise OSError(f"{cmd[0]} in {self.container.name} exited with {code}: {text.strip()[:200]}")
        return text

    @property
    def label(self) -> str:
        return f"engine container {self.container.name} ({self.container.short_id}) on {self.where}"

    def save_logs(self) -> str:
        """Write the container's log next to the run; return its last lines, one line."""
        try:
            text = self.container.logs(stdout=True, stderr=True).decode("utf-8", "replace")
        except (DockerException, OSError):
            return ""
        try:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self.log_path.write_text(text, "utf-8")
        except OSError:
            pass
        tail = " | ".join(line.strip() for line in text.splitlines()[-_TAIL_LINES:] if line.strip())
        return tail[-_TAIL_CHARS:]

    def exit_error(self, when: str, settle_s: float = 0.0) -> str | None:
        """Why the container is not running (exit code, OOM), or None while it runs (still, after ``settle_s``:
        the daemon reports a killed container's exit a moment after its process is gone)."""
        deadline = time.monotonic() + settle_s
        while True:
            try:
                self.container.reload()
            except NotFound:
                return f"{self.label} disappeared {when} (removed outside tcobench)"
            except (DockerException, OSError) as exc:
                return f"{self.label}: cannot ask the daemon about it {when}: {exc}"
            if self.container.status not in ("created", "running"):
                break
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.1)
        state = self.container.attrs.get("State", {})
        oom = " (killed: out of memory)" if state.get("OOMKilled") else ""
        tail = self.save_logs()
        return f"{self.label} exited with code {state.get('ExitCode')}{oom} {when}; log {self.log_path}: {tail}"


def daemon_host_facts(handle: ContainerHandle) -> dict[str, Any]:
    """The host_* run columns as the engine's machine sees itself: `docker info` of its daemon (OS, kernel,
    architecture, CPUs, memory) and the CPU model from /proc/cpuinfo inside the engine container (the host's
    kernel answers); {} when the daemon does not answer (the run then says the facts are the client's)."""
    try:
        info = handle.client.info()
    except (DockerException, OSError):
        return {}
    try:
        cpu = cpu_model_in(handle.exec_stdout(["cat", "/proc/cpuinfo"]))
    except OSError:
        cpu = None
    return {
        "host_os": f"{str(info.get('OSType') or 'unknown').capitalize()} ({info.get('OperatingSystem') or '?'})",
        "host_kernel": str(info.get("KernelVersion") or "unknown"),
        "host_arch": str(info.get("Architecture") or "unknown"),
        "host_cpu": cpu or "unknown (not readable in the engine container)",
        "host_cpu_count": int(info.get("NCPU") or 0),
        "host_mem_bytes": int(info.get("MemTotal") or 0),
        "host_facts_source": HostFactsSource.docker_daemon.value,
    }


def _newest_with_name(client: docker.DockerClient, name: str) -> Image | None:
    images = client.images.list(filters={"label": f"{IMAGE_NAME_LABEL}={name}"})
    return max(images, key=lambda i: i.attrs.get("Created", ""), default=None)


def find_image(client: docker.DockerClient, name: str, where: str) -> tuple[Image, str]:
    """(image, reference): a local reference, else the newest image built from catalog entry ``name``, else a pull."""
    try:
        return client.images.get(name), name
    except ImageNotFound:
        pass
    except (APIError, DockerException) as exc:
        raise EngineError(f"cannot look up image {name!r} on {where}: {exc}") from exc
    built = _newest_with_name(client, name)
    if built is not None:
        return built, (built.tags[0] if built.tags else name)
    try:
        return client.images.pull(name), name
    except (APIError, DockerException) as exc:
        detail = " ".join(str(exc).split())[:200]
        raise EngineError(
            f"image {name!r} is not on {where} and could not be pulled ({detail}); build it with "
            "`tcobench images build` or push it to a registry that host can reach"
        ) from exc


def _engine_of(cfg: ContainerConfig, image: Image, reference: str) -> ContainerEngine:
    if cfg.engine is not None:
        return cfg.engine
    label = (image.labels or {}).get(_ENGINE_LABEL)
    try:
        return ContainerEngine(str(label))
    except ValueError:
        found = f"its value {label!r} is not one" if label is not None else "it has none"
        raise EngineError(
            f"image {reference!r} has no valid {_ENGINE_LABEL} label ({found}): set engine.container.engine to "
            f"one of {', '.join(e.value for e in ContainerEngine)}"
        ) from None


def _container_name(batch_id: str, port: int) -> str:
    return f"tcobench-{(batch_id or secrets.token_hex(6))[:12]}-{port}"


def _wait_healthy(handle: ContainerHandle, url: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    with httpx.Client(timeout=2.0, trust_env=False, verify=tls_context()) as client:
        while time.monotonic() < deadline:
            error = handle.exit_error("while starting")
            if error is not None:
                raise EngineError(error)
            try:
                if client.get(url).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
    raise EngineError(
        f"{handle.label} not healthy at {url} after {timeout_s:g} s; log {handle.log_path}: {handle.save_logs()}"
    )


def _container_settings(
    handle: ContainerHandle, image: Image, create: dict[str, Any], gpu_settings: dict[str, Any]
) -> str:
    keep = ("command", "environment", "volumes", "network_mode", "labels")
    settings = {k: create[k] for k in keep if k in create}
    settings.update(
        container=handle.container.name,
        docker_host=handle.where,
        user=(image.attrs.get("Config") or {}).get("User") or "root",
        repo_digests=image.attrs.get("RepoDigests") or [],
        gpu=gpu_settings,
        privileged=False,
    )
    return json.dumps(settings, sort_keys=True, default=str)


@register(EngineKind.container)
class ContainerLauncher(EngineLauncher):
    def start(
        self, config: BenchmarkConfig, slots: int, log_dir: Path, model_cache: Path, launch: LaunchOptions
    ) -> RunningEngine:
        cfg = config.engine.container
        assert cfg is not None  # guaranteed by EngineConfig's validator
        client = docker_client(cfg.docker_host, EngineError)
        try:
            return self._start(client, config, cfg, slots, log_dir, model_cache, launch)
        except BaseException:
            client.close()
            raise

    def _start(
        self,
        client: docker.DockerClient,
        config: BenchmarkConfig,
        cfg: ContainerConfig,
        slots: int,
        log_dir: Path,
        model_cache: Path,
        launch: LaunchOptions,
    ) -> RunningEngine:
        where = describe_host(cfg.docker_host)
        removed = remove_leftovers(client)
        if removed:
            launch.report(
                EngineEvent(f"removed leftover containers of a crashed run: {', '.join(removed)}", warning=True)
            )
        image, reference = find_image(client, cfg.image, where)
        engine_kind = _engine_of(cfg, image, reference)
        recipe = recipe_for(engine_kind)
        if config.engine.protocol is not recipe.protocol:
            raise EngineError(
                f"image {reference!r} runs {engine_kind.value}, which speaks protocol {recipe.protocol.value!r}; "
                f"pass --protocol {CONTAINER_PROTOCOLS[engine_kind].value}"
            )
        local = is_local(cfg.docker_host)
        bind, connect = engine_address(cfg.docker_host)
        port = cfg.port or (free_port() if local else 18000 + secrets.randbelow(2000))
        plan = recipe.plan(config, slots, bind, port, model_cache, local)
        gpu = vendor_for(cfg.gpu.vendor).options(cfg.gpu, local)
        create = self._create_kwargs(cfg, plan, gpu.environment, launch, engine_kind, reference, port)
        container = client.containers.create(image.id, **create, **gpu.create_kwargs)
        handle = ContainerHandle(
            client, container, log_dir / f"container-{container.name}.log", where, cfg.stop_timeout_s, local
        )
        engine = RunningEngine(
            base_url=f"http://{connect}:{port}",
            info=EngineInfo(engine_kind.value, "unknown", plan.model_digest),
            log_path=handle.log_path,
            settings=dict(plan.settings),
            handle=handle,
            serving=dict(plan.serving),
            provenance={
                "image": reference,
                "image_digest": image.id,
                "container_settings": _container_settings(handle, image, create, gpu.settings),
            },
        )
        try:
            self._bring_up(engine, handle, config, recipe, plan, image, launch)
            if not local:
                engine.host_facts = daemon_host_facts(handle)
        except BaseException:
            self.stop(engine)
            raise
        return engine

    def _create_kwargs(
        self,
        cfg: ContainerConfig,
        plan: ContainerPlan,
        gpu_env: dict[str, str],
        launch: LaunchOptions,
        engine_kind: ContainerEngine,
        reference: str,
        port: int,
    ) -> dict[str, Any]:
        labels = tcobench_labels(
            "engine", launch.batch_id, {_ENGINE_LABEL: engine_kind.value, "io.tcobench.image": reference}
        )
        return {
            "command": plan.command,
            "name": _container_name(launch.batch_id, port),
            "labels": labels,
            "network_mode": "host",
            "environment": {**plan.environment, **gpu_env, **cfg.env},
            "volumes": plan.volumes,
            "detach": True,
        }

    def _bring_up(
        self,
        engine: RunningEngine,
        handle: ContainerHandle,
        config: BenchmarkConfig,
        recipe: Recipe,
        plan: ContainerPlan,
        image: Image,
        launch: LaunchOptions,
    ) -> None:
        try:
            handle.container.start()
        except APIError as exc:
            raise EngineError(f"{handle.label} could not start: {' '.join(str(exc).split())}") from exc
        launch.report(EngineEvent(f"{handle.label} started; waiting for {engine.base_url}{plan.health_path}"))
        _wait_healthy(handle, engine.base_url + plan.health_path, config.engine.startup_timeout_s)
        engine.settings.update(recipe.prepare(config, engine.base_url, launch))
        engine.info = recipe.identify(config, engine.base_url, image.labels or {}, plan)

    def telemetry_access(self, engine: RunningEngine) -> tuple[Runner | None, bool]:
        handle: ContainerHandle = engine.handle
        return handle.exec_stdout, not handle.local

    def stop(self, engine: RunningEngine) -> None:
        handle: ContainerHandle | None = engine.handle
        if handle is None:
            return
        try:
            handle.save_logs()
            remove_container(handle.container, timeout_s=handle.stop_timeout_s)
        except (DockerException, OSError):
            pass  # the daemon went away: nothing left to stop from here
        finally:
            handle.client.close()
            engine.handle = None

    def alive_error(self, engine: RunningEngine, settle_s: float = 0.0) -> str | None:
        handle: ContainerHandle | None = engine.handle
        if handle is None:
            return None
        return handle.exit_error("during the run", settle_s)

    def runs_elsewhere(self, config: BenchmarkConfig) -> bool:
        return config.engine.container is None or not is_local(config.engine.container.docker_host)

    def placement(self, engine: RunningEngine) -> ClientPlacement | None:
        """An engine on another Docker host is across the network, whatever its address looks like from here."""
        handle: ContainerHandle | None = engine.handle
        if handle is not None and not handle.local:
            return ClientPlacement.network
        return super().placement(engine)
