-- candidate_runs(on_basis, levels := NULL, workloads := NULL, first_date := NULL, last_date := NULL): a table macro, not
-- a view. Every run a comparison may take (tasks/analysis/compare/candidates.py's load_runs, its CandidateRun):
-- status ok or partial (not failed, not interrupted), with what selections match and its achieved shape (macro
-- selectable_runs, less status, started_ns and summarised; a run needs its run_summary row) and its cost on the basis
-- on_basis (text, e.g. 'owned'; view cost_basis' columns, NULL where the run has no price there; view tco's,
-- named in the SELECT below); oldest first (ORDER BY started_ns, run_id).
--   levels      LIST of concurrency levels (NULL: any)
--   workloads   LIST of lower-case workload names (NULL: any); compared with lower(runs.workload)
--   first_date, last_date   text bounds on CAST(runs.date AS VARCHAR) (NULL: unbounded)
-- Columns of its own:
--   has_cost_basis       cost_basis has the run's row on the basis                                    BOOLEAN
--   basis_output_tok_s   cost_basis.output_tok_s                                                      tokens/s
--   (cost_basis' downtime_usd_month and gco2e_per_m_output_tokens: beside the cost, never in it)
--   has_hardware_price, has_site_price, has_ops_price   tco.purchase_usd / pue / ops_hours_per_month IS NOT NULL
-- On the owned basis view cost_basis' owned row is view tco's row (both: tco_scenarios' owned baseline, one per
-- run), so the tco columns are read from it and tco is not computed (its branch is a constant false:
-- docs/dev/performance.md#owned-base).
-- reads: cost_basis, selectable_runs, tco
CREATE OR REPLACE MACRO candidate_runs(
    on_basis, levels := NULL, workloads := NULL, first_date := NULL, last_date := NULL
) AS TABLE
WITH t AS (
    SELECT run_id, output_tok_s, purchase_usd, pue, ops_hours_per_month, energy_valid
    FROM tco
    WHERE on_basis != 'owned'
)
SELECT
    r.* EXCLUDE (status, started_ns, summarised),
    c.output_tokens_per_usd,
    c.total_tokens_per_usd,
    c.run_id IS NOT NULL AS has_cost_basis,
    c.output_tok_s AS basis_output_tok_s,
    c.total_tok_s,
    c.total_usd_month,
    c.capital_usd_month,
    c.power_usd_month,
    c.ops_usd_month,
    c.adaptation_usd_month,
    c.downtime_usd_month,
    c.gco2e_per_m_output_tokens,
    if(on_basis = 'owned', c.output_tok_s, t.output_tok_s) AS output_tok_s,
    if(on_basis = 'owned', c.purchase_usd, t.purchase_usd) IS NOT NULL AS has_hardware_price,
    if(on_basis = 'owned', c.pue, t.pue) IS NOT NULL AS has_site_price,
    if(on_basis = 'owned', c.ops_hours_per_month, t.ops_hours_per_month) IS NOT NULL AS has_ops_price,
    if(on_basis = 'owned', c.energy_valid, t.energy_valid) AS energy_valid
FROM selectable_runs() AS r
LEFT JOIN cost_basis AS c ON c.run_id = r.run_id AND c.basis = on_basis
LEFT JOIN t ON t.run_id = r.run_id
WHERE
    r.status IN ('ok', 'partial')
    AND r.summarised
    AND if(on_basis = 'owned', c.run_id, t.run_id) IS NOT NULL
    AND (levels IS NULL OR list_contains(levels, r.concurrency))
    AND (workloads IS NULL OR lower(r.workload) IN (SELECT unnest(workloads)))
    AND (first_date IS NULL OR CAST(r.date AS VARCHAR) >= first_date)
    AND (last_date IS NULL OR CAST(r.date AS VARCHAR) <= last_date)
ORDER BY r.started_ns, r.run_id;
