-- nightly_trend: one row per run in its series (host, model_name, workload, concurrency), oldest first, with
-- the change against the previous run and the spread of the runs before it, and the run's cost. The statistical
-- test on per-request samples (Mann-Whitney U + effect size) is tasks/analysis/history.py; this view is the series.
--
-- Every column but one is view trend_runs' (its header has their formulas and units), in the same order:
-- usd_per_m_output_tokens   view tco's, the run's cost per 1M output tokens (NULL: unpriced)   USD per 1M
--                           (placed after ttft_p50_ms, before night)
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
