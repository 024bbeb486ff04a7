-- trend_runs: one row per run in its series (host, model_name, workload, concurrency), oldest first, with
-- the change against the previous run and the spread of the runs before it: view nightly_trend without the
-- cost column (nightly_trend is this view plus tco's usd_per_m_output_tokens). The statistical test on
-- per-request samples (Mann-Whitney U + effect size) is tasks/analysis/history.py; this view is the series, and what
-- tasks/analysis/history.py reads when it needs no cost (a comparison's flagged runs: tco is not computed for the
-- series' year of runs).
--
-- A series is named by macro trend_series; the spread is over up to 7 previous runs. The run's versions, digests
-- and hashes are carried as what could explain a change.
-- Its columns, in order, with their formulas, units and data tests: trend_runs.yml beside this file
-- (docs/dev/columns.md).
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
