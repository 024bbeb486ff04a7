-- frontier_points: every ok or partial run as a point of its platform's throughput-interactivity frontier, priced
-- on every cost basis (one row per run and basis of view cost_basis). Reads views runs, run_summary, cost_basis.
--
-- A platform is hardware x engine x model x workload shape: (hardware_key, engine_name, engine_version,
-- model_name, workload); each of its serving configurations (config_id) has a curve of its own. The frontier's inputs are read here and nowhere else (tasks/analysis/compare/frontier.py loads
-- its points from this view). A run's point is its steady state where it has one (view steady_window: a steady
-- throughput and a steady TPOT), else the whole measured window; column steady says which.
-- run_id, batch_id, host, date, concurrency, hardware_key, engine_name, engine_version, model_name, workload,
-- gpu_vendor, gpu_name, gpu_source      identity (runs)
-- basis                  cost basis (cost_basis.basis)
-- config_id              the run's serving configuration (run_summary.config_id): the frontier is drawn per
--                        configuration, runs of one configuration on several hosts or nights are its replicates
-- gpus_counted, gpus_counted_source     GPUs the throughput is divided by (run_summary)        GPUs
-- steady                 the run has a steady state: steady_interactivity and steady_output_tok_s    BOOLEAN
-- steady_start_ns, steady_end_ns   its steady window (NULL without one)                           ns
-- interactivity          steady: run_summary.steady_interactivity, else run_summary.interactivity
--                        (= 1000 / median TPOT, ms, of the steady requests or of every ok request)  tok/s per user
-- interactivity_p90      the same at the p90 TPOT (steady_interactivity_p90, interactivity_p90)   tok/s per user
-- output_tok_s_per_gpu   steady: run_summary.steady_output_tok_s_per_gpu, else its output_tok_s_per_gpu
--                                                                                               tokens/s per GPU
-- usd_per_gpu_s          the run's cost rate per GPU: run_summary.output_tok_s_per_gpu / output_tokens_per_usd
--                        (the whole run's throughput over the tokens a USD buys at it)           USD per GPU-second
-- usd_per_m_output_tokens, usd_per_m_total_tokens     cost_basis' (USD per 1M tokens)
-- output_tokens_per_usd                               cost_basis' (tokens/USD)
-- The view frontier is this one with the pareto flag; compare reads this one (the flag needs every run of the
-- store's platforms, and compare does not use it). A run without a price on any basis is one row, basis NULL
-- (the LEFT JOIN): frontier's pareto counts it, as every ok or partial run, and leaves the row out.
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
