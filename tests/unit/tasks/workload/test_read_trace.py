"""read_trace: the three trace formats streamed into typed requests on the replay's clock, and each bad input refused
in one line naming the file and the line.

The fixtures are generated from the formats' published column definitions, written below as data (``COLUMNS``):
each column's name and kind, as its source defines it. A generated file has every published column and nothing else.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import random
from pathlib import Path
from typing import Any

import pytest

from tcobench.errors import ConfigError
from tcobench.schemas import MOONCAKE_BLOCK_TOKENS, TraceConfig, TraceFormat, TraceRequest
from tcobench.tasks.workload import open_trace

# The published column definitions: (column, kind). Kinds: ms (arrival, milliseconds), tokens (a token count),
# blocks (block hash ids, one per MOONCAKE_BLOCK_TOKENS input tokens), time (a UTC time, 100 ns ticks), text
# (a prompt), messages (chat messages).
COLUMNS: dict[TraceFormat, tuple[tuple[str, str], ...]] = {
    # kvcache-ai/Mooncake FAST25-release/README.md (the sample requests); ai-dynamo/dynamo
    # benchmarks/data_generator/README.md ("Timestamp: the arrival time (in milliseconds) of the request since the
    # first request"; "block_size ... assumed to be 512")
    TraceFormat.mooncake: (
        ("timestamp", "ms"),
        ("input_length", "tokens"),
        ("output_length", "tokens"),
        ("hash_ids", "blocks"),
    ),
    # Azure/AzurePublicDataset AzureLLMInferenceDataset2023.md, "Schema": TIMESTAMP (invocation time), ContextTokens
    # (number of context tokens), GeneratedTokens (number of generated tokens)
    TraceFormat.azure: (("TIMESTAMP", "time"), ("ContextTokens", "tokens"), ("GeneratedTokens", "tokens")),
    # docs/traces.md (tcobench's own: the --dataset JSONL with arrival times)
    TraceFormat.tcobench: (("timestamp", "ms"), ("prompt", "text"), ("output_tokens", "tokens")),
}
_EPOCH = dt.datetime(2023, 11, 16, 18, 15, 46, tzinfo=dt.UTC)


def _value(kind: str, i: int, rng: random.Random, row: dict[str, Any]) -> Any:
    """Row i's value of a column of ``kind`` (arrivals 0, 250, 500, ... ms; lengths drawn)."""
    if kind == "ms":
        return 250 * i
    if kind == "time":
        when = _EPOCH + dt.timedelta(milliseconds=250 * i, microseconds=rng.randrange(1000))
        return when.strftime("%Y-%m-%d %H:%M:%S.%f") + str(rng.randrange(10))  # 7 digits, as the 2023 traces
    if kind == "tokens":
        return rng.randrange(1, 4000)
    if kind == "blocks":  # as Mooncake: a shared first block, then ids of the request's own
        length = row["input_length"]
        return [0] + [1000 + 100 * i + j for j in range(-(-length // MOONCAKE_BLOCK_TOKENS) - 1)]
    if kind == "text":
        return f"question {i}"
    raise AssertionError(kind)


def generate(fmt: TraceFormat, n: int, seed: int = 1) -> list[dict[str, Any]]:
    """``n`` rows of ``fmt`` with every published column, in arrival order."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        row: dict[str, Any] = {}
        for name, kind in COLUMNS[fmt]:
            row[name] = _value(kind, i, rng, row)
        rows.append(row)
    return rows


def write(path: Path, fmt: TraceFormat, rows: list[dict[str, Any]]) -> Path:
    """The rows as ``fmt`` writes them: JSON lines, or CSV with a header."""
    if fmt is TraceFormat.azure:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        path.write_text(buffer.getvalue(), "utf-8")
    else:
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    return path


def read(path: Path, **config: Any) -> list[TraceRequest]:
    return list(open_trace(TraceConfig(path=path, **config)).requests())


def refused(path: Path, **config: Any) -> str:
    with pytest.raises(ConfigError) as caught:
        read(path, **config)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    return message


def test_mooncake_rows_become_requests_with_their_blocks(tmp_path: Path) -> None:
    rows = generate(TraceFormat.mooncake, 40)
    trace = open_trace(TraceConfig(path=write(tmp_path / "m.jsonl", TraceFormat.mooncake, rows)))
    got = list(trace.requests())
    assert trace.format is TraceFormat.mooncake
    assert [r.line for r in got] == list(range(1, 41))
    assert [r.at_ns for r in got] == [row["timestamp"] * 1_000_000 for row in rows]
    assert [(r.input_tokens, r.output_tokens, list(r.hash_ids)) for r in got] == [
        (row["input_length"], row["output_length"], row["hash_ids"]) for row in rows
    ]
    assert all(r.prompt is None and r.messages is None for r in got)


def test_azure_rows_keep_their_100_ns_ticks(tmp_path: Path) -> None:
    rows = generate(TraceFormat.azure, 30)
    got = read(write(tmp_path / "a.csv", TraceFormat.azure, rows))
    first = rows[0]["TIMESTAMP"]

    def ns(text: str) -> int:  # the published form, read independently of the reader: seconds, then 7 digits
        whole, fraction = text.split(".")
        seconds = dt.datetime.strptime(whole, "%Y-%m-%d %H:%M:%S").replace(tzinfo=dt.UTC).timestamp()
        return int(seconds) * 1_000_000_000 + int(fraction) * 100

    assert [r.at_ns for r in got] == [ns(row["TIMESTAMP"]) - ns(first) for row in rows]
    assert [(r.line, r.input_tokens, r.output_tokens) for r in got] == [
        (i + 2, row["ContextTokens"], row["GeneratedTokens"]) for i, row in enumerate(rows)
    ]
    assert all(r.hash_ids == () for r in got)


def test_azure_columns_are_found_by_name_among_others(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_text("GeneratedTokens,Region,TIMESTAMP,ContextTokens\n7,west,2023-11-16 18:15:46.6805900,99\n")
    (request,) = read(path)
    assert (request.input_tokens, request.output_tokens, request.at_ns) == (99, 7, 0)


def test_a_byte_order_mark_and_crlf_line_ends_are_read(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_bytes(b"\xef\xbb\xbfTIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:15:46.68,374,44\r\n")
    assert [(r.input_tokens, r.output_tokens) for r in read(path)] == [(374, 44)]


def test_tcobench_rows_carry_prompt_or_messages(tmp_path: Path) -> None:
    rows = generate(TraceFormat.tcobench, 3)
    rows[1] = {"timestamp": rows[1]["timestamp"], "messages": [{"role": "user", "content": "hi"}]}
    got = read(write(tmp_path / "t.jsonl", TraceFormat.tcobench, rows))
    assert (got[0].prompt, got[0].output_tokens) == (rows[0]["prompt"], rows[0]["output_tokens"])
    assert got[1].messages is not None and got[1].messages[0].content == "hi" and got[1].output_tokens is None
    assert [r.at_ns for r in got] == [0, 250_000_000, 500_000_000]


@pytest.mark.parametrize("fmt", list(TraceFormat))
def test_the_format_is_detected_from_the_first_line_or_given(tmp_path: Path, fmt: TraceFormat) -> None:
    path = write(tmp_path / "x", fmt, generate(fmt, 2))
    assert open_trace(TraceConfig(path=path)).format is fmt
    assert open_trace(TraceConfig(path=path, format=fmt)).format is fmt


def test_window_and_time_scale_put_requests_on_the_replay_clock(tmp_path: Path) -> None:
    path = write(tmp_path / "m.jsonl", TraceFormat.mooncake, generate(TraceFormat.mooncake, 40))
    got = read(path, window_s=(1.0, 2.0), time_scale=0.5)
    # arrivals every 250 ms: 1.0, 1.25, 1.5, 1.75 s are in [1, 2); replayed twice as fast from the window's start
    assert [r.line for r in got] == [5, 6, 7, 8]
    assert [r.at_ns for r in got] == [0, 125_000_000, 250_000_000, 375_000_000]


def test_lines_after_the_window_are_not_read(tmp_path: Path) -> None:
    path = write(tmp_path / "m.jsonl", TraceFormat.mooncake, generate(TraceFormat.mooncake, 10))
    with path.open("a") as handle:
        handle.write('{"timestamp": 99999, "input_length": -1, "output_length": 1}\n')
    assert len(read(path, window_s=(0.0, 1.0))) == 4


# -- bad input: one line naming the file and the line ---------------------------------------------------------------


def test_an_unknown_format_names_line_one_and_the_formats(tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("when,tokens\n1,2\n")
    message = refused(path)
    assert ": line 1: unknown format" in message and "mooncake" in message and "--trace-format" in message


@pytest.mark.parametrize(
    ("fmt", "drop", "line"),
    [
        (TraceFormat.azure, "GeneratedTokens", 1),
        (TraceFormat.mooncake, "output_length", 3),
        (TraceFormat.mooncake, "input_length", 1),
    ],
)
def test_a_missing_column_is_named(tmp_path: Path, fmt: TraceFormat, drop: str, line: int) -> None:
    rows = generate(fmt, 5)
    if fmt is TraceFormat.azure:  # the header names the columns
        rows = [{k: v for k, v in row.items() if k != drop} for row in rows]
    else:
        del rows[line - 1][drop]
    message = refused(write(tmp_path / "x", fmt, rows))  # detected, even from a first line that lacks a column
    assert f": line {line}: missing column {drop}" in message


def test_timestamps_going_backwards_are_refused_unless_sorted(tmp_path: Path) -> None:
    rows = generate(TraceFormat.mooncake, 6)
    rows[3]["timestamp"], rows[4]["timestamp"] = 1000, 500
    path = write(tmp_path / "m.jsonl", TraceFormat.mooncake, rows)
    message = refused(path)
    assert ": line 5: timestamp 500 ms is earlier than line 4's 1000 ms" in message and "--sort" in message
    got = read(path, sort=True)
    assert [r.line for r in got] == [1, 2, 3, 5, 4, 6]  # equal times keep the file's order
    assert [r.at_ns // 1_000_000 for r in got] == [0, 250, 500, 500, 1000, 1250]


@pytest.mark.parametrize("fmt", [TraceFormat.mooncake, TraceFormat.azure, TraceFormat.tcobench])
def test_a_negative_length_is_refused(tmp_path: Path, fmt: TraceFormat) -> None:
    rows = generate(fmt, 4)
    column = {TraceFormat.mooncake: "input_length", TraceFormat.azure: "ContextTokens"}.get(fmt, "output_tokens")
    rows[2][column] = -5
    message = refused(write(tmp_path / "x", fmt, rows))
    line = 4 if fmt is TraceFormat.azure else 3  # the CSV header is line 1
    assert f": line {line}: {column} = -5: " in message and "greater than or equal to 0" in message


def test_more_requests_than_max_requests_need_a_window(tmp_path: Path) -> None:
    path = write(tmp_path / "m.jsonl", TraceFormat.mooncake, generate(TraceFormat.mooncake, 20))
    message = refused(path, max_requests=10)
    assert ": line 11: the trace has more than --max-requests 10 requests" in message and "--trace-window" in message
    assert len(read(path, max_requests=10, window_s=(0.0, 2.5))) == 10


def test_a_line_that_is_not_a_row_is_named(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text('{"timestamp": 0, "input_length": 5, "output_length": 1}\n\n{\n')
    assert ": line 3: " in refused(path)


def test_a_carriage_return_inside_a_csv_cell_is_named(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_bytes(
        b"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,374,44\n2023-11-16 18:15:47,3\r7,4\n"
    )
    assert ": line 3: not a CSV row: new-line character seen in unquoted field" in refused(path)


def test_a_file_that_is_not_there_or_empty_is_named(tmp_path: Path) -> None:
    assert "no such file" in refused(tmp_path / "gone.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n")
    assert "no requests" in refused(tmp_path / "empty.jsonl")


def test_lines_parsed_together_still_name_the_bad_one(tmp_path: Path) -> None:
    rows = generate(TraceFormat.mooncake, 3000)  # more than one parse call's worth of lines
    lines = [json.dumps(row) for row in rows]
    lines[2499] = lines[2499] + "," + lines[2499]  # two objects on one line: a valid JSON array only when joined
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert ": line 2500: " in refused(path)
    lines[2499] = json.dumps({**rows[2499], "output_length": "many"})
    path.write_text("\n".join(lines) + "\n")
    assert ": line 2500: output_length = many: " in refused(path)


@pytest.mark.parametrize(
    ("fmt", "column", "value", "said"),
    [
        (TraceFormat.mooncake, "input_length", "12", "input_length = 12: Input should be a valid integer"),
        (TraceFormat.azure, "ContextTokens", "many", "ContextTokens = many: Input should be a valid integer"),
        (TraceFormat.azure, "TIMESTAMP", "16/11/2023", 'TIMESTAMP = "16/11/2023": not a time of the form'),
        (TraceFormat.azure, "GeneratedTokens", None, "2 cells; the header names 3 or more"),
        (TraceFormat.tcobench, "prompt", None, 'needs "prompt" (string) or "messages"'),
        (TraceFormat.tcobench, "messages", [{"role": "user", "content": "hi"}], 'needs "prompt" (string) or'),
    ],
)
def test_a_bad_row_among_many_is_named_as_alone(
    tmp_path: Path, fmt: TraceFormat, column: str, value: object, said: str
) -> None:
    rows = generate(fmt, 3000)  # the bad row in a chunk parsed in one call, after many good ones
    if value is None:
        del rows[2499][column]
    else:
        rows[2499][column] = value
    path = write(tmp_path / "x", fmt, rows[:2499]) if fmt is TraceFormat.azure else tmp_path / "x"
    if fmt is TraceFormat.azure:  # the CSV header is line 1; a row that lacks a cell is short
        with path.open("a") as handle:
            handle.writelines(",".join(str(v) for v in row.values()) + "\n" for row in rows[2499:])
    else:
        write(path, fmt, rows)
    line = 2501 if fmt is TraceFormat.azure else 2500
    assert f": line {line}: {said}" in refused(path)
    assert len(read(path, window_s=(0.0, 600.0))) == 2400  # the window ends before it: not an error
