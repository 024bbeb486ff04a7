"""verify_store: check every file and every run of a store; with ``repair``, quarantine what is bad (never delete).

Checks:
- every data and delete file the catalog lists: there, the recorded size, Parquet, the SHA-256 recorded at commit
  (``tasks.store.checksums``; local data, files committed by tcobench >= 0.3), and (``deep``) every page decodes;
- orphan files: files under the data path that no snapshot references, older than ``orphan_age_s`` (younger ones
  may belong to a commit in flight) -- what a writer killed mid-commit leaves;
- every run's rows against its ``commits`` row (the counts its transaction wrote), runs without a commits row,
  and requests/telemetry/engine_metrics rows without a runs row;
- a folder store of tcobench < 0.2 not yet migrated; a damaged catalog file (both in the design notes).

Design notes: docs/dev/architecture/store.md#tasks-verify.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import duckdb

from tcobench.errors import StoreError
from tcobench.tasks.store.checksums import mismatch, record_new, recorded
from tcobench.tasks.store.health import DataFile, data_files, file_problem, readable_rows
from tcobench.tasks.store.lake import LAKE, StoreLocation, catalog_damage, one_line, sql_string
from tcobench.tasks.store.store import PARTITIONED, RUN_TABLES, StoreRef, legacy_layout, open_store

__all__ = ["CatalogDamage", "Problem", "VerifyResult", "verify_store"]


@dataclass(frozen=True)
class Problem:
    kind: str  # damaged file | orphan file | incomplete run | orphan rows | no commit record | folder store
    subject: str  # a file path, a run id, a folder
    detail: str


@dataclass(frozen=True)
class CatalogDamage:
    """A damaged catalog file, and what its data files hold without it."""

    catalog: Path
    why: str
    data_dir: Path
    data_files: int  # Parquet files found under data_dir
    data_bytes: int
    unreadable: tuple[str, ...]  # of those, the ones that are not Parquet or (deep) do not decode: "path: why"
    decoded: bool  # every file was decoded (deep), not only its Parquet header and footer checked


@dataclass
class VerifyResult:
    store: str
    runs: int = 0
    files: int = 0
    problems: list[Problem] = field(default_factory=list)
    quarantine: Path | None = None
    repaired: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)  # what repair could not move (S3 objects)
    catalog: CatalogDamage | None = None  # the catalog is damaged: nothing else was checked


def _deep_problem(con: duckdb.DuckDBPyConnection, path: str) -> str | None:
    """Decode every page of a Parquet file; why it failed, or None."""
    try:
        reader = con.execute(f"SELECT * FROM read_parquet({sql_string(path)})").fetch_record_batch(65536)
        for _ in reader:
            pass
    except duckdb.Error as exc:
        return one_line(exc)[:300]
    return None


def _damaged(
    con: duckdb.DuckDBPyConnection,
    location: StoreLocation,
    files: list[DataFile],
    deep: bool,
    progress: Callable[[str], None],
) -> dict[str, tuple[DataFile, str]]:
    bad: dict[str, tuple[DataFile, str]] = {}
    known = recorded(con)
    for i, f in enumerate(files, 1):
        for path, size in ((f.path, f.size), (f.delete_path, f.delete_size)):
            if path is None:
                continue
            why = file_problem(path, size) if location.data_dir is not None else None
            if why is None and location.data_dir is not None:
                why = mismatch(location, path, known)  # proof by content: hashed every time, no cache
            if why is None and deep:
                why = _deep_problem(con, path)
            if why is not None:
                bad[f.path] = (f, why if path == f.path else f"its delete file {path} is damaged: {why}")
                break
        if i % 500 == 0:
            progress(f"checked {i} of {len(files)} files")
    return bad


def _orphans(con: duckdb.DuckDBPyConnection, age_s: float) -> list[str]:
    rows = con.execute(
        f"CALL ducklake_delete_orphaned_files('{LAKE}', dry_run => true, "
        f"older_than => now() - INTERVAL '{float(age_s):.0f} seconds')"
    ).fetchall()
    return sorted(str(r[0]) for r in rows)


def _sources(con: duckdb.DuckDBPyConnection, files: list[DataFile], bad: set[str]) -> dict[str, str]:
    """SQL of each run-keyed table's readable rows."""
    return {
        t: readable_rows(con, "main", t, files, bad)
        if any(f.table == t and f.path in bad for f in files)
        else f"{LAKE}.main.{t}"
        for t in RUN_TABLES
    }


def _run_problems(con: duckdb.DuckDBPyConnection, src: dict[str, str]) -> tuple[int, list[Problem]]:
    problems = []
    runs = (con.execute(f"SELECT count(*) FROM {src['runs']}").fetchone() or (0,))[0]
    for table in ("requests", "telemetry", "engine_metrics"):
        rows = con.execute(
            f"SELECT c.run_id, c.{table}, coalesce(t.n, 0) FROM {src['commits']} AS c "
            f"LEFT JOIN (SELECT run_id, count(*) AS n FROM {src[table]} GROUP BY run_id) AS t USING (run_id) "
            f"WHERE c.{table} IS NOT NULL AND c.{table} <> coalesce(t.n, 0) ORDER BY 1"
        ).fetchall()
        problems += [Problem("incomplete run", r[0], f"{table}: {r[2]} rows, its commit wrote {r[1]}") for r in rows]
        orphans = con.execute(
            f"SELECT run_id, count(*) FROM {src[table]} WHERE run_id NOT IN (SELECT run_id FROM {src['runs']}) "
            "GROUP BY 1 ORDER BY 1"
        ).fetchall()
        problems += [Problem("orphan rows", r[0], f"{r[1]} {table} rows without a runs row") for r in orphans]
    missing = con.execute(
        f"SELECT run_id FROM {src['runs']} WHERE run_id NOT IN (SELECT run_id FROM {src['commits']}) ORDER BY 1"
    ).fetchall()
    problems += [Problem("no commit record", r[0], "no commits row: its row counts cannot be checked") for r in missing]
    return int(runs), problems


def verify_store(
    store: StoreRef,
    *,
    repair: bool = False,
    deep: bool = True,
    orphan_age_s: float = 3600.0,
    on_progress: Callable[[str], None] | None = None,
) -> VerifyResult:
    """Check the store (module docstring); ``repair`` moves what is bad to quarantine."""
    progress = on_progress or (lambda _: None)
    target = open_store(store)
    location = target.location
    result = VerifyResult(str(location))
    legacy = legacy_layout(location.root)
    if legacy:
        assert location.root is not None
        result.problems.append(
            Problem(
                "folder store",
                str(location.root),
                f"{', '.join(legacy)}/ of tcobench < 0.2 not imported: tcobench store migrate {location.root}",
            )
        )
        return result
    if not location.exists():
        return result
    damage = catalog_damage(location)
    if damage is None:
        try:
            files, bad = target.run(lambda con: _inspect(con, location, deep, orphan_age_s, progress, result), "verify")
        except StoreError as exc:
            damage = catalog_damage(location, exc.__cause__) if exc.__cause__ is not None else None
            if damage is None:
                raise
    if damage is not None:
        result.catalog = _without_catalog(location, damage, deep, progress)
        result.files = result.catalog.data_files
        return result
    if repair and result.problems:
        target.run(lambda con: _repair(con, location, files, bad, result), "verify --repair")
    return result


def _without_catalog(location: StoreLocation, why: str, deep: bool, progress: Callable[[str], None]) -> CatalogDamage:
    """What the data files hold when the catalog is damaged: each a Parquet file (its magic at both ends) and, with
    ``deep``, every page decodes (read directly: no catalog says which files make up which table)."""
    assert location.catalog_file is not None and location.data_dir is not None
    paths = sorted(location.data_dir.rglob("*.parquet")) if location.data_dir.is_dir() else []
    unreadable, size = [], 0
    con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        for i, path in enumerate(paths, 1):
            size += path.stat().st_size
            why_file = _parquet_problem(path) or (_deep_problem(con, str(path)) if deep else None)
            if why_file is not None:
                unreadable.append(f"{path}: {why_file}")
            if i % 500 == 0:
                progress(f"checked {i} of {len(paths)} data files")
    finally:
        con.close()
    return CatalogDamage(
        location.catalog_file, why, location.data_dir, len(paths), size, tuple(unreadable), decoded=deep
    )


def _parquet_problem(path: Path) -> str | None:
    """Why a file is not a whole Parquet file (PAR1 at its start and end), or None."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4)
            handle.seek(max(0, path.stat().st_size - 4))
            tail = handle.read(4)
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    return None if head == tail == b"PAR1" else "not a whole Parquet file"


def _inspect(
    con: duckdb.DuckDBPyConnection,
    location: StoreLocation,
    deep: bool,
    orphan_age_s: float,
    progress: Callable[[str], None],
    result: VerifyResult,
) -> tuple[list[DataFile], dict[str, tuple[DataFile, str]]]:
    """The checks through the catalog (module docstring): problems go to ``result``; (the files, the damaged ones)."""
    files = data_files(con, location.data_path)
    result.files = len(files) + sum(1 for f in files if f.delete_path)
    bad = _damaged(con, location, files, deep, progress)
    try:
        result.runs, found = _run_problems(con, _sources(con, files, set(bad)))
    except duckdb.Error:
        if deep:
            raise
        progress("a file that passed the quick check does not decode; decoding every file to find it")
        bad = _damaged(con, location, files, True, progress)
        result.runs, found = _run_problems(con, _sources(con, files, set(bad)))
    result.problems += [Problem("damaged file", path, f"{f.table}: {why}") for path, (f, why) in bad.items()]
    result.problems += [
        Problem("orphan file", p, "no snapshot references it (a writer killed mid-commit?)")
        for p in _orphans(con, orphan_age_s)
    ]
    result.problems += found
    return files, bad


def _quarantine_dir(location: StoreLocation) -> Path:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    folder = location.quarantine_dir / stamp
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _rebuild(con: duckdb.DuckDBPyConnection, table: str, source: str, drop: str | None) -> None:
    """Replace a lake table by the rows of ``source`` less the runs in ``drop`` (same columns, partitioning)."""
    columns = con.execute(f"DESCRIBE {LAKE}.main.{table}").fetchall()
    body = ", ".join(f'"{name}" {kind}' for name, kind, *_ in columns)
    names = ", ".join(f'"{name}"' for name, *_ in columns)
    con.execute(f"CREATE TABLE {LAKE}.main.{table}__repair ({body})")  # partitioned after the commit (see _repair)
    where = f" WHERE run_id NOT IN {drop}" if drop else ""
    con.execute(f"INSERT INTO {LAKE}.main.{table}__repair SELECT {names} FROM {source}{where}")
    con.execute(f"DROP TABLE {LAKE}.main.{table}")
    con.execute(f"ALTER TABLE {LAKE}.main.{table}__repair RENAME TO {table}")


def _repair(
    con: duckdb.DuckDBPyConnection,
    location: StoreLocation,
    files: list[DataFile],
    bad: dict[str, tuple[DataFile, str]],
    result: VerifyResult,
) -> None:
    folder = _quarantine_dir(location)
    result.quarantine = folder
    src = _sources(con, files, set(bad))
    dropped = sorted({p.subject for p in result.problems if p.kind in ("incomplete run", "orphan rows")})
    con.execute("CREATE OR REPLACE TEMP TABLE _tcob_drop (run_id VARCHAR)")
    if dropped:
        con.executemany("INSERT INTO _tcob_drop VALUES (?)", [[r] for r in dropped])
    drop = "(SELECT run_id FROM _tcob_drop)"
    for table in RUN_TABLES:
        target = folder / f"rows-{table}.parquet"
        con.execute(
            f"COPY (SELECT * FROM {src[table]} WHERE run_id IN {drop}) TO {sql_string(str(target))} (FORMAT parquet)"
        )
    damaged_tables = {(f.schema, f.table) for f, _ in bad.values()}
    con.execute("BEGIN")
    con.execute(f"CALL {LAKE}.set_commit_message('tcobench', 'verify --repair')")
    for schema in sorted({s for s, _ in damaged_tables if s != "main"}):
        for (table,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = ?", [LAKE, schema]
        ).fetchall():
            con.execute(f"DROP TABLE {LAKE}.{schema}.{table}")
        con.execute(f"DROP SCHEMA {LAKE}.{schema}")
        result.repaired.append(f"dropped the damaged cached views {schema} (compact stores them again)")
    for table in RUN_TABLES:
        if ("main", table) in damaged_tables:
            _rebuild(con, table, src[table], drop)
            result.repaired.append(f"rebuilt {table} from its readable files")
        elif dropped:
            con.execute(f"DELETE FROM {LAKE}.main.{table} WHERE run_id IN {drop}")
    if ("main", "images") in damaged_tables:
        _rebuild(con, "images", readable_rows(con, "main", "images", files, set(bad)), None)
        result.repaired.append("rebuilt images from its readable files")
    for view_table in _cache_tables(con) if dropped else []:
        con.execute(f"DELETE FROM {view_table} WHERE run_id IN {drop}")
    con.execute("COMMIT")
    for table in sorted(t for s, t in damaged_tables if s == "main" and t in PARTITIONED):
        # DuckLake 0.3 fails to commit a partitioned table created and renamed in one transaction: a second one
        con.execute(f"ALTER TABLE {LAKE}.main.{table} SET PARTITIONED BY ({PARTITIONED[table]})")
    record_new(con, location)  # the rebuilt tables' files
    if dropped:
        result.repaired.append(f"moved the rows of {len(dropped)} incomplete or orphaned run(s) to {folder}")
    _move_files(
        location, [p for p in bad] + [p.subject for p in result.problems if p.kind == "orphan file"], folder, result
    )
    (folder / "MANIFEST.json").write_text(
        json.dumps(
            {
                "store": result.store,
                "when": folder.name,
                "problems": [asdict(p) for p in result.problems],
                "repaired": result.repaired,
                "left in place": result.left,
            },
            indent=1,
        ),
        "utf-8",
    )


def _cache_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    rows = con.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name LIKE 'cache_%'",
        [LAKE],
    ).fetchall()
    return [f"{LAKE}.{s}.{t}" for s, t in rows]


def _move_files(location: StoreLocation, paths: list[str], folder: Path, result: VerifyResult) -> None:
    data = location.data_dir
    for path in paths:
        source = Path(path)
        if data is None or not source.is_relative_to(data):
            result.left.append(path)
            continue
        target = folder / "files" / source.relative_to(data)
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.exists():
            source.rename(target)
            result.repaired.append(f"moved {path} to {target}")
