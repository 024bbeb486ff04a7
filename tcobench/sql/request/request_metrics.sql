-- request_metrics: one row per stored request (warm-up and measured), every stored column plus the
-- per-request figures that every other view and tcobench's Python code read. A per-request formula, and the
-- filter that says which requests count, are written here and nowhere else: a request is measured in phase
-- 'measure', and ok when measured without an error. Every latency, rate and token figure of tcobench counts ok
-- requests only (a warm-up request is never ok; a failed measured request counts in run_summary.errors).
--
-- Its columns, in order, with their formulas, units and data tests: request_metrics.yml beside this file
-- (docs/dev/columns.md).
-- reads: -; tables: requests
CREATE OR REPLACE VIEW request_metrics AS
SELECT
    *,
    phase = 'measure' AS measured,
    measured AND error IS NULL AS ok,
    prompt_tokens + output_tokens AS total_tokens,
    CASE WHEN output_tokens > 1 THEN output_tokens - 1 END AS decode_tokens,
    decode_ns / decode_tokens AS tpot_ns,
    CASE WHEN decode_ns > 0 THEN decode_tokens / decode_ns * 1e9 END AS decode_tok_s,
    CASE WHEN server_eval_ns > 0 THEN server_eval_count / server_eval_ns * 1e9 END AS server_decode_tok_s
FROM requests;
