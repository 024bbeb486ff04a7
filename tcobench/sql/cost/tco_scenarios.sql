-- tco_scenarios: one row per (run, cost basis, scenario): the monthly cost of the hardware a run used and the
-- price of a million tokens at the rate the run measured, every assumption a column. The monthly TCO
-- arithmetic is written here and nowhere else: views tco, cost_basis, tco_rented, efficiency, sensitivity and
-- platform_cost select its rows and columns.
--
-- Price rows are joined by the keys stored on the run, so a new price table re-prices old runs; a key
-- missing from the current table gives NULL prices, never a dropped run.
-- Cost basis (joined):
--   'owned'            the run's [hardware] row: purchase amortised over its lifetime, power paid per kWh
--   'rented: <tier>'   every [rental] row of the run's hardware_key: a GPU-hour rate (a cloud rental, or a
--                      published all-in owned rate) paid for every hour, power and facility inside the rate
-- Scenario (joined): 'baseline' = the assumptions of the run and its price rows; on the owned basis also one
-- changed assumption each (parameter, value), the others as in the baseline:
--   'utilisation <u>'      u in {0.1, 0.25, 0.5, 0.75, 1.0}                    (fraction of the month serving)
--   'kwh_usd x <f>'        site kwh_usd x f, f in {0.5, 1, 2, 3}               (USD/kWh)
--   'lifetime_months <L>'  L in {24, 36, 48, 60, 72}                           (months)
--   'downtime_usd_per_hour x <f>'  ops downtime_usd_per_hour x f, f in {0, 0.5, 1, 2, 4}   (USD/h; only the
--                          downtime term and the totals with downtime change)
--
-- Downtime (docs/cost-model.md#downtime): the platform's row of view availability (scope 'platform', platform =
-- runs.hardware_key) prices the hours without the host, beside the other terms and never inside the total: the
-- monthly term is (1 - availability) * hours_per_month * downtime_usd_per_hour, plus the platform failures per
-- month (platform_failures / nights_scheduled * hours_per_month / 24) * recovery_hours_mean * hourly_usd. It is
-- NULL (not 0) when the platform has fewer host nights than getvariable('downtime_min_nights') (the connection sets
-- it from TCOBENCH_DOWNTIME_MIN_NIGHTS; 14 when unset), or no downtime_usd_per_hour; a column says which. The total
-- with downtime adds the term where there is one, else it is the total.
-- Carbon per 1M output tokens: measured J per output token * 1e6 / 3.6e6 (kWh per 1M tokens) * pue * the site's
-- grid intensity (gCO2e/kWh), only where the energy is measured (energy.valid), else NULL.
--
-- Inputs: the run's identity (run_summary, runs) and keys (runs); its price rows (hardware, site, ops, rental);
-- its aggregate throughputs (run_summary) and measured power (energy, used only where energy.valid). The GPUs
-- priced are those handed to the serving configuration (runs.gpus_given, NULL where unknown, 0 on the CPU) when
-- more than 0, else runs.gpu_count (accelerators detected where the engine runs, else declared). USD are kept as
-- DOUBLE (round only for display); utilisation, kwh_usd and lifetime_months are the scenario's values.
--
-- Its columns, in order, with their formulas, units and data tests: tco_scenarios.yml beside this file
-- (docs/dev/columns.md).
-- reads: availability, energy, run_summary; tables: runs, hardware, site, ops, rental
CREATE OR REPLACE VIEW tco_scenarios AS
WITH bases AS (
    SELECT
        'owned' AS basis, NULL::VARCHAR AS rental_key, NULL::VARCHAR AS tier, NULL::VARCHAR AS rental_hardware,
        NULL::DOUBLE AS usd_per_gpu_hour, NULL::VARCHAR AS rental_source, NULL::DATE AS rental_as_of
    UNION ALL
    SELECT 'rented: ' || tier, key, tier, hardware, CAST(usd_per_gpu_hour AS DOUBLE), source, as_of FROM rental
),
scenarios (scenario, parameter, u, k_factor, l, d_factor) AS (
    VALUES
        ('baseline', NULL, NULL, NULL, NULL, NULL),
        ('utilisation 0.1', 'utilisation', 0.1, NULL, NULL, NULL),
        ('utilisation 0.25', 'utilisation', 0.25, NULL, NULL, NULL),
        ('utilisation 0.5', 'utilisation', 0.5, NULL, NULL, NULL),
        ('utilisation 0.75', 'utilisation', 0.75, NULL, NULL, NULL),
        ('utilisation 1.0', 'utilisation', 1.0, NULL, NULL, NULL),
        ('kwh_usd x 0.5', 'kwh_usd', NULL, 0.5, NULL, NULL), ('kwh_usd x 1', 'kwh_usd', NULL, 1.0, NULL, NULL),
        ('kwh_usd x 2', 'kwh_usd', NULL, 2.0, NULL, NULL), ('kwh_usd x 3', 'kwh_usd', NULL, 3.0, NULL, NULL),
        ('lifetime_months 24', 'lifetime_months', NULL, NULL, 24, NULL),
        ('lifetime_months 36', 'lifetime_months', NULL, NULL, 36, NULL),
        ('lifetime_months 48', 'lifetime_months', NULL, NULL, 48, NULL),
        ('lifetime_months 60', 'lifetime_months', NULL, NULL, 60, NULL),
        ('lifetime_months 72', 'lifetime_months', NULL, NULL, 72, NULL),
        ('downtime_usd_per_hour x 0', 'downtime_usd_per_hour', NULL, NULL, NULL, 0.0),
        ('downtime_usd_per_hour x 0.5', 'downtime_usd_per_hour', NULL, NULL, NULL, 0.5),
        ('downtime_usd_per_hour x 1', 'downtime_usd_per_hour', NULL, NULL, NULL, 1.0),
        ('downtime_usd_per_hour x 2', 'downtime_usd_per_hour', NULL, NULL, NULL, 2.0),
        ('downtime_usd_per_hour x 4', 'downtime_usd_per_hour', NULL, NULL, NULL, 4.0)
),
priced AS (
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
        CASE WHEN h.accelerators > 0 AND r.gpus_priced > 0
            THEN r.gpus_priced / h.accelerators ELSE 1.0 END::DOUBLE AS units,
        CASE WHEN r.gpus_priced > 0 THEN r.gpus_priced ELSE h.accelerators END AS gpus_used,
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
        CAST(o.downtime_usd_per_hour AS DOUBLE) AS downtime_usd_per_hour,
        CAST(st.grid_gco2e_per_kwh AS DOUBLE) AS grid_gco2e_per_kwh,
        a.nights_scheduled AS availability_nights,
        a.availability,
        a.platform_failures,
        a.recovery_hours_mean,
        coalesce(TRY_CAST(getvariable('downtime_min_nights') AS BIGINT), 14) AS downtime_min_nights,
        coalesce(e.valid, false) AS energy_valid,
        e.mean_w AS measured_w,
        e.idle_w AS measured_idle_w,
        e.devices AS measured_devices,
        e.source AS measured_source,
        e.invalid_reason AS energy_invalid_reason,
        e.j_per_output_token AS measured_j_per_output_token,
        730.0::DOUBLE AS hours_per_month
    FROM run_summary AS s
    JOIN (SELECT *, coalesce(nullif(gpus_given, 0), gpu_count) AS gpus_priced FROM runs) AS r ON r.run_id = s.run_id
    LEFT JOIN hardware AS h ON h.key = r.hardware_key
    LEFT JOIN site AS st ON st.key = r.site_key
    LEFT JOIN ops AS o ON o.key = r.ops_key
    LEFT JOIN energy AS e ON e.run_id = s.run_id
    LEFT JOIN availability AS a ON a.scope = 'platform' AND a.platform = r.hardware_key
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
assumed AS (
    SELECT
        w.* REPLACE (
            coalesce(g.u::DOUBLE, w.utilisation) AS utilisation,
            w.kwh_usd * coalesce(g.k_factor::DOUBLE, 1.0) AS kwh_usd,
            coalesce(g.l::INTEGER, w.lifetime_months) AS lifetime_months,
            w.downtime_usd_per_hour * coalesce(g.d_factor::DOUBLE, 1.0) AS downtime_usd_per_hour
        ),
        b.basis,
        coalesce(b.rental_key, w.hardware_key) AS basis_key,
        b.rental_key,
        b.tier,
        b.usd_per_gpu_hour,
        b.rental_source,
        b.rental_as_of,
        CASE WHEN b.rental_key IS NOT NULL THEN CASE WHEN w.gpus_used > 0 THEN w.gpus_used ELSE 1 END END
            AS gpus_rented,
        g.scenario,
        g.parameter
    FROM watts AS w
    JOIN bases AS b ON b.rental_key IS NULL OR b.rental_hardware = w.hardware_key
    JOIN scenarios AS g
        ON (g.parameter IS NULL OR b.rental_key IS NULL)
        -- downtime is varied only where the ops row prices it
        AND (g.d_factor IS NULL OR w.downtime_usd_per_hour IS NOT NULL)
),
monthly AS (
    SELECT
        *,
        CASE parameter WHEN 'utilisation' THEN utilisation WHEN 'kwh_usd' THEN kwh_usd
            WHEN 'lifetime_months' THEN lifetime_months WHEN 'downtime_usd_per_hour' THEN downtime_usd_per_hour
        END::DOUBLE AS value,
        CASE WHEN rental_key IS NULL THEN (purchase_usd + server_share_usd) * units / lifetime_months
            ELSE usd_per_gpu_hour * gpus_rented * hours_per_month END AS capital_usd_month,
        utilisation * load_w_used + (1 - utilisation) * idle_w_used AS power_w,
        ops_hours_per_month * hourly_usd AS ops_usd_month,
        adaptation_days * daily_usd / lifetime_months AS adaptation_usd_month,
        output_tok_s * 3600 * hours_per_month * utilisation AS output_tokens_month,
        total_tok_s * 3600 * hours_per_month * utilisation AS total_tokens_month,
        CASE WHEN availability_nights >= downtime_min_nights
            THEN (1 - availability) * hours_per_month * downtime_usd_per_hour
                + platform_failures / availability_nights * hours_per_month / 24
                * coalesce(recovery_hours_mean, 0) * hourly_usd
        END AS downtime_usd_month,
        CASE
            WHEN downtime_usd_per_hour IS NULL THEN 'no downtime_usd_per_hour in the ops row'
            WHEN availability_nights IS NULL THEN 'not enough history: no nightly cells of the platform'
            WHEN availability_nights < downtime_min_nights
                THEN 'not enough history: ' || availability_nights || ' of ' || downtime_min_nights || ' host nights'
            ELSE 'measured: availability ' || round(availability, 4) || ' over ' || availability_nights
                || ' host nights, ' || platform_failures || ' platform failure(s)'
        END AS downtime_basis,
        CASE WHEN energy_valid THEN measured_j_per_output_token * 1e6 / 3.6e6 * pue * grid_gco2e_per_kwh END
            AS gco2e_per_m_output_tokens
    FROM assumed
),
energy_month AS (
    SELECT
        *,
        CASE WHEN rental_key IS NULL THEN power_w * pue * hours_per_month / 1000 END AS energy_kwh_month
    FROM monthly
),
costed AS (
    SELECT
        *,
        CASE WHEN rental_key IS NULL THEN energy_kwh_month * kwh_usd ELSE 0.0 END AS power_usd_month
    FROM energy_month
),
totalled AS (
    SELECT
        *,
        capital_usd_month + power_usd_month + ops_usd_month + adaptation_usd_month AS total_usd_month
    FROM costed
),
with_downtime AS (
    SELECT
        *,
        total_usd_month + coalesce(downtime_usd_month, 0) AS total_with_downtime_usd_month
    FROM totalled
)
SELECT
    run_id, batch_id, host, date, started, engine_name, engine_version, model_name, workload,
    load_mode, concurrency, status,
    -- basis and scenario
    basis, basis_key, scenario, parameter, value,
    -- assumptions
    hardware_key, site_key, ops_key, utilisation, hours_per_month,
    gpu_vendor, gpu_name, gpu_count, accelerators, units, gpus_used,
    purchase_usd, server_share_usd, lifetime_months, load_watts, idle_watts,
    energy_valid, measured_w, measured_idle_w, measured_j_per_output_token, load_w_used, idle_w_used, power_w,
    power_basis,
    pue, kwh_usd, ops_hours_per_month, hourly_usd, adaptation_days, daily_usd,
    rental_key, tier, usd_per_gpu_hour, gpus_rented, rental_source, rental_as_of,
    -- measured rates
    output_tok_s, total_tok_s,
    -- monthly costs
    capital_usd_month, energy_kwh_month, power_usd_month, ops_usd_month, adaptation_usd_month,
    total_usd_month,
    -- tokens and prices
    output_tokens_month, total_tokens_month,
    total_usd_month / NULLIF(output_tokens_month, 0) * 1e6 AS usd_per_m_output_tokens,
    total_usd_month / NULLIF(total_tokens_month, 0) * 1e6 AS usd_per_m_total_tokens,
    output_tokens_month / NULLIF(total_usd_month, 0) AS output_tokens_per_usd,
    total_tokens_month / NULLIF(total_usd_month, 0) AS total_tokens_per_usd,
    -- downtime and carbon, beside the total
    downtime_usd_per_hour, availability_nights, availability, platform_failures, recovery_hours_mean,
    downtime_min_nights, downtime_usd_month, downtime_basis, total_with_downtime_usd_month,
    total_with_downtime_usd_month / NULLIF(output_tokens_month, 0) * 1e6 AS usd_per_m_output_tokens_with_downtime,
    grid_gco2e_per_kwh, gco2e_per_m_output_tokens
FROM with_downtime;
