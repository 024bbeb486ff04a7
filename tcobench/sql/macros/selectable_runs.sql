-- selectable_runs(): a table macro, not a view. Every stored run, whatever its status, with the columns a selection
-- can match and a comparison must find alike: the one list of them that macros candidate_runs (ok and partial runs)
-- and left_out_runs (failed and interrupted ones) read. Its columns are view runs' and view run_summary's own (their
-- declarations are schemas/records.py's and run_summary.yml), named in the SELECT below; a run without a
-- run_summary row (it failed before its first request) has NULL there. Beside them:
--   status, started_ns   view runs' (what the two macros filter and order by)
--   summarised           run_summary has the run's row                                                  BOOLEAN
-- and runs.source (null: measured by tcobench; imported:<tool> <version>: `tcobench import`).
-- reads: run_summary; tables: runs
CREATE OR REPLACE MACRO selectable_runs() AS TABLE
SELECT
    r.status,
    r.started_ns,
    s.run_id IS NOT NULL AS summarised,
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
    r.source,
    s.gpus_counted
FROM runs AS r
LEFT JOIN run_summary AS s ON s.run_id = r.run_id;
