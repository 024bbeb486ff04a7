-- efficiency: one row per run: energy per token, tokens per kWh, electricity cost per token and tokens per
-- dollar (owned basis). Reads view tco only. The energy per token is measured where tco's energy is valid, else
-- estimated from the price table's load watts; the electricity cost is at load with the facility overhead (tco's
-- monthly power term also pays for idle hours).
-- Its columns, in order, with their formulas, units and data tests: efficiency.yml beside this file
-- (docs/dev/columns.md).
-- reads: tco
CREATE OR REPLACE VIEW efficiency AS
WITH joules AS (
    SELECT
        run_id,
        host,
        hardware_key,
        concurrency,
        output_tok_s,
        pue,
        kwh_usd,
        CASE WHEN energy_valid THEN 'measured' ELSE 'estimate: price-table load watts' END AS energy_basis,
        CASE WHEN energy_valid THEN measured_j_per_output_token ELSE load_w_used / NULLIF(output_tok_s, 0) END
            AS j_per_output_token,
        output_tokens_per_usd,
        total_tokens_per_usd
    FROM tco
)
SELECT
    *,
    3.6e6 / NULLIF(j_per_output_token, 0) AS output_tokens_per_kwh,
    j_per_output_token * pue / 3.6e6 * kwh_usd * 1e6 AS electricity_usd_per_m_output_tokens
FROM joules;
