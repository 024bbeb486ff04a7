-- report_runs(): a table macro, not a view. The runs of `tcobench report` (tasks/report/report.py, its ReportRun):
-- ok and partial runs with a measured throughput (run_summary.output_tok_s not NULL; interrupted and failed runs are
-- out of every figure), oldest first (ORDER BY started_ns, run_id), with view runs' provenance and view
-- run_summary's request counts.
--   run_id ... concurrency, status, tool_version, git_revision, source, client_saturated, client_check_note (runs)
--   ok, errors                                                                                   (run_summary)
-- reads: run_summary; tables: runs
CREATE OR REPLACE MACRO report_runs() AS TABLE
SELECT
    r.run_id, r.batch_id, r.date, r.host, r.gpu_vendor, r.gpu_name, r.gpu_count, r.host_cpu_count,
    r.driver_version, r.cuda_version, r.rocm_version, r.hardware_key, r.site_key, r.ops_key, r.utilisation,
    r.engine_name, r.engine_label, r.gpu_source, r.engine_version, r.image_digest, r.model_name, r.model_digest,
    r.workload, r.prompt_set_hash, r.num_ctx, r.max_tokens, r.concurrency, r.status,
    s.ok,
    s.errors,
    r.tool_version, r.git_revision, r.source, r.client_saturated, r.client_check_note
FROM runs AS r
JOIN run_summary AS s USING (run_id)
WHERE r.status IN ('ok', 'partial') AND s.output_tok_s IS NOT NULL
ORDER BY r.started_ns, r.run_id;
