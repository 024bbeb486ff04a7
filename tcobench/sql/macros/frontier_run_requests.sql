-- frontier_run_requests(ids, first_date := NULL, last_date := NULL): a table macro, not a view. View
-- frontier_requests' row (a run's ok requests with a TPOT, as lists in request order) of each run of the LIST ids,
-- with the run's position in ids instead of its id (tasks/analysis/compare/frontier.py turns positions back into ids
-- without a lookup per row). first_date, last_date: the runs' first and last date (the cache is partitioned by
-- month: a file whose dates miss them is not read), NULL: every date.
--   idx                                   0-based position of the run in ids
--   tpot_ms, tokens, e2e_s, in_steady     (frontier_requests: formulas there)
-- reads: frontier_requests
CREATE OR REPLACE MACRO frontier_run_requests(ids, first_date := NULL, last_date := NULL) AS TABLE
SELECT w.idx, f.tpot_ms, f.tokens, f.e2e_s, f.in_steady
FROM frontier_requests AS f
JOIN (SELECT unnest(ids) AS run_id, unnest(range(len(ids))) AS idx) AS w ON w.run_id = f.run_id
WHERE first_date IS NULL OR f.date BETWEEN first_date AND last_date;
