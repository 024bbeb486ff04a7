-- history_points_around(view_name, names, ids, runs_before): a table macro, not a view. Macro history_points' rows of the
-- series in the LIST names (macro series_of_runs of ids), only from runs_before runs before the first run of the LIST
-- ids to the last of them, per series: what testing those runs against their prior runs reads
-- (tasks/analysis/history.py). The series filter is a constant list, which DuckDB applies before the window of view
-- trend_runs (docs/dev/performance.md#trend-series-literals).
--   every column of macro history_points, in its order (ORDER BY host, model_name, workload, concurrency, series, night)
-- reads: history_points
CREATE OR REPLACE MACRO history_points_around(view_name, names, ids, runs_before) AS TABLE
WITH t AS (
    SELECT *, row_number() OVER (PARTITION BY series ORDER BY night) AS _at
    FROM history_points(view_name)
    WHERE list_contains(names, series)
),
k AS (
    SELECT series, min(_at) - runs_before AS first_at, max(_at) AS last_at
    FROM t
    WHERE run_id IN (SELECT unnest(ids))
    GROUP BY series
)
SELECT t.* EXCLUDE (_at)
FROM t
JOIN k USING (series)
WHERE t._at BETWEEN k.first_at AND k.last_at
ORDER BY host, model_name, workload, concurrency, series, night;
