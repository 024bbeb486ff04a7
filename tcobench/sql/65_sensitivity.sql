-- sensitivity: one row per (run, parameter, value): the owned cost per 1M output tokens when one assumption
-- changes and the others stay as in view tco (power stays measured or estimated as there).
--
-- parameter 'utilisation'      value in {0.1, 0.25, 0.5, 0.75, 1.0}       (fraction of the month serving)
-- parameter 'kwh_usd'          value = tco.kwh_usd x {0.5, 1, 2, 3}        (USD/kWh)
-- parameter 'lifetime_months'  value in {24, 36, 48, 60, 72}              (months)
-- With u = utilisation, k = kwh_usd, L = lifetime_months after the change:
--   total_usd_month  = (purchase_usd + server_share_usd) * units / L
--                    + (u * load_w_used + (1 - u) * idle_w_used) * pue * hours_per_month / 1000 * k
--                    + ops_usd_month + adaptation_days * daily_usd / L                    USD/month
--   output_tokens_month = output_tok_s * 3600 * hours_per_month * u                       tokens/month
--   usd_per_m_output_tokens = total_usd_month / output_tokens_month * 1e6                 USD per 1M tokens
--   baseline_usd_per_m_output_tokens  tco.usd_per_m_output_tokens                        USD per 1M tokens
--   change_pct       (usd_per_m_output_tokens / baseline - 1) * 100                       %
CREATE OR REPLACE VIEW sensitivity AS
WITH grid (parameter, u, k_factor, l) AS (
    VALUES
        ('utilisation', 0.1, NULL, NULL), ('utilisation', 0.25, NULL, NULL), ('utilisation', 0.5, NULL, NULL),
        ('utilisation', 0.75, NULL, NULL), ('utilisation', 1.0, NULL, NULL),
        ('kwh_usd', NULL, 0.5, NULL), ('kwh_usd', NULL, 1.0, NULL), ('kwh_usd', NULL, 2.0, NULL),
        ('kwh_usd', NULL, 3.0, NULL),
        ('lifetime_months', NULL, NULL, 24.0), ('lifetime_months', NULL, NULL, 36.0),
        ('lifetime_months', NULL, NULL, 48.0), ('lifetime_months', NULL, NULL, 60.0),
        ('lifetime_months', NULL, NULL, 72.0)
),
varied AS (
    SELECT
        t.*,
        g.parameter,
        coalesce(g.u::DOUBLE, t.utilisation) AS u,
        t.kwh_usd * coalesce(g.k_factor::DOUBLE, 1.0) AS k,
        coalesce(g.l::DOUBLE, t.lifetime_months) AS l
    FROM tco AS t
    CROSS JOIN grid AS g
),
costed AS (
    SELECT
        run_id, host, hardware_key, concurrency, parameter,
        CASE parameter WHEN 'utilisation' THEN u WHEN 'kwh_usd' THEN k ELSE l END AS value,
        (purchase_usd + server_share_usd) * units / l
            + (u * load_w_used + (1 - u) * idle_w_used) * pue * hours_per_month / 1000 * k
            + ops_usd_month + adaptation_days * daily_usd / l AS total_usd_month,
        output_tok_s * 3600 * hours_per_month * u AS output_tokens_month,
        usd_per_m_output_tokens AS baseline_usd_per_m_output_tokens
    FROM varied
)
SELECT
    *,
    total_usd_month / NULLIF(output_tokens_month, 0) * 1e6 AS usd_per_m_output_tokens,
    (total_usd_month / NULLIF(output_tokens_month, 0) * 1e6 / NULLIF(baseline_usd_per_m_output_tokens, 0) - 1) * 100
        AS change_pct
FROM costed;
