-- sweep: one row per run of a self-stopping concurrency sweep (runs.sweep_margin IS NOT NULL): did this level
-- end the sweep? Levels of one sweep share batch_id and config_hash (one cell's runs), in concurrency order.
--
-- Inputs:  runs.sweep_margin (fraction), runs.sweep_stop_on_slo (bool); run_summary.output_tok_s (tokens/s);
--          goodput.slo_met (bool, the same on every cost basis: read on 'owned')
-- A level stops the sweep when its throughput gain over the best lower level is below the margin, or when the
-- sweep stops on its SLO and the level broke it: no higher level is run after it.
--
-- Its columns, in order, with their formulas, units and data tests: sweep.yml beside this file
-- (docs/dev/columns.md).
-- reads: goodput, run_summary; tables: runs
CREATE OR REPLACE VIEW sweep AS
WITH levels AS (
    SELECT
        r.run_id,
        r.batch_id,
        r.config_hash,
        r.concurrency,
        r.sweep_margin,
        coalesce(r.sweep_stop_on_slo, false) AS stop_on_slo,
        s.output_tok_s,
        g.slo_met,
        max(s.output_tok_s) OVER (
            PARTITION BY r.batch_id, r.config_hash ORDER BY r.concurrency
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ) AS best_before_tok_s
    FROM runs AS r
    JOIN run_summary AS s ON s.run_id = r.run_id
    LEFT JOIN goodput AS g ON g.run_id = r.run_id AND g.basis = 'owned'
    WHERE r.sweep_margin IS NOT NULL
),
judged AS (
    SELECT
        *,
        output_tok_s / NULLIF(best_before_tok_s, 0) - 1 AS gain,
        coalesce(output_tok_s / NULLIF(best_before_tok_s, 0) - 1 < sweep_margin, false) AS throughput_flat,
        stop_on_slo AND coalesce(slo_met = false, false) AS slo_broken
    FROM levels
)
SELECT
    run_id,
    batch_id,
    config_hash,
    concurrency,
    output_tok_s,
    best_before_tok_s,
    gain,
    sweep_margin,
    throughput_flat,
    slo_broken,
    throughput_flat OR slo_broken AS stops_sweep,
    CASE
        WHEN slo_broken THEN printf('concurrency %d broke the SLO', concurrency)
        WHEN throughput_flat THEN printf('concurrency %d: aggregate output %.1f tok/s is %.1f%% over the best lower '
                                         'level (%.1f tok/s), under the %.1f%% margin', concurrency, output_tok_s,
                                         gain * 100, best_before_tok_s, sweep_margin * 100)
    END AS reason
FROM judged;
