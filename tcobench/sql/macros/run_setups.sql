-- run_setups(ids): a table macro, not a view. Each distinct setup of the runs of the LIST ids (view runs), once: what
-- compare's and the report's setup table lists side by side (tasks/analysis/compare/setup_table.py, whose
-- SETUP_COLUMNS labels these columns; a side's runs repeat a few combinations).
--   engine_settings (JSON), engine_name, engine_version, image, image_digest, num_ctx, model_digest, model_name,
--   driver_version, cuda_version, rocm_version, client_placement, gpu_power_limit_mw, gpu_name      (runs)
-- reads: -; tables: runs
CREATE OR REPLACE MACRO run_setups(ids) AS TABLE
SELECT DISTINCT
    engine_settings, engine_name, engine_version, image, image_digest, num_ctx, model_digest, model_name,
    driver_version, cuda_version, rocm_version, client_placement, gpu_power_limit_mw, gpu_name
FROM runs
WHERE run_id IN (SELECT unnest(ids));
