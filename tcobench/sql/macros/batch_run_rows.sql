-- batch_run_rows(batch): a table macro, not a view. Every run row of one batch (runs.batch_id), with its measured
-- and failed request counts (view run_summary; 0 for a run without one): what settling a fleet night reads
-- (tasks/fleet/settle.py).
--   run_id, cell, host, concurrency, status, error, started_ns     (runs)
--   n          measured requests (run_summary.n, else 0)                                                  count
--   errors     of them, those not ok (run_summary.errors, else 0)                                         count
-- reads: run_summary; tables: runs
CREATE OR REPLACE MACRO batch_run_rows(batch) AS TABLE
SELECT
    r.run_id, r.cell, r.host, r.concurrency, r.status, r.error, r.started_ns,
    coalesce(s.n, 0) AS n,
    coalesce(s.errors, 0) AS errors
FROM runs AS r
LEFT JOIN run_summary AS s ON s.run_id = r.run_id
WHERE r.batch_id = batch;
