"""summarise on a real store: some runs' rows are exactly those runs' rows of the whole store's, in the same order,
whether they are read one macro call per run (``one_run := $one``: DuckDB pushes ``run_id = one_run`` down to the
scans) or in one pass with a list filter (more runs than ``BY_EQUALITY``)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tcobench.tasks.analysis import summarise as summarise_module
from tcobench.tasks.analysis.summarise import (
    SUMMARY_NEEDS,
    most_of_the_store,
    rows_by_equality,
    run_summaries,
    summarise,
)
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store import store as store_module
from tcobench.tasks.store.query import connect
from tests.unit.factories import make_request, make_run, write_fleet


def _only(table: pa.Table, ids: list[str]) -> pa.Table:
    return table.filter(pc.is_in(table.column("run_id"), pa.array(ids)))


@pytest.mark.parametrize("by_equality", [32, 0])
def test_some_runs_are_the_whole_stores_rows_of_those_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by_equality: int
) -> None:
    monkeypatch.setattr(summarise_module, "BY_EQUALITY", by_equality)
    runs = write_fleet(tmp_path, nights=2, concurrency=(1, 4), requests=6)
    prices = load_prices(None)
    everything = summarise(tmp_path, prices)
    assert everything.runs.num_rows == len(runs) == 8
    ids = [runs[5].run_id, runs[0].run_id, runs[3].run_id]
    some = summarise(tmp_path, prices, [*ids, ids[0]])  # a repeated id is read once
    for name in ("runs", "tco", "sources", "goodput"):
        wanted = _only(getattr(everything, name), ids)
        assert wanted.num_rows >= 3, name
        assert getattr(some, name).equals(wanted), name
    assert run_summaries(tmp_path, prices, ids).equals(some.runs)
    none = summarise(tmp_path, prices, [])
    assert (none.runs.num_rows, none.goodput.num_rows) == (0, 0)
    assert none.runs.schema == everything.runs.schema


def test_most_of_the_store_is_read_in_one_pass_with_the_same_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rows_by_equality reads runs that are at least half of the store in one call with the list of ids: the same
    rows as one call per run (what summary_cards and rows_of_runs read for a night of a small store)."""
    runs = write_fleet(tmp_path, nights=2, concurrency=(1, 4), requests=6)
    ids = [r.run_id for r in runs]
    con = connect(tmp_path, load_prices(None), needs=SUMMARY_NEEDS)
    try:
        assert [most_of_the_store(con, ids[:n]) for n in (0, 3, 4, 8)] == [False, False, True, True]
        assert not most_of_the_store(con, ids[:1])  # one run: one call either way
        assert not most_of_the_store(con, [ids[0]] * 4 + ids[1:3])  # a repeated id counts once
        sql = "SELECT * FROM rows_of_runs('run_summary', one_run := $one, ids := string_split($ids, chr(31)))"
        half = [ids[6], ids[1], ids[4], ids[2]]
        one_pass = rows_by_equality(con, sql, half)
        calls: list[object] = []

        def never(*args: object) -> bool:
            calls.append(args)
            return False

        monkeypatch.setattr(summarise_module, "most_of_the_store", never)
        by_equality = rows_by_equality(con, sql, half)
    finally:
        con.close()
    assert calls and one_pass.num_rows == by_equality.num_rows == 4
    key = [("run_id", "ascending")]
    assert one_pass.sort_by(key).equals(by_equality.sort_by(key))


def _no_connection(*args: object, **kwargs: object) -> None:
    raise AssertionError("the store was opened")


def test_runs_committed_by_this_process_are_summarised_from_their_committed_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = write_fleet(tmp_path, nights=1, concurrency=(1, 4), requests=6)
    prices = load_prices(None)
    own = [r.run_id for r in runs if r.host == runs[0].host]  # one host's levels: no two start at once (no tie)
    ids = [own[-1], own[0], own[-1]]
    with monkeypatch.context() as patched:
        patched.setattr(summarise_module, "connect", _no_connection)
        committed = run_summaries(tmp_path, prices, ids)  # a progress line: no attach, no views
    store_module.open_store(tmp_path).remember([r.run_id for r in runs], None)  # forgotten: read from the store
    stored = run_summaries(tmp_path, prices, ids)
    assert stored.num_rows == 2 and committed.equals(stored)


def test_a_run_rewritten_without_cached_rows_is_read_from_the_store_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_module.write_results(tmp_path, make_run(run_id="a"), [make_request(run_id="a")])
    assert store_module.open_store(tmp_path).committed("run_summary", ["a"]) is not None
    monkeypatch.setattr(store_module, "per_run_views", lambda tables, con=None: None)  # views not computable at commit
    store_module.write_results(tmp_path, make_run(run_id="a"), [make_request(run_id="a"), make_request(run_id="a")])
    assert store_module.open_store(tmp_path).committed("run_summary", ["a"]) is None
    monkeypatch.setattr(summarise_module, "connect", _no_connection)
    with pytest.raises(AssertionError, match="the store was opened"):
        run_summaries(tmp_path, load_prices(None), ["a"])
