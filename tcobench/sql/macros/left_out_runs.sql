-- left_out_runs(): a table macro, not a view. The stored runs macro candidate_runs leaves out (status failed or
-- interrupted: not ok, not partial), with their status and the columns a selection can match (macro
-- selectable_runs: a run that failed before its first request has no run_summary row, NULL there); oldest first.
-- What a selection that matches no candidate says it left out (tasks/analysis/compare/selection.py).
-- reads: selectable_runs
CREATE OR REPLACE MACRO left_out_runs() AS TABLE
SELECT * EXCLUDE (started_ns, summarised)
FROM selectable_runs()
WHERE status NOT IN ('ok', 'partial')
ORDER BY started_ns, run_id;
