-- metric_rows(targets): a table macro, not a view. The Prometheus metrics of the store (`tcobench metrics`,
-- tasks/report/metrics.py): one row per sample, every figure read from a view, converted to the base unit its
-- name carries (seconds, joules, USD, ratios); tasks/report/metrics.py only writes the text exposition format.
-- targets: a LIST of interactivity targets, tok/s per user (the CLI's --interactivity, default 20, 50, 100).
--
-- "Last night" of a serving configuration is the latest batch (runs.batch_id, by its latest start) in which it ran,
-- per (platform = runs.hardware_key, host, config_id, model_name, workload); its run at each concurrency is the
-- latest of that batch. The host's last night (its status counts) is the host's latest batch.
--   metric       the sample's name: tcobench_ prefix, base unit suffix, _total on counters
--   type         gauge | counter (the TYPE line)
--   help         the HELP line: what the figure is and which view column gives it
--   scope .. status   the labels (NULL: not a label of this metric)
--   value        the figure, in the unit its name says
--
-- Per configuration's last night, at each concurrency (labels platform, host, config, engine, model, workload,
-- concurrency):
--   tcobench_output_tokens_per_second_per_gpu           run_summary.output_tok_s_per_gpu          tokens/s/GPU
--   tcobench_ttft_seconds{quantile 0.5, 0.9}            run_summary.ttft_p50_ms, ttft_p90_ms / 1e3   s
--   tcobench_tpot_seconds{quantile 0.5, 0.9}            run_summary.tpot_p50_ms, tpot_p90_ms / 1e3   s
--   tcobench_energy_per_output_token_joules             energy.j_per_output_token (energy.valid)  J/token
--   tcobench_cost_per_million_output_tokens_usd{basis}  frontier_points.usd_per_m_output_tokens    USD/1M tokens
--   tcobench_run_start_timestamp_seconds                run_summary.started, Unix time            s
--   tcobench_trend_nights                               nightly_trend.night: runs in its series   count
--   tcobench_trend_decode_tokens_per_second             nightly_trend.req_decode_tok_s_p50        tokens/s
--   tcobench_trend_prior_mean_decode_tokens_per_second  nightly_trend.prior_mean_decode_tok_s_p50 tokens/s
--   tcobench_trend_decode_change_ratio                  nightly_trend.decode_change_pct / 100     fraction
-- Per configuration's last night and interactivity target (labels as above less concurrency, plus target):
--   tcobench_output_tokens_per_second_per_gpu_at_interactivity   max(frontier_points.output_tok_s_per_gpu) over
--       the night's frontier points with interactivity >= target (a measured point that reaches it; no
--       interpolation)
--   tcobench_cost_per_million_output_tokens_at_interactivity_usd{basis}   min(frontier_points.usd_per_m_output_tokens)
--       over the same points, per cost basis
-- Availability over the whole history (view availability; labels scope, platform, host):
--   tcobench_availability_ratio, tcobench_night_availability_ratio    availability.availability, night_availability
--   tcobench_cells_total, tcobench_cells_failed_total{class}, tcobench_platform_failures_total,
--   tcobench_nights_scheduled_total: host rows only (a platform's is the sum over its hosts)
-- Per host's last night (labels platform, host): tcobench_last_night_runs{status} (runs by runs.status: a failed
-- cell is a run with status failed) and tcobench_last_night_start_timestamp_seconds (its first run's start).
-- reads: run_summary, frontier_points, energy, nightly_trend, availability; tables: runs
CREATE OR REPLACE MACRO metric_rows(targets) AS TABLE
WITH summary AS (
    SELECT s.*, r.hardware_key
    FROM run_summary AS s
    JOIN runs AS r ON r.run_id = s.run_id
),

last_batch AS (
    SELECT
        host, hardware_key, config_id, model_name, workload,
        arg_max(batch_id, started) AS batch_id
    FROM summary
    GROUP BY host, hardware_key, config_id, model_name, workload
),

night_runs AS (
    SELECT s.*
    FROM summary AS s
    JOIN last_batch AS b
        ON
            b.batch_id = s.batch_id AND b.host = s.host AND b.hardware_key IS NOT DISTINCT FROM s.hardware_key
            AND b.config_id = s.config_id AND b.model_name = s.model_name AND b.workload = s.workload
),

last_runs AS (
    SELECT *
    FROM night_runs
    QUALIFY row_number() OVER (
        PARTITION BY host, hardware_key, config_id, engine_name, model_name, workload, concurrency
        ORDER BY started DESC, run_id DESC
    ) = 1
),

per_run AS (
    SELECT
        s.run_id, s.hardware_key, s.host, s.config_id, s.engine_name, s.model_name, s.workload,
        s.concurrency::VARCHAR AS concurrency, f.metric, f.type, f.help, f.basis, f.quantile, f.value
    FROM last_runs AS s
    LEFT JOIN energy AS e ON e.run_id = s.run_id AND e.valid
    LEFT JOIN nightly_trend AS t ON t.run_id = s.run_id
    CROSS JOIN LATERAL (
        VALUES
        ('tcobench_output_tokens_per_second_per_gpu', 'gauge',
            'Output tokens per second per GPU of the run, whole measured window (run_summary.output_tok_s_per_gpu).',
            NULL, NULL, s.output_tok_s_per_gpu),
        ('tcobench_ttft_seconds', 'gauge',
            'Time to first token of the run''s ok requests, at the quantile (run_summary.ttft_p50_ms, ttft_p90_ms).',
            NULL, '0.5', s.ttft_p50_ms / 1e3),
        ('tcobench_ttft_seconds', 'gauge', NULL, NULL, '0.9', s.ttft_p90_ms / 1e3),
        ('tcobench_tpot_seconds', 'gauge',
            'Time per output token of the run''s ok requests, at the quantile (run_summary.tpot_p50_ms, tpot_p90_ms).',
            NULL, '0.5', s.tpot_p50_ms / 1e3),
        ('tcobench_tpot_seconds', 'gauge', NULL, NULL, '0.9', s.tpot_p90_ms / 1e3),
        ('tcobench_energy_per_output_token_joules', 'gauge',
            'Measured energy per output token of the run, valid telemetry only (energy.j_per_output_token).',
            NULL, NULL, e.j_per_output_token),
        ('tcobench_run_start_timestamp_seconds', 'gauge',
            'Start of the run, Unix time (run_summary.started).', NULL, NULL, epoch_us(s.started) / 1e6),
        ('tcobench_trend_nights', 'gauge',
            'Runs in the run''s nightly series up to it (nightly_trend.night).', NULL, NULL, t.night::DOUBLE),
        ('tcobench_trend_decode_tokens_per_second', 'gauge',
            'Median per-request decode rate of the run (nightly_trend.req_decode_tok_s_p50).',
            NULL, NULL, t.req_decode_tok_s_p50),
        ('tcobench_trend_prior_mean_decode_tokens_per_second', 'gauge',
            'Mean median decode rate over up to 7 previous runs of the series '
            || '(nightly_trend.prior_mean_decode_tok_s_p50).',
            NULL, NULL, t.prior_mean_decode_tok_s_p50),
        ('tcobench_trend_decode_change_ratio', 'gauge',
            'Change of the median decode rate against the previous run, as a fraction '
            || '(nightly_trend.decode_change_pct / 100).',
            NULL, NULL, t.decode_change_pct / 100)
    ) AS f (metric, type, help, basis, quantile, value)
    UNION ALL
    SELECT
        s.run_id, s.hardware_key, s.host, s.config_id, s.engine_name, s.model_name, s.workload,
        s.concurrency::VARCHAR, 'tcobench_cost_per_million_output_tokens_usd', 'gauge',
        'Cost per 1M output tokens of the run on the cost basis (frontier_points.usd_per_m_output_tokens).',
        p.basis, NULL, p.usd_per_m_output_tokens
    FROM last_runs AS s
    JOIN frontier_points AS p ON p.run_id = s.run_id
),

at_target AS (
    SELECT
        s.hardware_key, s.host, s.config_id, s.engine_name, s.model_name, s.workload, p.basis,
        t.target, p.output_tok_s_per_gpu, p.usd_per_m_output_tokens
    FROM night_runs AS s
    JOIN frontier_points AS p ON p.run_id = s.run_id
    JOIN (SELECT unnest(targets)::DOUBLE AS target) AS t ON p.interactivity >= t.target
),

targets_reached AS (
    SELECT
        hardware_key, host, config_id, engine_name, model_name, workload, NULL AS basis, target,
        'tcobench_output_tokens_per_second_per_gpu_at_interactivity' AS metric,
        'The most output tokens per second per GPU of the configuration''s last night among its measured frontier '
        || 'points that reach the interactivity target, tok/s per user (frontier_points).' AS help,
        max(output_tok_s_per_gpu) AS value
    FROM at_target
    GROUP BY hardware_key, host, config_id, engine_name, model_name, workload, target
    UNION ALL
    SELECT
        hardware_key, host, config_id, engine_name, model_name, workload, basis, target,
        'tcobench_cost_per_million_output_tokens_at_interactivity_usd',
        'The least cost per 1M output tokens on the basis of the configuration''s last night among its measured '
        || 'frontier points that reach the interactivity target, tok/s per user (frontier_points).',
        min(usd_per_m_output_tokens)
    FROM at_target
    GROUP BY hardware_key, host, config_id, engine_name, model_name, workload, basis, target
),

host_availability AS (
    SELECT a.scope, a.platform, a.host, f.metric, f.type, f.help, f.class, f.value
    FROM availability AS a
    CROSS JOIN LATERAL (
        VALUES
        ('tcobench_cells_total', 'counter', 'Cell nights scheduled on the host (availability.cells).', NULL,
            a.cells::DOUBLE),
        ('tcobench_cells_failed_total', 'counter',
            'Cell nights failed, by failure class of the first run not ok (availability.cells_failed_*).',
            'platform', a.cells_failed_platform::DOUBLE),
        ('tcobench_cells_failed_total', 'counter', NULL, 'engine', a.cells_failed_engine::DOUBLE),
        ('tcobench_cells_failed_total', 'counter', NULL, 'harness', a.cells_failed_harness::DOUBLE),
        ('tcobench_cells_failed_total', 'counter', NULL, 'infrastructure', a.cells_failed_infrastructure::DOUBLE),
        ('tcobench_cells_failed_total', 'counter', NULL, 'unknown', a.cells_failed_unknown::DOUBLE),
        ('tcobench_platform_failures_total', 'counter',
            'Platform failures, each a run of consecutive platform failure nights (availability.platform_failures).',
            NULL, a.platform_failures::DOUBLE),
        ('tcobench_nights_scheduled_total', 'counter',
            'Nights with a cell of the host (availability.nights_scheduled).', NULL, a.nights_scheduled::DOUBLE)
    ) AS f (metric, type, help, class, value)
    WHERE a.scope = 'host'
    UNION ALL
    SELECT a.scope, a.platform, a.host, f.metric, 'gauge', f.help, NULL, f.value
    FROM availability AS a
    CROSS JOIN LATERAL (
        VALUES
        ('tcobench_availability_ratio',
            '1 - downtime / scheduled time over the whole history (availability.availability).', a.availability),
        ('tcobench_night_availability_ratio',
            '1 - platform failure nights / nights scheduled (availability.night_availability).',
            a.night_availability)
    ) AS f (metric, help, value)
),

host_last AS (
    SELECT host, hardware_key, arg_max(batch_id, started_ns) AS batch_id
    FROM runs
    GROUP BY host, hardware_key
),

host_night AS (
    SELECT
        r.host, r.hardware_key, r.status, 'tcobench_last_night_runs' AS metric,
        'Runs of the host''s latest batch by runs.status (a failed cell: status failed).' AS help,
        count(*)::DOUBLE AS value
    FROM runs AS r
    JOIN host_last AS l
        ON l.host = r.host AND l.hardware_key IS NOT DISTINCT FROM r.hardware_key AND l.batch_id = r.batch_id
    GROUP BY r.host, r.hardware_key, r.status
    UNION ALL
    SELECT
        r.host, r.hardware_key, NULL, 'tcobench_last_night_start_timestamp_seconds',
        'Start of the first run of the host''s latest batch, Unix time (runs.started_ns).',
        min(r.started_ns) / 1e9
    FROM runs AS r
    JOIN host_last AS l
        ON l.host = r.host AND l.hardware_key IS NOT DISTINCT FROM r.hardware_key AND l.batch_id = r.batch_id
    GROUP BY r.host, r.hardware_key
),

samples AS (
    SELECT
        metric, type, help, NULL AS scope, hardware_key AS platform, host, config_id AS config,
        engine_name AS engine, model_name AS model, workload, concurrency, basis, quantile, NULL AS target,
        NULL AS class, NULL AS status, value
    FROM per_run
    UNION ALL
    SELECT
        metric, 'gauge', help, NULL, hardware_key, host, config_id, engine_name, model_name, workload, NULL, basis,
        NULL, target::VARCHAR, NULL, NULL, value
    FROM targets_reached
    UNION ALL
    SELECT
        metric, type, help, scope, platform, host, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, class, NULL, value
    FROM host_availability
    UNION ALL
    SELECT
        metric, 'gauge', help, NULL, hardware_key, host, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        status, value
    FROM host_night
)

SELECT
    metric,
    type,
    max(help) OVER (PARTITION BY metric) AS help,
    scope, platform, host, config, engine, model, workload, concurrency, basis, quantile, target, class, status,
    value
FROM samples
WHERE value IS NOT NULL AND isfinite(value)
ORDER BY metric, scope, platform, host, config, engine, model, workload, concurrency, basis, quantile, target,
    class, status;
