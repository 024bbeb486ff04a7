-- night_platform_cost: one row per (night, model, workload, platform): the platform's best cost efficiency that
-- night on the owned basis, ranked among the night's platforms of that model and workload. The closing summary of
-- `tcobench nightly` reads it (tasks/report/night_cost.py). A ranking, not a verdict: no claim is checked here.
--
-- A night is a nightly batch (runs.batch_id); a platform is a price-table hardware key and its accelerator (gpu:
-- runs.gpu_name, or 'CPU (n cores)' from runs.host_cpu_count on a host without one). Rows of view cost_basis with
-- basis = 'owned' and a price, of runs with status ok or partial (never failed or interrupted runs). Configurations
-- are never averaged together: a platform's figure is its best (engine, serving configuration, concurrency).
-- Its columns, in order, with their formulas, units and data tests: night_platform_cost.yml beside this file
-- (docs/dev/columns.md).
-- reads: cost_basis, night_weighted_mean, run_summary; tables: runs
CREATE OR REPLACE VIEW night_platform_cost AS
WITH per_level AS (
    SELECT
        c.batch_id, c.model_name, c.workload, c.hardware_key,
        coalesce(r.gpu_name, 'CPU (' || r.host_cpu_count || ' cores)', 'CPU') AS gpu,
        r.engine_name, s.config_id, r.serving_config, c.concurrency,
        count(*) AS runs,
        night_weighted_mean(list((c.output_tokens_per_usd, c.batch_id))) AS output_tokens_per_usd
    FROM cost_basis AS c
    JOIN runs AS r ON r.run_id = c.run_id
    JOIN run_summary AS s ON s.run_id = c.run_id
    WHERE c.basis = 'owned' AND r.status IN ('ok', 'partial') AND c.output_tokens_per_usd IS NOT NULL
    GROUP BY ALL
),
best AS (
    SELECT
        batch_id, model_name, workload, hardware_key, gpu,
        count(DISTINCT concurrency) AS levels,
        sum(runs)::BIGINT AS runs,
        max(output_tokens_per_usd) AS output_tokens_per_usd,
        arg_max(concurrency, (output_tokens_per_usd, -concurrency)) AS concurrency,
        arg_max(engine_name, (output_tokens_per_usd, -concurrency)) AS engine_name,
        arg_max(config_id, (output_tokens_per_usd, -concurrency)) AS config_id,
        arg_max(serving_config, (output_tokens_per_usd, -concurrency)) AS serving_config
    FROM per_level
    GROUP BY ALL
)
SELECT
    *,
    row_number() OVER w AS platform_rank,
    lead(gpu) OVER w AS next_gpu,
    lead(hardware_key) OVER w AS next_hardware_key,
    lead(output_tokens_per_usd) OVER w AS next_output_tokens_per_usd,
    output_tokens_per_usd / lead(output_tokens_per_usd) OVER w AS advantage_over_next
FROM best
WINDOW w AS (PARTITION BY batch_id, model_name, workload ORDER BY output_tokens_per_usd DESC, hardware_key, gpu);
