-- energy: one row per run that has telemetry: energy of the measurement window, mean and idle power,
-- joules per output token, peak device memory, and whether the figures can be trusted.
--
-- Samples used: per device, from the last sample at or before measure_start_ns to the first sample at or
-- after measure_end_ns (so the samples bracket the window; macros window_open / window_close). The energy is the
-- hardware counter's delta where every sample has a counter reading (NVML total energy, amdsmi accumulator, RAPL),
-- else the trapezoid integral of the power samples. The figures are trusted only when the samples allow it: the
-- trapezoid rule needs dense samples; the counter's delta is exact however far apart the samples are, but the mean
-- power spreads it over the bracketing span, which may reach only a little beyond the window.
-- Steady state (view steady_window): the same, from the samples bracketing [steady_start_ns, steady_end_ns] per
-- device (window_open / window_close again).
--
-- Its columns, in order, with their formulas, units and data tests: energy.yml beside this file
-- (docs/dev/columns.md).
-- reads: run_summary, steady_window, window_close, window_open; tables: runs, telemetry
CREATE OR REPLACE VIEW energy AS
-- both windows' samples come from one pair of CTEs: kind 'measure' (the measurement window) and 'steady' (the steady
-- state), each bracketed per device by window_open / window_close and differenced per device by lag()
WITH windows AS (
    SELECT 'measure' AS kind, run_id, measure_start_ns AS t0, measure_end_ns AS t1
    FROM runs
    WHERE measure_start_ns IS NOT NULL AND measure_end_ns IS NOT NULL
    UNION ALL
    SELECT 'steady' AS kind, run_id, steady_start_ns AS t0, steady_end_ns AS t1
    FROM steady_window
    WHERE steady_s IS NOT NULL
),
bounds AS (
    SELECT
        w.kind,
        w.run_id,
        t.device_index,
        window_open(t.ts_ns, w.t0) AS lo,
        window_close(t.ts_ns, w.t1) AS hi
    FROM windows AS w
    JOIN telemetry AS t ON t.run_id = w.run_id
    GROUP BY w.kind, w.run_id, t.device_index, w.t0, w.t1
),
samples AS (
    SELECT
        b.kind,
        t.run_id,
        t.device_index,
        t.ts_ns,
        t.power_mw,
        t.energy_mj,
        lag(t.ts_ns) OVER dev AS prev_ns,
        lag(t.power_mw) OVER dev AS prev_mw
    FROM telemetry AS t
    JOIN bounds AS b ON b.run_id = t.run_id AND b.device_index = t.device_index AND t.ts_ns BETWEEN b.lo AND b.hi
    WINDOW dev AS (PARTITION BY b.kind, t.run_id, t.device_index ORDER BY t.ts_ns)
),
per_device AS (
    SELECT
        run_id,
        device_index,
        count(*) AS n_samples,
        max(ts_ns) - min(ts_ns) AS span_ns,
        max(ts_ns - prev_ns) AS max_gap_ns,
        sum((power_mw + prev_mw) / 2.0 * (ts_ns - prev_ns)) / 1e12 AS integrated_j,
        count(power_mw) AS n_power,
        count(energy_mj) AS n_energy,
        (arg_max(energy_mj, ts_ns) - arg_min(energy_mj, ts_ns)) / 1e3 AS counter_j
    FROM samples
    WHERE kind = 'measure'
    GROUP BY run_id, device_index
),
per_run AS (
    SELECT
        run_id,
        count(*) AS devices,
        min(n_samples) AS min_samples,
        max(span_ns) / 1e9 AS span_s,
        max(max_gap_ns) / 1e6 AS max_gap_ms,
        CASE WHEN bool_and(n_power = n_samples) THEN sum(integrated_j) END AS integrated_j,
        CASE WHEN bool_and(n_energy = n_samples) THEN sum(counter_j) END AS counter_j
    FROM per_device
    GROUP BY run_id
),
idle AS (
    SELECT run_id, sum(mean_mw) / 1e3 AS idle_w
    FROM (
        SELECT run_id, device_index, avg(power_mw) AS mean_mw
        FROM telemetry WHERE phase = 'idle' GROUP BY run_id, device_index
    )
    GROUP BY run_id
),
vram AS (
    SELECT run_id, max(total) AS peak_vram_bytes
    FROM (SELECT run_id, ts_ns, sum(mem_used_bytes) AS total FROM telemetry GROUP BY run_id, ts_ns)
    GROUP BY run_id
),
chosen AS (
    SELECT
        p.*,
        coalesce(p.counter_j, p.integrated_j) AS energy_j,
        CASE WHEN p.counter_j IS NOT NULL THEN 'counter' WHEN p.integrated_j IS NOT NULL THEN 'integrated' END
            AS energy_source,
        (w.t1 - w.t0) / 1e9 AS window_s
    FROM per_run AS p
    JOIN windows AS w ON w.run_id = p.run_id AND w.kind = 'measure'
),
steady_device AS (
    SELECT
        run_id,
        device_index,
        CASE WHEN count(energy_mj) = count(*) THEN (arg_max(energy_mj, ts_ns) - arg_min(energy_mj, ts_ns)) / 1e3
            WHEN count(power_mw) = count(*) THEN sum((power_mw + prev_mw) / 2.0 * (ts_ns - prev_ns)) / 1e12
        END / nullif((max(ts_ns) - min(ts_ns)) / 1e9, 0) AS mean_w
    FROM samples
    WHERE kind = 'steady'
    GROUP BY run_id, device_index
),
steady_power AS (
    SELECT run_id, CASE WHEN bool_and(mean_w IS NOT NULL) THEN sum(mean_w) END AS steady_mean_w
    FROM steady_device
    GROUP BY run_id
),
rated AS (
    SELECT *, energy_j / nullif(span_s, 0) AS mean_w, mean_w * window_s AS window_j
    FROM chosen
)
SELECT
    c.run_id,
    c.devices,
    r.telemetry_source AS source,
    c.span_s,
    c.window_s,
    c.counter_j,
    c.integrated_j,
    c.energy_j,
    c.energy_source,
    c.mean_w,
    c.window_j,
    i.idle_w,
    c.window_j / nullif(k.output_tokens, 0) AS j_per_output_token,
    v.peak_vram_bytes,
    c.max_gap_ms,
    c.min_samples >= 2 AND c.energy_j IS NOT NULL
        AND CASE c.energy_source WHEN 'counter' THEN c.span_s <= 1.1 * c.window_s ELSE c.max_gap_ms <= 500 END
        AS valid,
    CASE
        WHEN c.min_samples < 2 THEN 'fewer than 2 samples in the measurement window'
        WHEN c.energy_j IS NULL THEN 'no power or energy readings'
        WHEN c.energy_source = 'counter' AND c.span_s > 1.1 * c.window_s
            THEN 'the samples bracketing the ' || CAST(round(c.window_s, 1) AS VARCHAR) || ' s window span '
                || CAST(round(c.span_s, 1) AS VARCHAR) || ' s, over 10% more (counter energy)'
        WHEN c.energy_source = 'integrated' AND c.max_gap_ms > 500
            THEN 'a gap of ' || CAST(round(c.max_gap_ms) AS BIGINT) || ' ms between samples exceeds 500 ms'
    END AS invalid_reason,
    sp.steady_mean_w,
    sp.steady_mean_w / nullif(k.steady_output_tok_s, 0) AS steady_j_per_token
FROM rated AS c
JOIN runs AS r USING (run_id)
LEFT JOIN idle AS i USING (run_id)
LEFT JOIN vram AS v USING (run_id)
LEFT JOIN run_summary AS k USING (run_id)
LEFT JOIN steady_power AS sp USING (run_id);
