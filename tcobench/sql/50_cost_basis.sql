-- cost_basis: one row per (run, cost basis): the owned TCO of view tco, and the same run priced at every
-- GPU-hour rate of its platform (price table [rental.*]: cloud rental, or a published all-in owned rate),
-- in the same columns, so the bases can be ranked, compared and charted together. The rented formula lives
-- here; view tco_rented shows the rented rows with their rate's columns.
--
-- Inputs: view tco (one reference); rental (key, tier, hardware, usd_per_gpu_hour, source, as_of)
-- basis                  'owned' | 'rented: <tier>'
-- basis_key              the hardware key (owned) or the rental key (rented)
-- gpus_rented            rented: tco.gpus_used when > 0, else 1; owned: NULL                     GPUs
-- capital_usd_month      owned: tco.hardware_usd_month;
--                        rented: usd_per_gpu_hour * gpus_rented * hours_per_month (every hour is paid,
--                        whatever the utilisation; power and facility are inside the rate)      USD/month
-- power_usd_month        owned: tco.power_usd_month; rented: 0                                   USD/month
-- ops_usd_month, adaptation_usd_month   the same labour terms on both bases (tco)               USD/month
-- total_usd_month        capital + power + ops + adaptation                                      USD/month
-- output_tokens_month, total_tokens_month   (tco)                                               tokens/month
-- usd_per_m_output_tokens, usd_per_m_total_tokens    total_usd_month / tokens * 1e6              USD per 1M tokens
-- output_tokens_per_usd  output_tokens_month / total_usd_month                                   tokens/USD
-- total_tokens_per_usd   total_tokens_month / total_usd_month                                    tokens/USD
CREATE OR REPLACE VIEW cost_basis AS
WITH bases AS (
    SELECT
        NULL::VARCHAR AS rental_key, NULL::VARCHAR AS tier, NULL::VARCHAR AS rental_hardware,
        NULL::DOUBLE AS usd_per_gpu_hour, NULL::VARCHAR AS rental_source, NULL::DATE AS rental_as_of
    UNION ALL
    SELECT key, tier, hardware, CAST(usd_per_gpu_hour AS DOUBLE), source, as_of FROM rental
),
priced AS (
    SELECT
        t.run_id, t.batch_id, t.host, t.date, t.started, t.model_name, t.workload, t.concurrency,
        t.hardware_key, t.utilisation, t.hours_per_month, t.output_tok_s, t.total_tok_s,
        t.output_tokens_month, t.total_tokens_month, t.ops_usd_month, t.adaptation_usd_month,
        b.rental_key, b.tier, b.usd_per_gpu_hour, b.rental_source, b.rental_as_of,
        CASE WHEN b.rental_key IS NULL THEN 'owned' ELSE 'rented: ' || b.tier END AS basis,
        coalesce(b.rental_key, t.hardware_key) AS basis_key,
        CASE WHEN b.rental_key IS NOT NULL THEN CASE WHEN t.gpus_used > 0 THEN t.gpus_used ELSE 1 END END
            AS gpus_rented,
        CASE WHEN b.rental_key IS NULL THEN t.hardware_usd_month END AS owned_capital,
        CASE WHEN b.rental_key IS NULL THEN t.power_usd_month ELSE 0.0 END AS power_usd_month
    FROM tco AS t
    JOIN bases AS b ON b.rental_key IS NULL OR b.rental_hardware = t.hardware_key
),
costed AS (
    SELECT
        * EXCLUDE (owned_capital),
        coalesce(owned_capital, usd_per_gpu_hour * gpus_rented * hours_per_month) AS capital_usd_month
    FROM priced
),
totalled AS (
    SELECT *, capital_usd_month + power_usd_month + ops_usd_month + adaptation_usd_month AS total_usd_month
    FROM costed
)
SELECT
    *,
    total_usd_month / NULLIF(output_tokens_month, 0) * 1e6 AS usd_per_m_output_tokens,
    total_usd_month / NULLIF(total_tokens_month, 0) * 1e6 AS usd_per_m_total_tokens,
    output_tokens_month / NULLIF(total_usd_month, 0) AS output_tokens_per_usd,
    total_tokens_month / NULLIF(total_usd_month, 0) AS total_tokens_per_usd
FROM totalled;
