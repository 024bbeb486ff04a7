"""The shipped SQL views: folders by layer, each file declaring what it reads, the creation order from those
declarations (never from file names), and a declaration that is missing, wrong or cyclic fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import tcobench
from tcobench.errors import QueryError
from tcobench.tasks.store import views
from tcobench.tasks.store.views import LAYERS, sql_reads, sql_views

SQL = Path(tcobench.__file__).resolve().parent / "sql"
BASE_TABLES = {
    "runs",
    "requests",
    "telemetry",
    "engine_metrics",
    "commits",
    "hardware",
    "site",
    "ops",
    "rental",
    "latency_target",
}


def _code(text: str) -> str:
    return re.sub(r"--[^\n]*", "", text).lower()


def _relations(code: str) -> set[str]:
    """The names ``code`` reads as relations or calls: after FROM or JOIN, or called (a macro). A column or an alias
    that shares a view's name (availability's column `availability`, tco's pass-through columns) is not a read; a
    string literal is not code."""
    code = re.sub(r"'(?:[^']|'')*'", "''", code)
    return set(re.findall(r"\b(?:from|join)\s+([a-z_][a-z0-9_]*)", code)) | set(
        re.findall(r"\b([a-z_][a-z0-9_]*)\s*\(", code)
    )


def test_every_view_file_sits_in_a_layer_folder_without_a_number() -> None:
    found = sorted(SQL.rglob("*.sql"))
    assert found
    for path in found:
        assert path.parent.parent == SQL and path.parent.name in LAYERS, path
        assert not re.match(r"\d", path.name), f"{path.name}: the order comes from '-- reads:', not the name"
    assert {p.stem for p in found} == {name for name, _ in sql_views()}


@pytest.mark.parametrize("name,text", sql_views(), ids=[n for n, _ in sql_views()])
def test_the_declaration_names_exactly_what_the_view_reads(name: str, text: str) -> None:
    shipped = {n for n, _ in sql_views()}
    code = _code(text)
    declared_views, declared_tables = sql_reads(name, text)
    assert declared_views == (_relations(code) & shipped) - {name}
    assert declared_tables == set(re.findall(r"\b(?:from|join)\s+([a-z_][a-z0-9_]*)", code)) & BASE_TABLES


def test_each_view_is_created_after_everything_it_reads() -> None:
    seen: set[str] = set()
    for name, text in sql_views():
        assert sql_reads(name, text)[0] <= seen, name
        seen.add(name)


def test_a_missing_declaration_is_an_error_naming_the_view() -> None:
    with pytest.raises(QueryError, match="'lonely'.*reads"):
        sql_reads("lonely", "-- lonely: a view\nCREATE VIEW lonely AS SELECT 1;\n")


def test_a_cycle_or_an_unknown_view_is_an_error() -> None:
    files = {"a": (0, "-- reads: b\n"), "b": (0, "-- reads: a\n"), "c": (1, "-- reads: -\n")}
    with pytest.raises(QueryError, match=r"\['a', 'b'\].*cycle"):
        views._ordered(files)
    with pytest.raises(QueryError, match="unknown views \\['nowhere'\\]"):
        views._ordered({"a": (0, "-- reads: nowhere; tables: runs\n")})


def test_independent_views_keep_the_layer_order_then_the_name() -> None:
    files = {
        "z": (0, "-- reads: -\n"),
        "y": (1, "-- reads: -\n"),
        "x": (1, "-- reads: z, y\n"),
        "w": (2, "-- reads: -"),
    }
    assert views._ordered(files) == ["z", "y", "x", "w"]


def test_the_cache_key_follows_the_code_not_the_comments(monkeypatch: pytest.MonkeyPatch) -> None:
    def key(text: str) -> str:
        monkeypatch.setattr(views, "_cached_prefix", lambda: [("run_summary", text)])
        return views.view_key.__wrapped__()

    code = "-- run_summary: one row per run\n-- reads: -\nCREATE VIEW run_summary AS\nSELECT 1 AS n -- one\n"
    assert key(code) == key(code.replace("one row per run", "a row for each run"))
    assert key(code) != key(code.replace("SELECT 1", "SELECT 2"))
    assert key(code) != key(code.replace("-- one", "-- two"))  # a comment after code is the line's: kept
