-- environment_changes: one row per change of a host's software environment, oldest first per host, with what
-- followed it. The environment of a run is read from its runs row: the GPU driver (driver_version), the runtime
-- (cuda_version on NVIDIA, rocm_version on AMD), the kernel (host_kernel, only where the host facts were read on
-- the engine's machine: host_facts_source not 'client'), the engine's version (engine_version, per engine_name: two
-- engines on one host are two timelines), the image digest (image_digest, per image reference) and the first GPU's
-- firmware (gpu_firmware: its VBIOS version, where the power sampler reads one). A value that was not read (NULL)
-- neither starts nor ends a timeline.
--
-- A change is a run whose value differs from the previous run's of the same host and item (ordered by
-- started_ns, then run_id); the first value of a host is its baseline, not a change. What followed it is counted
-- over the host's nights (runs.batch_id, ordered by their first run) from the change's night on, that night
-- included, for at most 2 nights (nights_after): the cell nights (runs.cell; a run outside a nightly counts as
-- its own) with a run whose failure_class is 'platform' (the only class that counts against a platform,
-- docs/cost-model.md), and those failed with any class. `tcobench history --changes` adds the performance
-- flags of `tcobench history` (tasks/analysis/history.py) among the runs from changed_at to window_end.
-- Its columns, in order, with their formulas, units and data tests: environment_changes.yml beside this file
-- (docs/dev/columns.md).
-- reads: -; tables: runs
CREATE OR REPLACE VIEW environment_changes AS
WITH facts AS (
    SELECT
        host,
        hardware_key,
        run_id,
        batch_id,
        started_ns,
        unnest([
            { 'item': 'driver', 'value': driver_version },
            { 'item': 'CUDA', 'value': cuda_version },
            { 'item': 'ROCm', 'value': rocm_version },
            { 'item': 'firmware', 'value': gpu_firmware },
            { 'item': 'kernel', 'value': CASE WHEN host_facts_source IS DISTINCT FROM 'client' THEN host_kernel END },
            { 'item': engine_name || ' version', 'value': engine_version },
            { 'item': 'image ' || coalesce(image, '?'), 'value': image_digest }
        ]) AS fact
    FROM runs
),

ordered AS (
    SELECT
        host,
        hardware_key,
        run_id,
        batch_id,
        started_ns,
        fact.item,
        fact.value,
        lag(fact.value) OVER (PARTITION BY host, fact.item ORDER BY started_ns, run_id) AS previous
    FROM facts
    WHERE fact.value IS NOT NULL
),

changes AS (
    SELECT * FROM ordered
    WHERE previous IS NOT NULL AND previous <> value
),

cell_nights AS (
    SELECT
        host,
        batch_id,
        coalesce(cell, run_id) AS cell,
        min(started_ns) AS started_ns,
        bool_or(failure_class = 'platform') AS platform_failed,
        bool_or(status = 'failed') AS failed
    FROM runs
    GROUP BY host, batch_id, coalesce(cell, run_id)
),

host_nights AS (
    SELECT
        host,
        batch_id,
        min(started_ns) AS started_ns,
        count(*) FILTER (WHERE platform_failed) AS platform_failed_cells,
        count(*) FILTER (WHERE failed) AS failed_cells,
        row_number() OVER (PARTITION BY host ORDER BY min(started_ns), batch_id) AS n
    FROM cell_nights
    GROUP BY host, batch_id
),

followed AS (
    SELECT
        c.host,
        c.run_id,
        c.item,
        count(f.n) AS nights_seen,
        coalesce(sum(f.platform_failed_cells), 0) AS platform_failed_cells,
        coalesce(sum(f.failed_cells), 0) AS failed_cells,
        any_value(e.started_ns) AS window_end_ns
    FROM changes AS c
    JOIN host_nights AS h ON c.host = h.host AND c.batch_id = h.batch_id
    LEFT JOIN host_nights AS f ON c.host = f.host AND f.n BETWEEN h.n AND h.n + 1
    LEFT JOIN host_nights AS e ON c.host = e.host AND e.n = h.n + 2
    GROUP BY c.host, c.run_id, c.item
)

SELECT
    c.host,
    c.hardware_key AS platform,
    c.item,
    c.previous AS before,
    c.value AS after,
    make_timestamp(c.started_ns // 1000) AS changed_at,
    c.run_id,
    c.batch_id,
    2::BIGINT AS nights_after,
    f.nights_seen::BIGINT AS nights_seen,
    f.platform_failed_cells::BIGINT AS platform_failed_cells,
    f.failed_cells::BIGINT AS failed_cells,
    make_timestamp(f.window_end_ns // 1000) AS window_end
FROM changes AS c
JOIN followed AS f ON c.host = f.host AND c.run_id = f.run_id AND c.item = f.item
ORDER BY c.host, c.started_ns, c.run_id, c.item;
