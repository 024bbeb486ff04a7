"""Datasets: JSONL and ShareGPT layouts streamed with an offset index, seeded sampling, bad lines named."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from tcobench.errors import ConfigError
from tcobench.schemas import DatasetConfig, Phase, WorkloadConfig
from tcobench.tasks.workload import WorkloadPlan, open_dataset

EXAMPLE = Path(str(resources.files("tcobench.tasks.workload").joinpath("data/example-chat.jsonl")))


def dataset_config(path: Path, **kw: Any) -> DatasetConfig:
    return DatasetConfig.model_validate_json(json.dumps({"path": str(path), **kw}))


def write_lines(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def test_the_shipped_example_reads_every_layout() -> None:
    data = open_dataset(dataset_config(EXAMPLE), turns=1, max_output=2048)
    records = [data.record(i) for i in range(data.records)]
    assert data.records == 12
    assert records[0].prompt is not None and records[0].output_tokens == 96
    assert records[2].messages is not None and records[2].messages[0]["role"] == "system"
    conversation = records[8]
    assert len(conversation.user_turns) == 2 and conversation.replies[1] is not None
    assert len(data.sha256) == 64


def test_seeded_order_is_a_permutation_and_reproducible(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "d.jsonl", [{"prompt": f"p{i}"} for i in range(97)])
    data = open_dataset(dataset_config(path), 1, 2048)
    first_lap = [data.pick(42, i) for i in range(97)]
    assert sorted(first_lap) == list(range(97))  # every record once per pass over the file
    assert first_lap == [data.pick(42, i) for i in range(97)]
    assert first_lap != [data.pick(43, i) for i in range(97)]
    assert [data.pick(42, i) for i in range(97, 194)] != first_lap  # the next pass is another order
    sequential = open_dataset(dataset_config(path, order="sequential"), 1, 2048)
    assert [sequential.pick(42, i) for i in range(100)] == [i % 97 for i in range(100)]


def test_requests_take_the_records_output_tokens(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "d.jsonl", [{"prompt": "a", "output_tokens": 7}, {"messages": [{"role": "user", "content": "b"}]}]
    )
    workload = WorkloadConfig.model_validate_json(
        json.dumps({"dataset": {"path": str(path), "order": "sequential"}, "max_tokens": 33})
    )
    plan = WorkloadPlan(workload, dataset=open_dataset(workload.dataset, 1, 2048))  # type: ignore[arg-type]
    a, b = plan.spec(Phase.measure, 0), plan.spec(Phase.measure, 1)
    assert (a.user, a.output_tokens, b.output_tokens) == ("a", 7, 33)
    given = plan.request_input(b, [])
    assert given.messages == [{"role": "user", "content": "b"}] and given.text == "b"


def test_sharegpt_json_array_is_streamed(tmp_path: Path) -> None:
    rows = [
        {"id": str(i), "conversations": [{"from": "human", "value": f"q{i} é"}, {"from": "gpt", "value": "a"}]}
        for i in range(300)
    ]
    path = tmp_path / "sharegpt.json"
    path.write_text(json.dumps(rows, indent=1, ensure_ascii=False), "utf-8")
    data = open_dataset(dataset_config(path), 1, 2048)
    assert data.records == 300 and data.array_layout
    assert data.record(0).user_turns == ("q0 é",) and data.record(299).user_turns == ("q299 é",)


@pytest.mark.parametrize(
    ("lines", "needle"),
    [
        (['{"prompt": "ok"}', "{not json"], "line 2: not JSON"),
        (['{"prompt": "ok"}', "", '{"text": "x"}'], 'line 3: needs "prompt" (string) or "messages"'),
        (['{"prompt": "ok", "output_tokens": 0}'], 'line 1: "output_tokens" must be a positive integer'),
        (['{"prompt": "ok", "output_tokens": 9000}'], "larger than the context (num_ctx 2048)"),
        (['{"messages": [{"role": "wizard", "content": "x"}]}'], 'each message needs "role"'),
        (['{"conversations": [{"from": "gpt", "value": "x"}]}'], 'no "human" turn'),
        (["[1, 2]"], "line 1: not a JSON object"),
    ],
)
def test_bad_lines_are_named_with_their_number(tmp_path: Path, lines: list[str], needle: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    with pytest.raises(ConfigError, match="dataset .*bad.jsonl") as info:
        open_dataset(dataset_config(path), 1, 2048)
    assert needle in str(info.value)


def test_turns_need_conversations_and_files_must_exist(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "d.jsonl", [{"prompt": "a"}])
    with pytest.raises(ConfigError, match="turns = 2 needs ShareGPT conversations"):
        open_dataset(dataset_config(path), 2, 2048)
    with pytest.raises(ConfigError, match="does not exist"):
        open_dataset(dataset_config(tmp_path / "none.jsonl"), 1, 2048)
    (tmp_path / "empty.jsonl").write_text("\n\n", "utf-8")
    with pytest.raises(ConfigError, match="no records"):
        open_dataset(dataset_config(tmp_path / "empty.jsonl"), 1, 2048)


def test_records_read_from_many_threads_at_once_are_the_records_asked_for(tmp_path: Path) -> None:
    """The run builds request specs in worker threads (measure: asyncio.to_thread(plan.spec)); the file handle is
    shared, so a seek by one thread between another's seek and read would give a request another record. CI once
    stored prompt_index 8 with record 2's output length that way. Fresh datasets (the handle opens on first use)
    and a tiny switch interval make the threads meet at the first read."""
    import sys
    import threading

    path = write_lines(tmp_path / "d.jsonl", [{"prompt": f"p{i}", "output_tokens": i + 1} for i in range(16)])
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(100):
            data = open_dataset(dataset_config(path), 1, 2048)
            start = threading.Barrier(8)
            got: dict[int, list[int | None]] = {}

            def read(first: int, data: Any = data, start: threading.Barrier = start, got: Any = got) -> None:
                start.wait()
                got[first] = [data.record((first + k) % 16).output_tokens for k in range(16)]

            threads = [threading.Thread(target=read, args=(i,)) for i in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            data.close()
            assert got == {i: [(i + k) % 16 + 1 for k in range(16)] for i in range(8)}
    finally:
        sys.setswitchinterval(interval)
