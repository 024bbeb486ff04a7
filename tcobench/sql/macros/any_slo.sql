-- any_slo(ids): a table macro, not a view. One row: whether any run of the LIST ids has an SLO target
-- (view slo_targets).
--   any_slo     bool_or(has_slo); NULL when none of the runs has a row                                 BOOLEAN
-- reads: slo_targets
CREATE OR REPLACE MACRO any_slo(ids) AS TABLE
SELECT bool_or(has_slo) AS any_slo FROM slo_targets WHERE run_id IN (SELECT unnest(ids));
