-- stored_change_tests(view_name, ids): a table macro, not a view. The stored tests (table change_tests of the cache,
-- tasks/analysis/history.py's change_tests_schema) of the runs in the LIST ids, read from the view named view_name
-- (tasks/store/query.py defines _stored_change_tests when the store has the table: a store without it is a
-- CatalogException when the macro is called, not when it is created).
--   run_id, metric, basis           which run and metric, and what its tests were computed from
--   n1, n2, priors                  sample sizes and prior runs                                 count
--   u, p, median, prior_median, prior_medians_mean, prior_medians_sd   the test's figures (history.py)
-- reads: -
CREATE OR REPLACE MACRO stored_change_tests(view_name, ids) AS TABLE
SELECT
    run_id, metric, basis, n1, n2, priors, u, p, median, prior_median, prior_medians_mean, prior_medians_sd
FROM query_table(view_name)
WHERE run_id IN (SELECT unnest(ids));
