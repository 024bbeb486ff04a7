-- slo_targets: one row per run: its latency targets for goodput (view goodput) and whether it has any.
--
-- Inputs:
--   runs: slo_ttft_ms, slo_tpot_ms, slo_itl_ms (ms; NULL = no target), slo_quantile (fraction, 0..1; NULL = 0.9)
--
-- A view of its own so that a question about some runs' goodput can first ask, from the runs alone, whether any
-- of them has a target (tasks/analysis/compare/candidates.py: goodput_of); view goodput judges every measured request.
-- Its columns, in order, with their formulas, units and data tests: slo_targets.yml beside this file
-- (docs/dev/columns.md).
-- reads: -; tables: runs
CREATE OR REPLACE VIEW slo_targets AS
SELECT
    run_id,
    slo_ttft_ms,
    slo_tpot_ms,
    slo_itl_ms,
    coalesce(slo_quantile, 0.9) AS slo_quantile,
    (slo_ttft_ms IS NOT NULL OR slo_tpot_ms IS NOT NULL OR slo_itl_ms IS NOT NULL) AS has_slo
FROM runs;
