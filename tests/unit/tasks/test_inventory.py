from __future__ import annotations

from pathlib import Path

import pytest

from tcobench.errors import ConfigError, PricingError
from tcobench.schemas import EngineKind, SamplerKind
from tcobench.tasks.inventory import load_plan
from tcobench.tasks.prices import load_prices

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_examples_expand_to_one_cell_per_host() -> None:
    plan = load_plan(
        EXAMPLES / "inventory.toml", [EXAMPLES / "matrix-nvidia.toml", EXAMPLES / "matrix-amd.toml"], load_prices(None)
    )
    assert [c.label for c in plan.cells] == [
        "gpu-nv-01/ollama/llama3.2:3b/short-prompts",
        "gpu-amd-01/ollama/llama3.2:3b/short-prompts",
    ]
    nv, amd = plan.cells
    assert nv.config.engine.kind is EngineKind.container and nv.config.engine.container is not None
    assert nv.config.engine.container.image == "ollama-cuda" and nv.config.pricing.hardware == "nvidia-h200-sxm"
    assert amd.config.engine.container is not None and amd.config.engine.container.gpu.group_add == (44, 109)
    assert nv.config.telemetry.sampler is SamplerKind.auto  # remote host: nvidia-smi inside its engine container
    assert plan.cells_of("gpu-amd-01") == [amd]
    # the inventory's declared hardware and the matrix's engine label travel with each cell to its runs
    assert nv.config.engine.label == "ollama" and nv.config.declared is not None
    assert (nv.config.declared.vendor, nv.config.declared.gpu_model, nv.config.declared.gpu_count) == (
        "nvidia",
        "H200",
        1,
    )
    assert amd.config.declared is not None and amd.config.declared.vendor == "amd"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, "utf-8")
    return path


HOST = '[[hosts]]\nname = "{name}"\nvendor = "{vendor}"\nhardware = "{hw}"\n'
MATRIX = (
    '[[engines]]\nname = "llama"\nimage = "llama-cpp-cpu"\n[[models]]\nname = "gemma-3-270m-q4_k_m"\n'
    '[[workloads]]\nname = "w"\nrequests = 2\n'
)


@pytest.mark.parametrize(
    ("inventory", "matrix", "error", "needle"),
    [
        (
            HOST.format(name="a", vendor="tpu", hw="cpu-generic-2c"),
            MATRIX,
            ConfigError,
            "inventory.toml: hosts.0.vendor: input should be 'cpu', 'nvidia' or 'amd', got 'tpu'",
        ),
        (
            HOST.format(name="a", vendor="cpu", hw="cpu-generic-2c") * 2,
            MATRIX,
            ConfigError,
            "host names must be unique; repeated: a",
        ),
        (HOST.format(name="a b", vendor="cpu", hw="cpu-generic-2c"), MATRIX, ConfigError, "hosts.0.name"),
        (
            HOST.format(name="a", vendor="cpu", hw="nope"),
            MATRIX,
            PricingError,
            "inventory.toml: hosts.0.hardware (host a): no row 'nope'",
        ),  # the inventory, not the matrix (issue 29)
        (
            HOST.format(name="a", vendor="nvidia", hw="cpu-generic-2c"),
            'vendor = "amd"\n' + MATRIX,
            ConfigError,
            "host(s) a match no engine",
        ),
        (
            HOST.format(name="a", vendor="cpu", hw="cpu-generic-2c"),
            MATRIX.replace("requests = 2", "requests = -1"),
            ConfigError,
            "matrix.toml: workloads.0.requests: -1 is not > 0",
        ),
        (
            HOST.format(name="a", vendor="cpu", hw="cpu-generic-2c"),
            MATRIX + "[workloads.extra_body]\nmodel = 1\n",
            ConfigError,
            "matrix.toml: workloads.0.extra_body: model: set by tcobench from the workload",
        ),
        (
            HOST.format(name="a", vendor="cpu", hw="cpu-generic-2c") + 'docker_host = "http://x"\n',
            MATRIX,
            ConfigError,
            "hosts.0.docker_host: must start with unix://",
        ),
    ],
)
def test_bad_plan_names_file_and_field(
    tmp_path: Path, inventory: str, matrix: str, error: type[Exception], needle: str
) -> None:
    inv, mat = write(tmp_path, "inventory.toml", inventory), write(tmp_path, "matrix.toml", matrix)
    with pytest.raises(error) as info:
        load_plan(inv, [mat], load_prices(None))
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_matrix_workload_extra_body_reaches_the_cell(tmp_path: Path) -> None:
    inv = write(tmp_path, "inventory.toml", HOST.format(name="a", vendor="cpu", hw="cpu-generic-2c"))
    mat = write(tmp_path, "matrix.toml", MATRIX + '[workloads.extra_body]\nsamplers = ["temperature"]\n')
    (cell,) = load_plan(inv, [mat], load_prices(None)).cells
    assert cell.config.workload.extra_body == {"samplers": ["temperature"]}


def test_no_matrix(tmp_path: Path) -> None:
    inv = write(tmp_path, "inventory.toml", HOST.format(name="a", vendor="cpu", hw="cpu-generic-2c"))
    with pytest.raises(ConfigError, match="at least one matrix"):
        load_plan(inv, [], load_prices(None))


FLEET = "[fleet]\npickup_timeout_s = 30\n"
ZERO = '[[engines]]\nname = "zero"\nendpoint = "{url}"\n[[models]]\nname = "zero"\n[[workloads]]\nname = "w"\n'


def test_fleet_table_engines_per_host_and_embedded(tmp_path: Path) -> None:
    inventory = (
        FLEET
        + HOST.format(name="a", vendor="cpu", hw="cpu-generic-2c")
        + HOST.format(name="b", vendor="cpu", hw="cpu-generic-2c")
    )
    matrix = (
        '[[engines]]\nname = "zero-a"\nendpoint = "http://127.0.0.1:9001"\nhosts = ["a"]\n'
        '[[engines]]\nname = "llama"\nembedded = true\nhosts = ["b"]\n'
        '[[models]]\nname = "gemma-3-270m-q4_k_m"\n[[workloads]]\nname = "w"\n'
    )
    plan = load_plan(write(tmp_path, "i.toml", inventory), [write(tmp_path, "m.toml", matrix)], load_prices(None))
    assert plan.inventory.fleet is not None and plan.inventory.fleet.pickup_timeout_s == 30
    assert plan.inventory.fleet.work_pool == "tcobench-fleet"
    assert [c.label for c in plan.cells] == ["a/zero-a/gemma-3-270m-q4_k_m/w", "b/llama/gemma-3-270m-q4_k_m/w"]
    assert plan.cells[1].config.engine.kind is EngineKind.embedded


def test_matrix_engine_kind_vllm_starts_vllm_on_the_host(tmp_path: Path) -> None:
    inventory = HOST.format(name="a", vendor="cpu", hw="cpu-generic-2c")
    matrix = (
        '[[engines]]\nname = "vllm-tiny"\nkind = "vllm"\n[engines.vllm]\npython = "/opt/vllm/bin/python"\n'
        'max_model_len = 1024\n[[models]]\nname = "synthetic-tiny"\nshape = "tiny"\n[[workloads]]\nname = "w"\n'
    )
    plan = load_plan(write(tmp_path, "i.toml", inventory), [write(tmp_path, "m.toml", matrix)], load_prices(None))
    (cell,) = plan.cells
    engine = cell.config.engine
    assert engine.kind is EngineKind.vllm and engine.label == "vllm-tiny"
    assert str(engine.vllm.python) == "/opt/vllm/bin/python" and engine.vllm.max_model_len == 1024
    assert cell.config.model.shape == "tiny"


@pytest.mark.parametrize(
    ("inventory", "matrix", "needle"),
    [
        (
            FLEET + HOST.format(name="a", vendor="cpu", hw="cpu-generic-2c"),
            ZERO.format(url="http://10.1.2.3:8000"),
            "fleet mode: cell a/zero/zero/w: endpoint 'http://10.1.2.3:8000' is not on the host's loopback interface",
        ),
        (
            FLEET + HOST.format(name="a", vendor="cpu", hw="cpu-generic-2c") + 'docker_host = "ssh://u@gpu-1"\n',
            ZERO.format(url="http://127.0.0.1:1"),
            "docker_host 'ssh://u@gpu-1' is a remote daemon",
        ),
        (
            FLEET + HOST.format(name="control", vendor="cpu", hw="cpu-generic-2c"),
            ZERO.format(url="http://127.0.0.1:1"),
            "host name 'control' is the nightly's own work queue",
        ),
        (
            FLEET.replace("30", "0") + HOST.format(name="a", vendor="cpu", hw="cpu-generic-2c"),
            ZERO.format(url="http://127.0.0.1:1"),
            "fleet.pickup_timeout_s: 0 is not > 0",
        ),
        (
            HOST.format(name="a", vendor="cpu", hw="cpu-generic-2c"),
            ZERO.format(url="http://127.0.0.1:1").replace(
                'name = "zero"\nendpoint', 'name = "zero"\nhosts = ["x"]\nendpoint', 1
            ),
            "engines.0.hosts: 'x' not in the inventory",
        ),
        (
            HOST.format(name="a", vendor="cpu", hw="cpu-generic-2c"),
            '[[engines]]\nname = "e"\nembedded = true\nimage = "x"\n'
            '[[models]]\nname = "m"\n[[workloads]]\nname = "w"\n',
            "give exactly one of image (a container), endpoint (a running server), embedded = true or kind",
        ),
    ],
)
def test_fleet_plan_refuses_what_cannot_run_on_the_host(
    tmp_path: Path, inventory: str, matrix: str, needle: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load_plan(write(tmp_path, "i.toml", inventory), [write(tmp_path, "m.toml", matrix)], load_prices(None))
    assert needle in str(info.value), str(info.value)


def test_the_fleet_example_expands_like_the_in_process_one() -> None:
    matrices = [EXAMPLES / "matrix-nvidia.toml", EXAMPLES / "matrix-amd.toml"]
    fleet = load_plan(EXAMPLES / "inventory-fleet.toml", matrices, load_prices(None))
    local = load_plan(EXAMPLES / "inventory.toml", matrices, load_prices(None))
    assert fleet.inventory.fleet is not None and local.inventory.fleet is None
    assert [c.label for c in fleet.cells] == [c.label for c in local.cells]
    for cell in fleet.cells:  # the local Docker socket of the host that runs the cell
        assert cell.config.engine.container is not None and cell.config.engine.container.docker_host is None


TRACE_MATRIX = (
    '[[engines]]\nname = "llama"\nimage = "llama-cpp-cpu"\n[[models]]\nname = "gemma-3-270m-q4_k_m"\n'
    '[[workloads]]\nname = "replay"\ntrace = {{ path = "{path}"{extra} }}\n'
)
GOOD_LINES = '{"timestamp": 0, "prompt": "a"}\n{"timestamp": 500, "prompt": "b"}\n'


@pytest.mark.parametrize(
    ("lines", "extra", "needle"),
    [
        (None, "", "no such file"),
        ('{"timestamp": 0, "prompt": "a"}\n{"timestamp": "x", "prompt": "b"}\n', "", "t.jsonl: line 2: "),
        ('{"timestamp": 500, "prompt": "a"}\n{"timestamp": 0, "prompt": "b"}\n', "", "line 2: timestamp 0 ms is"),
        (GOOD_LINES, ", window_s = [5, 9]", "the window 5,9 holds no requests to replay"),
        (GOOD_LINES, ", max_requests = 1", "line 2: the trace has more than --max-requests 1 requests"),
    ],
)
def test_a_matrix_trace_is_checked_before_the_night(tmp_path: Path, lines: str | None, extra: str, needle: str) -> None:
    trace = tmp_path / "t.jsonl"
    if lines is not None:
        trace.write_text(lines, "utf-8")
    inv = write(tmp_path, "inventory.toml", HOST.format(name="a", vendor="cpu", hw="cpu-generic-2c"))
    mat = write(tmp_path, "matrix.toml", TRACE_MATRIX.format(path=trace, extra=extra))
    with pytest.raises(ConfigError) as info:
        load_plan(inv, [mat], load_prices(None))
    message = str(info.value)
    assert message.startswith(f"{mat}: workload replay: trace {trace}: ") and "\n" not in message
    assert needle in message


def test_a_good_matrix_trace_passes(tmp_path: Path) -> None:
    trace = write(tmp_path, "t.jsonl", GOOD_LINES)
    inv = write(tmp_path, "inventory.toml", HOST.format(name="a", vendor="cpu", hw="cpu-generic-2c"))
    mat = write(tmp_path, "matrix.toml", TRACE_MATRIX.format(path=trace, extra=", time_scale = 0.5"))
    (cell,) = load_plan(inv, [mat], load_prices(None)).cells
    assert cell.config.workload.trace is not None and cell.config.workload.trace.time_scale == 0.5
