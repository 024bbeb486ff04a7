-- record_card: one row per run with every field of the record card: what a reader needs to reproduce or question a
-- cost-per-token figure (hardware, driver, engine, model, load, speed, latency, power, memory, adaptation, energy cost).
--
-- Its columns, in order, each with its formula, unit and data tests, are declared once in record_card.yml beside
-- this file (docs/dev/columns.md); those it carries from runs, run_summary, energy, efficiency and the price table
-- say which view declares them (same_as).
-- reads: efficiency, energy, run_summary; tables: runs, hardware
CREATE OR REPLACE VIEW record_card AS
WITH card AS (
    SELECT
        r.run_id, r.batch_id, r.date, r.host, s.started,
        CASE WHEN r.gpu_name IS NOT NULL THEN r.gpu_name
            WHEN r.host_facts_source = 'client' THEN 'not detected (the engine runs on another machine)'
            ELSE 'CPU: ' || r.host_cpu END AS gpu_model,
        r.gpu_vendor, r.gpu_count, r.gpu_source, r.declared_vendor, r.declared_gpu_model, r.declared_gpu_count,
        r.identity_warning, r.host_facts_source, r.engine_label,
        r.driver_version, r.cuda_version, r.rocm_version,
        r.host_os, r.host_kernel, r.host_cpu, r.host_cpu_count, r.host_mem_bytes / 2 ^ 30 AS host_mem_gib,
        r.engine_name AS engine, r.engine_version, r.model_name, r.model_digest, r.synthetic_model, r.num_ctx,
        r.prompt_set_hash, r.max_tokens, r.concurrency,
        s.prompt_tokens / NULLIF(s.ok, 0) AS mean_input_tokens,
        s.ok AS requests_ok,
        s.ok >= 20 AS at_least_20,
        coalesce(s.server_decode_tok_s_mean, s.req_decode_tok_s_mean) AS mean_tok_s,
        coalesce(s.server_decode_tok_s_p50, s.req_decode_tok_s_p50) AS p50_tok_s,
        CASE WHEN s.server_decode_tok_s_mean IS NOT NULL THEN 'engine: eval_count / eval_duration'
            WHEN s.req_decode_tok_s_mean IS NOT NULL THEN 'client: decode tokens after the first / decode time' END
            AS tok_s_source,
        s.e2e_p50_ms AS p50_latency_ms,
        min(s.e2e_p50_ms) FILTER (WHERE r.concurrency = 1)
            OVER (PARTITION BY r.batch_id, r.hardware_key, r.model_name, r.prompt_set_hash) AS single_request_ms,
        e.mean_w AS mean_power_w,
        e.peak_vram_bytes / 2 ^ 30 AS peak_vram_gib,
        h.adaptation_days,
        f.electricity_usd_per_m_output_tokens / 1e6 AS electricity_usd_per_output_token,
        f.electricity_usd_per_m_output_tokens,
        f.energy_basis,
        r.hardware_key, r.image, r.image_digest, r.config_hash, r.tool_version, r.git_revision
    FROM runs AS r
    JOIN run_summary AS s ON s.run_id = r.run_id
    LEFT JOIN energy AS e ON e.run_id = r.run_id
    LEFT JOIN efficiency AS f ON f.run_id = r.run_id
    LEFT JOIN hardware AS h ON h.key = r.hardware_key
)
SELECT * FROM card;
