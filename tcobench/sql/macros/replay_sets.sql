-- replay_sets(): a table macro, not a view. The prompt sets the store's replays were sent with: one row per
-- (runs.prompt_set_hash, runs.seed) of a run with load_mode 'replay' and a time_scale (`tcobench plan` checks
-- whether any is a replay of its trace before it reads a platform's runs: tasks/analysis/compare/plan.py).
--   prompt_set_hash   runs.prompt_set_hash: sha256 of the trace file's sha256, window and seed (tasks/workload/plan.py)
--   seed              runs.seed
-- reads: -; tables: runs
CREATE OR REPLACE MACRO replay_sets() AS TABLE
SELECT DISTINCT prompt_set_hash, seed
FROM runs
WHERE load_mode = 'replay' AND time_scale > 0
ORDER BY prompt_set_hash, seed;
