"""checksums: every data file's SHA-256, recorded when it is committed, so damage that keeps a file's size is found
by content.

``record_new`` hashes each new local data file after a commit; ``content_damage`` re-hashes, on every read, only
files changed since they were last proven; ``mismatch`` (``store verify``) hashes every file; ``find_undecodable``
decodes unhashed files after a failed read. Object-storage data is not hashed here.

Design notes: docs/dev/architecture/store.md#tasks-checksums.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

import duckdb

from tcobench.settings import state_home
from tcobench.tasks.store.health import Damage, DataFile, data_files
from tcobench.tasks.store.lake import LAKE, StoreLocation

__all__ = [
    "TABLE",
    "UNDECODABLE",
    "content_damage",
    "file_sha256",
    "find_undecodable",
    "known_undecodable",
    "mismatch",
    "record_new",
    "recorded",
]

TABLE = "tcobench_file_checksum"
_META = f"__ducklake_metadata_{LAKE}"


def file_sha256(path: str | Path) -> str:
    with Path(path).open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _relative(location: StoreLocation, path: str) -> str:
    return path.removeprefix(location.data_path)


def _paths(files: Iterable[DataFile]) -> list[tuple[str, int | None]]:
    out: list[tuple[str, int | None]] = []
    for f in files:
        out.append((f.path, f.size))
        if f.delete_path is not None:
            out.append((f.delete_path, f.delete_size))
    return out


def recorded(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Relative path -> SHA-256 of every file recorded; empty for a store that has no side table (older ones)."""
    try:
        return {str(p): str(h) for p, h in con.execute(f"SELECT path, sha256 FROM {_META}.{TABLE}").fetchall()}
    except duckdb.Error:
        return {}


def record_new(con: duckdb.DuckDBPyConnection, location: StoreLocation) -> int:
    """Hash and record every listed local file the side table lacks (the attached store, read-write); how many."""
    if location.data_dir is None:
        return 0
    con.execute(f"CREATE TABLE IF NOT EXISTS {_META}.{TABLE} (path VARCHAR, size BIGINT, sha256 VARCHAR)")
    known = recorded(con)
    rows = []
    for path, size in _paths(data_files(con, location.data_path)):
        rel = _relative(location, path)
        if rel not in known:
            with contextlib.suppress(OSError):  # gone already: verify reports it missing
                rows.append([rel, size, file_sha256(path)])
    if rows:
        con.executemany(f"INSERT INTO {_META}.{TABLE} VALUES (?, ?, ?)", rows)
    return len(rows)


def mismatch(location: StoreLocation, path: str, known: dict[str, str]) -> str | None:
    """Why the file's content is not what was committed, or None (also when no checksum was recorded)."""
    want = known.get(_relative(location, path))
    if want is None:
        return None
    try:
        got = file_sha256(path)
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    return (
        None if got == want else f"its content differs from its checksum at commit (sha256 {got[:12]}, not {want[:12]})"
    )


def _cache_file(location: StoreLocation) -> Path:
    state = state_home()
    return state / "tcobench" / "verified" / (hashlib.sha256(location.uri.encode()).hexdigest()[:16] + ".json")


def _identity(path: str) -> list[int] | None:
    try:
        st = Path(path).stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _load(cache: Path) -> dict[str, list[object]]:
    try:
        value = json.loads(cache.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _save(cache: Path, proven: dict[str, list[object]]) -> None:
    with contextlib.suppress(OSError):  # a cache only: a read never fails for want of it
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f".{cache.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(proven), "utf-8")
        tmp.replace(cache)


def content_damage(
    con: duckdb.DuckDBPyConnection, location: StoreLocation, files: list[DataFile], skip: set[str]
) -> list[Damage]:
    """Local files whose content is not what was committed (the module docstring says which are hashed); files in
    ``skip`` (already found damaged) are not looked at."""
    if location.data_dir is None:
        return []
    known = recorded(con)
    if not known:
        return []
    cache = _cache_file(location)
    proven, changed, damage = _load(cache), False, []
    for f in files:
        if f.path in skip:
            continue
        for path, _ in _paths([f]):
            rel, ident = _relative(location, path), _identity(path)
            want = known.get(rel)
            if want is None or ident is None or proven.get(rel) == [*ident, want]:
                continue
            why = mismatch(location, path, known)
            if why is None:
                proven[rel], changed = [*ident, want], True
                continue
            reason = why if path == f.path else f"its delete file {path} is damaged: {why}"
            damage.append(Damage(f.schema, f.table, f.path, reason))
            break
    if changed:
        _save(cache, proven)
    return damage


# Files found not to decode in this process (``find_undecodable``): path -> why. Reads leave them out like files
# that fail their checksum (``tasks.store.query``), for the rest of the process.
UNDECODABLE: dict[str, str] = {}


def known_undecodable(files: list[DataFile], skip: set[str]) -> list[Damage]:
    """The listed files this process found not to decode (``find_undecodable``), less ``skip``."""
    return [
        Damage(f.schema, f.table, f.path, UNDECODABLE[f.path])
        for f in files
        if f.path in UNDECODABLE and f.path not in skip
    ]


def find_undecodable(location: StoreLocation) -> list[str]:
    """Decode every local data file that has no checksum (a store of tcobench < 0.3, or a file written since the
    last commit) and is not yet known bad; remember those that fail in ``UNDECODABLE``; the new ones. A file whose
    checksum was recorded is not decoded: it decoded when it was written, and ``content_damage`` proves it is
    unchanged. Only called after a read failed (the cost of decoding falls on the error path alone)."""
    if location.data_dir is None or not location.exists():
        return []
    from tcobench.tasks.store.lake import attach_sql, check_catalog, new_instance, one_line, sql_string

    check_catalog(location)
    con = new_instance(location)
    found: list[str] = []
    try:
        con.execute(attach_sql(location, read_only=True))
        known = recorded(con)
        for path, _ in _paths(data_files(con, location.data_path)):
            if path in UNDECODABLE or _relative(location, path) in known:
                continue
            try:
                reader = con.execute(f"SELECT * FROM read_parquet({sql_string(path)})").fetch_record_batch(65536)
                for _ in reader:
                    pass
            except duckdb.Error as exc:
                UNDECODABLE[path] = f"does not decode: {one_line(exc)[:200]}"
                found.append(path)
    finally:
        con.close()
    return found
