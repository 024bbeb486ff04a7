"""The Docker side of the command line: `tcobench images build|list|push`, `tcobench doctor`, and the
`run --image/--docker-host/--gpu-vendor/--gpus` options. A thin face: parse, call, print.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from tcobench.cli._common import StoreOpt, err, guard, out, prefect_defaults, settings_for
from tcobench.cli._fit import Col, print_table
from tcobench.cli._progress import log_line
from tcobench.errors import DoctorError
from tcobench.schemas import GpuVendor

if TYPE_CHECKING:
    from rich.progress import Progress

    from tcobench.tasks.engine import OnEvent

__all__ = ["container_overrides", "engine_event_printer", "register"]

DockerHostOpt = Annotated[
    str | None,
    typer.Option(
        "--docker-host",
        help="unix:///path.sock, tcp://host:2376 (TLS from DOCKER_CERT_PATH) or "
        "ssh://user@host [DOCKER_HOST or the local socket].",
    ),
]
_STATUS_STYLE = {"ok": "green", "warn": "yellow", "fail": "bold red", "skip": "dim"}


def _gpu_overrides(vendor: GpuVendor | None, gpus: str | None) -> dict[str, Any]:
    if gpus is None:
        return {"vendor": vendor.value if vendor else None}
    if vendor in (None, GpuVendor.cpu):
        raise typer.BadParameter("--gpus needs --gpu-vendor nvidia or amd", param_hint="--gpus")
    gpu: dict[str, Any] = {"vendor": vendor.value}
    if gpus.startswith("device="):
        gpu["device_ids"] = [d.strip() for d in gpus.removeprefix("device=").split(",") if d.strip()]
    elif gpus == "all":
        gpu["count"] = -1 if vendor is GpuVendor.nvidia else None
    elif gpus.isdigit() and vendor is GpuVendor.nvidia:
        gpu["count"] = int(gpus)
    else:
        raise typer.BadParameter(f"{gpus!r}: use all, a count (NVIDIA) or device=ID,...", param_hint="--gpus")
    return gpu


def container_overrides(
    image: str | None, docker_host: str | None, vendor: GpuVendor | None, gpus: str | None
) -> dict[str, Any] | None:
    """The engine.container part of the run overrides (None when --image is not given)."""
    if image is None:
        for name, value in (("--docker-host", docker_host), ("--gpu-vendor", vendor), ("--gpus", gpus)):
            if value is not None:
                raise typer.BadParameter(f"{name} needs --image (the engine image to start)", param_hint=name)
        return None
    return {"image": image, "docker_host": docker_host, "gpu": _gpu_overrides(vendor, gpus)}


def engine_event_printer(progress: Progress) -> OnEvent:
    """Show engine start-up events: pulls as a progress bar (without a terminal: a line per 10% and per layer),
    warnings and steps as lines."""
    from tcobench.tasks.engine import EngineEvent

    bars: dict[str, Any] = {}
    tenths: dict[str, int] = {}
    plain = log_line(err)

    def on_event(event: EngineEvent) -> None:
        if event.total and not err.is_terminal:
            key = event.message.split(":", 1)[0]
            tenth = 10 * (event.completed or 0) // event.total
            if tenths.get(key) != tenth:
                tenths[key] = tenth
                plain(f"{event.message[:100]}: {event.completed or 0:,}/{event.total:,} ({tenth * 10}%)")
        elif event.total:
            key = event.message.split(":", 1)[0]
            if key not in bars:
                bars[key] = progress.add_task(key, total=event.total)
                if not progress.live.is_started:
                    progress.start()
            progress.update(
                bars[key], completed=event.completed or 0, total=event.total, description=escape(event.message[:60])
            )
        elif event.warning:
            err.print(f"[yellow]warning[/]: {escape(event.message)}", soft_wrap=True)
        else:
            err.print(f"[dim]{escape(event.message)}[/]", soft_wrap=True)

    return on_event


def _parse_build_args(pairs: list[str] | None) -> dict[str, str]:
    args = {}
    for pair in pairs or []:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise typer.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--build-arg")
        args[key] = value
    return args


def _registry(registry: str | None, settings_registry: str | None) -> str:
    chosen = registry or settings_registry
    if not chosen:
        raise typer.BadParameter("give --registry (or TCOBENCH_REGISTRY)", param_hint="--registry")
    return chosen


def _gib(size: int | None) -> str:
    return "-" if size is None else f"{size / 2**30:.2f} GiB"


def _images_build(
    names: Annotated[list[str] | None, typer.Argument(help=r"Catalog images to build \[all].")] = None,
    build_arg: Annotated[list[str] | None, typer.Option("--build-arg", help="KEY=VALUE; repeatable.")] = None,
    force: Annotated[bool, typer.Option(help="Build even when the spec hash is unchanged.")] = False,
    push: Annotated[bool, typer.Option(help="Push to --registry after the smoke test.")] = False,
    registry: Annotated[str | None, typer.Option(help=r"Registry to push to \[TCOBENCH_REGISTRY].")] = None,
    gpu_check: Annotated[bool, typer.Option(help="On a GPU host, check the GPU is visible inside.")] = True,
    no_prefect: Annotated[bool, typer.Option("--no-prefect", help="Run without Prefect (faster start).")] = False,
    docker_host: DockerHostOpt = None,
    store: StoreOpt = None,
) -> None:
    """Build catalog images (skipping unchanged ones), smoke-test them, optionally push; record each in `images`."""
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    settings = settings_for(store, no_prefect)
    overrides = _parse_build_args(build_arg)
    target = _registry(registry, settings.registry) if push else None
    prefect_defaults()  # before importing tcobench.flows, which imports Prefect when it is enabled
    from tcobench.flows import use_settings

    use_settings(settings)
    from tcobench.flows import rebuild_images

    progress = Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=err, transient=True
    )
    line = progress.add_task("preparing the build", total=None)

    plain = log_line(err)

    def on_log(text: str) -> None:
        if not err.is_terminal:  # cron, CI, a pipe: the build's own lines, time-stamped
            if text.strip():
                plain(text.strip())
            return
        if not progress.live.is_started:
            progress.start()
        progress.update(line, description=escape(text.strip()[:100]))

    try:
        results = rebuild_images(
            settings.store, settings.docker_dir, names or [], overrides, force, target, docker_host, gpu_check, on_log
        )
    finally:
        if progress.live.is_started:
            progress.stop()
    cols = [
        Col("image", "left"),
        Col("action", "left"),
        Col("reference", "left", wrap=True),
        Col("image id", "left", drop=2),
        Col("size", drop=3),
        Col("build s", drop=4),
        Col("engine reports", "left", wrap=True, drop=1),
        Col("pushed as", "left", wrap=True, drop=5),
    ]
    rows = [
        [
            escape(r.outcome.spec.name),
            r.outcome.action,
            escape(r.outcome.reference),
            r.outcome.image_id[7:19],
            _gib(r.outcome.size_bytes),
            f"{r.outcome.build_ns / 1e9:.1f}",
            escape(r.smoke_version),
            escape(r.repo_digest or "-"),
        ]
        for r in results
    ]
    print_table("Engine images", cols, rows)
    for r in results:
        out.print(
            f"{r.outcome.spec.name}: {r.outcome.action} {r.outcome.reference} {r.outcome.image_id} "
            f"(spec hash {r.outcome.spec_hash[:12]})",
            highlight=False,
            soft_wrap=True,
        )


def _images_list(docker_host: DockerHostOpt = None) -> None:
    """The catalog and what the Docker host has of it.

    Without a Docker daemon to ask, the catalog alone (built: ?) and one warning line saying the daemon is not
    reachable; exit 0 either way."""
    from tcobench.errors import ImageError
    from tcobench.images import catalog_status, load_catalog
    from tcobench.tasks.host.docker_client import docker_client

    settings = settings_for(None)
    catalog = load_catalog()  # a bad catalog is an error of its own, daemon or not
    try:
        client = docker_client(docker_host, ImageError)
    except ImageError as exc:
        client = None
        err.print(
            f"[yellow]warning[/]: {escape(str(exc).split('; is dockerd running')[0])}; the catalog is listed without "
            "what the host has built (built: ?)",
            highlight=False,
            soft_wrap=True,
        )
    try:
        rows = catalog_status(client, catalog, settings.docker_dir)
    finally:
        if client is not None:
            client.close()
    # names and references never break mid-word: they wrap at separators, and the least needed columns go first
    cols = [
        Col("image", "left"),
        Col("engine", "left", drop=2),
        Col("vendor", "left", drop=3),
        Col("reference", "left", wrap=True),
        Col("built", "left"),
        Col("image id", "left", drop=5),
        Col("size", drop=4),
        Col("spec hash", "left", drop=6),
        Col("built at", "left", wrap=True, drop=7),
        Col("repo digests", "left", wrap=True, drop=8),
    ]
    cells = [
        [
            escape(r.name),
            escape(r.engine),
            escape(r.vendor),
            escape(r.reference),
            "?" if r.present is None else "yes" if r.present else "no",
            (r.image_id or "-")[7:19] or "-",
            _gib(r.size_bytes),
            (r.spec_hash or "-")[:12],
            escape(r.build_time or "-"),
            escape(", ".join(r.repo_digests) or "-"),
        ]
        for r in rows
    ]
    print_table("Image catalog", cols, cells)


def _images_push(
    names: Annotated[list[str] | None, typer.Argument(help=r"Catalog images to push \[all built ones].")] = None,
    registry: Annotated[str | None, typer.Option(help=r"Registry, e.g. 127.0.0.1:5000 \[TCOBENCH_REGISTRY].")] = None,
    docker_host: DockerHostOpt = None,
    store: StoreOpt = None,
) -> None:
    """Push already built catalog images to a registry; record each push in `images`."""
    from tcobench.errors import ImageError
    from tcobench.images import built_outcome, image_record, load_catalog, push_image, select
    from tcobench.tasks.host.docker_client import docker_client
    from tcobench.tasks.store.store import write_image_record

    settings = settings_for(store)
    target = _registry(registry, settings.registry)
    specs = select(load_catalog(), names or [])
    client = docker_client(docker_host, ImageError, timeout_s=3600)
    try:
        for spec in specs:
            outcome = built_outcome(client, spec, settings.docker_dir)
            digest = push_image(client, outcome, target)
            write_image_record(settings.store, image_record(outcome, docker_host, "pushed", digest))
            out.print(f"{spec.name}: pushed {digest}", highlight=False, soft_wrap=True)
    finally:
        client.close()


def _doctor(
    docker_host: DockerHostOpt = None,
    min_free_gb: Annotated[float, typer.Option(help="Free disk the daemon's data root needs, GiB.")] = 30.0,
) -> None:
    """Preflight checks of a Docker host: daemon, NVIDIA runtime and driver, /dev/kfd, /dev/dri, groups, disk."""
    from tcobench.tasks.host.doctor import run_doctor

    checks = run_doctor(docker_host, int(min_free_gb * 2**30))
    from tcobench.settings import docker_host as default_host

    title = f"tcobench doctor: {docker_host or default_host() or 'local Docker'}"
    cols = [Col("check", "left"), Col("status", "left"), Col("finding", "left", wrap=True)]
    rows = [
        [escape(c.name), f"[{_STATUS_STYLE[c.status.value]}]{c.status.value}[/]", escape(c.message)] for c in checks
    ]
    print_table(escape(title), cols, rows)
    failed = [c for c in checks if c.status.value == "fail"]
    if failed:
        raise DoctorError(f"{len(failed)} check(s) failed: {', '.join(c.name for c in failed)}")


def register(app: typer.Typer) -> None:
    images = typer.Typer(
        help="Build, list and push the pinned engine images (docker/, images/catalog.toml).", no_args_is_help=False
    )
    images.command("build")(guard(_images_build))
    images.command("list")(guard(_images_list))
    images.command("push")(guard(_images_push))
    app.add_typer(images, name="images")
    app.command("doctor")(guard(_doctor))
