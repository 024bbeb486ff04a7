-- engine_samples: one row per run and scrape instant: the engine's own view of its load (table engine_metrics,
-- scraped by tasks.host.engine_metrics from llama.cpp /metrics + /slots, vLLM /metrics or Ollama /api/ps).
--
-- Values are summed over label sets (vLLM's engine index under data parallelism, llama.cpp's slots, Ollama's
-- models); NULL where the engine does not report the quantity (Ollama has no queue or KV-cache figures).
--
-- Its columns, in order, with their formulas, units and data tests: engine_samples.yml beside this file
-- (docs/dev/columns.md).
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
