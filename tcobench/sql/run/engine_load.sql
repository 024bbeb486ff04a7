-- engine_load: one row per run with engine metrics: queue depth, running requests and KV-cache use inside the
-- engine during the measurement window, and preemptions over it (view engine_samples, one row per scrape).
--
-- Gauges (the means, maxima and the least VRAM share) use the scrapes taken inside the window,
-- measure_start_ns <= ts_ns <= measure_end_ns. The preemption counter uses the scrapes bracketing the window (the
-- last at or before measure_start_ns, else the first; the first at or after measure_end_ns, else the last: macros
-- window_open / window_close), like view energy.
--
-- Its columns, in order, with their formulas, units and data tests: engine_load.yml beside this file
-- (docs/dev/columns.md).
-- reads: engine_samples, window_close, window_open; tables: runs
CREATE OR REPLACE VIEW engine_load AS
WITH win AS (
    SELECT run_id, measure_start_ns AS t0, measure_end_ns AS t1
    FROM runs
    WHERE measure_start_ns IS NOT NULL AND measure_end_ns IS NOT NULL
),
bounds AS (
    SELECT
        w.run_id,
        window_open(s.ts_ns, w.t0) AS lo,
        window_close(s.ts_ns, w.t1) AS hi
    FROM win AS w
    JOIN engine_samples AS s ON s.run_id = w.run_id
    GROUP BY w.run_id, w.t0, w.t1
),
counter AS (
    SELECT
        b.run_id,
        any_value(s.source) AS source,
        arg_max(s.preemptions_total, s.ts_ns) - arg_min(s.preemptions_total, s.ts_ns) AS preemptions
    FROM bounds AS b
    JOIN engine_samples AS s ON s.run_id = b.run_id AND s.ts_ns BETWEEN b.lo AND b.hi
    GROUP BY b.run_id
),
gauges AS (
    SELECT
        w.run_id,
        count(*) AS samples,
        avg(s.requests_running) AS running_mean,
        max(s.requests_running) AS running_max,
        avg(s.requests_waiting) AS waiting_mean,
        max(s.requests_waiting) AS waiting_max,
        avg(s.kv_cache_used_ratio) AS kv_used_mean,
        max(s.kv_cache_used_ratio) AS kv_used_max,
        min(s.model_vram_share) AS vram_share_min
    FROM win AS w
    JOIN engine_samples AS s ON s.run_id = w.run_id AND s.ts_ns BETWEEN w.t0 AND w.t1
    GROUP BY w.run_id
)
SELECT
    c.run_id,
    c.source,
    coalesce(g.samples, 0) AS samples,
    g.running_mean,
    g.running_max,
    g.waiting_mean,
    g.waiting_max,
    g.kv_used_mean,
    g.kv_used_max,
    g.vram_share_min,
    c.preemptions
FROM counter AS c
LEFT JOIN gauges AS g USING (run_id);
