-- summary_cards(one_run := NULL, ids := NULL): a table macro, not a view. A run's line of the Markdown summary
-- (tasks/report/report.py's summary_markdown): every column of view record_card, then view tco's
-- usd_per_m_output_tokens and power_basis, of one run, of the runs of the LIST ids, or of every run (both NULL), as
-- macro rows_of_runs reads a view (the same parameters and the same pushdown of one_run); no order.
-- reads: record_card, tco
CREATE OR REPLACE MACRO summary_cards(one_run := NULL, ids := NULL) AS TABLE
SELECT c.*, t.usd_per_m_output_tokens, t.power_basis
FROM record_card AS c
JOIN tco AS t USING (run_id)
WHERE
    (one_run IS NULL OR c.run_id = one_run)
    AND (ids IS NULL OR c.run_id IN (SELECT unnest(ids)));
