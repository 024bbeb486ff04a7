-- run_requests(tokens, ids, first_date := NULL, last_date := NULL): a table macro, not a view. The ok requests of the
-- runs of the LIST ids that the bootstrap draws one by one (tasks/analysis/compare/bootstrap.py): those with the
-- tokens counted (text: 'output' or 'total') and a positive end-to-end latency (view request_metrics), in scan order,
-- each with its run's place in ids (Python groups by it without a lookup per row). first_date, last_date: the runs'
-- first and last date (NULL: every date).
--   code       list_position(ids, run_id) - 1: the run's 0-based place in ids
--   tokens     request_metrics.output_tokens or total_tokens                                      tokens
--   e2e_s      e2e_ns / 1e9                                                                       s
-- reads: request_metrics
CREATE OR REPLACE MACRO run_requests(tokens, ids, first_date := NULL, last_date := NULL) AS TABLE
SELECT
    list_position(ids, run_id) - 1 AS code,
    if(tokens = 'output', output_tokens, total_tokens) AS tokens,
    e2e_ns / 1e9 AS e2e_s
FROM request_metrics
WHERE
    ok
    AND if(tokens = 'output', output_tokens, total_tokens) IS NOT NULL
    AND e2e_ns > 0
    AND run_id IN (SELECT unnest(ids))
    AND (first_date IS NULL OR date BETWEEN first_date AND last_date);
