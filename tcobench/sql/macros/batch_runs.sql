-- batch_runs(batch): a table macro, not a view. The stored runs of one batch (runs.batch_id; a `tcobench run` or a
-- nightly's host), oldest first, with their measured requests (view run_summary): the last line of `tcobench run`
-- (tcobench/cli/run.py), which says what was kept.
--   run_id, concurrency, status
--   n, ok          measured requests, and of them the ok ones                                          count
-- reads: run_summary
CREATE OR REPLACE MACRO batch_runs(batch) AS TABLE
SELECT run_id, concurrency, status, n, ok
FROM run_summary
WHERE batch_id = batch
ORDER BY started;
