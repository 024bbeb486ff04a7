-- night_weighted_lists(source): a table macro, not a view. Table macro night_weighted element by element, for
-- groups whose values are lists of equal meaning position by position (a run's latency quantiles at fixed
-- probabilities): the same rule (each night's mean over its runs, then the mean over nights), position by
-- position, computed on the lists instead of one row per element (faster than night_weighted over the unnested
-- rows: docs/dev/bench-log/2026-12-03-history-sixth-cut.md). The report's latency distributions read it;
-- tests/unit/tasks/store/test_cost_views.py checks it against night_weighted.
--
-- source    the name of a table or view with columns key (the group), value (DOUBLE[]) and night
--           (runs.batch_id); rows with a NULL list or night are left out, NULL elements are left out of their
--           position's means
-- result    one row per key with a list:
--   mean      per position: avg over nights of the night's avg(value[i])   = night_weighted's mean of value[i]
--   lowest    per position: the lowest night's mean                        = night_weighted's lowest
--   highest   per position: the highest night's mean                       = night_weighted's highest
--   nights    the nights with a list                                       count
--   runs      the lists                                                    count
-- The means add in night_weighted's order (a night's values ascending, then the nights ascending), so the bits
-- are night_weighted's and do not depend on the order a parallel aggregate gathers the rows in.
-- reads: night_means
CREATE OR REPLACE MACRO night_weighted_lists(source) AS TABLE
    WITH nights AS (
        SELECT "key", night, list("value") AS lists, count(*) AS runs
        FROM query_table(source)
        WHERE "value" IS NOT NULL AND night IS NOT NULL
        GROUP BY "key", night
    ), night_means AS (
        SELECT "key", night, runs,
               list_transform(range(1, list_max(list_transform(lists, l -> len(l))) + 1),
                              i -> list_avg(list_sort(list_transform(lists, l -> l[i])))) AS night_mean
        FROM nights
    ), per_key AS (
        SELECT "key", list(night_mean ORDER BY night) AS means, count(*) AS nights, CAST(sum(runs) AS BIGINT) AS runs
        FROM night_means
        GROUP BY "key"
    ), positions AS (
        SELECT *, range(1, list_max(list_transform(means, m -> len(m))) + 1) AS places FROM per_key
    )
    SELECT "key",
           list_transform(places, i -> list_avg(list_transform(means, m -> m[i]))) AS mean,
           list_transform(places, i -> list_min(list_transform(means, m -> m[i]))) AS lowest,
           list_transform(places, i -> list_max(list_transform(means, m -> m[i]))) AS highest,
           nights, runs
    FROM positions;
