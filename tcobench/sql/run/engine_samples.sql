-- engine_samples: one row per run and scrape instant: the engine's own view of its load (table engine_metrics,
-- scraped by tasks.host.engine_metrics from llama.cpp /metrics + /slots, vLLM /metrics or Ollama /api/ps).
--
-- Values are summed over label sets (vLLM's engine index under data parallelism, llama.cpp's slots, Ollama's models):
--   requests_running     sum of quantity requests_running (llama.cpp requests_processing, vLLM num_requests_running)  requests
--   requests_waiting     sum of quantity requests_waiting (llama.cpp requests_deferred, vLLM num_requests_waiting)   requests
--   kv_cache_tokens      sum over llama.cpp slots of the tokens a running request holds                            tokens
--   kv_cache_used_ratio  the engine's own ratio where it reports one (vLLM kv_cache_usage_perc, 0..1; mean over
--                        engines), else kv_cache_tokens / sum of kv_cache_capacity_tokens (llama.cpp slots' n_ctx)  fraction 0..1
--   preemptions_total    sum of the engine's preemption counter since it started (vLLM num_preemptions_total)      requests
--   model_vram_share     sum of model_vram_bytes / sum of model_size_bytes (Ollama /api/ps; < 1: partly on CPU)     fraction 0..1
-- NULL where the engine does not report the quantity (Ollama has no queue or KV-cache figures).
-- reads: -; tables: engine_metrics
CREATE OR REPLACE VIEW engine_samples AS
SELECT
    run_id,
    ts_ns,
    any_value(source) AS source,
    sum(value) FILTER (WHERE quantity = 'requests_running') AS requests_running,
    sum(value) FILTER (WHERE quantity = 'requests_waiting') AS requests_waiting,
    sum(value) FILTER (WHERE quantity = 'kv_cache_tokens') AS kv_cache_tokens,
    coalesce(
        avg(value) FILTER (WHERE quantity = 'kv_cache_used_ratio'),
        sum(value) FILTER (WHERE quantity = 'kv_cache_tokens')
            / nullif(sum(value) FILTER (WHERE quantity = 'kv_cache_capacity_tokens'), 0)
    ) AS kv_cache_used_ratio,
    sum(value) FILTER (WHERE quantity = 'preemptions_total') AS preemptions_total,
    sum(value) FILTER (WHERE quantity = 'model_vram_bytes')
        / nullif(sum(value) FILTER (WHERE quantity = 'model_size_bytes'), 0) AS model_vram_share
FROM engine_metrics
GROUP BY run_id, ts_ns;
