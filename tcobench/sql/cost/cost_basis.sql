-- cost_basis: one row per (run, cost basis): the owned cost of view tco and the same run priced at every
-- GPU-hour rate of its platform (price table [rental.*]: cloud rental, or a published all-in owned rate), in
-- the same columns, so the bases can be ranked, compared and charted together.
--
-- The rows of view tco_scenarios with scenario = 'baseline'; every formula is in its header
-- (tcobench/sql/cost/tco_scenarios.sql). Columns:
-- basis                  'owned' | 'rented: <tier>'
-- basis_key              the hardware key (owned) or the rental key (rented)
-- rental_key, tier, usd_per_gpu_hour (USD per GPU-hour), rental_source, rental_as_of   rented: the [rental] row
-- gpus_rented            rented: GPUs paid per hour; owned: NULL                                  GPUs
-- capital_usd_month      owned: hardware amortised; rented: every hour of every rented GPU       USD/month
-- power_usd_month        owned: electricity with facility overhead; rented: 0 (inside the rate)  USD/month
-- ops_usd_month, adaptation_usd_month   the same labour terms on both bases                      USD/month
-- total_usd_month        capital + power + ops + adaptation                                      USD/month
-- output_tokens_month, total_tokens_month                                                       tokens/month
-- usd_per_m_output_tokens, usd_per_m_total_tokens                                                USD per 1M tokens
-- output_tokens_per_usd, total_tokens_per_usd                                                    tokens/USD
-- purchase_usd (USD), pue (facility W / IT W), ops_hours_per_month (h), energy_valid
--                        the run's price inputs and energy validity, as on view tco's row (the same on
--                        every basis): compare reads an owned comparison from this view alone
-- reads: tco_scenarios
CREATE OR REPLACE VIEW cost_basis AS
SELECT
    run_id, batch_id, host, date, started, model_name, workload, concurrency, hardware_key, utilisation,
    hours_per_month, output_tok_s, total_tok_s, output_tokens_month, total_tokens_month, ops_usd_month,
    adaptation_usd_month, rental_key, tier, usd_per_gpu_hour, rental_source, rental_as_of, basis, basis_key,
    gpus_rented, power_usd_month, capital_usd_month, total_usd_month, usd_per_m_output_tokens,
    usd_per_m_total_tokens, output_tokens_per_usd, total_tokens_per_usd, purchase_usd, pue, ops_hours_per_month,
    energy_valid
FROM tco_scenarios
WHERE scenario = 'baseline';
