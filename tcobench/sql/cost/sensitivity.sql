-- sensitivity: one row per (run, parameter, value): the owned cost per 1M output tokens when one assumption
-- changes and the others stay as in view tco (power stays measured or estimated as there). Varying
-- downtime_usd_per_hour changes only the downtime term and the cost with downtime (its last columns).
--
-- The owned-basis rows of view tco_scenarios whose scenario changes one assumption (its header lists the values;
-- tco_scenarios.yml declares every formula).
-- Its columns, in order, with their formulas, units and data tests: sensitivity.yml beside this file
-- (docs/dev/columns.md).
-- reads: tco, tco_scenarios
CREATE OR REPLACE VIEW sensitivity AS
SELECT
    s.run_id, s.host, s.hardware_key, s.concurrency, s.parameter, s.value, s.total_usd_month,
    s.output_tokens_month,
    t.usd_per_m_output_tokens AS baseline_usd_per_m_output_tokens,
    s.usd_per_m_output_tokens,
    (s.usd_per_m_output_tokens / NULLIF(t.usd_per_m_output_tokens, 0) - 1) * 100 AS change_pct,
    s.output_tokens_per_usd,
    s.downtime_usd_month,
    t.usd_per_m_output_tokens_with_downtime AS baseline_usd_per_m_output_tokens_with_downtime,
    s.usd_per_m_output_tokens_with_downtime
FROM tco_scenarios AS s
JOIN tco AS t ON t.run_id = s.run_id
WHERE s.basis = 'owned' AND s.parameter IS NOT NULL;
