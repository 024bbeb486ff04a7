-- cost_basis: one row per (run, cost basis): the owned cost of view tco and the same run priced at every
-- GPU-hour rate of its platform (price table [rental.*]: cloud rental, or a published all-in owned rate), in
-- the same columns, so the bases can be ranked, compared and charted together.
--
-- The rows of view tco_scenarios with scenario = 'baseline'; every formula is declared there (tco_scenarios.yml).
-- It also carries the run's price inputs and energy validity as on view tco's row (the same on every basis), so
-- compare reads an owned comparison from this view alone.
-- Its columns, in order, with their formulas, units and data tests: cost_basis.yml beside this file
-- (docs/dev/columns.md).
-- reads: tco_scenarios
CREATE OR REPLACE VIEW cost_basis AS
SELECT
    run_id, batch_id, host, date, started, model_name, workload, concurrency, hardware_key, utilisation,
    hours_per_month, output_tok_s, total_tok_s, output_tokens_month, total_tokens_month, ops_usd_month,
    adaptation_usd_month, rental_key, tier, usd_per_gpu_hour, rental_source, rental_as_of, basis, basis_key,
    gpus_rented, power_usd_month, capital_usd_month, total_usd_month, usd_per_m_output_tokens,
    usd_per_m_total_tokens, output_tokens_per_usd, total_tokens_per_usd, purchase_usd, pue, ops_hours_per_month,
    energy_valid, downtime_usd_month, downtime_basis, total_with_downtime_usd_month,
    usd_per_m_output_tokens_with_downtime, gco2e_per_m_output_tokens
FROM tco_scenarios
WHERE scenario = 'baseline';
