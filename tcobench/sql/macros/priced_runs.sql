-- priced_runs(bases, ids := NULL): a table macro, not a view. Per basis of the LIST bases (texts, e.g. 'owned'), the
-- runs macro candidate_runs reads on it that have a cost there (all, or those of the LIST ids), oldest first, with only
-- their tokens per USD: of views runs and cost_basis alone, not view tco (docs/dev/performance.md#priced-runs);
-- tasks/analysis/compare/candidates.py's load_priced.
--   _basis                                       cost_basis.basis
--   run_id, batch_id, date, concurrency          (runs)
--   output_tokens_per_usd, total_tokens_per_usd  (cost_basis)                               tokens/USD
-- reads: cost_basis; tables: runs
CREATE OR REPLACE MACRO priced_runs(bases, ids := NULL) AS TABLE
SELECT
    c.basis AS _basis, r.run_id, r.batch_id, r.date, r.concurrency, c.output_tokens_per_usd, c.total_tokens_per_usd
FROM runs AS r
JOIN cost_basis AS c ON c.run_id = r.run_id AND c.basis IN (SELECT unnest(bases))
WHERE
    r.status IN ('ok', 'partial')
    AND c.output_tokens_per_usd IS NOT NULL
    AND (ids IS NULL OR r.run_id IN (SELECT unnest(ids)))
ORDER BY r.started_ns, r.run_id;
