-- night_weighted(source): a table macro, not a view. The night-weighting of macros night_means and
-- night_weighted_mean (the same rule: each night's mean over its runs, then the mean over nights) over a table
-- of groups instead of one list per group: a hash aggregate over every row, where the list macros compare every
-- row of a group with every night of it (faster by far on a year of groups:
-- docs/dev/bench-log/2026-12-02-history-fourth-cut.md). The report's night-weighted figures and compare's side
-- figures read it; tests/unit/tasks/report/test_report.py checks that both forms give the same figures.
--
-- source    the name of a table or view with columns key (the group: any type, e.g. a struct of platform and
--           concurrency), value (DOUBLE) and night (runs.batch_id); rows with a NULL value or night are left out
-- result    one row per key with a value:
--   mean      avg over nights of the night's avg(value)   = night_weighted_mean(list((value, night)))
--   lowest    the lowest night's mean                     = list_min(night_means(list((value, night))))
--   highest   the highest night's mean                    = list_max(night_means(list((value, night))))
--   nights    the nights with a value                     count
--   runs      the rows with a value                       count
-- Each avg adds in a fixed order (a night's values ascending, then the nights ascending), the order of macro
-- night_means: a parallel aggregate feeds a group's rows in no fixed order and a float sum depends on it, so
-- without it the same rows gave means a few ulps apart from one query to the next (docs/store.md#duckdb-threads).
-- Values are not integers here (tokens per USD, USD), so no integer sum can make the order irrelevant; a sorted
-- list is averaged rather than avg(... ORDER BY ...), which DuckDB computes several times slower.
-- reads: -
CREATE OR REPLACE MACRO night_weighted(source) AS TABLE
    WITH nights AS (
        SELECT "key", night, list_avg(list_sort(list("value"))) AS night_mean, count(*) AS runs
        FROM query_table(source)
        WHERE "value" IS NOT NULL AND night IS NOT NULL
        GROUP BY "key", night
    )
    SELECT "key", list_avg(list(night_mean ORDER BY night)) AS mean, min(night_mean) AS lowest,
           max(night_mean) AS highest, count(*) AS nights, CAST(sum(runs) AS BIGINT) AS runs
    FROM nights
    GROUP BY "key";
