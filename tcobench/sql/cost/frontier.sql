-- frontier: every ok or partial run as a point of its platform's throughput-interactivity frontier, priced
-- on every cost basis (one row per run and basis of view cost_basis). Reads views runs, run_summary, cost_basis.
--
-- A platform is hardware x engine x model x workload shape: (hardware_key, engine_name, engine_version,
-- model_name, workload). The frontier's inputs are read here and nowhere else (tasks/compare/frontier.py loads
-- its points from this view): a steady-state figure, where a run has one, is to replace its whole-run figure
-- here, by a COALESCE over the two.
-- run_id, batch_id, host, date, concurrency, hardware_key, engine_name, engine_version, model_name, workload,
-- gpu_vendor, gpu_name, gpu_source      identity (runs)
-- basis                  cost basis (cost_basis.basis)
-- gpus_counted, gpus_counted_source     GPUs the throughput is divided by (run_summary)        GPUs
-- interactivity          run_summary.interactivity = 1000 / median TPOT (ms)                   tok/s per user
-- interactivity_p90      run_summary.interactivity_p90 = 1000 / p90 TPOT (ms)                  tok/s per user
-- output_tok_s_per_gpu   run_summary.output_tok_s_per_gpu = output tok/s / gpus_counted        tokens/s per GPU
-- usd_per_m_output_tokens, usd_per_m_total_tokens     cost_basis' (USD per 1M tokens)
-- output_tokens_per_usd                               cost_basis' (tokens/USD)
-- pareto                 TRUE where no other run of the same platform has both a higher interactivity and a
--                        higher output_tok_s_per_gpu (on the median-TPOT interactivity); NULL without both
-- reads: cost_basis, run_summary; tables: runs
CREATE OR REPLACE VIEW frontier AS
WITH points AS (
    SELECT
        r.run_id, r.batch_id, r.host, r.date, r.concurrency, r.hardware_key, r.engine_name, r.engine_version,
        r.model_name, r.workload, r.gpu_vendor, r.gpu_name, r.gpu_source,
        s.gpus_counted, s.gpus_counted_source, s.interactivity, s.interactivity_p90, s.output_tok_s_per_gpu
    FROM runs AS r
    JOIN run_summary AS s ON s.run_id = r.run_id
    WHERE r.status IN ('ok', 'partial')  -- as compare: not failed, not interrupted
),
flagged AS (
    SELECT
        p.*,
        CASE WHEN p.interactivity IS NULL OR p.output_tok_s_per_gpu IS NULL THEN NULL
            ELSE NOT EXISTS (
                SELECT 1 FROM points AS o
                WHERE o.hardware_key = p.hardware_key AND o.engine_name = p.engine_name
                    AND o.engine_version = p.engine_version AND o.model_name = p.model_name
                    AND o.workload = p.workload
                    AND o.interactivity > p.interactivity AND o.output_tok_s_per_gpu > p.output_tok_s_per_gpu
            ) END AS pareto
    FROM points AS p
)
SELECT
    f.*,
    c.basis,
    c.usd_per_m_output_tokens,
    c.usd_per_m_total_tokens,
    c.output_tokens_per_usd
FROM flagged AS f
JOIN cost_basis AS c ON c.run_id = f.run_id;
