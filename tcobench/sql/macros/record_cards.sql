-- record_cards(ids): a table macro, not a view. View record_card's rows of the runs of the LIST ids, oldest first
-- (ORDER BY started, run_id): the report's record card (tasks/report/assets/tables.py; only those runs' cards are
-- computed, docs/dev/performance.md#record-cards).
--   every column of view record_card (its header has their formulas and units)
-- reads: record_card
CREATE OR REPLACE MACRO record_cards(ids) AS TABLE
SELECT * FROM record_card WHERE run_id IN (SELECT unnest(ids)) ORDER BY started, run_id;
