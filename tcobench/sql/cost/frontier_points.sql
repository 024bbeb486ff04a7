-- frontier_points: every ok or partial run as a point of its platform's throughput-interactivity frontier, priced
-- on every cost basis (one row per run and basis of view cost_basis). Reads views runs, run_summary, cost_basis.
--
-- A platform is hardware x engine x model x workload shape: (hardware_key, engine_name, engine_version, model_name
-- and workload); each of its serving configurations (config_id) has a curve of its own, and the runs of one
-- configuration on several hosts or nights are its replicates. The frontier's inputs are read here and nowhere else
-- (tasks/analysis/compare/frontier.py loads its points from this view). A run's point is its steady state where it
-- has one (view steady_window: a steady throughput and a steady TPOT), else the whole measured window; column steady
-- says which.
-- The view frontier is this one with the pareto flag; compare reads this one (the flag needs every run of the
-- store's platforms, and compare does not use it). A run without a price on any basis is one row, basis NULL
-- (the LEFT JOIN): frontier's pareto counts it, as every ok or partial run, and leaves the row out.
-- Its columns, in order, with their formulas, units and data tests: frontier_points.yml beside this file
-- (docs/dev/columns.md).
-- reads: cost_basis, run_summary; tables: runs
CREATE OR REPLACE VIEW frontier_points AS
WITH measured AS (
    SELECT
        r.run_id, r.batch_id, r.host, r.date, r.concurrency, r.hardware_key, r.engine_name, r.engine_version,
        r.model_name, r.workload, r.gpu_vendor, r.gpu_name, r.gpu_source,
        s.config_id, s.gpus_counted, s.gpus_counted_source,
        s.steady_interactivity IS NOT NULL AND s.steady_output_tok_s_per_gpu IS NOT NULL AS steady,
        s.steady_start_ns, s.steady_end_ns, s.steady_interactivity, s.steady_interactivity_p90,
        s.steady_output_tok_s_per_gpu,
        s.interactivity AS run_interactivity, s.interactivity_p90 AS run_interactivity_p90,
        s.output_tok_s_per_gpu AS run_output_tok_s_per_gpu
    FROM runs AS r
    JOIN run_summary AS s ON s.run_id = r.run_id
    WHERE r.status IN ('ok', 'partial')  -- as compare: not failed, not interrupted
),
points AS (
    SELECT
        * EXCLUDE (steady_start_ns, steady_end_ns, steady_interactivity, steady_interactivity_p90,
                   steady_output_tok_s_per_gpu, run_interactivity, run_interactivity_p90),
        CASE WHEN steady THEN steady_start_ns END AS steady_start_ns,
        CASE WHEN steady THEN steady_end_ns END AS steady_end_ns,
        CASE WHEN steady THEN steady_interactivity ELSE run_interactivity END AS interactivity,
        CASE WHEN steady THEN steady_interactivity_p90 ELSE run_interactivity_p90 END AS interactivity_p90,
        CASE WHEN steady THEN steady_output_tok_s_per_gpu ELSE run_output_tok_s_per_gpu END AS output_tok_s_per_gpu
    FROM measured
)
SELECT
    p.* EXCLUDE (run_output_tok_s_per_gpu),
    p.run_output_tok_s_per_gpu / c.output_tokens_per_usd AS usd_per_gpu_s,
    c.basis,
    c.usd_per_m_output_tokens,
    c.usd_per_m_total_tokens,
    c.output_tokens_per_usd
FROM points AS p
LEFT JOIN cost_basis AS c ON c.run_id = p.run_id;
