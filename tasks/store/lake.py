"""Where a store lives and how DuckDB reaches it: store URIs, extensions from the wheels, credentials, sandbox.

A store is a DuckLake: a SQL catalog (which files make up which table at which snapshot) plus plain Parquet data
files. Three places, one interface (``parse_store``):

Design notes: docs/dev/architecture/store.md#tasks-lake.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, unquote, urlsplit

import duckdb

from tcobench.errors import StoreError
from tcobench.schemas.base import redact_url
from tcobench.schemas.urls import check_url
from tcobench.settings import aws_variables, current, state_home

__all__ = [
    "CATALOG_FILES",
    "LAKE",
    "StoreLocation",
    "attach_sql",
    "catalog_damage",
    "check_catalog",
    "damaged_catalog_error",
    "new_instance",
    "one_line",
    "parse_store",
    "sandbox",
    "sql_string",
]

Catalog = Literal["duckdb", "sqlite", "postgres"]
LAKE = "lake"  # the name the store is attached under in every connection
CATALOG_FILES: dict[str, str] = {"duckdb": "catalog.ducklake", "sqlite": "catalog.sqlite"}
_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "duckdb": ("ducklake",),
    "sqlite": ("ducklake", "sqlite_scanner"),
    "postgres": ("ducklake", "postgres_scanner"),
}
_PG_SCHEMES = ("postgresql", "postgres")
_SECRET_PARAMS = frozenset({"password", "passfile", "sslpassword"})


def sql_string(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


@dataclass(frozen=True)
class StoreLocation:
    """A parsed store URI: the catalog (kind and target) and the data path. ``uri`` is safe to print."""

    uri: str
    catalog: Catalog
    catalog_target: str  # a file path (duckdb, sqlite) or a libpq keyword string (postgres; no password)
    data_path: str  # a folder or s3:// prefix, ending in "/"
    root: Path | None  # the local folder of a file catalog
    moves: bool = False  # data inside the root (the default): the folder may be moved or copied whole

    def __str__(self) -> str:
        return self.uri

    @property
    def remote_data(self) -> bool:
        return self.data_path.startswith("s3://")

    @property
    def data_dir(self) -> Path | None:
        """The data folder when the data files are local."""
        return None if self.remote_data else Path(self.data_path)

    @property
    def catalog_file(self) -> Path | None:
        return Path(self.catalog_target) if self.catalog != "postgres" else None

    @property
    def state_dir(self) -> Path:
        """A local folder for what is not table data (engine logs, quarantine): the store's root when local."""
        if self.root is not None:
            return self.root
        state = state_home()
        return state / "tcobench" / "stores" / hashlib.sha256(self.uri.encode()).hexdigest()[:12]

    @property
    def log_dir(self) -> Path:
        return self.state_dir / "logs"

    @property
    def quarantine_dir(self) -> Path:
        return self.state_dir / "quarantine"

    @property
    def extensions(self) -> tuple[str, ...]:
        return _EXTENSIONS[self.catalog] + (("httpfs",) if self.remote_data else ())

    def exists(self) -> bool:
        """Whether a catalog is there to read (a PostgreSQL catalog is assumed to be)."""
        return self.catalog_file.exists() if self.catalog_file is not None else True


def _local_path(text: str, uri: str) -> Path:
    if not text:
        raise StoreError(f"store {uri!r}: no path given")
    return Path(unquote(text)).expanduser().absolute()


def _data_path(given: str | None, default: Path | None, uri: str) -> str:
    if given is None:
        if default is None:
            raise StoreError(f"store {uri}: a PostgreSQL catalog needs ?data=s3://BUCKET/PREFIX (or a folder)")
        return str(default) + "/"
    if given.startswith("s3://"):
        bucket = given[5:].split("/", 1)[0]
        if not bucket:
            raise StoreError(f"store {uri}: data={given!r} names no bucket (s3://BUCKET/PREFIX)")
        return given.rstrip("/") + "/"
    if "://" in given:
        raise StoreError(f"store {uri}: data={given!r} is neither a folder nor s3://BUCKET/PREFIX")
    return str(_local_path(given, uri)) + "/"


def _split_query(text: str, uri: str) -> tuple[str, dict[str, str]]:
    path, _, query = text.partition("?")
    params = dict(parse_qsl(query, keep_blank_values=True))
    if _SECRET_PARAMS & {k.lower() for k in params}:
        raise StoreError(
            f"store {uri.split('?')[0]}?...: credentials in the URI are refused; use PGPASSWORD, "
            "~/.pgpass or the AWS_* variables"
        )
    return path, params


def _pg_location(uri: str) -> StoreLocation:
    try:
        check_url(uri.split("?")[0], _PG_SCHEMES)
    except ValueError as exc:
        raise StoreError(f"store {redact_url(str(exc))}") from None
    parts = urlsplit(uri)
    safe = f"{parts.scheme}://{parts.hostname or ''}{':' + str(parts.port) if parts.port else ''}{parts.path}"
    if parts.password is not None:
        raise StoreError(f"store {safe}: a password in the URI is refused; use PGPASSWORD or ~/.pgpass")
    _, params = _split_query("?" + parts.query, safe)
    data = params.pop("data", None)
    keys = {
        "host": parts.hostname,
        "port": str(parts.port) if parts.port else None,
        "user": unquote(parts.username) if parts.username else None,
        "dbname": unquote(parts.path.lstrip("/")),
    }
    keys.update(params)
    if not keys["dbname"]:
        raise StoreError(f"store {safe}: name the database (postgresql://HOST/DBNAME?data=...)")
    conninfo = " ".join(f"{k}={v}" for k, v in keys.items() if v)
    shown = safe + (f"?data={data}" if data else "")
    return StoreLocation(shown, "postgres", conninfo, _data_path(data, None, shown), None)


def parse_store(uri: str | Path) -> StoreLocation:
    """The location a store URI (or a plain folder path) names; StoreError naming the problem otherwise."""
    text = str(uri).strip()
    scheme = text.split(":", 1)[0].lower() if ":" in text and not text.startswith("/") else ""
    if scheme in _PG_SCHEMES:
        return _pg_location(text)
    if scheme in ("sqlite", "file"):
        rest = text.split(":", 1)[1]
        rest = rest[2:] if rest.startswith("//") else rest  # sqlite:///abs and file:///abs, sqlite:rel
        catalog: Catalog = "sqlite" if scheme == "sqlite" else "duckdb"
    elif scheme and len(scheme) > 1 and "://" in text:
        raise StoreError(
            f"store {text.split('?')[0]!r}: unknown scheme {scheme!r} (a folder, file://, sqlite:// or postgresql://)"
        )
    else:
        rest, catalog = text, "duckdb"
    path, params = _split_query(rest, text)
    root = _local_path(path, text)
    unknown = set(params) - {"data"}
    if unknown:
        raise StoreError(f"store {text!r}: unknown option(s) {', '.join(sorted(unknown))} (valid: data)")
    shown = (f"sqlite://{root}" if catalog == "sqlite" else str(root)) + (
        f"?data={params['data']}" if "data" in params else ""
    )
    target = str(root / CATALOG_FILES[catalog])
    data = _data_path(params.get("data"), root / "data", shown)
    return StoreLocation(shown, catalog, target, data, root, moves="data" not in params)


# What a catalog file of each kind starts with (DuckDB: a checksum, then the magic; SQLite: its header string)
_CATALOG_MAGIC: dict[str, tuple[int, bytes]] = {"duckdb": (8, b"DUCK"), "sqlite": (0, b"SQLite format 3\x00")}
# What DuckDB says of a damaged catalog database (its own file format, or SQLite's; never of a Parquet file), and
# what that means
_CATALOG_DAMAGE = {
    "not a valid duckdb database file": "it is not a valid DuckDB database file",
    "corrupt database file": "a block of it fails its checksum",
    "database disk image is malformed": "SQLite finds it malformed (cut short, or overwritten in part)",
    "file is not a database": "SQLite finds it is not a database file",
}


def catalog_damage(location: StoreLocation, error: BaseException | None = None) -> str | None:
    """Why the store's catalog file is damaged, or None: before it is attached, a file that is empty or does not
    start as its kind's files do (random bytes, a file cut short at 0); after ``error`` (an attach or a read that
    failed), what DuckDB says of a damaged database file (a truncated one, a bad checksum)."""
    path = location.catalog_file
    if path is None or not path.is_file():
        return None
    if error is not None:
        message = one_line(error)
        lowered = message.lower()
        if "could not read enough bytes" in lowered and str(path) in message:
            return "it is cut short (DuckDB could not read a block it records)"
        return next((why for said, why in _CATALOG_DAMAGE.items() if said in lowered), None)
    try:
        size = path.stat().st_size
        offset, magic = _CATALOG_MAGIC[location.catalog]
        with path.open("rb") as handle:
            head = handle.read(offset + len(magic))
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if size == 0:
        return "it is empty (0 bytes)"
    if head[offset:] != magic:
        kind = "DuckDB" if location.catalog == "duckdb" else "SQLite"
        return f"it is not a {kind} database file ({size:,} bytes that do not start as one)"
    return None


def damaged_catalog_error(location: StoreLocation, why: str) -> StoreError:
    """The one line every command gives for a damaged catalog: the file, why, and what to run."""
    return StoreError(
        f"store {location}: its catalog {location.catalog_file} is damaged: {why}; nothing can be read or written "
        "through it: run `tcobench store verify` (it says what can be recovered)"
    )


def check_catalog(location: StoreLocation, error: BaseException | None = None) -> None:
    """Raise ``damaged_catalog_error`` when ``catalog_damage`` finds the catalog damaged."""
    why = catalog_damage(location, error)
    if why is not None:
        raise damaged_catalog_error(location, why) from error


@cache
def _extension_dir() -> Path:
    """The duckdb-ext-* wheels' folder for this DuckDB version and platform (a namespace package's folder)."""
    import duckdb_ext  # type: ignore[import-untyped]  # a namespace package: data only

    platform = duckdb.execute("PRAGMA platform").fetchone()
    for base in duckdb_ext.__path__:
        folder = Path(base) / "extensions" / f"v{duckdb.__version__}" / str(platform[0] if platform else "")
        if folder.is_dir():
            return folder
    raise StoreError(
        f"no DuckDB extensions for DuckDB {duckdb.__version__} are installed (pip install "
        f"duckdb-ext-ducklake=={duckdb.__version__}.*)"
    )


def _s3_secret(location: StoreLocation) -> str:
    """CREATE TEMPORARY SECRET for the data path's bucket, from the standard AWS variables."""
    env = aws_variables()
    options = {"TYPE": "s3", "SCOPE": sql_string(location.data_path)}
    for key, var in (
        ("KEY_ID", "AWS_ACCESS_KEY_ID"),
        ("SECRET", "AWS_SECRET_ACCESS_KEY"),
        ("SESSION_TOKEN", "AWS_SESSION_TOKEN"),
    ):
        if env.get(var):
            options[key] = sql_string(env[var])
    options["REGION"] = sql_string(env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1")
    endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
    if endpoint:
        parts = urlsplit(endpoint if "://" in endpoint else "https://" + endpoint)
        options["ENDPOINT"] = sql_string(parts.netloc)
        options["USE_SSL"] = "false" if parts.scheme == "http" else "true"
        options["URL_STYLE"] = sql_string("path")
    body = ", ".join(f"{k} {v}" for k, v in options.items())
    return f"CREATE OR REPLACE TEMPORARY SECRET tcobench_store ({body})"


# Extension files DuckDB has verified (signature checked), with the file's identity at the time: (device, inode, size,
# mtime_ns, ctime_ns). Checking an extension's signature is slow (docs/dev/performance.md#extension-signature), on every
# new DuckDB instance and in every process; a file verified once and unchanged since (same device, inode, size and
# times: any write or replacement changes ctime or the inode, and no unprivileged process can set ctime back) is
# loaded again without the check. The identities are kept in this process and in this user's record of them
# (``tcobench.settings.verified_extensions_file``), so that a later command (`tcobench query` from a script) does not
# check again; a record another user could write is ignored. Such an instance allows unsigned extensions, so only the
# files listed here are ever loaded into it, and `sandbox` then forbids loading anything (lock_configuration).
Identity = tuple[int, int, int, int, int]
_verified: dict[str, Identity] = {}
_verified_lock = threading.Lock()


def _identity(path: Path) -> Identity:
    st = path.stat()
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _record_file() -> Path:
    from tcobench.settings import verified_extensions_file

    return verified_extensions_file()


def _recorded() -> dict[str, Identity]:
    """The identities this user's earlier processes verified; none when the record is missing, unreadable, or could
    be written by another user (not owned by this user, or writable by its group or others)."""
    path = _record_file()
    try:
        with path.open("rb") as handle:
            st = os.fstat(handle.fileno())
            if st.st_uid != os.geteuid() or st.st_mode & 0o022:
                return {}
            data = json.loads(handle.read())
        return {str(k): (int(v[0]), int(v[1]), int(v[2]), int(v[3]), int(v[4])) for k, v in data.items()}
    except (OSError, ValueError, TypeError, IndexError, AttributeError):
        return {}


def _remember(verified: dict[str, Identity]) -> None:
    """Add ``verified`` to this user's record (written whole and renamed into place; best effort: a read-only home
    only means later processes check again)."""
    path = _record_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        merged = {**_recorded(), **verified}
        fd, name = tempfile.mkstemp(prefix=".verified-", dir=path.parent)
        tmp = Path(name)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:  # mkstemp: mode 0600
                json.dump({k: list(v) for k, v in merged.items()}, handle)
            tmp.replace(path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
    except OSError:
        return


def new_instance(location: StoreLocation) -> duckdb.DuckDBPyConnection:
    """A fresh in-memory DuckDB with the store's extensions loaded from the wheels and its S3 secret set.

    The first instance of a process loads each extension with DuckDB's signature check; later ones load the same,
    unchanged files without it (``_verified``)."""
    folder = _extension_dir()
    paths = [folder / f"{name}.duckdb_extension" for name in location.extensions]
    for name, path in zip(location.extensions, paths, strict=True):
        if not path.exists():
            raise StoreError(
                f"DuckDB extension {name} is not installed at {path} (pip install "
                f"duckdb-ext-{name.removesuffix('_scanner')}=={duckdb.__version__}.*)"
            )
    before = [_identity(p) for p in paths]
    with _verified_lock:
        known = all(_verified.get(str(p)) == ident for p, ident in zip(paths, before, strict=True))
        if not known:  # verified by an earlier process of this user?
            _verified.update(_recorded())
            known = all(_verified.get(str(p)) == ident for p, ident in zip(paths, before, strict=True))
    config: dict[str, str | bool | int | float | list[str]] = {
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "allow_unsigned_extensions": known,
    }
    threads = current().duckdb_threads
    if threads is not None:
        config["threads"] = threads
    con = duckdb.connect(":memory:", config=config)
    try:
        con.execute("SET enable_progress_bar = false")
        for path in paths:
            con.execute(f"LOAD {sql_string(str(path))}")
        if location.remote_data:
            con.execute(_s3_secret(location))
    except duckdb.Error as exc:
        con.close()
        raise StoreError(f"cannot prepare DuckDB for store {location}: {one_line(exc)}") from exc
    except StoreError:
        con.close()
        raise
    if not known:
        with _verified_lock:
            checked = {str(p): ident for p, ident in zip(paths, before, strict=True) if _identity(p) == ident}
            _verified.update(checked)  # only those unchanged while DuckDB checked them
            _remember(checked)
    return con


def attach_sql(location: StoreLocation, *, read_only: bool, snapshot: int | None = None) -> str:
    """ATTACH statement for the store as ``lake``."""
    prefix = {"duckdb": "", "sqlite": "sqlite:", "postgres": "postgres:"}[location.catalog]
    options = [f"DATA_PATH {sql_string(location.data_path)}"]
    if read_only:
        options.append("READ_ONLY")
    if snapshot is not None:
        options.append(f"SNAPSHOT_VERSION {int(snapshot)}")
    if location.moves:  # the catalog records its data path; a moved or copied store folder keeps working
        options.append("OVERRIDE_DATA_PATH true")
    return f"ATTACH {sql_string('ducklake:' + prefix + location.catalog_target)} AS {LAKE} ({', '.join(options)})"


def sandbox(con: duckdb.DuckDBPyConnection, location: StoreLocation, paths: list[str] | None = None) -> None:
    """Restrict a connection to the store: no other file or URL, no extension loading, settings locked.

    ``paths``: the only files it may open (a reader's: the data files of the snapshot it reads, so that nothing
    can be written or deleted there, ``tasks.store.readonly``); None: anything under the data path."""
    # DuckLake reads the data files through the same file system; views over a damaged store read named data
    # files (tasks/store/health.py)
    if paths is None:
        con.execute(f"SET allowed_directories = [{sql_string(location.data_path)}]")
    else:
        # a literal, not a bound list: DuckDB's Python client tries to import pandas per bound list element, and
        # without pandas installed each try searches sys.path again (a store's data files: hundreds of them)
        con.execute(f"SET allowed_paths = [{', '.join(map(sql_string, paths))}]")
    con.execute("SET enable_external_access = false")
    con.execute("SET allow_community_extensions = false")
    con.execute("SET lock_configuration = true")
