-- identity_warnings(ids): a table macro, not a view. Each host of the runs of the LIST ids whose declared and
-- detected hardware disagree (runs.identity_warning), with the warning, each pair once, in order: the report's
-- warnings under its record card (tasks/report/assets/tables.py).
--   host, identity_warning    (runs)
-- reads: -; tables: runs
CREATE OR REPLACE MACRO identity_warnings(ids) AS TABLE
SELECT DISTINCT host, identity_warning
FROM runs
WHERE identity_warning IS NOT NULL AND run_id IN (SELECT unnest(ids))
ORDER BY ALL;
