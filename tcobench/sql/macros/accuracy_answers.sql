-- accuracy_answers(ids): a table macro, not a view. The measured requests of the runs of the LIST ids with what an
-- accuracy score needs (tasks/workload/accuracy.py's score_answers; `tcobench compare`'s claim-grade accuracy rule).
--   run_id, workload (runs), prompt_index, output_prefix (request_metrics)
-- reads: request_metrics; tables: runs
CREATE OR REPLACE MACRO accuracy_answers(ids) AS TABLE
SELECT run_id, workload, prompt_index, output_prefix
FROM request_metrics
JOIN runs USING (run_id)
WHERE measured AND run_id IN (SELECT unnest(ids));
