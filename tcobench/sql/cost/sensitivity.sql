-- sensitivity: one row per (run, parameter, value): the owned cost per 1M output tokens when one assumption
-- changes and the others stay as in view tco (power stays measured or estimated as there).
--
-- The owned-basis rows of view tco_scenarios whose scenario changes one assumption (its header lists the
-- values and every formula: tcobench/sql/cost/tco_scenarios.sql):
-- parameter 'utilisation'      value in {0.1, 0.25, 0.5, 0.75, 1.0}       (fraction of the month serving)
-- parameter 'kwh_usd'          value = tco.kwh_usd x {0.5, 1, 2, 3}        (USD/kWh)
-- parameter 'lifetime_months'  value in {24, 36, 48, 60, 72}              (months)
--   total_usd_month, output_tokens_month, usd_per_m_output_tokens   of that scenario      USD/month, tokens, USD per 1M
--   baseline_usd_per_m_output_tokens  tco.usd_per_m_output_tokens                        USD per 1M tokens
--   change_pct       (usd_per_m_output_tokens / baseline - 1) * 100                       %
--   output_tokens_per_usd   of that scenario                                              tokens/USD
-- reads: tco, tco_scenarios
CREATE OR REPLACE VIEW sensitivity AS
SELECT
    s.run_id, s.host, s.hardware_key, s.concurrency, s.parameter, s.value, s.total_usd_month,
    s.output_tokens_month,
    t.usd_per_m_output_tokens AS baseline_usd_per_m_output_tokens,
    s.usd_per_m_output_tokens,
    (s.usd_per_m_output_tokens / NULLIF(t.usd_per_m_output_tokens, 0) - 1) * 100 AS change_pct,
    s.output_tokens_per_usd
FROM tco_scenarios AS s
JOIN tco AS t ON t.run_id = s.run_id
WHERE s.basis = 'owned' AND s.parameter IS NOT NULL;
