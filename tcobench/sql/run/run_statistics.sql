-- run_statistics: one row per run with ok measured requests (view request_metrics: ok): what the report's
-- latency distributions and compare's bootstrap need from a run's requests, so that neither rescans every
-- request of the store. It is a function of one run's rows, so the store caches it at commit (tasks/store/views.py),
-- like run_summary.
--
-- Distributions, at the 101 probabilities p = (i - 1) / 100 for i = 1..101 (0, 0.01, ..., 1), quantile_cont
-- (tcobench's quantile rule, as run_summary's percentiles). Bootstrap sums (tasks/analysis/compare/bootstrap.py)
-- over the ok requests with tokens counted and e2e_ns > 0, with t = output_tokens (output_*) or total_tokens
-- (total_*), tokens, and e = e2e_ns / 1e9, s.
--
-- Its columns, in order, with their formulas, units and data tests: run_statistics.yml beside this file
-- (docs/dev/columns.md).
-- reads: request_metrics
CREATE OR REPLACE VIEW run_statistics AS
WITH ok AS (
    SELECT run_id, ttft_ns, itl_ns, output_tokens, total_tokens, e2e_ns / 1e9 AS e
    FROM request_metrics
    WHERE ok
),
per_run AS (
    SELECT
        run_id,
        quantile_cont(ttft_ns, list_transform(range(101), i -> i / 100)) AS ttft_q,
        count(*) FILTER (WHERE output_tokens IS NOT NULL AND e > 0) AS output_n,
        sum(output_tokens) FILTER (WHERE e > 0)::DOUBLE AS output_t,
        sum(output_tokens::DOUBLE * output_tokens) FILTER (WHERE e > 0) AS output_tt,
        sum(e) FILTER (WHERE output_tokens IS NOT NULL AND e > 0) AS output_e,
        sum(e * e) FILTER (WHERE output_tokens IS NOT NULL AND e > 0) AS output_ee,
        sum(output_tokens * e) FILTER (WHERE e > 0) AS output_te,
        count(*) FILTER (WHERE total_tokens IS NOT NULL AND e > 0) AS total_n,
        sum(total_tokens) FILTER (WHERE e > 0)::DOUBLE AS total_t,
        sum(total_tokens::DOUBLE * total_tokens) FILTER (WHERE e > 0) AS total_tt,
        sum(e) FILTER (WHERE total_tokens IS NOT NULL AND e > 0) AS total_e,
        sum(e * e) FILTER (WHERE total_tokens IS NOT NULL AND e > 0) AS total_ee,
        sum(total_tokens * e) FILTER (WHERE e > 0) AS total_te
    FROM ok
    GROUP BY run_id
),
gaps AS (
    SELECT run_id, quantile_cont(gap, list_transform(range(101), i -> i / 100)) AS itl_q
    FROM (SELECT run_id, unnest(itl_ns) AS gap FROM ok)
    GROUP BY run_id
)
SELECT
    p.run_id,
    list_transform(p.ttft_q, q -> q / 1e6) AS ttft_ms_q,
    list_transform(g.itl_q, q -> q / 1e6) AS itl_ms_q,
    p.* EXCLUDE (run_id, ttft_q)
FROM per_run AS p
LEFT JOIN gaps AS g ON g.run_id = p.run_id;
