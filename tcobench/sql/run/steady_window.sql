-- steady_window: one row per run with measured requests: the stretch of its measurement in which the load was
-- full (the steady state), and the run's figures over that stretch. Reads runs and request_metrics (measured
-- requests; the token and latency figures count ok requests only). Times are ns since the Unix epoch.
--
-- Per measured request: first_ns = start_ns + ttft_ns (first content token), end_ns = start_ns + e2e_ns. The window
-- opens once the load is full and closes when it starts to drain: closed loop (runs.rate_rps IS NULL), once all
-- c = runs.concurrency streams are in flight, until the first stream that finished without being replaced; open
-- loop (runs.rate_rps set, --rate), once the in-flight count has built up, until the last arrival; a replayed trace
-- (runs.load_mode 'replay') has none: its load follows the trace, so its steady fields are null and steady_note says
-- why (docs/claim-grade.md). Its tokens are
-- counted by their receive times (an even spread of every request put too many tokens inside: the requests still
-- running at the window's end speed up as the batch empties, after it).
--
-- Its columns, in order, with their formulas, units and data tests: steady_window.yml beside this file
-- (docs/dev/columns.md).
-- reads: in_steady, request_metrics; tables: runs
CREATE OR REPLACE VIEW steady_window AS
WITH req AS (
    SELECT
        run_id,
        ok,
        start_ns,
        e2e_ns,
        start_ns + ttft_ns AS first_ns,
        start_ns + e2e_ns AS end_ns,
        decode_ns,
        decode_tokens,
        tpot_ns,
        request_index,
        chunks,
        itl_ns
    FROM request_metrics
    WHERE measured
),
ranked AS (
    SELECT run_id, first_ns, row_number() OVER (PARTITION BY run_id ORDER BY first_ns) AS k
    FROM req
    WHERE first_ns IS NOT NULL
),
last_send AS (
    SELECT run_id, max(start_ns) AS last_ns, min(start_ns) AS first_send_ns,
        quantile_cont(e2e_ns, 0.5) FILTER (WHERE ok) AS e2e_p50_ns
    FROM req
    GROUP BY run_id
),
opens AS (
    SELECT k.run_id, k.first_ns AS full_ns
    FROM ranked AS k
    JOIN runs AS r ON r.run_id = k.run_id AND k.k = r.concurrency
),
closes AS (
    SELECT q.run_id, min(q.end_ns) AS unreplaced_ns
    FROM req AS q
    JOIN last_send AS l ON l.run_id = q.run_id AND q.end_ns > l.last_ns
    GROUP BY q.run_id
),
bounds AS (
    SELECT
        r.run_id,
        r.measure_start_ns,
        r.measure_end_ns,
        r.load_mode = 'replay' AS replay,
        CASE
            WHEN r.load_mode = 'replay' THEN NULL
            WHEN r.rate_rps IS NULL THEN o.full_ns
            ELSE CAST(l.first_send_ns + l.e2e_p50_ns AS BIGINT)
        END AS steady_start_ns,
        CASE
            WHEN r.load_mode = 'replay' THEN NULL WHEN r.rate_rps IS NULL THEN c.unreplaced_ns ELSE l.last_ns
        END AS steady_end_ns
    FROM runs AS r
    JOIN last_send AS l ON l.run_id = r.run_id
    LEFT JOIN opens AS o ON o.run_id = r.run_id
    LEFT JOIN closes AS c ON c.run_id = r.run_id
),
windowed AS (
    SELECT
        *,
        CASE WHEN steady_end_ns > steady_start_ns THEN (steady_end_ns - steady_start_ns) / 1e9 END AS steady_s,
        CASE
            WHEN replay THEN NULL
            WHEN steady_end_ns > steady_start_ns
                THEN coalesce(greatest(0, least(steady_end_ns, measure_end_ns)
                    - greatest(steady_start_ns, measure_start_ns)) / nullif(measure_end_ns - measure_start_ns, 0), 0)
            ELSE 0
        END AS steady_share
    FROM bounds
),
streamed AS (  -- ok requests in a window, with their chunks' times known
    SELECT w.run_id, q.request_index, q.first_ns, q.itl_ns, w.steady_start_ns, w.steady_end_ns,
        q.decode_tokens / (q.chunks - 1) AS per_chunk
    FROM windowed AS w
    JOIN req AS q ON q.run_id = w.run_id AND q.ok
    WHERE w.steady_s IS NOT NULL AND q.chunks > 1 AND len(q.itl_ns) = q.chunks - 1 AND q.decode_tokens > 0
        AND q.first_ns <= w.steady_end_ns AND q.first_ns + q.decode_ns >= w.steady_start_ns
        AND (q.first_ns < w.steady_start_ns OR q.first_ns + q.decode_ns > w.steady_end_ns)  -- it straddles an edge
),
chunk_times AS (
    SELECT run_id, request_index, per_chunk, steady_start_ns, steady_end_ns,
        first_ns + sum(gap) OVER (PARTITION BY run_id, request_index ORDER BY k) AS at_ns
    FROM (SELECT *, unnest(itl_ns) AS gap, unnest(range(1, len(itl_ns) + 1)) AS k FROM streamed)
),
straddling AS (  -- the tokens after the first of the straddling requests, received inside the window
    SELECT run_id, sum(per_chunk) FILTER (WHERE at_ns BETWEEN steady_start_ns AND steady_end_ns) AS tokens
    FROM chunk_times
    GROUP BY run_id
),
steady_requests AS (
    SELECT
        w.run_id,
        sum(CASE WHEN q.first_ns BETWEEN w.steady_start_ns AND w.steady_end_ns THEN 1 ELSE 0 END
            + CASE
                WHEN q.chunks > 1 AND len(q.itl_ns) = q.chunks - 1 AND q.decode_tokens > 0 THEN
                    -- wholly inside: every token; straddling: counted in straddling; outside: none
                    CASE WHEN q.first_ns >= w.steady_start_ns AND q.first_ns + q.decode_ns <= w.steady_end_ns
                        THEN q.decode_tokens ELSE 0 END
                WHEN q.decode_ns > 0 THEN coalesce(q.decode_tokens, 0) * greatest(0,
                    least(q.first_ns + q.decode_ns, w.steady_end_ns) - greatest(q.first_ns, w.steady_start_ns))
                    / q.decode_ns
                ELSE 0 END) AS steady_output_tokens,
        count(*) FILTER (WHERE in_steady(q.first_ns, q.decode_ns, w.steady_start_ns, w.steady_end_ns))
            AS steady_requests,
        quantile_cont(q.tpot_ns, 0.50)
            FILTER (WHERE in_steady(q.first_ns, q.decode_ns, w.steady_start_ns, w.steady_end_ns)) / 1e6
            AS steady_tpot_p50_ms,
        quantile_cont(q.tpot_ns, 0.90)
            FILTER (WHERE in_steady(q.first_ns, q.decode_ns, w.steady_start_ns, w.steady_end_ns)) / 1e6
            AS steady_tpot_p90_ms
    FROM windowed AS w
    JOIN req AS q ON q.run_id = w.run_id AND q.ok
    WHERE w.steady_s IS NOT NULL
    GROUP BY w.run_id
)
SELECT
    w.run_id,
    w.steady_start_ns,
    w.steady_end_ns,
    w.steady_s,
    w.steady_share,
    w.steady_share < 0.5 AS short_steady,
    s.steady_output_tokens + coalesce(t.tokens, 0) AS steady_output_tokens,
    (s.steady_output_tokens + coalesce(t.tokens, 0)) / w.steady_s AS steady_output_tok_s,
    coalesce(s.steady_requests, 0) AS steady_requests,
    s.steady_tpot_p50_ms,
    s.steady_tpot_p90_ms,
    1000 / nullif(s.steady_tpot_p50_ms, 0) AS steady_interactivity,
    1000 / nullif(s.steady_tpot_p90_ms, 0) AS steady_interactivity_p90,
    CASE WHEN w.replay THEN 'replay: a replayed trace has no steady window (its load follows the trace)' END
        AS steady_note
FROM windowed AS w
LEFT JOIN steady_requests AS s ON s.run_id = w.run_id
LEFT JOIN straddling AS t ON t.run_id = w.run_id;
