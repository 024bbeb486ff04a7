-- platform_cost: one row per (platform, workload, concurrency, cost basis): the cost efficiency that
-- `tcobench compare` compares, over every run of that group with a price (status ok or partial: never failed or
-- interrupted runs, whose figures cover only part of the planned requests).
--
-- Group: gpu_vendor, gpu_name, host, hardware_key, engine_name, engine_version, model_name, model_digest,
--        workload, prompt_set_hash, max_tokens, num_ctx, load_mode, concurrency, basis (view cost_basis).
-- Nights are run dates (UTC); every night weighs the same, whatever its number of runs:
--   runs, nights           count
--   output_tok_s           mean over nights of the mean over that night's runs                  tokens/s
--   output_tokens_per_usd  mean over nights of the mean over that night's runs of
--                          output_tokens_month / total_usd_month                                 tokens/USD
--   usd_per_m_output_tokens  1e6 / output_tokens_per_usd                                         USD per 1M tokens
--   capital_, power_, ops_, adaptation_usd_per_m_output_tokens
--                          usd_per_m_output_tokens * mean(term USD/month) / mean(total USD/month)
--                          (the four add up to usd_per_m_output_tokens)                          USD per 1M tokens
--   total_usd_month        mean over runs                                                        USD/month
CREATE OR REPLACE VIEW platform_cost AS
WITH per_run AS (
    SELECT
        r.gpu_vendor, r.gpu_name, r.host, r.hardware_key, r.engine_name, r.engine_version, r.model_name,
        r.model_digest, r.workload, r.prompt_set_hash, r.max_tokens, r.num_ctx, r.load_mode, r.concurrency,
        c.basis, r.date, r.run_id,
        c.output_tok_s, c.output_tokens_per_usd,
        c.capital_usd_month, c.power_usd_month, c.ops_usd_month, c.adaptation_usd_month, c.total_usd_month
    FROM cost_basis AS c
    JOIN runs AS r ON r.run_id = c.run_id
    WHERE r.status IN ('ok', 'partial') AND c.output_tokens_per_usd IS NOT NULL
),
per_night AS (
    SELECT
        * EXCLUDE (run_id, output_tok_s, output_tokens_per_usd, capital_usd_month, power_usd_month,
                   ops_usd_month, adaptation_usd_month, total_usd_month),
        count(*) AS runs,
        avg(output_tok_s) AS output_tok_s,
        avg(output_tokens_per_usd) AS output_tokens_per_usd,
        sum(capital_usd_month) AS capital, sum(power_usd_month) AS power, sum(ops_usd_month) AS ops,
        sum(adaptation_usd_month) AS adaptation, sum(total_usd_month) AS total
    FROM per_run
    GROUP BY ALL
),
grouped AS (
    SELECT
        * EXCLUDE (date, runs, output_tok_s, output_tokens_per_usd, capital, power, ops, adaptation, total),
        sum(runs) AS runs,
        count(*) AS nights,
        avg(output_tok_s) AS output_tok_s,
        avg(output_tokens_per_usd) AS output_tokens_per_usd,
        sum(capital) / sum(total) AS capital_share,
        sum(power) / sum(total) AS power_share,
        sum(ops) / sum(total) AS ops_share,
        sum(adaptation) / sum(total) AS adaptation_share,
        sum(total) / sum(runs) AS total_usd_month
    FROM per_night
    GROUP BY ALL
)
SELECT
    * EXCLUDE (capital_share, power_share, ops_share, adaptation_share),
    1e6 / output_tokens_per_usd AS usd_per_m_output_tokens,
    1e6 / output_tokens_per_usd * capital_share AS capital_usd_per_m_output_tokens,
    1e6 / output_tokens_per_usd * power_share AS power_usd_per_m_output_tokens,
    1e6 / output_tokens_per_usd * ops_share AS ops_usd_per_m_output_tokens,
    1e6 / output_tokens_per_usd * adaptation_share AS adaptation_usd_per_m_output_tokens
FROM grouped;
