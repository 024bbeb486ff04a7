-- rows_of_runs(view_name, one_run := NULL, ids := NULL): a table macro, not a view. Every column of the view named
-- view_name (a view with a run_id column, e.g. 'run_summary', 'tco', 'tco_sources'; a connection made with `needs`
-- must name it), in the view's order, for the rows of one run (one_run, a run_id), of the runs of the LIST ids, or of
-- every run (both NULL); no order (the caller sorts: tasks/analysis/summarise.py). A bound one_run is folded into
-- the constant condition run_id = one_run, which DuckDB pushes down through the view's joins and aggregates to the
-- scans of that run's rows; a LIST is not pushed down (docs/dev/performance.md#per-cell-by-equality), so a caller
-- reads a few runs one call each and many runs in one call with ids.
-- reads: -
CREATE OR REPLACE MACRO rows_of_runs(view_name, one_run := NULL, ids := NULL) AS TABLE
SELECT *
FROM query_table(view_name)
WHERE
    (one_run IS NULL OR run_id = one_run)
    AND (ids IS NULL OR run_id IN (SELECT unnest(ids)));
