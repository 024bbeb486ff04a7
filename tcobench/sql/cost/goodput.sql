-- goodput: one row per (run, cost basis): how many measured requests met the run's SLO, the output tokens per
-- second they delivered, and the price of a million tokens counting only those (goodput, as DistServe and vLLM's
-- benchmark define it).
--
-- Inputs:
--   slo_targets: slo_ttft_ms, slo_tpot_ms, slo_itl_ms (ms; NULL = no target), slo_quantile (fraction, 0..1),
--                and whether the run has any target (view slo_targets, run/slo_targets.sql)
--   request_metrics: measured requests (measured): ok, ttft_ns, tpot_ns, itl_ns, output_tokens (ns, tokens)
--   run_summary: n, output_tokens, measure_s
--   cost_basis: basis, output_tokens_per_usd (tokens/USD), usd_per_m_output_tokens (USD per 1M output tokens)
--
-- A measured request is good when it is ok (request_metrics.ok) and meets every target given:
--   ttft_ns <= slo_ttft_ms * 1e6
--   tpot_ns <= slo_tpot_ms * 1e6          (request_metrics.tpot_ns; a request without one, e.g. a single output
--                                          token, has no decode gap and meets the TPOT target)
--   at least slo_quantile of the request's own gaps itl_ns are <= slo_itl_ms * 1e6, i.e. its slo_quantile-th
--   gap (lower empirical quantile) is within the target                       (a request with no gap meets it)
-- Failed requests count against the run; the price counts only the tokens delivered within the SLO.
--
-- Its columns, in order, with their formulas, units and data tests: goodput.yml beside this file
-- (docs/dev/columns.md).
-- reads: cost_basis, request_metrics, run_summary, slo_targets
CREATE OR REPLACE VIEW goodput AS
WITH targets AS (
    SELECT * FROM slo_targets
),
judged AS (
    SELECT
        q.run_id,
        q.output_tokens,
        q.ok
        AND (t.slo_ttft_ms IS NULL OR q.ttft_ns <= t.slo_ttft_ms * 1e6)
        AND (t.slo_tpot_ms IS NULL OR q.tpot_ns IS NULL OR q.tpot_ns <= t.slo_tpot_ms * 1e6)
        AND (t.slo_itl_ms IS NULL OR len(q.itl_ns) = 0
             OR len(list_filter(q.itl_ns, gap -> gap <= t.slo_itl_ms * 1e6)) >= t.slo_quantile * len(q.itl_ns))
            AS is_good
    FROM request_metrics AS q
    JOIN targets AS t ON t.run_id = q.run_id
    WHERE q.measured
),
counted AS (
    SELECT
        run_id,
        count(*) FILTER (WHERE is_good) AS good,
        CAST(sum(output_tokens) FILTER (WHERE is_good) AS BIGINT) AS good_output_tokens
    FROM judged
    GROUP BY run_id
),
per_run AS (
    SELECT
        s.run_id,
        s.batch_id,
        s.host,
        s.date,
        s.workload,
        s.concurrency,
        t.slo_ttft_ms,
        t.slo_tpot_ms,
        t.slo_itl_ms,
        t.slo_quantile,
        t.has_slo,
        s.n,
        coalesce(c.good, 0) AS good,
        coalesce(c.good, 0) / NULLIF(s.n, 0) AS good_fraction,
        CASE WHEN t.has_slo AND s.n > 0 THEN coalesce(c.good, 0) / s.n >= t.slo_quantile END AS slo_met,
        coalesce(c.good_output_tokens, 0) AS good_output_tokens,
        coalesce(c.good_output_tokens, 0) / NULLIF(s.measure_s, 0) AS goodput_tok_s,
        coalesce(c.good_output_tokens, 0) / NULLIF(s.output_tokens, 0) AS good_token_fraction
    FROM run_summary AS s
    JOIN targets AS t ON t.run_id = s.run_id
    LEFT JOIN counted AS c ON c.run_id = s.run_id
)
SELECT
    p.*,
    coalesce(b.basis, 'owned') AS basis,
    b.output_tokens_per_usd * p.good_token_fraction AS good_output_tokens_per_usd,
    b.usd_per_m_output_tokens / NULLIF(p.good_token_fraction, 0) AS usd_per_m_good_tokens
FROM per_run AS p
LEFT JOIN cost_basis AS b ON b.run_id = p.run_id;
