-- export_figures(ids): a table macro, not a view. One row per run of the LIST ids that has a run_summary row, with the figures `tcobench export --format benchmark-report` writes beside
-- run_summary's percentiles (tasks/export/benchmark_report.py): each distribution's mean, standard deviation (sample,
-- stddev_samp: NULL for one request), minimum and maximum over the run's ok requests. The percentiles are
-- run_summary's, read there, not computed again; a run without ok requests has NULL figures here.
--   input_tok_s    run_summary.prompt_tokens / run_summary.measure_s (NULL when measure_s is 0 or NULL)  tokens/s
--   request_rate_qps  run_summary.ok / run_summary.measure_s (NULL when measure_s is 0 or NULL)   requests/s
--   ttft_*_ms      request_metrics.ttft_ns / 1e6                                                    ms
--   tpot_*_ms      request_metrics.tpot_ns / 1e6                                                    ms/token
--   e2e_*_ms       request_metrics.e2e_ns / 1e6                                                     ms
--   itl_*_ms       every gap of request_metrics.itl_ns / 1e6                                        ms/token
--   isl_*          request_metrics.prompt_tokens                                                    tokens
--   osl_*          request_metrics.output_tokens                                                    tokens
-- reads: request_metrics, run_summary
CREATE OR REPLACE MACRO export_figures(ids) AS TABLE
WITH ok AS (
    SELECT run_id, ttft_ns, tpot_ns, e2e_ns, itl_ns, prompt_tokens, output_tokens
    FROM request_metrics
    WHERE ok AND run_id IN (SELECT unnest(ids))
),
per_request AS (
    SELECT
        run_id,
        avg(ttft_ns) / 1e6 AS ttft_mean_ms,
        stddev_samp(ttft_ns) / 1e6 AS ttft_std_ms,
        min(ttft_ns) / 1e6 AS ttft_min_ms,
        max(ttft_ns) / 1e6 AS ttft_max_ms,
        avg(tpot_ns) / 1e6 AS tpot_mean_ms,
        stddev_samp(tpot_ns) / 1e6 AS tpot_std_ms,
        min(tpot_ns) / 1e6 AS tpot_min_ms,
        max(tpot_ns) / 1e6 AS tpot_max_ms,
        avg(e2e_ns) / 1e6 AS e2e_mean_ms,
        stddev_samp(e2e_ns) / 1e6 AS e2e_std_ms,
        min(e2e_ns) / 1e6 AS e2e_min_ms,
        max(e2e_ns) / 1e6 AS e2e_max_ms,
        avg(prompt_tokens) AS isl_mean,
        stddev_samp(prompt_tokens) AS isl_std,
        min(prompt_tokens) AS isl_min,
        max(prompt_tokens) AS isl_max,
        avg(output_tokens) AS osl_mean,
        stddev_samp(output_tokens) AS osl_std,
        min(output_tokens) AS osl_min,
        max(output_tokens) AS osl_max
    FROM ok
    GROUP BY run_id
),
gaps AS (
    SELECT
        run_id,
        avg(gap_ns) / 1e6 AS itl_mean_ms,
        stddev_samp(gap_ns) / 1e6 AS itl_std_ms,
        min(gap_ns) / 1e6 AS itl_min_ms,
        max(gap_ns) / 1e6 AS itl_max_ms
    FROM (SELECT run_id, unnest(itl_ns) AS gap_ns FROM ok)
    GROUP BY run_id
)
SELECT
    s.run_id,
    CASE WHEN s.measure_s > 0 THEN s.prompt_tokens / s.measure_s END AS input_tok_s,
    CASE WHEN s.measure_s > 0 THEN s.ok / s.measure_s END AS request_rate_qps,
    p.* EXCLUDE (run_id),
    g.* EXCLUDE (run_id)
FROM run_summary AS s
LEFT JOIN per_request AS p ON p.run_id = s.run_id
LEFT JOIN gaps AS g ON g.run_id = s.run_id
WHERE s.run_id IN (SELECT unnest(ids));
