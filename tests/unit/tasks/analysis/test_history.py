"""history: the Mann-Whitney U test by hand, and change detection on a simulated fleet over five nights."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tcobench.errors import ConfigError
from tcobench.schemas import RunRecord
from tcobench.tasks.analysis.history import (
    CACHED_WINDOW,
    CHANGES_OF_RUNS_VIEWS,
    HISTORY_VIEWS,
    Series,
    _samples,
    _test_all,
    _trend,
    detect_changes,
    history,
    mann_whitney_u,
)
from tcobench.tasks.prices import load_prices
from tcobench.tasks.store.compact import compact_store
from tcobench.tasks.store.query import connect, freeze_views
from tcobench.tasks.store.store import RunRows, write_runs
from tests.unit.factories import make_request, write_fleet


def test_mann_whitney_u_without_ties() -> None:
    # x entirely below y: U(x) = 0. n1 = n2 = 5: mean n1 n2 / 2 = 12.5, sd sqrt(25 / 12 x 11) = 4.78714;
    # z = (max(0, 25) - 12.5 - 0.5) / 4.78714 = 2.50672; p = 2 x (1 - Phi(2.50672)) = erfc(2.50672 / sqrt 2) = 0.012186
    u, p = mann_whitney_u([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert u == 0.0 and p == pytest.approx(0.012186, abs=1e-6)
    u_rev, p_rev = mann_whitney_u([6, 7, 8, 9, 10], [1, 2, 3, 4, 5])
    assert u_rev == 25.0 and p_rev == pytest.approx(p)


def test_mann_whitney_u_with_ties() -> None:
    # pooled 1, 2, 2, 2, 3: ranks 1, 3, 3, 3, 5 (the three 2s share ranks 2-4). R(x) = 1 + 3 + 3 = 7,
    # U(x) = 7 - 3 x 4 / 2 = 1 (pairs x > y: two ties with the 2 of y count 1/2 each).
    # tie term: 3^3 - 3 = 24; sd = sqrt(3 x 2 / 12 x (6 - 24 / (5 x 4))) = sqrt(2.4) = 1.549193;
    # z = (max(1, 5) - 3 - 0.5) / 1.549193 = 0.968246; p = erfc(0.968246 / sqrt 2) = 0.332922
    u, p = mann_whitney_u([1, 2, 2], [2, 3])
    assert u == 1.0 and p == pytest.approx(0.332922, abs=1e-6)
    assert mann_whitney_u([3, 3], [3, 3, 3]) == (3.0, 1.0)  # all equal: no evidence at all
    with pytest.raises(ValueError, match="at least one value"):
        mann_whitney_u([], [1.0])


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    store = tmp_path_factory.mktemp("fleet")
    write_fleet(store)  # gpu-amd-1 at concurrency 4 decodes 15% slower on the last night, after a driver update
    connection = connect(store, load_prices(None))
    freeze_views(connection)
    yield connection
    connection.close()


def test_flags_the_regression_and_nothing_else(con: duckdb.DuckDBPyConnection) -> None:
    series = detect_changes(con)
    assert [s.key for s in series][:3] == [
        "gpu-amd-1 | llama3.2:3b | chat-short | c=1",
        "gpu-amd-1 | llama3.2:3b | chat-short | c=4",
        "gpu-amd-1 | llama3.2:3b | chat-short | c=16",
    ]
    assert all(len(s.points) == 5 for s in series) and len(series) == 6
    flags = [(s, p, c) for s in series for p, c in s.flags]
    assert len(flags) == 1
    s, point, change = flags[0]
    assert (s.host, s.concurrency, point.date, change.metric) == ("gpu-amd-1", 4, "2026-11-26", "decode_tok_s")
    assert change.change_pct < -8 and change.p_value < 1e-6 and change.effect < -0.9 and not change.better
    assert change.noise_sd is not None and abs(change.median - change.prior_median) > 3 * change.noise_sd
    assert point.provenance_changes == ("driver_version 6.10.5 -> 6.10.5.1",)
    # the first two nights have too few previous runs to be tested
    assert [len(p.changes) for p in s.points] == [0, 0, 2, 2, 2]


def test_noise_rule_keeps_night_to_night_drift_out(con: duckdb.DuckDBPyConnection) -> None:
    loose = detect_changes(con, noise_k=0.0, min_effect=0.3, min_change=0.03)
    flagged = {(s.host, s.concurrency, p.date) for s in loose for p, _ in s.flags}
    assert ("gpu-amd-1", 4, "2026-11-26") in flagged
    assert len(flagged) > 1  # without the noise rule, ordinary drift between nights is reported too


def test_no_flags_without_a_change(tmp_path: Path) -> None:
    write_fleet(tmp_path, nights=4, concurrency=(4,), regression=None)
    series = history(tmp_path, load_prices(None))
    assert len(series) == 2 and not [f for s in series for f in s.flags]


@pytest.mark.parametrize(
    "rules", [{"window": 0}, {"min_prior": 6, "window": 5}, {"alpha": 1.5}, {"min_change": -1}, {"min_effect": 2}]
)
def test_bad_rules(con: duckdb.DuckDBPyConnection, rules: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        detect_changes(con, **rules)  # type: ignore[arg-type]


def test_the_samples_are_each_runs_ok_measured_requests(con: duckdb.DuckDBPyConnection) -> None:
    # _samples gathers per run in DuckDB and splits with numpy; here against a plain row-by-row read
    rows = con.execute(
        "SELECT run_id, decode_tok_s, ttft_ns / 1e6 FROM request_metrics WHERE ok ORDER BY run_id"
    ).fetchall()
    assert rows
    samples = _samples(con)
    assert sorted(samples) == sorted({r[0] for r in rows})
    for run_id in samples:
        rates = sorted(r[1] for r in rows if r[0] == run_id and r[1] is not None)
        ttfts = sorted(r[2] for r in rows if r[0] == run_id and r[2] is not None)
        assert sorted(samples[run_id]["decode_tok_s"].tolist()) == rates
        assert sorted(samples[run_id]["ttft_ms"].tolist()) == ttfts
    some = sorted(samples)[:2]
    assert sorted(_samples(con, some)) == some


def test_changes_of_some_runs_test_only_their_series(con: duckdb.DuckDBPyConnection) -> None:
    everything = {s.key: s for s in detect_changes(con)}
    flagged = next(s for s in everything.values() if s.flags)
    run_id = flagged.flags[0][0].run_id
    only = detect_changes(con, runs=[run_id])
    assert [s.key for s in only] == [flagged.key]
    whole = everything[flagged.key]
    (point,) = only[0].points  # only that run's point, tested against the same prior runs as over the whole store
    assert point == next(p for p in whole.points if p.run_id == run_id)
    assert dataclasses.replace(only[0], points=whole.points) == whole
    both = [whole.points[0].run_id, run_id]  # the first point of a series has no prior runs: tested, no changes
    assert [p.run_id for p in detect_changes(con, runs=both)[0].points] == both
    assert detect_changes(con, runs=both)[0].points[0].changes == ()
    assert detect_changes(con, runs=[]) == []
    # only the rows from `window` runs before the first asked to the last are read: every run's point is still the
    # one the whole store gives, at each window (the tested window of a run stays whole)
    for window in (1, 3):
        full = {p.run_id: p for s in detect_changes(con, window=window, min_prior=1) for p in s.points}
        for run in list(full)[::3]:
            (series,) = detect_changes(con, window=window, min_prior=1, runs=[run])
            assert series.points == (full[run],)


def test_flagged_only_gives_the_flagged_points_alone(con: duckdb.DuckDBPyConnection) -> None:
    """flagged_only (a comparison's flagged runs): the flagged points of the series, as the whole result has them,
    and only the series with one."""
    everything = detect_changes(con)
    runs = [p.run_id for s in everything for p in s.points]
    wanted = [dataclasses.replace(s, points=tuple(p for p in s.points if p.flagged)) for s in everything]
    found = detect_changes(con, runs=runs, flagged_only=True)
    assert found == [s for s in wanted if s.points] and len(found) == 1 and len(found[0].points) == 1
    assert detect_changes(con, flagged_only=True) == found


def test_a_tests_basis_is_the_hash_of_its_runs_and_their_commits() -> None:
    """A run's basis: sha256 of the format and window, then each of it and its up to ``window`` prior runs as
    \\0 id \\0 commit time, first 24 hex digits; None when one of them has no commit. Stored tests are matched on it,
    so its bytes must not change (tests stored by an older tcobench would all be recomputed)."""
    import hashlib

    from tcobench.tasks.analysis.history import _TESTS_FORMAT, _bases

    rows: Any = [{"run_id": f"r{i}"} for i in range(6)]
    committed = {f"r{i}": 1000 + i for i in range(6) if i != 3}
    expected = []
    for i in range(6):
        digest = hashlib.sha256(f"{_TESTS_FORMAT}\0{2}".encode())
        stamps = [committed.get(f"r{j}") for j in range(max(0, i - 2), i + 1)]
        for j, stamp in zip(range(max(0, i - 2), i + 1), stamps, strict=True):
            digest.update(f"\0r{j}\0{stamp}".encode())
        expected.append(None if None in stamps else digest.hexdigest()[:24])
    assert _bases(rows, 2, committed) == expected
    assert expected[:3] != [None] * 3 and expected[3:] == [None, None, None]  # r3 has no commit: it and the next 2
    assert expected[0] == hashlib.sha256(b"tcobench-change-tests-1\x002\x00r0\x001000").hexdigest()[:24]


def test_changes_without_costs_are_the_changes_with_them(con: duckdb.DuckDBPyConnection) -> None:
    """costs=False reads view trend_runs (no tco): the same series, points and changes, only without the cost."""
    with_costs = detect_changes(con)
    assert any(p.usd_per_m_output_tokens is not None for s in with_costs for p in s.points)  # the fleet is priced
    without = detect_changes(con, costs=False)
    uncosted = [
        dataclasses.replace(
            s,
            points=tuple(
                dataclasses.replace(p, usd_per_m_output_tokens=None, prior_usd_per_m_output_tokens=None)
                for p in s.points
            ),
        )
        for s in with_costs
    ]
    assert without == uncosted
    assert any(s.flags for s in without)
    run_id = next(s for s in with_costs if s.flags).flags[0][0].run_id
    assert detect_changes(con, runs=[run_id], costs=False)[0].flags[0][0].run_id == run_id
    # trend_runs is nightly_trend without its one cost column: the same rows and columns, in the same order
    trend = con.execute("SELECT * EXCLUDE (usd_per_m_output_tokens) FROM nightly_trend ORDER BY run_id").fetchall()
    assert trend == con.execute("SELECT * FROM trend_runs ORDER BY run_id").fetchall()
    columns = [r[0] for r in con.execute("DESCRIBE nightly_trend").fetchall()]
    assert columns == [r[0] for r in con.execute("DESCRIBE trend_runs").fetchall()][:23] + [
        "usd_per_m_output_tokens",
        "night",
        "prev_req_decode_tok_s_p50",
        "decode_change_pct",
        "prior_mean_decode_tok_s_p50",
        "prior_sd_decode_tok_s_p50",
    ]


# what detect_changes reads, over the whole store (history) and of some runs (runs=)
_NEEDS = {*HISTORY_VIEWS, *CHANGES_OF_RUNS_VIEWS}


def _fresh(store: Path) -> list[str]:
    """The runs detect_changes tests afresh (their stored tests missing or stale), over the whole store."""
    con = connect(store, load_prices(None), needs=_NEEDS)
    try:
        by_series = _trend(con, CACHED_WINDOW, None)
        tests = _test_all(con, by_series, None, CACHED_WINDOW)
        return sorted(by_series[key][i]["run_id"] for key, t in tests.items() for i in t.fresh)
    finally:
        con.close()


def _connection(store: Path, stored: bool = True) -> duckdb.DuckDBPyConnection:
    con = connect(store, load_prices(None), needs=_NEEDS)
    if not stored:
        con.execute("DROP VIEW IF EXISTS _stored_change_tests")  # every test computed from the samples
    return con


def _changes(store: Path, stored: bool = True, **rules: Any) -> list[Series]:
    con = _connection(store, stored)
    try:
        return detect_changes(con, **rules)
    finally:
        con.close()


def _late_run(template: RunRecord, run_id: str, started_ns: int, rate: float) -> RunRows:
    """A run of ``template``'s series started at ``started_ns``: 20 ok requests decoding at about ``rate`` tok/s."""
    date = dt.datetime.fromtimestamp(started_ns / 1e9, dt.UTC).date().isoformat()
    run = template.model_copy(
        update={
            "run_id": run_id,
            "batch_id": run_id,
            "date": date,
            "started_ns": started_ns,
            "measure_start_ns": started_ns,
            "measure_end_ns": started_ns + 30 * 10**9,
            "finished_ns": started_ns + 31 * 10**9,
        }
    )
    requests = [
        make_request(
            run_id=run_id,
            date=date,
            host=run.host,
            request_index=i,
            prompt_index=i,
            start_ns=started_ns + i * 10**9,
            output_tokens=65,
            decode_ns=round(64 / (rate * (1 + 0.01 * (i % 5))) * 1e9),
        )
        for i in range(20)
    ]
    return RunRows(run, requests)


def test_stored_change_tests_are_the_computed_ones_and_only_stale_ones_are_retested(tmp_path: Path) -> None:
    """compact stores every run's tests; readers use them (the same points as computed from the samples), and a
    run committed late into a series, or a run re-written, makes its own and the next ``window`` runs' tests
    stale: those alone are tested afresh, and the next compact stores them."""
    runs = write_fleet(tmp_path, nights=8, concurrency=(4,))
    computed = _changes(tmp_path)
    assert len(_fresh(tmp_path)) == len(runs) == 16  # nothing stored yet
    assert compact_store(tmp_path).tested_runs == 16
    assert _fresh(tmp_path) == []
    assert _changes(tmp_path) == computed == _changes(tmp_path, stored=False)
    assert [f for s in computed for f in s.flags]  # the regression is flagged from the stored tests too
    stored, computed_only = _connection(tmp_path), _connection(tmp_path, stored=False)  # read only: shared
    try:
        for window in (3, 5):  # another window is never read from the stored tests; a subset reads them
            for run in [r.run_id for r in runs][::5]:
                assert detect_changes(stored, runs=[run], window=window, min_prior=1) == detect_changes(
                    computed_only, runs=[run], window=window, min_prior=1
                )
    finally:
        stored.close()
        computed_only.close()

    amd = sorted((r for r in runs if r.host == "gpu-amd-1"), key=lambda r: r.started_ns)
    late = (amd[2].started_ns + amd[3].started_ns) // 2  # between nights 3 and 4 of gpu-amd-1's series
    write_runs(tmp_path, [_late_run(amd[0], "late", late, 400.0)])
    assert _fresh(tmp_path) == sorted(["late", *[r.run_id for r in amd[3:8]]])  # the 5 after it have it as prior
    assert _changes(tmp_path) == _changes(tmp_path, stored=False)
    assert compact_store(tmp_path).tested_runs == 6 and _fresh(tmp_path) == []

    write_runs(tmp_path, [_late_run(amd[5], amd[5].run_id, amd[5].started_ns, 300.0)])  # re-written: new samples
    assert _fresh(tmp_path) == sorted(r.run_id for r in amd[5:8])
    assert _changes(tmp_path) == _changes(tmp_path, stored=False)
    assert compact_store(tmp_path).tested_runs == 3 and compact_store(tmp_path).tested_runs == 0


def test_some_runs_read_only_their_own_and_their_prior_runs_samples(
    con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without stored tests, a run's changes read the samples of that run and its prior runs only, never the
    whole store's (a nightly cell's summary on a year's store)."""
    import tcobench.tasks.analysis.history as module

    calls: list[tuple[Any, ...]] = []
    real = module._samples

    def spy(connection: duckdb.DuckDBPyConnection, runs: Any = None, dates: Any = None) -> Any:
        calls.append((runs, dates))
        return real(connection, runs, dates)

    monkeypatch.setattr(module, "_samples", spy)
    last = max((p for s in detect_changes(con) for p in s.points), key=lambda p: p.started)
    calls.clear()
    (series,) = detect_changes(con, runs=[last.run_id])
    assert [p.run_id for p in series.points] == [last.run_id]
    ((runs, dates),) = calls
    assert runs is not None and last.run_id in runs and len(runs) == 5  # itself and its 4 prior runs (5 nights)
    assert dates is not None
