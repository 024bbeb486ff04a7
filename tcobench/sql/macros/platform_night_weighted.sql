-- platform_night_weighted(source, platforms): a table macro, not a view. The report's night-weighted figures
-- (tasks/report/assets/context.py's night_weighted_rows): table macro night_weighted of source's value, per report
-- platform, concurrency and facet (macro platform_night_values, whose header says what source and platforms are),
-- by platform label, concurrency and facet.
-- Columns:
--   platform      the platform's label (platforms')
--   concurrency   view runs'
--   facet         source's
--   mean, lowest, highest, nights, runs   table macro night_weighted's, of CAST(value AS DOUBLE)
--   every         bool_and(every) over the group's rows with a value                                   BOOLEAN
-- reads: night_weighted, platform_night_values
CREATE OR REPLACE MACRO platform_night_weighted(source, platforms) AS TABLE
WITH
    night_input AS (
        SELECT * REPLACE (CAST("value" AS DOUBLE) AS "value") FROM platform_night_values(source, platforms)
    ),
    night_groups AS (
        SELECT "key", any_value(platform) AS platform, bool_and(every) AS every FROM night_input GROUP BY "key"
    )
SELECT
    g.platform, w."key".concurrency, w."key".facet, w.mean, w.lowest, w.highest, w.nights, w.runs, g.every
FROM night_weighted('night_input') AS w
JOIN night_groups AS g ON g."key" = w."key"
ORDER BY g.platform, w."key".concurrency, w."key".facet;
