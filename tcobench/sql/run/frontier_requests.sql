-- frontier_requests: one row per run with ok measured requests that have a TPOT: the requests the frontier's
-- bootstrap draws from (tasks/analysis/compare/frontier.py, load_points), as lists in request order
-- (request_index). It is a function of one run's rows, so the store caches it at commit (tasks/store/views.py),
-- like run_summary, in a table partitioned by month: a comparison at equal interactivity reads a row per run of
-- its months' files (their date statistics leave the others out), not every request of its dates.
--
-- A request is listed when ok (view request_metrics), with tpot_ns > 0, output_tokens counted and e2e_ns > 0; each
-- list holds one element per listed request.
-- Its columns, in order, with their formulas, units and data tests: frontier_requests.yml beside this file
-- (docs/dev/columns.md).
-- reads: in_steady, request_metrics, run_summary
CREATE OR REPLACE VIEW frontier_requests AS
SELECT
    m.run_id,
    m.date,
    left(m.date, 7) AS month,
    list(m.tpot_ns / 1e6 ORDER BY m.request_index) AS tpot_ms,
    list(m.output_tokens::DOUBLE ORDER BY m.request_index) AS tokens,
    list(m.e2e_ns / 1e9 ORDER BY m.request_index) AS e2e_s,
    list(in_steady(m.start_ns + m.ttft_ns, m.decode_ns, s.steady_start_ns, s.steady_end_ns) ORDER BY m.request_index)
        AS in_steady
FROM request_metrics AS m
LEFT JOIN run_summary AS s ON s.run_id = m.run_id
WHERE m.ok AND m.tpot_ns > 0 AND m.output_tokens IS NOT NULL AND m.e2e_ns > 0
GROUP BY m.run_id, m.date;
