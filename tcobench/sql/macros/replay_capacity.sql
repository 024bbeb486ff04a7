-- replay_capacity(ids, prompt_sets, target, slo_ttft_ms, slo_tpot_ms, peak_tok_s): a table macro, not a view. The
-- capacity each serving configuration showed in replays of one trace (`tcobench plan`: tasks/analysis/compare/plan.py
-- binds the parameters; docs/plan.md#plan-from-replayed-runs). One row per configuration with a replay.
--
-- ids          LIST of run ids: a platform's runs (its selection's)
-- prompt_sets  LIST of runs.prompt_set_hash values that mean a replay of the whole trace file (one per seed)
-- target       DOUBLE: the interactivity target, tok/s per user
-- slo_ttft_ms  DOUBLE or NULL: TTFT p90 at most this, ms (NULL: no TTFT target)
-- slo_tpot_ms  DOUBLE or NULL: TPOT p90 at most this, ms (NULL: no TPOT target)
-- peak_tok_s   DOUBLE: the trace's busiest minute's output tokens per second, as recorded (time scale 1)
-- A replay is a run of ids with load_mode 'replay', one of the prompt_sets and a time_scale. It met the target when it
-- is ok (no failed request), its client was not a limit (run_summary.client_saturated), its interactivity
-- (run_summary.interactivity: 1000 / median TPOT, ms) is at least target and, as `tcobench best` judges an SLO, its
-- TTFT p90 (run_summary.ttft_p90_ms) is at most slo_ttft_ms and its TPOT p90 (1000 / run_summary.interactivity_p90)
-- at most slo_tpot_ms.
-- result:
--   config          hardware_key || ' ' || config_id: the serving configuration (best's key)
--   runs            LIST of its replays' run ids (their monthly cost is the configuration's price per instance)
--   replays         its replays
--   met             those that met the target
--   replica_gpus    max(run_summary.gpus_counted): the GPUs one instance serves on, GPUs
--   time_scale      the smallest time scale of a replay that met the target, among those above the largest time
--                   scale of a replay that did not (a faster replay that passed where a slower one failed is not
--                   trusted); NULL: none
--   tok_s_per_gpu   peak_tok_s / (time_scale x replica_gpus): the replay offered the trace's busiest minute at
--                   peak_tok_s / time_scale and one instance served it at the target, a measured capacity point,
--                   output tok/s per GPU; NULL when time_scale is
-- reads: run_summary; tables: runs
CREATE OR REPLACE MACRO replay_capacity(ids, prompt_sets, target, slo_ttft_ms, slo_tpot_ms, peak_tok_s) AS TABLE
    WITH replays AS (
        SELECT
            r.run_id,
            r.hardware_key || ' ' || s.config_id AS config,
            r.time_scale,
            s.gpus_counted,
            r.status = 'ok'
            AND NOT coalesce(s.client_saturated, FALSE)
            AND coalesce(s.interactivity >= target, FALSE)
            AND (slo_ttft_ms IS NULL OR coalesce(s.ttft_p90_ms <= slo_ttft_ms, FALSE))
            AND (slo_tpot_ms IS NULL OR coalesce(1000.0 / s.interactivity_p90 <= slo_tpot_ms, FALSE)) AS met
        FROM runs AS r
        INNER JOIN run_summary AS s ON r.run_id = s.run_id
        WHERE
            r.run_id IN (SELECT unnest(ids))
            AND r.load_mode = 'replay'
            AND list_contains(prompt_sets, r.prompt_set_hash)
            AND r.time_scale > 0
    ),

    configs AS (
        SELECT
            config,
            list(run_id ORDER BY run_id) AS runs,
            count(*) AS replays,
            count(*) FILTER (WHERE met) AS met,
            max(gpus_counted) AS replica_gpus,
            coalesce(max(time_scale) FILTER (WHERE NOT met), 0.0) AS unmet_scale
        FROM replays
        GROUP BY config
    ),

    passed AS (
        SELECT
            c.config,
            min(p.time_scale) AS time_scale
        FROM configs AS c
        INNER JOIN replays AS p ON c.config = p.config
        WHERE p.met AND p.time_scale > c.unmet_scale
        GROUP BY c.config
    )

    SELECT
        c.config,
        c.runs,
        c.replays,
        c.met,
        c.replica_gpus,
        p.time_scale,
        peak_tok_s / (p.time_scale * c.replica_gpus) AS tok_s_per_gpu
    FROM configs AS c
    LEFT JOIN passed AS p ON c.config = p.config
    ORDER BY c.config;
