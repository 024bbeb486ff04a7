-- tco: one row per run: the monthly cost of owning and running the hardware the run used (the "owned"
-- cost basis) under the run's own assumptions, and the price of a million tokens at the rate the run
-- measured. Every assumption is a column.
--
-- The rows of view tco_scenarios with basis = 'owned' and scenario = 'baseline'; every formula, input and unit is
-- declared there (tco_scenarios.yml, tco.yml). This view renames one column: tco_scenarios.capital_usd_month is its
-- hardware_usd_month.
-- Its columns, in order, with their formulas, units and data tests: tco.yml beside this file
-- (docs/dev/columns.md).
-- reads: tco_scenarios
CREATE OR REPLACE VIEW tco AS
SELECT
    run_id, batch_id, host, date, started, engine_name, engine_version, model_name, workload,
    load_mode, concurrency, status,
    -- assumptions
    hardware_key, site_key, ops_key, utilisation, hours_per_month,
    gpu_vendor, gpu_name, gpu_count, accelerators, units, gpus_used,
    purchase_usd, server_share_usd, lifetime_months, load_watts, idle_watts,
    energy_valid, measured_w, measured_idle_w, measured_j_per_output_token, load_w_used, idle_w_used, power_w,
    power_basis,
    pue, kwh_usd, ops_hours_per_month, hourly_usd, adaptation_days, daily_usd,
    -- measured rates
    output_tok_s, total_tok_s,
    -- monthly costs
    capital_usd_month AS hardware_usd_month, energy_kwh_month, power_usd_month, ops_usd_month, adaptation_usd_month,
    total_usd_month,
    -- tokens and prices
    output_tokens_month, total_tokens_month, usd_per_m_output_tokens, usd_per_m_total_tokens,
    output_tokens_per_usd, total_tokens_per_usd,
    -- downtime and carbon, beside the total (tco_scenarios.yml)
    downtime_usd_per_hour, availability_nights, availability, platform_failures, recovery_hours_mean,
    downtime_min_nights, downtime_usd_month, downtime_basis, total_with_downtime_usd_month,
    usd_per_m_output_tokens_with_downtime, grid_gco2e_per_kwh, gco2e_per_m_output_tokens
FROM tco_scenarios
WHERE basis = 'owned' AND scenario = 'baseline';
