-- history_samples(ids := NULL, first_date := NULL, last_date := NULL): a table macro, not a view. Per run (all, or
-- those in the LIST ids), the per-request samples `tcobench history` tests (tasks/analysis/history.py), gathered into
-- one list per run so that Python splits them with numpy (a year is ten million requests). Over the ok requests of
-- view request_metrics; first_date, last_date: the runs' first and last date (requests carry their run's date: the
-- store skips the files of other dates), NULL: every date.
--   run_id
--   rate      list of decode_tok_s, NULLs left out                                             tokens/s
--   ttft      list of ttft_ns / 1e6, NULLs left out                                            ms
-- reads: request_metrics
CREATE OR REPLACE MACRO history_samples(ids := NULL, first_date := NULL, last_date := NULL) AS TABLE
SELECT
    run_id,
    list(decode_tok_s) FILTER (WHERE decode_tok_s IS NOT NULL) AS rate,
    list(ttft_ns / 1e6) FILTER (WHERE ttft_ns IS NOT NULL) AS ttft
FROM request_metrics
WHERE
    ok
    AND (ids IS NULL OR run_id IN (SELECT unnest(ids)))
    AND (first_date IS NULL OR date BETWEEN first_date AND last_date)
GROUP BY run_id;
