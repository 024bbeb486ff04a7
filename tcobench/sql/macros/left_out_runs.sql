-- left_out_runs(): a table macro, not a view. The stored runs macro candidate_runs leaves out (status failed or
-- interrupted: not ok, not partial), with their status and the columns a selection can match: candidate_runs' of
-- view runs and run_summary (a run that failed before its first request has no run_summary row: NULL there); oldest
-- first. What a selection that matches no candidate says it left out (tasks/analysis/compare/selection.py).
--   status, and candidate_runs' columns from runs and run_summary (its header)
-- reads: run_summary; tables: runs
CREATE OR REPLACE MACRO left_out_runs() AS TABLE
SELECT
    r.status,
    r.run_id, r.batch_id, r.date, r.host, r.gpu_vendor, r.gpu_name, r.driver_version, r.hardware_key, r.site_key,
    r.ops_key, r.engine_name, r.engine_label, r.gpu_source, r.engine_version, r.engine_settings, r.model_name,
    r.model_digest, r.synthetic_model, r.workload, r.prompt_set_hash, r.max_tokens, r.ignore_eos, r.temperature,
    r.extra_body, r.load_mode, r.rate_rps, r.num_ctx, r.concurrency, r.output_tokens_spec, r.engine_url,
    r.client_placement,
    s.isl_mean,
    s.osl_mean,
    r.client_saturated,
    s.config_id,
    r.serving_config,
    r.tensor_parallel,
    r.max_num_seqs,
    s.gpus_counted
FROM runs AS r
LEFT JOIN run_summary AS s ON s.run_id = r.run_id
WHERE r.status NOT IN ('ok', 'partial')
ORDER BY r.started_ns, r.run_id;
