-- frontier_run_points(on_basis, ids, first_date := NULL, last_date := NULL): a table macro, not a view. The frontier
-- figures of each run of the LIST ids on the cost basis on_basis (text), from view frontier_points (the one place
-- they come from): tasks/analysis/compare/frontier.py's load_points. first_date, last_date: the runs' first and last
-- date (NULL: every date).
--   run_id, gpus_counted, output_tok_s_per_gpu, usd_per_gpu_s, steady      (frontier_points: formulas there)
--   config     hardware_key || ' ' || config_id: the serving configuration's curve
--   ttft_p90_ms, interactivity_p90   run_summary.ttft_p90_ms (ms) and frontier_points.interactivity_p90
--              (tokens/s/user; TPOT p90 = 1000 / it): what `tcobench best` checks an SLO against (best.py)
-- reads: frontier_points, run_summary
CREATE OR REPLACE MACRO frontier_run_points(on_basis, ids, first_date := NULL, last_date := NULL) AS TABLE
SELECT
    f.run_id,
    f.gpus_counted,
    f.output_tok_s_per_gpu,
    f.usd_per_gpu_s,
    f.steady,
    f.hardware_key || ' ' || f.config_id AS config,
    s.ttft_p90_ms,
    f.interactivity_p90
FROM frontier_points AS f
JOIN run_summary AS s ON s.run_id = f.run_id
WHERE
    f.basis = on_basis
    AND f.run_id IN (SELECT unnest(ids))
    AND (first_date IS NULL OR f.date BETWEEN first_date AND last_date);
