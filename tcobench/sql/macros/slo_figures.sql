-- slo_figures(on_basis, ids): a table macro, not a view. Per run of the LIST ids with a frontier point on the cost
-- basis on_basis (text; view frontier_points), what `tcobench best` checks an SLO against
-- (tasks/analysis/compare/best.py):
--   run_id
--   ttft_p90_ms          run_summary.ttft_p90_ms                                                     ms
--   interactivity_p90    frontier_points.interactivity_p90 (TPOT p90 = 1000 / it)                   tokens/s/user
-- reads: frontier_points, run_summary
CREATE OR REPLACE MACRO slo_figures(on_basis, ids) AS TABLE
SELECT f.run_id, s.ttft_p90_ms, f.interactivity_p90
FROM frontier_points AS f
JOIN run_summary AS s ON s.run_id = f.run_id
WHERE f.basis = on_basis AND f.run_id IN (SELECT unnest(ids));
