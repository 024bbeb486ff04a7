-- run_moments(tokens, ids): a table macro, not a view. The bootstrap's sums of each run of the LIST ids (view
-- run_statistics, formulas there) for the tokens counted (text: 'output' or 'total'): tasks/analysis/compare/bootstrap.py.
--   run_id
--   n, t, tt, e, ee, te     run_statistics' <tokens>_n, _t, _tt, _e, _ee, _te                      (run_statistics)
-- reads: run_statistics
CREATE OR REPLACE MACRO run_moments(tokens, ids) AS TABLE
SELECT
    run_id,
    if(tokens = 'output', output_n, total_n) AS n,
    if(tokens = 'output', output_t, total_t) AS t,
    if(tokens = 'output', output_tt, total_tt) AS tt,
    if(tokens = 'output', output_e, total_e) AS e,
    if(tokens = 'output', output_ee, total_ee) AS ee,
    if(tokens = 'output', output_te, total_te) AS te
FROM run_statistics
WHERE run_id IN (SELECT unnest(ids));
