-- run_shape: one row per run with a requested shape: the mean input and output lengths asked for next to the means
-- the server counted (view run_summary), and whether they differ by more than the shape tolerance.
--
-- Inputs (run_summary): requested_isl_mean, isl_mean, requested_osl_mean, osl_mean (tokens), token_count_source;
--   (runs): ignore_eos. Where the run asked for exactly that many output tokens (ignore_eos), an output off either
--   way is a mismatch; else max_tokens is a cap, and stopping at end-of-sequence before it is what was asked for.
--
-- Its columns, in order, with their formulas, units and data tests: run_shape.yml beside this file
-- (docs/dev/columns.md).
-- reads: run_summary; tables: runs
CREATE OR REPLACE VIEW run_shape AS
WITH figures AS (
    SELECT
        s.run_id, s.requested_isl_mean, s.isl_mean, s.requested_osl_mean, s.osl_mean, s.token_count_source,
        coalesce(r.ignore_eos, false) AS exact_output,
        coalesce(TRY_CAST(getvariable('shape_tolerance') AS DOUBLE), 0.10) AS shape_tolerance,
        s.isl_mean / nullif(s.requested_isl_mean, 0) - 1 AS isl_error,
        s.osl_mean / nullif(s.requested_osl_mean, 0) - 1 AS osl_error
    FROM run_summary AS s
    LEFT JOIN runs AS r ON r.run_id = s.run_id
    WHERE s.requested_isl_mean IS NOT NULL OR s.requested_osl_mean IS NOT NULL
),
flagged AS (
    SELECT *,
        abs(isl_error) > shape_tolerance AS isl_off,
        CASE WHEN exact_output THEN abs(osl_error) > shape_tolerance ELSE osl_error > shape_tolerance END AS osl_off
    FROM figures
)
SELECT
    run_id, requested_isl_mean, isl_mean, requested_osl_mean, osl_mean, isl_error, osl_error, shape_tolerance,
    CASE WHEN isl_off IS NULL AND osl_off IS NULL THEN NULL ELSE coalesce(isl_off, false) OR coalesce(osl_off, false)
    END AS shape_mismatch,
    nullif(concat_ws('; ',
        CASE WHEN isl_off THEN printf('input tokens asked %d, served %d (%+d%%): the tokenizer does not match the '
            || 'server''s (or its chat template differs)', round(requested_isl_mean)::BIGINT, round(isl_mean)::BIGINT,
            round(isl_error * 100)::BIGINT) END,
        CASE WHEN osl_off AND osl_error < 0 THEN printf('output tokens asked %d, served %d (%+d%%): the engine '
            || 'stopped early (end-of-sequence: ignore_eos not honoured, or its context was full)',
            round(requested_osl_mean)::BIGINT, round(osl_mean)::BIGINT, round(osl_error * 100)::BIGINT)
            WHEN osl_off THEN printf('output tokens asked %d, served %d (%+d%%): the engine does not honour '
            || 'max_tokens', round(requested_osl_mean)::BIGINT, round(osl_mean)::BIGINT,
            round(osl_error * 100)::BIGINT) END
    ), '') AS shape_note
FROM flagged
