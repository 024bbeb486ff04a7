-- platform_night_values(source, platforms): a table macro, not a view. The rows the report night-weights
-- (macros platform_night_weighted and platform_night_weighted_lists): each row of source with a value, keyed by its
-- report platform, concurrency and facet, with its night.
--   source     the name of a table or view with columns run_id, value (a number, or a list of them), facet (what
--              else groups the rows beside platform and concurrency, e.g. view cost_basis' basis; NULL: nothing)
--              and every (a condition the group's rows must all meet, e.g. energy measured; NULL: none)
--   platforms  the name of the report's platform table (run_id, platform, platform_id: one row per run of the
--              report; tasks/report/assets/context.py's register_platforms); a run outside it is left out
-- Columns:
--   key        struct_pack(platform_id, concurrency (view runs'), facet): the group
--   platform   the platform's label (platforms')
--   value      source's, not NULL
--   night      runs.batch_id (a nightly batch, as macro night_means counts nights)
--   every      source's, as BOOLEAN
-- reads: -; tables: runs
CREATE OR REPLACE MACRO platform_night_values(source, platforms) AS TABLE
SELECT
    struct_pack(platform_id := p.platform_id, concurrency := r.concurrency, facet := v.facet) AS "key",
    p.platform,
    v."value",
    r.batch_id AS night,
    CAST(v.every AS BOOLEAN) AS every
FROM query_table(source) AS v
JOIN runs AS r USING (run_id)
JOIN query_table(platforms) AS p USING (run_id)
WHERE v."value" IS NOT NULL;
