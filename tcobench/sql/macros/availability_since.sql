-- availability_since(since_ns): a table macro, not a view. View availability's rows (its header and availability.yml
-- give the rules, formulas and units) over the nightly batches (runs.batch_id) whose first run started at or after
-- since_ns (ns since epoch, UTC; NULL: every night, which is view availability). A night is kept or left out whole,
-- for every host; no night in the window: no row. `tcobench history --availability --since DATE` binds since_ns.
-- Durations are summed as integers (half-nanoseconds: twice the ns, so that a median of two middle durations is a
-- whole number of them) and divided once at the end: an integer sum is exact in any order, where a sum of DOUBLE
-- seconds in a parallel GROUP BY gave figures a few ulps apart from one query to the next
-- (docs/store.md#duckdb-threads).
-- reads: -; tables: runs
CREATE OR REPLACE MACRO availability_since(since_ns) AS TABLE
WITH cell_nights AS (
    SELECT
        host,
        hardware_key AS platform,
        batch_id,
        cell,
        min(started_ns) AS started_ns,
        2 * (max(finished_ns) - min(started_ns)) AS duration_hns,
        bool_and(status = 'ok') AS ok,
        bool_or(status IN ('ok', 'partial')) AS served,
        arg_min(coalesce(failure_class, 'unknown'), (started_ns, run_id)) FILTER (
            WHERE status <> 'ok'
        ) AS failure_class
    FROM runs
    WHERE
        cell IS NOT NULL
        AND (
            since_ns IS NULL
            OR batch_id IN (SELECT b.batch_id FROM runs AS b GROUP BY b.batch_id HAVING min(b.started_ns) >= since_ns)
        )
    GROUP BY host, hardware_key, batch_id, cell
),

usual AS (
    SELECT
        host,
        platform,
        cell,
        -- the median of integers, exact as a DOUBLE (a whole number of half-ns below 2^53)
        median(duration_hns)::BIGINT AS duration_hns
    FROM cell_nights
    WHERE ok
    GROUP BY host, platform, cell
),

scheduled AS (
    SELECT
        c.*,
        coalesce(u.duration_hns, c.duration_hns) AS scheduled_hns
    FROM cell_nights AS c
    LEFT JOIN usual AS u ON c.host = u.host AND c.platform = u.platform AND c.cell = u.cell
),

host_nights AS (
    SELECT
        host,
        platform,
        batch_id,
        min(started_ns) AS started_ns,
        bool_or(served) AS served,
        coalesce(bool_or(failure_class = 'platform'), false) AS platform_failed
    FROM scheduled
    GROUP BY host, platform, batch_id
),

episodes AS (
    -- a platform failure night whose host's previous night had none starts a platform failure
    SELECT
        host,
        platform,
        started_ns,
        platform_failed
        AND NOT coalesce(lag(platform_failed) OVER (PARTITION BY host, platform ORDER BY started_ns), false) AS starts
    FROM host_nights
),

recoveries AS (
    SELECT
        e.host,
        e.platform,
        e.started_ns,
        min(n.started_ns) AS recovered_ns
    FROM episodes AS e
    LEFT JOIN host_nights AS n
        ON
            e.host = n.host
            AND e.platform = n.platform
            AND n.started_ns > e.started_ns
            AND n.served
            AND NOT n.platform_failed
    WHERE e.starts
    GROUP BY e.host, e.platform, e.started_ns
),

per_host AS (
    SELECT
        host,
        platform,
        count(DISTINCT batch_id) AS nights_scheduled,
        count(*) AS cells,
        count(*) FILTER (WHERE failure_class = 'platform') AS cells_failed_platform,
        count(*) FILTER (WHERE failure_class = 'engine') AS cells_failed_engine,
        count(*) FILTER (WHERE failure_class = 'harness') AS cells_failed_harness,
        count(*) FILTER (WHERE failure_class = 'infrastructure') AS cells_failed_infrastructure,
        count(*) FILTER (WHERE failure_class = 'unknown') AS cells_failed_unknown,
        sum(scheduled_hns) AS scheduled_hns,
        coalesce(sum(scheduled_hns) FILTER (WHERE failure_class = 'platform'), 0) AS down_hns,
        min(started_ns) AS first_ns,
        max(started_ns) AS last_ns
    FROM scheduled
    GROUP BY host, platform
),

night_counts AS (
    SELECT
        host,
        platform,
        count(*) FILTER (WHERE served) AS nights_served,
        count(*) FILTER (WHERE platform_failed) AS platform_failure_nights
    FROM host_nights
    GROUP BY host, platform
),

recovery_counts AS (
    SELECT
        host,
        platform,
        count(*) AS platform_failures,
        count(recovered_ns) AS recoveries,
        sum(recovered_ns - started_ns) AS recovery_ns
    FROM recoveries
    GROUP BY host, platform
),

hosts AS (
    SELECT
        'host' AS scope,
        p.host,
        p.platform,
        p.nights_scheduled,
        n.nights_served,
        p.cells,
        p.cells_failed_platform,
        p.cells_failed_engine,
        p.cells_failed_harness,
        p.cells_failed_infrastructure,
        p.cells_failed_unknown,
        n.platform_failure_nights,
        coalesce(r.platform_failures, 0) AS platform_failures,
        coalesce(r.recoveries, 0) AS recoveries,
        r.recovery_ns,
        p.scheduled_hns,
        p.down_hns,
        p.first_ns,
        p.last_ns
    FROM per_host AS p
    JOIN night_counts AS n ON p.host = n.host AND p.platform = n.platform
    LEFT JOIN recovery_counts AS r ON p.host = r.host AND p.platform = r.platform
),

platforms AS (
    SELECT
        'platform' AS scope,
        NULL AS host,
        platform,
        sum(nights_scheduled) AS nights_scheduled,
        sum(nights_served) AS nights_served,
        sum(cells) AS cells,
        sum(cells_failed_platform) AS cells_failed_platform,
        sum(cells_failed_engine) AS cells_failed_engine,
        sum(cells_failed_harness) AS cells_failed_harness,
        sum(cells_failed_infrastructure) AS cells_failed_infrastructure,
        sum(cells_failed_unknown) AS cells_failed_unknown,
        sum(platform_failure_nights) AS platform_failure_nights,
        sum(platform_failures) AS platform_failures,
        sum(recoveries) AS recoveries,
        sum(recovery_ns) AS recovery_ns,
        sum(scheduled_hns) AS scheduled_hns,
        sum(down_hns) AS down_hns,
        min(first_ns) AS first_ns,
        max(last_ns) AS last_ns
    FROM hosts
    GROUP BY platform
),

both_scopes AS (
    SELECT * FROM hosts
    UNION ALL
    SELECT * FROM platforms
),

figures AS (
    SELECT
        *,
        1 - platform_failure_nights / nights_scheduled AS p,
        1.959963984540054 AS z,
        nights_scheduled AS n
    FROM both_scopes
),

wilson AS (
    SELECT
        *,
        (p + z * z / (2 * n)) / (1 + z * z / n) AS centre,
        z / (1 + z * z / n) * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) AS half
    FROM figures
)

SELECT
    scope,
    host,
    platform,
    nights_scheduled::BIGINT AS nights_scheduled,
    nights_served::BIGINT AS nights_served,
    cells::BIGINT AS cells,
    cells_failed_platform::BIGINT AS cells_failed_platform,
    cells_failed_engine::BIGINT AS cells_failed_engine,
    cells_failed_harness::BIGINT AS cells_failed_harness,
    cells_failed_infrastructure::BIGINT AS cells_failed_infrastructure,
    cells_failed_unknown::BIGINT AS cells_failed_unknown,
    platform_failure_nights::BIGINT AS platform_failure_nights,
    platform_failures::BIGINT AS platform_failures,
    nights_scheduled / nullif(platform_failures, 0) AS mtbpf_nights,
    recoveries::BIGINT AS recoveries,
    recovery_ns / (3.6e12 * nullif(recoveries, 0)) AS recovery_hours_mean,
    (platform_failures - recoveries)::BIGINT AS unrecovered,
    scheduled_hns / 7.2e12 AS scheduled_host_hours,
    down_hns / 7.2e12 AS downtime_host_hours,
    1 - down_hns / nullif(scheduled_hns, 0) AS availability,
    p AS night_availability,
    greatest(centre - half, 0) AS night_availability_ci_low,
    least(centre + half, 1) AS night_availability_ci_high,
    make_timestamp(first_ns // 1000) AS first_night,
    make_timestamp(last_ns // 1000) AS last_night
FROM wilson;
