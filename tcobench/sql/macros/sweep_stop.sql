-- sweep_stop(run): a table macro, not a view. Why a concurrency sweep stops after the run (run id), from view
-- sweep: one row with the reason when it stops the sweep, none to go on (tasks/analysis/sweep.py).
--   reason     sweep.reason
-- reads: sweep
CREATE OR REPLACE MACRO sweep_stop(run) AS TABLE
SELECT reason FROM sweep WHERE run_id = run AND stops_sweep;
