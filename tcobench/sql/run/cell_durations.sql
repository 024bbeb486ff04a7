-- cell_durations: one row per nightly cell and night: how long the cell took, from its first run's start to its
-- last run's end (engine start-up, warm-up and every concurrency level included). `tcobench nightly` estimates a
-- night from each cell's last night here (tasks/estimate.py, night_estimate).
-- cell           runs.cell: host/engine/model/workload (an engine's sweep configuration in brackets)
-- batch_id       the night (nightly batch)
-- started_ns     min(runs.started_ns) of the cell's runs that night                                        ns
-- seconds        (max(runs.finished_ns) - min(runs.started_ns)) / 1e9                                      s
-- runs           the cell's runs that night                                                                count
-- ok_runs        those with status ok                                                                      count
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
