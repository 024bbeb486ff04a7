-- tco: one row per run: the monthly cost of owning and running the hardware the run used (the "owned"
-- cost basis), and the price of a million tokens at the rate the run measured. Every assumption is a column.
--
-- Inputs (price rows are joined by the keys stored on the run, so a new price table re-prices old
-- runs; a key missing from the current table gives NULL prices, never a dropped run):
--   runs:      hardware_key, site_key, ops_key, utilisation (fraction of the month serving, 0..1),
--              gpu_count (accelerators the engine used; NULL or 0 on a CPU host)
--   hardware:  purchase_usd, server_share_usd (USD), lifetime_months (months), load_watts,
--              idle_watts (W), adaptation_days (engineer days), accelerators (per row)
--   site:      pue (facility W / IT W), kwh_usd (USD/kWh)
--   ops:       ops_hours_per_month (= hours_per_host_month, h), hourly_usd (USD/h), daily_usd (USD/day)
--   run_summary: output_tok_s, total_tok_s (tokens/s, aggregate over the measured window)
--   energy:    mean_w (measured W over the measurement window, all sampled devices), idle_w (W), valid,
--              j_per_output_token (J/token; passed through as measured_j_per_output_token)
--   hours_per_month       730 = 8760 h / 12                               h
--
-- Computed (USD kept as DOUBLE; round only for display):
--   units                 hardware rows the run used: gpu_count / accelerators when both > 0, else 1    rows
--   gpus_used             gpu_count when > 0, else the row's accelerators                              GPUs
--   hardware_usd_month    (purchase_usd + server_share_usd) * units / lifetime_months                  USD/month
--   load_w_used, idle_w_used
--                         measured when energy.valid: load = energy.mean_w, idle = energy.idle_w
--                         (or idle_watts * units when no idle phase was sampled);
--                         else the estimate load_watts * units, idle_watts * units                     W
--   power_w               utilisation * load_w_used + (1 - utilisation) * idle_w_used                  W
--   power_basis           'estimate: price-table load/idle watts' [' x <units> units']
--                         [' (telemetry not used: <energy.invalid_reason>)'], or
--                         'measured: <source> mean W over the measurement window (<n> device(s);
--                          excludes unsampled parts of the host); idle: measured|price table'
--   energy_kwh_month      power_w * pue * hours_per_month / 1000                                       kWh/month
--   power_usd_month       energy_kwh_month * kwh_usd                                                   USD/month
--   ops_usd_month         ops_hours_per_month * hourly_usd            (per host, not per GPU)          USD/month
--   adaptation_usd_month  adaptation_days * daily_usd / lifetime_months  (one-off, per platform)       USD/month
--   total_usd_month       hardware + power + ops + adaptation                                          USD/month
--   output_tokens_month   output_tok_s * 3600 * hours_per_month * utilisation                          tokens/month
--   total_tokens_month    total_tok_s * 3600 * hours_per_month * utilisation                           tokens/month
--   usd_per_m_output_tokens  total_usd_month / output_tokens_month * 1e6                               USD per 1M tokens
--   usd_per_m_total_tokens   total_usd_month / total_tokens_month * 1e6                                USD per 1M tokens
--                         (NULL when the token rate is 0 or NULL)
CREATE OR REPLACE VIEW tco AS
WITH priced AS (
    SELECT
        s.run_id,
        s.batch_id,
        s.host,
        s.date,
        s.started,
        s.engine_name,
        s.engine_version,
        s.model_name,
        s.workload,
        s.load_mode,
        s.concurrency,
        s.status,
        s.output_tok_s,
        s.total_tok_s,
        r.hardware_key,
        r.site_key,
        r.ops_key,
        r.utilisation,
        r.gpu_vendor,
        r.gpu_name,
        r.gpu_count,
        h.accelerators,
        CASE WHEN h.accelerators > 0 AND r.gpu_count > 0
            THEN r.gpu_count / h.accelerators ELSE 1.0 END::DOUBLE AS units,
        CASE WHEN r.gpu_count > 0 THEN r.gpu_count ELSE h.accelerators END AS gpus_used,
        CAST(h.purchase_usd AS DOUBLE) AS purchase_usd,
        CAST(h.server_share_usd AS DOUBLE) AS server_share_usd,
        h.lifetime_months,
        CAST(h.load_watts AS DOUBLE) AS load_watts,
        CAST(h.idle_watts AS DOUBLE) AS idle_watts,
        CAST(h.adaptation_days AS DOUBLE) AS adaptation_days,
        CAST(st.pue AS DOUBLE) AS pue,
        CAST(st.kwh_usd AS DOUBLE) AS kwh_usd,
        CAST(o.hours_per_host_month AS DOUBLE) AS ops_hours_per_month,
        CAST(o.hourly_usd AS DOUBLE) AS hourly_usd,
        CAST(o.daily_usd AS DOUBLE) AS daily_usd,
        coalesce(e.valid, false) AS energy_valid,
        e.mean_w AS measured_w,
        e.idle_w AS measured_idle_w,
        e.devices AS measured_devices,
        e.source AS measured_source,
        e.invalid_reason AS energy_invalid_reason,
        e.j_per_output_token AS measured_j_per_output_token,
        730.0::DOUBLE AS hours_per_month
    FROM run_summary AS s
    JOIN runs AS r ON r.run_id = s.run_id
    LEFT JOIN hardware AS h ON h.key = r.hardware_key
    LEFT JOIN site AS st ON st.key = r.site_key
    LEFT JOIN ops AS o ON o.key = r.ops_key
    LEFT JOIN energy AS e ON e.run_id = s.run_id
),
watts AS (
    SELECT
        *,
        CASE WHEN energy_valid THEN measured_w ELSE load_watts * units END AS load_w_used,
        CASE WHEN energy_valid THEN coalesce(measured_idle_w, idle_watts * units) ELSE idle_watts * units END
            AS idle_w_used,
        CASE WHEN energy_valid
            THEN 'measured: ' || coalesce(measured_source, 'telemetry') || ' mean W over the measurement window ('
                || measured_devices || ' device(s); excludes unsampled parts of the host); idle: '
                || CASE WHEN measured_idle_w IS NOT NULL THEN 'measured' ELSE 'price table' END
            ELSE 'estimate: price-table load/idle watts'
                || CASE WHEN units <> 1 THEN ' x ' || units || ' units' ELSE '' END
                || coalesce(' (telemetry not used: ' || energy_invalid_reason || ')', '')
        END AS power_basis
    FROM priced
),
monthly AS (
    SELECT
        *,
        (purchase_usd + server_share_usd) * units / lifetime_months AS hardware_usd_month,
        utilisation * load_w_used + (1 - utilisation) * idle_w_used AS power_w,
        ops_hours_per_month * hourly_usd AS ops_usd_month,
        adaptation_days * daily_usd / lifetime_months AS adaptation_usd_month,
        output_tok_s * 3600 * hours_per_month * utilisation AS output_tokens_month,
        total_tok_s * 3600 * hours_per_month * utilisation AS total_tokens_month
    FROM watts
),
energy_month AS (
    SELECT
        *,
        power_w * pue * hours_per_month / 1000 AS energy_kwh_month
    FROM monthly
),
costed AS (
    SELECT
        *,
        energy_kwh_month * kwh_usd AS power_usd_month
    FROM energy_month
),
totalled AS (
    SELECT
        *,
        hardware_usd_month + power_usd_month + ops_usd_month + adaptation_usd_month AS total_usd_month
    FROM costed
)
SELECT
    run_id, batch_id, host, date, started, engine_name, engine_version, model_name, workload,
    load_mode, concurrency, status,
    -- assumptions
    hardware_key, site_key, ops_key, utilisation, hours_per_month,
    gpu_vendor, gpu_name, gpu_count, accelerators, units, gpus_used,
    purchase_usd, server_share_usd, lifetime_months, load_watts, idle_watts,
    energy_valid, measured_w, measured_idle_w, measured_j_per_output_token, load_w_used, idle_w_used, power_w, power_basis,
    pue, kwh_usd, ops_hours_per_month, hourly_usd, adaptation_days, daily_usd,
    -- measured rates
    output_tok_s, total_tok_s,
    -- monthly costs
    hardware_usd_month, energy_kwh_month, power_usd_month, ops_usd_month, adaptation_usd_month,
    total_usd_month,
    -- tokens and prices
    output_tokens_month, total_tokens_month,
    total_usd_month / NULLIF(output_tokens_month, 0) * 1e6 AS usd_per_m_output_tokens,
    total_usd_month / NULLIF(total_tokens_month, 0) * 1e6 AS usd_per_m_total_tokens
FROM totalled;
