-- side_figures(keys, figures, nights): a table macro, not a view. Table macro night_weighted's mean over rows given
-- as three texts, one row per position (each text split on chr(31), as tasks/store/rows.py's id_list joins
-- them): what `tcobench compare` asks for every side and level at once, in one query (one per side and level
-- before: docs/dev/performance.md#small-store).
--
-- keys      TEXT, the rows' groups (e.g. "0 output_tokens_per_usd": a side's index and a column)
-- figures   TEXT, the rows' values as Python writes a float (repr: read back exactly; 'nan' is NaN)
-- nights    TEXT, the rows' nights (runs.batch_id)
-- (side_rows, the CTE of these rows, is read by name by night_weighted: sqlfluff sees it unused, hence its noqa)
-- result    one row per key with a value:
--   key       the group                                                              TEXT
--   mean      avg over nights of the night's avg(value) (table macro night_weighted)     DOUBLE
-- reads: night_weighted
CREATE OR REPLACE MACRO side_figures(keys, figures, nights) AS TABLE
    WITH side_rows AS (  -- noqa: ST03
        SELECT unnest(string_split(keys, chr(31))) AS "key",
               CAST(unnest(string_split(figures, chr(31))) AS DOUBLE) AS "value",
               unnest(string_split(nights, chr(31))) AS night
    )
    SELECT "key", mean FROM night_weighted('side_rows');
