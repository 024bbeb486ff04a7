-- cost_at_latency_target: one row per (latency target, platform, model, workload): the best throughput
-- among that platform's runs that meet the target, and what a million tokens cost there (owned basis).
--
-- Targets come from the price table's [latency_target.*] rows (ttft_p90_ms, tpot_p90_ms).
-- A platform is (host, hardware_key, gpu_name, engine_name, model_name, workload, prompt_set_hash).
-- A run meets the target when ttft_p90_ms <= the TTFT target AND tpot_p90_ms <= the TPOT target; of the
-- platform's runs with a cost, the best run is the one meeting it with the highest output_tok_s, and the run's figures
-- are that run's (all NULL when no run meets the target).
-- Its columns, in order, with their formulas, units and data tests: cost_at_latency_target.yml beside this file
-- (docs/dev/columns.md).
-- reads: run_summary, tco; tables: runs, latency_target
CREATE OR REPLACE VIEW cost_at_latency_target AS
WITH candidates AS (
    SELECT
        t.run_id, t.host, t.hardware_key, r.gpu_name, t.engine_name, t.model_name, t.workload, r.prompt_set_hash,
        t.concurrency, t.output_tok_s, s.ttft_p90_ms, s.tpot_p90_ms, t.usd_per_m_output_tokens
    FROM tco AS t
    JOIN runs AS r ON r.run_id = t.run_id
    JOIN run_summary AS s ON s.run_id = t.run_id
    WHERE t.usd_per_m_output_tokens IS NOT NULL
),
judged AS (
    SELECT
        lt.key AS target,
        lt.ttft_p90_ms AS target_ttft_p90_ms,
        lt.tpot_p90_ms AS target_tpot_p90_ms,
        c.*,
        coalesce(c.ttft_p90_ms <= lt.ttft_p90_ms AND c.tpot_p90_ms <= lt.tpot_p90_ms, false) AS meets
    FROM latency_target AS lt
    CROSS JOIN candidates AS c
)
SELECT
    target, target_ttft_p90_ms, target_tpot_p90_ms,
    host, hardware_key, gpu_name, engine_name, model_name, workload, prompt_set_hash,
    count(*) AS runs,
    count(*) FILTER (WHERE meets) AS runs_meeting,
    arg_max(run_id, output_tok_s) FILTER (WHERE meets) AS best_run_id,
    arg_max(concurrency, output_tok_s) FILTER (WHERE meets) AS concurrency,
    max(output_tok_s) FILTER (WHERE meets) AS output_tok_s,
    arg_max(ttft_p90_ms, output_tok_s) FILTER (WHERE meets) AS ttft_p90_ms,
    arg_max(tpot_p90_ms, output_tok_s) FILTER (WHERE meets) AS tpot_p90_ms,
    arg_max(usd_per_m_output_tokens, output_tok_s) FILTER (WHERE meets) AS usd_per_m_output_tokens
FROM judged
GROUP BY ALL;
