"""read_trace: a trace file streamed line by line into ``TraceRequest``s on the replay's clock.

The file is never loaded whole: in file order only the previous timestamp is kept; with ``sort`` a first pass keeps
an index of 24 bytes per request (timestamp, byte offset, line) and a second pass reads the rows in timestamp order.
Every problem is one ``ConfigError`` naming the file and the line: an unknown format, a missing column, a bad value
(a negative length), timestamps that go backwards (unless ``sort``), more requests than ``max_requests``.

Offsets: a request's recorded offset is its timestamp minus the first request's; with a window [START, END) seconds
only the requests with START <= offset < END are read, and ``at_ns`` = (offset - START) x time scale.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any, BinaryIO

from tcobench.errors import ConfigError
from tcobench.schemas import TraceConfig, TraceFormat, TraceRequest
from tcobench.tasks.workload.traces import LAYOUTS, Parsed, TraceLayout
from tcobench.tasks.workload.traces.base import problem

__all__ = ["Trace", "file_sha256", "open_trace"]

_NS_PER_S = 1_000_000_000
_HASH_BLOCK = 1 << 20
_CHUNK_BYTES = 1 << 15  # lines read and parsed in one call: whole lines, about this many bytes of them


def _bad(path: Path, line: int, what: str) -> ConfigError:
    return ConfigError(f"trace {path}: line {line}: {what}")


def file_sha256(path: Path) -> str:
    """sha256 of the file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _first_line(path: Path) -> tuple[int, bytes]:
    """(1-based line number, bytes) of the first non-blank line; ConfigError when there is none."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.strip():
                return number, raw
    raise ConfigError(f"trace {path}: no requests (the file is empty)")


def _formats() -> str:
    return "; ".join(f"{f.value} ({LAYOUTS[f].describe})" for f in TraceFormat)


def _detect(path: Path, line: int, first: bytes) -> TraceLayout:
    for fmt in TraceFormat:
        if LAYOUTS[fmt].detect(first):
            return LAYOUTS[fmt]
    shown = first.decode("utf-8", "replace").strip()[:60]
    raise _bad(path, line, f"unknown format (the line starts {shown!r}); formats: {_formats()}; or give --trace-format")


@dataclass(frozen=True)
class Trace:
    """A trace file whose format is known and whose first line was read: ``requests()`` streams it."""

    config: TraceConfig
    layout: TraceLayout
    context: Any
    header_line: int  # the CSV header's line (0: none)

    @property
    def format(self) -> TraceFormat:
        return self.layout.format

    @property
    def path(self) -> Path:
        return self.config.path

    def _parse(self, raw: bytes, line: int) -> Parsed:
        try:
            return self.layout.parse(raw, self.context)
        except (ValueError, UnicodeDecodeError) as exc:
            raise _bad(self.path, line, problem(exc) if isinstance(exc, ValueError) else f"not UTF-8 ({exc})") from exc

    def _chunk(
        self, lines: Sequence[int], offsets: Sequence[int], raws: Sequence[bytes]
    ) -> Iterable[tuple[int, int, Parsed]]:
        """(line, byte offset, parsed row) of a chunk of lines parsed in one call; when one is bad, parsed one by one
        as they are asked for, so the error names the first bad line and a bad line after the window's end is never
        an error."""
        try:
            parsed = self.layout.parse_many(raws, self.context)
        except (ValueError, UnicodeDecodeError):
            parsed = []
        if len(parsed) != len(raws):  # a bad row (or lines that only parse together)
            return ((line, at, self._parse(raw, line)) for line, at, raw in zip(lines, offsets, raws, strict=True))
        return zip(lines, offsets, parsed, strict=True)

    def _chunks(self, handle: BinaryIO) -> Iterator[Iterable[tuple[int, int, Parsed]]]:
        """The request lines in file order (blank lines and the header left out), about _CHUNK_BYTES of whole lines
        parsed at a time."""
        line, at = 1, 0
        while raws := handle.readlines(_CHUNK_BYTES):
            lines = range(line, line + len(raws))
            offsets = list(accumulate(map(len, raws), initial=at))
            line, at = lines.stop, offsets.pop()
            if self.header_line in lines or not all(map(bytes.strip, raws)):
                kept = [i for i, raw in enumerate(raws) if raw.strip() and lines[i] != self.header_line]
                yield self._chunk([lines[i] for i in kept], [offsets[i] for i in kept], [raws[i] for i in kept])
            else:
                yield self._chunk(lines, offsets, raws)

    def _in_file_order(self) -> Iterator[Iterable[tuple[int, int, Parsed]]]:
        with self.path.open("rb") as handle:
            yield from self._chunks(handle)

    def _in_time_order(self) -> Iterator[Iterable[tuple[int, int, Parsed]]]:
        stamps: array[int] = array("q")
        offsets: array[int] = array("q")
        lines: array[int] = array("q")
        with self.path.open("rb") as handle:
            for chunk in self._chunks(handle):
                for line, at, row in chunk:
                    stamps.append(row[0])
                    offsets.append(at)
                    lines.append(line)
            order = sorted(range(len(stamps)), key=stamps.__getitem__)  # stable: equal times keep file order
            yield ((lines[i], offsets[i], self._parse(self._line_at(handle, offsets[i]), lines[i])) for i in order)

    @staticmethod
    def _line_at(handle: BinaryIO, offset: int) -> bytes:
        handle.seek(offset)
        return handle.readline()

    def _backwards(self, line: int, stamp: int, last_line: int, last: int) -> ConfigError:
        return _bad(
            self.path,
            line,
            f"timestamp {_ms(stamp)} ms is earlier than line {last_line}'s {_ms(last)} ms: timestamps go backwards "
            "(give --sort to read them in time order)",
        )

    def requests(self) -> Iterator[TraceRequest]:
        """The requests of the window, in time order, each on the replay's clock; ConfigError at the first bad line
        (a bad line after the window's end is not one)."""
        cfg = self.config
        start, end = cfg.window_s if cfg.window_s is not None else (0.0, None)
        start_ns = round(start * _NS_PER_S)
        end_ns = round(end * _NS_PER_S) if end is not None else None
        first: int | None = None
        last, last_line = -(2**63), 0
        count, limit, scale = 0, cfg.max_requests, cfg.time_scale
        for chunk in self._in_time_order() if cfg.sort else self._in_file_order():
            for line, _, (stamp, input_tokens, output_tokens, hash_ids, prompt, messages) in chunk:
                if stamp < last:  # never in time order
                    raise self._backwards(line, stamp, last_line, last)
                last, last_line = stamp, line
                if first is None:
                    first = stamp
                offset = stamp - first - start_ns
                if offset < 0:
                    continue
                if end_ns is not None and offset >= end_ns - start_ns:
                    return
                count += 1
                if limit is not None and count > limit:
                    raise _bad(self.path, line, self._too_many(limit))
                yield TraceRequest.checked(
                    line,
                    offset if scale == 1 else round(offset * scale),
                    input_tokens,
                    output_tokens,
                    hash_ids,
                    prompt,
                    messages,
                )

    def _too_many(self, limit: int) -> str:
        if self.config.window_s is None:
            return (
                f"the trace has more than --max-requests {limit} requests; give --trace-window START,END (seconds) "
                "to take a slice of it, or a larger --max-requests"
            )
        start, end = self.config.window_s
        return f"the window {start:g},{end:g} holds more than --max-requests {limit} requests; give a shorter window"


def _ms(ns: int) -> str:
    return f"{ns / 1e6:g}"


def open_trace(config: TraceConfig) -> Trace:
    """The trace file's format (``config.format``, else detected from its first non-blank line) and header; nothing
    else is read until ``requests()``. ConfigError naming the file and the line."""
    path = config.path
    if not path.is_file():
        raise ConfigError(f"trace {path}: no such file")
    try:
        line, first = _first_line(path)
    except OSError as exc:
        raise ConfigError(f"trace {path}: {exc}") from exc
    layout = LAYOUTS[config.format] if config.format is not None else _detect(path, line, first)
    try:
        context = layout.context(first)
    except ValueError as exc:
        raise _bad(path, line, f"{problem(exc)} ({layout.format.value} format: {layout.describe})") from exc
    return Trace(config, layout, context, line if layout.header else 0)
