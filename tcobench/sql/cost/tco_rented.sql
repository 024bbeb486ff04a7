-- tco_rented: one row per (run, GPU-hour rate of the run's platform): the cost of the same tokens when the
-- accelerators are paid per GPU-hour (a cloud rental, or a published all-in owned rate) instead of owned.
-- The rows of view cost_basis whose basis is 'rented: <tier>', with the rate's own columns; a run whose
-- platform has no [rental] row has no row here. Formulas: tcobench/sql/cost/tco_scenarios.sql.
--
--   rental_key, tier, usd_per_gpu_hour (USD per GPU-hour), source, as_of      price table [rental.<key>]
--   gpus_rented         GPUs paid per hour: the run's gpu_count, else the row's accelerators, else 1   GPUs
--   rent_usd_month      cost_basis.capital_usd_month: usd_per_gpu_hour * gpus_rented * 730 h          USD/month
--   ops_usd_month, adaptation_usd_month, total_usd_month (rent + ops + adaptation)                   USD/month
--   usd_per_m_output_tokens, usd_per_m_total_tokens                                                 USD per 1M tokens
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
