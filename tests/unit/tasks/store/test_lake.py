"""Store URIs (parse_store), the S3 secret from the environment, and the extensions the wheels ship."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from tcobench.errors import ConfigError, StoreError
from tcobench.tasks.store import lake
from tcobench.tasks.store.lake import _s3_secret, new_instance, parse_store


def test_a_plain_folder_is_the_local_default(tmp_path: Path) -> None:
    for given in (str(tmp_path / "s"), f"file://{tmp_path / 's'}", tmp_path / "s"):
        loc = parse_store(given)
        assert (loc.catalog, loc.root, loc.uri) == ("duckdb", tmp_path / "s", str(tmp_path / "s"))
        assert loc.catalog_target == str(tmp_path / "s" / "catalog.ducklake")
        assert loc.data_path == f"{tmp_path / 's'}/data/"
        assert loc.log_dir == tmp_path / "s" / "logs"


def test_relative_and_home_paths_become_absolute(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    assert parse_store("rel").root == tmp_path / "rel"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert parse_store("~/x").root == tmp_path / "x"


def test_sqlite_is_a_shared_catalog_with_local_data(tmp_path: Path) -> None:
    for given in (f"sqlite://{tmp_path}/s", f"sqlite:{tmp_path}/s"):
        loc = parse_store(given)
        assert (loc.catalog, loc.catalog_target, loc.data_path) == (
            "sqlite",
            f"{tmp_path}/s/catalog.sqlite",
            f"{tmp_path}/s/data/",
        )
        assert loc.uri == f"sqlite://{tmp_path}/s"
    moved = parse_store(f"sqlite://{tmp_path}/s?data=s3://bucket/runs")
    assert (moved.data_path, moved.remote_data, moved.data_dir) == ("s3://bucket/runs/", True, None)


def test_postgres_catalog_with_s3_data() -> None:
    loc = parse_store("postgresql://bench@db.internal:5433/lake?data=s3://results/tcobench&sslmode=require")
    assert loc.catalog == "postgres"
    assert loc.catalog_target == "host=db.internal port=5433 user=bench dbname=lake sslmode=require"
    assert loc.data_path == "s3://results/tcobench/"
    assert loc.root is None and loc.remote_data
    assert loc.uri == "postgresql://db.internal:5433/lake?data=s3://results/tcobench"
    assert loc.extensions == ("ducklake", "postgres_scanner", "httpfs")
    assert ".local/state/tcobench/stores/" in str(loc.state_dir)


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("postgresql://bench:hunter2@db/lake?data=s3://b/p", r"password in the URI is refused; use PGPASSWORD"),
        ("postgresql://db/lake?data=s3://b/p&password=hunter2", r"credentials in the URI are refused"),
        ("postgresql://db/lake", r"needs \?data=s3://BUCKET/PREFIX"),
        ("postgresql://db/?data=s3://b/p", r"name the database"),
        ("postgresql://db/lake?data=s3:///p", r"names no bucket"),
        ("postgresql://db/lake?data=gs://b/p", r"neither a folder nor s3://"),
        ("mysql://db/lake", r"unknown scheme 'mysql'"),
        ("/tmp/x?colour=red", r"unknown option\(s\) colour \(valid: data\)"),
    ],
)
def test_bad_uris_name_the_problem_and_never_the_password(uri: str, message: str) -> None:
    with pytest.raises(StoreError, match=message) as info:
        parse_store(uri)
    assert "hunter2" not in str(info.value)


def test_s3_secret_comes_from_the_aws_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s3cr3t'quote")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:8333")
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    sql = _s3_secret(parse_store("/tmp/s?data=s3://bucket/prefix"))
    assert "KEY_ID 'AKIDEXAMPLE'" in sql and "SECRET 's3cr3t''quote'" in sql
    assert "ENDPOINT '127.0.0.1:8333'" in sql and "USE_SSL false" in sql and "URL_STYLE 'path'" in sql
    assert "REGION 'us-east-1'" in sql and "SCOPE 's3://bucket/prefix/'" in sql
    con = new_instance(parse_store("/tmp/s?data=s3://bucket/prefix"))
    try:
        shown = con.execute("SELECT secret_string FROM duckdb_secrets()").fetchall()
        assert "s3cr3t" not in str(shown) and "redacted" in str(shown)
        with pytest.raises(duckdb.Error, match="unredacted"):
            con.execute("SELECT * FROM duckdb_secrets(redact := false)").fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("given", [None, "1", "3"])
def test_duckdb_threads_are_what_the_setting_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str | None
) -> None:
    """TCOBENCH_DUCKDB_THREADS caps each instance's threads; unset, DuckDB's own default (one per core) stays."""
    if given is None:
        monkeypatch.delenv("TCOBENCH_DUCKDB_THREADS", raising=False)
    else:
        monkeypatch.setenv("TCOBENCH_DUCKDB_THREADS", given)
    con = new_instance(parse_store(f"sqlite://{tmp_path}"))
    try:
        threads = con.execute("SELECT current_setting('threads')").fetchone()
    finally:
        con.close()
    default = duckdb.connect(":memory:")
    try:
        own = default.execute("SELECT current_setting('threads')").fetchone()
    finally:
        default.close()
    assert threads == ((int(given),) if given else own)


def test_a_bad_duckdb_threads_value_is_one_line_naming_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TCOBENCH_DUCKDB_THREADS", "0")
    with pytest.raises(ConfigError, match=r"^TCOBENCH_DUCKDB_THREADS: .*got '0'"):
        new_instance(parse_store(f"sqlite://{tmp_path}"))


def test_extensions_load_from_the_wheels_never_the_network(tmp_path: Path) -> None:
    con = new_instance(parse_store(f"sqlite://{tmp_path}"))
    try:
        loaded = {r[0] for r in con.execute("SELECT extension_name FROM duckdb_extensions() WHERE loaded").fetchall()}
        assert {"ducklake", "sqlite_scanner"} <= loaded
        query = "SELECT name, value FROM duckdb_settings() WHERE name LIKE 'auto%_known_extensions'"
        settings = dict(con.execute(query).fetchall())
        assert settings == {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}
    finally:
        con.close()


def _unsigned_allowed(con: duckdb.DuckDBPyConnection) -> bool:
    found = con.execute("SELECT current_setting('allow_unsigned_extensions')").fetchone()
    return bool(found and found[0])


def test_an_extension_is_signature_checked_once_per_process_and_again_when_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "extensions"
    folder.mkdir()
    shutil.copy2(lake._extension_dir() / "ducklake.duckdb_extension", folder / "ducklake.duckdb_extension")
    monkeypatch.setattr(lake, "_extension_dir", lambda: folder)
    monkeypatch.setattr(lake, "_verified", {})
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    location = parse_store(str(tmp_path / "store"))
    assert location.extensions == ("ducklake",)
    first = new_instance(location)  # DuckDB checks the signature
    second = new_instance(location)  # the same, unchanged file: loaded without the check
    try:
        assert not _unsigned_allowed(first) and _unsigned_allowed(second)
    finally:
        first.close()
        second.close()
    with (folder / "ducklake.duckdb_extension").open("ab") as handle:
        handle.write(b"tampered")  # a changed file is checked again, and its signature no longer holds
    with pytest.raises(StoreError, match="ducklake"):
        new_instance(location)


def test_a_later_process_of_the_same_user_loads_a_verified_unchanged_extension_without_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The identities verified are kept in the user's record (settings.verified_extensions_file): a new process
    (here: the in-process memory emptied) loads the same file unchecked; a record others could write, or a changed
    file, is checked again."""
    from tcobench.settings import verified_extensions_file

    folder = tmp_path / "extensions"
    folder.mkdir()
    shutil.copy2(lake._extension_dir() / "ducklake.duckdb_extension", folder / "ducklake.duckdb_extension")
    monkeypatch.setattr(lake, "_extension_dir", lambda: folder)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    location = parse_store(str(tmp_path / "store"))

    def fresh_process() -> bool:
        monkeypatch.setattr(lake, "_verified", {})
        con = new_instance(location)
        try:
            return _unsigned_allowed(con)
        finally:
            con.close()

    assert not fresh_process()  # the first ever: DuckDB checks it, and the record keeps it
    record = verified_extensions_file()
    assert record.stat().st_mode & 0o777 == 0o600
    assert str(folder / "ducklake.duckdb_extension") in record.read_text("utf-8")
    assert fresh_process()  # a later process: unchecked
    record.chmod(0o622)
    assert not fresh_process()  # a record others could write is not trusted
    record.chmod(0o600)
    assert fresh_process()
    shutil.copy2(folder / "ducklake.duckdb_extension", tmp_path / "copy")
    (tmp_path / "copy").replace(folder / "ducklake.duckdb_extension")  # the same bytes, another file
    assert not fresh_process()
