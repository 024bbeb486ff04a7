-- claim_run_facts(ids): a table macro, not a view. What the claim-grade rules (tasks/analysis/compare/claim_grade.py)
-- read of each run of the LIST ids: from view runs and view run_summary.
--   run_id, concurrency, engine_kind, engine_version, model_digest, image_digest, telemetry_source, source   (runs)
--   ok                   ok measured requests (run_summary.ok)                                      count
--   steady_s             (run_summary.steady_end_ns - steady_start_ns) / 1e9                        s
--   steady_share         run_summary.steady_share                                                   fraction
-- reads: run_summary; tables: runs
CREATE OR REPLACE MACRO claim_run_facts(ids) AS TABLE
SELECT
    r.run_id, r.concurrency, r.engine_kind, r.engine_version, r.model_digest, r.image_digest, r.telemetry_source,
    r.source,
    s.ok,
    (s.steady_end_ns - s.steady_start_ns) / 1e9 AS steady_s,
    s.steady_share
FROM runs AS r
JOIN run_summary AS s ON s.run_id = r.run_id
WHERE r.run_id IN (SELECT unnest(ids));
