-- shape_mismatches(ids := NULL): a table macro, not a view. The runs (all, or those of the LIST ids) whose served
-- shape missed the asked one (view run_shape.shape_mismatch), with why, by run id: the notes of `tcobench compare`
-- (tasks/analysis/compare/comparison.py) and the report (tasks/report/report.py).
--   run_id, shape_note    (run_shape)
-- reads: run_shape
CREATE OR REPLACE MACRO shape_mismatches(ids := NULL) AS TABLE
SELECT run_id, shape_note
FROM run_shape
WHERE shape_mismatch AND (ids IS NULL OR run_id IN (SELECT unnest(ids)))
ORDER BY run_id;
