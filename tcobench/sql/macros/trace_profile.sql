-- trace_profile(source, minute_ns, block_tokens): a table macro, not a view. The traffic profile of a trace
-- (`tcobench trace stats`, table trace_stats): one row.
--
-- source        the name of a table of the trace's requests: seq (BIGINT, the order they were read in), at_ns
--               (BIGINT, ns after the first request read, on the replay's clock), input_tokens and output_tokens
--               (BIGINT, tokens; NULL: not recorded), hash_ids (BIGINT[], the prefix blocks; empty: none recorded)
-- minute_ns     ns in a minute (60e9): minute m holds the requests with m * minute_ns <= at_ns < (m + 1) * minute_ns;
--               every minute from 0 to the last request's counts, the empty ones too (the last may be partial)
-- block_tokens  tokens in a hash_ids block (Mooncake: MOONCAKE_BLOCK_TOKENS, 512)
-- result
--   requests             count(*)
--   duration_ns          max(at_ns) - min(at_ns), ns
--   minutes              the last request's minute + 1
--   request_rate_mean    requests / minutes, requests per minute
--   request_rate_p95     quantile_cont(requests in the minute, 0.95) over the minutes, requests per minute
--   request_rate_peak    max(requests in the minute), requests per minute
--   token_rate_mean, _p95, _peak   the same of sum(input_tokens + output_tokens) in the minute, tokens per minute;
--                        NULL when no request records both lengths
--   output_rate_mean, _p95, _peak  the same of sum(output_tokens) in the minute, output tokens per minute (what
--                        `tcobench plan` sizes a fleet for); NULL when no request records its output length
--   input_p50, _p90, _p99, input_max    quantile_cont(input_tokens, q), max(input_tokens), tokens
--   output_p50, _p90, _p99, output_max  the same of output_tokens
--   prefix_shared_share  sum of the tokens of the blocks whose hash id an earlier block had (in read order) /
--                        sum(input_tokens); block k (1-based) of a request holds
--                        greatest(0, least(block_tokens, input_tokens - block_tokens * (k - 1))) tokens;
--                        NULL when no request records blocks
-- reads: -
CREATE OR REPLACE MACRO trace_profile(source, minute_ns, block_tokens) AS TABLE
    WITH arrivals AS (
        SELECT
            seq,
            at_ns,
            input_tokens,
            output_tokens,
            hash_ids,
            at_ns // minute_ns AS minute,
            input_tokens + output_tokens AS tokens
        FROM query_table(source)
    ),

    counted AS (
        SELECT
            minute,
            count(*) AS n,
            sum(tokens) AS tokens,
            sum(output_tokens) AS output_tokens
        FROM arrivals
        GROUP BY minute
    ),

    every_minute AS (
        SELECT unnest(range(0, max(minute) + 1)) AS minute
        FROM arrivals
    ),

    per_minute AS (
        SELECT
            coalesce(c.n, 0) AS n,
            coalesce(c.tokens, 0) AS tokens,
            coalesce(c.output_tokens, 0) AS output_tokens
        FROM every_minute AS m
        LEFT JOIN counted AS c ON m.minute = c.minute
    ),

    rates AS (
        SELECT
            count(*) AS minutes,
            avg(n) AS request_rate_mean,
            quantile_cont(n, 0.95) AS request_rate_p95,
            max(n) AS request_rate_peak,
            avg(tokens) AS token_rate_mean,
            quantile_cont(tokens, 0.95) AS token_rate_p95,
            max(tokens) AS token_rate_peak,
            avg(output_tokens) AS output_rate_mean,
            quantile_cont(output_tokens, 0.95) AS output_rate_p95,
            max(output_tokens) AS output_rate_peak
        FROM per_minute
    ),

    lengths AS (
        SELECT
            count(*) AS requests,
            max(at_ns) - min(at_ns) AS duration_ns,
            count(tokens) > 0 AS has_tokens,
            count(output_tokens) > 0 AS has_output,
            sum(input_tokens) AS input_sum,
            quantile_cont(input_tokens, 0.5) AS input_p50,
            quantile_cont(input_tokens, 0.9) AS input_p90,
            quantile_cont(input_tokens, 0.99) AS input_p99,
            max(input_tokens) AS input_max,
            quantile_cont(output_tokens, 0.5) AS output_p50,
            quantile_cont(output_tokens, 0.9) AS output_p90,
            quantile_cont(output_tokens, 0.99) AS output_p99,
            max(output_tokens) AS output_max
        FROM arrivals
    ),

    blocks AS (
        SELECT
            seq,
            input_tokens,
            unnest(hash_ids) AS hash_id,
            unnest(range(1, len(hash_ids) + 1)) AS k
        FROM arrivals
    ),

    seen AS (
        SELECT
            greatest(0, least(block_tokens, input_tokens - block_tokens * (k - 1))) AS tokens,
            row_number() OVER (PARTITION BY hash_id ORDER BY seq, k) > 1 AS before
        FROM blocks
    ),

    shared AS (
        SELECT
            count(*) AS blocks,
            coalesce(sum(tokens) FILTER (WHERE before), 0) AS tokens
        FROM seen
    )

    SELECT
        l.requests,
        l.duration_ns,
        r.minutes,
        r.request_rate_mean,
        r.request_rate_p95,
        r.request_rate_peak,
        CASE WHEN l.has_tokens THEN r.token_rate_mean END AS token_rate_mean,
        CASE WHEN l.has_tokens THEN r.token_rate_p95 END AS token_rate_p95,
        CASE WHEN l.has_tokens THEN r.token_rate_peak END AS token_rate_peak,
        CASE WHEN l.has_output THEN r.output_rate_mean END AS output_rate_mean,
        CASE WHEN l.has_output THEN r.output_rate_p95 END AS output_rate_p95,
        CASE WHEN l.has_output THEN r.output_rate_peak END AS output_rate_peak,
        l.input_p50,
        l.input_p90,
        l.input_p99,
        l.input_max,
        l.output_p50,
        l.output_p90,
        l.output_p99,
        l.output_max,
        CASE WHEN s.blocks > 0 THEN s.tokens / nullif(l.input_sum, 0) END AS prefix_shared_share
    FROM lengths AS l, rates AS r, shared AS s;
