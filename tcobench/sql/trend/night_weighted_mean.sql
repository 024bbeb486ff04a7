-- night_weighted_mean(pairs): a macro, not a view. The one night-weighting of tcobench: the mean over nights
-- (nightly batches, runs.batch_id) of each night's mean (macro night_means), so that every night weighs the
-- same whatever its number of runs.
-- View platform_cost, `tcobench compare` (its point estimates) and the report's figures all call it.
--
-- pairs     LIST of (value, night) rows, e.g. list((output_tokens_per_usd, batch_id)) over the runs of a group
-- result    avg over nights of night_means(pairs); nights without a value are left out   DOUBLE (NULL if none)
-- Example   runs (100, n1), (300, n1), (50, n2): night means 200 and 50 -> 125 (a run-weighted mean says 150)
-- reads: night_means
CREATE OR REPLACE MACRO night_weighted_mean(pairs) AS list_avg(night_means(pairs));
