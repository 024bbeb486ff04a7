-- night_cost(batch): a table macro, not a view. View night_platform_cost's rows of one nightly batch (batch_id), by
-- model, workload, platform rank and GPU: the nightly's cost summary (tasks/report/night_cost.py).
--   every column of view night_platform_cost (its header has their formulas and units)
-- reads: night_platform_cost
CREATE OR REPLACE MACRO night_cost(batch) AS TABLE
SELECT *
FROM night_platform_cost
WHERE batch_id = batch
ORDER BY model_name, workload, platform_rank, gpu;
