-- run_summary: one row per run, over its measured requests (view request_metrics: measured, ok).
--
-- A run with no measured request still has its row (n = 0, metrics NULL). Percentiles are quantile_cont
-- (linear interpolation between the two nearest order statistics; docs/formulas.md says why). Latency, rate
-- and token figures are over ok requests only (request_metrics.ok); per-request figures are request_metrics'.
--
-- Its columns, in order, each with its formula, unit, direction and data tests, are declared once in
-- run_summary.yml beside this file (docs/dev/columns.md; docs/formulas.md tabulates them). The steady-state columns
-- (steady_*) are view steady_window's, copied (its formulas there); gpus_counted, config_id, interactivity and the
-- per-GPU throughputs are the frontier's coordinates (view frontier reads them; issue 30).
-- reads: request_metrics, steady_window; tables: runs
CREATE OR REPLACE VIEW run_summary AS
WITH request_stats AS (
    SELECT
        run_id,
        count(*) AS n,
        count(*) FILTER (WHERE NOT ok) AS errors,
        count(*) FILTER (WHERE ok) AS ok,
        quantile_cont(ttft_ns, 0.50) FILTER (WHERE ok) / 1e6 AS ttft_p50_ms,
        quantile_cont(ttft_ns, 0.90) FILTER (WHERE ok) / 1e6 AS ttft_p90_ms,
        quantile_cont(ttft_ns, 0.99) FILTER (WHERE ok) / 1e6 AS ttft_p99_ms,
        quantile_cont(e2e_ns, 0.50) FILTER (WHERE ok) / 1e6 AS e2e_p50_ms,
        quantile_cont(e2e_ns, 0.90) FILTER (WHERE ok) / 1e6 AS e2e_p90_ms,
        quantile_cont(e2e_ns, 0.99) FILTER (WHERE ok) / 1e6 AS e2e_p99_ms,
        avg(tpot_ns) FILTER (WHERE ok) / 1e6 AS tpot_mean_ms,
        quantile_cont(tpot_ns, 0.50) FILTER (WHERE ok) / 1e6 AS tpot_p50_ms,
        quantile_cont(tpot_ns, 0.90) FILTER (WHERE ok) / 1e6 AS tpot_p90_ms,
        quantile_cont(tpot_ns, 0.99) FILTER (WHERE ok) / 1e6 AS tpot_p99_ms,
        avg(decode_tok_s) FILTER (WHERE ok) AS req_decode_tok_s_mean,
        quantile_cont(decode_tok_s, 0.50) FILTER (WHERE ok) AS req_decode_tok_s_p50,
        avg(server_decode_tok_s) FILTER (WHERE ok) AS server_decode_tok_s_mean,
        quantile_cont(server_decode_tok_s, 0.50) FILTER (WHERE ok) AS server_decode_tok_s_p50,
        CAST(sum(prompt_tokens) FILTER (WHERE ok) AS BIGINT) AS prompt_tokens,
        CAST(sum(output_tokens) FILTER (WHERE ok) AS BIGINT) AS output_tokens,
        avg(prompt_tokens) FILTER (WHERE ok) AS isl_mean,
        quantile_cont(prompt_tokens, 0.50) FILTER (WHERE ok) AS isl_p50,
        quantile_cont(prompt_tokens, 0.99) FILTER (WHERE ok) AS isl_p99,
        avg(output_tokens) FILTER (WHERE ok) AS osl_mean,
        quantile_cont(output_tokens, 0.50) FILTER (WHERE ok) AS osl_p50,
        quantile_cont(output_tokens, 0.99) FILTER (WHERE ok) AS osl_p99,
        avg(requested_input_tokens) AS requested_isl_mean,
        avg(requested_output_tokens) AS requested_osl_mean,
        count(*) FILTER (WHERE in_flight_at_stop) AS in_flight_at_stop,
        string_agg(DISTINCT token_count_source, ',' ORDER BY token_count_source) FILTER (WHERE ok)
            AS token_count_source,
        CAST(sum(cached_tokens) FILTER (WHERE ok) AS BIGINT) AS cached_tokens
    FROM request_metrics
    WHERE measured
    GROUP BY run_id
),
gaps AS (
    SELECT run_id, unnest(itl_ns) AS gap_ns
    FROM request_metrics
    WHERE ok
),
gap_stats AS (
    SELECT
        run_id,
        quantile_cont(gap_ns, 0.50) / 1e6 AS itl_p50_ms,
        quantile_cont(gap_ns, 0.90) / 1e6 AS itl_p90_ms,
        quantile_cont(gap_ns, 0.99) / 1e6 AS itl_p99_ms
    FROM gaps
    GROUP BY run_id
),
joined AS (
    SELECT
        r.run_id,
        r.batch_id,
        r.host,
        r.date,
        make_timestamp(r.started_ns // 1000) AS started,
        r.engine_name,
        r.engine_version,
        r.model_name,
        r.workload,
        r.load_mode,
        r.concurrency,
        r.status,
        r.concurrency_reached,
        coalesce(s.n, 0) AS n,
        coalesce(s.errors, 0) AS errors,
        coalesce(s.ok, 0) AS ok,
        s.ttft_p50_ms,
        s.ttft_p90_ms,
        s.ttft_p99_ms,
        g.itl_p50_ms,
        g.itl_p90_ms,
        g.itl_p99_ms,
        s.e2e_p50_ms,
        s.e2e_p90_ms,
        s.e2e_p99_ms,
        s.tpot_mean_ms,
        s.req_decode_tok_s_mean,
        s.req_decode_tok_s_p50,
        s.server_decode_tok_s_mean,
        s.server_decode_tok_s_p50,
        s.prompt_tokens,
        s.output_tokens,
        (r.measure_end_ns - r.measure_start_ns) / 1e9 AS measure_s,
        s.tpot_p50_ms,
        s.tpot_p90_ms,
        s.tpot_p99_ms,
        r.input_tokens_spec,
        r.output_tokens_spec,
        s.isl_mean,
        s.isl_p50,
        s.isl_p99,
        s.osl_mean,
        s.osl_p50,
        s.osl_p99,
        s.requested_isl_mean,
        s.requested_osl_mean,
        coalesce(s.in_flight_at_stop, 0) AS in_flight_at_stop,
        r.stop_rule,
        r.client_saturated,
        r.client_check_note,
        s.token_count_source,
        s.cached_tokens,
        w.steady_start_ns,
        w.steady_end_ns,
        w.steady_share,
        w.short_steady,
        w.steady_output_tok_s,
        w.steady_tpot_p50_ms,
        w.steady_tpot_p90_ms,
        w.steady_interactivity,
        w.steady_interactivity_p90,
        w.steady_note,
        CASE WHEN r.gpus_given > 0 THEN r.gpus_given WHEN r.gpus_given = 0 THEN 1 WHEN r.gpu_count > 0
            THEN r.gpu_count WHEN r.declared_gpu_count > 0 THEN r.declared_gpu_count ELSE 1 END AS gpus_counted,
        CASE WHEN r.gpus_given > 0 THEN 'gpus_given' WHEN r.gpus_given = 0 THEN 'cpu' WHEN r.gpu_count > 0
            THEN 'gpu_count' WHEN r.declared_gpu_count > 0 THEN 'declared_gpu_count' ELSE 'cpu' END
            AS gpus_counted_source,
        r.config_id AS stored_config_id
    FROM runs AS r
    LEFT JOIN request_stats AS s ON s.run_id = r.run_id
    LEFT JOIN gap_stats AS g ON g.run_id = r.run_id
    LEFT JOIN steady_window AS w ON w.run_id = r.run_id
),
summary AS (
SELECT
    * EXCLUDE (tpot_p50_ms, tpot_p90_ms, tpot_p99_ms, gpus_counted, gpus_counted_source, stored_config_id),
    output_tokens / NULLIF(measure_s, 0) AS output_tok_s,
    (prompt_tokens + output_tokens) / NULLIF(measure_s, 0) AS total_tok_s,
    tpot_p50_ms,
    tpot_p90_ms,
    tpot_p99_ms,
    cached_tokens / NULLIF(prompt_tokens, 0) AS cached_share,
    gpus_counted,
    gpus_counted_source,
    coalesce(stored_config_id, 'legacy-' || left(md5(concat_ws('|', engine_name, engine_version, model_name,
        gpus_counted)), 8)) AS config_id
FROM joined
)
SELECT
    *,
    1000 / NULLIF(tpot_p50_ms, 0) AS interactivity,
    1000 / NULLIF(tpot_p90_ms, 0) AS interactivity_p90,
    output_tok_s / gpus_counted AS output_tok_s_per_gpu,
    steady_output_tok_s / gpus_counted AS steady_output_tok_s_per_gpu
FROM summary;
