-- trend_runs: one row per run in its series (host, model_name, workload, concurrency), oldest first, with
-- the change against the previous run and the spread of the runs before it: view nightly_trend without the
-- cost column (nightly_trend is this view plus tco's usd_per_m_output_tokens). The statistical test on
-- per-request samples (Mann-Whitney U + effect size) is tasks/analysis/history.py; this view is the series, and what
-- tasks/analysis/history.py reads when it needs no cost (a comparison's flagged runs: tco is not computed for the
-- series' year of runs).
--
-- series                 trend_series(host, model_name, workload, concurrency) (macro): 'host | model | workload | c=N'
-- night                  1-based position of the run in its series, by started
-- output_tok_s, req_decode_tok_s_p50 (tokens/s), ttft_p50_ms (ms)
-- prev_req_decode_tok_s_p50   the previous run's value                                          tokens/s
-- decode_change_pct      (req_decode_tok_s_p50 / prev - 1) * 100                                %
-- prior_mean_decode_tok_s_p50, prior_sd_decode_tok_s_p50
--                        mean / sample sd of req_decode_tok_s_p50 over up to 7 previous runs   tokens/s
-- run_id, batch_id, date, started, status, gpu_name, hardware_key, output_tokens_spec, tokenizer   (runs)
-- engine_version, driver_version, image_digest, model_digest, prompt_set_hash, extra_body
--                        what could explain a change
-- reads: run_summary, trend_series; tables: runs
CREATE OR REPLACE VIEW trend_runs AS
WITH series AS (
    SELECT
        trend_series(r.host, r.model_name, r.workload, r.concurrency) AS series,
        r.host, r.model_name, r.workload, r.concurrency, r.run_id, r.batch_id, r.date, s.started, r.status,
        r.gpu_name, r.hardware_key, r.engine_version, r.driver_version, r.image_digest, r.model_digest,
        r.prompt_set_hash, r.extra_body, r.output_tokens_spec, r.tokenizer,
        s.output_tok_s, s.req_decode_tok_s_p50, s.ttft_p50_ms
    FROM runs AS r
    JOIN run_summary AS s ON s.run_id = r.run_id
)
SELECT
    *,
    row_number() OVER w AS night,
    lag(req_decode_tok_s_p50) OVER w AS prev_req_decode_tok_s_p50,
    (req_decode_tok_s_p50 / NULLIF(lag(req_decode_tok_s_p50) OVER w, 0) - 1) * 100 AS decode_change_pct,
    avg(req_decode_tok_s_p50) OVER prior AS prior_mean_decode_tok_s_p50,
    stddev_samp(req_decode_tok_s_p50) OVER prior AS prior_sd_decode_tok_s_p50
FROM series
WINDOW
    w AS (PARTITION BY series ORDER BY started, run_id),
    prior AS (PARTITION BY series ORDER BY started, run_id ROWS BETWEEN 7 PRECEDING AND 1 PRECEDING);
