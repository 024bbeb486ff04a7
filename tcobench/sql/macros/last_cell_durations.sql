-- last_cell_durations(cells): a table macro, not a view. Per cell label of the LIST cells, how long it took on the
-- last night it had an ok run (view cell_durations): what a nightly's estimate adds up (tasks/estimate.py).
--   cell
--   seconds    cell_durations.seconds of its latest started night with ok_runs > 0                        s
-- reads: cell_durations
CREATE OR REPLACE MACRO last_cell_durations(cells) AS TABLE
SELECT cell, arg_max(seconds, started_ns) AS seconds
FROM cell_durations
WHERE ok_runs > 0 AND cell IN (SELECT unnest(cells))
GROUP BY cell;
