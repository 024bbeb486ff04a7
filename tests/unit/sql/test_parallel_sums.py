"""The figures of the shipped SQL do not depend on DuckDB's threads: a parallel aggregate feeds a group's rows in no
fixed order, and a float sum depends on the order, so macro availability_since sums durations as integers and the
night-weighting macros add their means in a fixed order (docs/store.md#duckdb-threads). Each test evaluates a macro
several times over a table large enough that DuckDB splits the aggregate across threads, and asserts the rows are
the same bits every time (the SQL before: a different result at nearly every evaluation)."""

from __future__ import annotations

from typing import Any

import duckdb
import pyarrow as pa

from tests.unit.sql.given_expect import Given, run

THREADS = 8  # more threads than a small machine's cores still splits the work
TIMES = 5

Rows = list[dict[str, Any]]


def _table(sql: str) -> pa.Table:
    """The rows of ``sql`` (over range(): fast to build in bulk, unlike records) as an Arrow table."""
    with duckdb.connect() as con:
        return con.execute(sql).fetch_arrow_table()


def _same_bits(subject: str, tables: Given, sql: str) -> Rows:
    """The rows of ``sql``, evaluated ``TIMES`` times on ``THREADS`` threads, asserted the same each time to the bit
    (the repr of a float is its exact value)."""
    results = [run(subject, tables, sql, threads=THREADS) for _ in range(TIMES)]
    distinct = {repr(rows) for rows in results}
    assert len(distinct) == 1, f"{len(distinct)} different results in {TIMES} evaluations of {subject}"
    return results[0]


def _values(keys: int, nights: int, rows: int) -> pa.Table:
    """``rows`` (key, value, night) rows: values with every bit of a DOUBLE's mantissa in use (no sum is exact)."""
    return _table(
        f"""
        SELECT
            i % {keys} AS "key",
            (hash(i) % 1000000007) / 7.0 AS "value",
            'b' || lpad(((i // {keys}) % {nights})::VARCHAR, 4, '0') AS night
        FROM range({rows}) AS t(i)
        """
    )


def test_availability_since_gives_the_same_bits_on_several_threads() -> None:
    # 2 hosts x 400 nights x 50 cells, one run each; durations of 1-51 s with ns digits; one cell night in 10 failed
    # with class platform
    runs = _table(
        """
        SELECT
            'run-' || i AS run_id,
            'gpu-' || (i % 2) AS host,
            'hw-' || (i % 2) AS hardware_key,
            'b' || lpad((i // 100)::VARCHAR, 5, '0') AS batch_id,
            'c' || ((i // 2) % 50) AS cell,
            (i // 100) * 86400000000000 + ((i // 2) % 50) * 60000000000 AS started_ns,
            started_ns + 1000000000 + (hash(i) % 50000000000)::BIGINT AS finished_ns,
            CASE WHEN hash(i || 'x') % 10 = 0 THEN 'error' ELSE 'ok' END AS status,
            CASE WHEN hash(i || 'x') % 10 = 0 THEN 'platform' END AS failure_class
        FROM range(40000) AS t(i)
        """
    )
    rows = _same_bits("availability_since", {"runs": runs}, "SELECT * FROM availability_since(NULL) ORDER BY ALL")
    found = [(r["scope"], r["host"], r["platform"], r["nights_scheduled"], r["cells"]) for r in rows]
    both = [("platform", None, "hw-0", 400, 20_000), ("platform", None, "hw-1", 400, 20_000)]
    assert found == [("host", "gpu-0", "hw-0", 400, 20_000), ("host", "gpu-1", "hw-1", 400, 20_000), *both]


def test_night_weighted_gives_the_same_bits_on_several_threads() -> None:
    # 7 keys x 300 nights, about 480 values a night: both levels of the mean are split across threads
    source = _values(7, 300, 1_000_000)
    rows = _same_bits("night_weighted", {"source": source}, "SELECT * FROM night_weighted('source') ORDER BY ALL")
    assert [(r["key"], r["nights"], r["runs"]) for r in rows] == [(k, 300, 142_857 + (k < 1)) for k in range(7)]


def test_the_list_forms_give_night_weighteds_bits_on_several_threads() -> None:
    # macro night_weighted_mean over list() of a parallel GROUP BY (as view platform_cost calls it) and table macro
    # night_weighted_lists: the same bits every time, and night_weighted's
    source = _values(3, 40, 200_000)
    lists = source.set_column(1, "value", pa.array([[v] for v in source.column("value").to_pylist()]))
    per_key = "SELECT key, night_weighted_mean(list((value, night))) AS mean FROM source GROUP BY key ORDER BY key"
    means = _same_bits("night_weighted_mean", {"source": source}, per_key)
    listed = _same_bits(
        "night_weighted_lists", {"source": lists}, "SELECT * FROM night_weighted_lists('source') ORDER BY key"
    )
    weighted = run("night_weighted", {"source": source}, "SELECT key, mean FROM night_weighted('source') ORDER BY key")
    assert means == weighted
    assert sorted((r["key"], r["mean"]) for r in listed) == [(r["key"], [r["mean"]]) for r in weighted]
