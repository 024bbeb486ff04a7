-- environment_change_runs(): a table macro, not a view. The runs inside the windows of view environment_changes'
-- rows, each once: a run of the change's host (run_summary.host) that started (run_summary.started) from changed_at
-- to window_end (open when NULL). `tcobench history --changes` tests only these runs for performance flags
-- (tasks/analysis/operations.py), each against the same prior runs as `tcobench history` over the whole store.
--   run_id
-- reads: environment_changes, run_summary
CREATE OR REPLACE MACRO environment_change_runs() AS TABLE
SELECT DISTINCT s.run_id
FROM run_summary AS s
JOIN environment_changes AS c
    ON
        s.host = c.host
        AND s.started >= c.changed_at
        AND (c.window_end IS NULL OR s.started < c.window_end)
ORDER BY s.run_id;
