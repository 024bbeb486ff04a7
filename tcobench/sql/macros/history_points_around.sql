-- history_points_around(view_name, names, ids, runs_before): a table macro, not a view. Macro history_points' rows of the
-- series in the LIST names (macro series_of_runs of ids), only each run of the LIST ids and the runs_before runs
-- before it, per series: what testing those runs against their prior runs reads (tasks/analysis/history.py; the rows
-- before each run of ids are its prior runs, so runs far apart in a series do not read the runs between them). The
-- series filter is a constant list, which DuckDB applies before the window of view trend_runs
-- (docs/dev/performance.md#trend-series-literals).
--   every column of macro history_points, in its order (ORDER BY host, model_name, workload, concurrency, series, night)
-- reads: history_points
CREATE OR REPLACE MACRO history_points_around(view_name, names, ids, runs_before) AS TABLE
WITH t AS (
    SELECT *, row_number() OVER (PARTITION BY series ORDER BY night) AS _at
    FROM history_points(view_name)
    WHERE list_contains(names, series)
),
k AS (
    SELECT series, _at
    FROM t
    WHERE run_id IN (SELECT unnest(ids))
)
SELECT t.* EXCLUDE (_at)
FROM t
WHERE EXISTS (SELECT 1 FROM k WHERE k.series = t.series AND t._at BETWEEN k._at - runs_before AND k._at)
ORDER BY host, model_name, workload, concurrency, series, night;
