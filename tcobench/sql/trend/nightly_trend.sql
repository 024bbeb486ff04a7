-- nightly_trend: one row per run in its series (host, model_name, workload, concurrency), oldest first, with
-- the change against the previous run and the spread of the runs before it, and the run's cost. The statistical
-- test on per-request samples (Mann-Whitney U + effect size) is tasks/analysis/history.py; this view is the series.
--
-- Every column but one is view trend_runs', in the same order; the run's cost per 1M output tokens (view
-- tco's usd_per_m_output_tokens, NULL when unpriced) comes after ttft_p50_ms, before night.
-- Its columns, in order, with their formulas, units and data tests: nightly_trend.yml beside this file
-- (docs/dev/columns.md).
-- reads: tco, trend_runs
CREATE OR REPLACE VIEW nightly_trend AS
SELECT
    p.* EXCLUDE (night, prev_req_decode_tok_s_p50, decode_change_pct, prior_mean_decode_tok_s_p50,
                 prior_sd_decode_tok_s_p50),
    t.usd_per_m_output_tokens,
    p.night, p.prev_req_decode_tok_s_p50, p.decode_change_pct, p.prior_mean_decode_tok_s_p50,
    p.prior_sd_decode_tok_s_p50
FROM trend_runs AS p
LEFT JOIN tco AS t ON t.run_id = p.run_id;
