-- measured_adaptation: how long each host took from its first attempted nightly cell to its first ok run, and each
-- platform's mean of that over its hosts: the measured counterpart of the price table's adaptation_days (hardware
-- rows), which `tcobench compare --adaptation measured` binds in its place (docs/cost-model.md#measured-adaptation).
-- One row per host (scope 'host') and one per platform (scope 'platform'). Only nightly cells count (runs.cell not
-- NULL): the cell schedule is the evidence of an attempt. A host's platform is the runs.hardware_key of its first
-- attempted cell. The time is calendar time between the two runs' starts, not engineer time: the formula reads it
-- as the days an engineer spent making the platform serve. A host with no ok cell run yet is not adapted: its
-- days are NULL and it is left out of its platform's mean (counted in hosts, not in hosts_adapted).
-- Its columns, in order, with their formulas, units and data tests: measured_adaptation.yml beside this file
-- (docs/dev/columns.md).
-- reads: -; tables: runs
CREATE OR REPLACE VIEW measured_adaptation AS
WITH firsts AS (
    SELECT
        host,
        arg_min(hardware_key, (started_ns, run_id)) AS platform,
        min(started_ns) AS first_attempt_ns,
        min(started_ns) FILTER (WHERE status = 'ok') AS first_ok_ns
    FROM runs
    WHERE cell IS NOT NULL
    GROUP BY host
),

hosts AS (
    SELECT
        f.host,
        f.platform,
        f.first_attempt_ns,
        f.first_ok_ns,
        (
            SELECT count(*) FROM runs AS r
            WHERE
                r.host = f.host
                AND r.cell IS NOT NULL
                AND r.status <> 'ok'
                AND (f.first_ok_ns IS NULL OR r.started_ns < f.first_ok_ns)
        ) AS failed_attempts
    FROM firsts AS f
),

both_scopes AS (
    SELECT
        'host' AS scope,
        host,
        platform,
        1 AS hosts,
        (first_ok_ns IS NOT NULL)::INTEGER AS hosts_adapted,
        failed_attempts,
        (first_ok_ns - first_attempt_ns) / 86400e9 AS measured_days,
        first_attempt_ns,
        first_ok_ns
    FROM hosts
    UNION ALL
    SELECT
        'platform' AS scope,
        NULL AS host,
        platform,
        count(*) AS hosts,
        count(first_ok_ns) AS hosts_adapted,
        sum(failed_attempts) AS failed_attempts,
        -- the mean of the integer ns, divided once: an exact sum, the same bits in any order (docs/store.md#duckdb-threads)
        avg(first_ok_ns - first_attempt_ns) / 86400e9 AS measured_days,
        min(first_attempt_ns) AS first_attempt_ns,
        min(first_ok_ns) AS first_ok_ns
    FROM hosts
    GROUP BY platform
)

SELECT
    scope,
    host,
    platform,
    hosts::BIGINT AS hosts,
    hosts_adapted::BIGINT AS hosts_adapted,
    failed_attempts::BIGINT AS failed_attempts,
    measured_days::DOUBLE AS measured_days,
    make_timestamp(first_attempt_ns // 1000) AS first_attempt,
    make_timestamp(first_ok_ns // 1000) AS first_ok
FROM both_scopes;
