-- series_of_runs(ids): a table macro, not a view. The series (macro trend_series: 'host | model | workload | c=N')
-- the runs in the LIST ids belong to, each once: tasks/analysis/history.py reads only those series' trend.
--   series
-- reads: trend_series; tables: runs
CREATE OR REPLACE MACRO series_of_runs(ids) AS TABLE
SELECT DISTINCT trend_series(host, model_name, workload, concurrency) AS series
FROM runs
WHERE run_id IN (SELECT unnest(ids));
