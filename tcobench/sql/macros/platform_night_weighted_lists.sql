-- platform_night_weighted_lists(source, platforms): a table macro, not a view. Macro platform_night_weighted for a
-- value that is a list whose positions are figures of their own (a run's quantiles at fixed probabilities): table
-- macro night_weighted_lists of CAST(value AS DOUBLE[]), each position night-weighted on its own, one row per
-- position; by platform label, concurrency, facet and position.
-- Columns:
--   platform, concurrency, facet, every   as macro platform_night_weighted's
--   i                     the 1-based position in the lists
--   mean, lowest, highest night_weighted_lists' at position i
--   nights, runs          night_weighted_lists' (they count lists)
-- reads: night_weighted_lists, platform_night_values
CREATE OR REPLACE MACRO platform_night_weighted_lists(source, platforms) AS TABLE
WITH
    night_input AS (
        SELECT * REPLACE (CAST("value" AS DOUBLE[]) AS "value") FROM platform_night_values(source, platforms)
    ),
    night_groups AS (
        SELECT "key", any_value(platform) AS platform, bool_and(every) AS every FROM night_input GROUP BY "key"
    )
SELECT
    g.platform, w."key".concurrency, w."key".facet, generate_subscripts(w.mean, 1) AS i, unnest(w.mean) AS mean,
    unnest(w.lowest) AS lowest, unnest(w.highest) AS highest, w.nights, w.runs, g.every
FROM night_weighted_lists('night_input') AS w
JOIN night_groups AS g ON g."key" = w."key"
ORDER BY g.platform, w."key".concurrency, w."key".facet, i;
