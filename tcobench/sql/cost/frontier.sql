-- frontier: every ok or partial run as a point of its platform's throughput-interactivity frontier, priced
-- on every cost basis (one row per run and basis of view cost_basis), flagged pareto. Reads view frontier_points.
--
-- A platform is hardware x engine x model x workload shape: (hardware_key, engine_name, engine_version, model_name
-- and workload); each of its serving configurations (config_id) has a curve of its own. The frontier's inputs are
-- read in view frontier_points and nowhere else (tasks/analysis/compare/frontier.py loads its points from that
-- view). A run's point is its steady state where it has one (view steady_window: a steady throughput and a steady
-- TPOT), else the whole measured window; column steady says which.
-- Its points and prices are view frontier_points' (one row per run and basis), the flags (pareto: a point of its
-- configuration's curve; envelope: a point of the platform's envelope) added here.
-- Its columns, in order, with their formulas, units and data tests: frontier.yml beside this file
-- (docs/dev/columns.md).
-- reads: frontier_points
CREATE OR REPLACE VIEW frontier AS
WITH measured AS (  -- every ok or partial run's point once, priced or not (frontier_points has one row per basis)
    SELECT DISTINCT hardware_key, engine_name, engine_version, model_name, workload, config_id, interactivity,
        output_tok_s_per_gpu
    FROM frontier_points
)
SELECT
    f.* EXCLUDE (usd_per_gpu_s, basis, usd_per_m_output_tokens, usd_per_m_total_tokens, output_tokens_per_usd),
    CASE WHEN f.interactivity IS NULL OR f.output_tok_s_per_gpu IS NULL THEN NULL
        ELSE NOT EXISTS (
            SELECT 1 FROM measured AS o
            WHERE o.hardware_key = f.hardware_key AND o.engine_name = f.engine_name
                AND o.engine_version = f.engine_version AND o.model_name = f.model_name
                AND o.workload = f.workload
                AND o.config_id = f.config_id
                AND o.interactivity > f.interactivity AND o.output_tok_s_per_gpu > f.output_tok_s_per_gpu
        ) END AS pareto,
    CASE WHEN f.interactivity IS NULL OR f.output_tok_s_per_gpu IS NULL THEN NULL
        ELSE NOT EXISTS (
            SELECT 1 FROM measured AS o
            WHERE o.hardware_key = f.hardware_key AND o.engine_name = f.engine_name
                AND o.engine_version = f.engine_version AND o.model_name = f.model_name
                AND o.workload = f.workload
                AND o.interactivity > f.interactivity AND o.output_tok_s_per_gpu > f.output_tok_s_per_gpu
        ) END AS envelope,
    f.usd_per_gpu_s,
    f.basis,
    f.usd_per_m_output_tokens,
    f.usd_per_m_total_tokens,
    f.output_tokens_per_usd
FROM frontier_points AS f
WHERE f.basis IS NOT NULL;
