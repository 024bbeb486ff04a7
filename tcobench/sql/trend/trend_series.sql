-- trend_series(host, model_name, workload, concurrency): a macro, not a view. The name of a run's series in view
-- nightly_trend (the runs of one host, model, workload and concurrency, night after night), as text:
--
-- series    host || ' | ' || model_name || ' | ' || workload || ' | c=' || concurrency      e.g. 'gpu-a | llama | chat | c=4'
--
-- tasks/analysis/history.py names the series of some runs with it from view runs, so that its query of nightly_trend
-- filters on the series (a filter on the window's partition, which DuckDB applies before the window).
-- reads: -
CREATE OR REPLACE MACRO trend_series(host, model_name, workload, concurrency) AS
    host || ' | ' || model_name || ' | ' || workload || ' | c=' || concurrency;
