-- run_shapes(ids): a table macro, not a view. View run_shape's rows of the runs of the LIST ids (runs that asked for
-- no length have no row): the asked-vs-served shape `tcobench run` and `summary` print (tasks/analysis/shape.py).
--   every column of view run_shape (its header has their formulas and units)
-- reads: run_shape
CREATE OR REPLACE MACRO run_shapes(ids) AS TABLE
SELECT * FROM run_shape WHERE run_id IN (SELECT unnest(ids));
