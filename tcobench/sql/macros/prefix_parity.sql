-- prefix_parity(a_ids, b_ids, first_date := NULL, last_date := NULL): a table macro, not a view. One row: of the
-- prompts both sides (runs of the LIST a_ids, of the LIST b_ids) answered (ok, with an output prefix, view
-- request_metrics) with the same seed, how many got identical first 64 output characters; claim-grade rule parity
-- (tasks/analysis/compare/claim_grade.py). A prompt is its sha256 (its index where none was stored); a side's answer
-- to a prompt and seed is the least of its prefixes. first_date, last_date: the runs' first and last date (requests
-- carry their run's date: the store skips other dates' files), NULL: every date.
--   pairs     prompts and seeds answered on both sides                                                 count
--   same      of them, those whose answers are identical                                               count
-- reads: request_metrics
CREATE OR REPLACE MACRO prefix_parity(a_ids, b_ids, first_date := NULL, last_date := NULL) AS TABLE
WITH answers AS (
    SELECT
        run_id IN (SELECT unnest(a_ids)) AS is_a,
        coalesce(prompt_sha256, CAST(prompt_index AS VARCHAR)) AS prompt,
        seed,
        min(output_prefix) AS prefix
    FROM request_metrics
    WHERE
        ok AND output_prefix IS NOT NULL
        AND (run_id IN (SELECT unnest(a_ids)) OR run_id IN (SELECT unnest(b_ids)))
        AND (first_date IS NULL OR date BETWEEN first_date AND last_date)
    GROUP BY ALL
)
SELECT count(*) AS pairs, count(*) FILTER (WHERE a.prefix = b.prefix) AS same
FROM answers AS a
JOIN answers AS b ON a.is_a AND NOT b.is_a AND a.prompt = b.prompt AND a.seed = b.seed;
