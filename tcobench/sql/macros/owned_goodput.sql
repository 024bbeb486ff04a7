-- owned_goodput(one_run := NULL, ids := NULL): a table macro, not a view. View goodput's rows on the owned basis
-- (basis = 'owned'), every column, of one run, of the runs of the LIST ids, or of every run (both NULL), as macro
-- rows_of_runs reads a view (the same parameters and the same pushdown of one_run); no order. What a run's summary
-- shows of its goodput (tasks/analysis/summarise.py).
-- reads: goodput
CREATE OR REPLACE MACRO owned_goodput(one_run := NULL, ids := NULL) AS TABLE
SELECT *
FROM goodput
WHERE
    basis = 'owned'
    AND (one_run IS NULL OR run_id = one_run)
    AND (ids IS NULL OR run_id IN (SELECT unnest(ids)));
