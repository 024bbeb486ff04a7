-- capacity_plan(ids, fleets, per_gpu, draw_fleets, need_tok_s, peak_tok_s): a table macro, not a view. The fleet
-- each of several serving configurations needs for a trace's output token rate, and what it costs per month on every
-- cost basis its runs are priced on (`tcobench plan`: tasks/analysis/compare/plan.py binds the parameters). Every
-- configuration of a plan in one call: the TCO's views are computed once.
--
-- ids          LIST of the configurations' run ids (tasks/store/rows.py's id_list, split by the caller)
-- fleets       LIST of texts as long as ids: the configuration (a label of the caller's) each run id is one of
-- per_gpu      LIST of DOUBLE: each configuration's output tok/s per GPU at the interactivity target, read off its
--              frontier, one after the other; of a configuration's, the first is the frontier's own figure (draw 0),
--              the others the bootstrap's replicates (draw 1, 2, ...); NaN: that replicate's rebuilt frontier does not
--              reach the target
-- draw_fleets  LIST of texts as long as per_gpu: the configuration each element is a draw of
-- need_tok_s   DOUBLE: the output tokens per second to serve (the trace's per-minute output rate at --at, / 60)
-- peak_tok_s   DOUBLE: the trace's busiest minute's output tokens per second
-- result: one row per (configuration, cost basis, draw); each configuration's from its own runs and draws
--   fleet              the configuration's label (fleets, draw_fleets)
--   basis              cost_basis.basis
--   draw               0: the frontier's figure; 1, 2, ...: the bootstrap's replicates
--   tok_s_per_gpu      the element of per_gpu, output tok/s per GPU
--   replica_gpus       max(run_summary.gpus_counted) of the runs: the GPUs one instance of the configuration
--                      serves on (its throughput per GPU is divided by these), GPUs
--   host_gpus          greatest(replica_gpus, max(runs.gpu_count), else max(hardware.accelerators)): GPUs per
--                      host, as the inventory detected or declared them (view tco's gpu_count and accelerators, read
--                      from their tables: view tco computes every cost of the run, which the fleet's shape does not
--                      need), GPUs
--   replicas           ceil(need_tok_s / (tok_s_per_gpu * replica_gpus)): instances to run, the quotient rounded to
--                      9 decimals first (float noise such as 3.0000000000000004 buys no instance); NULL when
--                      tok_s_per_gpu is NaN or not above 0
--   gpus               replicas * replica_gpus, GPUs
--   hosts              ceil(gpus / host_gpus): whole hosts
--   capacity_tok_s     gpus * tok_s_per_gpu: the output tok/s the fleet sustains at the target
--   headroom_at_peak   capacity_tok_s / peak_tok_s - 1: above 0, the fleet serves the busiest minute at the target;
--                      below 0, that minute's share it cannot (a ratio)
--   replica_usd_month  avg(cost_basis.total_usd_month) of the runs on the basis: the monthly cost of the hardware
--                      one instance uses, on the TCO's own formula and assumptions (view tco_scenarios), USD/month
--   usd_month          replicas * replica_usd_month, USD/month
-- reads: cost_basis, run_summary; tables: runs, hardware
CREATE OR REPLACE MACRO capacity_plan(ids, fleets, per_gpu, draw_fleets, need_tok_s, peak_tok_s) AS TABLE
    WITH chosen AS (
        SELECT DISTINCT
            unnest(ids) AS run_id,
            unnest(fleets) AS fleet
    ),

    shape AS (
        SELECT
            c.fleet,
            max(s.gpus_counted) AS replica_gpus,
            greatest(max(s.gpus_counted), coalesce(nullif(max(r.gpu_count), 0), max(h.accelerators)))
                AS host_gpus
        FROM run_summary AS s
        INNER JOIN runs AS r ON s.run_id = r.run_id
        LEFT JOIN hardware AS h ON r.hardware_key = h.key
        INNER JOIN chosen AS c ON s.run_id = c.run_id
        GROUP BY c.fleet
    ),

    prices AS (
        SELECT
            c.fleet,
            b.basis,
            avg(b.total_usd_month) AS replica_usd_month
        FROM cost_basis AS b
        INNER JOIN chosen AS c ON b.run_id = c.run_id
        WHERE b.total_usd_month IS NOT NULL
        GROUP BY c.fleet, b.basis
    ),

    listed AS (
        SELECT
            generate_subscripts(per_gpu, 1) AS place,
            unnest(per_gpu) AS tok_s_per_gpu,
            unnest(draw_fleets) AS fleet
    ),

    draws AS (
        SELECT
            fleet,
            tok_s_per_gpu,
            row_number() OVER (PARTITION BY fleet ORDER BY place) - 1 AS draw
        FROM listed
    ),

    sized AS (
        SELECT
            d.fleet,
            d.draw,
            d.tok_s_per_gpu,
            s.replica_gpus,
            s.host_gpus,
            CASE
                WHEN isfinite(d.tok_s_per_gpu) AND d.tok_s_per_gpu > 0
                    THEN CAST(ceil(round(need_tok_s / (d.tok_s_per_gpu * s.replica_gpus), 9)) AS BIGINT)
            END AS replicas
        FROM draws AS d
        INNER JOIN shape AS s ON d.fleet = s.fleet
    )

    SELECT
        z.fleet,
        p.basis,
        z.draw,
        z.tok_s_per_gpu,
        z.replica_gpus,
        z.host_gpus,
        z.replicas,
        z.replicas * z.replica_gpus AS gpus,
        CAST(ceil(z.replicas * z.replica_gpus / z.host_gpus) AS BIGINT) AS hosts,
        z.replicas * z.replica_gpus * z.tok_s_per_gpu AS capacity_tok_s,
        z.replicas * z.replica_gpus * z.tok_s_per_gpu / peak_tok_s - 1 AS headroom_at_peak,
        p.replica_usd_month,
        z.replicas * p.replica_usd_month AS usd_month
    FROM sized AS z
    INNER JOIN prices AS p ON z.fleet = p.fleet
    ORDER BY z.fleet, p.basis, z.draw;
