-- frontier_run_points(on_basis, ids, first_date := NULL, last_date := NULL): a table macro, not a view. The frontier
-- figures of each run of the LIST ids on the cost basis on_basis (text), from view frontier_points (the one place
-- they come from): tasks/analysis/compare/frontier.py's load_points. first_date, last_date: the runs' first and last
-- date (NULL: every date).
--   run_id, gpus_counted, output_tok_s_per_gpu, usd_per_gpu_s, steady      (frontier_points: formulas there)
--   config     hardware_key || ' ' || config_id: the serving configuration's curve
-- reads: frontier_points
CREATE OR REPLACE MACRO frontier_run_points(on_basis, ids, first_date := NULL, last_date := NULL) AS TABLE
SELECT
    run_id, gpus_counted, output_tok_s_per_gpu, usd_per_gpu_s, steady, hardware_key || ' ' || config_id AS config
FROM frontier_points
WHERE
    basis = on_basis
    AND run_id IN (SELECT unnest(ids))
    AND (first_date IS NULL OR date BETWEEN first_date AND last_date);
