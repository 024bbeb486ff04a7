-- tco_rented: one row per (run, GPU-hour rate of the run's platform): the cost of the same tokens when the
-- accelerators are paid per GPU-hour (a cloud rental, or a published all-in owned rate) instead of owned.
-- The rows of view cost_basis whose basis is 'rented: <tier>', with the rate's own columns (price table
-- [rental.<key>]); a run whose platform has no [rental] row has no row here. Formulas: tco_scenarios.yml.
-- Its columns, in order, with their formulas, units and data tests: tco_rented.yml beside this file
-- (docs/dev/columns.md).
-- reads: cost_basis
CREATE OR REPLACE VIEW tco_rented AS
SELECT
    run_id, batch_id, host, date, started, model_name, workload, concurrency, hardware_key,
    rental_key, tier, usd_per_gpu_hour, gpus_rented, utilisation, hours_per_month,
    capital_usd_month AS rent_usd_month, ops_usd_month, adaptation_usd_month, total_usd_month,
    output_tok_s, total_tok_s, output_tokens_month, total_tokens_month,
    usd_per_m_output_tokens, usd_per_m_total_tokens,
    rental_source AS source, rental_as_of AS as_of
FROM cost_basis
WHERE rental_key IS NOT NULL;
