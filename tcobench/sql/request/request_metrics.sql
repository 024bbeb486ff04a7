-- request_metrics: one row per stored request (warm-up and measured), every stored column plus the
-- per-request figures that every other view and tcobench's Python code read. A per-request formula, and the
-- filter that says which requests count, are written here and nowhere else.
--
-- measured              phase = 'measure'                                                        BOOLEAN
-- ok                    measured AND error IS NULL: an ok measured request. Every latency, rate   BOOLEAN
--                       and token figure of tcobench counts ok requests only (a warm-up request
--                       is never ok; a failed measured request counts in run_summary.errors)
-- ttft_ns, e2e_ns, decode_ns, itl_ns, prompt_tokens, output_tokens     as stored (requests): ns, tokens
-- total_tokens          prompt_tokens + output_tokens (NULL unless both were counted)           tokens
-- decode_tokens         output_tokens - 1: the tokens decoded after the first, over decode_ns    tokens
--                       (NULL when output_tokens <= 1)
-- tpot_ns               decode_ns / decode_tokens                                                ns per output token
--                       (time per output token after the first; NULL without decode_tokens or decode_ns)
-- decode_tok_s          decode_tokens / decode_ns * 1e9                                          tokens/s (client clock)
--                       (NULL without decode_tokens, or when decode_ns is 0 or NULL)
-- server_decode_tok_s   server_eval_count / server_eval_ns * 1e9                                 tokens/s (engine clock)
--                       (NULL unless the engine reported a positive eval time, e.g. Ollama's eval_duration)
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
