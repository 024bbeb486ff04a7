"""The stream parsers on generated input (hypothesis): the line splitter under both protocols, the OpenAI SSE and
Ollama NDJSON line parsers.

- Lines: however a byte stream is cut into pieces, ``LineSplitter`` gives the lines an independent reading of the
  whole stream gives (ends: CRLF, LF or CR, as the SSE specification says), and never holds more than its bound
  (past it: one StreamLimitError).
- Streams: a generated SSE or NDJSON stream (comments, event lines, either line end, cut anywhere) reads back as
  the text it was made of, with its end marker and no error.
- Any line at all: the parsers answer None or one LineEvent, never an exception.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcobench.schemas import Protocol
from tcobench.tasks.load.protocols import adapter_for
from tcobench.tasks.load.protocols.base import LineEvent
from tcobench.tasks.load.stream import LineSplitter, StreamLimitError

pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")

EXAMPLES = settings(max_examples=200, deadline=None)
ENDS = st.sampled_from([b"\n", b"\r\n", b"\r"])


def _reference_lines(data: bytes) -> list[str]:
    """The lines of a whole stream: split at CRLF, LF or CR; a last line without an end still counts."""
    parts = re.split(rb"\r\n|\r|\n", data)
    if parts and parts[-1] == b"":
        parts.pop()
    return [p.decode("utf-8", "replace") for p in parts]


def _cut(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c for c in cuts if 0 < c < len(data)})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


def _lines(pieces: list[bytes], max_bytes: int = 1 << 20) -> list[str]:
    splitter = LineSplitter(max_bytes)
    out = []
    for piece in pieces:
        out += splitter.feed(piece)
        assert len(splitter._pending) <= max_bytes
    return out + splitter.end()


@EXAMPLES
@given(st.binary(max_size=300), st.lists(st.integers(0, 300), max_size=12))
def test_lines_do_not_depend_on_where_the_stream_was_cut(data: bytes, cuts: list[int]) -> None:
    assert _lines(_cut(data, cuts)) == _reference_lines(data)


@EXAMPLES
@given(st.binary(min_size=1, max_size=200).filter(lambda b: b"\n" not in b and b"\r" not in b), st.integers(1, 64))
def test_a_line_past_the_bound_is_one_error_not_memory(line: bytes, bound: int) -> None:
    splitter = LineSplitter(bound)
    try:
        for i in range(0, len(line), bound):
            splitter.feed(line[i : i + bound])
            assert len(splitter._pending) <= bound
    except StreamLimitError as exc:
        assert len(line) > bound and "no line end within" in str(exc)
    else:
        assert len(line) <= bound


def _read(protocol: Protocol, pieces: list[bytes], chat: bool) -> tuple[str, bool, list[str]]:
    adapter = adapter_for(protocol)
    text, done, errors = "", False, []
    for line in _lines(pieces):
        event = adapter.parse_line(line, chat)
        if event is None:
            continue
        text += event.text
        done = done or event.done
        if event.error:
            errors.append(event.error)
    return text, done, errors


TEXTS = st.lists(st.text(max_size=8), max_size=8)


@EXAMPLES
@given(TEXTS, ENDS, st.booleans(), st.lists(st.integers(0, 2000), max_size=10), st.data())
def test_a_generated_sse_stream_reads_back_as_its_text(
    texts: list[str], end: bytes, chat: bool, cuts: list[int], data: st.DataObject
) -> None:
    out = b""
    for text in texts:
        if data.draw(st.booleans()):
            out += data.draw(st.sampled_from([b": keep-alive", b"event: message", b"id: 7", b""])) + end
        choice = {"delta": {"content": text}} if chat else {"text": text}
        space = data.draw(st.sampled_from([b"", b" "]))
        out += b"data:" + space + json.dumps({"choices": [choice]}).encode() + end + end
    out += b"data: [DONE]" + end + end
    got = _read(Protocol.openai, _cut(out, cuts), chat)
    assert got == ("".join(texts), True, [])


@EXAMPLES
@given(TEXTS, ENDS, st.booleans(), st.lists(st.integers(0, 2000), max_size=10))
def test_a_generated_ndjson_stream_reads_back_as_its_text(
    texts: list[str], end: bytes, chat: bool, cuts: list[int]
) -> None:
    def line(text: str, done: bool) -> bytes:
        obj = {"message": {"role": "assistant", "content": text}} if chat else {"response": text}
        return json.dumps({**obj, "done": done}).encode() + end

    out = b"".join(line(t, False) for t in texts) + line("", True)
    got = _read(Protocol.ollama, _cut(out, cuts), chat)
    assert got == ("".join(texts), True, [])


@EXAMPLES
@given(st.text(max_size=200) | st.binary(max_size=200).map(lambda b: b.decode("utf-8", "replace")), st.booleans())
def test_any_line_is_none_or_one_event_never_an_exception(line: str, chat: bool) -> None:
    for protocol in (Protocol.openai, Protocol.ollama):
        for candidate in (line, "data: " + line, "data:" + json.dumps(line)):
            event = adapter_for(protocol).parse_line(candidate, chat)
            assert event is None or isinstance(event, LineEvent)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
KEYS = st.sampled_from(
    ["choices", "delta", "text", "content", "message", "response", "done", "usage", "timings", "error"]
    + ["finish_reason", "done_reason", "eval_count", "prompt_eval_count", "total_duration", "thinking"]
    + ["prompt_tokens", "completion_tokens", "prompt_n", "predicted_ms", "prompt_tokens_details"]
)


@EXAMPLES
@given(
    st.dictionaries(KEYS, JSON | st.lists(st.dictionaries(KEYS, JSON, max_size=3), max_size=2), max_size=4),
    st.booleans(),
)
def test_a_json_line_of_any_shape_is_none_or_one_event(obj: dict[str, object], chat: bool) -> None:
    """Objects with the protocols' own keys holding values of any JSON type (a string where a list belongs...)."""
    text = json.dumps(obj)
    for event in (
        adapter_for(Protocol.openai).parse_line("data: " + text, chat),
        adapter_for(Protocol.ollama).parse_line(text, chat),
    ):
        assert isinstance(event, LineEvent) and isinstance(event.text, str)
        for name, value in event.fields.items():  # what reaches the request's row: its column's type or None
            kind = str if name in ("finish_reason", "note", "token_count_source") else int
            assert value is None or (type(value) is kind), (name, value)
