-- history_points(view_name): a table macro, not a view. The runs `tcobench history` tests (tasks/analysis/history.py):
-- the ok and partial runs (interrupted and failed runs are not trends) of the view named view_name, by series, oldest
-- first (ORDER BY host, model_name, workload, concurrency, series, night). view_name: 'nightly_trend', or 'trend_runs'
-- for a caller that needs no cost (the same rows, usd_per_m_output_tokens NULL: view tco is not computed,
-- docs/dev/performance.md#trend-without-costs). A connection made with `needs` must name that view.
--   every column of view nightly_trend (its header, and trend_runs', has their formulas and units);
--   usd_per_m_output_tokens is NULL where the view has no such column (UNION ALL BY NAME with no row adds it)
-- reads: -
CREATE OR REPLACE MACRO history_points(view_name) AS TABLE
SELECT *
FROM (
    SELECT * FROM query_table(view_name)
    UNION ALL BY NAME
    SELECT NULL::DOUBLE AS usd_per_m_output_tokens WHERE false
)
WHERE status IN ('ok', 'partial')
ORDER BY host, model_name, workload, concurrency, series, night;
