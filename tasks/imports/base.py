"""The interface every result-file importer implements, the registry keyed by ``schemas.ImportFormat``, and the one
way a bad file is reported: ``bad(path, field, problem, valid)``, one line naming the file, the field and the valid
choices (a ConfigError: `tcobench import` exits 1).
"""

from __future__ import annotations

import datetime as dt
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tcobench.errors import ConfigError
from tcobench.schemas.imports import ImportFormat, ParsedFile
from tcobench.tasks._registry import Registry

__all__ = ["Importer", "bad", "importer_for", "load_json", "number", "register", "utc_ns"]


class Importer(ABC):
    """Reads one tool's result file into ``ParsedFile`` (figures the file lacks stay None)."""

    fmt: ImportFormat
    tool: str

    @abstractmethod
    def parse(self, path: Path, data: bytes) -> ParsedFile:
        """The file's runs; ``bad(...)`` for a file this importer cannot read."""


_REGISTRY: Registry[ImportFormat, Importer] = Registry("importer")


def register(fmt: ImportFormat) -> Callable[[type[Importer]], type[Importer]]:
    return _REGISTRY.register(fmt, fmt=fmt, tool=fmt.value)


def importer_for(fmt: ImportFormat) -> Importer:
    return _REGISTRY[fmt]


def bad(path: Path, field: str, problem: str, valid: str) -> ConfigError:
    """``FILE: field FIELD: PROBLEM (valid: VALID)``, the one line every unreadable file gets."""
    return ConfigError(f"{path}: field {field}: {problem} (valid: {valid})")


def load_json(path: Path, data: bytes, fmt: ImportFormat) -> Any:
    """The file's JSON; a truncated or non-JSON file is ``bad`` at the byte where reading stopped."""
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        where = getattr(exc, "pos", getattr(exc, "start", 0))
        raise bad(
            path, "(whole file)", f"not complete JSON at byte {where} of {len(data)} (truncated?)", f"a {fmt} file"
        ) from None


def number(path: Path, found: dict[str, Any], field: str, where: str = "") -> float | None:
    """``found[field]`` as a float; None when absent or null; ``bad`` when it is not a number."""
    value = found.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise bad(path, f"{where}{field}", f"{value!r} is not a number", "a number or null")
    return float(value)


def utc_ns(path: Path, field: str, text: object, formats: Iterable[str]) -> int:
    """A timestamp text (no zone: read as UTC) as ns since the epoch; ``bad`` naming the formats otherwise."""
    shapes = tuple(formats)
    for shape in shapes:
        try:
            moment = dt.datetime.strptime(str(text), shape)
        except ValueError:
            continue
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt.UTC)
        return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000
    raise bad(path, field, f"{text!r} is not a timestamp", " or ".join(shapes))
