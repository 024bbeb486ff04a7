"""Given / expect tests of the table macros that read some runs' rows of a view (rows_of_runs, owned_goodput,
summary_cards) and the report's night-weighting per platform (platform_night_values, platform_night_weighted,
platform_night_weighted_lists), over small in-memory tables."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.factories import make_run
from tests.unit.sql.given_expect import expect_rows, given, run

SUMMARY = [{"run_id": r, "started": n, "output_tok_s": 10.0 * n} for n, r in enumerate(("a", "b", "c"), start=1)]


@pytest.mark.parametrize(
    ("one", "ids", "expected"),
    [
        ("b", None, ["b"]),
        (None, ["c", "a"], ["a", "c"]),
        (None, None, ["a", "b", "c"]),
        ("", None, []),  # the empty id: no run has it
        (None, [], []),
    ],
)
def test_rows_of_runs_reads_one_run_some_or_every_run(
    one: str | None, ids: list[str] | None, expected: list[str]
) -> None:
    sql = "SELECT * FROM rows_of_runs('run_summary', one_run := $one, ids := $ids) ORDER BY run_id"
    rows = run("rows_of_runs", {"run_summary": SUMMARY}, sql, {"one": one, "ids": ids})
    assert [r["run_id"] for r in rows] == expected
    assert all(list(r) == ["run_id", "started", "output_tok_s"] for r in rows)  # every column, in the view's order


def test_owned_goodput_reads_the_owned_basis_rows_only() -> None:
    goodput = [
        {"run_id": r, "basis": b, "goodput_tok_s": v}
        for r, b, v in (("a", "owned", 1.0), ("a", "rented: spot", 2.0), ("b", "owned", 3.0))
    ]
    sql = "SELECT * FROM owned_goodput(one_run := $one, ids := $ids) ORDER BY run_id"
    expect_rows(
        run("owned_goodput", {"goodput": goodput}, sql, {"one": None, "ids": None}),
        [{"run_id": "a", "basis": "owned", "goodput_tok_s": 1.0}, {"run_id": "b", "goodput_tok_s": 3.0}],
    )
    expect_rows(run("owned_goodput", {"goodput": goodput}, sql, {"one": "a", "ids": None}), [{"goodput_tok_s": 1.0}])


def test_summary_cards_are_record_cards_with_the_runs_cost() -> None:
    cards = [{"run_id": r, "host": "h", "started": n} for n, r in enumerate(("a", "b"))]
    tco = [{"run_id": r, "usd_per_m_output_tokens": u, "power_basis": "measured", "pue": 1.0} for r, u in (("a", 2.0),)]
    sql = "SELECT * FROM summary_cards(one_run := $one, ids := $ids)"
    rows = run("summary_cards", {"record_card": cards, "tco": tco}, sql, {"one": None, "ids": ["a", "b"]})
    assert [list(r) for r in rows] == [["run_id", "host", "started", "usd_per_m_output_tokens", "power_basis"]]
    expect_rows(rows, [{"run_id": "a", "usd_per_m_output_tokens": 2.0, "power_basis": "measured"}])  # b: no tco row


def _night_tables(values: list[tuple[str, Any, Any, bool | None]]) -> dict[str, Any]:
    """Runs p1 (nights n1, n1, n2) and q1 (n1) of platform P at c=1, r2 of platform Q at c=1, x outside the report;
    ``values``: (run_id, value, facet, every) rows of the source."""
    runs = given(
        "runs",
        make_run(run_id="p1", batch_id="n1", concurrency=1),
        make_run(run_id="p2", batch_id="n1", concurrency=1),
        make_run(run_id="p3", batch_id="n2", concurrency=1),
        make_run(run_id="q1", batch_id="n1", concurrency=1),
        make_run(run_id="x", batch_id="n1", concurrency=1),
    )
    platforms = [
        {"run_id": r, "platform": label, "platform_id": i}
        for r, label, i in (("p1", "P", 0), ("p2", "P", 0), ("p3", "P", 0), ("q1", "Q", 1))
    ]
    source = [{"run_id": r, "value": v, "facet": f, "every": e} for r, v, f, e in values]
    return {"runs": runs, "platforms": platforms, "source": source}


def test_platform_night_values_keys_each_value_by_platform_concurrency_and_facet() -> None:
    tables = _night_tables([("p1", 1.0, "owned", True), ("p2", None, "owned", True), ("x", 5.0, "owned", True)])
    sql = "SELECT * FROM platform_night_values('source', 'platforms')"
    expect_rows(
        run("platform_night_values", tables, sql),
        [
            {"key": {"platform_id": 0, "concurrency": 1, "facet": "owned"}, "platform": "P", "value": 1.0}
            | {"night": "n1", "every": True}
        ],
    )


def test_platform_night_weighted_weighs_every_night_alike() -> None:
    """P: night n1 has 10 and 30 (mean 20), n2 has 50: the mean over nights is 35 (a run-weighted mean says 30);
    every: P's rows are not all true; the facet groups apart (Q's 'spot')."""
    tables = _night_tables(
        [
            ("p1", 10, "owned", True),
            ("p2", 30, "owned", False),
            ("p3", 50, "owned", True),
            ("q1", 7, "owned", True),
            ("q1", 9, "spot", None),
        ]
    )
    sql = "SELECT * FROM platform_night_weighted('source', 'platforms')"
    expect_rows(
        run("platform_night_weighted", tables, sql),
        [
            {"platform": "P", "concurrency": 1, "facet": "owned", "mean": 35.0, "lowest": 20.0, "highest": 50.0}
            | {"nights": 2, "runs": 3, "every": False},
            {"platform": "Q", "facet": "owned", "mean": 7.0, "nights": 1, "runs": 1, "every": True},
            {"platform": "Q", "facet": "spot", "mean": 9.0, "nights": 1, "runs": 1, "every": None},
        ],
    )


def test_platform_night_weighted_lists_weighs_each_position_on_its_own() -> None:
    tables = _night_tables(
        [("p1", [1.0, 10.0], None, None), ("p2", [3.0, 30.0], None, None), ("p3", [5.0, 50.0], None, None)]
    )
    sql = "SELECT * FROM platform_night_weighted_lists('source', 'platforms')"
    expect_rows(
        run("platform_night_weighted_lists", tables, sql),
        [
            {"platform": "P", "concurrency": 1, "facet": None, "i": 1, "mean": 3.5, "lowest": 2.0, "highest": 5.0},
            {"platform": "P", "i": 2, "mean": 35.0, "lowest": 20.0, "highest": 50.0, "nights": 2, "runs": 3}
            | {"every": None},
        ],
    )
