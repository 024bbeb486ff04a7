-- platform_cost: one row per (platform, workload, concurrency, cost basis): the cost efficiency that
-- `tcobench compare` compares, over every run of that group with a price (status ok or partial: never failed or
-- interrupted runs, whose figures cover only part of the planned requests).
--
-- Group: gpu_vendor, gpu_name, host, hardware_key, engine_name, engine_version, model_name, model_digest,
--        the workload, prompt_set_hash, max_tokens, num_ctx, load_mode, concurrency and basis (view cost_basis).
-- Every mean here is night-weighted (macro night_weighted_mean: the mean over nights, a night being a
-- nightly batch (runs.batch_id), of each night's mean over its runs), so every night weighs the same,
-- whatever its number of runs. The four cost terms per 1M output tokens add up to usd_per_m_output_tokens; the
-- downtime term is beside them, never inside (NULL where the platform lacks the history: view tco_scenarios), and
-- so is the carbon per 1M output tokens (NULL where no run of the group measured its energy).
-- Its columns, in order, with their formulas, units and data tests: platform_cost.yml beside this file
-- (docs/dev/columns.md).
-- reads: cost_basis, night_weighted_mean; tables: runs
CREATE OR REPLACE VIEW platform_cost AS
WITH per_run AS (
    SELECT
        r.gpu_vendor, r.gpu_name, r.host, r.hardware_key, r.engine_name, r.engine_version, r.model_name,
        r.model_digest, r.workload, r.prompt_set_hash, r.max_tokens, r.num_ctx, r.load_mode, r.concurrency,
        c.basis, r.batch_id, r.date,
        c.output_tok_s, c.output_tokens_per_usd,
        c.capital_usd_month, c.power_usd_month, c.ops_usd_month, c.adaptation_usd_month, c.total_usd_month,
        c.downtime_usd_month, c.gco2e_per_m_output_tokens
    FROM cost_basis AS c
    JOIN runs AS r ON r.run_id = c.run_id
    WHERE r.status IN ('ok', 'partial') AND c.output_tokens_per_usd IS NOT NULL
),
grouped AS (
    SELECT
        gpu_vendor, gpu_name, host, hardware_key, engine_name, engine_version, model_name, model_digest,
        workload, prompt_set_hash, max_tokens, num_ctx, load_mode, concurrency, basis,
        count(*) AS runs,
        count(DISTINCT batch_id) AS nights,
        count(DISTINCT date) AS dates,
        night_weighted_mean(list((output_tok_s, batch_id))) AS output_tok_s,
        night_weighted_mean(list((output_tokens_per_usd, batch_id))) AS output_tokens_per_usd,
        night_weighted_mean(list((total_usd_month, batch_id))) AS total_usd_month,
        night_weighted_mean(list((capital_usd_month, batch_id))) AS capital,
        night_weighted_mean(list((power_usd_month, batch_id))) AS power,
        night_weighted_mean(list((ops_usd_month, batch_id))) AS ops,
        night_weighted_mean(list((adaptation_usd_month, batch_id))) AS adaptation,
        night_weighted_mean(list((downtime_usd_month, batch_id))) AS downtime,
        night_weighted_mean(list((gco2e_per_m_output_tokens, batch_id))) AS gco2e_per_m_output_tokens
    FROM per_run
    GROUP BY ALL
)
SELECT
    * EXCLUDE (capital, power, ops, adaptation, downtime, gco2e_per_m_output_tokens),
    1e6 / output_tokens_per_usd AS usd_per_m_output_tokens,
    1e6 / output_tokens_per_usd * capital / total_usd_month AS capital_usd_per_m_output_tokens,
    1e6 / output_tokens_per_usd * power / total_usd_month AS power_usd_per_m_output_tokens,
    1e6 / output_tokens_per_usd * ops / total_usd_month AS ops_usd_per_m_output_tokens,
    1e6 / output_tokens_per_usd * adaptation / total_usd_month AS adaptation_usd_per_m_output_tokens,
    1e6 / output_tokens_per_usd * downtime / total_usd_month AS downtime_usd_per_m_output_tokens,
    gco2e_per_m_output_tokens
FROM grouped;
