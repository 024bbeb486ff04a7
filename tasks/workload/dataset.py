"""open_dataset: your own traffic from a file, streamed: one pass validates it and keeps only record offsets.

Layouts (``workload.dataset.format``; ``auto`` decides from the file):

Design notes: docs/dev/architecture/workloads.md#tasks-workload-dataset.
"""

from __future__ import annotations

import codecs
import hashlib
import json
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from threading import Lock
from typing import Any, BinaryIO

from tcobench.errors import ConfigError
from tcobench.schemas import DatasetConfig, DatasetFormat, DatasetOrder
from tcobench.tasks.workload.lengths import rng_for

__all__ = ["Dataset", "DatasetRecord", "open_dataset"]

_HUMAN = {"human", "user"}
_ASSISTANT = {"gpt", "assistant", "chatgpt", "bard", "bing", "model"}
_ROLES = {"system", "user", "assistant", "tool", "developer"}
_READ = 1 << 16


@dataclass(frozen=True)
class DatasetRecord:
    """One record: a request (prompt or messages) or a conversation (user turns and the replies that followed)."""

    line: int  # 1-based line of a JSONL file, or 1-based position in a JSON array
    prompt: str | None = None
    messages: tuple[dict[str, str], ...] | None = None
    output_tokens: int | None = None
    user_turns: tuple[str, ...] = ()
    replies: tuple[str | None, ...] = ()  # the reply that followed each user turn in the record, if any
    system: str | None = None


def _bad(path: Path, line: int, what: str) -> ConfigError:
    return ConfigError(f"dataset {path}: line {line}: {what}")


def _messages(value: Any, path: Path, line: int) -> tuple[dict[str, str], ...]:
    if not isinstance(value, list) or not value:
        raise _bad(path, line, '"messages" must be a non-empty list of {"role", "content"} objects')
    out = []
    for item in value:
        role, content = (item.get("role"), item.get("content")) if isinstance(item, dict) else (None, None)
        if role not in _ROLES or not isinstance(content, str):
            raise _bad(path, line, f'each message needs "role" ({", ".join(sorted(_ROLES))}) and string "content"')
        out.append({"role": role, "content": content})
    return tuple(out)


def _conversation(value: Any, path: Path, line: int) -> DatasetRecord:
    if not isinstance(value, list):
        raise _bad(path, line, '"conversations" must be a list of {"from", "value"} objects')
    system: str | None = None
    users: list[str] = []
    replies: list[str | None] = []
    for item in value:
        who, text = (item.get("from"), item.get("value")) if isinstance(item, dict) else (None, None)
        if not isinstance(text, str) or not isinstance(who, str):
            raise _bad(path, line, 'each conversation entry needs string "from" and "value"')
        if who == "system" and not users:
            system = text
        elif who in _HUMAN:
            users.append(text)
            replies.append(None)
        elif who in _ASSISTANT and users and replies[-1] is None:
            replies[-1] = text
    if not users:
        raise _bad(path, line, 'the conversation has no "human" turn')
    return DatasetRecord(line, user_turns=tuple(users), replies=tuple(replies), system=system)


def _record(obj: Any, fmt: DatasetFormat, path: Path, line: int) -> DatasetRecord:
    if not isinstance(obj, dict):
        raise _bad(path, line, "not a JSON object")
    out = obj.get("output_tokens")
    if out is not None and (not isinstance(out, int) or isinstance(out, bool) or out <= 0):
        raise _bad(path, line, f'"output_tokens" must be a positive integer, got {json.dumps(out)}')
    if fmt is DatasetFormat.sharegpt or "conversations" in obj:
        record = _conversation(obj.get("conversations"), path, line)
        return DatasetRecord(record.line, None, None, out, record.user_turns, record.replies, record.system)
    if isinstance(obj.get("prompt"), str):
        return DatasetRecord(line, prompt=obj["prompt"], output_tokens=out)
    if "messages" in obj:
        return DatasetRecord(line, messages=_messages(obj["messages"], path, line), output_tokens=out)
    raise _bad(path, line, 'needs "prompt" (string) or "messages" (list), or "conversations" (ShareGPT)')


def _parse(raw: bytes, path: Path, line: int) -> Any:
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _bad(path, line, f"not JSON ({exc})") from exc


@dataclass
class Dataset:
    """A validated dataset file: where each record starts, never the records themselves."""

    config: DatasetConfig
    offsets: array[int]
    sha256: str
    array_layout: bool  # a single JSON array (ShareGPT files) rather than JSON lines
    fmt: DatasetFormat
    _handle: BinaryIO | None = None
    _lock: Lock = field(default_factory=Lock)  # one per dataset, made before any thread can ask for a record

    @property
    def records(self) -> int:
        return len(self.offsets)

    def record(self, position: int) -> DatasetRecord:
        """Record ``position`` (0-based), read and parsed again from the file.

        Thread-safe: the run builds request specs in worker threads, and a seek by one between another's seek and
        read would hand that request a different record than the position it records."""
        with self._lock:
            if self._handle is None:
                self._handle = self.config.path.open("rb")
            self._handle.seek(self.offsets[position])
            raw = _read_object(self._handle) if self.array_layout else self._handle.readline()
        return _record(_parse(raw, self.config.path, position + 1), self.fmt, self.config.path, position + 1)

    def pick(self, seed: int, index: int) -> int:
        """Which record request ``index`` gets: a seeded permutation per pass over the file, or the file order."""
        n = self.records
        lap, at = divmod(index, n)
        if self.config.order is DatasetOrder.sequential:
            return at
        rng = rng_for(seed, "dataset", lap)
        step = rng.randrange(1, n) if n > 1 else 1
        while _gcd(step, n) != 1:
            step += 1
        return (step * at + rng.randrange(n)) % n

    def close(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a


def _read_object(handle: BinaryIO) -> bytes:
    """The JSON value starting at the handle's position (array layout), read in blocks until it parses."""
    decoder = json.JSONDecoder()
    buf = b""
    while True:
        block = handle.read(_READ)
        buf += block
        try:
            _, end = decoder.raw_decode(buf.decode("utf-8", "strict"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            if not block:
                return buf  # let the caller's parse name the problem
            continue
        return buf.decode("utf-8")[:end].encode("utf-8")


def _scan_lines(path: Path, fmt: DatasetFormat, check: Any) -> tuple[array[int], str]:
    offsets: array[int] = array("q")
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        at = 0
        for line, raw in enumerate(handle, start=1):
            digest.update(raw)
            if raw.strip():
                check(_record(_parse(raw, path, line), fmt, path, line))
                offsets.append(at)
            at += len(raw)
    return offsets, digest.hexdigest()


def _scan_array(path: Path, fmt: DatasetFormat, check: Any) -> tuple[array[int], str]:
    """Offsets of the objects of a top-level JSON array, decoded one at a time from a sliding window."""
    offsets: array[int] = array("q")
    digest = hashlib.sha256()
    decoder = json.JSONDecoder()
    utf8 = codecs.getincrementaldecoder("utf-8")()
    with path.open("rb") as handle:
        text, base, pos, eof, item = "", 0, 0, False, 0
        while True:
            while pos < len(text) and text[pos] in " \t\r\n,[":
                pos += 1
            if pos < len(text) and text[pos] == "]":
                break
            try:
                obj, end = decoder.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                if eof:
                    if pos >= len(text):
                        break
                    raise _bad(path, item + 1, f"not JSON ({exc.msg})") from exc
                block = handle.read(_READ)
                digest.update(block)
                eof = not block
                base += len(text[:pos].encode("utf-8"))
                try:
                    text, pos = text[pos:] + utf8.decode(block, final=eof), 0
                except UnicodeDecodeError as exc:
                    raise _bad(path, item + 1, f"not UTF-8 ({exc.reason})") from exc
                continue
            item += 1
            offsets.append(base + len(text[:pos].encode("utf-8")))
            check(_record(obj, fmt, path, item))
            pos = end
        digest.update(handle.read())
    return offsets, digest.hexdigest()


def _first_byte(path: Path) -> bytes:
    with path.open("rb") as handle:
        while block := handle.read(4096):
            stripped = block.lstrip()
            if stripped:
                return stripped[:1]
    return b""


def open_dataset(config: DatasetConfig, turns: int, max_output: int) -> Dataset:
    """Validate the file in one streamed pass; ConfigError naming file, line and field on the first problem."""
    path = config.path
    if not path.is_file():
        raise ConfigError(f"workload.dataset.path: {path} does not exist")
    array_layout = _first_byte(path) == b"["
    fmt = config.format

    def check(record: DatasetRecord) -> None:
        if record.output_tokens is not None and record.output_tokens > max_output:
            raise _bad(
                path,
                record.line,
                f'"output_tokens" {record.output_tokens} is larger than the context (num_ctx {max_output})',
            )
        if turns > 1 and not record.user_turns:
            raise _bad(path, record.line, f'turns = {turns} needs ShareGPT conversations ("conversations")')

    try:
        offsets, digest = (_scan_array if array_layout else _scan_lines)(path, fmt, check)
    except OSError as exc:
        raise ConfigError(f"dataset {path}: {exc}") from exc
    if not offsets:
        raise ConfigError(f"dataset {path}: no records")
    if fmt is DatasetFormat.auto:
        fmt = DatasetFormat.jsonl
    return Dataset(config, offsets, digest, array_layout, fmt)
