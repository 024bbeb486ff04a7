-- latency_target_rows(ids): a table macro, not a view. View cost_at_latency_target's rows whose best run is one of the
-- LIST ids, and those with no best run (no run met the target), by target and then cost (NULLs last): the report's
-- cost-at-latency-target table (tasks/report/assets/figures.py).
--   every column of view cost_at_latency_target (its header has their formulas and units)
-- reads: cost_at_latency_target
CREATE OR REPLACE MACRO latency_target_rows(ids) AS TABLE
SELECT *
FROM cost_at_latency_target
WHERE best_run_id IN (SELECT unnest(ids)) OR best_run_id IS NULL
ORDER BY target, usd_per_m_output_tokens NULLS LAST;
