-- cell_durations: one row per nightly cell and night: how long the cell took, from its first run's start to its
-- last run's end (engine start-up, warm-up and every concurrency level included). `tcobench nightly` estimates a
-- night from each cell's last night here (tasks/estimate.py, night_estimate).
-- Its columns, in order, with their formulas, units and data tests: cell_durations.yml beside this file
-- (docs/dev/columns.md).
-- reads: -; tables: runs
CREATE OR REPLACE VIEW cell_durations AS
SELECT
    cell,
    batch_id,
    min(started_ns) AS started_ns,
    (max(finished_ns) - min(started_ns)) / 1e9 AS seconds,
    count(*) AS runs,
    count(*) FILTER (WHERE status = 'ok') AS ok_runs
FROM runs
WHERE cell IS NOT NULL
GROUP BY cell, batch_id;
